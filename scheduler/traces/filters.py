"""The strong filter: keep only jobs a rigid-job EASY simulation can replay faithfully.

:func:`strong_filter` applies four rules, in this order, to a copy of a trace:

1. remove a job whose allocated or requested processor count exceeds the machine;
2. when exactly one of the two counts is <= 0 (unknown), set it to the other ("repaired");
   when both are, remove the job;
3. remove a job whose run time is <= 0 s or whose submit time is < 0 s;
4. remove a job whose requested time is <= 0 s or shorter than its run time.

Rule 4 has two variants for a job that ran past its requested time (0 < requested time < run
time), chosen by ``overrun``:

- ``overrun="drop"`` (default): the job is removed and counted in
  ``removed_bad_requested_time``;
- ``overrun="clip"``: the job is kept with its run time set to its requested time (it is killed
  at its walltime, as in the published run-time prediction study) and counted in
  ``clipped_overrun``; rule 4 then removes only the jobs whose requested time is <= 0 s.

Only rule 4 differs between the modes: the counts of rules 1 to 3 and ``repaired_procs`` are the
same, ``removed_bad_requested_time`` in "drop" mode equals ``removed_bad_requested_time +
clipped_overrun`` in "clip" mode, and the "clip" output is the "drop" output plus the clipped
jobs. ``clipped_overrun`` is 0 in "drop" mode.

The survivors are sorted by (submit time, job number), stably. Each job is counted under the
first rule that removes it, so ``jobs_in - removed == jobs_out`` always holds. A trace that
loses every job is returned empty by default; ``require_jobs=True`` (the workflow's filter step,
``scheduler filter`` and ``scheduler simulate``) raises :class:`~scheduler.core.errors.NoJobsError`
with the count of each rule instead.

Job numbers must be unique: a trace in which one repeats is refused (as :func:`read_swf
<scheduler.traces.swf.read_swf>` refuses such a file, naming its lines), never filtered, because
the order of equal submit times, and so the results, would depend on which copy comes first.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from typing import Any, Literal, get_args

import polars as pl

from scheduler.core.atomic import atomic_write_bytes
from scheduler.core.errors import ConfigurationError, NoJobsError
from scheduler.core.flags import flag
from scheduler.traces.swf import Trace, check_unique_job_ids

__all__ = [
    "OVERRUN_MODES",
    "PROCESSOR_COUNTS",
    "REMOVAL_RULES",
    "FilterReport",
    "Overrun",
    "check_overrun",
    "strong_filter",
    "with_processor_count",
]

#: What rule 4 does with a job whose run time exceeds its (positive) requested time.
Overrun = Literal["drop", "clip"]
#: The allowed values of ``overrun``.
OVERRUN_MODES: tuple[str, ...] = get_args(Overrun)

#: Which processor count a job occupies in a simulation: the allocated one (SWF field 5, the
#: package's default) or the requested one (field 8; the run-time prediction study's published
#: simulator used it).
ProcessorCount = Literal["allocated", "requested"]
#: The allowed values of ``processors``.
PROCESSOR_COUNTS: tuple[str, ...] = get_args(ProcessorCount)

#: The removal counts of a :class:`FilterReport`, in rule order: (attribute, short label).
REMOVAL_RULES = (
    ("removed_procs_exceed_machine", "procs > machine"),
    ("removed_no_procs", "no proc count"),
    ("removed_bad_runtime_or_submit", "run time <= 0 or submit < 0"),
    ("removed_bad_requested_time", "requested time <= 0 or < run"),
)
#: The label of rule 4 in "clip" mode (jobs with requested time < run time are clipped).
_CLIP_RULE4_LABEL = "requested time <= 0"


@dataclass(frozen=True)
class FilterReport:
    """What :func:`strong_filter` did to a trace (counts of jobs).

    Attributes
    ----------
    jobs_in
        Jobs before filtering.
    jobs_out
        Jobs after filtering.
    removed_procs_exceed_machine
        Rule 1: allocated or requested processors > ``machine_procs``.
    repaired_procs
        Rule 2: jobs (surviving rule 1) whose one unknown processor count was set to the
        other. Repaired jobs may still be removed by rules 3 and 4.
    removed_no_procs
        Rule 2: both processor counts <= 0.
    removed_bad_runtime_or_submit
        Rule 3: run time <= 0 s or submit time < 0 s.
    removed_bad_requested_time
        Rule 4: requested time <= 0 s or (``overrun="drop"`` only) shorter than the run time.
    machine_procs
        Machine size used by rule 1, processors.
    source_path
        File the trace was read from, or ``None``.
    overrun
        What rule 4 did with a job whose run time exceeds its positive requested time:
        ``"drop"`` (removed) or ``"clip"`` (kept, run time set to the requested time).
    clipped_overrun
        Rule 4, ``overrun="clip"``: jobs kept with their run time clipped to their requested
        time (0 in "drop" mode). Not a removal: these jobs are in ``jobs_out``.
    """

    jobs_in: int
    jobs_out: int
    removed_procs_exceed_machine: int
    repaired_procs: int
    removed_no_procs: int
    removed_bad_runtime_or_submit: int
    removed_bad_requested_time: int
    machine_procs: int
    source_path: str | None
    overrun: str = "drop"
    clipped_overrun: int = 0

    @property
    def removed(self) -> int:
        """Jobs removed by all rules together (``jobs_in - jobs_out``)."""
        return (
            self.removed_procs_exceed_machine
            + self.removed_no_procs
            + self.removed_bad_runtime_or_submit
            + self.removed_bad_requested_time
        )

    def removal_rules(self) -> tuple[tuple[str, str], ...]:
        """:data:`REMOVAL_RULES` with rule 4's label of this report's ``overrun`` mode."""
        if self.overrun != "clip":
            return REMOVAL_RULES
        return (*REMOVAL_RULES[:-1], (REMOVAL_RULES[-1][0], _CLIP_RULE4_LABEL))

    def removal_text(self) -> str:
        """``"<jobs_in> jobs in; removed by rule: procs > machine 3, ..."`` (every rule).

        In "clip" mode, rule 4 reads ``requested time <= 0`` and the text ends with
        ``"; clipped (run > requested) <n>"``.
        """
        rules = self.removal_rules()
        counts = ", ".join(f"{label} {getattr(self, name)}" for name, label in rules)
        text = f"{self.jobs_in} jobs in; removed by rule: {counts}"
        if self.overrun == "clip":
            text += f"; clipped (run > requested) {self.clipped_overrun}"
        return text

    def no_job_left_message(self) -> str:
        """The message of :class:`~scheduler.core.errors.NoJobsError` for this report."""
        where = "" if self.source_path is None else f"{self.source_path}: "
        return f"{where}no job left after filtering ({self.removal_text()})"

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dictionary (field name -> value)."""
        return dataclasses.asdict(self)

    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write the report as JSON (indent 2, sorted keys), atomically.

        Parameters
        ----------
        path
            Output file; replaced atomically.
        """
        text = json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"
        atomic_write_bytes(path, text.encode("utf-8"))


def strong_filter(
    trace: Trace, *, overrun: Overrun = "drop", require_jobs: bool = False
) -> tuple[Trace, FilterReport]:
    """Apply the strong filter (see the module docstring) to a copy of ``trace``.

    Parameters
    ----------
    trace
        The trace; not modified. ``trace.machine_procs`` (processors) bounds rule 1.
    overrun
        Rule 4's treatment of a job whose run time exceeds its positive requested time:
        ``"drop"`` (default) removes it (counted in ``removed_bad_requested_time``);
        ``"clip"`` keeps it with ``run_s`` set to ``req_time_s`` (the job is killed at its
        walltime; counted in ``clipped_overrun``). Every other rule and count is the same in
        both modes.
    require_jobs
        Raise :class:`~scheduler.core.errors.NoJobsError` when no job survives, instead of
        returning an empty trace (for callers that go on to compute a result from the jobs).

    Returns
    -------
    filtered : Trace
        The surviving jobs sorted by (``submit_s``, ``job_id``), stably; same header, machine
        size and path.
    report : FilterReport
        Counts per rule; ``jobs_in - report.removed == jobs_out``.

    Raises
    ------
    ConfigurationError
        ``overrun`` is not "drop" or "clip" (the message names the argument and both values).
    TraceFormatError
        A job number appears more than once (``field="job_id"``; the message names the number
        and its rows; :func:`read_swf <scheduler.traces.swf.read_swf>` names the lines of a
        file already).
    NoJobsError
        ``require_jobs`` and no job is left: ``"<file>: no job left after filtering (<n> jobs
        in; removed by rule: procs > machine <n>, ...)"``; its ``report`` is the report.
    """
    check_overrun(overrun)
    require_jobs = flag(require_jobs, "require_jobs")
    machine_procs = trace.machine_procs
    jobs = trace.jobs
    check_unique_job_ids(jobs, trace.path)
    jobs_in = jobs.height

    jobs, removed_exceed = _remove(
        jobs, (pl.col("alloc_procs") > machine_procs) | (pl.col("req_procs") > machine_procs)
    )
    jobs, repaired, removed_no_procs = _repair_procs(jobs)
    jobs, removed_runtime = _remove(jobs, (pl.col("run_s") <= 0) | (pl.col("submit_s") < 0))
    overrunning = (pl.col("req_time_s") > 0) & (pl.col("req_time_s") < pl.col("run_s"))
    clipped = 0
    if overrun == "clip":
        jobs, removed_requested = _remove(jobs, pl.col("req_time_s") <= 0)
        clipped = int(jobs.select(overrunning.sum()).item())
        jobs = jobs.with_columns(
            pl.when(overrunning)
            .then(pl.col("req_time_s"))
            .otherwise(pl.col("run_s"))
            .alias("run_s")
        )
    else:
        jobs, removed_requested = _remove(jobs, (pl.col("req_time_s") <= 0) | overrunning)
    jobs = jobs.sort(["submit_s", "job_id"], maintain_order=True)

    report = FilterReport(
        jobs_in=jobs_in,
        jobs_out=jobs.height,
        removed_procs_exceed_machine=removed_exceed,
        repaired_procs=repaired,
        removed_no_procs=removed_no_procs,
        removed_bad_runtime_or_submit=removed_runtime,
        removed_bad_requested_time=removed_requested,
        machine_procs=machine_procs,
        source_path=trace.path,
        overrun=overrun,
        clipped_overrun=clipped,
    )
    if require_jobs and report.jobs_out == 0:
        raise NoJobsError(report.no_job_left_message(), report)
    return trace.with_jobs(jobs), report


def check_overrun(overrun: object) -> None:
    """Raise :class:`~scheduler.core.errors.ConfigurationError` unless ``overrun`` is allowed.

    The message names the argument and the allowed values: ``"strong_filter: overrun must be
    one of 'drop', 'clip', got 'cut'"``.
    """
    if not isinstance(overrun, str) or overrun not in OVERRUN_MODES:
        allowed = ", ".join(repr(mode) for mode in OVERRUN_MODES)
        raise ConfigurationError(
            f"strong_filter: overrun must be one of {allowed}, got {str(overrun)[:60]!r}"
        )


def with_processor_count(jobs: pl.DataFrame, processors: str, machine_procs: int) -> pl.DataFrame:
    """``jobs`` (a filtered table) with ``alloc_procs``, the count the engines occupy, taken from
    the count ``processors`` names: ``"allocated"`` returns ``jobs`` unchanged; ``"requested"``
    sets it to ``req_procs`` bounded to [1, ``machine_procs``] (an unknown request, <= 0, keeps
    the allocated count). ``req_procs`` itself is kept.

    Raises
    ------
    ConfigurationError
        ``processors`` is not one of :data:`PROCESSOR_COUNTS`.
    """
    if processors not in PROCESSOR_COUNTS:
        raise ConfigurationError(
            f"processors must be one of {', '.join(PROCESSOR_COUNTS)}, got {processors!r}"
        )
    if processors == "allocated":
        return jobs
    requested = pl.col("req_procs").clip(1, machine_procs).cast(jobs.schema["alloc_procs"])
    return jobs.with_columns(
        pl.when(pl.col("req_procs") > 0)
        .then(requested)
        .otherwise(pl.col("alloc_procs"))
        .alias("alloc_procs")
    )


def _remove(jobs: pl.DataFrame, condition: pl.Expr) -> tuple[pl.DataFrame, int]:
    """Drop the rows where ``condition`` holds; return the rest and how many were dropped."""
    kept = jobs.filter(~condition)
    return kept, jobs.height - kept.height


def _repair_procs(jobs: pl.DataFrame) -> tuple[pl.DataFrame, int, int]:
    """Rule 2: fill one unknown (<= 0) processor count from the other; drop jobs with none.

    Returns
    -------
    jobs, number repaired, number removed.
    """
    alloc_known = pl.col("alloc_procs") > 0
    req_known = pl.col("req_procs") > 0
    repaired = jobs.select((alloc_known ^ req_known).sum()).item()
    jobs, removed = _remove(jobs, ~alloc_known & ~req_known)
    # Both expressions read the columns as they were before this call (with_columns semantics).
    jobs = jobs.with_columns(
        pl.when(alloc_known).then(pl.col("alloc_procs")).otherwise(pl.col("req_procs")),
        pl.when(req_known).then(pl.col("req_procs")).otherwise(pl.col("alloc_procs")),
    )
    return jobs, int(repaired), removed
