"""How ``scheduler bench`` times: wall clocks after a warm-up call, calls timed side by side in
rounds, the engine call most groups time, and the printed line of a timing."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from scheduler.cli.bench.logs import JobArrays
from scheduler.sim.engine import Simulation

__all__ = [
    "best_seconds",
    "engine_call",
    "median_seconds",
    "side_by_side",
    "timing_line",
    "wall_times",
]


def wall_times(action: Callable[[], object], repeat: int) -> np.ndarray:
    """Wall times (s) of ``repeat`` calls of ``action`` after one warm-up call (kernel load)."""
    action()
    times = np.empty(repeat)
    for i in range(repeat):
        start = time.perf_counter()
        action()
        times[i] = time.perf_counter() - start
    return times


def best_seconds(action: Callable[[], object], repeat: int) -> float:
    """The shortest of :func:`wall_times`, seconds."""
    return float(wall_times(action, repeat).min())


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    """The median of :func:`wall_times`, seconds."""
    return float(np.median(wall_times(action, repeat)))


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


def engine_call(arrays: JobArrays, m: int, policy: str) -> Callable[[], np.ndarray]:
    """A call simulating EASY(policy, policy) on ``arrays`` with ``m`` processors from scratch
    (``Simulation(...)`` then ``run``: keys and state built in the call); returns start times
    (s)."""
    submit, procs, run, req, ids = arrays

    def call() -> np.ndarray:
        simulation = Simulation(submit, procs, run, req, m, job_id=ids, validate=False)
        simulation.run(primary=policy, backfill=policy)
        return simulation.start_s

    return call
