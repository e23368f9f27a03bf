"""Public simulation API: EASY(P_R, P_B, Θ) over a trace or over plain arrays.

- :func:`simulate_easy` takes a :class:`~scheduler.traces.swf.Trace` (or an SWF job table) and
  returns a :class:`SimulationResult` with per-job and per-run metrics as polars tables. The
  public :func:`scheduler.simulate` (``scheduler.sim.api``) calls it, or the prediction variant
  (``scheduler.sim.prediction``) when given a ``predictor``.
- :func:`simulate_arrays` is the low-level entry over NumPy arrays (start times out), with a
  small per-call overhead, for loops that re-simulate many small workloads.
- :class:`Simulation` is the resumable form: run until a time, change the policies, go on
  (online policy selection).

The semantics are in ``docs/simulator.md``; the numeric work is in ``scheduler.sim._kernel``.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.core.units import parse_duration
from scheduler.policies import PriorityKey, get_policy, priority_key
from scheduler.sim import _kernel as kernel
from scheduler.sim._jobs import check_choice, job_matrix, machine_procs_value, trace_table
from scheduler.sim.cache import call_repairing_cache
from scheduler.sim.metrics import RunSummary, summarize, with_job_metrics
from scheduler.sim.results import RunConfig, RunResult, swf_with_simulated_waits
from scheduler.traces.swf import Trace, used_procs

Reservation = Literal["default", "classic"]
#: The reservation rules (``docs/simulator.md``): how many extra processors the head leaves.
RESERVATIONS: tuple[str, ...] = ("default", "classic")
Outlive = Literal["requested", "double"]
EstimateSource = Literal["requested", "clairvoyant"]

#: The outlive rules (docs/simulator.md) and their kernel codes.
OUTLIVE_CODES = {"requested": kernel.OUTLIVE_REQUESTED, "double": kernel.OUTLIVE_DOUBLE}


@dataclass(frozen=True)
class SimulationConfig(RunConfig):
    """Everything that defines a run besides the jobs.

    ``threshold_s`` is Θ in seconds (``inf``: no threshold; ``None`` in :meth:`to_dict`);
    ``threshold_backfill`` says the backfill candidates are tried in the thresholded order
    (overdue jobs first, docs step 4); ``backfill`` is ``None`` for plain list scheduling;
    ``machine_procs`` is m, processors.
    """

    primary: str = "FCFS"
    backfill: str | None = "FCFS"
    threshold_s: float = math.inf
    threshold_backfill: bool = False
    reservation: Reservation = "default"
    outlive: Outlive = "requested"
    estimate: str = "requested"


class Simulation:
    """A resumable EASY simulation over jobs given as arrays.

    The scheduler sees fixed estimates (``estimate_s``, revised only by the ``outlive`` rule):
    run-time predictions (``scheduler.simulate(..., predictor=...)``) are not available here,
    so the multi-policy runs of the online study cannot use them; the prediction variant
    (``scheduler.sim.prediction``) runs one fixed configuration, EASY(FCFS) with FCFS or SJBF
    backfilling, from start to end.

    Parameters
    ----------
    submit_s, procs, run_s, estimate_s
        Per-job submit time (s), processors (1..machine_procs), actual run time (s, > 0) and
        estimate the scheduler sees (s, > 0). Any order: jobs are processed in
        (submit time, job number) order and results come back in the given order.
    machine_procs
        m, processors of the machine.
    requested_s
        Requested time (s) used when a job outlives its estimate (default: ``estimate_s``).
    job_id
        Unique job numbers (default 0..n-1); tie-break of equal submit times and estimated ends.
    reservation, outlive
        See ``docs/simulator.md``.
    validate
        Check the inputs (turn off only in hot loops over data already checked). Every flag
        (this one, ``threshold_backfill``) is ``True`` or ``False``: anything else is a
        ConfigurationError (:func:`scheduler.core.flags.flag`).
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
        reservation: Reservation = "default",
        outlive: Outlive = "requested",
        validate: bool = True,
    ) -> None:
        machine_procs = machine_procs_value(machine_procs)
        validate = flag(validate, "validate")
        if validate:
            check_choice("reservation", reservation, RESERVATIONS)
            check_choice("outlive", outlive, OUTLIVE_CODES)
        self._matrix = job_matrix(
            submit_s, procs, run_s, estimate_s, machine_procs, requested_s=requested_s,
            job_id=job_id, validate=validate, allow_empty=not validate,
        )  # fmt: skip
        self.jobs = self._matrix.jobs
        self.machine_procs = int(machine_procs)
        self.validate = validate
        self.classic = reservation == "classic"
        self.outlive = OUTLIVE_CODES[outlive]
        self._inputs = self._matrix.policy_inputs()
        self._keys = np.empty((4, 0), dtype=np.float64)  # the current pair's, see _set_policies
        self._key_cache: dict[str, PriorityKey] = {}
        self._pair_keys: dict[
            tuple[str, str | None], tuple[np.ndarray, tuple[bool, int, bool, int]]
        ] = {}
        self._static = (True, kernel.PQ, True, kernel.B_PLAIN)
        self._policies: tuple[str | None, str | None] = (None, None)
        self.istate, self.iwork, self.fwork = kernel.new_state(self.jobs, self.machine_procs)
        #: Every event instant before it has been processed (s; ``-inf`` before any run): the
        #: largest ``until_s`` of a run so far, by :meth:`run` or another scheduler sharing the
        #: state (:class:`scheduler.sim.slurm_arm.MultifactorArm`); runs with
        #: ``pause_overdue_s`` leave it unchanged.
        self.processed_until_s = -math.inf

    def _key(self, name: str) -> PriorityKey:
        """The priority key of policy ``name`` over this simulation's jobs, computed once:
        an online run switches policies hundreds of times over the same jobs."""
        key = self._key_cache.get(name)
        if key is None:
            key = priority_key(name, self._inputs, validate=self.validate)
            self._key_cache[name] = key
        return key

    def _set_policies(self, primary: str, backfill: str | None) -> None:
        """Point the kernel's key rows at the pair's: a (4, n) array built once per (primary,
        backfill) and never written after, so switching back and forth (an online run switches
        hundreds of times) copies nothing."""
        if self._policies == (primary, backfill):
            return
        entry = self._pair_keys.get((primary, backfill))
        if entry is None:
            keys = np.empty((4, self.jobs.shape[1]), dtype=np.float64)
            key = self._key(primary)
            keys[kernel.P_BASE], keys[kernel.P_DIV] = key.base, key.divisor
            p_static = key.is_static
            b_static = False
            b_mode = kernel.B_PLAIN
            p_row = kernel.PQ
            if backfill is not None:
                key = self._key(backfill)
                keys[kernel.B_BASE], keys[kernel.B_DIV] = key.base, key.divisor
                b_static = key.is_static
                if b_static:
                    b_mode = _backfill_mode(self.jobs, keys[kernel.B_BASE])
                if backfill == primary:
                    p_row = kernel.BQ  # one order: one sorted list, or keys computed once a pass
            entry = (keys, (p_static, p_row, b_static, b_mode))
            self._pair_keys[(primary, backfill)] = entry
        self._keys, self._static = entry
        self._policies = (primary, backfill)

    def run(
        self,
        until_s: float = math.inf,
        *,
        primary: str = "FCFS",
        backfill: str | None = "FCFS",
        threshold_s: float = math.inf,
        threshold_backfill: bool = False,
        pause_overdue_s: float = math.inf,
    ) -> int:
        """Process every event before ``until_s`` (s) with EASY(primary, backfill, Θ).

        ``threshold_backfill``: try the backfill candidates in the thresholded order of
        ``backfill`` (the jobs waiting more than Θ first, by submit time and job number, then
        the others in the policy's order; Algorithm 2 of Reis's thesis when primary = backfill)
        instead of the policy's order alone (``docs/simulator.md``, step 4). Returns the number
        of event instants processed. Call again with other policies to switch: jobs waiting or
        running carry over.

        ``pause_overdue_s`` (s, default ``inf``: never) stops earlier, before the first event
        instant at which a waiting job has waited more than that long: up to there a run under
        Θ = ``pause_overdue_s`` makes exactly the same decisions as this one
        (:func:`scheduler.sim.sweep.threshold_sweep` continues a copy from there).
        """
        _check_policy_name("primary", primary, allow_none=False)
        _check_policy_name("backfill", backfill, allow_none=True)
        threshold_s = _seconds("threshold_s", threshold_s)
        threshold_backfill = flag(threshold_backfill, "threshold_backfill")
        until_s = _seconds("until_s", until_s, negative_ok=True)
        pause_overdue_s = _seconds("pause_overdue_s", pause_overdue_s)
        self._set_policies(primary, backfill)
        args = (
            self.jobs,
            self._keys,
            *self._static,
            threshold_s,
            threshold_backfill,
            backfill is not None,
            self.classic,
            self.outlive,
            until_s,
            pause_overdue_s,
            self.istate,
            self.iwork,
            self.fwork,
        )
        instants = int(call_repairing_cache(kernel.advance, *args))
        if pause_overdue_s == math.inf:  # a paused run stopped at an instant not recorded
            self.processed_until_s = max(self.processed_until_s, until_s)
        return instants

    def copy(self) -> Simulation:
        """An independent copy of this simulation in its current state (the job arrays and
        the priority keys computed so far are shared: nothing writes them)."""
        twin = copy.copy(self)
        twin._key_cache = dict(self._key_cache)
        twin._pair_keys = dict(self._pair_keys)
        twin.istate, twin.iwork = self.istate.copy(), self.iwork.copy()
        twin.fwork = self.fwork.copy()
        return twin

    @property
    def done(self) -> bool:
        """True when every job has started and finished (no pass is pending either: a run
        paused by ``pause_overdue_s`` may have applied the last completions but not the pass
        that starts the waiting jobs)."""
        n = self.jobs.shape[1]
        return bool(
            self.istate[kernel.NEXT_SUB] == n
            and self.istate[kernel.HLEN] == 0
            and not self.istate[kernel.PENDING]
        )

    @property
    def kernel_order(self) -> np.ndarray | None:
        """Permutation from the caller's job order to the kernel's (submit time, job number)
        order, or None when the caller's order already is the kernel's."""
        order = self._matrix.order
        return None if order is None else order.copy()

    def start_s_view(self) -> np.ndarray:
        """Start times (s, NaN while not started) in the kernel's order, without a copy.

        A read-only view that follows the simulation as it advances: for loops that look at
        the schedule after every period of a long run (online policy selection).
        """
        view = self.fwork[kernel.START]
        view.flags.writeable = False
        return view

    def _restore(self, values: np.ndarray) -> np.ndarray:
        return self._matrix.restore(values)

    @property
    def start_s(self) -> np.ndarray:
        """Start time of every job (s, NaN while not started), in the caller's job order."""
        return self._restore(self.fwork[kernel.START])

    @property
    def first_reservation_s(self) -> np.ndarray:
        """Shadow time (s) of the first reservation each job received as the blocked head of
        the queue with backfilling on (NaN if it never got one), in the caller's job order."""
        return self._restore(self.fwork[kernel.RESERVED])

    @property
    def backfilled(self) -> np.ndarray:
        """True for the jobs started by backfilling, in the caller's job order."""
        return self._restore(self.iwork[kernel.STATUS] == kernel.STARTED_BACKFILL)


def _backfill_mode(jobs: np.ndarray, base: np.ndarray) -> int:
    """The kernel's ``B_INDEXED*`` mode for a static backfill key ``base``.

    When the key is the estimate itself (SPF) or the processor count (SQF), the kernel's
    backfill list (waiting jobs by key, ties in job order) is also in nondecreasing estimate or
    processor order, and its backfill walk may stop early (``kernel.B_INDEXED_BY_ESTIMATE`` /
    ``B_INDEXED_BY_PROCS``). An O(n) comparison, not a sort: an online run builds the keys of
    12 pairs in every run, and a sort of each would cost more than the switching itself.
    """
    if np.array_equal(base, jobs[kernel.EST]):
        return kernel.B_INDEXED_BY_ESTIMATE
    if np.array_equal(base, jobs[kernel.PROCS]):
        return kernel.B_INDEXED_BY_PROCS
    return kernel.B_INDEXED


def _check_policy_name(name: str, value: object, *, allow_none: bool) -> None:
    """TypeError unless ``value`` is a policy name (or None where allowed)."""
    if isinstance(value, str) or (allow_none and value is None):
        return
    expected = "a policy name (str) or None" if allow_none else "a policy name (str)"
    raise TypeError(f"{name} must be {expected}, got {value!r}")


def _seconds(name: str, value: object, *, negative_ok: bool = False) -> float:
    """``value`` as a time in seconds; NaN (and a negative duration) is a ConfigurationError."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        hint = "; parse text such as '40h' with scheduler.parse_duration" * isinstance(value, str)
        raise TypeError(f"{name} must be a number of seconds, got {value!r}{hint}")
    seconds = float(value)
    if math.isnan(seconds) or (seconds < 0 and not negative_ok):
        expected = "a time in seconds, not NaN" if negative_ok else ">= 0 seconds (inf: none)"
        raise ConfigurationError(f"{name} must be {expected}, got {value!r}")
    return seconds


def simulate_arrays(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    estimate_s: np.ndarray,
    machine_procs: int,
    *,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    threshold_s: float = math.inf,
    threshold_backfill: bool = False,
    requested_s: np.ndarray | None = None,
    job_id: np.ndarray | None = None,
    reservation: Reservation = "default",
    outlive: Outlive = "requested",
    validate: bool = True,
) -> np.ndarray:
    """Start times (s) of EASY(primary, backfill, Θ) on jobs given as arrays.

    The low-level entry point: no tables, one kernel call. Arguments are those of
    :class:`Simulation` and :meth:`Simulation.run`; ``threshold_s`` is Θ in seconds (``inf``:
    none), ``threshold_backfill`` the thresholded backfill order. The result is a float64 array
    of start times in the given job order.
    """
    simulation = Simulation(
        submit_s, procs, run_s, estimate_s, machine_procs,
        requested_s=requested_s, job_id=job_id, reservation=reservation, outlive=outlive,
        validate=validate,
    )  # fmt: skip
    simulation.run(
        primary=primary, backfill=backfill, threshold_s=threshold_s,
        threshold_backfill=threshold_backfill,
    )  # fmt: skip
    return simulation.start_s


@dataclass(frozen=True)
class SimulationResult(RunResult):
    """A simulated schedule.

    ``jobs`` has one row per job in (submit time, job number) order with ``job_id, submit_s,
    procs, run_s, estimate_s, start_s, backfilled, wait_s, end_s, bsld, stretch`` (seconds,
    processors; bsld with τ = 10 s); ``summary`` the run's figures; ``config`` how it was made.
    """

    summary: RunSummary
    config: SimulationConfig
    source_jobs: pl.DataFrame | None = field(default=None, repr=False)

    def to_swf_jobs(self) -> pl.DataFrame:
        """The input's SWF job table with the simulated wait time in field 3 (seconds).

        Ready for :func:`scheduler.write_swf`, so other SWF tools can read the schedule.
        """
        return swf_with_simulated_waits(self.source_jobs, self.jobs)


def scheduled_jobs(jobs: pl.DataFrame, start_s: np.ndarray, backfilled: np.ndarray) -> pl.DataFrame:
    """The per-job result of a run of :func:`job_table`'s ``jobs``: their columns but the
    requested time, the start times (s) and backfilled flags in the same row order, and the
    job metrics (bounded slowdown with tau = ``BSLD_TAU_S``), in (submit, job number) order."""
    return with_job_metrics(
        jobs.drop("requested_s").with_columns(
            pl.Series("start_s", start_s), pl.Series("backfilled", backfilled)
        ),
        tau_s=BSLD_TAU_S,
    ).sort("submit_s", "job_id")


def job_table(
    table: pl.DataFrame, estimate: EstimateSource | np.ndarray
) -> tuple[pl.DataFrame, str]:
    """The jobs an engine simulates from an SWF job table, and the label of their estimates.

    Columns ``job_id, submit_s, procs, run_s, estimate_s, requested_s`` (``procs``: the
    allocated processors, or the requested ones when unknown); ``estimate`` is
    ``"requested"``, ``"clairvoyant"`` or an array of per-job estimates (s) in the table's row
    order (label ``"array"``).
    """
    if isinstance(estimate, str):
        check_choice("estimate", estimate, ("requested", "clairvoyant"))
        estimate_column = pl.col("req_time_s" if estimate == "requested" else "run_s")
        estimate_label = estimate
    else:
        try:
            estimate = np.asarray(estimate, dtype=np.float64)
        except (TypeError, ValueError):
            raise ConfigurationError(
                "estimate must be 'requested', 'clairvoyant' or an array of seconds, got "
                f"{type(estimate).__name__}"
            ) from None
        if estimate.shape != (table.height,):
            raise ConfigurationError(
                f"estimate array has shape {estimate.shape}, expected ({table.height},)"
            )
        estimate_column = pl.Series("estimate_s", estimate)
        estimate_label = "array"
    jobs = table.select(
        "job_id",
        "submit_s",
        used_procs().alias("procs"),
        "run_s",
        estimate_column.cast(pl.Float64).alias("estimate_s"),
        pl.col("req_time_s").cast(pl.Float64).alias("requested_s"),
    )
    return jobs, estimate_label


def simulate_easy(
    trace: Trace | pl.DataFrame,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    threshold: float | str | None = None,
    *,
    threshold_backfill: bool = False,
    machine_procs: int | None = None,
    estimate: EstimateSource | np.ndarray = "requested",
    reservation: Reservation = "default",
    outlive: Outlive = "requested",
) -> SimulationResult:
    """Simulate EASY(primary, backfill, Θ) on a trace's jobs (no run-time predictions).

    The plain-EASY path of :func:`scheduler.simulate` (``scheduler.sim.api``), which adds the
    ``predictor`` option; the arguments are the same.

    Parameters
    ----------
    trace
        A :class:`~scheduler.traces.swf.Trace` (usually after :func:`scheduler.strong_filter`), or a
        table with the SWF columns ``job_id, submit_s, run_s, alloc_procs, req_procs,
        req_time_s`` (then ``machine_procs`` is required).
    primary, backfill
        Policy names (``scheduler.policies.base.policy_names()``); ``backfill=None`` disables
        backfilling.
    threshold
        Θ: jobs waiting longer than this go to the head of the queue. Seconds or a string with
        a unit (``"40h"``); ``None`` or ``"none"`` disables it.
    threshold_backfill
        Backfill candidates in the thresholded order too: the jobs waiting longer than Θ
        first (by submit time, job number), then the others in ``backfill``'s order. Default
        ``False``: ``backfill``'s order alone. No effect without a threshold.
    machine_procs
        m, processors; overrides the trace's.
    estimate
        ``"requested"`` (the requested time, as a real scheduler sees it), ``"clairvoyant"``
        (the actual run time), or an array of per-job estimates (s) in the table's row order.
    reservation, outlive
        See ``docs/simulator.md``.

    Each job uses its allocated processors (SWF field 5), or its requested ones (field 8) when
    the allocated count is unknown.
    """
    table, m = trace_table(trace, machine_procs, "simulate")
    m = machine_procs_value(m)
    threshold_s = parse_duration(threshold)
    jobs, estimate_label = job_table(table, estimate)
    simulation = Simulation(
        jobs["submit_s"].to_numpy(),
        jobs["procs"].to_numpy(),
        jobs["run_s"].to_numpy(),
        jobs["estimate_s"].to_numpy(),
        m,
        requested_s=jobs["requested_s"].to_numpy(),
        job_id=jobs["job_id"].to_numpy(),
        reservation=reservation,
        outlive=outlive,
    )
    simulation.run(
        primary=primary, backfill=backfill, threshold_s=threshold_s,
        threshold_backfill=threshold_backfill,
    )  # fmt: skip
    result = scheduled_jobs(jobs, simulation.start_s, simulation.backfilled)
    config = SimulationConfig(
        machine_procs=int(m),
        primary=get_policy(primary).name,
        backfill=None if backfill is None else get_policy(backfill).name,
        threshold_s=threshold_s,
        threshold_backfill=bool(threshold_backfill),
        reservation=reservation,
        outlive=outlive,
        estimate=estimate_label,
    )
    summary = summarize(result, int(m), tau_s=BSLD_TAU_S)
    return SimulationResult(result, summary, config, source_jobs=table)
