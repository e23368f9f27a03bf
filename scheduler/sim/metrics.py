"""Per-job and per-run metrics of a simulated schedule.

Units: seconds for times, processors for sizes. Bounded slowdown uses τ = 10 s
(``constants.BSLD_TAU_S``): ``bsld = max((wait + p) / max(p, τ), 1)``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S


def bounded_slowdown(
    wait_s: np.ndarray, run_s: np.ndarray, tau_s: float = BSLD_TAU_S
) -> np.ndarray:
    """``max((wait + p) / max(p, τ), 1)`` per job, over NumPy arrays (seconds; τ = ``tau_s``):
    the definition :func:`job_metric_columns` gives as a polars expression."""
    return np.maximum((wait_s + run_s) / np.maximum(run_s, tau_s), 1.0)


def job_metric_columns(tau_s: float = BSLD_TAU_S) -> list[pl.Expr]:
    """Expressions adding ``wait_s``, ``end_s``, ``bsld`` and ``stretch`` from ``submit_s``,
    ``start_s`` and ``run_s`` (all seconds)."""
    wait = pl.col("start_s") - pl.col("submit_s")
    response = wait + pl.col("run_s")
    return [
        wait.alias("wait_s"),
        (pl.col("start_s") + pl.col("run_s")).alias("end_s"),
        pl.max_horizontal(response / pl.max_horizontal(pl.col("run_s"), pl.lit(tau_s)), 1.0)
        .cast(pl.Float64)
        .alias("bsld"),
        (response / pl.col("run_s")).cast(pl.Float64).alias("stretch"),
    ]


@dataclass(frozen=True)
class RunSummary:
    """Figures of one simulated run (units in the names; bsld is dimensionless)."""

    jobs: int
    avg_wait_s: float
    max_wait_s: float
    avg_bsld: float
    max_bsld: float
    utilisation: float
    makespan_s: float
    backfilled_jobs: int
    total_wait_s: float

    def to_dict(self) -> dict[str, float | int]:
        """Plain dict (JSON-ready)."""
        return asdict(self)


def summarize(jobs: pl.DataFrame, machine_procs: int) -> RunSummary:
    """Summary of a schedule table with ``submit_s, start_s, run_s, procs, wait_s, end_s, bsld,
    backfilled`` columns.

    Utilisation is ``Σ q_j p_j / (m · makespan)`` with makespan ``max end − min submit`` (s).
    An empty table gives zeros.
    """
    if jobs.height == 0:
        return RunSummary(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0.0)
    row = jobs.select(
        pl.len().alias("jobs"),
        pl.col("wait_s").mean().alias("avg_wait_s"),
        pl.col("wait_s").max().cast(pl.Float64).alias("max_wait_s"),
        pl.col("bsld").mean().alias("avg_bsld"),
        pl.col("bsld").max().alias("max_bsld"),
        (pl.col("end_s").max() - pl.col("submit_s").min()).cast(pl.Float64).alias("makespan_s"),
        (pl.col("procs").cast(pl.Float64) * pl.col("run_s")).sum().alias("area"),
        pl.col("backfilled").sum().alias("backfilled_jobs"),
        pl.col("wait_s").sum().cast(pl.Float64).alias("total_wait_s"),
    ).row(0, named=True)
    makespan = row["makespan_s"]
    utilisation = row["area"] / (machine_procs * makespan) if makespan > 0 else 0.0
    return RunSummary(
        jobs=int(row["jobs"]),
        avg_wait_s=float(row["avg_wait_s"]),
        max_wait_s=float(row["max_wait_s"]),
        avg_bsld=float(row["avg_bsld"]),
        max_bsld=float(row["max_bsld"]),
        utilisation=float(utilisation),
        makespan_s=float(makespan),
        backfilled_jobs=int(row["backfilled_jobs"]),
        total_wait_s=float(row["total_wait_s"]),
    )


def cumulative_wait(jobs: pl.DataFrame) -> pl.DataFrame:
    """Cumulative waiting time as a function of time, counting a job when it finishes.

    Returns one row per completion instant: ``time_s`` (s), ``finished_jobs`` (count so far)
    and ``cumulative_wait_s`` (sum of the waits of the jobs finished so far, s).
    """
    return (
        jobs.group_by("end_s")
        .agg(pl.len().alias("finished"), pl.col("wait_s").sum().alias("wait"))
        .sort("end_s")
        .select(
            pl.col("end_s").alias("time_s"),
            pl.col("finished").cum_sum().alias("finished_jobs"),
            pl.col("wait").cum_sum().cast(pl.Float64).alias("cumulative_wait_s"),
        )
    )
