"""The ``schedules`` group: looking at a schedule and taking it elsewhere, on the whole CEA-Curie
log: the processor assignment, a week's Gantt chart and the exports, beside the simulation that
made the schedule."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from scheduler.cli.bench.group import log_group
from scheduler.cli.bench.logs import filtered_log
from scheduler.cli.bench.timing import side_by_side, timing_line
from scheduler.sim.api import simulate
from scheduler.sim.batsim_jobs import write_schedule_batsim
from scheduler.sim.schedule import Schedule, schedule_of
from scheduler.studies.common.gantt import WEEK_S, draw_gantt
from scheduler.traces.batsim import read_batsim_workload, write_batsim_workload
from scheduler.traces.swf import Trace

__all__ = ["GROUP", "busiest_week", "schedule_figures"]


def busiest_week(schedule: Schedule) -> tuple[float, float]:
    """The week (counted from the first submission) in which the most runs start."""
    starts = schedule.runs["start_s"].to_numpy()
    first = float(schedule.runs["submit_s"].min())  # type: ignore[arg-type]
    weeks = ((starts - first) // WEEK_S).astype(np.int64)
    week = int(np.bincount(weeks).argmax())
    return first + week * WEEK_S, first + (week + 1) * WEEK_S


def schedule_figures(trace: Trace, repeat: int = 5) -> dict[str, object]:
    """Wall times (s) on a whole log, side by side with the EASY-FCFS simulation that made the
    schedule: the processor assignment (:func:`~scheduler.sim.schedule.schedule_of`), a Gantt
    chart of its busiest week (rectangles clipped to the window; drawn and saved as PNG), and
    the exports. Per call the median, min and max, and the ratio to the simulation."""
    result = simulate(trace)
    schedule = schedule_of(result)
    window = busiest_week(schedule)
    in_week = schedule.window(*window)
    with tempfile.TemporaryDirectory() as folder:
        chart, jobs_csv = Path(folder) / "week.png", Path(folder) / "jobs.csv"
        workload = Path(folder) / "workload.json"
        write_batsim_workload(trace, workload)
        calls: dict[str, Callable[[], object]] = {
            "simulate EASY-FCFS": lambda: simulate(trace),
            "assign processors": lambda: schedule_of(result),
            "Gantt chart of the week (PNG)": lambda: draw_gantt(
                schedule, chart, window, colour_by="user"
            ),
            "assign + write Batsim jobs.csv": lambda: write_schedule_batsim(result, jobs_csv),
            "write Batsim JSON workload": lambda: write_batsim_workload(trace, workload),
            "read Batsim JSON workload": lambda: read_batsim_workload(workload),
        }
        outputs, times = side_by_side(calls, repeat, "simulate EASY-FCFS")
        del outputs
        sizes = {"jobs_csv_bytes": jobs_csv.stat().st_size, "json_bytes": workload.stat().st_size}
    pieces = schedule.assignment.pieces
    return {
        "jobs": trace.jobs.height,
        "machine_procs": trace.machine_procs,
        "repeat": repeat,
        "week_s": list(window),
        "week_runs": in_week.runs.height,
        "contiguous_share": float((pieces <= 1).mean()),
        "times": times,
        **sizes,
        "max_intervals": int(pieces.max()),
        "users_in_week": int(in_week.runs.select(pl.col("user_id").n_unique()).item())
        if "user_id" in in_week.runs.columns
        else 0,
    }


def format_schedule_figures(figures: dict[str, Any]) -> list[str]:
    """Lines of :func:`schedule_figures`."""
    lines = [
        f"the log after the strong filter ({figures['jobs']} jobs, "
        f"{figures['machine_procs']} processors), {figures['repeat']} rounds: median [min, max], "
        "ratio to the simulation",
        f"  busiest week: {figures['week_runs']} runs of {figures['users_in_week']} users; "
        f"contiguous assignments {100 * figures['contiguous_share']:.1f} % (best fit), at most "
        f"{figures['max_intervals']} intervals a job",
    ]
    csv_mb = figures["jobs_csv_bytes"] / 1e6
    targets = {
        "Gantt chart of the week (PNG)": " (target <= 10 s)",
        "assign + write Batsim jobs.csv": f" (target <= 5 s; {csv_mb:.1f} MB)",
        "write Batsim JSON workload": f" ({figures['json_bytes'] / 1e6:.1f} MB)",
    }
    for label, f in figures["times"].items():
        lines.append("  " + timing_line(label, f, 31, targets.get(label, "")))
    return lines


GROUP = log_group(
    "schedules",
    "the processor assignment, a week's Gantt chart and the exports on the whole CEA-Curie.swf.gz",
    "CEA-Curie",
    lambda path, inputs: schedule_figures(filtered_log(path, "CEA-Curie", inputs.catalogue)),
    format_schedule_figures,
)
