"""The redirection study's representative week: the test week of a log where the tuned (α, θ)
changes the mean bounded slowdown most, simulated again under both schedulers for its Gantt
chart (:func:`scheduler.studies.common.gantt.draw_gantt`).

The study simulates each chosen week alone, from an empty machine, so the week is chosen from
the study's own runs (the grid, one row per week and cell) instead of over a replay of the
whole log; the two runs drawn are the grid's runs of that week, job for job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim.redirection import RedirectResult, simulate_redirect
from scheduler.studies.redirect.weeks import week_jobs
from scheduler.traces.swf import used_procs

__all__ = ["DrawnWeek", "drawn_week", "week_pair"]


@dataclass(frozen=True)
class DrawnWeek:
    """The week the report draws and the cell drawn against the baseline.

    ``week`` and ``start_s`` (seconds on the log's clock) are those of the chosen-weeks table;
    ``alpha`` (dedicated share), ``theta`` (submissions) and ``balance`` the cell tuned on the
    training weeks (:func:`~scheduler.studies.redirect.stats.best_cells`); ``baseline_avg_bsld``
    and ``avg_bsld`` the week's mean bounded slowdown (τ = the study's ``tau_s``) under EASY on
    the whole machine and under redirection.
    """

    week: int
    start_s: float
    alpha: float
    theta: float
    balance: bool
    baseline_avg_bsld: float
    avg_bsld: float


def drawn_week(
    grid: pl.DataFrame, best: pl.DataFrame, weeks: pl.DataFrame, trace: str
) -> DrawnWeek:
    """The week of ``trace`` the report draws.

    The cell is the tuned one of :func:`~scheduler.studies.redirect.stats.best_cells` (the
    lower training ratio of the two balance options; ties: without balancing); the week is the
    test week where its AVEbsld differs most, in absolute value, from the baseline's (ties: the
    earliest), so the cell was not chosen on the week drawn.

    Parameters
    ----------
    grid
        Every run (:data:`~scheduler.studies.redirect.stats.GRID_COLUMNS`).
    best
        The tuned cells (``best.parquet``).
    weeks
        The log's chosen weeks (``week``, ``start_s``).
    trace
        The log.

    Raises
    ------
    ConfigurationError
        ``trace`` has no tuned cell, or no test week with both runs.
    """
    cells = best.filter(pl.col("trace") == trace).sort(
        "train_median_ratio_avg_bsld", "balance", nulls_last=True
    )
    if cells.is_empty():
        raise ConfigurationError(f"redirection week: no tuned (alpha, theta) for {trace}")
    cell = cells.row(0, named=True)
    runs = grid.filter((pl.col("trace") == trace) & (pl.col("split") == "test"))
    baseline = runs.filter(pl.col("alpha") == 0.0).select(
        "week", pl.col("avg_bsld").alias("baseline_avg_bsld")
    )
    redirected = runs.filter(
        (pl.col("alpha") == cell["alpha"])
        & (pl.col("theta") == cell["theta"])
        & (pl.col("balance") == cell["balance"])
    ).select("week", "avg_bsld")
    pairs = (
        baseline.join(redirected, on="week")
        .join(weeks.select("week", "start_s"), on="week")
        .with_columns((pl.col("avg_bsld") - pl.col("baseline_avg_bsld")).abs().alias("gap"))
        .sort(["gap", "week"], descending=[True, False])
    )
    if pairs.is_empty():
        raise ConfigurationError(f"redirection week: {trace} has no test week with both runs")
    row = pairs.row(0, named=True)
    return DrawnWeek(
        week=int(row["week"]),
        start_s=float(row["start_s"]),
        alpha=float(cell["alpha"]),
        theta=float(cell["theta"]),
        balance=bool(cell["balance"]),
        baseline_avg_bsld=float(row["baseline_avg_bsld"]),
        avg_bsld=float(row["avg_bsld"]),
    )


def week_pair(
    jobs: pl.DataFrame,
    machine_procs: int,
    chosen: DrawnWeek,
    *,
    widest: int,
    primary: str,
    backfill: str,
    tau_s: float,
) -> tuple[RedirectResult, RedirectResult]:
    """The chosen week's jobs no wider than ``widest`` processors (the runs of the study leave
    the wider ones out) under EASY on the whole machine of ``machine_procs`` processors and
    under redirection with the chosen cell.

    The baseline is a redirection run with no dedicated pool and no threshold (α = 0, θ = ∞:
    plain EASY on the whole machine, job for job), so that both runs carry the same columns
    (the chart colours runs by ``redirected``) and their bounded slowdown the same τ
    (``tau_s``, seconds).

    Returns
    -------
    tuple of RedirectResult
        ``(baseline, redirected)``.
    """
    part = week_jobs(jobs, chosen.start_s).filter(used_procs() <= widest)
    if part.is_empty():
        raise ConfigurationError(
            f"redirection week {chosen.week}: no job fits the main pool ({widest} processors)"
        )
    common = {"primary": primary, "backfill": backfill, "machine_procs": machine_procs,
              "tau_s": tau_s}  # fmt: skip
    baseline = simulate_redirect(part, alpha=0.0, theta=math.inf, **common)  # type: ignore[arg-type]
    redirected = simulate_redirect(part, alpha=chosen.alpha, theta=chosen.theta,
                                   balance=chosen.balance, **common)  # type: ignore[arg-type]  # fmt: skip
    return baseline, redirected
