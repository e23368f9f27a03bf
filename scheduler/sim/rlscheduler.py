"""RLScheduler's protocol and scheduler, reproduced: the compatible mode of the ``rl`` study.

RLScheduler (Zhang et al., *RLScheduler: an automated HPC batch job scheduler using
reinforcement learning*, SC'20; code ``DIR-LAB/deep-batch-scheduler``) evaluates its agent and
its baselines with its own simulator. This module reproduces what that code computes, so that
its published table can be set beside schedlab's (``docs/rl.md``):

- :func:`rls_workload`: the jobs as its ``Workloads`` class reads an SWF file (a negative run
  time becomes 10 s, jobs with a zero run time are dropped, processors are
  ``max(allocated, requested)``, an unknown requested time is the run time, the machine is
  ``MaxNodes`` nodes of ``MaxProcs / MaxNodes`` processors);
- :func:`sequence_starts`: the test sequences as its ``reset_for_test`` draws them
  (``randint(length, limit - length - 1)`` of a NumPy ``RandomState`` seeded as the old gym's
  ``seeding.np_random(seed)``, ``limit`` the number of jobs or ``batch_job_slice``);
- :func:`rls_keys` and :func:`run_rls_sequence`: its heuristics and its scheduler
  (:mod:`scheduler.sim._rls_kernel`): node allocation, a committed choice, its backfilling.

Its scores, as its code computes them (:data:`RLS_SCORES`): FCFS (submit time), SJF
(requested time, then submit time), F1-F4 with the **absolute** submit time of the log, and
WFP3 and UNICEF computed with the job's ``scheduled_time`` still at its initial -1, so their
"wait" is ``-1 - submit``: the scores then rank jobs by submit time and size, not by wait
(the sign problem of docs/rl.md). schedlab's own definitions are its registered policies,
simulated by the EASY engine (the study's correct mode).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError
from scheduler.sim import _rls_kernel as kernel
from scheduler.sim.metrics import RunFigures, bounded_slowdown, run_figures
from scheduler.traces.swf import Trace

__all__ = [
    "RLS_SCORES",
    "RlsBatch",
    "RlsWorkload",
    "gym_seeded_rng",
    "rls_keys",
    "rls_workload",
    "run_rls_sequence",
    "sequence_starts",
]


@dataclass(frozen=True)
class RlsWorkload:
    """A log's jobs as RLScheduler reads them (arrays in its job order, by job number).

    ``submit_s``, ``run_s``, ``requested_s`` (s), ``procs`` (processors, ``max(allocated,
    requested)``), ``nodes`` (``ceil(procs / procs_per_node)``), ``job_id``; the machine has
    ``total_nodes`` nodes of ``procs_per_node`` processors (``max_procs`` in all);
    ``max_run_s`` is the largest run time of the file (its observation's normalisation).
    """

    submit_s: np.ndarray
    run_s: np.ndarray
    requested_s: np.ndarray
    procs: np.ndarray
    nodes: np.ndarray
    job_id: np.ndarray
    total_nodes: int
    procs_per_node: float
    max_procs: int
    max_run_s: float
    name: str = ""

    @property
    def size(self) -> int:
        """Number of jobs."""
        return int(self.submit_s.shape[0])

    @cached_property
    def estimate_s(self) -> np.ndarray:
        """The estimates schedlab's EASY sees (s): the requested time, or the run time when it
        is unknown (RLScheduler's -1 of a job whose run time was negative)."""
        return np.where(self.requested_s > 0, self.requested_s, self.run_s)

    @property
    def estimate_scale_s(self) -> float:
        """The observation's normalisation of estimates (s): the log's largest run time."""
        return float(max(self.max_run_s, 1.0))

    def figures(self, start: int, start_s: np.ndarray) -> RunFigures:
        """The figures of the sequence from job ``start`` scheduled at ``start_s`` (s; τ =
        10 s, the machine's processors)."""
        sl = slice(start, start + start_s.shape[0])
        return run_figures(self.submit_s[sl], start_s, self.run_s[sl], self.procs[sl],
                           self.max_procs, tau_s=BSLD_TAU_S)  # fmt: skip


def rls_workload(trace: Trace, name: str = "") -> RlsWorkload:
    """The jobs of ``trace`` as RLScheduler's ``Workloads`` reads its SWF file.

    ``MaxNodes`` must be in the header (``MaxProcs`` defaults to it, as there). A job needing
    more nodes than the machine has is refused: the original would wait for it forever.
    """
    header = trace.header
    where = trace.path or name or "the trace"
    if not header.max_nodes:
        raise ConfigurationError(
            f"{where}: RLScheduler's compatible mode needs the header's MaxNodes (its machine "
            "is MaxNodes nodes of MaxProcs / MaxNodes processors)"
        )
    max_nodes = int(header.max_nodes)
    max_procs = int(header.max_procs or max_nodes)
    jobs = trace.jobs.sort("job_id", maintain_order=True)
    logged_run = jobs["run_s"].to_numpy().astype(np.float64)
    max_run = float(logged_run.max())  # over every line, before the filter, as the original's
    # an unknown requested time is the logged run time, taken before a negative run time
    # becomes 10 s: a job with both unknown keeps a requested time of -1 s, as there
    requested = jobs["req_time_s"].to_numpy().astype(np.float64)
    requested = np.where(requested == -1, logged_run, requested)
    run = np.where(logged_run < 0, 10.0, logged_run)
    keep = run > 0
    procs = np.maximum(jobs["alloc_procs"].to_numpy(), jobs["req_procs"].to_numpy())[keep]
    requested = requested[keep]
    run = run[keep]
    ppn = max_procs / max_nodes
    nodes = np.ceil(procs / ppn)
    too_large = np.flatnonzero(nodes > max_nodes)
    job_id = jobs["job_id"].to_numpy()[keep]
    if too_large.size:
        raise ConfigurationError(
            f"{where}: job {int(job_id[too_large[0]])} needs {int(nodes[too_large[0]])} nodes "
            f"of a {max_nodes}-node machine ({too_large.size} such jobs)"
        )
    return RlsWorkload(
        submit_s=jobs["submit_s"].to_numpy()[keep].astype(np.float64),
        run_s=run,
        requested_s=requested,
        procs=procs.astype(np.float64),
        nodes=nodes,
        job_id=job_id,
        total_nodes=max_nodes,
        procs_per_node=ppn,
        max_procs=max_procs,
        max_run_s=max_run,
        name=name,
    )


def gym_seeded_rng(seed: int) -> np.random.RandomState:
    """The ``RandomState`` that the old gym's ``seeding.np_random(seed)`` returns.

    gym (before 0.22) hashes the seed's decimal text with SHA-512, reads its first 8 bytes as a
    little-endian integer and seeds a ``RandomState`` with that integer's 32-bit words, low
    word first. RLScheduler draws its test sequences from it (``env.seed(seed)``).
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigurationError(f"the sequence seed must be an integer >= 0, got {seed!r}")
    value = int.from_bytes(hashlib.sha512(str(seed % 2**64).encode()).digest()[:8], "little")
    words = []
    while value > 0:
        value, word = divmod(value, 2**32)
        words.append(word)
    return np.random.RandomState(words or [0])


def sequence_starts(
    n_jobs: int, length: int, count: int, seed: int, job_slice: int | None = None
) -> np.ndarray:
    """First job (index in the workload) of each of ``count`` test sequences of ``length``
    jobs, as RLScheduler's ``reset_for_test`` draws them after ``env.seed(seed)``.

    ``job_slice``: its ``batch_job_slice`` (sequences from the first ``job_slice`` jobs only;
    ``None`` or 0: the whole log).
    """
    limit = job_slice or n_jobs
    if limit > n_jobs or limit - length - 1 <= length:
        raise ConfigurationError(
            f"sequences of {length} jobs cannot be drawn from the first {limit} of {n_jobs} jobs"
            " (RLScheduler draws their start in [length, limit - length - 1))"
        )
    rng = gym_seeded_rng(seed)
    return np.array([rng.randint(length, limit - length - 1) for _ in range(count)], np.int64)


def _rls_f(time_term: float, work: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    def keys(w: RlsWorkload, sl: slice) -> tuple[np.ndarray, np.ndarray]:
        submit = w.submit_s[sl]
        score = work(w.requested_s[sl], w.procs[sl]) + time_term * np.log10(
            np.where(submit > 0, submit, 0.1)
        )
        return score, np.zeros_like(score)

    return keys


def _rls_wfp3(w: RlsWorkload, sl: slice) -> tuple[np.ndarray, np.ndarray]:
    wait = -1.0 - w.submit_s[sl]  # scheduled_time (-1) - submit_time
    score = -np.power(wait / w.requested_s[sl], 3) * w.procs[sl]
    return score, np.zeros_like(score)


def _rls_unicef(w: RlsWorkload, sl: slice) -> tuple[np.ndarray, np.ndarray]:
    wait = -1.0 - w.submit_s[sl]
    score = -(wait + 1e-15) / (np.log2(w.procs[sl] + 1e-15) * w.requested_s[sl])
    return score, np.zeros_like(score)


#: RLScheduler's heuristics as its code scores them (smallest score first), name -> keys of
#: the jobs of a sequence (two rows compared lexicographically).
RLS_SCORES: dict[str, Callable[[RlsWorkload, slice], tuple[np.ndarray, np.ndarray]]] = {
    "FCFS": lambda w, sl: (w.submit_s[sl], np.zeros(sl.stop - sl.start)),
    "SJF": lambda w, sl: (w.requested_s[sl], w.submit_s[sl]),
    "WFP3": _rls_wfp3,
    "UNICEF": _rls_unicef,
    "F1": _rls_f(870.0, lambda r, n: np.log10(np.where(r > 0, r, 0.1)) * n),
    "F2": _rls_f(25600.0, lambda r, n: np.sqrt(r) * n),
    "F3": _rls_f(6860000.0, lambda r, n: r * n),
    "F4": _rls_f(530000.0, lambda r, n: r * np.sqrt(n)),
}


def rls_keys(workload: RlsWorkload, start: int, length: int, score: str) -> np.ndarray:
    """The (2, length) keys of heuristic ``score`` (:data:`RLS_SCORES`) over one sequence."""
    if score not in RLS_SCORES:
        raise ConfigurationError(
            f"unknown RLScheduler heuristic {score!r}; known: {', '.join(RLS_SCORES)}"
        )
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        first, second = RLS_SCORES[score](workload, slice(start, start + length))
    return np.ascontiguousarray(np.vstack([first, second]), dtype=np.float64)


def sequence_matrix(workload: RlsWorkload, start: int, length: int) -> np.ndarray:
    """The kernel's (JOB_ROWS, length) job array of the sequence from job ``start``."""
    if start < 0 or length < 1 or start + length > workload.size:
        raise ConfigurationError(
            f"a sequence of {length} jobs from job {start} leaves the {workload.size} jobs"
        )
    sl = slice(start, start + length)
    jobs = np.empty((kernel.JOB_ROWS, length), dtype=np.float64)
    jobs[kernel.SUBMIT] = workload.submit_s[sl]
    jobs[kernel.RUN] = workload.run_s[sl]
    jobs[kernel.REQ] = workload.requested_s[sl]
    jobs[kernel.PROCS] = workload.procs[sl]
    jobs[kernel.NODES] = workload.nodes[sl]
    return jobs


@dataclass
class RlsState:
    """The compatible scheduler's state over one sequence (arrays of :mod:`_rls_kernel`)."""

    jobs: np.ndarray
    total_nodes: int
    procs_per_node: float
    istate: np.ndarray
    lists: np.ndarray
    fstate: np.ndarray
    start_s: np.ndarray

    @classmethod
    def new(cls, workload: RlsWorkload, start: int, length: int) -> RlsState:
        """A fresh state (empty machine, the sequence's first job waiting)."""
        jobs = sequence_matrix(workload, start, length)
        state = cls(
            jobs, workload.total_nodes, float(workload.procs_per_node),
            np.zeros(kernel.I_ROWS, np.int64), np.zeros((kernel.LIST_ROWS, length), np.int64),
            np.zeros(kernel.F_ROWS), np.empty(length),
        )  # fmt: skip
        state.reset()
        return state

    def reset(self) -> None:
        """Back to the sequence's start."""
        kernel.reset(self.jobs, self.total_nodes, self.procs_per_node, self.istate, self.lists,
                     self.fstate, self.start_s)  # fmt: skip

    def schedule(self, job: int, backfill: bool, easy_rule: bool = False) -> bool:
        """Commit to waiting job ``job`` (index in the sequence); False when all have started.
        ``easy_rule``: backfill by EASY's rule (an ablation, :mod:`_rls_kernel`)."""
        return bool(kernel.schedule(job, backfill, easy_rule, self.jobs, self.istate,
                                    self.lists, self.fstate, self.start_s))  # fmt: skip

    @property
    def now_s(self) -> float:
        """The current time (s)."""
        return float(self.fstate[kernel.NOW])

    def observe(
        self, obs: np.ndarray, ids: np.ndarray, *, wait_scale_s: float, estimate_scale_s: float,
        max_procs: float,
    ) -> int:  # fmt: skip
        """Fill ``obs`` (window, 7) and ``ids`` with the first waiting jobs in submit order, as
        :meth:`scheduler.sim.agent.AgentSimulation.observe` (the fit test and the free fraction
        in nodes); returns how many jobs wait. Sorts the waiting list by submit time, as the
        original's observation does."""
        self.istate[kernel.OBS_ROWS] = obs.shape[0]  # write every row of a new buffer
        return int(kernel.observe(wait_scale_s, estimate_scale_s, max_procs,
                                  float(self.total_nodes), self.jobs, self.istate, self.lists,
                                  self.fstate, obs, ids))  # fmt: skip

    def schedule_observe(
        self, job: int, backfill: bool, obs: np.ndarray, ids: np.ndarray, *,
        wait_scale_s: float, estimate_scale_s: float, max_procs: float,
    ) -> int:  # fmt: skip
        """:meth:`schedule` then :meth:`observe` in one kernel call (an environment's step):
        the waiting jobs, or -1 when the sequence is over."""
        return int(kernel.schedule_observe(
            job, backfill, wait_scale_s, estimate_scale_s, max_procs, float(self.total_nodes),
            self.jobs, self.istate, self.lists, self.fstate, self.start_s, obs, ids,
        ))  # fmt: skip

    def run_heuristic(
        self, keys: np.ndarray, backfill: bool, easy_rule: bool = False
    ) -> np.ndarray:
        """Start times (s) of the whole sequence under a heuristic's keys."""
        kernel.run_heuristic(keys, backfill, easy_rule, self.jobs, self.total_nodes,
                             self.procs_per_node, self.istate, self.lists, self.fstate,
                             self.start_s)  # fmt: skip
        return self.start_s.copy()


class RlsBatch:
    """Several :class:`RlsState` of as many jobs each, stepped by one kernel call (a vector
    environment), their states in stacked arrays that each adopts (as
    :class:`scheduler.sim.agent.AgentBatch`)."""

    def __init__(self, states: list[RlsState], backfill: bool) -> None:
        if not states:
            raise ConfigurationError("an RlsBatch needs at least one sequence")
        self.backfill = bool(backfill)
        self.stacks = tuple(np.empty((len(states), *array.shape), dtype=array.dtype)
                            for array in _rls_state(states[0]))  # fmt: skip
        self.total_nodes = np.empty(len(states))
        for index, state in enumerate(states):
            self.replace(index, state)

    def replace(self, index: int, state: RlsState) -> None:
        """Step ``state`` in slot ``index`` from now on (it adopts the slot's arrays)."""
        arrays = _rls_state(state)
        if any(a.shape != stack.shape[1:] for a, stack in zip(arrays, self.stacks, strict=True)):
            raise ConfigurationError("every sequence of an RlsBatch has as many jobs")
        for array, stack in zip(arrays, self.stacks, strict=True):
            stack[index] = array
        state.jobs, state.istate, state.lists, state.fstate, state.start_s = (
            stack[index] for stack in self.stacks
        )
        self.total_nodes[index] = state.total_nodes

    def schedule_observe(
        self, actions: np.ndarray, obs: np.ndarray, ids: np.ndarray, waiting: np.ndarray, *,
        wait_scale_s: float, estimate_scale_s: np.ndarray, max_procs: np.ndarray,
    ) -> None:  # fmt: skip
        """Each sequence ``e`` commits to the job of row ``actions[e]`` of ``ids[e]`` (row 0
        when that row has no job) and observes into ``obs[e]``, ``ids[e]``; ``waiting[e]``: its
        waiting jobs, or -1 when it is over."""
        kernel.schedule_observe_many(
            np.ascontiguousarray(actions, dtype=np.int64), self.backfill, float(wait_scale_s),
            estimate_scale_s, max_procs, self.total_nodes, *self.stacks, obs, ids, waiting,
        )  # fmt: skip


def _rls_state(state: RlsState) -> tuple[np.ndarray, ...]:
    return state.jobs, state.istate, state.lists, state.fstate, state.start_s


def run_rls_sequence(
    workload: RlsWorkload,
    start: int,
    length: int,
    score: str,
    backfill: bool,
    *,
    easy_rule: bool = False,
) -> np.ndarray:
    """Start times (s) of the sequence of ``length`` jobs from job ``start`` scheduled by
    RLScheduler's heuristic ``score``, with or without its backfilling (``easy_rule``: EASY's
    backfilling rule instead of its own, an ablation)."""
    state = RlsState.new(workload, start, length)
    keys = rls_keys(workload, start, length, score)
    return state.run_heuristic(keys, bool(backfill), bool(easy_rule))


def sequence_bsld(workload: RlsWorkload, start: int, start_s: np.ndarray) -> float:
    """Mean bounded slowdown (τ = 10 s) of a scheduled sequence: RLScheduler's score."""
    sl = slice(start, start + start_s.shape[0])
    wait = start_s - workload.submit_s[sl]
    return float(bounded_slowdown(wait, workload.run_s[sl], tau_s=BSLD_TAU_S).mean())

