"""Long traces of the online study: resampled weeks of the whole filtered log laid end to end
(the weekly per-user resampling of :mod:`scheduler.traces.resample`; 104 weeks = two years by
default). Times in seconds."""

from __future__ import annotations

import polars as pl

from scheduler.core.constants import WEEK_S
from scheduler.core.errors import ConfigurationError
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
) -> pl.DataFrame:
    """Resampled trace ``replica``: ``weeks`` resampled weeks of ``jobs`` laid end to end.

    Week k of the replica is resampled week ``replica·weeks + k`` of the whole log (so replicas
    never share a week draw) shifted by k weeks. Columns: those of
    :data:`scheduler.traces.resample.WEEK_COLUMNS` with ``week_index`` = k, ``submit_s`` in seconds
    from the replica's start and ``job_id`` renumbered 1..n in (submit, week, job) order.
    """
    if replica < 0 or weeks < 1:
        raise ConfigurationError(f"replica must be >= 0 and weeks >= 1, got {replica}, {weeks}")
    first = replica * weeks
    table = resample_weeks(
        jobs, range(first, first + weeks), seed=seed, trace=trace, split=LONG_TRACE_SPLIT,
        method=method,
    )  # fmt: skip
    shifted = table.with_columns(
        (pl.col("week_index") - first).alias("week_index"),
    ).with_columns(
        (pl.col("submit_s") + pl.col("week_index").cast(pl.Float64) * WEEK_S).alias("submit_s")
    )
    shifted = shifted.sort("submit_s", "week_index", "job_id")
    return shifted.with_columns(pl.int_range(1, shifted.height + 1, dtype=pl.Int64).alias("job_id"))
