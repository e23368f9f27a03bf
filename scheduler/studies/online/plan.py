"""The online study's plan: the ``online`` config section checked (policies, periods,
selectors from the selector registry, epsilons) and the (strategy, period) runs it implies.
Errors name the config key.

Defaults follow the published study (Reis's thesis): ``online.selectors`` defaults to the
selector kinds of the thesis (:data:`THESIS_SELECTORS`: random, full, noisy, bandit); schedlab's
additions (ucb, swucb, thompson) run only when listed, and tables and figures label them
"(addition)". The ε-greedy bandit has no forced round (``online.bandit_forced_round: false``) and
its ε is chosen by a leave-one-trace-out vote pooled over the periods
(``online.epsilon_vote: pooled``), or is ``online.epsilon`` (0.1) with a single trace."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.core.errors import ConfigurationError
from scheduler.core.units import parse_duration
from scheduler.studies.common.config import (
    MAX_SIMULATION_JOBS,
    Threshold,
    TraceEntry,
    catalogue_entries,
    confidence_level,
    config_flag,
    duration_problem,
    policy_list,
    require_in,
    threshold_list,
)
from scheduler.studies.online.epsilon import EPSILON_VOTES
from scheduler.studies.online.selectors import (
    EPSILON_GREEDY,
    FIXED,
    SELECTORS,
    bandit_epsilon,
    bandit_spec,
)
from scheduler.traces.calendar import check_week_alignment
from scheduler.traces.resample import RESAMPLING_METHODS

_PERIOD_LABEL = re.compile(r"^[0-9]+(s|m|h|d|w)$")

__all__ = ["THESIS_SELECTORS", "OnlinePlan", "OnlineStrategy", "online_plan", "strategy_slug"]

#: The default of ``online.selectors``: the selector kinds of the published study (the
#: ``thesis`` flag of the registry), without ``fixed`` (the fixed policies always run).
THESIS_SELECTORS: tuple[str, ...] = tuple(
    name for name, kind in SELECTORS.items() if kind.thesis and name != FIXED
)


_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9.]+")


@dataclass(frozen=True)
class OnlineStrategy:
    """A strategy of the online study: its selector spec, a path-safe slug, and the policy
    periods it runs with (``("none",)`` for fixed policies, which never switch)."""

    spec: str
    slug: str
    periods: tuple[str, ...]
    needs_simulation: bool


@dataclass(frozen=True)
class OnlinePlan:
    """The online policy-selection study, checked."""

    seed: int
    traces: tuple[TraceEntry, ...]
    replicas: int
    weeks: int
    resampling: str
    policies: tuple[str, ...]
    threshold_s: float
    threshold_backfill: bool
    periods: tuple[Threshold, ...]
    strategies: tuple[OnlineStrategy, ...]
    epsilons: tuple[float, ...]
    epsilon: float
    epsilon_vote: str
    reference: str
    confidence: float
    selector_options: dict[str, Any]
    #: How the long traces' source weeks are cut (``calendar``: Monday 00:00 local time;
    #: ``first_submit``: from the log's first submission).
    week_alignment: str = "calendar"
    #: Where the policy periods (and the daily curve's days) start (``calendar``: the long
    #: trace's origin, a local Monday 00:00; ``first_submit``: its first submission).
    period_alignment: str = "calendar"

    @property
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

    def period_seconds(self, label: str) -> float:
        for period in self.periods:
            if period.label == label:
                return period.seconds
        raise ConfigurationError(f"period {label!r} is not in online.periods")

    def strategy(self, slug: str) -> OnlineStrategy:
        for strategy in self.strategies:
            if strategy.slug == slug:
                return strategy
        raise ConfigurationError(f"no online strategy with slug {slug!r}")

    @property
    def bandit_epsilons(self) -> tuple[float, ...]:
        """The ε values the ε-greedy bandit runs with (the vote's candidates, in config order);
        empty when ``online.selectors`` has no bandit."""
        found = (bandit_epsilon(strategy.spec) for strategy in self.strategies)
        return tuple(eps for eps in found if eps is not None)

    def runs(self) -> tuple[tuple[OnlineStrategy, str], ...]:
        """Every (strategy, period label) pair the study runs on each replica."""
        return tuple((s, p) for s in self.strategies for p in s.periods)


def strategy_slug(spec: str) -> str:
    """A file-name-safe form of a selector spec: ``"bandit(eps=0.3)"`` → ``"bandit-eps0.3"``."""
    return _SLUG_UNSAFE.sub("-", spec.replace("=", "")).strip("-")


def _period_problem(label: object) -> str:
    """Why ``online.periods`` refuses ``label`` (a period is a whole number and a unit)."""
    if re.fullmatch(r"[0-9]*\.[0-9]+\s*[smhdw]", str(label).strip()):
        return f"{label!r}: write a whole number before the unit, e.g. 36h for 1.5d"
    return duration_problem(label, none=False).replace("e.g. 20h", "e.g. 1d")


def online_plan(config: Mapping[str, Any]) -> OnlinePlan:
    """Check the ``online`` section of a (schema-validated) config and return its plan."""
    online = config.get("online") or {}
    policies = policy_list(online.get("policies", []), "online.policies")
    if not policies:
        raise ConfigurationError("config online.policies: must not be empty")
    reference = policy_list([online.get("reference", "FCFS")], "online.reference")[0]
    require_in(reference in policies, "online.reference", reference, "online.policies")
    initial = policy_list([online.get("initial", "FCFS")], "online.initial")[0]
    require_in(initial in policies, "online.initial", initial, "online.policies")
    threshold = str(online.get("threshold", "40h"))
    threshold_s = threshold_list([threshold], "online.threshold")[0].seconds
    threshold_backfill = config_flag(
        online.get("threshold_backfill", True), "online.threshold_backfill"
    )
    periods = []
    for label in online.get("periods", ["1d", "1w"]):
        if not _PERIOD_LABEL.match(str(label)):
            raise ConfigurationError(f"config online.periods: {_period_problem(label)}")
        seconds = parse_duration(str(label))
        if seconds <= 0:
            raise ConfigurationError(f"config online.periods: {label!r} must be longer than 0")
        periods.append(Threshold(str(label), seconds))
    if not periods:
        raise ConfigurationError("config online.periods: give at least one period")
    for k, period in enumerate(periods):
        same = [p.label for p in periods[:k] if p.seconds == period.seconds]
        if same:
            raise ConfigurationError(
                f"config online.periods: {same[0]!r} and {period.label!r} are the same duration"
            )
    labels = tuple(p.label for p in periods)
    epsilons = tuple(float(e) for e in online.get("epsilons", [0.1, 0.3, 0.5, 0.7, 0.9]))
    if not epsilons:
        raise ConfigurationError("config online.epsilons: give at least one value in [0, 1]")
    for eps in epsilons:
        if not 0 <= eps <= 1:
            raise ConfigurationError(f"config online.epsilons: {eps!r} is not in [0, 1]")
        # the bandit's run is named by its ε (bandit(eps=0.3)): the name must give it back
        if round(eps, 4) != eps or bandit_epsilon(bandit_spec(eps)) != eps:
            raise ConfigurationError(
                f"config online.epsilons: {eps!r} has more than 4 decimal places (e.g. 0.05)"
            )
    twice = sorted({eps for eps in epsilons if epsilons.count(eps) > 1})
    if twice:
        raise ConfigurationError(
            f"config online.epsilons: {', '.join(f'{eps:g}' for eps in twice)} listed twice"
        )
    epsilon_vote = str(online.get("epsilon_vote", "pooled"))
    if epsilon_vote not in EPSILON_VOTES:
        raise ConfigurationError(
            f"config online.epsilon_vote: {epsilon_vote!r} is not one of {', '.join(EPSILON_VOTES)}"
        )
    epsilon = online.get("epsilon", 0.1)
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) or not 0 <= epsilon <= 1:
        raise ConfigurationError(f"config online.epsilon: {epsilon!r} is not a number in [0, 1]")
    epsilon = float(epsilon)
    forced_round = config_flag(
        online.get("bandit_forced_round", False), "online.bandit_forced_round"
    )
    strategies = [
        OnlineStrategy(f"{FIXED}:{p}", f"{FIXED}-{p}", ("none",), False) for p in policies
    ]
    selectors = [str(s).lower() for s in online.get("selectors", THESIS_SELECTORS)]
    twice_selectors = sorted({name for name in selectors if selectors.count(name) > 1})
    if twice_selectors:
        raise ConfigurationError(
            f"config online.selectors: {', '.join(twice_selectors)} listed twice"
        )
    # every registered kind but fixed (the fixed policies are online.policies)
    known = {name for name in SELECTORS if name != FIXED}
    for name in selectors:
        if name not in known:
            raise ConfigurationError(
                f"config online.selectors: unknown selector {name!r}; known: {sorted(known)}"
            )
        kind = SELECTORS[name]
        # the epsilon-greedy bandit runs once per epsilon of online.epsilons
        specs = [bandit_spec(e) for e in epsilons] if name == EPSILON_GREEDY else [name]
        for spec in specs:
            strategies.append(
                OnlineStrategy(spec, strategy_slug(spec), labels, kind.needs_simulation)
            )
    traces = catalogue_entries(config, online.get("traces", []), "online.traces")
    # the configured ε is used when nobody can vote: it must be one of the bandit's runs
    nobody_votes = len(traces) == 1 or epsilon_vote == "configured"
    if EPSILON_GREEDY in selectors and nobody_votes and epsilon not in epsilons:
        why = (
            "a single trace in online.traces (no other trace to vote)"
            if len(traces) == 1
            else "online.epsilon_vote: configured"
        )
        raise ConfigurationError(
            f"config online.epsilon: {epsilon:g} is not among online.epsilons "
            f"({', '.join(f'{eps:g}' for eps in epsilons)}); with {why} the bandit runs "
            "with the configured ε"
        )
    noise = tuple(float(x) for x in online.get("noise", [0.8, 1.2]))
    if len(noise) != 2 or not 0 < noise[0] <= noise[1] or not math.isfinite(noise[1]):
        raise ConfigurationError(
            f"config online.noise: [low, high] with 0 < low <= high, finite; got {list(noise)}"
        )
    discount = float(online.get("discount", 1.0))
    if not 0 < discount <= 1:
        raise ConfigurationError(f"config online.discount: must be in (0, 1], got {discount!r}")
    replicas, weeks = int(online.get("replicas", 2)), int(online.get("weeks", 104))
    for key, value in (("replicas", replicas), ("weeks", weeks)):
        if value < 1:
            raise ConfigurationError(f"config online.{key}: must be >= 1, got {value}")
    jobs = replicas * sum(len(strategy.periods) for strategy in strategies)
    if jobs > MAX_SIMULATION_JOBS:
        raise ConfigurationError(
            f"config online.replicas: {jobs:,} live runs per trace (replicas x strategies x "
            f"periods) exceed {MAX_SIMULATION_JOBS:,}"
        )
    seed = int(config.get("seed", 0))
    if seed < 0:
        raise ConfigurationError(f"config seed: must be >= 0, got {seed}")
    resampling = online.get("resampling", "uniform")
    if resampling not in RESAMPLING_METHODS:
        raise ConfigurationError(f"config online.resampling: unknown method {resampling!r}")
    week_alignment = check_week_alignment(
        online.get("week_alignment", "calendar"), "online.week_alignment"
    )
    period_alignment = check_week_alignment(
        online.get("period_alignment", "calendar"), "online.period_alignment"
    )
    if period_alignment == "calendar" and week_alignment != "calendar":
        # a first_submit long trace starts at an arbitrary instant: its origin is no midnight
        raise ConfigurationError(
            "config online.period_alignment: calendar periods need calendar weeks "
            f"(online.week_alignment: calendar), got online.week_alignment: {week_alignment}; "
            "set online.period_alignment: first_submit for the published alignment"
        )
    return OnlinePlan(
        seed=seed,
        traces=traces,
        replicas=replicas,
        weeks=weeks,
        resampling=resampling,
        policies=policies,
        threshold_s=threshold_s,
        threshold_backfill=threshold_backfill,
        periods=tuple(periods),
        strategies=tuple(strategies),
        epsilons=epsilons,
        epsilon=epsilon,
        epsilon_vote=epsilon_vote,
        confidence=confidence_level(online.get("confidence", 0.95), "online.confidence"),
        reference=f"fixed:{reference}",
        selector_options={
            "discount": discount,
            "noise": noise,
            "initial": initial,
            "forced_round": forced_round,
        },
        week_alignment=week_alignment,
        period_alignment=period_alignment,
    )
