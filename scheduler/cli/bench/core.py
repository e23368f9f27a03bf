"""The ``core`` group: the simulator's speed and memory targets of the simulator core.

The whole filtered KTH-SP2 log (EASY-FCFS-FCFS, and the prediction variant with REQUESTED), one
typical KTH week, a 10-job low-level call with and without validation, a fresh process that
imports schedlab and simulates a week; then, on the whole filtered CEA-Curie log (machine size
from the trace catalogue), its read, the 12 study policies, the simulation's peak memory and the
prediction variant beside plain EASY.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scheduler.cli.bench.group import BenchGroup, BenchInputs, Figures
from scheduler.cli.bench.logs import JobArrays, filtered_log, job_arrays
from scheduler.cli.bench.timing import (
    best_seconds,
    engine_call,
    median_seconds,
    side_by_side,
    timing_line,
)
from scheduler.core.constants import WEEK_S
from scheduler.policies import STUDY_POLICIES
from scheduler.sim.api import simulate
from scheduler.sim.engine import Simulation, simulate_arrays
from scheduler.sim.prediction import simulate_predicted_arrays
from scheduler.traces.catalogue import catalogue_machine_procs
from scheduler.traces.filters import strong_filter
from scheduler.traces.swf import Trace, read_swf

__all__ = [
    "GROUP",
    "PREDICTION_RUNS",
    "core_figures",
    "format_core_figures",
    "one_week",
    "prediction_figures",
]

#: The prediction variant's runs timed side by side with plain EASY: label -> keywords of
#: :func:`scheduler.simulate` (``None``: plain EASY, the reference of the ratios).
PREDICTION_RUNS: dict[str, dict[str, str] | None] = {
    "plain EASY": None,
    "requested/easy": {"predictor": "requested"},
    "nag eloss+incremental+sjbf": {
        "predictor": "nag", "loss": "eloss", "correction": "incremental", "backfill": "SJBF"
    },
}  # fmt: skip


def one_week(arrays: JobArrays, week_index: int) -> JobArrays:
    """The jobs submitted during one week of a log, shifted to start at 0 s."""
    submit = arrays[0]
    t0 = submit[0] + week_index * WEEK_S
    keep = (submit >= t0) & (submit < t0 + WEEK_S)
    week = tuple(a[keep] for a in arrays)
    return (week[0] - t0, *week[1:])  # type: ignore[return-value]


def _peak_bytes_per_job(arrays: JobArrays, m: int) -> float:
    """Peak memory allocated by one FCFS simulation (state, keys, results), bytes per job.

    Measured with tracemalloc, which sees every NumPy array the simulation allocates; the
    kernel's own temporary arrays (sorts of the waiting queue) are bounded by the queue length.
    """
    submit, procs, run, req, ids = arrays
    tracemalloc.start()
    try:
        simulation = Simulation(submit, procs, run, req, m, job_id=ids, validate=False)
        simulation.run()
        starts = simulation.start_s
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del starts
    return peak / submit.shape[0]


def _fresh_process_seconds(week: JobArrays, m: int) -> float:
    """Wall time (s) of a new Python process that imports schedlab and simulates one week."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "week.npy"
        np.save(path, np.vstack(week))
        code = (
            "import numpy as np, scheduler\n"
            f"a = np.load({str(path)!r})\n"
            f"scheduler.simulate_arrays(a[0], a[1], a[2], a[3], {m}, job_id=a[4])\n"
        )
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - start


def prediction_figures(trace: Trace, repeat: int = 5) -> dict[str, object]:
    """Wall times of :data:`PREDICTION_RUNS` through :func:`scheduler.simulate` on ``trace``.

    One warm-up call of each run (compilation or cache load), then ``repeat`` rounds that call
    every run once in turn, so a busy machine slows all of them alike; the ratio to plain EASY
    is taken within each round. Returns, per run, the median, min and max wall time (s) and of
    the ratio.
    """

    def caller(options: dict[str, Any]) -> Callable[[], object]:
        return lambda: simulate(trace, **options)

    calls = {label: caller(options or {}) for label, options in PREDICTION_RUNS.items()}
    _, times = side_by_side(calls, repeat, "plain EASY")
    return {"jobs": trace.jobs.height, "repeat": repeat, **times}


def _kth_requested_seconds(trace: Trace, repeat: int) -> float:
    """Best wall time (s) of the REQUESTED/easy variant over arrays (as ``kth_fcfs_s``)."""
    submit, procs, run, req, ids = job_arrays(trace)
    users = trace.jobs["user_id"].to_numpy()
    m = trace.machine_procs
    return best_seconds(
        lambda: simulate_predicted_arrays(submit, procs, run, req, users, m, job_id=ids), repeat
    )


def core_figures(inputs: BenchInputs, repeat: int = 5) -> Figures:
    """Measure every figure of the simulator's speed and memory targets (the module's docstring);
    ``repeat`` is the number of timed runs of each CEA-Curie figure. Returns the figures:
    wall times in seconds, job counts, the CEA-Curie machine size in processors and its
    simulation's peak memory in bytes per job (``curie_skipped`` when CEA-Curie is missing)."""
    figures: Figures = {}
    kth = filtered_log(inputs.kth_path, "KTH-SP2", inputs.catalogue)
    kth_arrays = job_arrays(kth)
    figures["kth_jobs"] = kth.jobs.height
    figures["kth_fcfs_s"] = best_seconds(engine_call(kth_arrays, kth.machine_procs, "FCFS"), 20)
    figures["kth_requested_s"] = _kth_requested_seconds(kth, 20)

    # a typical week: the one of median size among the log's weeks (~600 jobs for KTH-SP2)
    weeks = [one_week(kth_arrays, w) for w in range(48)]
    weeks.sort(key=lambda w: w[0].shape[0])
    week = weeks[len(weeks) // 2]
    figures["week_jobs"] = int(week[0].shape[0])
    figures["week_fcfs_s"] = median_seconds(
        lambda: simulate_arrays(*week[:4], kth.machine_procs, job_id=week[4], validate=False),
        200,
    )
    ten = tuple(a[:10] for a in week)
    figures["ten_jobs_call_s"] = median_seconds(
        lambda: simulate_arrays(*ten[:4], kth.machine_procs, job_id=ten[4], validate=False), 2000
    )
    figures["ten_jobs_validated_call_s"] = median_seconds(
        lambda: simulate_arrays(*ten[:4], kth.machine_procs, job_id=ten[4]), 2000
    )
    figures["fresh_process_week_s"] = _fresh_process_seconds(week, kth.machine_procs)

    curie_path = inputs.log_path("CEA-Curie")
    if curie_path.is_file():
        machine_procs = catalogue_machine_procs("CEA-Curie", inputs.catalogue)
        start = time.perf_counter()
        raw = read_swf(curie_path, machine_procs=machine_procs)
        figures["curie_read_s"] = time.perf_counter() - start
        curie = strong_filter(raw)[0]
        arrays = job_arrays(curie)
        m = curie.machine_procs
        figures["curie_jobs"] = curie.jobs.height
        figures["curie_machine_procs"] = m
        figures["curie_policy_s"] = {
            policy: best_seconds(engine_call(arrays, m, policy), repeat)
            for policy in STUDY_POLICIES
        }
        figures["curie_bytes_per_job"] = _peak_bytes_per_job(arrays, m)
        # the prediction study's filter: run times past the requested time clipped, not dropped
        clipped = strong_filter(raw, overrun="clip")[0]
        figures["curie_prediction"] = prediction_figures(clipped, repeat)
    else:
        figures["curie_skipped"] = f"not found: {curie_path}"
    return figures


def _prediction_lines(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"CEA-Curie, overrun clipped ({figures['jobs']} jobs), scheduler.simulate, "
        f"{figures['repeat']} rounds: median [min, max]"
    ]
    for label in PREDICTION_RUNS:
        f = figures[label]
        target = " (target <= 2x)" if label.startswith("nag") else ""
        lines.append("  " + timing_line(label, f, 27, target))
    return lines


def format_core_figures(figures: Mapping[str, Any]) -> list[str]:
    """Lines of :func:`core_figures`, with the simulator's targets beside each figure."""
    ms = 1e3
    lines = [
        f"KTH-SP2 ({figures['kth_jobs']} jobs) EASY-FCFS-FCFS: "
        f"{figures['kth_fcfs_s'] * ms:.1f} ms (target <= 15 ms); the prediction variant with "
        f"REQUESTED: {figures['kth_requested_s'] * ms:.1f} ms",
        f"one KTH week ({figures['week_jobs']} jobs) after warm-up: "
        f"{figures['week_fcfs_s'] * ms:.3f} ms (target <= 0.5 ms)",
        f"low-level call on 10 jobs: {figures['ten_jobs_call_s'] * 1e6:.1f} us without input "
        f"validation (target <= 50 us), {figures['ten_jobs_validated_call_s'] * 1e6:.1f} us with",
        f"fresh process, imports + one week: {figures['fresh_process_week_s']:.2f} s "
        "(target <= 2 s)",
    ]
    if "curie_policy_s" not in figures:
        return [*lines, f"CEA-Curie skipped: {figures['curie_skipped']}"]
    lines.append(f"CEA-Curie read: {figures['curie_read_s']:.2f} s (target well under 2 s)")
    lines.append(
        f"CEA-Curie ({figures['curie_jobs']} jobs, m = {figures['curie_machine_procs']}), "
        "primary = backfill:"
    )
    for policy, seconds in figures["curie_policy_s"].items():
        target = "0.5" if policy == "FCFS" else "3"
        lines.append(f"  {policy:5s} {seconds * ms:8.1f} ms (target <= {target} s)")
    lines.append(
        f"CEA-Curie simulation memory: {figures['curie_bytes_per_job']:.0f} bytes/job "
        "(target <= 300)"
    )
    lines.extend(_prediction_lines(figures["curie_prediction"]))
    return lines


GROUP = BenchGroup(
    name="core",
    help="the simulator's speed and memory targets: EASY-FCFS-FCFS on the whole KTH-SP2 "
    "(--kth), one of its weeks, a "
    "10-job call and a fresh process; on the whole CEA-Curie, its read, the 12 study policies, "
    "the memory per job and the prediction variant beside plain EASY",
    run=core_figures,
    format=format_core_figures,
    in_default_run=True,
)
