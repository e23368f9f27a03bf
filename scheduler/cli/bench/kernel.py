"""The ``kernel`` group: the kernel ratios on whole filtered logs, the engine against the
minimal compiled loop (the speed-of-light reference) and the 12 study policies side by side."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scheduler.cli._minimal_easy import minimal_easy_fcfs
from scheduler.cli.bench.group import keyed_group
from scheduler.cli.bench.logs import JobArrays, job_arrays, present_logs
from scheduler.cli.bench.timing import engine_call, side_by_side, timing_line
from scheduler.policies import STUDY_POLICIES
from scheduler.traces.catalogue import TRACE_CATALOGUE

__all__ = ["GROUP", "KERNEL_LOGS", "format_kernel_figures", "kernel_figures"]

#: The logs timed, in this order (the study policies: on CEA-Curie only).
KERNEL_LOGS = ("KTH-SP2", "CEA-Curie")


def kernel_figures(
    traces_dir: Path, kth_path: Path, repeat: int = 5, *, catalogue: Path = TRACE_CATALOGUE
) -> dict[str, object]:
    """the kernel ratios, each timed side by side (:func:`side_by_side`) on whole
    filtered logs (machine sizes from the ``catalogue``), a simulation being
    ``Simulation(...)`` then ``run`` (keys and state built in the call):

    - KTH-SP2 (``kth_path``) and CEA-Curie (in ``traces_dir``): EASY-FCFS-FCFS in the engine
      against the minimal compiled loop of :mod:`scheduler.cli._minimal_easy` (the
      speed-of-light reference), start times checked equal;
    - CEA-Curie: EASY(P, P) for each of the 12 study policies P, ratio to FCFS.

    Returns per log the jobs and the :func:`side_by_side` figures; missing logs are listed
    under ``skipped``."""
    out: dict[str, object] = {"repeat": repeat}
    skipped: list[str] = []
    paths = dict(zip(KERNEL_LOGS, (kth_path, traces_dir / "CEA-Curie.swf.gz"), strict=True))
    for name, trace in present_logs(paths, catalogue, skipped):
        arrays = job_arrays(trace)
        m = trace.machine_procs
        calls = {"minimal": _minimal_call(arrays, m),
                 "engine": engine_call(arrays, m, "FCFS")}  # fmt: skip
        outputs, light = side_by_side(calls, repeat, "minimal")
        if not np.array_equal(outputs["minimal"], outputs["engine"], equal_nan=True):
            raise AssertionError(f"{name}: the minimal loop and the engine differ")
        log: dict[str, object] = {"jobs": trace.jobs.height, "speed_of_light": light}
        if name == "CEA-Curie":
            policies = {policy: engine_call(arrays, m, policy) for policy in STUDY_POLICIES}
            log["policies"] = side_by_side(policies, repeat, "FCFS")[1]
        out[name] = log
    if skipped:
        out["skipped"] = skipped
    return out


def _minimal_call(arrays: JobArrays, m: int) -> Callable[[], np.ndarray]:
    """The same run as ``engine_call(arrays, m, "FCFS")`` in the minimal loop."""
    submit, procs, run, req, ids = arrays
    return lambda: minimal_easy_fcfs(submit, procs, run, req, ids, m)


def format_kernel_figures(figures: Mapping[str, Any]) -> list[str]:
    """Lines of :func:`kernel_figures`: median [min, max] wall times and ratios."""
    lines = [f"whole filtered logs, side by side, {figures['repeat']} rounds: median [min, max]"]
    for name in KERNEL_LOGS:
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


GROUP = keyed_group(
    "kernel",
    "EASY-FCFS-FCFS against a minimal compiled loop on the whole KTH-SP2 and CEA-Curie, and "
    "the 12 study policies side by side on CEA-Curie",
    lambda inputs: kernel_figures(inputs.traces_dir, inputs.kth_path, catalogue=inputs.catalogue),
    format_kernel_figures,
)
