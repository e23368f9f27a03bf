"""EASY scheduling with an outside chooser: the engine of the Gymnasium environment.

:class:`AgentSimulation` runs schedlab's EASY semantics (``docs/simulator.md``) with the
primary order replaced by decisions taken outside: at each decision the caller reads the
waiting jobs (:meth:`AgentSimulation.observe`, a window in submit order with features) and picks
one (:meth:`AgentSimulation.act`); a job that fits starts, a job that does not is reserved and
the others backfill behind it (``backfill=True``) or wait (``False``). The loop is compiled
(:mod:`scheduler.sim._agent_kernel`): a decision costs one kernel call
(:meth:`AgentSimulation.act_observe`) and no Python-level walk of the queue. An agent that
always picks the first waiting job is EASY-FCFS-FCFS (FCFS list scheduling without backfilling)
job by job; one that picks the smallest key of a policy P is
EASY-P-FCFS (:meth:`AgentSimulation.run_policy`).
"""

from __future__ import annotations

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.policies import priority_key
from scheduler.sim import _agent_kernel as agent_kernel
from scheduler.sim import _kernel as kernel
from scheduler.sim._jobs import check_choice, job_matrix, machine_procs_value
from scheduler.sim.engine import OUTLIVE_CODES, RESERVATIONS, Outlive, Reservation

__all__ = ["FEATURE_NAMES", "AgentBatch", "AgentSimulation"]

#: The columns of an observation row, in order (:func:`scheduler.sim._agent_kernel.observe`).
FEATURE_NAMES: tuple[str, ...] = (
    "wait", "estimate", "procs", "fits_now", "valid", "free_fraction", "queue_fraction",
)  # fmt: skip


class AgentSimulation:
    """A resumable EASY simulation whose primary choices come from the caller.

    Parameters
    ----------
    submit_s, procs, run_s, estimate_s, machine_procs, requested_s, job_id, reservation,
    outlive, validate
        As :class:`scheduler.sim.engine.Simulation` (seconds, processors; any job order).
    backfill
        EASY backfilling (in submit order) behind a job the caller picks that does not fit;
        ``False``: the machine waits for it (list scheduling).
    """

    def __init__(
        self,
        submit_s: np.ndarray,
        procs: np.ndarray,
        run_s: np.ndarray,
        estimate_s: np.ndarray,
        machine_procs: int,
        *,
        requested_s: np.ndarray | None = None,
        job_id: np.ndarray | None = None,
        backfill: bool = True,
        reservation: Reservation = "default",
        outlive: Outlive = "requested",
        validate: bool = True,
    ) -> None:
        self.machine_procs = machine_procs_value(machine_procs)
        validate = flag(validate, "validate")
        check_choice("reservation", reservation, RESERVATIONS)
        check_choice("outlive", outlive, OUTLIVE_CODES)
        self._matrix = job_matrix(
            submit_s, procs, run_s, estimate_s, self.machine_procs, requested_s=requested_s,
            job_id=job_id, validate=validate,
        )  # fmt: skip
        self.jobs = self._matrix.jobs
        self.backfill = flag(backfill, "backfill")
        self.classic = reservation == "classic"
        self.outlive = OUTLIVE_CODES[outlive]
        self.reset()

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return int(self.jobs.shape[1])

    def reset(self) -> None:
        """Back to an empty machine at the first submission."""
        self.istate, self.iwork, self.fwork = kernel.new_state(self.jobs, self.machine_procs)
        self.clock = np.zeros(1)
        self.flags = np.zeros(agent_kernel.FLAG_ROWS, dtype=np.int64)
        self._pending = False

    @property
    def now_s(self) -> float:
        """The current instant (s)."""
        return float(self.clock[0])

    @property
    def decisions(self) -> int:
        """Decisions asked so far."""
        return int(self.flags[agent_kernel.DECISIONS])

    def decide(self) -> bool:
        """Move on to the next decision; False when every job has started (the schedule is
        complete). Idempotent while a decision is pending."""
        if not self._pending:
            self._pending = bool(agent_kernel.decide(
                self.outlive, self.jobs, self.istate, self.iwork, self.fwork, self.clock,
                self.flags,
            ))  # fmt: skip
        return self._pending

    def act(self, job: int) -> None:
        """Apply the choice of waiting job ``job`` (an index of the kernel's job order, as
        :meth:`observe` gives them) at the pending decision."""
        if not self._pending:
            raise RuntimeError("no decision is pending: call decide() first")
        if not (0 <= job < self.n_jobs) or self.iwork[kernel.STATUS, job] != kernel.WAITING or (
            job >= self.istate[kernel.NEXT_SUB]
        ):
            raise ValueError(f"job {job} is not waiting at {self.now_s} s")
        agent_kernel.act(job, self.backfill, self.classic, self.outlive, self.jobs, self.istate,
                         self.iwork, self.fwork, self.clock, self.flags)  # fmt: skip
        self._pending = False

    def observe(
        self, obs: np.ndarray, ids: np.ndarray, *, wait_scale_s: float, estimate_scale_s: float
    ) -> int:
        """Fill ``obs`` (window, len(FEATURE_NAMES)) float32 and ``ids`` (window,) int64 with
        the first waiting jobs in submit order (``ids``: their job indices, -1 for rows without
        a job, which are zero); return how many jobs wait in all. Features:
        :data:`FEATURE_NAMES` (:func:`scheduler.sim._agent_kernel.observe`). Every row is
        written; :meth:`act_observe` then writes only the rows that change."""
        # a buffer not known to hold zeros past the last rows: write every row
        self.flags[agent_kernel.OBS_ROWS] = obs.shape[0]
        return int(agent_kernel.observe(
            float(self.machine_procs), float(wait_scale_s), float(estimate_scale_s), self.jobs,
            self.istate, self.iwork, self.fwork, self.clock, self.flags, obs, ids,
        ))  # fmt: skip

    def act_observe(
        self, job: int, obs: np.ndarray, ids: np.ndarray, *, wait_scale_s: float,
        estimate_scale_s: float,
    ) -> int:  # fmt: skip
        """:meth:`act` on ``job``, :meth:`decide` and :meth:`observe` in one kernel call (an
        environment's step): returns the waiting jobs, or -1 when every job has started. ``job``
        must be one of the ``ids`` of the last observation (not checked: the fast path)."""
        if not self._pending:
            raise RuntimeError("no decision is pending: call decide() first")
        waiting = int(agent_kernel.act_observe(
            job, self.backfill, self.classic, self.outlive, float(self.machine_procs),
            wait_scale_s, estimate_scale_s, self.jobs, self.istate, self.iwork, self.fwork,
            self.clock, self.flags, obs, ids,
        ))  # fmt: skip
        self._pending = waiting >= 0
        return waiting

    def run_policy(self, policy: str) -> np.ndarray:
        """Run the rest of the schedule choosing by ``policy``'s key (smallest first, ties in
        submit order; any registered policy, time-dependent ones included); return
        :attr:`start_s`."""
        key = priority_key(policy, self._matrix.policy_inputs())
        return self._run_kernel_keys(key.base, key.divisor)

    def run_keys(self, base: np.ndarray, divisor: np.ndarray | None = None) -> np.ndarray:
        """As :meth:`run_policy` with a key given as arrays in the caller's job order: ``base
        + (now - submit) / divisor`` (``divisor`` None: a static key); return :attr:`start_s`."""
        base = np.asarray(base, dtype=np.float64)
        divisor = np.full(base.shape, np.inf) if divisor is None else np.asarray(divisor, float)
        if base.shape != (self.n_jobs,) or divisor.shape != (self.n_jobs,):
            raise ConfigurationError(f"keys need one value per job ({self.n_jobs})")
        order = self._matrix.order
        if order is not None:
            base, divisor = base[order], divisor[order]
        return self._run_kernel_keys(np.ascontiguousarray(base), np.ascontiguousarray(divisor))

    def _run_kernel_keys(self, base: np.ndarray, divisor: np.ndarray) -> np.ndarray:
        agent_kernel.run_keyed(
            base, divisor, self.backfill, self.classic, self.outlive, self.jobs,
            self.istate, self.iwork, self.fwork, self.clock, self.flags,
        )  # fmt: skip
        self._pending = False
        return self.start_s

    @property
    def done(self) -> bool:
        """True when every job has started."""
        return bool(np.isfinite(self.fwork[kernel.START]).all())

    def kernel_start_s(self) -> np.ndarray:
        """Start times (s, NaN until started) in the kernel's job order (a view)."""
        return self.fwork[kernel.START]

    @property
    def start_s(self) -> np.ndarray:
        """Start times (s, NaN until started) in the caller's job order."""
        return self._matrix.restore(self.fwork[kernel.START])

    @property
    def backfilled(self) -> np.ndarray:
        """True for the jobs started by backfilling, in the caller's job order."""
        return self._matrix.restore(self.iwork[kernel.STATUS] == kernel.STARTED_BACKFILL)

    def caller_index(self, job: int) -> int:
        """The caller's index of kernel job ``job``."""
        order = self._matrix.order
        if order is None:
            return int(job)
        if not 0 <= job < order.shape[0]:
            raise ConfigurationError(f"job index {job} outside 0..{order.shape[0] - 1}")
        return int(order[job])


class AgentBatch:
    """Several :class:`AgentSimulation` of as many jobs each, stepped by one kernel call (a
    vector environment). Their states live in stacked arrays (one slice per simulation) that
    each simulation adopts as its own arrays: nothing is copied back and forth, and the kernel
    call takes a few arrays, not one of each per simulation. :meth:`replace` puts a new episode
    in a slot. The simulations share the backfilling, reservation and outlive rules of the
    first."""

    def __init__(self, simulations: list[AgentSimulation]) -> None:
        if not simulations:
            raise ConfigurationError("an AgentBatch needs at least one simulation")
        first = simulations[0]
        self.backfill, self.classic, self.outlive = first.backfill, first.classic, first.outlive
        self.stacks = tuple(np.empty((len(simulations), *array.shape), dtype=array.dtype)
                            for array in _state(first))  # fmt: skip
        self.machine_procs = np.empty(len(simulations))
        for index, simulation in enumerate(simulations):
            self.replace(index, simulation)

    def replace(self, index: int, simulation: AgentSimulation) -> None:
        """Step ``simulation`` in slot ``index`` from now on (it adopts the slot's arrays)."""
        state = _state(simulation)
        if any(a.shape != stack.shape[1:] for a, stack in zip(state, self.stacks, strict=True)):
            raise ConfigurationError("every simulation of an AgentBatch has as many jobs")
        for array, stack in zip(state, self.stacks, strict=True):
            stack[index] = array
        jobs, istate, iwork, fwork, clock, flags = (stack[index] for stack in self.stacks)
        simulation.jobs, simulation.istate, simulation.iwork = jobs, istate, iwork
        simulation.fwork, simulation.clock, simulation.flags = fwork, clock, flags
        self.machine_procs[index] = simulation.machine_procs

    def act_observe(
        self, actions: np.ndarray, obs: np.ndarray, ids: np.ndarray, waiting: np.ndarray, *,
        wait_scale_s: float, estimate_scale_s: np.ndarray,
    ) -> None:  # fmt: skip
        """Each simulation ``e`` acts on the job of row ``actions[e]`` of ``ids[e]`` (row 0
        when that row has no job), decides and observes into ``obs[e]``, ``ids[e]``;
        ``waiting[e]`` is its waiting jobs, or -1 when its episode is over (its state then
        stays as it is until :meth:`replace`)."""
        agent_kernel.act_observe_many(
            np.ascontiguousarray(actions, dtype=np.int64), self.backfill, self.classic,
            self.outlive, self.machine_procs, float(wait_scale_s), estimate_scale_s,
            *self.stacks, obs, ids, waiting,
        )  # fmt: skip


def _state(simulation: AgentSimulation) -> tuple[np.ndarray, ...]:
    return (simulation.jobs, simulation.istate, simulation.iwork, simulation.fwork,
            simulation.clock, simulation.flags)  # fmt: skip
