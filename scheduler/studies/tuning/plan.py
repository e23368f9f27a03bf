"""The queue-tuning study's plan: the ``tuning`` config section (validated against
``config.schema.yaml``, defaults filled in) checked where the schema cannot (policies,
thresholds, the baseline and figure settings inside the search space, the whole-log table), and
the simulation cases, week batches, files, targets and step settings it implies. Errors name the
config key.

Week sources ("splits"): ``train`` and ``test`` (the halves of the filtered log, the whole
search space on each: the train/test protocol) and, when the descriptive figures are drawn from
them (``tuning.figures.weeks_from: whole``), ``whole``: weeks resampled over the whole filtered
log, simulated only for the cases those figures show (:meth:`TuningPlan.cases_of`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from scheduler.core.errors import ConfigurationError
from scheduler.policies import MULTIFACTOR
from scheduler.policies.learned import learned_policy_files
from scheduler.studies.common.config import (
    CONSERVATIVE,
    MAX_SIMULATION_JOBS,
    Threshold,
    TraceEntry,
    catalogue_entries,
    check_plan_size,
    policy_list,
    require_in,
    threshold_list,
)
from scheduler.studies.common.paths import Reported, StudyFiles, filtered_file, output_paths
from scheduler.studies.common.slurm import study_slurm
from scheduler.traces.resample import SPLITS

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
    """The queue-tuning study, checked (see the configuration reference). Thresholds are
    sorted by seconds ("none" last).

    Files: ``results/<trace>/split/{train,test}.parquet`` and ``results/<trace>/weeks/<source>/
    batch<b>.parquet`` (the halves and the resampled weeks, in the trace's folder),
    ``results/tuning/<trace>/sims/<source>/<primary>/<backfill>/batch<b>.parquet`` (a pair under
    every threshold on one batch), the weekly and summary tables, the bootstrap batches, the
    protocol, the whole-log runs and table, the figures.
    """

    #: The study's name: its config section and folders.
    name: ClassVar[str] = "tuning"

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
    figure_split: str
    #: Weeks resampled over the whole filtered log (the "whole" source), per trace.
    whole_weeks: int
    #: The whole-log table: traces, (primary, backfill) pairs and thresholds simulated on the
    #: whole filtered log (no resampling); the baseline is always added (:meth:`whole_log_cases`).
    whole_log_traces: tuple[TraceEntry, ...]
    whole_log_pairs: tuple[tuple[str, str], ...]
    whole_log_thresholds: tuple[Threshold, ...]
    #: Backfill candidates in the thresholded order of the backfilling policy (overdue jobs
    #: first), as Algorithm 2 of the online study; False: in the backfilling policy's order.
    threshold_backfill: bool
    #: How resampled weeks are cut from each split (``first_submit`` or ``calendar``).
    week_alignment: str
    #: The settings of ``tuning.slurm_conf`` (:func:`scheduler.studies.common.slurm.
    #: study_slurm`): the limits of every CONSERVATIVE pair and the multifactor priority; None
    #: without the key.
    slurm: dict[str, Any] | None

    @property
    def files(self) -> StudyFiles:
        return StudyFiles(self.name)

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
        """Every (primary, backfill, threshold) of the search space (:func:`pair_runs`)."""
        return tuple(
            SimulationCase(p, b, t.label)
            for t in self.thresholds
            for p in self.primary_policies
            for b in self.backfill_policies
            if pair_runs(p, b)
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
            if pair_runs(p, b)
        ]
        for label in (NO_THRESHOLD, self.figure_threshold):
            wanted += [SimulationCase(p, self.thresholded_backfill, label)
                       for p in self.primary_policies
                       if pair_runs(p, self.thresholded_backfill)]  # fmt: skip
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

    # -- files --------------------------------------------------------------------------------
    @property
    def wildcards(self) -> dict[str, str]:
        """Wildcard constraints of the study's file names (its rules file)."""
        from scheduler.studies.tuning.steps import STUDY_FIGURES, TRACE_FIGURES

        figures = sorted(TRACE_FIGURES + STUDY_FIGURES, key=len, reverse=True)
        return {
            "split": "|".join((*SPLITS, WHOLE)),
            "batch": r"\d+",
            "primary": r"[A-Za-z0-9_]+",
            "backfill": r"[A-Za-z0-9_]+",
            "threshold": r"none|[0-9.]+[smhdw]",
            "figure": "|".join(figures),
        }

    def split_file(self, trace: str = "{trace}", split: str = "{split}") -> str:
        """A half of the filtered log (``train`` or ``test``), in the trace's folder."""
        return f"results/{trace}/split/{split}.parquet"

    def weeks_file(self, trace: str = "{trace}", split: str = "{split}",
                   batch: int | str = "{batch}") -> str:  # fmt: skip
        """One batch of resampled weeks of a week source, in the trace's folder."""
        return f"results/{trace}/weeks/{split}/batch{batch}.parquet"

    def week_source(self, wildcards: Any) -> str:
        """The jobs a week source resamples: a half of the filtered log (train, test), or the
        whole filtered log (whole: the descriptive figures' weeks)."""
        if wildcards.split == WHOLE:
            return filtered_file(wildcards.trace)
        return self.split_file(wildcards.trace, wildcards.split)

    def simulation(self, trace: str = "{trace}", split: str = "{split}",
                   primary: str = "{primary}", backfill: str = "{backfill}",
                   batch: int | str = "{batch}") -> str:  # fmt: skip
        """One simulation job's name below results/ and logs/: one policy pair
        under every threshold of the week source, on one batch of weeks."""
        return f"{trace}/sims/{split}/{primary}/{backfill}/batch{batch}"

    def week_simulation_files(self, trace: str, splits: tuple[str, ...]) -> list[str]:
        """Every weekly simulation file of one trace on the given week sources: the pairs of
        each source's cases x batches."""
        return [
            self.files.result(f"{self.simulation(trace, split, p, b, batch.index)}.parquet")
            for split in splits
            for p, b in self.pairs_of(split)
            for batch in self.batches(split)
        ]

    def simulation_files(self, wildcards: Any) -> list[str]:
        """Every weekly simulation file of the train/test protocol of one trace."""
        return self.week_simulation_files(wildcards.trace, self.splits)

    def whole_simulation_files(self, wildcards: Any) -> list[str]:
        """Every weekly simulation file on the whole-log weeks of one trace."""
        return self.week_simulation_files(wildcards.trace, (WHOLE,))

    def weekly_file(self, trace: str = "{trace}", source: str = "") -> str:
        """A trace's weekly table: the protocol's weeks, or (``source`` "whole") the whole-log
        weeks of the descriptive figures."""
        folder = f"{trace}/{source}/" if source else f"{trace}/"
        return self.files.result(f"{folder}weekly.parquet")

    def weekly_files(self, wildcards: object = None) -> list[str]:
        return [self.weekly_file(trace) for trace in self.trace_names]

    def summary_outputs(self, source: str = "") -> dict[str, str | Reported]:
        """The outputs of ``summarize_trace`` on the protocol's weeks (or ``source``
        "whole")."""
        folder = "{trace}/whole/" if source else "{trace}/"
        name = "{trace}_whole_summary" if source else "{trace}_summary"
        caption = "whole_summary_table.rst" if source else "summary_table.rst"
        label = "whole-log weeks (CSV)" if source else "policy pairs (CSV)"
        return {
            "parquet_path": self.files.result(f"{folder}summary.parquet"),
            "csv_path": Reported(
                self.files.table(f"{name}.csv"), caption,
                {"trace": "{trace}", "table": label}, "{trace}",
            ),
            "markdown_path": self.files.table(f"{name}.md"),
        }  # fmt: skip

    def summary_files(self, wildcards: object = None) -> list[str]:
        pattern = self.summary_outputs()["parquet_path"]
        return [str(pattern).format(trace=trace) for trace in self.trace_names]

    def bootstrap_file(self, trace: str = "{trace}", batch: int | str = "{batch}") -> str:
        return self.files.result(f"{trace}/bootstrap/batch{batch}.parquet")

    def bootstrap_files(self, wildcards: object = None) -> list[str]:
        """Every source-week bootstrap batch of every trace (none when replicates is 0)."""
        return [
            self.bootstrap_file(trace, batch.index)
            for trace in self.trace_names
            for batch in self.bootstrap_batches()
        ]

    def protocol_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``tuning_protocol``."""
        return {
            "parquet_path": self.files.table("protocol.parquet"),
            "csv_path": Reported(
                self.files.table("protocol.csv"), "protocol_table.rst",
                {"table": "train/test protocol (CSV)"}, "All traces",
            ),
            "markdown_path": self.files.table("protocol.md"),
        }  # fmt: skip

    def figure_tables(self, wildcards: Any) -> dict[str, str]:
        """The weekly and summary tables of the week source of the descriptive figures."""
        source = WHOLE if self.figure_split == WHOLE else ""
        summary = str(self.summary_outputs(source)["parquet_path"])
        return {
            "weekly_path": self.weekly_file(wildcards.trace, source),
            "summary_path": summary.format(trace=wildcards.trace),
        }

    def whole_log_run(
        self,
        trace: str = "{trace}",
        primary: str = "{primary}",
        backfill: str = "{backfill}",
        threshold: str = "{threshold}",
    ) -> str:
        """One whole-log run's name below results/ and logs/."""
        return f"{trace}/whole_log/{primary}/{backfill}/{threshold}"

    def whole_log_files(self, wildcards: object = None) -> list[str]:
        """Every run of the whole-log table: traces x (pairs x thresholds, and the baseline)."""
        return [
            self.files.result(
                f"{self.whole_log_run(trace, c.primary, c.backfill, c.threshold)}.parquet"
            )
            for trace in self.whole_log_trace_names
            for c in self.whole_log_cases()
        ]

    def whole_log_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``tabulate_whole_log``."""
        return {
            "parquet_path": self.files.table("whole_log.parquet"),
            "csv_path": Reported(
                self.files.table("whole_log.csv"), "whole_log_table.rst",
                {"table": "whole logs (CSV)"}, "All traces",
            ),
            "markdown_path": self.files.table("whole_log.md"),
        }  # fmt: skip

    def policy_files(self, wildcards: Any) -> list[str]:
        """The files a pair's policies read (a learned function's fit file)."""
        return learned_policy_files([wildcards.primary, wildcards.backfill])

    @property
    def week_trace(self) -> str:
        """The trace of the representative-week figure: the first of ``tuning.traces``."""
        return self.traces[0].name

    def week_inputs(self) -> dict[str, Any]:
        """The inputs of ``draw_week``: the week trace's filtered log, the protocol (which
        names the tuned configuration) and the fit files of learned policies it may use."""
        return {
            "filtered_path": filtered_file(self.week_trace),
            "protocol_path": self.protocol_outputs()["parquet_path"],
            "_policy_paths": learned_policy_files([*self.primary_policies,
                                                   *self.backfill_policies]),
        }  # fmt: skip

    def week_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``draw_week``: the representative week (PNG in the report, PDF)."""
        return self.files.week_outputs(subcategory=self.week_trace)

    def targets(self) -> list[str]:
        from scheduler.studies.tuning.steps import STUDY_FIGURES, TRACE_FIGURES

        def each_trace(outputs: dict[str, str | Reported]) -> list[str]:
            return [
                path.format(trace=trace)
                for path in output_paths(outputs)
                for trace in self.trace_names
                if "/tables/" in path
            ]

        tables = each_trace(self.summary_outputs())
        protocol = [p for p in output_paths(self.protocol_outputs()) if p.endswith((".csv", ".md"))]
        trace_figures = [
            self.files.figure(f"{trace}/{figure}", ext)
            for trace in self.trace_names
            for figure in TRACE_FIGURES
            for ext in ("png", "pdf")
        ]
        study_figures = [
            self.files.figure(figure, ext) for figure in STUDY_FIGURES for ext in ("png", "pdf")
        ]
        if self.figure_split == WHOLE:  # the values behind the descriptive figures
            tables += each_trace(self.summary_outputs(WHOLE))
        if self.whole_log_traces:
            tables += [
                p for p in output_paths(self.whole_log_outputs()) if p.endswith((".csv", ".md"))
            ]
        week = output_paths(self.week_outputs())
        return tables + protocol + trace_figures + study_figures + week

    # -- step settings (keyword arguments of the steps) -------------------------------------
    def baseline_settings(self) -> dict[str, str]:
        """The baseline, as the steps take it."""
        base = self.baseline
        return {"primary": base.primary, "backfill": base.backfill, "threshold": base.threshold}

    def resample_settings(self, wildcards: Any) -> dict[str, Any]:
        """``traces.steps.resample_batch``: one batch of resampled weeks of a week source."""
        batch = self.batch(int(wildcards.batch), wildcards.split)
        return {
            "trace": wildcards.trace,
            "split": wildcards.split,
            "first_week": batch.first,
            "last_week": batch.last,
            "seed": self.seed,
            "method": self.resampling,
            "alignment": self.week_alignment,
        }

    def pair_thresholds(self, split: str, primary: str, backfill: str) -> list[tuple[str, float]]:
        """(label, seconds) of every threshold a pair is simulated under on a week source (one
        job runs them all: they share the run without threshold up to where they differ)."""
        return [
            (case.threshold, self.threshold_seconds(case.threshold))
            for case in self.cases_of(split)
            if (case.primary, case.backfill) == (primary, backfill)
        ]

    def simulate_settings(self, wildcards: Any) -> dict[str, Any]:
        """``simulate_batch``: one pair under every threshold on one batch of weeks."""
        return {
            "trace": wildcards.trace,
            "split": wildcards.split,
            "primary": wildcards.primary,
            "backfill": wildcards.backfill,
            "thresholds": self.pair_thresholds(
                wildcards.split, wildcards.primary, wildcards.backfill
            ),
            "threshold_backfill": self.threshold_backfill,
            "slurm": self.slurm_of(wildcards.backfill),
        }

    def slurm_of(self, backfill: str) -> dict[str, Any] | None:
        """The Slurm settings a pair with backfilling ``backfill`` runs under: the study's for
        CONSERVATIVE, None for EASY (a changed slurm.conf reruns only conservative runs)."""
        return self.slurm if backfill == CONSERVATIVE else None

    def weekly_cases(self, splits: tuple[str, ...]) -> list[list[str]]:
        """(split, primary, backfill, threshold) of every case of the week sources: a param of
        the collecting rules, so that a new threshold (which changes no file name: a pair's job
        holds all its thresholds) makes them, and through them the simulations, out of date
        even after a failed run deleted the simulations' outputs."""
        return [
            [split, case.primary, case.backfill, case.threshold]
            for split in splits
            for case in self.cases_of(split)
        ]

    def trace_settings(self, wildcards: Any) -> dict[str, Any]:
        """``collect_weekly`` and ``summarize_trace``: a trace and the baseline."""
        return {"trace": wildcards.trace, "baseline": self.baseline_settings()}

    def bootstrap_settings(self, wildcards: Any) -> dict[str, Any]:
        """``bootstrap_batch``: one batch of source-week bootstrap replicates."""
        batch = self.bootstrap_batch(int(wildcards.batch))
        return {
            "trace": wildcards.trace,
            "baseline": self.baseline_settings(),
            "first_replicate": batch.first,
            "last_replicate": batch.last,
            "weeks": self.bootstrap_weeks,
            "seed": self.seed,
            "method": self.resampling,
            "threshold_backfill": self.threshold_backfill,
            "alignment": self.week_alignment,
            "slurm": self.slurm,
        }

    def protocol_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``tuning_protocol``."""
        return {"baseline": self.baseline_settings(), "confidence": self.confidence}

    def trace_figure_settings(self, wildcards: Any) -> dict[str, Any]:
        """``trace_figure``: what the per-trace figures show (the ``tuning.figures`` keys)."""
        return {
            "figure": wildcards.figure,
            "trace": wildcards.trace,
            "weeks": self.figure_weeks,
            "weekly_backfill": self.weekly_backfill,
            "thresholded_backfill": self.thresholded_backfill,
            "threshold": self.figure_threshold,
            "baseline": self.baseline_settings(),
            "split": self.figure_split,
        }

    def study_figure_settings(self, wildcards: Any) -> dict[str, Any]:
        """``study_figure``."""
        return {
            "figure": wildcards.figure,
            "threshold": self.figure_threshold,
            "baseline": self.baseline_settings(),
        }

    def whole_log_settings(self, wildcards: Any) -> dict[str, Any]:
        """``simulate_whole_log``: one pair at one threshold on a whole filtered log."""
        return {
            "trace": wildcards.trace,
            "primary": wildcards.primary,
            "backfill": wildcards.backfill,
            "threshold": wildcards.threshold,
            "threshold_s": self.threshold_seconds(wildcards.threshold),
            "threshold_backfill": self.threshold_backfill,
            "slurm": self.slurm_of(wildcards.backfill),
        }

    def week_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``draw_week``: the baseline against the tuned configuration on the week trace."""
        return {
            "trace": self.week_trace,
            "baseline": self.baseline_settings(),
            "baseline_threshold_s": self.threshold_seconds(self.baseline.threshold),
            "threshold_backfill": self.threshold_backfill,
            "slurm": self.slurm,
        }

    def baseline_only_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``tabulate_whole_log``."""
        return {"baseline": self.baseline_settings()}

    def pairs_of(self, split: str) -> list[tuple[str, str]]:
        """The policy pairs simulated on a week source, in the order of their first case."""
        return list(dict.fromkeys((case.primary, case.backfill) for case in self.cases_of(split)))


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
    primary = policy_list([names[0].strip()], key, multifactor=True)[0]
    backfill = policy_list([names[1].strip()], key, conservative=True)[0]
    _check_pair(primary, backfill, key)
    return primary, backfill


def pair_runs(primary: str, backfill: str) -> bool:
    """Whether the pair is simulated: Slurm's multifactor priority runs only with conservative
    backfilling (it is the order of Slurm's backfill, not an EASY queue order)."""
    return primary != MULTIFACTOR or backfill == CONSERVATIVE


def _check_pair(primary: str, backfill: str, key: str) -> None:
    if not pair_runs(primary, backfill):
        raise ConfigurationError(
            f"config {key}: {MULTIFACTOR} runs with {CONSERVATIVE} backfilling only (Slurm's "
            f"backfill), not with {backfill}"
        )


def _whole_log(config: Mapping[str, Any], section: Mapping[str, Any]) -> dict[str, Any]:
    """The checked ``tuning.whole_log`` section, as TuningPlan fields."""
    key = "tuning.whole_log"
    names = list(section["traces"])
    pairs = tuple(_pair(item, f"{key}.pairs") for item in section["pairs"])
    if len(set(pairs)) != len(pairs):
        listed = ", ".join(f"{p}-{b}" for p, b in pairs)
        raise ConfigurationError(f"config {key}.pairs: a pair is listed twice: {listed}")
    thresholds = threshold_list(section["thresholds"], f"{key}.thresholds")
    if names and not pairs:
        raise ConfigurationError(
            f"config {key}.pairs: name at least one pair for the traces {names}, or leave "
            f"{key}.traces empty"
        )
    return {
        "whole_log_traces": catalogue_entries(config, names, f"{key}.traces"),
        "whole_log_pairs": pairs,
        "whole_log_thresholds": thresholds,
    }


def tuning_plan(config: Mapping[str, Any]) -> TuningPlan:
    """The plan of the ``tuning`` section of ``config`` (validated here; defaults filled)."""
    from scheduler.studies.common.study import study_section

    whole, tuning = study_section(config, TuningPlan.name)
    primary = policy_list(tuning["primary_policies"], "tuning.primary_policies", multifactor=True)
    backfill = policy_list(
        tuning["backfill_policies"], "tuning.backfill_policies", conservative=True
    )
    slurm = study_slurm(tuning["slurm_conf"], "tuning.slurm_conf")
    if MULTIFACTOR in primary:
        if slurm is None or slurm["priority"] is None:
            why = ("set tuning.slurm_conf to a slurm.conf with PriorityType=priority/multifactor"
                   if slurm is None else
                   "the slurm.conf of tuning.slurm_conf has PriorityType=priority/basic")
            raise ConfigurationError(
                f"config tuning.primary_policies: {MULTIFACTOR} needs Slurm's priority "
                f"settings: {why}"
            )  # fmt: skip
        require_in(CONSERVATIVE in backfill, "tuning.backfill_policies", CONSERVATIVE,
                   f"the backfilling of {MULTIFACTOR} (list it)")  # fmt: skip
    thresholds = threshold_list(tuning["thresholds"], "tuning.thresholds")
    labels = {t.label for t in thresholds}

    base = tuning["baseline"]
    baseline = SimulationCase(
        policy_list([base["primary"]], "tuning.baseline.primary", multifactor=True)[0],
        policy_list([base["backfill"]], "tuning.baseline.backfill", conservative=True)[0],
        str(base["threshold"]),
    )
    _check_pair(baseline.primary, baseline.backfill, "tuning.baseline")
    require_in(baseline.primary in primary, "tuning.baseline.primary", baseline.primary,
               "tuning.primary_policies")  # fmt: skip
    require_in(baseline.backfill in backfill, "tuning.baseline.backfill", baseline.backfill,
               "tuning.backfill_policies")  # fmt: skip
    require_in(baseline.threshold in labels, "tuning.baseline.threshold", baseline.threshold,
               "tuning.thresholds")  # fmt: skip

    figures = tuning["figures"]
    weekly_backfill = policy_list(
        [figures["weekly_backfill"]], "tuning.figures.weekly_backfill", conservative=True
    )[0]
    thresholded_backfill = policy_list(
        [figures["thresholded_backfill"]], "tuning.figures.thresholded_backfill",
        conservative=True,
    )[0]
    figure_threshold = str(figures["threshold"])
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

    weeks_per_split, weeks_per_job = tuning["weeks_per_split"], tuning["weeks_per_job"]
    figure_split, whole_weeks = figures["weeks_from"], figures["whole_weeks"]
    jobs = len(SPLITS) * len(primary) * len(backfill) * len(thresholds)
    jobs *= math.ceil(weeks_per_split / weeks_per_job)
    if figure_split == WHOLE:  # at most the search space of one more split
        jobs += len(primary) * (len(backfill) + 2) * math.ceil(whole_weeks / weeks_per_job)
    check_plan_size(
        jobs, "simulation jobs (splits x policy pairs x thresholds x batches, and the whole-log "
        "weeks of tuning.figures.whole_weeks)", "tuning.weeks_per_split / tuning.weeks_per_job "
        "/ tuning.thresholds / tuning.primary_policies / tuning.backfill_policies",
        MAX_SIMULATION_JOBS,
    )  # fmt: skip
    boot = tuning["bootstrap"]
    if boot["replicates"] == 1:
        raise ConfigurationError(
            "config tuning.bootstrap.replicates: one replicate gives no standard error; use 0 "
            "(no intervals or tests) or >= 2"
        )
    check_plan_size(math.ceil(boot["replicates"] / boot["replicates_per_job"]), "bootstrap jobs",
                    "tuning.bootstrap.replicates / tuning.bootstrap.replicates_per_job",
                    MAX_SIMULATION_JOBS)  # fmt: skip
    return TuningPlan(
        seed=whole["seed"],
        traces=catalogue_entries(whole, tuning["traces"]),
        resampling=tuning["resampling"],
        weeks_per_split=weeks_per_split,
        weeks_per_job=weeks_per_job,
        primary_policies=primary,
        backfill_policies=backfill,
        thresholds=thresholds,
        baseline=baseline,
        confidence=tuning["confidence"],
        bootstrap_replicates=boot["replicates"],
        bootstrap_weeks=weeks_per_split if boot["weeks"] is None else boot["weeks"],
        bootstrap_per_job=boot["replicates_per_job"],
        figure_weeks=figures["weeks"],
        weekly_backfill=weekly_backfill,
        thresholded_backfill=thresholded_backfill,
        figure_threshold=figure_threshold,
        figure_split=figure_split,
        whole_weeks=whole_weeks,
        **_whole_log(whole, tuning["whole_log"]),
        threshold_backfill=tuning["threshold_backfill"],
        week_alignment=tuning["week_alignment"],
        slurm=slurm,
    )
