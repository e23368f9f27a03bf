"""The waiting-time threshold Θ's groups: ``threshold-backfill`` (the plain and the thresholded
backfill order on whole logs) and ``threshold-sweep`` (the queue-tuning study's thresholds of a
pair simulated three ways)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scheduler.cli.bench.group import keyed_group
from scheduler.cli.bench.logs import present_logs
from scheduler.cli.bench.online import ONLINE_THRESHOLD_S
from scheduler.policies import STUDY_POLICIES
from scheduler.sim.arrays import trace_arrays, week_arrays
from scheduler.sim.engine import Simulation, simulate_arrays
from scheduler.traces.catalogue import TRACE_CATALOGUE

__all__ = [
    "BACKFILL_GROUP",
    "SWEEP_GROUP",
    "SWEEP_THRESHOLD_H",
    "THRESHOLD_BACKFILL_LOGS",
    "format_threshold_backfill_figures",
    "format_threshold_sweep_figures",
    "threshold_backfill_figures",
    "threshold_sweep_figures",
]

#: The logs of the full online study (``config/full.yaml``, ``online.traces``).
THRESHOLD_BACKFILL_LOGS = (
    "KTH-SP2", "CTC-SP2", "SDSC-SP2", "SDSC-BLUE", "ANL-Intrepid", "CEA-Curie", "UniLu-Gaia",
)  # fmt: skip
#: The thresholds of the queue-tuning study (config/full.yaml), in hours; 0 is none.
SWEEP_THRESHOLD_H = (0, 5, 10, 20, 40, 80)


def threshold_backfill_figures(
    traces_dir: Path,
    *,
    logs: tuple[str, ...] = THRESHOLD_BACKFILL_LOGS,
    policies: tuple[str, ...] = STUDY_POLICIES,
    threshold_s: float = ONLINE_THRESHOLD_S,
    catalogue: Path = TRACE_CATALOGUE,
) -> dict[str, object]:
    """EASY(P, P, Θ) with the plain and the thresholded backfill order on whole logs.

    Each log ``traces_dir/<name>.swf.gz`` is read and strong-filtered as the workflow's
    ``filter_trace`` rule does (machine size from the ``catalogue``, else the header; overruns
    dropped), then simulated whole for every policy of ``policies`` as primary and
    backfill order with Θ = ``threshold_s``, the estimate being the requested time (as the online
    study's live system), once with ``threshold_backfill=False`` and once with ``True``
    (Algorithm 2). Returns per log its job count and machine size and, per policy and order,
    AvgWait and MaxWait (s), the backfilled jobs and the simulation's wall time (s); logs
    missing from ``traces_dir`` are listed under ``skipped``.
    """
    out: dict[str, object] = {"threshold_s": threshold_s, "policies": list(policies)}
    results: dict[str, object] = {}
    skipped: list[str] = []
    paths = {name: traces_dir / f"{name}.swf.gz" for name in logs}
    for name, trace in present_logs(paths, catalogue, skipped):
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


def format_threshold_backfill_figures(figures: Mapping[str, Any]) -> list[str]:
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


def threshold_sweep_figures(
    traces_dir: Path,
    kth_path: Path,
    *,
    weeks: int = 20,
    seed: int = 1,
    catalogue: Path = TRACE_CATALOGUE,
) -> dict[str, object]:
    """The queue-tuning study's week simulations of one pair under its six thresholds, three
    ways, timed side by side week by week: every threshold run separately; separately but
    copying the unthresholded run for weeks whose MaxWait is <= Θ (the study's first way);
    and :func:`scheduler.sim.sweep.simulate_thresholds` (the study now). ``weeks`` weeks
    are resampled from the training half of KTH-SP2 (``kth_path``) and of CEA-Curie (in
    ``traces_dir``; machine sizes from the ``catalogue``) as the study does; each of the 12
    study policies is the pair (P, P). The three ways' start times are checked equal. Returns
    per log the jobs per week and the seconds of each way; missing logs are listed under
    ``skipped``."""
    from scheduler.sim.sweep import simulate_thresholds
    from scheduler.traces.resample import resample_weeks, split_at_midpoint

    thresholds = [h * 3600.0 if h else np.inf for h in SWEEP_THRESHOLD_H]
    out: dict[str, object] = {"thresholds_h": list(SWEEP_THRESHOLD_H), "weeks": weeks}
    logs: dict[str, object] = {}
    skipped: list[str] = []
    paths = {"KTH-SP2": kth_path, "CEA-Curie": traces_dir / "CEA-Curie.swf.gz"}
    for name, trace in present_logs(paths, catalogue, skipped):
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
    if skipped:
        out["skipped"] = skipped
    out["logs"] = logs
    return out


def format_threshold_sweep_figures(figures: Mapping[str, Any]) -> list[str]:
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


BACKFILL_GROUP = keyed_group(
    "threshold-backfill",
    "EASY(P, P, 40 h) of the 12 online policies with the plain and the thresholded backfill "
    "order on the whole filtered logs of the full online study",
    lambda inputs: threshold_backfill_figures(inputs.traces_dir, catalogue=inputs.catalogue),
    format_threshold_backfill_figures,
)
SWEEP_GROUP = keyed_group(
    "threshold-sweep",
    "the queue-tuning study's thresholds of a pair run separately, with the MaxWait copy, and "
    "sharing the unthresholded prefix, on resampled KTH-SP2 and CEA-Curie weeks",
    lambda inputs: threshold_sweep_figures(
        inputs.traces_dir, inputs.kth_path, catalogue=inputs.catalogue
    ),
    format_threshold_sweep_figures,
)
