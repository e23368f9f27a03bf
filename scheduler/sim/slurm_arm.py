"""Slurm's scheduler as one arm of a resumable simulation that EASY arms share.

An online policy selector (:mod:`scheduler.studies.online.live`) runs one machine period by
period, each period under the policy it picks: EASY(P, P, Θ) through
:meth:`scheduler.sim.engine.Simulation.run`, or, with :class:`MultifactorArm`, Slurm's
scheduler: conservative backfilling with Slurm's limits under the multifactor priority, classic
fair-share or Fair Tree (``docs/simulator.md``, "Slurm's multifactor priority with
fair-share"). Both
advance the same state (the queue, the running jobs, the start times); jobs waiting or running
at a switch carry over.

The priority plugin watches the machine whoever schedules it: fair-share usage comes from every
job that ran, and a job's priority is what Slurm would hold for it. When the arm takes over at
``t`` after EASY ran the machine since ``t0``, :meth:`scheduler.sim.multifactor.
MultifactorState.catch_up` replays the ends, decay ticks and submissions of ``[t0, t)`` as the
plugin would have recorded them; then the arm schedules. Run period after period with no other
arm, it is one run of :func:`scheduler.simulate_conservative` with ``primary="multifactor"``,
job for job (tested).
"""

from __future__ import annotations

import math

import numpy as np

from scheduler.sim import _conservative_kernel as ck
from scheduler.sim import _kernel as kernel
from scheduler.sim.conservative import checked_limits, kernel_limits
from scheduler.sim.engine import Simulation
from scheduler.sim.multifactor import JobAttributes, MultifactorPriority, MultifactorState

__all__ = ["MultifactorArm"]


class MultifactorArm:
    """Slurm's multifactor priority and backfill over the jobs of ``simulation``.

    Parameters
    ----------
    simulation
        The shared machine (its jobs, outlive rule and state).
    priority
        The multifactor settings.
    attributes
        The jobs' attributes in ``simulation``'s job order (the order its arrays were given in).
    depth, bf_window_s, bf_resolution_s, bf_interval_s, bf_max_job_test, default_queue_depth,
    node_procs
        Slurm's limits, as :func:`scheduler.simulate_conservative` (``None``: no limit).
    """

    def __init__(
        self,
        simulation: Simulation,
        priority: MultifactorPriority,
        attributes: JobAttributes,
        *,
        depth: int | None = None,
        bf_window_s: float | None = None,
        bf_resolution_s: float | None = None,
        bf_interval_s: float | None = None,
        bf_max_job_test: int | None = None,
        default_queue_depth: int | None = None,
        node_procs: int | None = None,
    ) -> None:
        self.simulation = simulation
        machine = simulation.machine_procs
        self.limits = kernel_limits(
            checked_limits(depth, bf_window_s, bf_resolution_s, bf_interval_s,
                           bf_max_job_test, default_queue_depth, node_procs),
            machine,
        )  # fmt: skip
        self.state = MultifactorState(simulation._matrix, machine, priority, attributes)
        n = simulation.jobs.shape[1]
        self.prof = np.empty((2, ck.profile_capacity(n)), dtype=np.float64)
        self.memo = ck.new_memory(n, True)
        #: Every event before it is in the plugin's state (s; ``-inf``: none yet).
        self.recorded_until_s = -math.inf
        #: Decay ticks replayed by the catch-ups so far (for tests and logs).
        self.replayed_ticks = 0

    def run(self, until_s: float, *, threshold_s: float = math.inf) -> int:
        """Process every event instant before ``until_s`` (s) with Slurm's scheduler under Θ =
        ``threshold_s`` (jobs waiting longer go first); return the instants processed.

        If another arm ran the machine since this one last did, the priority plugin first
        catches up on what happened, the queue is sorted by the priorities and the backfill's
        walk memory is dropped.
        """
        sim = self.simulation
        until_s = float(until_s)
        if math.isnan(until_s):
            raise ValueError("until_s must be a number of seconds, got nan")
        processed = sim.processed_until_s
        if processed > self.recorded_until_s:
            self.replayed_ticks += self.state.catch_up(
                self.recorded_until_s, processed, sim.istate, sim.iwork, sim.fwork
            )
            kernel._compact(sim.iwork, sim.istate, False, False)
            kernel._rebuild_sorted(sim.iwork, sim.istate, kernel.PQ, self.state.keys,
                                   kernel.P_BASE)  # fmt: skip
            self.memo[ck.MEMO_VALID] = 0
        if until_s <= processed:
            return 0
        depth, window, resolution, interval, max_test, queue_depth, nodes = self.limits
        last_now = -math.inf if processed == -math.inf else float(np.nextafter(processed, -np.inf))
        instants = self.state.advance(
            sim.istate, sim.iwork, sim.fwork, self.prof, self.memo,
            (float(threshold_s), depth, window, resolution, interval, max_test, queue_depth,
             sim.outlive, nodes),
            t_stop=until_s, last_now=last_now,
        )  # fmt: skip
        sim.processed_until_s = until_s
        self.recorded_until_s = until_s
        return instants
