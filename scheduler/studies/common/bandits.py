"""Bandits over any arms: ε-greedy, UCB1, sliding-window UCB1 and Gaussian Thompson sampling.

Shared by the studies that choose something period by period with bandit feedback (only the
cost of the arm that ran is seen): the online study's selectors choose a queue policy
(:mod:`scheduler.studies.online.selectors.bandits` wraps these), the redirection study chooses
a threshold θ. An arm is any hashable label (a policy name, a number of submissions); the arms
are kept in the given order, which breaks every tie.

The feedback of a period is a :class:`BanditFeedback`: the *sum* of the per-job costs of the
jobs counted in the period and their *number* (the online study: the waits, seconds, of the jobs
that finished; the redirection study: their bounded slowdowns). The bandits never see a unit.

A bandit has two calls, :meth:`Bandit.choose` (the index of the arm to run, and the quantities
the choice rested on) and :meth:`Bandit.update` (learn the feedback of the arm that ran, return
what to record); call order and history are the caller's business. :func:`make_bandit` builds
one from a spec: ``bandit(eps=0.1[, discount=λ][, forced=1])``, ``ucb[(c=1)]``,
``swucb(window=20[, c=1])``, ``thompson``.
"""

from __future__ import annotations

import abc
import math
import re
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler.core.errors import ConfigurationError

__all__ = [
    "BANDIT_KINDS",
    "UCB",
    "Bandit",
    "BanditFeedback",
    "EpsilonGreedy",
    "NormalisedBandit",
    "Thompson",
    "make_bandit",
]


@dataclass(frozen=True)
class BanditFeedback:
    """What a bandit learns about the arm that ran during a period.

    Attributes
    ----------
    total
        Sum of the per-job costs of the jobs counted in the period (finite, >= 0; any unit).
    count
        Number of those jobs (integer >= 0); 0: the period teaches nothing about the mean.
    """

    total: float
    count: int

    def __post_init__(self) -> None:
        total = float(self.total)
        if not math.isfinite(total) or total < 0:
            raise ConfigurationError(f"bandit feedback total must be finite and >= 0, not {total}")
        count = self.count
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
            raise ConfigurationError(
                f"bandit feedback count must be an integer >= 0, not {count!r}"
            )
        object.__setattr__(self, "total", total)
        object.__setattr__(self, "count", int(count))


def _floats(values: np.ndarray) -> list[float]:
    return [float(value) for value in values]


class Bandit(abc.ABC):
    """A bandit over ``arms`` (hashable labels, in tie-breaking order)."""

    def __init__(self, arms: Sequence[Hashable]) -> None:
        self.arms = tuple(arms)
        if not self.arms:
            raise ConfigurationError("a bandit needs at least one arm")
        if len(set(self.arms)) != len(self.arms):
            raise ConfigurationError(f"a bandit's arms are listed twice: {self.arms!r}")

    @abc.abstractmethod
    def choose(self) -> tuple[int, dict[str, Any]]:
        """The index of the arm to run next and the quantities the choice rested on."""

    @abc.abstractmethod
    def update(self, index: int, feedback: BanditFeedback) -> dict[str, Any]:
        """Learn the feedback of arm ``index``, the arm that ran; returns what to record."""


class EpsilonGreedy(Bandit):
    """ε-greedy as published (Reis's thesis, eq. 6.8–6.9), optionally with a forced round.

    **Estimate.** The estimated cost per job of arm a at choice T is ::

        Σ_{t<T, arm_t=a} λ^(T-1-t) total_t  /  Σ_{t<T, arm_t=a} count_t

    (a discounted numerator over a plain count, as published). An arm has *no data* while that
    count is 0: it never ran, or it ran only in periods that counted no job (a period with count
    0 teaches nothing about the mean; it never makes an estimate of 0). An arm without data has
    no estimate (NaN in the details) and is treated as +inf: it is never the greedy arm while
    another arm has data, so it never looks best on no data.

    **Choice.** With probability 1 - ε the greedy arm runs, with probability ε an arm drawn
    uniformly among all arms. The greedy arm is the arm with the lowest estimate among the arms
    with data (ties: arm order); when no arm has data yet, the arm ``initial`` (index; the first
    arm by default). With ``forced_round`` (not in the published rule) the greedy arm is the
    first arm that never ran, in arm order, until every arm has run once: a round of |arms|
    periods, e.g. 12 weeks with 12 policies at Δ = 1 week, 11 % of a two-year trace. Each choice
    draws the coin and the uniform pick from ``rng``, whatever the outcome (so the two rules see
    the same random numbers).

    Parameters
    ----------
    arms
        The arms (hashable labels, in tie-breaking order).
    epsilon
        Exploration probability ε in [0, 1].
    discount
        λ in (0, 1], per elapsed choice; 1 sums plainly.
    rng
        Source of the coin and the uniform pick.
    forced_round
        Run every arm once first (False: the published rule).
    initial
        Index of the greedy arm while no arm has data (0 <= initial < |arms|).

    The details of a choice hold ``"estimates"`` (NaN: no data), ``"greedy"`` (its index) and
    ``"explored"`` (the ε coin came up; the uniform pick may still be the greedy arm).
    """

    def __init__(
        self,
        arms: Sequence[Hashable],
        *,
        epsilon: float,
        discount: float,
        rng: np.random.Generator,
        forced_round: bool = False,
        initial: int = 0,
    ) -> None:
        super().__init__(arms)
        if isinstance(initial, bool) or not isinstance(initial, int | np.integer):
            raise ConfigurationError(f"ε-greedy initial must be an arm index, not {initial!r}")
        if not 0 <= initial < len(self.arms):
            raise ConfigurationError(
                f"ε-greedy initial arm index {initial} is outside 0..{len(self.arms) - 1}"
            )
        self.epsilon = epsilon
        self.discount = discount
        self.forced_round = bool(forced_round)
        self.initial = int(initial)
        self._rng = rng
        self._discounted_total = np.zeros(len(self.arms))
        self._count = np.zeros(len(self.arms))
        self._tried = np.zeros(len(self.arms), dtype=bool)

    def estimates(self) -> np.ndarray:
        """Current estimated cost per job of each arm (NaN: no data, i.e. no counted job)."""
        estimates = np.full(len(self.arms), np.nan)
        counted = self._count > 0
        estimates[counted] = self._discounted_total[counted] / self._count[counted]
        return estimates

    def greedy(self, estimates: np.ndarray) -> int:
        """The greedy arm given :meth:`estimates` (see the class docstring)."""
        if self.forced_round:
            untried = np.flatnonzero(~self._tried)
            if untried.size:
                return int(untried[0])
        if np.isnan(estimates).all():
            return self.initial
        return int(np.argmin(np.where(np.isnan(estimates), np.inf, estimates)))

    def choose(self) -> tuple[int, dict[str, Any]]:
        estimates = self.estimates()
        greedy = self.greedy(estimates)
        coin = float(self._rng.random())
        pick = int(self._rng.integers(len(self.arms)))
        explored = coin < self.epsilon
        chosen = pick if explored else greedy
        return chosen, {"estimates": _floats(estimates), "greedy": greedy, "explored": explored}

    def update(self, index: int, feedback: BanditFeedback) -> dict[str, Any]:
        self._discounted_total *= self.discount
        self._discounted_total[index] += feedback.total
        self._count[index] += feedback.count
        self._tried[index] = True
        return {}


class NormalisedBandit(Bandit):
    """Shared bookkeeping of the bandits on *normalised* costs.

    A period with count n_t > 0 is *counted*: its per-job mean m_t = total_t / n_t is divided by
    the running mean of every m observed so far, this one included, which gives a dimensionless
    x_t (around 1; 0 when that mean is 0). Periods with n_t = 0 are ignored. Multiplying every
    cost by a constant leaves every choice unchanged (up to rounding). :meth:`update` returns
    ``{"x": x_t}`` (None for an ignored period).
    """

    def __init__(self, arms: Sequence[Hashable], window: int | None) -> None:
        super().__init__(arms)
        self.window = window
        self._mean_sum = 0.0
        self._mean_count = 0
        self._x_sum = np.zeros(len(self.arms))
        self._x_count = np.zeros(len(self.arms), dtype=np.int64)
        self._recent: deque[tuple[int, float]] = deque(maxlen=window)

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """Sums of x and counts of counted periods per arm (over the window, if any)."""
        if self.window is None:
            return self._x_sum.copy(), self._x_count.copy()
        k = len(self.arms)
        indices = np.array([index for index, _ in self._recent], dtype=np.int64)
        values = np.array([x for _, x in self._recent], dtype=np.float64)
        sums = np.bincount(indices, weights=values, minlength=k).astype(np.float64)
        counts = np.bincount(indices, minlength=k).astype(np.int64)
        return sums, counts

    def update(self, index: int, feedback: BanditFeedback) -> dict[str, Any]:
        if feedback.count == 0:
            return {"x": None}
        mean = feedback.total / feedback.count
        self._mean_sum += mean
        self._mean_count += 1
        scale = self._mean_sum / self._mean_count
        x = mean / scale if scale > 0 else 0.0
        self._x_sum[index] += x
        self._x_count[index] += 1
        self._recent.append((index, x))
        return {"x": x}


class UCB(NormalisedBandit):
    """UCB1 on normalised costs, optionally over a sliding window of counted periods.

    Untried arms run first, in arm order; then the arm minimising
    ``mean_x(a) - c * sqrt(2 ln N / n_a)`` (ties: arm order), n_a counting a's counted periods
    and N all counted periods (within the window, if any; an arm absent from the window counts
    as untried). Details: ``"estimates"``, ``"counts"``, ``"index"`` (NaN when untried).
    """

    def __init__(self, arms: Sequence[Hashable], *, exploration: float, window: int | None) -> None:
        super().__init__(arms, window)
        self.exploration = exploration

    def choose(self) -> tuple[int, dict[str, Any]]:
        sums, counts = self.statistics()
        tried = counts > 0
        means = np.full(len(self.arms), np.nan)
        means[tried] = sums[tried] / counts[tried]
        index = np.full(len(self.arms), np.nan)
        total = int(counts.sum())
        if total > 0:
            bonus = self.exploration * np.sqrt(2.0 * math.log(total) / counts[tried])
            index[tried] = means[tried] - bonus
        untried = np.flatnonzero(~tried)
        chosen = int(untried[0]) if untried.size else int(np.argmin(index))
        return chosen, {
            "estimates": _floats(means),
            "counts": [int(count) for count in counts],
            "index": _floats(index),
        }


class Thompson(NormalisedBandit):
    """Gaussian Thompson sampling on normalised costs: untried arms first, in arm order; then
    each arm's cost is drawn from N(mean_x(a), 1 / (n_a + 1)) and the smallest draw wins
    (``rng`` draws one standard normal per arm every choice). Details: ``"estimates"``,
    ``"samples"`` (NaN when untried)."""

    def __init__(self, arms: Sequence[Hashable], *, rng: np.random.Generator) -> None:
        super().__init__(arms, None)
        self._rng = rng

    def choose(self) -> tuple[int, dict[str, Any]]:
        sums, counts = self.statistics()
        tried = counts > 0
        means = np.full(len(self.arms), np.nan)
        means[tried] = sums[tried] / counts[tried]
        normal = self._rng.standard_normal(len(self.arms))
        samples = means + normal / np.sqrt(counts + 1.0)
        untried = np.flatnonzero(~tried)
        chosen = int(untried[0]) if untried.size else int(np.argmin(samples))
        return chosen, {"estimates": _floats(means), "samples": _floats(samples)}


#: Base names of the bandit specs and their inline options (option → parameter).
BANDIT_KINDS: dict[str, dict[str, str]] = {
    "bandit": {
        "eps": "epsilon",
        "epsilon": "epsilon",
        "discount": "discount",
        "forced": "forced_round",
    },
    "ucb": {"c": "exploration", "exploration": "exploration"},
    "swucb": {"c": "exploration", "exploration": "exploration", "window": "window"},
    "thompson": {},
}
_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_DEFAULTS = {
    "epsilon": 0.1,
    "discount": 1.0,
    "forced_round": 0.0,
    "exploration": 1.0,
    "window": 20.0,
}


def make_bandit(spec: str, arms: Sequence[Hashable], *, rng: np.random.Generator) -> Bandit:
    """The bandit of ``spec`` over ``arms``: ``bandit(eps=ε[, discount=λ][, forced=0|1])``
    (ε-greedy as published, ε = 0.1, λ = 1 and no forced round by default; with no data on any
    arm yet the first arm is greedy), ``ucb[(c=…)]``, ``swucb[(window=…, c=…)]`` (c = 1, window = 20
    counted periods by default), ``thompson``; case-insensitive.

    Raises
    ------
    ConfigurationError
        A malformed spec, an unknown kind or option, a value out of range.
    """
    match = _SPEC.match(spec) if isinstance(spec, str) else None
    if match is None or match.group(1).lower() not in BANDIT_KINDS:
        raise ConfigurationError(
            f"unknown bandit spec {spec!r}; known: {', '.join(BANDIT_KINDS)} (with options, "
            "e.g. bandit(eps=0.1), ucb(c=1), swucb(window=20))"
        )
    kind = match.group(1).lower()
    values = dict(_DEFAULTS)
    body = match.group(2)
    for item in (body or "").split(","):
        if not item.strip():
            continue
        key, _, raw = item.partition("=")
        parameter = BANDIT_KINDS[kind].get(key.strip().lower())
        if parameter is None:
            raise ConfigurationError(f"bandit spec {spec!r}: unknown option {key.strip()!r}")
        try:
            values[parameter] = float(raw)
        except ValueError:
            values[parameter] = math.nan
        if not math.isfinite(values[parameter]):
            raise ConfigurationError(f"bandit spec {spec!r}: {raw.strip()!r} is not a number")
    if not 0.0 <= values["epsilon"] <= 1.0 or not 0.0 < values["discount"] <= 1.0:
        raise ConfigurationError(f"bandit spec {spec!r}: need eps in [0, 1], discount in (0, 1]")
    if values["exploration"] < 0 or values["window"] < 1 or values["window"] % 1:
        raise ConfigurationError(f"bandit spec {spec!r}: need c >= 0 and a whole window >= 1")
    if values["forced_round"] not in (0.0, 1.0):
        raise ConfigurationError(f"bandit spec {spec!r}: forced is 0 (published) or 1")
    if kind == "bandit":
        return EpsilonGreedy(
            arms,
            epsilon=values["epsilon"],
            discount=values["discount"],
            rng=rng,
            forced_round=values["forced_round"] == 1.0,
        )
    if kind == "thompson":
        return Thompson(arms, rng=rng)
    window = int(values["window"]) if kind == "swucb" else None
    return UCB(arms, exploration=values["exploration"], window=window)
