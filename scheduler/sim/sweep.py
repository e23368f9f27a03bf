"""One EASY configuration under several waiting-time thresholds Θ, sharing the common prefix.

EASY(P, B, Θ) moves a job ahead of the queue order only at a pass where it has waited more than
Θ (``docs/simulator.md``, steps 1 and 4). Up to the first event instant at which the pass under
Θ would decide otherwise (some waiting job has waited more than Θ and, with the plain backfill
order, the overdue jobs are not already started first by the plain pass: the kernel's
``_same_pass_under``), the run under Θ makes exactly the decisions of the run without
threshold: same starts, same reservations, same revised estimates, the same state.
:func:`simulate_thresholds` runs the unthresholded simulation once and, for each Θ in increasing
order, pauses it right before that pass (``Simulation.run(pause_overdue_s=Θ)``), copies its
state and finishes the copy under Θ; the unthresholded run then goes on to the next Θ. A Θ whose
instant never comes (no job ever waits more than Θ while waiting, e.g. every week whose MaxWait
without threshold is <= Θ) gets the unthresholded result itself.

The results are those of separate runs (``simulate_arrays(..., threshold_s=Θ)``), bit for bit:
``tests/sim/test_sweep.py`` checks it on random traces (hypothesis) and on real weeks. The
saving is the shared prefix: on the queue-tuning study's weeks the runs under Θ = 5 h ... 80 h
agree with the unthresholded run over most of the week (``docs/benchmarks.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.sim.engine import Outlive, Reservation, Simulation

__all__ = ["simulate_thresholds"]


def simulate_thresholds(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    estimate_s: np.ndarray,
    machine_procs: int,
    thresholds_s: Sequence[float],
    *,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    threshold_backfill: bool = False,
    requested_s: np.ndarray | None = None,
    job_id: np.ndarray | None = None,
    reservation: Reservation = "default",
    outlive: Outlive = "requested",
    validate: bool = True,
) -> list[np.ndarray]:
    """Start times (s) of EASY(primary, backfill, Θ) for every Θ of ``thresholds_s``.

    Arguments are those of :func:`scheduler.sim.engine.simulate_arrays`, with the thresholds
    (seconds, >= 0; ``inf`` is no threshold; repeats allowed) in place of one ``threshold_s``.
    Returns one float64 array of start times per threshold, in the order given, each in the
    given job order and equal to the separate run's. Arrays of thresholds whose run equals the
    unthresholded one are distinct copies.
    """
    values = [float(value) for value in thresholds_s]
    for value in values:
        if math.isnan(value) or value < 0:
            raise ConfigurationError(f"thresholds must be >= 0 seconds, got {value}")
    policies = {"primary": primary, "backfill": backfill, "threshold_backfill": threshold_backfill}
    base = Simulation(
        submit_s, procs, run_s, estimate_s, machine_procs, requested_s=requested_s,
        job_id=job_id, reservation=reservation, outlive=outlive, validate=validate,
    )  # fmt: skip
    diverged: dict[float, np.ndarray] = {}
    for theta in sorted(set(v for v in values if not math.isinf(v))):
        # the unthresholded run up to the first instant where a job has waited more than Θ
        base.run(**policies, pause_overdue_s=theta)
        if base.done:
            break  # no job was ever overdue: this Θ and every larger one run as without
        branch = base.copy()
        branch.run(**policies, threshold_s=theta)
        diverged[theta] = branch.start_s
    if all(v in diverged for v in values):
        return [diverged[v].copy() for v in values]  # the run without threshold is not needed
    base.run(**policies)
    unthresholded = base.start_s
    return [diverged[v].copy() if v in diverged else unthresholded.copy() for v in values]
