"""The workflow configuration, checked and turned into the study's plan.

The JSON schema ``workflow/schemas/config.schema.yaml`` checks types and shapes (Snakemake
validates the config against it first); this module checks what a schema cannot: policy names
against the registry, thresholds with units and without duplicates, studied traces present in
the catalogue, the baseline and figure settings inside the search space. Every error is a
:class:`~scheduler.errors.ConfigurationError` naming the config key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.errors import ConfigurationError
from scheduler.policies import POLICIES
from scheduler.resample import RESAMPLING_METHODS, SPLITS
from scheduler.units import parse_duration

__all__ = [
    "Batch",
    "OnlinePlan",
    "OnlineStrategy",
    "SimulationCase",
    "Threshold",
    "TraceEntry",
    "TuningPlan",
    "online_plan",
    "strategy_slug",
    "tuning_plan",
]

_THRESHOLD_LABEL = re.compile(r"^(none|[0-9]+(\.[0-9]+)?(s|m|h|d|w))$")


@dataclass(frozen=True)
class TraceEntry:
    """One log of the catalogue: archive URL, optional SHA-256 and machine size (processors)."""

    name: str
    url: str
    sha256: str | None = None
    machine_procs: int | None = None


@dataclass(frozen=True)
class Threshold:
    """A waiting-time threshold Θ: its config label (``"20h"``, ``"none"``) and seconds."""

    label: str
    seconds: float


@dataclass(frozen=True)
class Batch:
    """Resampled weeks ``first..last`` (inclusive) of a split, simulated by one job."""

    index: int
    first: int
    last: int

    @property
    def weeks(self) -> range:
        return range(self.first, self.last + 1)


@dataclass(frozen=True)
class SimulationCase:
    """One cell of the search space: primary order, backfilling order, threshold label."""

    primary: str
    backfill: str
    threshold: str


@dataclass(frozen=True)
class TuningPlan:
    """The queue-tuning study, checked. Thresholds are sorted by seconds ("none" last)."""

    seed: int
    traces: tuple[TraceEntry, ...]
    resampling: str
    weeks_per_split: int
    weeks_per_job: int
    primary_policies: tuple[str, ...]
    backfill_policies: tuple[str, ...]
    thresholds: tuple[Threshold, ...]
    baseline: SimulationCase
    confidence: float
    figure_weeks: int
    weekly_backfill: str
    thresholded_backfill: str
    figure_threshold: str

    @property
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

    @property
    def splits(self) -> tuple[str, ...]:
        return SPLITS

    def batches(self) -> tuple[Batch, ...]:
        """The batches of resampled weeks; every batch but the last has ``weeks_per_job``."""
        size = self.weeks_per_job
        count = math.ceil(self.weeks_per_split / size)
        return tuple(
            Batch(b, b * size, min((b + 1) * size, self.weeks_per_split) - 1) for b in range(count)
        )

    def batch(self, index: int) -> Batch:
        batches = self.batches()
        if not 0 <= index < len(batches):
            raise ConfigurationError(f"no batch {index}: the study has {len(batches)} batches")
        return batches[index]

    def cases(self) -> tuple[SimulationCase, ...]:
        """Every (primary, backfill, threshold) of the search space."""
        return tuple(
            SimulationCase(p, b, t.label)
            for t in self.thresholds
            for p in self.primary_policies
            for b in self.backfill_policies
        )

    def threshold_seconds(self, label: str) -> float:
        for threshold in self.thresholds:
            if threshold.label == label:
                return threshold.seconds
        raise ConfigurationError(f"threshold {label!r} is not in tuning.thresholds")

    def trace(self, name: str) -> TraceEntry:
        for entry in self.traces:
            if entry.name == name:
                return entry
        raise ConfigurationError(f"trace {name!r} is not in tuning.traces")


def _policy_list(value: Sequence[str], key: str) -> tuple[str, ...]:
    known = {name.upper(): name for name in POLICIES}
    out = []
    for name in value:
        canonical = known.get(str(name).upper())
        if canonical is None:
            raise ConfigurationError(
                f"config {key}: unknown policy {name!r}; known: {', '.join(sorted(POLICIES))}"
            )
        out.append(canonical)
    if len(set(out)) != len(out):
        raise ConfigurationError(f"config {key}: a policy is listed twice: {list(value)}")
    return tuple(out)


def _thresholds(value: Sequence[str], key: str) -> tuple[Threshold, ...]:
    out = []
    for label in value:
        text = str(label).strip()
        if not _THRESHOLD_LABEL.match(text):
            raise ConfigurationError(
                f"config {key}: threshold {label!r} needs a unit (s, m, h, d, w) or 'none', "
                "e.g. 20h"
            )
        out.append(Threshold(text, parse_duration(text)))
    seconds = [t.seconds for t in out]
    if len(set(seconds)) != len(seconds):
        raise ConfigurationError(f"config {key}: two thresholds are the same duration: {value}")
    return tuple(sorted(out, key=lambda t: t.seconds))


def _catalogue(
    config: Mapping[str, Any], names: Sequence[str], key: str = "tuning.traces"
) -> tuple[TraceEntry, ...]:
    catalogue = config.get("traces") or {}
    entries = []
    for name in names:
        if name not in catalogue:
            known = ", ".join(sorted(catalogue)) or "none"
            raise ConfigurationError(
                f"config {key}: unknown trace {name!r}; the catalogue (traces:) has {known}"
            )
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
            raise ConfigurationError(
                f"config traces: name {name!r} must use letters, digits, '.', '_' or '-' only"
            )
        item = catalogue[name]
        entries.append(
            TraceEntry(
                name=name,
                url=item["url"],
                sha256=(item.get("sha256") or None),
                machine_procs=item.get("machine_procs"),
            )
        )
    return tuple(entries)


def tuning_plan(config: Mapping[str, Any]) -> TuningPlan:
    """Check the ``tuning`` section of a (schema-validated) config and return its plan."""
    tuning = config.get("tuning") or {}
    primary = _policy_list(tuning.get("primary_policies", []), "tuning.primary_policies")
    backfill = _policy_list(tuning.get("backfill_policies", []), "tuning.backfill_policies")
    thresholds = _thresholds(tuning.get("thresholds", []), "tuning.thresholds")
    if not primary or not backfill or not thresholds:
        raise ConfigurationError("config tuning: policies and thresholds must not be empty")
    labels = {t.label for t in thresholds}
    resampling = tuning.get("resampling", "uniform")
    if resampling not in RESAMPLING_METHODS:
        raise ConfigurationError(f"config tuning.resampling: unknown method {resampling!r}")

    base = tuning.get("baseline") or {}
    baseline = SimulationCase(
        _policy_list([base.get("primary", "FCFS")], "tuning.baseline.primary")[0],
        _policy_list([base.get("backfill", "FCFS")], "tuning.baseline.backfill")[0],
        str(base.get("threshold", "none")),
    )
    _require(baseline.primary in primary, "tuning.baseline.primary", baseline.primary,
             "tuning.primary_policies")  # fmt: skip
    _require(baseline.backfill in backfill, "tuning.baseline.backfill", baseline.backfill,
             "tuning.backfill_policies")  # fmt: skip
    _require(baseline.threshold in labels, "tuning.baseline.threshold", baseline.threshold,
             "tuning.thresholds")  # fmt: skip

    figures = tuning.get("figures") or {}
    weekly_backfill = _policy_list(
        [figures.get("weekly_backfill", "FCFS")], "tuning.figures.weekly_backfill"
    )[0]
    thresholded_backfill = _policy_list(
        [figures.get("thresholded_backfill", "SPF")], "tuning.figures.thresholded_backfill"
    )[0]
    figure_threshold = str(figures.get("threshold", "20h"))
    _require(weekly_backfill in backfill, "tuning.figures.weekly_backfill", weekly_backfill,
             "tuning.backfill_policies")  # fmt: skip
    _require(thresholded_backfill in backfill, "tuning.figures.thresholded_backfill",
             thresholded_backfill, "tuning.backfill_policies")  # fmt: skip
    _require(figure_threshold in labels, "tuning.figures.threshold", figure_threshold,
             "tuning.thresholds")  # fmt: skip

    weeks_per_split = int(tuning.get("weeks_per_split", 100))
    weeks_per_job = int(tuning.get("weeks_per_job", 100))
    if weeks_per_split < 1 or weeks_per_job < 1:
        raise ConfigurationError("config tuning: weeks_per_split and weeks_per_job must be >= 1")
    seed = int(config.get("seed", 0))
    if seed < 0:
        raise ConfigurationError(f"config seed: must be >= 0, got {seed}")
    return TuningPlan(
        seed=seed,
        traces=_catalogue(config, tuning.get("traces", [])),
        resampling=resampling,
        weeks_per_split=weeks_per_split,
        weeks_per_job=weeks_per_job,
        primary_policies=primary,
        backfill_policies=backfill,
        thresholds=thresholds,
        baseline=baseline,
        confidence=float(tuning.get("confidence", 0.95)),
        figure_weeks=int(figures.get("weeks", 150)),
        weekly_backfill=weekly_backfill,
        thresholded_backfill=thresholded_backfill,
        figure_threshold=figure_threshold,
    )


def _require(ok: bool, key: str, value: str, space: str) -> None:
    if not ok:
        raise ConfigurationError(f"config {key}: {value!r} must be one of {space}")


# -- the online policy-selection study ------------------------------------------------------------

_PERIOD_LABEL = re.compile(r"^[0-9]+(s|m|h|d|w)$")
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
    periods: tuple[Threshold, ...]
    strategies: tuple[OnlineStrategy, ...]
    epsilons: tuple[float, ...]
    reference: str
    selector_options: dict[str, Any]

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

    def runs(self) -> tuple[tuple[OnlineStrategy, str], ...]:
        """Every (strategy, period label) pair the study runs on each replica."""
        return tuple((s, p) for s in self.strategies for p in s.periods)


def strategy_slug(spec: str) -> str:
    """A file-name-safe form of a selector spec: ``"bandit(eps=0.3)"`` → ``"bandit-eps0.3"``."""
    return _SLUG_UNSAFE.sub("-", spec.replace("=", "")).strip("-")


def online_plan(config: Mapping[str, Any]) -> OnlinePlan:
    """Check the ``online`` section of a (schema-validated) config and return its plan."""
    online = config.get("online") or {}
    policies = _policy_list(online.get("policies", []), "online.policies")
    if not policies:
        raise ConfigurationError("config online.policies: must not be empty")
    reference = _policy_list([online.get("reference", "FCFS")], "online.reference")[0]
    _require(reference in policies, "online.reference", reference, "online.policies")
    initial = _policy_list([online.get("initial", "FCFS")], "online.initial")[0]
    _require(initial in policies, "online.initial", initial, "online.policies")
    threshold = str(online.get("threshold", "40h"))
    threshold_s = _thresholds([threshold], "online.threshold")[0].seconds
    periods = []
    for label in online.get("periods", ["1d", "1w"]):
        if not _PERIOD_LABEL.match(str(label)):
            raise ConfigurationError(
                f"config online.periods: {label!r} needs a unit (s, m, h, d, w), e.g. 1d"
            )
        periods.append(Threshold(str(label), parse_duration(str(label))))
    if not periods or len({p.seconds for p in periods}) != len(periods):
        raise ConfigurationError("config online.periods: give distinct, non-empty periods")
    labels = tuple(p.label for p in periods)
    epsilons = tuple(float(e) for e in online.get("epsilons", [0.1, 0.3, 0.5, 0.7, 0.9]))
    if not epsilons or any(not 0 <= e <= 1 for e in epsilons):
        raise ConfigurationError("config online.epsilons: values in [0, 1], at least one")
    strategies = [OnlineStrategy(f"fixed:{p}", f"fixed-{p}", ("none",), False) for p in policies]
    selectors = [str(s).lower() for s in online.get("selectors", [])]
    known = {"random", "full", "noisy", "bandit", "ucb", "swucb", "thompson"}
    for name in selectors:
        if name not in known:
            raise ConfigurationError(
                f"config online.selectors: unknown selector {name!r}; known: {sorted(known)}"
            )
        specs = [f"bandit(eps={e:g})" for e in epsilons] if name == "bandit" else [name]
        for spec in specs:
            needs = name in ("full", "noisy")
            strategies.append(OnlineStrategy(spec, strategy_slug(spec), labels, needs))
    if len({s.slug for s in strategies}) != len(strategies):
        raise ConfigurationError("config online.selectors: a selector is listed twice")
    noise = tuple(float(x) for x in online.get("noise", [0.8, 1.2]))
    if len(noise) != 2 or not 0 < noise[0] <= noise[1]:
        raise ConfigurationError("config online.noise: [low, high] with 0 < low <= high")
    discount = float(online.get("discount", 1.0))
    if not 0 < discount <= 1:
        raise ConfigurationError("config online.discount: must be in (0, 1]")
    replicas, weeks = int(online.get("replicas", 2)), int(online.get("weeks", 104))
    if replicas < 1 or weeks < 1:
        raise ConfigurationError("config online: replicas and weeks must be >= 1")
    resampling = online.get("resampling", "uniform")
    if resampling not in RESAMPLING_METHODS:
        raise ConfigurationError(f"config online.resampling: unknown method {resampling!r}")
    return OnlinePlan(
        seed=int(config.get("seed", 0)),
        traces=_catalogue(config, online.get("traces", []), "online.traces"),
        replicas=replicas,
        weeks=weeks,
        resampling=resampling,
        policies=policies,
        threshold_s=threshold_s,
        periods=tuple(periods),
        strategies=tuple(strategies),
        epsilons=epsilons,
        reference=f"fixed:{reference}",
        selector_options={"discount": discount, "noise": noise, "initial": initial},
    )
