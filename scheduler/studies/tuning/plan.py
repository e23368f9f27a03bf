"""The queue-tuning study's plan: the ``tuning`` config section checked (policies, thresholds,
baseline, figure settings inside the search space, the whole-log table) and the simulation
cases and week batches it implies. Errors name the config key.

Week sources ("splits"): ``train`` and ``test`` (the halves of the filtered log, the whole
search space on each: the train/test protocol) and, when the descriptive figures are drawn from
them (``tuning.figures.weeks_from: whole``), ``whole``: weeks resampled over the whole filtered
log, simulated only for the cases those figures show (:meth:`TuningPlan.cases_of`)."""

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
    config_flag,
    policy_list,
    require_in,
    threshold_list,
)
from scheduler.traces.calendar import check_week_alignment
from scheduler.traces.resample import RESAMPLING_METHODS, SPLITS

#: The threshold label of "no threshold".
NO_THRESHOLD = "none"
#: The week source of weeks resampled over the whole filtered log (not one half of it).
WHOLE = "whole"
#: Where the descriptive per-trace figures may take their weeks from.
FIGURE_WEEK_SOURCES = (WHOLE, "train")
#: The thesis' name of the largest-expansion-factor-first order, which the registry calls LEXP.
_THESIS_ALIASES = {"EXP": "LEXP"}

__all__ = [
    "FIGURE_WEEK_SOURCES",
    "WHOLE",
    "Batch",
    "SimulationCase",
    "TuningPlan",
    "tuning_plan",
]


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
    bootstrap_replicates: int
    bootstrap_weeks: int
    bootstrap_per_job: int
    figure_weeks: int
    weekly_backfill: str
    thresholded_backfill: str
    figure_threshold: str
    #: Where the descriptive per-trace figures take their weeks from: "whole" or "train".
    figure_split: str = WHOLE
    #: Weeks resampled over the whole filtered log (the "whole" source), per trace.
    whole_weeks: int = 100
    #: The whole-log table: traces, (primary, backfill) pairs and thresholds simulated on the
    #: whole filtered log (no resampling); the baseline is always added (:meth:`whole_log_cases`).
    whole_log_traces: tuple[TraceEntry, ...] = ()
    whole_log_pairs: tuple[tuple[str, str], ...] = ()
    whole_log_thresholds: tuple[Threshold, ...] = ()
    #: Backfill candidates in the thresholded order of the backfilling policy (overdue jobs
    #: first), as Algorithm 2 of the online study; False: in the backfilling policy's order.
    threshold_backfill: bool = False
    #: How resampled weeks are cut from each split (``first_submit`` or ``calendar``).
    week_alignment: str = "first_submit"

    @property
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

    @property
    def splits(self) -> tuple[str, ...]:
        """The splits of the train/test protocol (the whole search space on each)."""
        return SPLITS

    @property
    def week_splits(self) -> tuple[str, ...]:
        """Every week source simulated: ``train``, ``test`` and, when the descriptive figures
        use it, ``whole``."""
        return (*SPLITS, WHOLE) if self.figure_split == WHOLE else SPLITS

    def weeks_of(self, split: str) -> int:
        """Resampled weeks of a week source (per trace)."""
        if split in SPLITS:
            return self.weeks_per_split
        if split == WHOLE and split in self.week_splits:
            return self.whole_weeks
        raise ConfigurationError(f"no week source {split!r}: the study has {self.week_splits}")

    def batches(self, split: str = "train") -> tuple[Batch, ...]:
        """The batches of resampled weeks of a week source (train and test have the same);
        every batch but the last has ``weeks_per_job``."""
        size, weeks = self.weeks_per_job, self.weeks_of(split)
        count = math.ceil(weeks / size)
        return tuple(Batch(b, b * size, min((b + 1) * size, weeks) - 1) for b in range(count))

    def batch(self, index: int, split: str = "train") -> Batch:
        batches = self.batches(split)
        if not 0 <= index < len(batches):
            raise ConfigurationError(
                f"no batch {index}: the {split} weeks have {len(batches)} batches"
            )
        return batches[index]

    def bootstrap_batches(self) -> tuple[Batch, ...]:
        """Batches of source-week bootstrap replicates (``Batch.weeks`` = replicate numbers);
        none when ``tuning.bootstrap.replicates`` is 0."""
        size, total = self.bootstrap_per_job, self.bootstrap_replicates
        return tuple(
            Batch(b, b * size, min((b + 1) * size, total) - 1)
            for b in range(math.ceil(total / size))
        )

    def bootstrap_batch(self, index: int) -> Batch:
        batches = self.bootstrap_batches()
        if not 0 <= index < len(batches):
            raise ConfigurationError(
                f"no bootstrap batch {index}: the study has {len(batches)} batches"
            )
        return batches[index]

    def cases(self) -> tuple[SimulationCase, ...]:
        """Every (primary, backfill, threshold) of the search space."""
        return tuple(
            SimulationCase(p, b, t.label)
            for t in self.thresholds
            for p in self.primary_policies
            for b in self.backfill_policies
        )

    def figure_cases(self) -> tuple[SimulationCase, ...]:
        """What the descriptive per-trace figures show: every pair at the baseline's threshold
        (weekly, pair and backfilling figures; the baseline among them) and every primary
        order with the thresholded-figure backfilling at Θ = none and at the figure
        threshold. The "whole" weeks simulate only these."""
        wanted = [
            SimulationCase(p, b, self.baseline.threshold)
            for p in self.primary_policies
            for b in self.backfill_policies
        ]
        for label in (NO_THRESHOLD, self.figure_threshold):
            wanted += [SimulationCase(p, self.thresholded_backfill, label)
                       for p in self.primary_policies]  # fmt: skip
        return tuple(dict.fromkeys(wanted))  # in order, without repeats

    def cases_of(self, split: str) -> tuple[SimulationCase, ...]:
        """The cases simulated on a week source: the whole search space on train and test,
        :meth:`figure_cases` on the whole-log weeks."""
        if split == WHOLE:
            return self.figure_cases()
        return self.cases()

    def whole_log_cases(self) -> tuple[SimulationCase, ...]:
        """The cases of the whole-log table: every configured pair at every configured
        threshold, then the baseline (unless listed), which every row is compared with."""
        cases = [
            SimulationCase(p, b, t.label)
            for p, b in self.whole_log_pairs
            for t in self.whole_log_thresholds
        ]
        return tuple(dict.fromkeys([*cases, self.baseline]))

    @property
    def whole_log_trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.whole_log_traces)

    def threshold_seconds(self, label: str) -> float:
        for threshold in (*self.thresholds, *self.whole_log_thresholds):
            if threshold.label == label:
                return threshold.seconds
        raise ConfigurationError(
            f"threshold {label!r} is not in tuning.thresholds or tuning.whole_log.thresholds"
        )

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


def _pair(item: object, key: str) -> tuple[str, str]:
    """One (primary, backfill) pair of ``tuning.whole_log.pairs``: ``"SPF-SPF"`` or
    ``[SPF, SPF]``, policy names checked against the registry."""
    if isinstance(item, str):
        names = item.split("-")
    elif isinstance(item, list | tuple):
        names = [str(name) for name in item]
    else:
        names = []
    if len(names) != 2 or not all(name.strip() for name in names):
        raise ConfigurationError(
            f"config {key}: {item!r} is not a pair; write 'PRIMARY-BACKFILL' (e.g. 'SPF-SPF') or "
            "[PRIMARY, BACKFILL]"
        )
    for name in names:
        alias = _THESIS_ALIASES.get(name.strip().upper())
        if alias is not None:
            raise ConfigurationError(
                f"config {key}: unknown policy {name!r} in {item!r}; the thesis' {name} is the "
                f"registry's {alias} (largest expansion factor first)"
            )
    primary = policy_list([names[0].strip()], key)[0]
    backfill = policy_list([names[1].strip()], key)[0]
    return primary, backfill


def _whole_log(config: Mapping[str, Any], section: Mapping[str, Any]) -> dict[str, Any]:
    """The checked ``tuning.whole_log`` section, as TuningPlan fields."""
    key = "tuning.whole_log"
    names = list(section.get("traces", []))
    if len(set(names)) != len(names):
        raise ConfigurationError(f"config {key}.traces: a trace is listed twice: {names}")
    pairs = tuple(_pair(item, f"{key}.pairs") for item in section.get("pairs", []))
    if len(set(pairs)) != len(pairs):
        listed = ", ".join(f"{p}-{b}" for p, b in pairs)
        raise ConfigurationError(f"config {key}.pairs: a pair is listed twice: {listed}")
    thresholds = threshold_list(section.get("thresholds", [NO_THRESHOLD]), f"{key}.thresholds")
    if names and not pairs:
        raise ConfigurationError(
            f"config {key}.pairs: name at least one pair for the traces {names}, or leave "
            f"{key}.traces empty"
        )
    if not thresholds:
        raise ConfigurationError(f"config {key}.thresholds: name at least one threshold")
    return {
        "whole_log_traces": catalogue_entries(config, names, f"{key}.traces"),
        "whole_log_pairs": pairs,
        "whole_log_thresholds": thresholds,
    }


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
    figure_split = str(figures.get("weeks_from", WHOLE))
    require_in(figure_split in FIGURE_WEEK_SOURCES, "tuning.figures.weeks_from", figure_split,
               " or ".join(FIGURE_WEEK_SOURCES))  # fmt: skip
    whole_weeks = int(figures.get("whole_weeks", 100))
    if whole_weeks < 1:
        raise ConfigurationError(
            f"config tuning.figures.whole_weeks: must be >= 1, got {whole_weeks}"
        )
    jobs = len(SPLITS) * len(primary) * len(backfill) * len(thresholds)
    jobs *= math.ceil(weeks_per_split / weeks_per_job)
    if figure_split == WHOLE:  # at most the search space of one more split
        jobs += len(primary) * (len(backfill) + 2) * math.ceil(whole_weeks / weeks_per_job)
    if jobs > MAX_SIMULATION_JOBS:
        raise ConfigurationError(
            f"config tuning.weeks_per_split / tuning.weeks_per_job: {jobs:,} simulation jobs per "
            f"trace (splits x policy pairs x thresholds x batches, and the whole-log weeks of "
            f"tuning.figures.whole_weeks) exceed {MAX_SIMULATION_JOBS:,}; raise weeks_per_job "
            "or study fewer weeks"
        )
    seed = int(config.get("seed", 0))
    if seed < 0:
        raise ConfigurationError(f"config seed: must be >= 0, got {seed}")
    boot = tuning.get("bootstrap") or {}
    bootstrap_replicates = int(boot.get("replicates", 100))
    bootstrap_weeks = int(weeks_per_split if boot.get("weeks") is None else boot["weeks"])
    bootstrap_per_job = int(boot.get("replicates_per_job", 50))
    for key, value, least in (("replicates", bootstrap_replicates, 0),
                              ("weeks", bootstrap_weeks, 1),
                              ("replicates_per_job", bootstrap_per_job, 1)):  # fmt: skip
        if value < least:
            raise ConfigurationError(f"config tuning.bootstrap.{key}: must be >= {least}, "
                                     f"got {value}")  # fmt: skip
    if bootstrap_replicates == 1:
        raise ConfigurationError(
            "config tuning.bootstrap.replicates: one replicate gives no standard error; use 0 "
            "(no intervals or tests) or >= 2"
        )
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
        bootstrap_replicates=bootstrap_replicates,
        bootstrap_weeks=bootstrap_weeks,
        bootstrap_per_job=bootstrap_per_job,
        figure_weeks=figure_weeks,
        weekly_backfill=weekly_backfill,
        thresholded_backfill=thresholded_backfill,
        figure_threshold=figure_threshold,
        figure_split=figure_split,
        whole_weeks=whole_weeks,
        **_whole_log(config, tuning.get("whole_log") or {}),
        threshold_backfill=config_flag(
            tuning.get("threshold_backfill", False), "tuning.threshold_backfill"
        ),
        week_alignment=week_alignment,
    )

