"""The ``trials`` group: the learned-priority study's trials (48-job list schedules)
on windows of the Lublin-256 log, and the convergence of one tuple's scores."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from scheduler.cli.bench.group import log_group
from scheduler.sim.trials import run_trials
from scheduler.studies.learned.convergence import score_convergence
from scheduler.traces.swf import Trace, read_swf

__all__ = [
    "CONVERGENCE_TRIALS",
    "GROUP",
    "LUBLIN_MACHINE_PROCS",
    "TRIALS_TARGET_PER_MIN",
    "format_trial_figures",
    "trial_figures",
    "window_tuples",
]

#: The trials target: 48-job list schedules (trials) per minute on one core.
TRIALS_TARGET_PER_MIN = 2_000_000
#: Trial counts of the convergence curve; the published study stopped at 256,000.
CONVERGENCE_TRIALS = (1_000, 4_000, 16_000, 64_000, 256_000)
#: Machine size of the Lublin-256 model log, processors (a workload model, not an archive log
#: of the trace catalogue; its header gives MaxNodes only).
LUBLIN_MACHINE_PROCS = 256


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
    trace = read_swf(lublin_path, machine_procs=LUBLIN_MACHINE_PROCS)
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
        f"trials (48-job list schedules, Lublin-256 windows, m = {LUBLIN_MACHINE_PROCS}), "
        f"{figures['windows']} tuples x {figures['trials_per_window']:,} trials, "
        f"{figures['repeat']} rounds: "
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


GROUP = log_group(
    "trials",
    "the learned-priority study's trials, on Lublin-256.swf.gz in --traces-dir",
    "Lublin-256",
    lambda path, _: trial_figures(path),
    format_trial_figures,
    in_default_run=True,
)
