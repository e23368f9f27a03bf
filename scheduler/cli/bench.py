"""``scheduler bench``: benchmarks of the simulator core; prints figures, asserts nothing.

Each figure is the best (or median) of several repetitions of the simulation alone on one core,
after a warm-up run; reading a log is timed separately. ``docs/benchmarks.md`` records the
figures, the machine and the command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from scheduler.cli._minimal_easy import minimal_easy_fcfs
from scheduler.cli.arguments import add_command, add_json_argument
from scheduler.core.constants import WEEK_S
from scheduler.core.version import __version__
from scheduler.policies import STUDY_POLICIES
from scheduler.sim.api import simulate
from scheduler.sim.arrays import trace_arrays, week_arrays
from scheduler.sim.engine import Simulation, simulate_arrays
from scheduler.sim.memory import MemoryConfig, memory_jobs, simulate_memory
from scheduler.sim.metrics import with_job_metrics
from scheduler.sim.prediction import simulate_predicted_arrays
from scheduler.sim.redirection import pool_sizes, simulate_redirect
from scheduler.sim.trials import run_trials
from scheduler.studies.learned.convergence import score_convergence
from scheduler.traces.calendar import TraceCalendar
from scheduler.traces.filters import strong_filter
from scheduler.traces.memory import memory_filter, scale_to_load
from scheduler.traces.swf import Trace, read_swf, used_procs

__all__ = [
    "CONVERGENCE_TRIALS",
    "PREDICTION_RUNS",
    "REDIRECT_BENCH_ALPHA",
    "REDIRECT_BENCH_THETA",
    "THRESHOLD_BACKFILL_LOGS",
    "TRIALS_TARGET_PER_MIN",
    "add_commands",
    "cmd_bench",
    "format_figures",
    "format_redirection_figures",
    "format_trial_figures",
    "main_bench",
    "most_loaded_week",
    "prediction_figures",
    "redirection_figures",
    "run_benchmarks",
    "threshold_backfill_figures",
    "trial_figures",
    "window_tuples",
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

#: Target of issue #13: 48-job list schedules (trials) per minute on one core.
TRIALS_TARGET_PER_MIN = 2_000_000
#: Trial counts of the convergence curve; the published study stopped at 256,000.
CONVERGENCE_TRIALS = (1_000, 4_000, 16_000, 64_000, 256_000)

#: Dedicated share α and threshold θ (submissions) of the redirection benchmark on CEA-Curie's
#: most loaded week; θ gives a few dozen redirections there (``docs/benchmarks.md``).
REDIRECT_BENCH_ALPHA = 0.1
REDIRECT_BENCH_THETA = 300.0

#: The logs of the full online study (``config/full.yaml``, ``online.traces``), and the machine
#: sizes that differ from the log's header (``config/traces.yaml``).
THRESHOLD_BACKFILL_LOGS = (
    "KTH-SP2", "CTC-SP2", "SDSC-SP2", "SDSC-BLUE", "ANL-Intrepid", "CEA-Curie", "UniLu-Gaia",
)  # fmt: skip
LOG_MACHINE_PROCS = {"CEA-Curie": 80640}
#: Θ of the online study (``online.threshold``), seconds.
ONLINE_THRESHOLD_S = 40 * 3600.0

JobArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def add_commands(commands: Any) -> None:
    """Add ``scheduler bench`` (speed and memory figures of the simulator core).

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    repo = Path(__file__).resolve().parents[2]  # scheduler/cli/bench.py -> the repository
    command = add_command(
        commands, "bench", cmd_bench, "measure the simulator's speed and memory (prints figures)"
    )
    command.add_argument(
        "--traces-dir", type=Path, default=repo.parent / "shared" / "traces",
        help="directory holding CEA-Curie.swf.gz (default: ../shared/traces)",
    )  # fmt: skip
    command.add_argument(
        "--kth", type=Path, default=repo / "resources" / "KTH-SP2.swf.gz",
        help="the KTH-SP2 log (default: the bundled copy)",
    )  # fmt: skip
    command.add_argument(
        "--only",
        choices=(
            "trials", "redirection", "memory", "threshold-backfill", "threshold-sweep", "online",
            "kernel",
        ),
        default=None,
        help="run one group of figures only: trials (the learned-priority study's trials, "
        "on Lublin-256.swf.gz in --traces-dir), redirection (the redirection variant beside "
        "plain EASY on CEA-Curie's most loaded week), memory (the memory-aware variant on "
        "the whole LANL-CM5.swf.gz) or threshold-backfill (EASY(P, P, 40 h) of the 12 online "
        "policies with the plain and the thresholded backfill order on the whole filtered logs "
        "of the full online study; not in the default run) or threshold-sweep (the "
        "queue-tuning study's thresholds of a pair run separately, with the MaxWait copy, and "
        "sharing the unthresholded prefix, on resampled KTH-SP2 and CEA-Curie weeks; not in "
        "the default run) or online (an online study's switching runs against fixed FCFS on "
        "one SDSC-BLUE two-year replica; not in the default run) or kernel (EASY-FCFS-FCFS "
        "against a minimal compiled loop on the whole KTH-SP2 and CEA-Curie, and the 12 study "
        "policies side by side on CEA-Curie; not in the default run)",
    )  # fmt: skip
    add_json_argument(command)


def cmd_bench(args: argparse.Namespace) -> int:
    """Run ``scheduler bench``.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    return main_bench(args.traces_dir, args.kth, args.json, only=args.only)


def _arrays(trace: Trace) -> JobArrays:
    """submit, procs, run, requested time, job id of a filtered trace (float64)."""
    jobs = trace.jobs
    return tuple(  # type: ignore[return-value]
        jobs[c].to_numpy().astype(np.float64)
        for c in ("submit_s", "alloc_procs", "run_s", "req_time_s", "job_id")
    )


def _timings(action: Callable[[], object], repeat: int) -> np.ndarray:
    """Wall times (s) of ``repeat`` calls of ``action`` after one warm-up call (kernel load)."""
    action()
    times = np.empty(repeat)
    for i in range(repeat):
        start = time.perf_counter()
        action()
        times[i] = time.perf_counter() - start
    return times


def _best_seconds(action: Callable[[], object], repeat: int) -> float:
    return float(_timings(action, repeat).min())


def _median_seconds(action: Callable[[], object], repeat: int) -> float:
    return float(np.median(_timings(action, repeat)))


def _simulation_seconds(arrays: JobArrays, m: int, policy: str, repeat: int) -> float:
    return _best_seconds(_engine_call(arrays, m, policy), repeat)


def one_week(arrays: JobArrays, week_index: int) -> JobArrays:
    """The jobs submitted during one week of a log, shifted to start at 0 s."""
    submit = arrays[0]
    t0 = submit[0] + week_index * WEEK_S
    keep = (submit >= t0) & (submit < t0 + WEEK_S)
    week = tuple(a[keep] for a in arrays)
    return (week[0] - t0, *week[1:])  # type: ignore[return-value]


def _peak_bytes_per_job(arrays: JobArrays, m: int) -> float:
    """Peak memory allocated by one FCFS simulation (state, keys, results), per job.

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
    """Wall time of a new Python process that imports schedlab and simulates one week."""
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


def side_by_side(
    calls: dict[str, Callable[[], object]], repeat: int, reference: str
) -> tuple[dict[str, object], dict[str, dict[str, float]]]:
    """Time ``calls`` side by side: one warm-up call of each (compilation or cache load; its
    result is returned), then ``repeat`` rounds calling every one once in turn, so a busy
    machine slows all of them alike; the ratio to ``reference`` is taken within each round.
    Returns the warm-up outputs and, per label, the median, min and max wall time (s) and of the
    ratio."""
    outputs = {label: call() for label, call in calls.items()}
    times = {label: np.empty(repeat) for label in calls}
    for i in range(repeat):
        for label, call in calls.items():
            start = time.perf_counter()
            call()
            times[label][i] = time.perf_counter() - start
    figures: dict[str, dict[str, float]] = {}
    for label, seconds in times.items():
        ratio = seconds / times[reference]
        figures[label] = {
            "median_s": float(np.median(seconds)), "min_s": float(seconds.min()),
            "max_s": float(seconds.max()), "ratio_median": float(np.median(ratio)),
            "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
        }  # fmt: skip
    return outputs, figures


def timing_line(label: str, f: dict[str, Any], width: int, suffix: str = "") -> str:
    """``label  median ms [min, max]  x ratio [min, max]`` of one :func:`side_by_side` entry."""
    ms = 1e3
    return (
        f"{label:{width}s} {f['median_s'] * ms:7.1f} ms [{f['min_s'] * ms:.1f}, "
        f"{f['max_s'] * ms:.1f}]  x{f['ratio_median']:.2f} [{f['ratio_min']:.2f}, "
        f"{f['ratio_max']:.2f}]{suffix}"
    )


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
    submit, procs, run, req, ids = _arrays(trace)
    users = trace.jobs["user_id"].to_numpy()
    m = trace.machine_procs
    return _best_seconds(
        lambda: simulate_predicted_arrays(submit, procs, run, req, users, m, job_id=ids), repeat
    )


def window_tuples(
    trace: Trace, count: int, size: int = 48
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The first ``count`` consecutive, non-overlapping windows of ``size`` jobs of ``trace``,
    each as (submit times relative to the window's first job (s), processors, run times (s))."""
    jobs = trace.jobs
    submit = jobs["submit_s"].to_numpy().astype(np.float64)
    procs = jobs["alloc_procs"].to_numpy().astype(np.int64)
    run = jobs["run_s"].to_numpy().astype(np.float64)
    if count * size > submit.shape[0]:
        raise ValueError(f"{count} windows of {size} jobs need {count * size} jobs, "
                         f"the trace has {submit.shape[0]}")  # fmt: skip
    out = []
    for w in range(count):
        part = slice(w * size, (w + 1) * size)
        out.append((submit[part] - submit[part][0], procs[part], run[part]))
    return out


def trial_figures(
    lublin_path: Path,
    *,
    windows: int = 20,
    trials: int = 20_000,
    repeat: int = 5,
    trial_counts: tuple[int, ...] = CONVERGENCE_TRIALS,
    repetitions: int = 10,
) -> dict[str, object]:
    """Speed of the learned-priority study's trials and the convergence of one tuple's scores.

    Tuples are ``windows`` consecutive 48-job windows of the Lublin-256 log (|S| = 16,
    |Q| = 32, m = 256). After one warm-up call (compilation or cache load), each of ``repeat``
    rounds runs ``trials`` drawn trials on every window (:func:`scheduler.sim.trials.run_trials`,
    validation included); the rate is trials (48-job list schedules) per minute on one core,
    median, min and max over the rounds. The convergence curve is
    :func:`~scheduler.studies.learned.convergence.score_convergence` on the first window.
    """
    trace = read_swf(lublin_path, machine_procs=256)
    tuples = window_tuples(trace, windows)
    run_trials(*tuples[0], n_trials=10, seed=0)
    rates = np.empty(repeat)
    for i in range(repeat):
        start = time.perf_counter()
        for w, arrays in enumerate(tuples):
            run_trials(*arrays, n_trials=trials, seed=i * windows + w)
        rates[i] = windows * trials / (time.perf_counter() - start) * 60.0
    start = time.perf_counter()
    curve = score_convergence(
        *tuples[0], trial_counts=trial_counts, repetitions=repetitions, seed=2017
    )
    curve_s = time.perf_counter() - start
    return {
        "windows": windows, "trials_per_window": trials, "repeat": repeat,
        "trials_per_min_median": float(np.median(rates)),
        "trials_per_min_min": float(rates.min()), "trials_per_min_max": float(rates.max()),
        "target_per_min": TRIALS_TARGET_PER_MIN,
        "convergence": curve.to_dicts(), "convergence_s": curve_s,
    }  # fmt: skip


def format_trial_figures(figures: dict[str, Any]) -> list[str]:
    """Lines of :func:`trial_figures`: the rate beside its target, then the curve."""
    ratio = figures["trials_per_min_median"] / figures["target_per_min"]
    lines = [
        f"trials (48-job list schedules, Lublin-256 windows, m = 256), {figures['windows']} "
        f"tuples x {figures['trials_per_window']:,} trials, {figures['repeat']} rounds: "
        f"{figures['trials_per_min_median'] / 1e6:.1f} M/min/core median "
        f"[{figures['trials_per_min_min'] / 1e6:.1f}, {figures['trials_per_min_max'] / 1e6:.1f}]"
        f" (target >= {figures['target_per_min'] / 1e6:.0f} M/min: x{ratio:.1f})",
        f"score convergence, first window ({figures['convergence_s']:.1f} s): trials, "
        "normalised std (mean over jobs of std/mean over repetitions), worst job",
    ]
    for row in figures["convergence"]:
        lines.append(
            f"  {row['trials']:>8,}  {row['normalised_std']:.4f}  {row['max_normalised_std']:.4f}"
            f"  ({row['repetitions']} repetitions)"
        )
    return lines


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


def _redirection_part(traces_dir: Path) -> dict[str, object]:
    curie = traces_dir / "CEA-Curie.swf.gz"
    if not curie.is_file():
        return {"redirection_skipped": f"not found: {curie}"}
    trace = strong_filter(read_swf(curie, machine_procs=80640))[0]
    return {"redirection": redirection_figures(trace)}


def _redirection_lines(figures: dict[str, object]) -> list[str]:
    if "redirection" in figures:
        return format_redirection_figures(figures["redirection"])  # type: ignore[arg-type]
    return [f"redirection skipped: {figures.get('redirection_skipped')}"]


def run_benchmarks(traces_dir: Path, kth_path: Path, repeat: int = 5) -> dict[str, object]:
    """Measure every figure of issue #2's speed and memory targets; returns them as a dict."""
    figures = _header()
    kth = strong_filter(read_swf(kth_path))[0]
    kth_arrays = _arrays(kth)
    figures["kth_jobs"] = kth.jobs.height
    figures["kth_fcfs_s"] = _simulation_seconds(kth_arrays, kth.machine_procs, "FCFS", 20)
    figures["kth_requested_s"] = _kth_requested_seconds(kth, 20)

    # a typical week: the one of median size among the log's weeks (~600 jobs for KTH-SP2)
    weeks = [one_week(kth_arrays, w) for w in range(48)]
    weeks.sort(key=lambda w: w[0].shape[0])
    week = weeks[len(weeks) // 2]
    figures["week_jobs"] = int(week[0].shape[0])
    figures["week_fcfs_s"] = _median_seconds(
        lambda: simulate_arrays(*week[:4], kth.machine_procs, job_id=week[4], validate=False),
        200,
    )
    ten = tuple(a[:10] for a in week)
    figures["ten_jobs_call_s"] = _median_seconds(
        lambda: simulate_arrays(*ten[:4], kth.machine_procs, job_id=ten[4], validate=False), 2000
    )
    figures["ten_jobs_validated_call_s"] = _median_seconds(
        lambda: simulate_arrays(*ten[:4], kth.machine_procs, job_id=ten[4]), 2000
    )
    figures["fresh_process_week_s"] = _fresh_process_seconds(week, kth.machine_procs)

    curie_path = traces_dir / "CEA-Curie.swf.gz"
    if curie_path.is_file():
        start = time.perf_counter()
        raw = read_swf(curie_path, machine_procs=80640)
        figures["curie_read_s"] = time.perf_counter() - start
        curie = strong_filter(raw)[0]
        arrays = _arrays(curie)
        figures["curie_jobs"] = curie.jobs.height
        figures["curie_policy_s"] = {
            policy: _simulation_seconds(arrays, 80640, policy, repeat) for policy in STUDY_POLICIES
        }
        figures["curie_bytes_per_job"] = _peak_bytes_per_job(arrays, 80640)
        # the prediction study's filter: run times past the requested time clipped, not dropped
        clipped = strong_filter(raw, overrun="clip")[0]
        figures["curie_prediction"] = prediction_figures(clipped, repeat)
        figures["redirection"] = redirection_figures(curie)
    else:
        figures["curie_skipped"] = f"not found: {curie_path}"
    figures.update(_trials_part(traces_dir))
    figures.update(_memory_part(traces_dir))
    return figures


#: The memory-aware runs of the benchmark: (label, scheduler, estimator, feedback).
MEMORY_RUNS: tuple[tuple[str, str, str, str], ...] = (
    ("FCFS, no estimation", "fcfs", "none", "implicit"),
    ("FCFS, perceptron implicit", "fcfs", "perceptron", "implicit"),
    ("FCFS, perceptron explicit", "fcfs", "perceptron", "explicit"),
    ("FCFS, history", "fcfs", "history", "implicit"),
    ("EASY, no estimation", "easy", "none", "implicit"),
    ("EASY, perceptron implicit", "easy", "perceptron", "implicit"),
    ("EASY, perceptron explicit", "easy", "perceptron", "explicit"),
    ("EASY, history", "easy", "history", "implicit"),
)
#: Offered loads of the memory benchmark: the log's own, and the saturated end of the sweep.
MEMORY_BENCH_LOADS: tuple[float | None, ...] = (None, 1.2)


def memory_figures(trace: Trace, repeat: int = 5) -> dict[str, object]:
    """Wall times of the memory-aware variant on a whole log (512 × 32 MB + 512 × 24 MB).

    The log goes through :func:`scheduler.traces.memory.memory_filter` (requests below use
    raised); each run is :func:`scheduler.sim.memory.simulate_memory` on the converted table
    (conversion and validation included), at the log's own offered load and scaled to 1.2.
    One warm-up call of each run, then ``repeat`` rounds calling every run in turn; plain EASY
    of the base engine on the same jobs (the whole machine as one class of identical nodes) is
    timed in the same rounds, and each run's ratio to it is taken within a round. Returns per
    load and run the median, min and max wall time (s), the ratio, and the run's summary.
    """
    jobs, report = memory_filter(trace.jobs, trace.machine_procs, largest_node_kb=32 * 1024)
    out: dict[str, object] = {"jobs": jobs.height, "filter": report, "repeat": repeat}
    for load in MEMORY_BENCH_LOADS:
        table = jobs if load is None else scale_to_load(jobs, 1024, load)
        engine = memory_jobs(table)
        plain = Trace(
            jobs=table.with_columns(pl.col("submit_s").round().cast(pl.Int64)),
            header=trace.header, machine_procs=1024,
        )  # fmt: skip
        calls: dict[str, Callable[[], object]] = {
            "plain EASY (base engine)": lambda plain=plain: simulate(plain)
        }
        for label, scheduler, estimator, feedback in MEMORY_RUNS:
            config = MemoryConfig(scheduler=scheduler, estimator=estimator, feedback=feedback)
            calls[label] = lambda config=config, engine=engine: simulate_memory(engine, config)
        outputs, times = side_by_side(calls, repeat, "plain EASY (base engine)")
        part: dict[str, object] = {}
        for label, figures in times.items():
            result: Any = outputs[label]
            part[label] = {**figures, "summary": result.summary.to_dict()}
        out["native" if load is None else f"load {load:g}"] = part
    return out


def format_memory_figures(figures: dict[str, Any]) -> list[str]:
    """Lines of :func:`memory_figures`."""
    lines = [
        f"LANL-CM5 after the memory filter ({figures['jobs']} jobs; 512 x 32 MB + 512 x 24 MB), "
        f"{figures['repeat']} rounds: median [min, max], ratio to plain EASY of the base engine"
    ]
    for key, part in figures.items():
        if not isinstance(part, dict) or "plain EASY (base engine)" not in part:
            continue
        lines.append(f"  offered load: {key}")
        for label, f in part.items():
            summary = f["summary"]
            extra = (
                f"  eff. util {summary['utilisation']:.3f}, "
                f"{summary['failed_runs']} failed runs"
                if "failed_runs" in summary
                else ""
            )
            target = " (target <= 1 s)" if "perceptron" in label else ""
            lines.append("    " + timing_line(label, f, 27, target + extra))
    return lines


def _memory_part(traces_dir: Path) -> dict[str, object]:
    lanl = traces_dir / "LANL-CM5.swf.gz"
    if not lanl.is_file():
        return {"memory_skipped": f"not found: {lanl}"}
    return {"memory": memory_figures(read_swf(lanl), repeat=3)}


def _memory_lines(figures: dict[str, object]) -> list[str]:
    if "memory" in figures:
        return format_memory_figures(figures["memory"])  # type: ignore[arg-type]
    return [f"memory skipped: {figures.get('memory_skipped')}"]


def threshold_backfill_figures(
    traces_dir: Path,
    *,
    logs: tuple[str, ...] = THRESHOLD_BACKFILL_LOGS,
    policies: tuple[str, ...] = STUDY_POLICIES,
    threshold_s: float = ONLINE_THRESHOLD_S,
) -> dict[str, object]:
    """EASY(P, P, Θ) with the plain and the thresholded backfill order on whole logs.

    Each log ``traces_dir/<name>.swf.gz`` is read and strong-filtered as the workflow's
    ``filter_trace`` rule does (machine size from :data:`LOG_MACHINE_PROCS`, else the header;
    overruns dropped), then simulated whole for every policy of ``policies`` as primary and
    backfill order with Θ = ``threshold_s``, the estimate being the requested time (as the online
    study's live system), once with ``threshold_backfill=False`` and once with ``True``
    (Algorithm 2). Returns per log its job count and machine size and, per policy and order,
    AvgWait and MaxWait (s), the backfilled jobs and the simulation's wall time (s); logs
    missing from ``traces_dir`` are listed under ``skipped``.
    """
    out: dict[str, object] = {"threshold_s": threshold_s, "policies": list(policies)}
    results: dict[str, object] = {}
    skipped = []
    for name in logs:
        path = traces_dir / f"{name}.swf.gz"
        if not path.is_file():
            skipped.append(str(path))
            continue
        trace = strong_filter(read_swf(path, machine_procs=LOG_MACHINE_PROCS.get(name)))[0]
        arrays = trace_arrays(trace.jobs, trace.machine_procs, source=name)
        wait_of = {}
        for policy in policies:
            for flag in (False, True):
                simulation = Simulation(
                    arrays.submit_s, arrays.procs, arrays.run_s, arrays.estimate_s,
                    trace.machine_procs, job_id=arrays.job_id, validate=False,
                )  # fmt: skip
                start = time.perf_counter()
                simulation.run(
                    primary=policy, backfill=policy, threshold_s=threshold_s,
                    threshold_backfill=flag,
                )  # fmt: skip
                seconds = time.perf_counter() - start
                wait = simulation.start_s - arrays.submit_s
                wait_of[f"{policy}/{'thresholded' if flag else 'plain'}"] = {
                    "avg_wait_s": float(wait.mean()), "max_wait_s": float(wait.max()),
                    "backfilled_jobs": int(simulation.backfilled.sum()), "seconds": seconds,
                }  # fmt: skip
        results[name] = {"jobs": arrays.jobs, "machine_procs": trace.machine_procs, **wait_of}
    out["logs"] = results
    out["skipped"] = skipped
    return out


def _change_percent(new: float, old: float) -> str:
    """The relative change in percent (``0`` when equal, ``n/a`` from 0), signed."""
    if new == old:
        return "0"
    return f"{round((new - old) / old * 100, 2) + 0.0:+.2f}" if old else "n/a"


def format_threshold_backfill_figures(figures: dict[str, Any]) -> list[str]:
    """A markdown table of :func:`threshold_backfill_figures`: one row per log and policy."""
    hours = 3600.0
    lines = [
        f"EASY(P, P, {figures['threshold_s'] / hours:g} h) on the whole filtered logs: backfill "
        "order of P (plain) vs thresholded (Algorithm 2); waits in hours",
        "",
        "| log | P | AvgWait plain | AvgWait thresholded | change % | MaxWait plain | "
        "MaxWait thresholded | change % |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    total_s = 0.0
    for name, log in figures["logs"].items():
        for policy in figures["policies"]:
            plain, new = log[f"{policy}/plain"], log[f"{policy}/thresholded"]
            total_s += plain["seconds"] + new["seconds"]
            lines.append(
                f"| {name} | {policy} | {plain['avg_wait_s'] / hours:.3f} | "
                f"{new['avg_wait_s'] / hours:.3f} | "
                f"{_change_percent(new['avg_wait_s'], plain['avg_wait_s'])} | "
                f"{plain['max_wait_s'] / hours:.1f} | {new['max_wait_s'] / hours:.1f} | "
                f"{_change_percent(new['max_wait_s'], plain['max_wait_s'])} |"
            )
    lines.append("")
    sizes = [f"{name} {log['jobs']:,} jobs (m = {log['machine_procs']})"
             for name, log in figures["logs"].items()]  # fmt: skip
    lines.append(", ".join(sizes) + f"; simulations {total_s:.1f} s in all")
    for path in figures["skipped"]:
        lines.append(f"skipped (not found): {path}")
    return lines


#: The thresholds of the queue-tuning study (config/full.yaml), in hours; 0 is none.
SWEEP_THRESHOLD_H = (0, 5, 10, 20, 40, 80)


def threshold_sweep_figures(
    traces_dir: Path, kth_path: Path, *, weeks: int = 20, seed: int = 1
) -> dict[str, object]:
    """The queue-tuning study's week simulations of one pair under its six thresholds, three
    ways, timed side by side week by week: every threshold run separately; separately but
    copying the unthresholded run for weeks whose MaxWait is <= Θ (the study before issue
    #17); and :func:`scheduler.sim.sweep.simulate_thresholds` (the study now). ``weeks`` weeks
    are resampled from the training half of KTH-SP2 (``kth_path``) and of CEA-Curie (in
    ``traces_dir``) as the study does; each of the 12 study policies is the pair (P, P). The
    three ways' start times are checked equal. Returns per log the jobs per week and the
    seconds of each way."""
    from scheduler.sim.sweep import simulate_thresholds
    from scheduler.traces.resample import resample_weeks, split_at_midpoint

    thresholds = [h * 3600.0 if h else np.inf for h in SWEEP_THRESHOLD_H]
    out: dict[str, object] = {"thresholds_h": list(SWEEP_THRESHOLD_H), "weeks": weeks}
    logs: dict[str, object] = {}
    for name, path in (("KTH-SP2", kth_path), ("CEA-Curie", traces_dir / "CEA-Curie.swf.gz")):
        if not path.is_file():
            out.setdefault("skipped", []).append(str(path))  # type: ignore[union-attr]
            continue
        trace = strong_filter(read_swf(path, machine_procs=LOG_MACHINE_PROCS.get(name)))[0]
        train = split_at_midpoint(trace.jobs, name=name)["train"]
        table = resample_weeks(train, range(weeks), seed=seed, trace=name, split="train")
        arrays = week_arrays(table, trace.machine_procs, source=name)
        m = trace.machine_procs
        seconds = {"separate": 0.0, "copy": 0.0, "sweep": 0.0}
        for policy in STUDY_POLICIES:
            for k in range(arrays.week_index.size):
                lo, hi = arrays.bounds[k], arrays.bounds[k + 1]
                week = (arrays.submit_s[lo:hi], arrays.procs[lo:hi], arrays.run_s[lo:hi],
                        arrays.estimate_s[lo:hi], m)  # fmt: skip
                options = {"primary": policy, "backfill": policy, "job_id": arrays.job_id[lo:hi],
                           "validate": False}  # fmt: skip
                started = time.perf_counter()
                separate = [simulate_arrays(*week, threshold_s=t, **options) for t in thresholds]
                seconds["separate"] += time.perf_counter() - started
                started = time.perf_counter()
                base = simulate_arrays(*week, **options)
                max_wait = float((base - week[0]).max())
                copied = [base if np.isinf(t) or max_wait <= t
                          else simulate_arrays(*week, threshold_s=t, **options)
                          for t in thresholds]  # fmt: skip
                seconds["copy"] += time.perf_counter() - started
                started = time.perf_counter()
                swept = simulate_thresholds(*week, thresholds, **options)
                seconds["sweep"] += time.perf_counter() - started
                for a, b, c in zip(separate, copied, swept, strict=True):
                    if not (np.array_equal(a, b) and np.array_equal(a, c)):
                        raise AssertionError(f"{name} {policy} week {k}: the three ways differ")
        logs[name] = {"jobs_per_week": float(arrays.bounds[-1]) / arrays.week_index.size, **seconds}
    out["logs"] = logs
    return out


def format_threshold_sweep_figures(figures: dict[str, Any]) -> list[str]:
    """Lines of :func:`threshold_sweep_figures`: seconds of each way and the ratios."""
    lines = [
        f"queue-tuning weeks, 12 pairs (P, P) x Θ in {figures['thresholds_h']} h (0: none), "
        f"{figures['weeks']} resampled training weeks per log, same results checked:"
    ]
    for name, log in figures["logs"].items():
        lines.append(
            f"  {name} ({log['jobs_per_week']:.0f} jobs/week): separate {log['separate']:.2f} s, "
            f"MaxWait copy {log['copy']:.2f} s, shared prefix {log['sweep']:.2f} s; "
            f"shared / copy = {log['sweep'] / log['copy']:.2f}, "
            f"shared / separate = {log['sweep'] / log['separate']:.2f}"
        )
    for path in figures.get("skipped", []):
        lines.append(f"  skipped (not found): {path}")
    return lines


def kernel_figures(traces_dir: Path, kth_path: Path, repeat: int = 5) -> dict[str, object]:
    """Issue #17's kernel ratios, each timed side by side (:func:`side_by_side`) on whole
    filtered logs, a simulation being ``Simulation(...)`` then ``run`` (keys and state built
    in the call):

    - KTH-SP2 and CEA-Curie: EASY-FCFS-FCFS in the engine against the minimal compiled loop of
      :mod:`scheduler.cli._minimal_easy` (the speed-of-light reference), start times checked
      equal;
    - CEA-Curie: EASY(P, P) for each of the 12 study policies P, ratio to FCFS.

    Returns per log the jobs and the :func:`side_by_side` figures."""
    out: dict[str, object] = {"repeat": repeat}
    for name, path in (("KTH-SP2", kth_path), ("CEA-Curie", traces_dir / "CEA-Curie.swf.gz")):
        if not path.is_file():
            out.setdefault("skipped", []).append(str(path))  # type: ignore[union-attr]
            continue
        trace = strong_filter(read_swf(path, machine_procs=LOG_MACHINE_PROCS.get(name)))[0]
        arrays = _arrays(trace)
        m = trace.machine_procs
        calls = {"minimal": _minimal_call(arrays, m),
                 "engine": _engine_call(arrays, m, "FCFS")}  # fmt: skip
        outputs, light = side_by_side(calls, repeat, "minimal")
        if not np.array_equal(outputs["minimal"], outputs["engine"], equal_nan=True):
            raise AssertionError(f"{name}: the minimal loop and the engine differ")
        log: dict[str, object] = {"jobs": trace.jobs.height, "speed_of_light": light}
        if name == "CEA-Curie":
            policies = {policy: _engine_call(arrays, m, policy) for policy in STUDY_POLICIES}
            log["policies"] = side_by_side(policies, repeat, "FCFS")[1]
        out[name] = log
    return out


def _engine_call(arrays: JobArrays, m: int, policy: str) -> Callable[[], np.ndarray]:
    """A call simulating EASY(policy, policy) on ``arrays`` from scratch; returns start times."""
    submit, procs, run, req, ids = arrays

    def call() -> np.ndarray:
        simulation = Simulation(submit, procs, run, req, m, job_id=ids, validate=False)
        simulation.run(primary=policy, backfill=policy)
        return simulation.start_s

    return call


def _minimal_call(arrays: JobArrays, m: int) -> Callable[[], np.ndarray]:
    """The same run as ``_engine_call(arrays, m, "FCFS")`` in the minimal loop."""
    submit, procs, run, req, ids = arrays
    return lambda: minimal_easy_fcfs(submit, procs, run, req, ids, m)


def format_kernel_figures(figures: dict[str, Any]) -> list[str]:
    """Lines of :func:`kernel_figures`: median [min, max] wall times and ratios."""
    lines = [f"whole filtered logs, side by side, {figures['repeat']} rounds: median [min, max]"]
    for name in ("KTH-SP2", "CEA-Curie"):
        if name not in figures:
            continue
        log = figures[name]
        lines.append(f"{name} ({log['jobs']:,} jobs), EASY-FCFS-FCFS, ratio to the minimal "
                     "loop (target <= 1.3):")  # fmt: skip
        for label, f in log["speed_of_light"].items():
            lines.append("  " + timing_line(label, f, 8))
        if "policies" in log:
            lines.append(f"{name}, EASY(P, P), ratio to FCFS (target: slowest <= 1.5):")
            for label, f in log["policies"].items():
                lines.append("  " + timing_line(label, f, 5))
    for path in figures.get("skipped", []):
        lines.append(f"  skipped (not found): {path}")
    return lines


#: The online study's selectors timed by ``--only online`` (Δ = 1 day), against fixed FCFS.
ONLINE_BENCH_SPECS = ("fixed:FCFS", "random", "bandit(eps=0.1)", "ucb", "fixed:LEXP")


def online_switching_figures(
    traces_dir: Path, *, log: str = "SDSC-BLUE", replica: int = 0, seed: int = 1, repeat: int = 3
) -> dict[str, object]:
    """One two-year replica of ``log`` (built as the online study builds its long traces,
    weeks cut from the first submission), run live with Δ = 1 day (periods from the first
    submission) by each selector of :data:`ONLINE_BENCH_SPECS` over the 12 study policies
    (Θ = 40 h, thresholded backfill order), the selectors' random draws seeded alike. Returns
    the jobs and, per selector, the best of ``repeat`` wall times (s) of ``run_online``, the
    selectors interleaved round by round so that they share the machine's state."""
    from scheduler.studies.online.live import run_online
    from scheduler.studies.online.long_traces import long_trace
    from scheduler.studies.online.selectors import make_selector

    path = traces_dir / f"{log}.swf.gz"
    if not path.is_file():
        return {"skipped": str(path)}
    trace = strong_filter(read_swf(path, machine_procs=LOG_MACHINE_PROCS.get(log)))[0]
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


def format_online_switching_figures(figures: dict[str, Any]) -> list[str]:
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


def _trials_part(traces_dir: Path) -> dict[str, object]:
    lublin = traces_dir / "Lublin-256.swf.gz"
    if not lublin.is_file():
        return {"trials_skipped": f"not found: {lublin}"}
    return {"trials": trial_figures(lublin)}


def _header() -> dict[str, object]:
    return {
        "schedlab": __version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.processor() or ''}",
    }


def format_figures(figures: dict[str, object]) -> str:
    """Human-readable lines, with the targets of issue #2 beside each figure."""
    ms = 1e3
    header = f"schedlab {figures['schedlab']}, Python {figures['python']}, {figures['machine']}"
    if "kth_jobs" not in figures:  # --only trials / redirection / memory / threshold-backfill
        if "threshold_backfill" in figures:
            part = format_threshold_backfill_figures(figures["threshold_backfill"])  # type: ignore[arg-type]
        elif "kernel" in figures:
            part = format_kernel_figures(figures["kernel"])  # type: ignore[arg-type]
        elif "online" in figures:
            part = format_online_switching_figures(figures["online"])  # type: ignore[arg-type]
        elif "threshold_sweep" in figures:
            part = format_threshold_sweep_figures(figures["threshold_sweep"])  # type: ignore[arg-type]
        elif any(key.startswith("trials") for key in figures):
            part = _trials_lines(figures)
        elif any(key.startswith("memory") for key in figures):
            part = _memory_lines(figures)
        else:
            part = _redirection_lines(figures)
        return "\n".join([header, *part])
    lines = [
        header,
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
    if "curie_policy_s" in figures:
        lines.append(f"CEA-Curie read: {figures['curie_read_s']:.2f} s (target well under 2 s)")
        lines.append(f"CEA-Curie ({figures['curie_jobs']} jobs, m = 80640), primary = backfill:")
        for policy, seconds in figures["curie_policy_s"].items():  # type: ignore[union-attr]
            target = "0.5" if policy == "FCFS" else "3"
            lines.append(f"  {policy:5s} {seconds * ms:8.1f} ms (target <= {target} s)")
        lines.append(
            f"CEA-Curie simulation memory: {figures['curie_bytes_per_job']:.0f} bytes/job "
            "(target <= 300)"
        )
        lines.extend(_prediction_lines(figures["curie_prediction"]))  # type: ignore[arg-type]
        lines.extend(_redirection_lines(figures))
    else:
        lines.append(f"CEA-Curie skipped: {figures['curie_skipped']}")
    lines.extend(_trials_lines(figures))
    lines.extend(_memory_lines(figures))
    return "\n".join(lines)


def _trials_lines(figures: dict[str, object]) -> list[str]:
    if "trials" in figures:
        return format_trial_figures(figures["trials"])  # type: ignore[arg-type]
    return [f"trials skipped: {figures.get('trials_skipped')}"]


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


def main_bench(traces_dir: Path, kth_path: Path, as_json: bool, only: str | None = None) -> int:
    """Run and print the benchmarks (the ``scheduler bench`` command); ``only="trials"``: the
    trials figures alone."""
    if only == "trials":
        figures = {**_header(), **_trials_part(traces_dir)}
    elif only == "redirection":
        figures = {**_header(), **_redirection_part(traces_dir)}
    elif only == "memory":
        figures = {**_header(), **_memory_part(traces_dir)}
    elif only == "threshold-backfill":
        figures = {**_header(), "threshold_backfill": threshold_backfill_figures(traces_dir)}
    elif only == "kernel":
        figures = {**_header(), "kernel": kernel_figures(traces_dir, kth_path)}
    elif only == "online":
        figures = {**_header(), "online": online_switching_figures(traces_dir)}
    elif only == "threshold-sweep":
        figures = {**_header(), "threshold_sweep": threshold_sweep_figures(traces_dir, kth_path)}
    else:
        figures = run_benchmarks(traces_dir, kth_path)
    print(json.dumps(figures, indent=2) if as_json else format_figures(figures))
    return 0
