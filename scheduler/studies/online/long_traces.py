"""Long traces of the online study: resampled weeks of the whole filtered log laid end to end
(the weekly per-user resampling of :mod:`scheduler.traces.resample`; 104 weeks = two years by
default). Times in seconds.

The replica's clock: week k is ``[k·W, (k+1)·W)``. With the log's calendar (the online study's
default ``online.week_alignment: calendar``) every source week runs Monday 00:00 to Monday 00:00
in the log's time zone and keeps each job's local weekday and time of day, so the replica's time
0 is a Monday 00:00 and its clock is a local wall clock without daylight-saving time: day d is
``[d·86,400, (d+1)·86,400)``, midnight to midnight, and week k Monday to Monday (the online
study's calendar periods start at 0). Without a calendar (``first_submit``) time 0 is the log's
first submission shifted by whole weeks: an arbitrary time of day and weekday."""

from __future__ import annotations

import polars as pl

from scheduler.core.constants import WEEK_S
from scheduler.core.errors import ConfigurationError
from scheduler.traces.calendar import TraceCalendar
from scheduler.traces.resample import ResamplingMethod, resample_weeks

__all__ = ["LONG_TRACE_SPLIT", "long_trace"]


#: The split name under which long-trace weeks are drawn (seed derivation; whole log).
LONG_TRACE_SPLIT = "long"


def long_trace(
    jobs: pl.DataFrame,
    replica: int,
    *,
    weeks: int = 104,
    seed: int,
    trace: str,
    method: ResamplingMethod = "uniform",
    calendar: TraceCalendar | None = None,
) -> pl.DataFrame:
    """Resampled trace ``replica``: ``weeks`` resampled weeks of ``jobs`` laid end to end.

    Week k of the replica is resampled week ``replica·weeks + k`` of the whole log (so replicas
    never share a week draw) shifted by k weeks. ``calendar`` (the log's, see
    :func:`scheduler.traces.calendar.table_calendar`): source weeks cut at local Monday 00:00, so
    the replica starts on a Monday 00:00; ``None``: cut from the log's first submission (the
    ``first_submit`` alignment). Columns: those of :data:`scheduler.traces.resample.WEEK_COLUMNS`
    with ``week_index`` = k, ``submit_s`` in seconds from the replica's start and ``job_id``
    renumbered 1..n in (submit, week, job) order.
    """
    if replica < 0 or weeks < 1:
        raise ConfigurationError(f"replica must be >= 0 and weeks >= 1, got {replica}, {weeks}")
    first = replica * weeks
    table = resample_weeks(
        jobs, range(first, first + weeks), seed=seed, trace=trace, split=LONG_TRACE_SPLIT,
        method=method, calendar=calendar,
    )  # fmt: skip
    shifted = table.with_columns(
        (pl.col("week_index") - first).alias("week_index"),
    ).with_columns(
        (pl.col("submit_s") + pl.col("week_index").cast(pl.Float64) * WEEK_S).alias("submit_s")
    )
    shifted = shifted.sort("submit_s", "week_index", "job_id")
    return shifted.with_columns(pl.int_range(1, shifted.height + 1, dtype=pl.Int64).alias("job_id"))
