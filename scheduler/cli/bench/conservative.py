"""The ``conservative`` group: conservative backfilling beside EASY-FCFS on the whole filtered
CEA-Curie log (the target: conservative backfilling at most 5x EASY-FCFS), with its depth-1 and
Slurm-like settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scheduler.cli.bench.group import log_group
from scheduler.cli.bench.logs import JobArrays, filtered_log, job_arrays
from scheduler.cli.bench.timing import engine_call, side_by_side, timing_line
from scheduler.sim.conservative import simulate_conservative_arrays
from scheduler.traces.catalogue import TRACE_CATALOGUE

__all__ = [
    "CONSERVATIVE_RUNS",
    "EASY_LABEL",
    "GROUP",
    "conservative_figures",
    "format_conservative_figures",
]

#: The reference run of the ratios: EASY-FCFS-FCFS in the engine.
EASY_LABEL = "EASY-FCFS"

#: The conservative-backfilling runs (FCFS) timed beside :data:`EASY_LABEL`: label -> the
#: limits given to :func:`~scheduler.sim.conservative.simulate_conservative_arrays`.
CONSERVATIVE_RUNS: dict[str, dict[str, float]] = {
    "conservative": {},
    "depth 1": {"depth": 1},
    "Slurm-like limits": {
        "bf_max_job_test": 100, "bf_window_s": 86400.0, "bf_resolution_s": 60.0,
        "bf_interval_s": 30.0, "default_queue_depth": 100,
    },
}  # fmt: skip


def _conservative_call(arrays: JobArrays, m: int, limits: dict[str, float]) -> Callable[[], Any]:
    """A call of conservative backfilling (FCFS, ``limits``) on ``arrays``; returns start
    times (s)."""
    submit, procs, run, req, ids = arrays
    return lambda: (
        simulate_conservative_arrays(
            submit, procs, run, req, m, requested_s=req, job_id=ids, validate=False, **limits
        ).start_s
    )


def conservative_figures(
    path: Path, name: str = "CEA-Curie", repeat: int = 3, *, catalogue: Path = TRACE_CATALOGUE
) -> dict[str, object]:
    """EASY-FCFS and the :data:`CONSERVATIVE_RUNS` side by side (:func:`side_by_side`: a warm-up
    call each, then ``repeat`` rounds, ratios to EASY-FCFS within each round) on the filtered
    log ``path``, read as the catalogue's log ``name`` (its machine size). Returns the jobs,
    the repeat and per run the median, min and max wall time (s) and of the ratio."""
    trace = filtered_log(path, name, catalogue)
    arrays = job_arrays(trace)
    m = trace.machine_procs
    calls: dict[str, Callable[[], object]] = {EASY_LABEL: engine_call(arrays, m, "FCFS")}
    for label, limits in CONSERVATIVE_RUNS.items():
        calls[label] = _conservative_call(arrays, m, limits)
    outputs, times = side_by_side(calls, repeat, EASY_LABEL)
    if not np.all(np.isfinite(np.asarray(outputs["conservative"]))):
        raise AssertionError(f"{name}: conservative backfilling left a job unstarted")
    return {"log": name, "jobs": trace.jobs.height, "repeat": repeat, **times}


def format_conservative_figures(figures: Mapping[str, Any]) -> list[str]:
    """Lines of :func:`conservative_figures`: median [min, max] wall times and ratios."""
    lines = [
        f"{figures['log']} ({figures['jobs']:,} jobs), FCFS, side by side, {figures['repeat']} "
        "rounds: median [min, max], ratio to EASY-FCFS (target: conservative <= 5)"
    ]
    for label in (EASY_LABEL, *CONSERVATIVE_RUNS):
        lines.append("  " + timing_line(label, figures[label], 17))
    return lines


GROUP = log_group(
    "conservative",
    "conservative backfilling (FCFS: no limits, depth 1, Slurm-like limits) beside EASY-FCFS "
    "on the whole CEA-Curie",
    "CEA-Curie",
    lambda path, inputs: conservative_figures(path, catalogue=inputs.catalogue),
    format_conservative_figures,
)
