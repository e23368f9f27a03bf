"""The ``redirection`` group: the redirection variant beside plain EASY on CEA-Curie's most
loaded calendar week."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from scheduler.cli.bench.group import log_group
from scheduler.cli.bench.logs import filtered_log
from scheduler.cli.bench.timing import side_by_side, timing_line
from scheduler.core.constants import WEEK_S
from scheduler.sim.api import simulate
from scheduler.sim.metrics import with_job_metrics
from scheduler.sim.redirection import pool_sizes, simulate_redirect
from scheduler.traces.calendar import TraceCalendar
from scheduler.traces.swf import Trace, used_procs

__all__ = [
    "GROUP",
    "REDIRECT_BENCH_ALPHA",
    "REDIRECT_BENCH_THETA",
    "format_redirection_figures",
    "most_loaded_week",
    "redirection_figures",
]

#: Dedicated share α and threshold θ (submissions) of the redirection benchmark on CEA-Curie's
#: most loaded week; θ gives a few dozen redirections there (``docs/benchmarks.md``).
REDIRECT_BENCH_ALPHA = 0.1
REDIRECT_BENCH_THETA = 300.0


def most_loaded_week(trace: Trace) -> tuple[Trace, dict[str, object]]:
    """The jobs submitted during the most loaded calendar week of ``trace``, and its figures.

    Calendar weeks run from Monday 00:00 to Monday 00:00 in the log's time zone (the header's
    ``TimeZoneString``, UTC when absent), on the clock ``UnixStartTime + submit_s`` (origin 0
    when absent; :class:`~scheduler.traces.calendar.TraceCalendar`, whose error names the file
    and the key when the zone is not an IANA zone). A week's load is the offered work
    ``Σ q_j p_j`` (processor-seconds) of the jobs submitted in it, divided by ``m · 1 week``.
    Submit times are left as they are.
    """
    calendar = TraceCalendar.from_header(trace.header, trace.path)
    zone, origin = calendar.time_zone, calendar.unix_start_time
    jobs = trace.jobs.with_columns(
        pl.from_epoch(pl.col("submit_s") + origin, time_unit="s")
        .dt.replace_time_zone("UTC")
        .dt.convert_time_zone(zone)
        .dt.truncate("1w")
        .alias("_week"),
        (used_procs().cast(pl.Float64) * pl.col("run_s")).alias("_work"),
    )
    weeks = (
        jobs.group_by("_week")
        .agg(pl.col("_work").sum(), pl.len().alias("jobs"))
        .sort("_work", "_week", descending=[True, False])
    )
    best = weeks.row(0, named=True)
    selected = jobs.filter(pl.col("_week") == best["_week"]).drop("_week", "_work")
    figures = {
        "week_start": best["_week"].isoformat(),
        "time_zone": zone,
        "jobs": int(best["jobs"]),
        "offered_load": float(best["_work"]) / (trace.machine_procs * WEEK_S),
        "weeks": weeks.height,
    }
    return trace.with_jobs(selected), figures


def redirection_figures(
    trace: Trace,
    *,
    alpha: float = REDIRECT_BENCH_ALPHA,
    theta: float = REDIRECT_BENCH_THETA,
    repeat: int = 5,
) -> dict[str, object]:
    """Wall times of redirection (α, θ) beside plain EASY on the most loaded week of ``trace``.

    The jobs wider than the main pool (``m − ceil(α·m)`` processors) cannot be submitted to it:
    they are left out of both runs (counted in ``week["wider_than_main_pool"]``). Both runs go
    through the public table APIs (:func:`scheduler.sim.redirection.simulate_redirect`
    and :func:`scheduler.simulate`, FCFS/FCFS, the whole machine for plain EASY): one warm-up
    call of each, then ``repeat`` rounds calling both in turn; the ratio is taken within each
    round. Returns the week's figures, the run's redirections and metrics, and per run the
    median, min and max wall time (s) and of the ratio.
    """
    week, figures = most_loaded_week(trace)
    # every job is submitted to the main pool: the jobs wider than it are left out of both runs
    main_procs, _ = pool_sizes(alpha, trace.machine_procs)
    fits = week.jobs.filter(used_procs() <= main_procs)
    figures["wider_than_main_pool"] = week.jobs.height - fits.height
    week = week.with_jobs(fits)
    figures["simulated_jobs"] = week.jobs.height
    calls: dict[str, Callable[[], object]] = {
        "plain EASY": lambda: simulate(week),
        "redirection": lambda: simulate_redirect(week, alpha=alpha, theta=theta),
    }
    outputs, times = side_by_side(calls, repeat, "plain EASY")
    result: Any = outputs["redirection"]
    plain: Any = outputs["plain EASY"]
    out: dict[str, object] = {
        "week": figures, "alpha": alpha, "theta": theta, "repeat": repeat,
        "main_procs": result.config.main_procs, "dedicated_procs": result.config.dedicated_procs,
        "redirections": result.redirections, "redirect_summary": result.summary.to_dict(),
        "plain_avg_wait_s": plain.summary.avg_wait_s,
        "plain_utilisation": plain.summary.utilisation,
        # plain EASY's bsld with the redirection results' τ (the base simulator's is 10 s)
        "plain_avg_bsld_tau": float(
            with_job_metrics(plain.jobs.select("submit_s", "start_s", "run_s"),
                             tau_s=result.config.tau_s)["bsld"].mean()
        ),
        **times,
    }  # fmt: skip
    return out


def format_redirection_figures(figures: dict[str, Any]) -> list[str]:
    """Lines of :func:`redirection_figures`: the week, then both runs side by side."""
    week = figures["week"]
    summary = figures["redirect_summary"]
    lines = [
        f"CEA-Curie, most loaded calendar week (from {week['week_start']}, {week['jobs']} jobs, "
        f"offered load {week['offered_load']:.2f}; {week['simulated_jobs']} simulated, "
        f"{week['wider_than_main_pool']} wider than the main pool left out), "
        f"{figures['repeat']} rounds: median [min, max]",
        f"  redirection alpha = {figures['alpha']} ({figures['main_procs']} + "
        f"{figures['dedicated_procs']} processors), theta = {figures['theta']:g}: "
        f"{figures['redirections']} redirections; AvgWait {summary['avg_wait_s']:.0f} s "
        f"(plain EASY {figures['plain_avg_wait_s']:.0f} s), avg bsld (tau 60 s) "
        f"{summary['avg_bsld']:.2f} ({figures['plain_avg_bsld_tau']:.2f}), utilisation "
        f"{summary['utilisation']:.3f}, with the wasted work "
        f"{summary['utilisation_with_waste']:.3f} ({figures['plain_utilisation']:.3f})",
    ]
    for label in ("plain EASY", "redirection"):
        f = figures[label]
        target = " (target <= 2x)" if label == "redirection" else ""
        lines.append("  " + timing_line(label, f, 12, target))
    return lines


GROUP = log_group(
    "redirection",
    "the redirection variant beside plain EASY on CEA-Curie's most loaded week",
    "CEA-Curie",
    lambda path, inputs: redirection_figures(filtered_log(path, "CEA-Curie", inputs.catalogue)),
    format_redirection_figures,
    in_default_run=True,
)
