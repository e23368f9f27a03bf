"""Online selection of the queue policy, one policy period at a time (EASY backfilling).

Time is cut into policy periods t = 0, 1, 2, ... (a day or a week). At the start of period t a
selector picks the queue policy P_t from a policy set; the live system runs with it during the
period; at the end of the period the selector receives a :class:`PeriodFeedback`. The calls
always alternate ``choose(0), observe(0, fb), choose(1), observe(1, fb), ...``.

This module only keeps the books and makes the choices (pure Python / NumPy); the simulation
that produces the feedback lives elsewhere. Selectors, by spec (:func:`make_selector`):

``fixed:P``
    Always the policy P.
``random``
    P_t uniform in the set, drawn each period.
``full``
    Full (simulated) feedback: after period t the cost w(t; P) of every policy P is the sum of
    the waits, in seconds, of the jobs submitted during the period when P runs alone from an
    empty machine. At decision time T the selector picks
    ``argmin_P W(P)``, ``W(P) = sum_{t<T} discount^(T-1-t) w(t; P)`` (ties: first in set
    order); period 0 gets ``initial``.
``noisy``
    As ``full``, each w(t; P) multiplied by rho ~ U[low, high], drawn per policy and period.
``bandit``
    epsilon-greedy with bandit feedback (only the live period of the policy that ran), with the
    published estimate ``sum_{t<T, P_t=P} discount^(T-1-t) w_t / sum_{t<T, P_t=P} n_t``
    (discounted numerator, plain job count as denominator).
``ucb``, ``swucb``, ``thompson``
    Bandits on *normalised* per-job mean waits, so the unknown scale of the waits (seconds to
    days) does not matter: UCB1 (lower confidence bound, since costs are minimised), its
    sliding-window variant for a drifting workload, and Gaussian Thompson sampling.

Every selector appends one dict per period to ``history`` (``{"period": t, "policy": P_t, ...}``
plus the quantities its choice rested on), so a run can be audited afterwards.
"""

from __future__ import annotations

import abc
import math
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.policies import get_policy

SELECTOR_NAMES: tuple[str, ...] = (
    "fixed",
    "random",
    "full",
    "noisy",
    "bandit",
    "ucb",
    "swucb",
    "thompson",
)
"""Base names of the selector specs understood by :func:`make_selector`."""


# -- feedback -----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PeriodFeedback:
    """What a selector learns at the end of period t.

    Attributes
    ----------
    policy
        The policy that ran live during the period (must be the one the selector chose).
    live_wait_s
        Sum of the waits, seconds, of the jobs that *finished* during the period in the live
        system (>= 0).
    live_jobs
        Number of those jobs (>= 0).
    simulated_wait_s
        w(t; P) for every policy of the set, in set order: sum of the waits, seconds, of the jobs
        *submitted* during the period, each policy simulated alone from an empty machine. Only
        needed by selectors with ``needs_simulation`` (``None`` otherwise). Stored as a
        read-only float64 copy.

    Raises
    ------
    ConfigurationError
        A negative or non-finite wait, a negative or non-integer job count, a
        ``simulated_wait_s`` that is not a 1-D vector of finite waits >= 0.
    """

    policy: str
    live_wait_s: float
    live_jobs: int
    simulated_wait_s: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.policy, str):
            raise ConfigurationError(f"feedback policy must be a name, not {self.policy!r}")
        try:
            wait_s = float(self.live_wait_s)
        except (TypeError, ValueError):
            raise ConfigurationError(
                f"feedback live_wait_s must be a number of seconds, not {self.live_wait_s!r}"
            ) from None
        if not math.isfinite(wait_s) or wait_s < 0:
            raise ConfigurationError(f"feedback live_wait_s must be finite and >= 0, not {wait_s}")
        jobs = self.live_jobs
        if isinstance(jobs, bool) or not isinstance(jobs, int | np.integer) or jobs < 0:
            raise ConfigurationError(f"feedback live_jobs must be an integer >= 0, not {jobs!r}")
        object.__setattr__(self, "live_wait_s", wait_s)
        object.__setattr__(self, "live_jobs", int(jobs))
        if self.simulated_wait_s is not None:
            try:
                costs = np.array(self.simulated_wait_s, dtype=np.float64)
            except (TypeError, ValueError):
                raise ConfigurationError(
                    "feedback simulated_wait_s must be a vector of waits in seconds"
                ) from None
            if costs.ndim != 1 or not np.isfinite(costs).all() or (costs < 0).any():
                raise ConfigurationError(
                    "feedback simulated_wait_s must be a 1-D vector of finite waits >= 0 s, "
                    f"got {costs!r}"
                )
            costs.flags.writeable = False
            object.__setattr__(self, "simulated_wait_s", costs)


# -- the selector protocol ----------------------------------------------------------------------


class Selector(abc.ABC):
    """Picks the queue policy of each period and learns from the period's feedback.

    The interface the simulation driver relies on. Every selector of this module derives from
    :class:`BaseSelector`, which enforces the call order, checks the feedback and keeps
    :attr:`history`; a test double may implement this interface directly.

    Attributes
    ----------
    name
        Canonical spec with its options, e.g. ``"bandit(eps=0.1)"``; ``make_selector(name, ...)``
        builds an equivalent selector.
    needs_simulation
        True when :meth:`observe` needs ``feedback.simulated_wait_s`` (``full``, ``noisy``).
    policies
        The policy set, canonical upper-case names, in set order.
    history
        One dict per period, appended by :meth:`choose` and completed by :meth:`observe`:
        ``{"period": t, "policy": P_t, ..., "live_wait_s": ..., "live_jobs": ...}`` plus the
        selector's own quantities (see each selector).
    """

    name: str
    needs_simulation: bool
    policies: tuple[str, ...]
    history: list[dict[str, Any]]

    @abc.abstractmethod
    def choose(self, period: int) -> str:
        """The policy to run live during ``period`` (0, 1, 2, ... in order)."""

    @abc.abstractmethod
    def observe(self, period: int, feedback: PeriodFeedback) -> None:
        """Learn what happened during ``period``, the period of the last :meth:`choose`."""


class BaseSelector(Selector):
    """A :class:`Selector` that checks its calls and keeps its history.

    A subclass implements :meth:`_choose` and :meth:`_observe`; :meth:`choose` and
    :meth:`observe` call them in the order ``choose(0), observe(0, fb), choose(1), ...`` only
    (anything else raises :class:`ConfigurationError`), check the feedback and record one
    ``history`` entry per period.
    """

    needs_simulation: bool = False

    def __init__(self, name: str, policies: tuple[str, ...]) -> None:
        self.name = name
        self.policies = policies
        self.history = []
        self._position = {policy: index for index, policy in enumerate(policies)}
        self._next_period = 0
        self._awaiting_feedback = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} over {len(self.policies)} policies>"

    @property
    def next_period(self) -> int:
        """The period the next :meth:`choose` call must name."""
        return self._next_period

    def choose(self, period: int) -> str:
        """The policy to run live during ``period``.

        Parameters
        ----------
        period
            Index of the period about to start: 0 first, then one more than the last call.

        Returns
        -------
        str
            The chosen policy (canonical upper-case name).

        Raises
        ------
        ConfigurationError
            Out of order: not the next period, or the previous period was not observed.
        """
        _check_period_index(period)
        if self._awaiting_feedback:
            raise ConfigurationError(
                f"selector {self.name}: choose({period}) called before "
                f"observe({self._next_period - 1}, ...)"
            )
        if period != self._next_period:
            raise ConfigurationError(
                f"selector {self.name}: choose({period}) called out of order; "
                f"the next period is {self._next_period}"
            )
        policy, details = self._choose(period)
        self.history.append({"period": period, "policy": policy, **details})
        self._next_period += 1
        self._awaiting_feedback = True
        return policy

    def observe(self, period: int, feedback: PeriodFeedback) -> None:
        """Learn what happened during ``period`` (the period of the last :meth:`choose`).

        Parameters
        ----------
        period
            Index of the period that just ended.
        feedback
            Its live (and, when :attr:`needs_simulation`, simulated) waits in seconds.

        Raises
        ------
        ConfigurationError
            Out of order (no pending choice for ``period``), a feedback for another policy than
            the chosen one, or a missing / wrongly sized ``simulated_wait_s``. The selector's
            state is unchanged when this is raised.
        """
        _check_period_index(period)
        if not isinstance(feedback, PeriodFeedback):
            raise ConfigurationError(
                f"selector {self.name}: feedback must be a PeriodFeedback, not "
                f"{type(feedback).__name__}"
            )
        if not self._awaiting_feedback or period != self._next_period - 1:
            expected = (
                f"the pending period is {self._next_period - 1}"
                if self._awaiting_feedback
                else f"call choose({self._next_period}) first"
            )
            raise ConfigurationError(
                f"selector {self.name}: observe({period}, ...) called out of order; {expected}"
            )
        entry = self.history[-1]
        if feedback.policy.upper() != entry["policy"]:
            raise ConfigurationError(
                f"selector {self.name}: period {period} ran {entry['policy']} but the feedback "
                f"is for {feedback.policy}"
            )
        if self.needs_simulation:
            costs = feedback.simulated_wait_s
            if costs is None:
                raise ConfigurationError(
                    f"selector {self.name} needs simulated_wait_s (the simulated wait of every "
                    "policy of the set) in its feedback"
                )
            if costs.shape != (len(self.policies),):
                raise ConfigurationError(
                    f"selector {self.name}: simulated_wait_s has {costs.size} entries for "
                    f"{len(self.policies)} policies"
                )
        details = self._observe(period, entry["policy"], feedback)
        entry.update(live_wait_s=feedback.live_wait_s, live_jobs=feedback.live_jobs, **details)
        self._awaiting_feedback = False

    @abc.abstractmethod
    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        """The policy of ``period`` and the quantities to record in its history entry."""

    @abc.abstractmethod
    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        """Update the state from a (validated) feedback; returns what to add to the entry."""


def _check_period_index(period: object) -> None:
    if isinstance(period, bool) or not isinstance(period, int | np.integer) or period < 0:
        raise ConfigurationError(f"a period index is an integer >= 0, not {period!r}")


def _as_list(values: np.ndarray) -> list[float]:
    return [float(value) for value in values]


# -- fixed, random ------------------------------------------------------------------------------


class FixedSelector(BaseSelector):
    """Always the same policy (it need not belong to the set, only be a known policy)."""

    def __init__(self, policies: tuple[str, ...], policy: str) -> None:
        super().__init__(f"fixed:{policy}", policies)
        self.policy = policy

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        return self.policy, {}

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        return {}


class RandomSelector(BaseSelector):
    """A policy drawn uniformly in the set at the start of each period."""

    def __init__(self, policies: tuple[str, ...], rng: np.random.Generator) -> None:
        super().__init__("random", policies)
        self._rng = rng

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        return self.policies[int(self._rng.integers(len(self.policies)))], {}

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        return {}


# -- full and noisy simulated feedback ----------------------------------------------------------


class FullSelector(BaseSelector):
    """Follow the leader on simulated costs: ``argmin_P sum_{t<T} discount^(T-1-t) w(t; P)``.

    History entries hold ``"cumulative"`` (W(P) at decision time, seconds; ``None`` in period
    0, which runs ``initial``) and, once observed, ``"costs"`` (the w(t; P) vector used,
    seconds).

    Parameters
    ----------
    policies
        The policy set.
    discount
        lambda in (0, 1]; 1 sums the costs plainly.
    initial
        Policy of period 0, when nothing is known yet.
    name
        Canonical spec.
    """

    needs_simulation = True

    def __init__(
        self, policies: tuple[str, ...], *, discount: float, initial: str, name: str
    ) -> None:
        super().__init__(name, policies)
        self.discount = discount
        self.initial = initial
        self._cumulative_s = np.zeros(len(policies))

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        if period == 0:
            return self.initial, {"cumulative": None}
        best = int(np.argmin(self._cumulative_s))  # first minimum: ties go to set order
        return self.policies[best], {"cumulative": _as_list(self._cumulative_s)}

    def _costs_s(self, costs_s: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """The cost vector to learn from (the simulated one; overridden by the noisy selector)."""
        return costs_s, {}

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        assert feedback.simulated_wait_s is not None  # checked by Selector.observe
        costs_s, details = self._costs_s(feedback.simulated_wait_s)
        self._cumulative_s = self.discount * self._cumulative_s + costs_s
        return {"costs": _as_list(costs_s), **details}


class NoisySelector(FullSelector):
    """:class:`FullSelector` on costs w(t; P) * rho, rho ~ U[low, high] per policy and period.

    History entries also hold ``"factors"``, the rho drawn for each policy; ``"costs"`` is the
    noisy vector.
    """

    def __init__(
        self,
        policies: tuple[str, ...],
        *,
        discount: float,
        initial: str,
        low: float,
        high: float,
        rng: np.random.Generator,
        name: str,
    ) -> None:
        super().__init__(policies, discount=discount, initial=initial, name=name)
        self.low = low
        self.high = high
        self._rng = rng

    def _costs_s(self, costs_s: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        factors = self._rng.uniform(self.low, self.high, size=costs_s.shape)
        return costs_s * factors, {"factors": _as_list(factors)}


# -- epsilon-greedy bandit (published definition) -----------------------------------------------


class EpsilonGreedySelector(BaseSelector):
    """epsilon-greedy on the live waits of the policy that ran (bandit feedback only).

    Estimated cost of P at decision time T (seconds per job)::

        sum_{t<T, P_t=P} discount^(T-1-t) w_t  /  sum_{t<T, P_t=P} n_t

    where w_t = ``live_wait_s`` and n_t = ``live_jobs`` of period t: a discounted numerator over
    a plain job count, exactly as published (0 when P ran but no job finished). With probability
    1 - epsilon the greedy policy runs: the first untried policy in set order, else the lowest
    estimate (ties: set order); with probability epsilon a policy drawn uniformly in the set.
    Each period draws the coin and the uniform pick from ``rng``, whatever the outcome.

    History entries hold ``"estimates"`` (per policy, NaN when untried), ``"greedy"`` (the greedy
    policy) and ``"explored"`` (the epsilon coin came up; the uniform pick may still be the
    greedy policy).
    """

    def __init__(
        self,
        policies: tuple[str, ...],
        *,
        epsilon: float,
        discount: float,
        rng: np.random.Generator,
        name: str,
    ) -> None:
        super().__init__(name, policies)
        self.epsilon = epsilon
        self.discount = discount
        self._rng = rng
        self._discounted_wait_s = np.zeros(len(policies))
        self._jobs = np.zeros(len(policies))
        self._tried = np.zeros(len(policies), dtype=bool)

    def estimates(self) -> np.ndarray:
        """Current estimated cost per policy, seconds per job (NaN for untried policies)."""
        estimates = np.full(len(self.policies), np.nan)
        estimates[self._tried] = 0.0
        counted = self._jobs > 0
        estimates[counted] = self._discounted_wait_s[counted] / self._jobs[counted]
        return estimates

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        estimates = self.estimates()
        untried = np.flatnonzero(~self._tried)
        greedy = int(untried[0]) if untried.size else int(np.argmin(estimates))
        coin = float(self._rng.random())
        pick = int(self._rng.integers(len(self.policies)))
        explored = coin < self.epsilon
        chosen = pick if explored else greedy
        details = {
            "estimates": _as_list(estimates),
            "greedy": self.policies[greedy],
            "explored": explored,
        }
        return self.policies[chosen], details

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        index = self._position[policy]
        self._discounted_wait_s *= self.discount
        self._discounted_wait_s[index] += feedback.live_wait_s
        self._jobs[index] += feedback.live_jobs
        self._tried[index] = True
        return {}


# -- bandits on normalised per-job waits --------------------------------------------------------


class _NormalisedBandit(BaseSelector):
    """Shared bookkeeping: the normalised observation x_t of each counted period.

    A period with n_t > 0 finished jobs is *counted*: its per-job mean wait m_t = w_t / n_t
    (seconds) is divided by the running mean of every m observed so far, this one included,
    which gives a dimensionless x_t (around 1; 0 when that mean is 0). Periods with n_t = 0
    teach nothing and are ignored. Multiplying every wait by a constant leaves every x_t, hence
    every choice, unchanged (up to rounding).

    History entries gain ``"x"`` (None for an ignored period) once observed.
    """

    def __init__(self, name: str, policies: tuple[str, ...], window: int | None) -> None:
        super().__init__(name, policies)
        self.window = window
        self._mean_wait_sum_s = 0.0
        self._mean_wait_count = 0
        self._x_sum = np.zeros(len(policies))
        self._x_count = np.zeros(len(policies), dtype=np.int64)
        self._recent: deque[tuple[int, float]] = deque(maxlen=window)

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """Sums of x and counts of counted periods per policy (over the window, if any)."""
        if self.window is None:
            return self._x_sum.copy(), self._x_count.copy()
        k = len(self.policies)
        indices = np.array([index for index, _ in self._recent], dtype=np.int64)
        values = np.array([x for _, x in self._recent], dtype=np.float64)
        sums = np.bincount(indices, weights=values, minlength=k).astype(np.float64)
        counts = np.bincount(indices, minlength=k).astype(np.int64)
        return sums, counts

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        if feedback.live_jobs == 0:
            return {"x": None}
        mean_wait_s = feedback.live_wait_s / feedback.live_jobs
        self._mean_wait_sum_s += mean_wait_s
        self._mean_wait_count += 1
        scale_s = self._mean_wait_sum_s / self._mean_wait_count
        x = mean_wait_s / scale_s if scale_s > 0 else 0.0
        index = self._position[policy]
        self._x_sum[index] += x
        self._x_count[index] += 1
        self._recent.append((index, x))
        return {"x": x}


class UCBSelector(_NormalisedBandit):
    """UCB1 on normalised costs, optionally over a sliding window (``swucb``).

    Untried policies run first, in set order; then the policy minimising
    ``mean_x(P) - c * sqrt(2 ln N / n_P)`` (ties: set order), where n_P counts P's counted
    periods, N all counted periods and c = ``exploration``. With a ``window`` only the last
    ``window`` counted periods enter mean_x, n_P and N, and a policy absent from the window counts
    as untried (sliding-window UCB, for a drifting workload).

    History entries hold ``"estimates"`` (mean_x, NaN when untried), ``"counts"`` (n_P) and
    ``"index"`` (the lower confidence bound, NaN when untried).
    """

    def __init__(
        self,
        policies: tuple[str, ...],
        *,
        exploration: float,
        window: int | None,
        name: str,
    ) -> None:
        super().__init__(name, policies, window)
        self.exploration = exploration

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        sums, counts = self.statistics()
        tried = counts > 0
        means = np.full(len(self.policies), np.nan)
        means[tried] = sums[tried] / counts[tried]
        index = np.full(len(self.policies), np.nan)
        total = int(counts.sum())
        if total > 0:
            bonus = self.exploration * np.sqrt(2.0 * math.log(total) / counts[tried])
            index[tried] = means[tried] - bonus
        untried = np.flatnonzero(~tried)
        chosen = int(untried[0]) if untried.size else int(np.argmin(index))
        details = {
            "estimates": _as_list(means),
            "counts": [int(count) for count in counts],
            "index": _as_list(index),
        }
        return self.policies[chosen], details


class ThompsonSelector(_NormalisedBandit):
    """Gaussian Thompson sampling on normalised costs.

    Untried policies run first, in set order; then each policy's cost is drawn from
    N(mean_x(P), 1 / (n_P + 1)) (standard deviation 1 / sqrt(n_P + 1)) and the smallest draw
    wins. ``rng`` draws one standard normal per policy every period. History entries hold
    ``"estimates"`` (mean_x, NaN when untried) and ``"samples"`` (NaN when untried).
    """

    def __init__(self, policies: tuple[str, ...], *, rng: np.random.Generator, name: str) -> None:
        super().__init__(name, policies, None)
        self._rng = rng

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        sums, counts = self.statistics()
        tried = counts > 0
        means = np.full(len(self.policies), np.nan)
        means[tried] = sums[tried] / counts[tried]
        normal = self._rng.standard_normal(len(self.policies))
        samples = means + normal / np.sqrt(counts + 1.0)
        untried = np.flatnonzero(~tried)
        chosen = int(untried[0]) if untried.size else int(np.argmin(samples))
        return self.policies[chosen], {"estimates": _as_list(means), "samples": _as_list(samples)}


# -- specs --------------------------------------------------------------------------------------

# option spelled in a spec -> parameter of make_selector, per base name
_OPTIONS: dict[str, dict[str, str]] = {
    "fixed": {},
    "random": {},
    "full": {"discount": "discount", "initial": "initial"},
    "noisy": {"discount": "discount", "initial": "initial", "low": "low", "high": "high"},
    "bandit": {"eps": "epsilon", "epsilon": "epsilon", "discount": "discount"},
    "ucb": {"c": "exploration", "exploration": "exploration"},
    "swucb": {"c": "exploration", "exploration": "exploration", "window": "window"},
    "thompson": {},
}

_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_FIXED = re.compile(r"^\s*fixed\s*:\s*(\S+?)\s*$", re.IGNORECASE)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split a selector spec into its base name and inline options.

    Parameters
    ----------
    spec
        ``"name"``, ``"name(key=value, ...)"`` or ``"fixed:P"``; case-insensitive.

    Returns
    -------
    tuple[str, dict[str, str]]
        The lower-case base name and the options as ``{parameter: raw value}``, where the
        parameter is the :func:`make_selector` argument (``"epsilon"`` for ``eps``, ...); for
        ``fixed:P`` the options are ``{"policy": P}``.

    Raises
    ------
    ConfigurationError
        A malformed spec, an unknown base name or option, an option given twice.
    """
    if not isinstance(spec, str):
        raise ConfigurationError(f"a selector spec is a string, not {spec!r}")
    fixed = _FIXED.match(spec)
    if fixed:
        return "fixed", {"policy": fixed.group(1)}
    match = _SPEC.match(spec)
    if match is None:
        raise ConfigurationError(
            f"malformed selector spec {spec!r}; expected name, name(key=value, ...) or fixed:P "
            f"with name in {', '.join(SELECTOR_NAMES)}"
        )
    base = match.group(1).lower()
    if base not in _OPTIONS:
        raise ConfigurationError(
            f"unknown selector {match.group(1)!r} in spec {spec!r}; known selectors: "
            f"{', '.join(SELECTOR_NAMES)}"
        )
    if base == "fixed":
        raise ConfigurationError(f"selector spec {spec!r}: write fixed:P, with P a policy")
    options: dict[str, str] = {}
    body = match.group(2)
    if body is None or not body.strip():
        return base, options
    allowed = _OPTIONS[base]
    for item in body.split(","):
        key, equals, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not equals or not key or not value:
            raise ConfigurationError(
                f"malformed option {item.strip()!r} in selector spec {spec!r}; expected key=value"
            )
        if key not in allowed:
            known = ", ".join(allowed) if allowed else "none"
            raise ConfigurationError(
                f"unknown option {key!r} for selector {base} in spec {spec!r}; known options: "
                f"{known}"
            )
        parameter = allowed[key]
        if parameter in options:
            raise ConfigurationError(f"option {key!r} given twice in selector spec {spec!r}")
        options[parameter] = value
    return base, options


def _canonical_policy(name: object) -> str:
    if not isinstance(name, str):
        raise ConfigurationError(f"a policy is named by a string, not {name!r}")
    return get_policy(name.strip()).name


def _format(value: float | int) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def _real(parameter: str, value: object) -> float:
    if isinstance(value, bool):
        raise ConfigurationError(f"{parameter} must be a number, not {value!r}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigurationError(f"{parameter} must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise ConfigurationError(f"{parameter} must be finite, not {value!r}")
    return number


def _integer(parameter: str, value: object) -> int:
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise ConfigurationError(f"{parameter} must be an integer, not {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ConfigurationError(f"{parameter} must be an integer, not {value!r}")
    return int(value)


def make_selector(
    spec: str,
    policies: Sequence[str],
    *,
    rng: np.random.Generator,
    discount: float = 1.0,
    epsilon: float = 0.1,
    noise: tuple[float, float] = (0.8, 1.2),
    initial: str = "FCFS",
    window: int = 20,
    exploration: float = 1.0,
) -> Selector:
    """Build the selector described by ``spec`` over the policy set ``policies``.

    Parameters
    ----------
    spec
        One of ``fixed:P``, ``random``, ``full``, ``noisy``, ``bandit``, ``ucb``, ``swucb``,
        ``thompson`` (case-insensitive), optionally with inline options that override the
        keyword arguments: ``full(discount=0.9, initial=SPF)``,
        ``noisy(low=0.8, high=1.2, discount=1, initial=FCFS)``, ``bandit(eps=0.3,
        discount=0.5)``, ``ucb(c=0.5)``, ``swucb(window=10, c=1)``.
    policies
        The policy set, non-empty, known policy names without duplicates (case-insensitive).
    rng
        Source of every random draw (``random``, ``noisy``, ``bandit``, ``thompson``): the
        choices are a deterministic function of its seed and the feedback.
    discount
        lambda in (0, 1]: weight of a period's cost per elapsed period (``full``, ``noisy``,
        ``bandit``); 1 sums plainly.
    epsilon
        Exploration probability of ``bandit``, in [0, 1].
    noise
        ``(low, high)``, 0 < low <= high: range of the uniform factor of ``noisy``.
    initial
        Policy of period 0 of ``full`` and ``noisy`` (must belong to the set; only checked for
        those two).
    window
        Counted periods in the sliding window of ``swucb`` (>= 1).
    exploration
        Weight c >= 0 of the confidence term of ``ucb`` and ``swucb``.

    Returns
    -------
    Selector
        A fresh selector; its ``name`` is the canonical spec with the options that matter.

    Raises
    ------
    ConfigurationError
        Unknown spec or option, a value out of range (every numeric parameter is checked, used
        or not), an empty policy set, a duplicate or unknown policy, ``initial`` outside the
        set.
    """
    base, options = parse_spec(spec)
    if not isinstance(rng, np.random.Generator):
        raise ConfigurationError(f"rng must be a numpy.random.Generator, not {rng!r}")
    if isinstance(policies, str) or not isinstance(policies, Sequence):
        raise ConfigurationError(f"policies must be a sequence of policy names, not {policies!r}")
    canonical = tuple(_canonical_policy(policy) for policy in policies)
    if not canonical:
        raise ConfigurationError("the policy set of a selector is empty")
    duplicates = sorted({policy for policy in canonical if canonical.count(policy) > 1})
    if duplicates:
        raise ConfigurationError(f"policy set lists {', '.join(duplicates)} more than once")

    if isinstance(noise, str) or not isinstance(noise, Sequence) or len(noise) != 2:
        raise ConfigurationError(f"noise must be a pair (low, high), not {noise!r}")
    values: dict[str, Any] = {
        "discount": discount,
        "epsilon": epsilon,
        "low": noise[0],
        "high": noise[1],
        "initial": initial,
        "window": window,
        "exploration": exploration,
    }
    values.update({key: value for key, value in options.items() if key != "policy"})
    discount = _real("discount", values["discount"])
    epsilon = _real("epsilon", values["epsilon"])
    low = _real("noise low", values["low"])
    high = _real("noise high", values["high"])
    window = _integer("window", values["window"])
    exploration = _real("exploration", values["exploration"])
    if not 0.0 < discount <= 1.0:
        raise ConfigurationError(f"discount must be in (0, 1], not {discount}")
    if not 0.0 <= epsilon <= 1.0:
        raise ConfigurationError(f"epsilon must be in [0, 1], not {epsilon}")
    if not 0.0 < low <= high:
        raise ConfigurationError(f"noise needs 0 < low <= high, not low={low}, high={high}")
    if window < 1:
        raise ConfigurationError(f"window must be >= 1 counted period, not {window}")
    if exploration < 0:
        raise ConfigurationError(f"exploration must be >= 0, not {exploration}")

    if base == "fixed":
        policy = _canonical_policy(options["policy"])
        return FixedSelector(canonical, policy)
    if base == "random":
        return RandomSelector(canonical, rng)
    if base in ("full", "noisy"):
        start = _canonical_policy(values["initial"])
        if start not in canonical:
            raise ConfigurationError(
                f"initial policy {start} of selector {base} is not in the policy set "
                f"{', '.join(canonical)}"
            )
        shown = [f"low={_format(low)}", f"high={_format(high)}"] if base == "noisy" else []
        if discount != 1.0:
            shown.append(f"discount={_format(discount)}")
        if start != "FCFS":
            shown.append(f"initial={start}")
        name = f"{base}({','.join(shown)})" if shown else base
        if base == "full":
            return FullSelector(canonical, discount=discount, initial=start, name=name)
        return NoisySelector(
            canonical, discount=discount, initial=start, low=low, high=high, rng=rng, name=name
        )
    if base == "bandit":
        shown = [f"eps={_format(epsilon)}"]
        if discount != 1.0:
            shown.append(f"discount={_format(discount)}")
        return EpsilonGreedySelector(
            canonical,
            epsilon=epsilon,
            discount=discount,
            rng=rng,
            name=f"bandit({','.join(shown)})",
        )
    if base == "ucb":
        return UCBSelector(
            canonical, exploration=exploration, window=None, name=f"ucb(c={_format(exploration)})"
        )
    if base == "swucb":
        shown = [f"window={window}"]
        if exploration != 1.0:
            shown.append(f"c={_format(exploration)}")
        return UCBSelector(
            canonical, exploration=exploration, window=window, name=f"swucb({','.join(shown)})"
        )
    assert base == "thompson"
    return ThompsonSelector(canonical, rng=rng, name="thompson")
