"""The ``conservative`` group: conservative backfilling beside EASY-FCFS on the whole filtered
CEA-Curie log (the targets: conservative backfilling at most 5x EASY-FCFS; Slurm's multifactor
priority with Slurm's backfilling at most 3x), with depth 1, Slurm 22.05's default limits and the
multifactor priority under them; and the simulated days per second of each run."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scheduler.cli.bench.group import log_group
from scheduler.cli.bench.logs import JobArrays, filtered_log, job_arrays
from scheduler.cli.bench.timing import engine_call, side_by_side, timing_line
from scheduler.cli.output import DAY_S
from scheduler.sim.conservative import simulate_conservative_arrays
from scheduler.sim.multifactor import (
    MULTIFACTOR,
    JobAttributes,
    MultifactorPriority,
    job_attributes,
)
from scheduler.sim.slurm_conf import default_backfill_kwargs
from scheduler.traces.catalogue import TRACE_CATALOGUE

__all__ = [
    "BENCH_PRIORITY",
    "CONSERVATIVE_RUNS",
    "EASY_LABEL",
    "GROUP",
    "conservative_figures",
    "format_conservative_figures",
]

#: The reference run of the ratios: EASY-FCFS-FCFS in the engine.
EASY_LABEL = "EASY-FCFS"

#: The multifactor priority of the benchmark: age, fair-share and job size weighted alike
#: (1000 each), Slurm's other defaults (7-day half-life and max age, 5-minute calc period);
#: the classic fair-share, and Fair Tree in a run of its own.
BENCH_PRIORITY = MultifactorPriority(weight_age=1000, weight_fairshare=1000, weight_job_size=1000)

#: The conservative-backfilling runs timed beside :data:`EASY_LABEL`: label -> the keywords
#: given to :func:`~scheduler.sim.conservative.simulate_conservative_arrays` (FCFS unless
#: ``primary`` says otherwise; the multifactor run's job attributes come from the log).
CONSERVATIVE_RUNS: dict[str, dict[str, Any]] = {
    "conservative": {},
    "depth 1": {"depth": 1},
    "Slurm's limits": default_backfill_kwargs(),
    "multifactor, Slurm": {
        "primary": MULTIFACTOR,
        "priority": BENCH_PRIORITY,
        **default_backfill_kwargs(),
    },
    "Fair Tree, Slurm": {
        "primary": MULTIFACTOR,
        "priority": dataclasses.replace(BENCH_PRIORITY, fair_tree=True),
        **default_backfill_kwargs(),
    },
}


def _conservative_call(
    arrays: JobArrays, m: int, kwargs: dict[str, Any], attributes: JobAttributes
) -> Callable[[], Any]:
    """A call of conservative backfilling (``kwargs``) on ``arrays``; returns start times (s)."""
    submit, procs, run, req, ids = arrays
    extra = {"attributes": attributes} if kwargs.get("primary") == MULTIFACTOR else {}
    return lambda: (
        simulate_conservative_arrays(
            submit, procs, run, req, m, requested_s=req, job_id=ids, validate=False, **kwargs,
            **extra,
        ).start_s
    )  # fmt: skip


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
    attributes = job_attributes(trace.jobs)
    calls: dict[str, Callable[[], object]] = {EASY_LABEL: engine_call(arrays, m, "FCFS")}
    for label, kwargs in CONSERVATIVE_RUNS.items():
        calls[label] = _conservative_call(arrays, m, kwargs, attributes)
    outputs, times = side_by_side(calls, repeat, EASY_LABEL)
    submit, run = arrays[0], arrays[2]
    for label in CONSERVATIVE_RUNS:
        start = np.asarray(outputs[label])
        if not np.all(np.isfinite(start)):
            raise AssertionError(f"{name}: {label} left a job unstarted")
        # simulated days: from the first submission to the last end of that run's schedule
        days = float((start + run).max() - submit.min()) / DAY_S
        times[label]["days_per_s"] = days / times[label]["median_s"]
    return {"log": name, "jobs": trace.jobs.height, "repeat": repeat, **times}


def format_conservative_figures(figures: Mapping[str, Any]) -> list[str]:
    """Lines of :func:`conservative_figures`: median [min, max] wall times and ratios."""
    lines = [
        f"{figures['log']} ({figures['jobs']:,} jobs), FCFS, side by side, {figures['repeat']} "
        "rounds: median [min, max], ratio to EASY-FCFS (target: conservative <= 5)"
    ]
    lines.append("  " + timing_line(EASY_LABEL, figures[EASY_LABEL], 19))
    for label in CONSERVATIVE_RUNS:
        days = f"  {figures[label]['days_per_s']:,.0f} simulated days/s"
        lines.append("  " + timing_line(label, figures[label], 19, days))
    return lines


GROUP = log_group(
    "conservative",
    "conservative backfilling (FCFS: no limits, depth 1, Slurm's default limits; Slurm's "
    "multifactor priority) beside EASY-FCFS on the whole CEA-Curie",
    "CEA-Curie",
    lambda path, inputs: conservative_figures(path, catalogue=inputs.catalogue),
    format_conservative_figures,
)
