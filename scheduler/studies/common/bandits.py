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
one from a spec: ``bandit(eps=0.1[, discount=λ])``, ``ucb[(c=1)]``, ``swucb(window=20[, c=1])``,
``thompson``.
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
    """ε-greedy with the estimate ``Σ_{t<T, arm_t=a} λ^(T-1-t) total_t / Σ_{t<T, arm_t=a}
    count_t`` (discounted numerator over a plain count, as published in the online study's
    thesis; 0 when the arm ran but counted no job).

    With probability 1 - ε the greedy arm runs (the first untried arm, else the lowest estimate,
    ties: arm order); with probability ε an arm drawn uniformly. Each choice draws the coin and
    the uniform pick from ``rng``, whatever the outcome. The details hold ``"estimates"`` (NaN
    when untried), ``"greedy"`` (its index) and ``"explored"``.
    """

    def __init__(
        self, arms: Sequence[Hashable], *, epsilon: float, discount: float, rng: np.random.Generator
    ) -> None:
        super().__init__(arms)
        self.epsilon = epsilon
        self.discount = discount
        self._rng = rng
        self._discounted_total = np.zeros(len(self.arms))
        self._count = np.zeros(len(self.arms))
        self._tried = np.zeros(len(self.arms), dtype=bool)

    def estimates(self) -> np.ndarray:
        """Current estimated cost per job of each arm (NaN for untried arms)."""
        estimates = np.full(len(self.arms), np.nan)
        estimates[self._tried] = 0.0
        counted = self._count > 0
        estimates[counted] = self._discounted_total[counted] / self._count[counted]
        return estimates

    def choose(self) -> tuple[int, dict[str, Any]]:
        estimates = self.estimates()
        untried = np.flatnonzero(~self._tried)
        greedy = int(untried[0]) if untried.size else int(np.argmin(estimates))
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
    "bandit": {"eps": "epsilon", "epsilon": "epsilon", "discount": "discount"},
    "ucb": {"c": "exploration", "exploration": "exploration"},
    "swucb": {"c": "exploration", "exploration": "exploration", "window": "window"},
    "thompson": {},
}
_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_DEFAULTS = {"epsilon": 0.1, "discount": 1.0, "exploration": 1.0, "window": 20.0}


def make_bandit(spec: str, arms: Sequence[Hashable], *, rng: np.random.Generator) -> Bandit:
    """The bandit of ``spec`` over ``arms``: ``bandit(eps=ε[, discount=λ])`` (ε-greedy, ε = 0.1
    and λ = 1 by default), ``ucb[(c=…)]``, ``swucb[(window=…, c=…)]`` (c = 1, window = 20
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
    if kind == "bandit":
        return EpsilonGreedy(arms, epsilon=values["epsilon"], discount=values["discount"], rng=rng)
    if kind == "thompson":
        return Thompson(arms, rng=rng)
    window = int(values["window"]) if kind == "swucb" else None
    return UCB(arms, exploration=values["exploration"], window=window)
