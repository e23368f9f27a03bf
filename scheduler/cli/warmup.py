"""``scheduler warmup``: compile the simulator kernel, or load it from numba's on-disk cache.

A few simulations of a tiny synthetic workload go through :func:`scheduler.simulate`,
so the kernel is called with exactly the argument types of a real simulation and every
specialisation numba caches is ready before a workflow starts its many simulation jobs.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import polars as pl

from scheduler.cli.arguments import add_command
from scheduler.core.constants import SWF_SCHEMA
from scheduler.sim.api import simulate
from scheduler.sim.cache import kernel_cache_state
from scheduler.sim.conservative import simulate_conservative
from scheduler.sim.engine import Simulation
from scheduler.sim.memory import MemoryConfig, simulate_memory
from scheduler.sim.multifactor import MULTIFACTOR, MultifactorPriority, job_attributes
from scheduler.sim.redirection import simulate_redirect
from scheduler.sim.slurm_arm import MultifactorArm
from scheduler.sim.trials import run_trials
from scheduler.sim.window import simulate_window
from scheduler.traces.swf import SwfHeader, Trace

__all__ = ["WARMUP_RUNS", "add_commands", "cmd_warmup", "kernel_cache_note", "warmup_trace"]

#: Policies and backfilling modes ``scheduler warmup`` runs, covering every kernel path:
#: (primary, backfill) with a static and an aging (time-dependent) primary, backfilling on/off.
WARMUP_RUNS: tuple[tuple[str, str | None], ...] = (
    ("FCFS", "FCFS"),
    ("FCFS", None),
    ("LEXP", "SPF"),
    ("LEXP", None),
)


def add_commands(commands: Any) -> None:
    """Add ``scheduler warmup``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    add_command(
        commands,
        "warmup",
        cmd_warmup,
        "compile the simulator kernel (or load it from numba's on-disk cache)",
    )


def warmup_trace() -> Trace:
    """A tiny synthetic workload (4 processors) with queueing, reservations and backfilling.

    Returns
    -------
    Trace
        Seven jobs; unknown SWF fields are -1.
    """
    rows = (  # (submit s, processors, run s, requested s)
        (0, 3, 100, 120), (1, 4, 50, 60), (2, 1, 30, 200), (3, 2, 10, 10), (4, 1, 500, 600),
        (5, 4, 20, 40), (6, 1, 5, 5),
    )  # fmt: skip
    known = ("submit_s", "alloc_procs", "run_s", "req_time_s")
    columns = {name: [-1] * len(rows) for name in SWF_SCHEMA}
    columns.update({name: [row[i] for row in rows] for i, name in enumerate(known)})
    columns["job_id"] = list(range(1, len(rows) + 1))
    columns["req_procs"] = columns["alloc_procs"]
    return Trace(jobs=pl.DataFrame(columns, schema=SWF_SCHEMA), header=SwfHeader(), machine_procs=4)


def _warm_engine(trace: Trace) -> None:
    """The plain engine's specialisations, the run-time prediction variant (one compiled loop
    for every predictor and correction: they are integer codes, so one learned run compiles
    it) and Slurm's multifactor priority, alone and as an arm of a shared simulation."""
    for primary, backfill in WARMUP_RUNS:
        simulate(trace, primary, backfill, "1m")
    simulate(trace, "FCFS", "SJBF", predictor="nag", loss="eloss", correction="incremental")
    # Slurm's multifactor priority here, not with the variants: the two halves balance (2 cores,
    # empty cache, 2026-11-27: engine 38 s, variants 64 s of which this 10 s)
    priority = MultifactorPriority(weight_age=1000, weight_fairshare=1000)
    simulate_conservative(trace, MULTIFACTOR, priority=priority)
    # as an arm of a shared simulation (the online study): EASY, then Slurm's scheduler after
    # the priority plugin's catch-up, then EASY again
    jobs = trace.jobs
    submit = jobs["submit_s"].to_numpy().astype(float)
    simulation = Simulation(
        submit, jobs["alloc_procs"].to_numpy().astype(float),
        jobs["run_s"].to_numpy().astype(float), jobs["req_time_s"].to_numpy().astype(float),
        trace.machine_procs,
    )  # fmt: skip
    arm = MultifactorArm(simulation, priority, job_attributes(jobs))
    middle = float(submit[len(submit) // 2])
    simulation.run(middle, primary="FCFS", backfill="FCFS")
    arm.run(middle + 60.0)
    simulation.run(primary="FCFS", backfill="FCFS")


def _warm_variants() -> None:
    """The redirection variant (two pools; a small theta so that a job is redirected),
    conservative backfilling (a static and an aging policy, with and without limits), the
    memory-aware variant (one compiled loop for every estimator and scheduler: codes), the
    trials of the learned-priority study and its windowed evaluation scheduler."""
    trace = warmup_trace()
    simulate_redirect(trace, alpha=0.5, theta=0, machine_procs=8)
    simulate_conservative(trace, "FCFS")
    simulate_conservative(trace, "LEXP", depth=1, bf_window_s=3600.0, bf_interval_s=30.0)
    memory = trace.jobs.with_columns(
        pl.lit(2048.0).alias("req_mem_kb"), pl.lit(1024.0).alias("used_mem_kb")
    )
    classes = MemoryConfig(class_nodes=(2, 2), class_memory_mb=(1.0, 2.0), estimator="perceptron")
    simulate_memory(memory, classes)
    jobs = trace.jobs
    run_trials(
        jobs["submit_s"].to_numpy().astype(float), jobs["alloc_procs"].to_numpy().astype(float),
        jobs["run_s"].to_numpy().astype(float), n_state=2, machine_procs=trace.machine_procs,
        n_trials=4, seed=0,
    )  # fmt: skip
    simulate_window(
        jobs["submit_s"].to_numpy().astype(float), jobs["alloc_procs"].to_numpy().astype(float),
        jobs["run_s"].to_numpy().astype(float), jobs["req_time_s"].to_numpy().astype(float),
        trace.machine_procs, policy="F1", backfilling=True, queue_window=32, n_in_order=2,
    )  # fmt: skip


def cmd_warmup(args: argparse.Namespace) -> int:
    """``scheduler warmup``: compile or load every specialisation of the simulator kernel.

    The runs go through :func:`scheduler.simulate`, so the kernel is called with exactly the
    argument types of a real simulation (numba caches per type signature). With more than one
    CPU the engine's specialisations compile in this process while the other variants
    (redirection, memory classes, trials) compile in a second one: compiling is single-threaded,
    and the two halves take about as long (2026-11-27, 2 cores: 34 s and 36 s one after the
    other into an empty cache).

    Parameters
    ----------
    args
        Parsed arguments (none).

    Returns
    -------
    int
        Exit code 0.
    """
    started = time.perf_counter()
    if (os.cpu_count() or 1) > 1:
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked numba
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            variants = pool.submit(_warm_variants)
            _warm_engine(warmup_trace())
            variants.result()
    else:
        _warm_engine(warmup_trace())
        _warm_variants()
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    runs = ", ".join(f"EASY({p}, {b or 'none'})" for p, b in WARMUP_RUNS)
    runs += ", EASY-SJBF on NAG E-loss predictions, list-scheduling trials, redirection, "
    runs += "conservative backfilling, Slurm's multifactor priority, "
    runs += "memory classes, windowed list scheduling"
    print(f"simulator kernel ready in {elapsed_ms:.0f} ms: {kernel_cache_note()}")
    print(f"runs: {runs}")
    return 0


def kernel_cache_note() -> str:
    """Whether the kernel was loaded from numba's on-disk cache or compiled (and cached).

    Returns
    -------
    str
        E.g. ``"loaded from the cache in scheduler/__pycache__"``.
    """
    state = kernel_cache_state()
    if state.misses:
        return f"compiled and cached in {state.cache_path}"
    if state.hits:
        return f"loaded from the cache in {state.cache_path}"
    return "already loaded in this process"
