"""The workflow steps that prepare traces: download, strong filter, train/test split, weekly
resampling (one function per Snakemake rule of ``workflow/rules/traces.smk``)."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.core.errors import ConfigurationError, TraceFormatError
from scheduler.core.provenance import write_json, write_parquet
from scheduler.core.steps import (
    StepContext,
    procs_metadata,
    read_table,
    table_machine_procs,
    workflow_step,
)
from scheduler.traces.calendar import (
    WEEK_ALIGNMENTS,
    WeekAlignment,
    calendar_metadata,
    table_calendar,
    table_calendar_metadata,
)
from scheduler.traces.download import TraceSource, fetch_trace
from scheduler.traces.filters import Overrun, check_overrun, strong_filter
from scheduler.traces.resample import resample_weeks, split_at_midpoint
from scheduler.traces.swf import MISSING_MACHINE_SIZE, read_swf

__all__ = [
    "download_trace",
    "filter_trace",
    "resample_batch",
    "split_trace",
]


@workflow_step
def download_trace(
    *,
    trace: str,
    url: str,
    sha256: str | None,
    trace_path: str,
    report_path: str,
    mirror_dirs: Sequence[str],
    offline: bool,
    retries: int,
    timeout_s: float,
    max_bytes: int,
    ctx: StepContext,
) -> None:
    """Fetch a trace (mirror first, then the archive) and record where it came from; a body
    over ``max_bytes`` bytes fails and leaves nothing."""
    report = fetch_trace(
        TraceSource(trace, url, sha256), trace_path,
        mirror_dirs=mirror_dirs, offline=offline, retries=retries, timeout_s=timeout_s,
        max_bytes=max_bytes,
        log=ctx.log,
    )  # fmt: skip
    write_json(report.to_dict(), report_path, ctx.record())
    ctx.log(f"{trace}: {report.bytes:,} bytes from {report.origin}, sha256 {report.sha256}")


@workflow_step
def filter_trace(
    swf_path: str,
    filtered_path: str,
    report_path: str,
    *,
    trace: str,
    machine_procs: int | None,
    overrun: Overrun,
    ctx: StepContext,
) -> None:
    """Read an SWF log, apply the strong filter, write the jobs (parquet) and the report.

    ``overrun`` is the strong filter's treatment of jobs that ran past their requested time
    (``"drop"``, the default, or ``"clip"``; see :func:`~scheduler.traces.filters.strong_filter`);
    it is recorded in the provenance of both outputs and in the report. A value other than
    these two stops the step (:class:`~scheduler.core.errors.ConfigurationError`) before
    anything is read or written. The header's ``UnixStartTime`` and ``TimeZoneString`` go
    into the jobs' metadata (:func:`~scheduler.traces.calendar.calendar_metadata`), checked
    when the log is read: a time origin outside the years 1-9999 or a zone that is not an IANA
    zone stops the step, naming the file, the header line and the key.

    Bad input stops the step with a :class:`~scheduler.core.steps.StepError` and writes
    nothing: a malformed line, a job number that appears twice (the message names the file,
    the number and the lines of its occurrences, as ``scheduler simulate`` and ``scheduler
    filter`` do), no machine size (the message names the config key
    ``traces.<trace>.machine_procs``), or no job left after filtering.
    """
    check_overrun(overrun)
    try:
        raw = read_swf(swf_path, machine_procs=machine_procs)
    except TraceFormatError as error:
        if error.field != "MaxProcs" or error.line is not None:
            raise
        raise TraceFormatError(
            error.path,
            f"{MISSING_MACHINE_SIZE}; set traces.{trace}.machine_procs in the config",
            field="MaxProcs",
        ) from None
    filtered, report = strong_filter(raw, overrun=overrun, require_jobs=True)
    record = ctx.record()
    write_parquet(
        filtered.jobs, filtered_path, record,
        procs_metadata(filtered.machine_procs) | calendar_metadata(raw.header, swf_path),
    )  # fmt: skip
    write_json(report.to_dict(), report_path, record)
    clipped = f" ({report.clipped_overrun:,} clipped)" if overrun == "clip" else ""
    ctx.log(f"{trace}: {report.jobs_in:,} jobs read, {report.jobs_out:,} kept{clipped} "
            f"on {filtered.machine_procs:,} processors")  # fmt: skip


@workflow_step
def split_trace(
    filtered_path: str, train_path: str, test_path: str, *, trace: str, ctx: StepContext
) -> None:
    """Cut the filtered jobs at their temporal midpoint into train and test parts (which keep
    the filtered table's machine size and calendar metadata)."""
    jobs = read_table(filtered_path)
    metadata = procs_metadata(table_machine_procs(filtered_path))
    metadata |= table_calendar_metadata(filtered_path)
    parts = split_at_midpoint(jobs, name=trace)
    for split, path in (("train", train_path), ("test", test_path)):
        write_parquet(parts[split], path, ctx.record(split=split), metadata)
        ctx.log(f"{trace} {split}: {parts[split].height:,} jobs")


@workflow_step
def resample_batch(
    split_path: str,
    out_path: str,
    *,
    trace: str,
    split: str,
    first_week: int,
    last_week: int,
    seed: int,
    method: str,
    alignment: WeekAlignment,
    ctx: StepContext,
) -> None:
    """Build resampled weeks ``first_week..last_week`` (inclusive) of one split; ``alignment``
    ``"calendar"`` cuts the source weeks at local Monday 00:00 (the calendar in the split's
    metadata), ``"first_submit"`` every week from the split's first submission."""
    if alignment not in WEEK_ALIGNMENTS:
        raise ConfigurationError(
            f"alignment must be one of {list(WEEK_ALIGNMENTS)}, got {alignment!r}"
        )
    calendar = table_calendar(split_path) if alignment == "calendar" else None
    jobs = read_table(split_path)
    weeks = resample_weeks(
        jobs, range(first_week, last_week + 1), seed=seed, trace=trace, split=split,
        method=method, calendar=calendar,
    )  # fmt: skip
    write_parquet(
        weeks, out_path, ctx.record(),
        procs_metadata(table_machine_procs(split_path)),
    )  # fmt: skip
    ctx.log(f"{trace} {split}: weeks {first_week}-{last_week}, {weeks.height:,} jobs")
