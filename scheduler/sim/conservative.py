"""Conservative backfilling, with Slurm's ``sched/backfill`` limits, over any primary policy.

Every waiting job, in the primary policy's order, gets the earliest start in the availability
profile where it fits for its whole estimate; it starts now if that is now, otherwise it holds a
reservation that later jobs may not delay. The limits of Slurm's backfill plugin and main loop
are parameters (``depth``, ``bf_window_s``, ``bf_resolution_s``, ``bf_interval_s``,
``bf_max_job_test``, ``default_queue_depth``), all off by default. Semantics:
``docs/simulator.md``, "Conservative backfilling (and Slurm's sched/backfill limits)"; the
compiled loop is :mod:`scheduler.sim._conservative_kernel`.

- :func:`simulate_conservative` takes a trace and returns a :class:`ConservativeResult` (the
  per-job table and run figures of :func:`scheduler.simulate`'s result);
- :func:`simulate_conservative_arrays` takes arrays and returns start times and backfilled
  flags, for loops over many small workloads.

Why a function of its own rather than an option of :func:`scheduler.simulate`: the backfill
order is the primary order (there is no ``backfill`` policy), EASY's ``reservation`` rule and
``threshold_backfill`` have no meaning here, and the six limits have none for EASY.
``depth=1`` with no other limit is EASY(P, P, Θ) with ``reservation="classic"`` and
``threshold_backfill=True``, job by job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.core.units import parse_duration
from scheduler.policies import get_policy, priority_key
from scheduler.sim import _conservative_kernel as ckernel
from scheduler.sim import _kernel as kernel
from scheduler.sim._jobs import check_choice, job_matrix, machine_procs_value, trace_table
from scheduler.sim.cache import call_repairing_cache
from scheduler.sim.engine import (
    OUTLIVE_CODES,
    EstimateSource,
    Outlive,
    job_table,
    scheduled_jobs,
)
from scheduler.sim.metrics import RunSummary, summarize
from scheduler.sim.multifactor import (
    MULTIFACTOR,
    JobAttributes,
    MultifactorPriority,
    job_attributes,
    run_multifactor,
)
from scheduler.sim.results import RunConfig, RunResult, swf_with_simulated_waits
from scheduler.traces.swf import Trace

__all__ = [
    "ConservativeConfig",
    "ConservativeResult",
    "ConservativeSchedule",
    "simulate_conservative",
    "simulate_conservative_arrays",
]



@dataclass(frozen=True)
class ConservativeConfig(RunConfig):
    """The settings of a conservative-backfilling run (``docs/simulator.md``).

    ``threshold_s`` is Θ (``inf``: none; ``None`` in :meth:`to_dict`); ``depth``,
    ``bf_max_job_test``, ``default_queue_depth`` are job counts and ``bf_window_s``,
    ``bf_resolution_s``, ``bf_interval_s`` seconds, ``None`` for no limit; ``node_procs``: the
    processors of a node, when a reservation holds whole nodes (Slurm's map of nodes; ``None``:
    it holds its processors).
    """

    primary: str = "FCFS"
    threshold_s: float = math.inf
    depth: int | None = None
    bf_window_s: float | None = None
    bf_resolution_s: float | None = None
    bf_interval_s: float | None = None
    bf_max_job_test: int | None = None
    default_queue_depth: int | None = None
    node_procs: int | None = None
    outlive: Outlive = "requested"
    estimate: str = "requested"
    priority: MultifactorPriority | None = None

    def to_dict(self) -> dict[str, object]:
        """Plain dict (JSON-ready); ``priority`` (multifactor only) as its own dict."""
        out = super().to_dict()
        out["priority"] = None if self.priority is None else self.priority.to_dict()
        return out


@dataclass(frozen=True)
class ConservativeResult(RunResult):
    """A conservative-backfilling schedule: ``jobs`` as in :class:`scheduler.SimulationResult`
    (``job_id, submit_s, procs, run_s, estimate_s, start_s, backfilled, wait_s, end_s, bsld,
    stretch``), ``summary`` the run's figures, ``config`` how it was made."""

    summary: RunSummary
    config: ConservativeConfig
    source_jobs: pl.DataFrame | None = field(default=None, repr=False)

    def to_swf_jobs(self) -> pl.DataFrame:
        """The input's SWF job table with the simulated wait time in field 3 (seconds), as
        :meth:`scheduler.SimulationResult.to_swf_jobs`."""
        return swf_with_simulated_waits(self.source_jobs, self.jobs)


class ConservativeSchedule(NamedTuple):
    """Start times (s) and backfilled flags, one per job in the caller's order; with
    ``primary="multifactor"`` also each job's priority when it started (else None)."""

    start_s: np.ndarray
    backfilled: np.ndarray
    priority: np.ndarray | None = None


def _count(name: str, value: object, minimum: int) -> int:
    """``value`` as a job count >= ``minimum``, or -1 for None (no limit)."""
    if value is None:
        return -1
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= minimum
    if not ok:
        raise ConfigurationError(f"{name} must be an integer >= {minimum} or None, got {value!r}")
    return int(value)  # type: ignore[arg-type]


def _duration(name: str, value: object, *, zero_ok: bool) -> float | None:
    """``value`` as seconds (a number or a string with a unit, ``"1h"``), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating
                                                 | str):  # fmt: skip
        raise ConfigurationError(f"{name} must be seconds or None, got {value!r}")
    seconds = parse_duration(value) if isinstance(value, str) else float(value)
    if not (math.isfinite(seconds) and (seconds > 0 or (zero_ok and seconds == 0))):
        expected = ">= 0" if zero_ok else "> 0"
        raise ConfigurationError(f"{name} must be finite seconds {expected} or None, got {value!r}")
    return seconds


def checked_limits(
    depth: object,
    bf_window_s: object,
    bf_resolution_s: object,
    bf_interval_s: object,
    bf_max_job_test: object,
    default_queue_depth: object,
    node_procs: object = None,
) -> dict[str, object]:
    """The checked limits, by the names of :class:`ConservativeConfig`."""
    return {
        "node_procs": None if node_procs is None else _count("node_procs", node_procs, 1),
        "depth": None if depth is None else _count("depth", depth, 0),
        "bf_window_s": _duration("bf_window_s", bf_window_s, zero_ok=True),
        "bf_resolution_s": _duration("bf_resolution_s", bf_resolution_s, zero_ok=False),
        "bf_interval_s": _duration("bf_interval_s", bf_interval_s, zero_ok=False),
        "bf_max_job_test": (
            None if bf_max_job_test is None else _count("bf_max_job_test", bf_max_job_test, 1)
        ),
        "default_queue_depth": (
            None
            if default_queue_depth is None
            else _count("default_queue_depth", default_queue_depth, 1)
        ),
    }


def kernel_limits(
    limits: dict[str, object], machine_procs: int
) -> tuple[int, float, float, float, int, int, int]:
    """The checked limits (:func:`checked_limits`) as the kernels take them: ``(depth, window_s,
    resolution, interval, max_test, queue_depth, node_procs)``, -1 for no count limit, ``inf``
    for no window, 0 for no resolution, interval or node.

    Raises
    ------
    ConfigurationError
        ``node_procs`` does not divide ``machine_procs``.
    """

    def seconds(name: str, none: float) -> float:
        value = limits[name]
        return none if value is None else float(value)  # type: ignore[arg-type]

    def count(name: str) -> int:
        value = limits[name]
        return -1 if value is None else int(value)  # type: ignore[call-overload]

    nodes = 0 if limits["node_procs"] is None else int(limits["node_procs"])  # type: ignore[call-overload]
    if nodes and machine_procs % nodes:
        raise ConfigurationError(
            f"node_procs={nodes} does not divide the machine's {machine_procs} processors"
        )
    return (
        count("depth"), seconds("bf_window_s", math.inf), seconds("bf_resolution_s", 0.0),
        seconds("bf_interval_s", 0.0), count("bf_max_job_test"), count("default_queue_depth"),
        nodes,
    )  # fmt: skip


def _threshold(value: object) -> float:
    threshold_s = parse_duration(value)  # type: ignore[arg-type]
    if math.isnan(threshold_s) or threshold_s < 0:
        raise ConfigurationError(f"threshold must be >= 0 seconds or None, got {value!r}")
    return threshold_s


def _run(
    submit_s: object,
    procs: object,
    run_s: object,
    estimate_s: object,
    machine_procs: int,
    *,
    primary: str,
    threshold_s: float,
    limits: dict[str, object],
    requested_s: object | None,
    job_id: object | None,
    outlive: str,
    validate: bool,
    priority: MultifactorPriority | None = None,
    attributes: JobAttributes | None = None,
    resume: bool = True,
) -> tuple[ConservativeSchedule, int]:
    """The schedule, and how many backfill passes resumed the previous one (with ``resume``
    False every pass starts afresh: the same schedule, slower; for the tests)."""
    if not isinstance(primary, str):
        raise TypeError(f"primary must be a policy name (str), got {primary!r}")
    check_choice("outlive", outlive, OUTLIVE_CODES)
    if primary != MULTIFACTOR and (priority is not None or attributes is not None):
        raise ConfigurationError(
            f"priority and attributes need primary={MULTIFACTOR!r}, got primary={primary!r}"
        )
    matrix = job_matrix(
        submit_s, procs, run_s, estimate_s, machine_procs, requested_s=requested_s,
        job_id=job_id, validate=validate,
    )  # fmt: skip
    jobs = matrix.jobs
    n = jobs.shape[1]
    depth, window_s, resolution, interval, max_test, queue_depth, nodes = kernel_limits(
        limits, machine_procs
    )
    if primary == MULTIFACTOR:
        if attributes is None:
            raise ConfigurationError(
                "primary='multifactor' needs the jobs' attributes (user, account, partition, "
                "QOS, eligible time): pass attributes=JobAttributes(...)"
            )
        schedule, resumed = run_multifactor(
            matrix, machine_procs, MultifactorPriority() if priority is None else priority,
            attributes, threshold_s=threshold_s, depth=depth, window_s=window_s,
            resolution=resolution, interval=interval, max_test=max_test,
            queue_depth=queue_depth, outlive_code=OUTLIVE_CODES[outlive], resume=resume,
            node_procs=nodes,
        )  # fmt: skip
        return ConservativeSchedule(*schedule), resumed
    key = priority_key(primary, matrix.policy_inputs(), validate=validate)
    keys = np.empty((4, n), dtype=np.float64)
    keys[kernel.P_BASE], keys[kernel.P_DIV] = key.base, key.divisor
    keys[kernel.B_BASE], keys[kernel.B_DIV] = key.base, key.divisor
    istate, iwork, fwork = kernel.new_state(jobs, machine_procs)
    prof = np.empty((2, ckernel.profile_capacity(n)), dtype=np.float64)
    memo = ckernel.new_memory(n, resume)
    call_repairing_cache(
        ckernel.advance, jobs, keys, key.is_static, threshold_s, depth, window_s, resolution,
        interval, max_test, queue_depth, OUTLIVE_CODES[outlive], istate, iwork, fwork, prof,
        memo, nodes,
    )  # fmt: skip
    schedule = ConservativeSchedule(
        matrix.restore(fwork[kernel.START]),
        matrix.restore(iwork[kernel.STATUS] == kernel.STARTED_BACKFILL),
    )
    return schedule, int(memo[ckernel.MEMO_RESUMED])


def simulate_conservative_arrays(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    estimate_s: np.ndarray,
    machine_procs: int,
    *,
    primary: str = "FCFS",
    threshold_s: float = math.inf,
    depth: int | None = None,
    bf_window_s: float | None = None,
    bf_resolution_s: float | None = None,
    bf_interval_s: float | None = None,
    bf_max_job_test: int | None = None,
    default_queue_depth: int | None = None,
    node_procs: int | None = None,
    requested_s: np.ndarray | None = None,
    job_id: np.ndarray | None = None,
    outlive: Outlive = "requested",
    validate: bool = True,
    priority: MultifactorPriority | None = None,
    attributes: JobAttributes | None = None,
) -> ConservativeSchedule:
    """Start times (s) and backfilled flags of conservative backfilling of jobs given as arrays.

    Arguments as :func:`simulate_conservative`, the jobs as in
    :func:`scheduler.sim.engine.simulate_arrays` (any order; results in the given order);
    with ``primary="multifactor"``, ``attributes`` (required) holds the jobs' user, account,
    partition, QOS and eligible time in the same order, and the result each job's priority
    at its start.
    """
    return _run(
        submit_s, procs, run_s, estimate_s, machine_procs_value(machine_procs),
        primary=primary, threshold_s=_threshold(threshold_s),
        limits=checked_limits(depth, bf_window_s, bf_resolution_s, bf_interval_s, bf_max_job_test,
                       default_queue_depth, node_procs),
        requested_s=requested_s, job_id=job_id, outlive=outlive,
        validate=flag(validate, "validate"), priority=priority, attributes=attributes,
    )[0]  # fmt: skip


def simulate_conservative(
    trace: Trace | pl.DataFrame,
    primary: str = "FCFS",
    threshold: float | str | None = None,
    *,
    depth: int | None = None,
    bf_window_s: float | str | None = None,
    bf_resolution_s: float | str | None = None,
    bf_interval_s: float | str | None = None,
    bf_max_job_test: int | None = None,
    default_queue_depth: int | None = None,
    node_procs: int | None = None,
    machine_procs: int | None = None,
    estimate: EstimateSource | np.ndarray = "requested",
    outlive: Outlive = "requested",
    priority: MultifactorPriority | None = None,
    side: pl.DataFrame | None = None,
    swf_account: Literal["group", "single"] = "group",
) -> ConservativeResult:
    """Simulate conservative backfilling under ``primary`` on a trace's jobs.

    Parameters
    ----------
    trace
        A :class:`~scheduler.traces.swf.Trace` (usually after :func:`scheduler.strong_filter`),
        or a table with the SWF columns (then ``machine_procs`` is required), as
        :func:`scheduler.simulate`.
    primary
        The order of every pass, and so of the reservations: any policy name
        (``scheduler.policy_names()``) or learned spec, or ``"multifactor"``: Slurm's
        multifactor priority with classic fair-share (``priority``; docs/simulator.md,
        "Slurm's multifactor priority with fair-share").
    threshold
        Θ: jobs waiting longer go to the front of the order (as EASY's step 1). Seconds or a
        string with a unit; ``None`` disables it.
    depth
        Reservations per backfill pass (the first jobs of the order that cannot start now);
        ``None``: every walked job (conservative backfilling); ``1``: EASY.
    bf_window_s
        Slurm's ``bf_window`` in seconds: a job whose earliest start is later than
        ``now + bf_window_s`` gets no reservation.
    bf_resolution_s
        Slurm's ``bf_resolution`` (s): every end in the profile is rounded up to a multiple.
    bf_interval_s
        Slurm's ``bf_interval`` (s): the backfill pass runs only at multiples of it (periodic
        events); the main pass (start from the head while jobs fit) runs at every event.
    bf_max_job_test
        Slurm's ``bf_max_job_test``: jobs walked per backfill pass.
    default_queue_depth
        Slurm's ``default_queue_depth``: jobs considered per main pass.
    node_procs
        Processors of a node: a reservation holds whole nodes (Slurm's backfill plans on a
        map of nodes), ``ceil(q / node_procs)`` of them; must divide the machine. None: a
        reservation holds its processors (schedlab's pool).
    machine_procs, estimate, outlive
        As :func:`scheduler.simulate`.
    priority
        With ``primary="multifactor"``: the :class:`~scheduler.sim.multifactor.
        MultifactorPriority` settings (None: Slurm's defaults); an error otherwise.
    side
        With ``primary="multifactor"``: the sacct import's side table
        (:data:`scheduler.traces.sacct.SIDE_SCHEMA`), joined on ``job_id``: account,
        partition, QOS and eligible time (:func:`~scheduler.sim.multifactor.job_attributes`).
    swf_account
        With ``primary="multifactor"``: a job's account when the side table names none: the
        SWF group (``"group"``) or one account for all (``"single"``).

    Returns
    -------
    ConservativeResult
        One row per job in (submit time, job number) order, the run's figures, the settings;
        with ``primary="multifactor"`` a column ``priority``: each job's priority when it
        started.
    """
    table, m = trace_table(trace, machine_procs, "simulate_conservative")
    m = machine_procs_value(m)
    threshold_s = _threshold(threshold)
    limits = checked_limits(depth, bf_window_s, bf_resolution_s, bf_interval_s, bf_max_job_test,
                     default_queue_depth, node_procs)  # fmt: skip
    jobs, estimate_label = job_table(table, estimate)
    multifactor = primary == MULTIFACTOR
    if multifactor and priority is None:
        priority = MultifactorPriority()
    if not multifactor and (priority is not None or side is not None):
        raise ConfigurationError(
            f"priority and side need primary={MULTIFACTOR!r}, got primary={primary!r}"
        )
    attributes = job_attributes(table, side, swf_account=swf_account) if multifactor else None
    schedule = _run(
        jobs["submit_s"].to_numpy(), jobs["procs"].to_numpy(), jobs["run_s"].to_numpy(),
        jobs["estimate_s"].to_numpy(), m, primary=primary, threshold_s=threshold_s,
        limits=limits, requested_s=jobs["requested_s"].to_numpy(),
        job_id=jobs["job_id"].to_numpy(), outlive=outlive, validate=True, priority=priority,
        attributes=attributes,
    )[0]  # fmt: skip
    if schedule.priority is not None:
        jobs = jobs.with_columns(pl.Series("priority", schedule.priority))
    result = scheduled_jobs(jobs, schedule.start_s, schedule.backfilled)
    config = ConservativeConfig(
        machine_procs=int(m), primary=MULTIFACTOR if multifactor else get_policy(primary).name,
        threshold_s=threshold_s, outlive=outlive, estimate=estimate_label, priority=priority,
        **limits,  # type: ignore[arg-type]
    )  # fmt: skip
    summary = summarize(result, int(m), tau_s=BSLD_TAU_S)
    return ConservativeResult(result, summary, config, source_jobs=table)
