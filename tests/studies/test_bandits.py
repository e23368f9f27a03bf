"""The bandits shared by the studies (scheduler.studies.common.bandits): the same choices as the
online study's selectors made before they moved, on any hashable arms, and their spec errors."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.bandits import (
    UCB,
    BanditFeedback,
    EpsilonGreedy,
    Thompson,
    make_bandit,
)
from scheduler.studies.online.selectors import PeriodFeedback, make_selector

POLICIES = ("FCFS", "SPF", "LPF", "F1")
_BASE_S = {"FCFS": 3000.0, "SPF": 1200.0, "LPF": 5000.0, "F1": 1100.0}

# Arm indices chosen over 40 periods of _feedback by the online study's selectors *before* the
# bandits moved to scheduler.studies.common (commit 10c0bea, seed 7): the move changes nothing.
RECORDED = {
    "bandit(eps=0.1)": "0123133333333332033330333111133333333333",
    "bandit(eps=0.3,discount=0.8)": "0102133131031332011330321323103133310132",
    "ucb": "0123133031332213313113130133133131103313",
    "ucb(c=0.5)": "0123133330311131113111313311313113321131",
    "swucb(window=5)": "0123133012313301231330123133012313301231",
    "thompson": "0123302313313133031111133111313201311131",
}


def _feedback(period: int, policy: str) -> tuple[float, int]:
    """A fixed, drifting sequence of (sum of waits in seconds, finished jobs); every seventh
    period from the fifth finishes no job."""
    jobs = 0 if period % 7 == 5 else 10 + (period * 7) % 13
    return _BASE_S[policy] * jobs * (1 + 0.5 * np.sin(period * 1.3 + len(policy))), jobs


@pytest.mark.parametrize("spec", list(RECORDED))
def test_online_selectors_choose_as_before_the_move(spec: str) -> None:
    selector = make_selector(spec, POLICIES, rng=np.random.default_rng(7))
    chosen = []
    for period in range(40):
        policy = selector.choose(period)
        wait_s, jobs = _feedback(period, policy)
        selector.observe(period, PeriodFeedback(policy, wait_s, jobs))
        chosen.append(POLICIES.index(policy))
    assert "".join(map(str, chosen)) == RECORDED[spec]


@pytest.mark.parametrize("spec", list(RECORDED))
def test_shared_bandits_over_other_arms_choose_the_same(spec: str) -> None:
    # the arms are labels only: thresholds (floats) in the place of the policies
    arms = (5.0, 20.0, 80.0, 320.0)
    bandit = make_bandit(spec, arms, rng=np.random.default_rng(7))
    chosen = []
    for period in range(40):
        index, _ = bandit.choose()
        total, count = _feedback(period, POLICIES[index])
        bandit.update(index, BanditFeedback(total=total, count=count))
        chosen.append(index)
    assert "".join(map(str, chosen)) == RECORDED[spec]


def test_specs_build_the_right_bandits() -> None:
    rng = np.random.default_rng(0)
    greedy = make_bandit("bandit(eps=0.3, discount=0.5)", ["a", "b"], rng=rng)
    assert isinstance(greedy, EpsilonGreedy) and (greedy.epsilon, greedy.discount) == (0.3, 0.5)
    ucb = make_bandit("UCB(c=0.5)", [1, 2], rng=rng)
    assert isinstance(ucb, UCB) and ucb.exploration == 0.5 and ucb.window is None
    assert make_bandit("swucb(window=10)", [1, 2], rng=rng).window == 10
    assert isinstance(make_bandit("thompson", [(1, 2), (3, 4)], rng=rng), Thompson)


@pytest.mark.parametrize(
    "spec",
    ["random", "fixed:5", "bandit(eps=2)", "bandit(eps=x)", "ucb(c=nan)", "ucb(eps=0.1)",
     "swucb(window=0)", "swucb(window=2.5)", "bandit(discount=0)"],
)  # fmt: skip
def test_bad_specs_are_refused(spec: str) -> None:
    with pytest.raises(ConfigurationError):
        make_bandit(spec, [1, 2], rng=np.random.default_rng(0))


def test_bad_arms_and_feedback_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="at least one arm"):
        UCB([], exploration=1.0, window=None)
    with pytest.raises(ConfigurationError, match="listed twice"):
        UCB([5, 5], exploration=1.0, window=None)
    with pytest.raises(ConfigurationError):
        BanditFeedback(total=-1.0, count=1)
    with pytest.raises(ConfigurationError):
        BanditFeedback(total=1.0, count=1.5)  # type: ignore[arg-type]
