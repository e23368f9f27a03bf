"""Summary statistics of a workload trace (machine size, span, offered load)."""

from __future__ import annotations

from typing import Any

import polars as pl

from scheduler.core.constants import WEEK_S
from scheduler.traces.swf import Trace, used_procs

__all__ = ["trace_summary"]


def trace_summary(trace: Trace) -> dict[str, Any]:
    """Summarise a trace in plain (JSON-ready) Python values.

    Parameters
    ----------
    trace
        The trace.

    Returns
    -------
    dict
        ``machine_procs``
            Machine size, processors.
        ``jobs``
            Number of jobs.
        ``users``
            Number of distinct ``user_id`` values.
        ``first_submit_s``, ``last_submit_s``
            Earliest and latest submit time, seconds (``None`` without jobs).
        ``span_s``
            ``last_submit_s - first_submit_s``, seconds; 1 when that is 0 (``None`` without
            jobs).
        ``weeks``
            ``span_s`` in weeks of 7 days (0.0 without jobs).
        ``offered_load``
            ``sum(q_j * p_j) / (machine_procs * span_s)``, dimensionless, with ``q_j`` the
            allocated processors (the requested ones when the allocation is unknown, <= 0) and
            ``p_j`` the run time, seconds; only jobs with ``q_j > 0`` and ``p_j > 0`` count
            (0.0 without jobs).
    """
    jobs = trace.jobs
    summary: dict[str, Any] = {
        "machine_procs": trace.machine_procs,
        "jobs": jobs.height,
        "users": jobs.get_column("user_id").n_unique(),
        "first_submit_s": None,
        "last_submit_s": None,
        "span_s": None,
        "weeks": 0.0,
        "offered_load": 0.0,
    }
    if jobs.height == 0:
        return summary
    submit_s = jobs.get_column("submit_s")
    first_s, last_s = int(submit_s.min()), int(submit_s.max())  # type: ignore[arg-type]
    span_s = (last_s - first_s) or 1
    summary.update(
        first_submit_s=first_s,
        last_submit_s=last_s,
        span_s=int(span_s),
        weeks=span_s / WEEK_S,
        offered_load=_processor_seconds(jobs) / (trace.machine_procs * span_s),
    )
    return summary


def _processor_seconds(jobs: pl.DataFrame) -> float:
    """Sum of processors x run time (processor-seconds) of the jobs with both known."""
    procs = used_procs()
    run_s = pl.col("run_s")
    # Float64: the sum over a large log can exceed what Int64 products comfortably hold.
    work = (procs.cast(pl.Float64) * run_s.cast(pl.Float64)).filter((procs > 0) & (run_s > 0))
    return float(jobs.select(work.sum()).item())
