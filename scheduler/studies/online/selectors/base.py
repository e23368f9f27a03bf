"""What every selector shares: the feedback, the selector protocol, and the registry of kinds.

Time is cut into policy periods t = 0, 1, 2, ... (a day or a week). At the start of period t a
selector picks the queue policy P_t from a policy set; the live system runs with it during the
period; at the end of the period the selector receives a :class:`PeriodFeedback`. The calls
always alternate ``choose(0), observe(0, fb), choose(1), observe(1, fb), ...``.

Every selector kind registers one :class:`SelectorKind` in :data:`SELECTORS` (its base name, the
spec options it accepts, whether it needs simulated period costs, whether it is from the thesis,
and a factory); :func:`~scheduler.studies.online.selectors.specs.make_selector` builds selectors
from it, and every list of selector names (config check, tables, figures) is read from it, in
registration order.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.core.registry import Registry
from scheduler.policies import MULTIFACTOR, get_policy

__all__ = [
    "SELECTORS",
    "BaseSelector",
    "PeriodFeedback",
    "Selector",
    "SelectorKind",
    "SelectorSettings",
    "register",
]


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

    The interface the simulation driver relies on. Every selector of this package derives from
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
        if canonical_policy(feedback.policy) != entry["policy"]:
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


def as_float_list(values: np.ndarray) -> list[float]:
    return [float(value) for value in values]


def canonical_policy(name: object) -> str:
    """The registered spelling of a policy name (``"spf"`` → ``"SPF"``), or
    :data:`~scheduler.sim.multifactor.MULTIFACTOR` (any case): Slurm's scheduler as an arm.

    Raises
    ------
    ConfigurationError
        ``name`` is not a string or not a known policy.
    """
    if not isinstance(name, str):
        raise ConfigurationError(f"a policy is named by a string, not {name!r}")
    if name.strip().lower() == MULTIFACTOR:
        return MULTIFACTOR
    return get_policy(name.strip()).name


def format_option(value: float | int) -> str:
    """An option value as written in a canonical spec (``1.0`` → ``"1"``, ``0.5`` → ``"0.5"``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


# -- the registry of selector kinds -------------------------------------------------------------


@dataclass(frozen=True)
class SelectorSettings:
    """The checked arguments of :func:`~scheduler.studies.online.selectors.specs.make_selector`
    (keyword arguments overridden by the spec's inline options), handed to a kind's factory.

    Attributes
    ----------
    spec
        The spec as written.
    policies
        The policy set, canonical names, non-empty, no duplicates.
    rng
        Source of every random draw.
    discount
        lambda in (0, 1] (per elapsed period, dimensionless).
    epsilon
        Exploration probability in [0, 1].
    low, high
        Range of the uniform noise factor, 0 < low <= high (dimensionless).
    initial
        Policy of period 0 as given (not checked: only the kinds that use it do).
    window
        Counted periods in a sliding window (>= 1).
    exploration
        Weight c >= 0 of a confidence term (dimensionless).
    policy
        The P of ``fixed:P`` as written, ``None`` for other specs.
    forced_round
        Whether the epsilon-greedy bandit runs every policy once first (False: the published
        rule).
    """

    spec: str
    policies: tuple[str, ...]
    rng: np.random.Generator
    discount: float
    epsilon: float
    low: float
    high: float
    initial: object
    window: int
    exploration: float
    policy: str | None = None
    forced_round: bool = False


@dataclass(frozen=True)
class SelectorKind:
    """Everything known about one selector kind (one entry of :data:`SELECTORS`).

    Attributes
    ----------
    name
        Base name of its specs (lower case): ``"random"``, ``"bandit"``...
    description
        One line for help texts and tables.
    factory
        Builds the selector from checked :class:`SelectorSettings`; it names the selector with
        its canonical spec.
    options
        Inline spec option → :func:`~scheduler.studies.online.selectors.specs.make_selector`
        parameter (``{"eps": "epsilon", ...}``); empty when the kind takes none.
    needs_simulation
        True when its feedback must carry the simulated cost w(t; P) of every policy of the
        set (``full``, ``noisy``): the workflow then simulates the period costs first.
    thesis
        True for the selectors of Reis's thesis (``fixed``, ``random``, ``full``, ``noisy``,
        ``bandit``), False for the schedlab additions.
    figure_line
        True when the selector-improvement figure draws it by default as its own line under its
        name (the fixed policies are drawn as the best fixed policy, the bandit as the
        leave-one-trace-out bandit; optional kinds are left out).
    """

    name: str
    description: str
    factory: Callable[[SelectorSettings], Selector]
    options: Mapping[str, str] = field(default_factory=dict)
    needs_simulation: bool = False
    thesis: bool = False
    figure_line: bool = False


#: The selector kinds, by base name, in registration (= display) order.
SELECTORS: Registry[SelectorKind] = Registry("selector", canonical=str.lower)


def register(
    name: str,
    description: str,
    *,
    options: Mapping[str, str] | None = None,
    needs_simulation: bool = False,
    thesis: bool = False,
    figure_line: bool = False,
) -> Callable[[Callable[[SelectorSettings], Selector]], Callable[[SelectorSettings], Selector]]:
    """``@register(name, ...)`` on a factory: add its :class:`SelectorKind` to :data:`SELECTORS`.

    Parameters are the fields of :class:`SelectorKind`; the decorated function is the factory
    and is returned unchanged.
    """

    def decorate(
        factory: Callable[[SelectorSettings], Selector],
    ) -> Callable[[SelectorSettings], Selector]:
        kind = SelectorKind(
            name=name,
            description=description,
            factory=factory,
            options=dict(options or {}),
            needs_simulation=needs_simulation,
            thesis=thesis,
            figure_line=figure_line,
        )
        SELECTORS.add(name, kind, description)
        return factory

    return decorate
