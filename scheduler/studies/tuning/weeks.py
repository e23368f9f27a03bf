"""Simulate many resampled weeks under one EASY configuration and keep weekly figures.

A simulation job of the queue-tuning study takes a batch of resampled weeks (a table with the
:data:`scheduler.traces.resample.WEEK_COLUMNS`) and one configuration (primary policy, backfilling
policy, threshold Θ) and simulates every week on its own, from an empty machine until it drains.
Per week it keeps the figures of :data:`WEEKLY_COLUMNS`; they are computed with NumPy straight
from the start times (the same definitions as :func:`scheduler.sim.metrics.summarize`, which is too
slow to call hundreds of thousands of times).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError
from scheduler.policies import get_policy
from scheduler.sim.arrays import WeekArrays
from scheduler.sim.engine import simulate_arrays
from scheduler.sim.metrics import bounded_slowdown
from scheduler.studies.tuning.schema import WEEKLY_COLUMNS

__all__ = ["simulate_weeks", "weeks_to_copy"]


def _week_figures(
    submit: np.ndarray, run: np.ndarray, procs: np.ndarray, start: np.ndarray, machine_procs: int
) -> tuple[float, float, float, float, float]:
    """(AvgWait, MaxWait, AVEbsld, MaxBsld, utilisation) of one simulated week (seconds)."""
    wait = start - submit
    bsld = bounded_slowdown(wait, run, BSLD_TAU_S)
    makespan = float((start + run).max() - submit.min())
    area = float((procs * run).sum())  # not np.dot: BLAS threads would spin beside the kernel
    utilisation = area / (machine_procs * makespan) if makespan > 0 else 0.0
    return float(wait.mean()), float(wait.max()), float(bsld.mean()), float(bsld.max()), utilisation


_FIGURE_COLUMNS = ("avg_wait_s", "max_wait_s", "avg_bsld", "max_bsld", "utilisation")


def _unthresholded_figures(
    unthresholded: pl.DataFrame | None,
    weeks: WeekArrays,
    primary: str,
    backfill: str,
    threshold_s: float,
) -> np.ndarray | None:
    """The figures of the run without threshold, one row per week of ``weeks`` (or None)."""
    if unthresholded is None or math.isinf(threshold_s):
        return None
    same_case = unthresholded.filter(
        (pl.col("primary") == primary) & (pl.col("backfill") == backfill)
        & pl.col("threshold_s").is_infinite()
    )  # fmt: skip
    if same_case.height != unthresholded.height:
        raise ConfigurationError(
            f"the unthresholded results must be EASY-{primary}-{backfill} without threshold"
        )
    rows = pl.DataFrame({"week_index": weeks.week_index}).join(
        same_case, on="week_index", how="left", maintain_order="left"
    )
    if rows["jobs"].null_count() or (rows["jobs"].to_numpy() != np.diff(weeks.bounds)).any():
        raise ConfigurationError("the unthresholded results do not cover the same weeks")
    return rows.select(_FIGURE_COLUMNS).to_numpy().astype(np.float64)


def weeks_to_copy(unthresholded_max_wait_s: np.ndarray, threshold_s: float) -> np.ndarray:
    """Mask of the weeks whose run without threshold is also their run under Θ: those whose
    MaxWait without threshold (seconds) is <= Θ (seconds); see :func:`simulate_weeks`."""
    return np.asarray(unthresholded_max_wait_s, dtype=np.float64) <= threshold_s


def simulate_weeks(
    weeks: WeekArrays,
    machine_procs: int,
    *,
    primary: str,
    backfill: str,
    threshold: str,
    threshold_s: float,
    trace: str,
    split: str,
    unthresholded: pl.DataFrame | None = None,
    threshold_backfill: bool = False,
) -> pl.DataFrame:
    """Simulate EASY(primary, backfill, Θ) on every week of ``weeks`` independently.

    Each week starts from an empty machine of ``machine_procs`` processors and runs until its
    last job ends. ``threshold`` is the label of Θ (e.g. ``"20h"``), ``threshold_s`` its value in
    seconds (``inf`` for none). Returns one row per week with :data:`WEEKLY_COLUMNS`, in week
    order. ``threshold_backfill``: backfill candidates in the thresholded order of ``backfill``
    (overdue jobs first, :func:`scheduler.sim.engine.simulate_arrays`).

    ``unthresholded`` (optional) is this function's result for the same trace, split, weeks and
    policies without threshold. A week whose MaxWait there is <= Θ is not simulated again: its
    figures are copied, because the runs are identical. (A job is moved ahead by Θ only at a
    pass where it has waited more than Θ; without threshold every job waiting at a pass at time
    ``now`` starts at or after ``now``, so its wait at that pass is at most its final wait, at
    most MaxWait <= Θ: no job is ever overdue and every pass decides as without threshold —
    with either backfill order, since the thresholded one differs only for overdue jobs.)
    """
    get_policy(primary)
    get_policy(backfill)
    if math.isnan(threshold_s) or threshold_s < 0:
        raise ConfigurationError(f"threshold must be >= 0 seconds, got {threshold_s}")
    n_weeks = weeks.week_index.size
    figures = np.empty((n_weeks, 5), dtype=np.float64)
    counts = np.diff(weeks.bounds)
    known = _unthresholded_figures(unthresholded, weeks, primary, backfill, threshold_s)
    copy = None if known is None else weeks_to_copy(known[:, 1], threshold_s)
    for k in range(n_weeks):
        if copy is not None and copy[k]:
            figures[k] = known[k]
            continue
        lo, hi = weeks.bounds[k], weeks.bounds[k + 1]
        submit, run, procs = weeks.submit_s[lo:hi], weeks.run_s[lo:hi], weeks.procs[lo:hi]
        start = simulate_arrays(
            submit, procs, run, weeks.estimate_s[lo:hi], machine_procs,
            primary=primary, backfill=backfill, threshold_s=threshold_s,
            threshold_backfill=threshold_backfill,
            job_id=weeks.job_id[lo:hi], validate=False,
        )  # fmt: skip
        figures[k] = _week_figures(submit, run, procs, start, machine_procs)
    columns = {
        "trace": [trace] * n_weeks,
        "split": [split] * n_weeks,
        "week_index": weeks.week_index,
        "primary": [primary] * n_weeks,
        "backfill": [backfill] * n_weeks,
        "threshold": [threshold] * n_weeks,
        "threshold_s": np.full(n_weeks, threshold_s),
        "jobs": counts.astype(np.int64),
        "avg_wait_s": figures[:, 0],
        "max_wait_s": figures[:, 1],
        "avg_bsld": figures[:, 2],
        "max_bsld": figures[:, 3],
        "utilisation": figures[:, 4],
    }
    return pl.DataFrame(columns, schema=WEEKLY_COLUMNS)
