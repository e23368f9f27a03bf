"""The ``online`` group: the online study's switching runs against fixed FCFS on one SDSC-BLUE
two-year replica."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scheduler.cli.bench.group import keyed_group
from scheduler.cli.bench.logs import filtered_log
from scheduler.policies import STUDY_POLICIES
from scheduler.sim.arrays import trace_arrays
from scheduler.traces.catalogue import TRACE_CATALOGUE

__all__ = [
    "GROUP",
    "ONLINE_BENCH_SPECS",
    "ONLINE_THRESHOLD_S",
    "format_online_switching_figures",
    "online_switching_figures",
]

#: Θ of the online study (``online.threshold``), seconds.
ONLINE_THRESHOLD_S = 40 * 3600.0
#: The online study's selectors timed by ``--only online`` (Δ = 1 day), against fixed FCFS.
ONLINE_BENCH_SPECS = ("fixed:FCFS", "random", "bandit(eps=0.1)", "ucb", "fixed:LEXP")


def online_switching_figures(
    traces_dir: Path,
    *,
    log: str = "SDSC-BLUE",
    replica: int = 0,
    seed: int = 1,
    repeat: int = 3,
    catalogue: Path = TRACE_CATALOGUE,
) -> dict[str, object]:
    """One two-year replica of ``log`` (built as the online study builds its long traces,
    weeks cut from the first submission), run live with Δ = 1 day (periods from the first
    submission) by each selector of :data:`ONLINE_BENCH_SPECS` over the 12 study policies
    (Θ = 40 h, thresholded backfill order), the selectors' random draws seeded alike. The
    machine size is the ``catalogue``'s, else the log's header. Returns the jobs and, per
    selector, the best of ``repeat`` wall times (s) of ``run_online``, the selectors
    interleaved round by round so that they share the machine's state."""
    from scheduler.studies.online.live import run_online
    from scheduler.studies.online.long_traces import long_trace
    from scheduler.studies.online.selectors import make_selector

    path = traces_dir / f"{log}.swf.gz"
    if not path.is_file():
        return {"skipped": str(path)}
    trace = filtered_log(path, log, catalogue)
    arrays = trace_arrays(long_trace(trace.jobs, replica, seed=seed, trace=log),
                          trace.machine_procs, source=log)  # fmt: skip
    times: dict[str, list[float]] = {spec: [] for spec in ONLINE_BENCH_SPECS}
    for _ in range(repeat + 1):  # the first round warms the kernel and the caches up
        for spec in ONLINE_BENCH_SPECS:
            selector = make_selector(spec, STUDY_POLICIES, rng=np.random.default_rng(seed))
            started = time.perf_counter()
            run_online(arrays, trace.machine_procs, selector, period_s=86400.0,
                       threshold_s=ONLINE_THRESHOLD_S, period_origin_s=None)  # fmt: skip
            times[spec].append(time.perf_counter() - started)
    return {"log": log, "jobs": arrays.jobs,
            "seconds": {spec: min(t[1:]) for spec, t in times.items()}}  # fmt: skip


def format_online_switching_figures(figures: Mapping[str, Any]) -> list[str]:
    """Lines of :func:`online_switching_figures`: seconds and ratios to fixed FCFS."""
    if "skipped" in figures:
        return [f"online switching runs skipped (not found): {figures['skipped']}"]
    seconds = figures["seconds"]
    base = seconds["fixed:FCFS"]
    lines = [f"online runs, {figures['log']} two-year replica ({figures['jobs']:,} jobs), "
             "Δ = 1 day, best of the rounds; ratio to fixed FCFS (target <= 1.3):"]  # fmt: skip
    for spec, value in seconds.items():
        lines.append(f"  {spec:16s} {value:.3f} s  {value / base:.2f}x")
    return lines


GROUP = keyed_group(
    "online",
    "an online study's switching runs against fixed FCFS on one SDSC-BLUE two-year replica",
    lambda inputs: online_switching_figures(inputs.traces_dir, catalogue=inputs.catalogue),
    format_online_switching_figures,
)
