"""The redirection study's workflow steps (one function per rule of
``workflow/rules/redirect.smk``): the loaded weeks of a log, the (α, θ) grid simulated on them,
the tables and figures."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import write_csv, write_markdown, write_parquet
from scheduler.core.steps import (
    StepContext,
    flat_record,
    read_table,
    table_machine_procs,
    workflow_step,
)
from scheduler.sim.engine import simulate_arrays
from scheduler.sim.metrics import run_figures
from scheduler.sim.redirection import simulate_redirect_arrays
from scheduler.studies.redirect.online import online_rng, online_theta_run
from scheduler.studies.redirect.plan import check_main_pool
from scheduler.studies.redirect.stats import (
    GRID_COLUMNS,
    ONLINE_COLUMNS,
    RUN_FIGURES,
    best_cells,
    heatmap_table,
    online_table,
    week_ratios,
)
from scheduler.studies.redirect.weeks import chosen_weeks, split_weeks, week_jobs, window_loads
from scheduler.traces.swf import used_procs

__all__ = [
    "FIGURES",
    "choose_weeks",
    "redirect_figure",
    "redirect_tables",
    "redirect_week",
    "simulate_alpha",
    "simulate_online",
]

FIGURES: tuple[str, ...] = ("heatmap_avg_bsld", "heatmap_max_bsld", "best_boxplot")


@workflow_step
def choose_weeks(
    filtered_path: str,
    weeks_path: str,
    weeks_csv_path: str,
    *,
    trace: str,
    count: int,
    min_load: float,
    step_days: int,
    split: str,
    ctx: StepContext,
) -> None:
    """Choose the loaded weeks of a log (:mod:`scheduler.studies.redirect.weeks`), split them
    into training and test weeks, and write them with their offered load."""
    jobs = read_table(filtered_path)
    m = table_machine_procs(filtered_path)
    loads = window_loads(jobs, m, step_days=step_days)
    weeks = chosen_weeks(loads, count=count, min_load=min_load)
    if weeks.height < 2:
        best = float(loads["load"].max())
        raise ConfigurationError(
            f"{trace}: {weeks.height} week(s) with offered load >= {min_load} (the most "
            f"loaded 7-day window has {best:.2f}); lower redirect.min_load_by_trace.{trace}"
        )
    weeks = split_weeks(weeks, how=split).with_columns(pl.lit(trace).alias("trace"))
    record = ctx.record()
    write_parquet(weeks, weeks_path, record)
    write_csv(weeks, weeks_csv_path, record)
    short = f" (asked {count})" if weeks.height < count else ""
    ctx.log(f"{trace}: {weeks.height} weeks{short} with load >= {min_load}: "
            f"{', '.join(f'{x:.2f}' for x in weeks['load'])}")  # fmt: skip


def _figures(
    submit: np.ndarray, procs: np.ndarray, run: np.ndarray, start: np.ndarray,
    wasted: np.ndarray | None, m: int, tau_s: float,
) -> dict[str, float]:  # fmt: skip
    """The :data:`RUN_FIGURES` of one run (:func:`~scheduler.sim.metrics.run_figures`)."""
    figures = run_figures(submit, start, run, procs, m, tau_s=tau_s, wasted_proc_s=wasted)
    return {name: getattr(figures, name) for name in RUN_FIGURES}


def _week_arrays(
    jobs: pl.DataFrame, week: dict, widest: int, trace: str, max_alpha: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The jobs of a chosen week no wider than ``widest`` (the main pool of the largest share
    ``max_alpha``) as arrays (submit, procs, run, requested time, job number, in (submit, job
    number) order) and how many were left out; a ConfigurationError naming
    ``redirect.alphas`` when none is left."""
    part = week_jobs(jobs, week["start_s"]).sort("submit_s", "job_id")
    wide = part.select(used_procs() > widest).to_series()
    part = part.filter(~wide)
    if part.is_empty():
        raise ConfigurationError(
            f"config redirect.alphas: on {trace}, every job of week {week['week']} is wider "
            f"than the main pool left by alpha = {max_alpha!r} ({widest} processors); "
            "choose smaller shares"
        )
    return (
        part["submit_s"].cast(pl.Float64).to_numpy(),
        part.select(used_procs()).to_series().cast(pl.Float64).to_numpy(),
        part["run_s"].cast(pl.Float64).to_numpy(),
        part["req_time_s"].cast(pl.Float64).to_numpy(),
        part["job_id"].cast(pl.Float64).to_numpy(),
        int(wide.sum()),
    )


@workflow_step
def simulate_alpha(
    filtered_path: str,
    weeks_path: str,
    out_path: str,
    *,
    trace: str,
    alpha: float | None,
    thetas: Sequence[float],
    balance: Sequence[bool],
    primary: str,
    backfill: str,
    tau_s: float,
    max_alpha: float,
    ctx: StepContext,
) -> None:
    """Every chosen week of a log under one dedicated share α and every (θ, balance), or, for
    ``alpha`` None, under EASY on the whole machine (the baseline); one row per run.

    Every job is submitted to the main pool, so a job wider than the main pool could never run:
    the jobs wider than the main pool of the study's largest share ``max_alpha`` are left out of
    every run of the log, the baseline included (the runs stay comparable); the log says how
    many."""
    jobs = read_table(filtered_path)
    m = table_machine_procs(filtered_path)
    weeks = read_table(weeks_path)
    widest = check_main_pool(trace, max_alpha, m)
    started = time.perf_counter()
    rows = []
    dropped = 0
    for week in weeks.iter_rows(named=True):
        arrays = _week_arrays(jobs, week, widest, trace, max_alpha)
        submit, procs, run, requested, ids, wide = arrays
        dropped += wide
        base = {"trace": trace, "week": week["week"], "split": week["split"],
                "jobs": submit.size}  # fmt: skip
        if alpha is None:
            start = simulate_arrays(submit, procs, run, requested, m, primary=primary,
                                    backfill=backfill, job_id=ids)  # fmt: skip
            figures = _figures(submit, procs, run, start, None, m, tau_s)
            rows.append({**base, "alpha": 0.0, "theta": math.inf, "balance": False,
                         "redirections": 0, **figures})  # fmt: skip
            continue
        for theta in thetas:
            for balanced in balance:
                out = simulate_redirect_arrays(
                    submit, procs, run, requested, m, alpha=float(alpha), theta=float(theta),
                    primary=primary, backfill=backfill, balance=bool(balanced), job_id=ids,
                )  # fmt: skip
                figures = _figures(submit, procs, run, out.start_s, out.wasted_proc_s, m,
                                   tau_s)  # fmt: skip
                rows.append({**base, "alpha": float(alpha), "theta": float(theta),
                             "balance": bool(balanced), "redirections": out.redirections,
                             **figures})  # fmt: skip
    table = pl.DataFrame(rows, schema=GRID_COLUMNS)
    write_parquet(table, out_path, ctx.record())
    share = "baseline" if alpha is None else f"{alpha:g}"
    ctx.log(f"{trace} α={share}: {table.height} runs over {weeks.height} weeks in "
            f"{time.perf_counter() - started:.1f} s; {dropped} job(s) wider than the main pool "
            f"at α = {max_alpha:g} ({widest} processors) left out")  # fmt: skip


@workflow_step
def simulate_online(
    filtered_path: str,
    weeks_path: str,
    out_path: str,
    *,
    trace: str,
    alpha: float,
    thetas: Sequence[float],
    balance: Sequence[bool],
    selectors: Sequence[str],
    period_s: float,
    seed: int,
    primary: str,
    backfill: str,
    tau_s: float,
    max_alpha: float,
    ctx: StepContext,
) -> None:
    """Every chosen week of a log under one dedicated share α with θ chosen online by each
    selector (:mod:`scheduler.studies.redirect.online`), for each balance option; one row per
    run (:data:`ONLINE_COLUMNS`: the grid's columns with θ = NaN, the selector, the number of
    periods and the θ of each period). The same jobs as :func:`simulate_alpha`'s runs."""
    jobs = read_table(filtered_path)
    m = table_machine_procs(filtered_path)
    weeks = read_table(weeks_path)
    widest = check_main_pool(trace, max_alpha, m)
    value = float(alpha)
    started = time.perf_counter()
    rows = []
    for week in weeks.iter_rows(named=True):
        arrays = _week_arrays(jobs, week, widest, trace, max_alpha)
        submit, procs, run, requested, ids, _ = arrays
        base = {"trace": trace, "week": week["week"], "split": week["split"],
                "jobs": submit.size, "alpha": value, "theta": math.nan}  # fmt: skip
        for selector in selectors:
            for balanced in balance:
                rng = online_rng(seed, trace, int(week["week"]), value)
                result = online_theta_run(
                    submit, procs, run, requested, m, alpha=value, thetas=thetas,
                    selector=selector, rng=rng, start_s=float(week["start_s"]),
                    period_s=period_s, tau_s=tau_s, primary=primary, backfill=backfill,
                    balance=bool(balanced), job_id=ids,
                )  # fmt: skip
                sim = result.simulation
                figures = _figures(submit, procs, run, sim.start_s, sim.wasted_proc_s, m,
                                   tau_s)  # fmt: skip
                path = ",".join(f"{theta:g}" for theta in result.thetas)
                rows.append({**base, "balance": bool(balanced),
                             "redirections": sim.redirections, **figures,
                             "selector": selector, "periods": len(result.history),
                             "theta_path": path})  # fmt: skip
    table = pl.DataFrame(rows, schema=ONLINE_COLUMNS)
    write_parquet(table, out_path, ctx.record())
    ctx.log(f"{trace} α={alpha:g}: {table.height} online-θ runs over {weeks.height} weeks in "
            f"{time.perf_counter() - started:.1f} s")


@workflow_step
def redirect_tables(
    grid_paths: Sequence[str],
    grid_path: str,
    heatmap_csv_path: str,
    heatmap_md_path: str,
    best_path: str,
    best_csv_path: str,
    best_md_path: str,
    online_paths: Sequence[str],
    online_path: str,
    online_csv_path: str,
    online_md_path: str,
    *,
    ctx: StepContext,
) -> None:
    """Gather every run; the median ratios per (α, θ) (heat maps) and the honest tuning; the
    online-θ runs and their comparison with the fixed θ (:func:`online_table`)."""
    from scheduler.studies.common.tables import markdown_table

    grid = pl.concat([read_table(path) for path in grid_paths])
    ratios = week_ratios(grid)
    heat = heatmap_table(ratios)
    best = best_cells(ratios)
    record = ctx.record()
    write_parquet(grid, grid_path, record)
    write_csv(heat, heatmap_csv_path, record)
    write_markdown("# Redirection / EASY: median ratios over weeks\n\n"
                   + markdown_table(heat), heatmap_md_path, record)  # fmt: skip
    write_parquet(best, best_path, record)
    write_csv(best, best_csv_path, record)
    write_markdown("# (α, θ) chosen on the training weeks, on the test weeks\n\n"
                   + markdown_table(best), best_md_path, record)  # fmt: skip
    if online_paths:
        online = pl.concat([read_table(path) for path in online_paths])
        compared = online_table(grid, online)
        write_parquet(online, online_path, record)
        write_csv(compared, online_csv_path, record)
        write_markdown("# θ chosen online, against the fixed θ (median ratios over the test "
                       "weeks)\n\n" + markdown_table(compared), online_md_path,
                       record)  # fmt: skip
        ctx.log(f"{online.height} online-θ runs")
    ctx.log(f"{grid.height} runs, {heat.height} cells")


@workflow_step
def redirect_figure(
    grid_path: str,
    best_path: str,
    png_path: str,
    pdf_path: str,
    *,
    figure: str,
    ctx: StepContext,
) -> None:
    """One figure of :data:`FIGURES`."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.redirect.figures import best_boxplot, ratio_heatmap

    ratios = week_ratios(read_table(grid_path))
    if figure.startswith("heatmap_"):
        plot = ratio_heatmap(heatmap_table(ratios), figure.removeprefix("heatmap_"))
    elif figure == "best_boxplot":
        plot = best_boxplot(ratios, read_table(best_path))
    else:
        raise ConfigurationError(f"unknown redirection figure {figure!r}; known: {FIGURES}")
    logs = ratios["trace"].n_unique()
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()),
                width_in=max(7.0, 3.5 * logs + 1.5), height_in=6.0)  # fmt: skip
    ctx.log(f"figure {figure}")


@workflow_step
def redirect_week(
    filtered_path: str,
    weeks_path: str,
    grid_path: str,
    best_path: str,
    png_path: str,
    pdf_path: str,
    *,
    trace: str,
    primary: str,
    backfill: str,
    tau_s: float,
    max_alpha: float,
    ctx: StepContext,
) -> None:
    """The representative week of log ``trace``: the test week where the tuned (α, θ) changes
    the mean bounded slowdown most (:func:`~scheduler.studies.redirect.week.drawn_week`),
    simulated again under EASY on the whole machine and under redirection, drawn stacked (runs
    coloured by pool, killed runs apart; queue length and utilisation under each), 7 days from
    the week's start."""
    from scheduler.sim.schedule import schedule_of
    from scheduler.studies.common.gantt import WEEK_S, Panel, draw_gantt
    from scheduler.studies.redirect.week import drawn_week, week_pair

    jobs = read_table(filtered_path)
    m = table_machine_procs(filtered_path)
    chosen = drawn_week(read_table(grid_path), read_table(best_path), read_table(weeks_path),
                        trace)  # fmt: skip
    widest = check_main_pool(trace, max_alpha, m)
    baseline, redirected = week_pair(jobs, m, chosen, widest=widest, primary=primary,
                                     backfill=backfill, tau_s=tau_s)  # fmt: skip
    cell = f"α = {chosen.alpha:g}, θ = {chosen.theta:g}" + (", balanced" if chosen.balance
                                                            else "")  # fmt: skip
    config = redirected.config
    panels = [
        Panel(f"EASY on the whole machine ({m} processors): AVEbsld "
              f"{baseline.summary.avg_bsld:.2f}", schedule_of(baseline)),
        Panel(f"redirection, {cell} ({config.main_procs} + {config.dedicated_procs} "
              f"processors): AVEbsld {redirected.summary.avg_bsld:.2f}, "
              f"{redirected.redirections} redirections", schedule_of(redirected)),
    ]  # fmt: skip
    window = (chosen.start_s, chosen.start_s + WEEK_S)
    title = f"{trace}, test week {chosen.week}: {primary}-EASY with and without redirection"
    meta = flat_record(ctx.record())
    draw_gantt(panels, (png_path, pdf_path), window, colour_by="redirected", title=title,
               provenance=meta)  # fmt: skip
    ctx.log(f"{trace} week {chosen.week} ({baseline.jobs.height} jobs), {cell}: AVEbsld "
            f"{baseline.summary.avg_bsld:.3f} -> {redirected.summary.avg_bsld:.3f}, "
            f"{redirected.redirections} redirections")  # fmt: skip
