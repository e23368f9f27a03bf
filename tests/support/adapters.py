"""Run the fast simulator on the reference implementation's job lists (for differential tests)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from scheduler import Simulation
from support.naive import NaiveJob


def fast_simulation(
    jobs: Sequence[NaiveJob],
    machine_procs: int,
    *,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    threshold_s: float | None = None,
    reservation: str = "default",
    outlive: str = "requested",
    threshold_backfill: bool = False,
) -> Simulation:
    """The finished fast simulation of ``jobs`` with naive_simulate's keyword arguments."""
    simulation = Simulation(
        np.array([j.submit_s for j in jobs], dtype=np.float64),
        np.array([j.procs for j in jobs], dtype=np.float64),
        np.array([j.run_s for j in jobs], dtype=np.float64),
        np.array([j.estimate_s for j in jobs], dtype=np.float64),
        machine_procs,
        requested_s=np.array([j.requested_s for j in jobs], dtype=np.float64),
        job_id=np.array([j.job_id for j in jobs], dtype=np.int64),
        reservation=reservation,  # type: ignore[arg-type]
        outlive=outlive,  # type: ignore[arg-type]
    )
    simulation.run(
        primary=primary,
        backfill=backfill,
        threshold_s=math.inf if threshold_s is None else threshold_s,
        threshold_backfill=threshold_backfill,
    )
    return simulation


def run_fast(jobs: Sequence[NaiveJob], machine_procs: int, **kwargs) -> dict[int, float]:
    """job_id -> start time (s) from the compiled simulator."""
    starts = fast_simulation(jobs, machine_procs, **kwargs).start_s
    return {j.job_id: float(s) for j, s in zip(jobs, starts, strict=True)}
