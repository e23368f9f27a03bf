"""The queue-tuning study's plan: the ``tuning`` config section checked (policies, thresholds,
baseline, figure settings inside the search space) and the simulation cases and week batches it
implies. Errors name the config key."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.config import (
    MAX_SIMULATION_JOBS,
    Threshold,
    TraceEntry,
    catalogue_entries,
    confidence_level,
    policy_list,
    require_in,
    threshold_list,
)
from scheduler.traces.calendar import check_week_alignment
from scheduler.traces.resample import RESAMPLING_METHODS, SPLITS

#: The threshold label of "no threshold".
NO_THRESHOLD = "none"

__all__ = ["Batch", "SimulationCase", "TuningPlan", "tuning_plan"]


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
    #: How resampled weeks are cut from each split (``first_submit`` or ``calendar``).
    week_alignment: str = "first_submit"

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


def _study_traces(tuning: Mapping[str, Any]) -> list[str]:
    traces = list(tuning.get("traces", []))
    if not traces:
        raise ConfigurationError(
            "config tuning.traces: name at least one trace, or leave the study out of `studies`"
        )
    return traces


def tuning_plan(config: Mapping[str, Any]) -> TuningPlan:
    """Check the ``tuning`` section of a (schema-validated) config and return its plan."""
    tuning = config.get("tuning") or {}
    primary = policy_list(tuning.get("primary_policies", []), "tuning.primary_policies")
    backfill = policy_list(tuning.get("backfill_policies", []), "tuning.backfill_policies")
    thresholds = threshold_list(tuning.get("thresholds", []), "tuning.thresholds")
    if not primary or not backfill or not thresholds:
        raise ConfigurationError("config tuning: policies and thresholds must not be empty")
    labels = {t.label for t in thresholds}
    resampling = tuning.get("resampling", "uniform")
    if resampling not in RESAMPLING_METHODS:
        raise ConfigurationError(f"config tuning.resampling: unknown method {resampling!r}")
    week_alignment = check_week_alignment(
        tuning.get("week_alignment", "first_submit"), "tuning.week_alignment"
    )

    base = tuning.get("baseline") or {}
    baseline = SimulationCase(
        policy_list([base.get("primary", "FCFS")], "tuning.baseline.primary")[0],
        policy_list([base.get("backfill", "FCFS")], "tuning.baseline.backfill")[0],
        str(base.get("threshold", "none")),
    )
    require_in(baseline.primary in primary, "tuning.baseline.primary", baseline.primary,
             "tuning.primary_policies")  # fmt: skip
    require_in(baseline.backfill in backfill, "tuning.baseline.backfill", baseline.backfill,
             "tuning.backfill_policies")  # fmt: skip
    require_in(baseline.threshold in labels, "tuning.baseline.threshold", baseline.threshold,
             "tuning.thresholds")  # fmt: skip

    figures = tuning.get("figures") or {}
    weekly_backfill = policy_list(
        [figures.get("weekly_backfill", "FCFS")], "tuning.figures.weekly_backfill"
    )[0]
    thresholded_backfill = policy_list(
        [figures.get("thresholded_backfill", "SPF")], "tuning.figures.thresholded_backfill"
    )[0]
    figure_threshold = str(figures.get("threshold", "20h"))
    require_in(weekly_backfill in backfill, "tuning.figures.weekly_backfill", weekly_backfill,
             "tuning.backfill_policies")  # fmt: skip
    require_in(thresholded_backfill in backfill, "tuning.figures.thresholded_backfill",
             thresholded_backfill, "tuning.backfill_policies")  # fmt: skip
    require_in(figure_threshold in labels, "tuning.figures.threshold", figure_threshold,
             "tuning.thresholds")  # fmt: skip
    # the thresholded-policies figure compares Θ = figures.threshold with Θ = none
    if figure_threshold == NO_THRESHOLD:
        raise ConfigurationError(
            "config tuning.figures.threshold: must be a threshold other than 'none' (the "
            "thresholded-policies figure compares it with 'none')"
        )
    if NO_THRESHOLD not in labels:
        raise ConfigurationError(
            "config tuning.thresholds: must list 'none' (the thresholded-policies figure "
            f"compares tuning.figures.threshold = {figure_threshold!r} with it)"
        )

    weeks_per_split = int(tuning.get("weeks_per_split", 100))
    weeks_per_job = int(tuning.get("weeks_per_job", 100))
    for key, value in (("weeks_per_split", weeks_per_split), ("weeks_per_job", weeks_per_job)):
        if value < 1:
            raise ConfigurationError(f"config tuning.{key}: must be >= 1, got {value}")
    figure_weeks = int(figures.get("weeks", 150))
    if figure_weeks < 1:
        raise ConfigurationError(f"config tuning.figures.weeks: must be >= 1, got {figure_weeks}")
    jobs = len(SPLITS) * len(primary) * len(backfill) * len(thresholds)
    jobs *= math.ceil(weeks_per_split / weeks_per_job)
    if jobs > MAX_SIMULATION_JOBS:
        raise ConfigurationError(
            f"config tuning.weeks_per_split / tuning.weeks_per_job: {jobs:,} simulation jobs per "
            f"trace (splits x policy pairs x thresholds x batches) exceed {MAX_SIMULATION_JOBS:,}; "
            "raise weeks_per_job or study fewer weeks"
        )
    seed = int(config.get("seed", 0))
    if seed < 0:
        raise ConfigurationError(f"config seed: must be >= 0, got {seed}")
    return TuningPlan(
        seed=seed,
        traces=catalogue_entries(config, _study_traces(tuning)),
        resampling=resampling,
        weeks_per_split=weeks_per_split,
        weeks_per_job=weeks_per_job,
        primary_policies=primary,
        backfill_policies=backfill,
        thresholds=thresholds,
        baseline=baseline,
        confidence=confidence_level(tuning.get("confidence", 0.95), "tuning.confidence"),
        figure_weeks=figure_weeks,
        weekly_backfill=weekly_backfill,
        thresholded_backfill=thresholded_backfill,
        figure_threshold=figure_threshold,
        week_alignment=week_alignment,
    )
