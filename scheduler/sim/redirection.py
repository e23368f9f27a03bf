"""Online scheduling with redirection: EASY on a main pool that kills long-standing
jobs and restarts them on a dedicated pool.

After Faure, Lucarelli, Richard and Trystram, "Online scheduling with redirection for parallel
jobs". The machine of m processors is split into a main pool of ``m - ceil(alpha * m)``
processors and a dedicated pool of ``ceil(alpha * m)``, each run by its own EASY scheduler. Every
job is submitted to the main pool; every job running there counts the submissions since its start
(or since the last redirection), and when counters exceed θ the widest job over the threshold that
fits the dedicated pool is killed and restarted from zero on the dedicated pool.

- :func:`simulate_redirect` takes a :class:`~scheduler.traces.swf.Trace` (or an SWF job table)
  and returns a :class:`RedirectResult`: per-job table, :class:`RedirectSummary`, configuration,
  number of redirections;
- :func:`simulate_redirect_arrays` is the low-level entry over NumPy arrays;
- :class:`RedirectSimulation` is the resumable form: run until a time, change θ, go on (the
  redirection study's online runs, :mod:`scheduler.studies.redirect.online`, choose θ period by
  period with a bandit).

The exact semantics (event order at an instant, counters, the choice of the job, metrics) are in
``docs/simulator.md``, "Redirection"; the compiled loop is
:mod:`scheduler.sim._redirect_kernel`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.policies import PolicyInputs, PriorityKey, get_policy, priority_key
from scheduler.sim import _kernel as kernel
from scheduler.sim import _redirect_kernel as rk
from scheduler.sim._jobs import job_matrix, machine_procs_value, trace_table
from scheduler.sim.cache import call_repairing_cache
from scheduler.sim.metrics import RunFigures, run_figures, table_arrays, with_job_metrics
from scheduler.sim.results import RunConfig, RunResult
from scheduler.traces.swf import Trace, used_procs

__all__ = [
    "REDIRECT_TAU_S",
    "RedirectArrays",
    "RedirectConfig",
    "RedirectResult",
    "RedirectSimulation",
    "RedirectSummary",
    "pool_sizes",
    "simulate_redirect",
    "simulate_redirect_arrays",
]

#: τ (s) of the bounded slowdown in the redirection results (the paper's 60 s, not the base
#: simulator's 10 s).
REDIRECT_TAU_S = 60.0

#: Columns of :attr:`RedirectResult.jobs`, before the metric columns.
_RESULT_COLUMNS = (
    "job_id", "submit_s", "procs", "run_s", "estimate_s", "start_s", "pool", "redirected",
    "first_start_s", "killed_s", "wasted_proc_s", "backfilled",
)  # fmt: skip


def pool_sizes(alpha: float, machine_procs: int) -> tuple[int, int]:
    """``(main, dedicated)`` processors of a machine of ``machine_procs`` split with share α.

    The dedicated pool has ``ceil(alpha * m)`` processors, computed exactly on α's decimal value
    (its shortest ``repr``: ``alpha=0.1`` on 80,640 processors gives 8,064, whatever the binary
    rounding of ``0.1 * 80640``); the main pool has the rest, at least one processor.

    Raises
    ------
    ConfigurationError
        α not in [0, 1), or a main pool of no processor.
    """
    m = machine_procs_value(machine_procs)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float | np.integer | np.floating):
        raise TypeError(f"alpha must be a number in [0, 1), got {alpha!r}")
    if not 0.0 <= float(alpha) < 1.0:
        raise ConfigurationError(f"alpha must be in [0, 1), got {alpha!r}")
    dedicated = math.ceil(Fraction(repr(float(alpha))) * m)
    if dedicated >= m:
        raise ConfigurationError(
            f"alpha={alpha!r} leaves no processor to the main pool of a {m}-processor machine "
            f"(ceil(alpha * m) = {dedicated})"
        )
    return m - dedicated, dedicated


def _theta(value: object) -> float:
    """θ as a float >= 0 (``None``: inf); a ConfigurationError otherwise."""
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"theta must be a number of submissions >= 0 (or inf), got {value!r}")
    theta = float(value)
    if math.isnan(theta) or theta < 0:
        raise ConfigurationError(f"theta must be >= 0 submissions (inf: never), got {value!r}")
    return theta


def _backfill_name(value: object, where: str) -> str | None:
    """A backfill policy name, or None for no backfilling (the string ``"none"`` too)."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a policy name (str) or None, got {value!r}")
    return value


@dataclass(frozen=True)
class RedirectConfig(RunConfig):
    """Everything that defines a redirection run besides the jobs (processors; θ in
    submissions, ``inf``: never, ``None`` in :meth:`to_dict`; policy names canonical;
    ``None``: no backfilling; τ of the bounded slowdown in seconds)."""

    main_procs: int
    dedicated_procs: int
    alpha: float
    theta: float
    primary: str
    backfill: str | None
    dedicated_primary: str
    dedicated_backfill: str | None
    balance: bool
    tau_s: float


@dataclass(frozen=True)
class RedirectSummary(RunFigures):
    """Figures of one redirection run: the shared :class:`~scheduler.sim.metrics.RunFigures`
    (bsld with τ = ``tau_s`` of the run; m the whole machine, both pools; ``wasted_proc_s`` the
    processor-seconds of the killed runs, which ``utilisation_with_waste`` adds to the useful
    work of ``utilisation``) and the number of ``redirections``."""

    redirections: int


@dataclass(frozen=True)
class RedirectArrays:
    """A redirection run over arrays, in the input's order (seconds, processor-seconds).

    ``start_s`` is the final start (on the dedicated pool for a redirected job), ``first_start_s``
    the start in the main pool, ``killed_s`` the redirection instant ρ_j (NaN if not redirected),
    ``wasted_proc_s`` = q_j · (ρ_j − first start) (0 if not redirected), ``backfilled`` whether the
    final start was a backfill.
    """

    start_s: np.ndarray
    first_start_s: np.ndarray
    killed_s: np.ndarray
    redirected: np.ndarray
    wasted_proc_s: np.ndarray
    backfilled: np.ndarray
    redirections: int


@dataclass(frozen=True)
class RedirectResult(RunResult):
    """A simulated redirection schedule.

    ``jobs`` has one row per job in (submit time, job number) order with ``job_id, submit_s,
    procs, run_s, estimate_s, start_s, pool ("main" / "dedicated"), redirected, first_start_s,
    killed_s, wasted_proc_s, backfilled, wait_s, end_s, bsld, stretch``: ``submit_s`` is the
    original submission, ``start_s`` the final start, ``wait_s = start_s − submit_s``,
    ``bsld`` with τ = ``config.tau_s``.
    """

    summary: RedirectSummary
    config: RedirectConfig
    redirections: int

    def runs(self) -> pl.DataFrame:
        """Every run of every job, one row each: ``job_id, pool, procs, start_s, end_s, killed``.

        A redirected job has two rows: its killed run on the main pool (``end_s`` = ρ_j) and its
        complete run on the dedicated pool. Sorted by start time, then job number.
        """
        jobs = self.jobs
        killed = jobs.filter(pl.col("redirected")).select(
            "job_id",
            pl.lit("main").alias("pool"),
            "procs",
            pl.col("first_start_s").alias("start_s"),
            pl.col("killed_s").alias("end_s"),
            pl.lit(True).alias("killed"),
        )
        final = jobs.select(
            "job_id", "pool", "procs", "start_s", "end_s", pl.lit(False).alias("killed")
        )
        return pl.concat([killed, final]).sort("start_s", "job_id")


class RedirectSimulation:
    """A resumable redirection simulation over jobs given as arrays; θ may change between calls.

    Parameters
    ----------
    submit_s, procs, run_s, estimate_s
        Per-job submit time (s), processors (1..main pool), actual run time (s, > 0) and the
        estimate both schedulers see (s, > 0). Any order: jobs are processed in (submit time,
        job number) order and results come back in the given order.
    machine_procs
        m, processors of the whole machine.
    alpha
        The dedicated share α in [0, 1): the dedicated pool has ``ceil(alpha * m)`` processors
        (:func:`pool_sizes`).
    primary, backfill
        The main pool's EASY policies (``backfill=None``: no backfilling).
    dedicated_primary, dedicated_backfill
        The dedicated pool's; ``None`` means the main pool's policy (``dedicated_backfill="none"``
        disables backfilling on the dedicated pool alone).
    balance
        Load balancing: no redirection while the dedicated pool's queue holds a waiting job.
        ``True`` or ``False`` (a NumPy bool too); anything else, ``"no"`` included, is a
        ConfigurationError (:func:`scheduler.core.flags.flag`).
    requested_s
        Requested time (s) used when a job outlives its estimate (default: ``estimate_s``).
    job_id
        Unique job numbers (default 0..n-1): tie-breaks, as in the base simulator.
    validate
        Check the inputs.
    """

    def __init__(
        self,
        submit_s: np.ndarray,
        procs: np.ndarray,
        run_s: np.ndarray,
        estimate_s: np.ndarray,
        machine_procs: int,
        *,
        alpha: float,
        primary: str = "FCFS",
        backfill: str | None = "FCFS",
        dedicated_primary: str | None = None,
        dedicated_backfill: str | None = None,
        balance: bool = False,
        requested_s: np.ndarray | None = None,
        job_id: np.ndarray | None = None,
        validate: bool = True,
    ) -> None:
        m = machine_procs_value(machine_procs)
        balance = flag(balance, "balance")
        validate = flag(validate, "validate")
        main_procs, dedicated_procs = pool_sizes(alpha, m)
        self._matrix = job_matrix(
            submit_s, procs, run_s, estimate_s, m, requested_s=requested_s, job_id=job_id,
            validate=validate,
        )  # fmt: skip
        jobs = self._matrix.jobs
        n = jobs.shape[1]
        if validate:
            wide = np.flatnonzero(jobs[kernel.PROCS] > main_procs)
            if wide.size:
                j = int(wide[0])
                raise ConfigurationError(
                    f"job {int(jobs[kernel.JOBID, j])} needs {int(jobs[kernel.PROCS, j])} "
                    f"processors, more than the main pool's {main_procs} (m = {m}, alpha = "
                    f"{alpha!r}): every job is submitted to the main pool; {wide.size} job(s) "
                    "too wide"
                )
        self.jobs = jobs
        self.machine_procs = m
        self.main_procs = main_procs
        self.dedicated_procs = dedicated_procs
        self.alpha = float(alpha)
        self.balance = balance
        backfill = _backfill_name(backfill, "backfill")
        if not isinstance(primary, str):
            raise TypeError(f"primary must be a policy name (str), got {primary!r}")
        dedicated_primary = primary if dedicated_primary is None else dedicated_primary
        if not isinstance(dedicated_primary, str):
            raise TypeError(
                f"dedicated_primary must be a policy name (str), got {dedicated_primary!r}"
            )
        dedicated_backfill = (
            backfill if dedicated_backfill is None
            else _backfill_name(dedicated_backfill, "dedicated_backfill")
        )  # fmt: skip
        self.policies = (primary, backfill, dedicated_primary, dedicated_backfill)
        inputs = self._matrix.policy_inputs()
        self._first_submit = inputs.first_submit_s
        # the main pool's keys over every job, as in the base simulator
        self._keys_m = np.empty((4, n), dtype=np.float64)
        key = priority_key(primary, inputs, validate=validate)
        self._keys_m[kernel.P_BASE], self._keys_m[kernel.P_DIV] = key.base, key.divisor
        pm_static, bm_static = key.is_static, False
        if backfill is not None:
            key = priority_key(backfill, inputs, validate=validate)
            self._keys_m[kernel.B_BASE], self._keys_m[kernel.B_DIV] = key.base, key.divisor
            bm_static = key.is_static
        # the dedicated pool's: one job at a time, when it is redirected (its submit time there
        # is the redirection instant); resolve the policies once (a learned spec reads a file)
        self._keys_d = np.zeros((4, n), dtype=np.float64)
        self._policy_d = [get_policy(dedicated_primary), None]
        if dedicated_backfill is not None:
            self._policy_d[1] = get_policy(dedicated_backfill)
        # (whether a policy is static does not depend on the job: ask it about the first one)
        first = float(jobs[kernel.SUBMIT, 0])
        pd_static = self._dedicated_key(0, self._policy_d[0], first).is_static
        bd_static = False
        if self._policy_d[1] is not None:
            bd_static = self._dedicated_key(0, self._policy_d[1], first).is_static
        self._flags = (pm_static, bm_static, backfill is not None,
                       pd_static, bd_static, dedicated_backfill is not None)  # fmt: skip
        main, dedicated, self._jobs_d, self._killed, self._xstate = rk.new_state(
            jobs, main_procs, dedicated_procs
        )
        self._main = main
        self._dedicated = dedicated

    # -- keys of the dedicated pool -----------------------------------------------------------

    def _dedicated_key(self, j: int, policy: object, submit_s: float) -> PriorityKey:
        """The key of job ``j`` under ``policy`` if submitted at ``submit_s`` (s)."""
        jobs = self.jobs
        inputs = PolicyInputs(
            submit_s=np.array([submit_s]), procs=jobs[kernel.PROCS, j : j + 1].copy(),
            estimate_s=jobs[kernel.EST, j : j + 1].copy(), first_submit_s=self._first_submit,
        )  # fmt: skip
        with np.errstate(all="ignore"):
            key = policy.key(inputs)  # type: ignore[attr-defined]
        if not (np.isfinite(key.base).all() and not np.isnan(key.divisor).any()):
            name = policy.name  # type: ignore[attr-defined]
            raise ConfigurationError(
                f"policy {name} gives a non-finite priority to job {int(jobs[kernel.JOBID, j])} "
                "on the dedicated pool"
            )
        return key

    def _fill_dedicated_keys(self, j: int) -> None:
        rho = float(self._killed[j])
        key = self._dedicated_key(j, self._policy_d[0], rho)
        self._keys_d[kernel.P_BASE, j], self._keys_d[kernel.P_DIV, j] = key.base[0], key.divisor[0]
        if self._policy_d[1] is not None:
            key = self._dedicated_key(j, self._policy_d[1], rho)
            self._keys_d[kernel.B_BASE, j] = key.base[0]
            self._keys_d[kernel.B_DIV, j] = key.divisor[0]

    # -- running ----------------------------------------------------------------------------------

    def run(self, until_s: float = math.inf, *, theta: float | None = math.inf) -> int:
        """Process every event before ``until_s`` (s) with redirection threshold θ.

        θ counts submissions (a job is over the threshold when its counter is > θ; ``inf`` or
        ``None``: never redirect). Returns the number of event instants processed. Call again
        with another θ: waiting and running jobs and the counters carry over, and the new θ
        applies from the first instant the call processes.
        """
        theta_value = _theta(theta)
        number = int | float | np.integer | np.floating
        if isinstance(until_s, bool) or not isinstance(until_s, number):
            raise TypeError(f"until_s must be a number of seconds, got {until_s!r}")
        if math.isnan(until_s):
            raise ConfigurationError("until_s must not be NaN")
        instants = 0
        while True:
            instants += self._advance(float(until_s), theta_value)
            pending = int(self._xstate[rk.X_PENDING])
            if pending < 0:
                return instants
            self._fill_dedicated_keys(pending)

    def _advance(self, until_s: float, theta: float) -> int:
        istate_m, iwork_m, fwork_m = self._main
        istate_d, iwork_d, fwork_d = self._dedicated
        args = (
            self.jobs, self._jobs_d, self._keys_m, self._keys_d, *self._flags,
            self.dedicated_procs, theta, self.balance, until_s,
            istate_m, iwork_m, fwork_m, istate_d, iwork_d, fwork_d, self._killed, self._xstate,
        )  # fmt: skip
        return int(call_repairing_cache(rk.advance, *args))

    # -- results ----------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True when every job has started and finished."""
        n = self.jobs.shape[1]
        return bool(
            self._main[0][kernel.NEXT_SUB] == n
            and self._main[0][kernel.HLEN] == 0
            and self._dedicated[0][kernel.HLEN] == 0
            and self._dedicated[0][kernel.QLEN] == self._dedicated[0][kernel.DEAD]
        )

    @property
    def redirections(self) -> int:
        """Number of jobs redirected so far."""
        return int(self._xstate[rk.X_COUNT])

    @property
    def kernel_order(self) -> np.ndarray | None:
        """Permutation from the caller's job order to the kernel's (submit time, job number)
        order, or None when the caller's order already is the kernel's."""
        order = self._matrix.order
        return None if order is None else order.copy()

    def _restore(self, values: np.ndarray) -> np.ndarray:
        return self._matrix.restore(values)

    def _redirected(self) -> np.ndarray:
        return ~np.isnan(self._killed)

    @property
    def redirected(self) -> np.ndarray:
        """True for the jobs redirected so far, in the caller's job order."""
        return self._restore(self._redirected())

    @property
    def killed_s(self) -> np.ndarray:
        """Redirection instant ρ_j (s; NaN when not redirected), in the caller's job order."""
        return self._restore(self._killed)

    @property
    def first_start_s(self) -> np.ndarray:
        """Start in the main pool (s; NaN while not started), in the caller's job order."""
        return self._restore(self._main[2][kernel.START])

    @property
    def start_s(self) -> np.ndarray:
        """Final start (s): on the dedicated pool for a redirected job (NaN while it waits
        there), else in the main pool; in the caller's job order."""
        start = np.where(self._redirected(), self._dedicated[2][kernel.START],
                         self._main[2][kernel.START])  # fmt: skip
        return self._restore(start)

    @property
    def backfilled(self) -> np.ndarray:
        """True when the final start was a backfill (step 4), in the caller's job order."""
        status = np.where(self._redirected(), self._dedicated[1][kernel.STATUS],
                          self._main[1][kernel.STATUS])  # fmt: skip
        return self._restore(status == kernel.STARTED_BACKFILL)

    @property
    def wasted_proc_s(self) -> np.ndarray:
        """Processor-seconds of each job's killed run, q_j · (ρ_j − first start), 0 when not
        redirected; in the caller's job order."""
        lost = self.jobs[kernel.PROCS] * (self._killed - self._main[2][kernel.START])
        return self._restore(np.where(self._redirected(), lost, 0.0))

    @property
    def counters(self) -> np.ndarray:
        """Current counter of each job running in the main pool (-1 for the others), in the
        caller's job order: the submissions after ``max(its start, the last redirection)``."""
        istate, iwork, fwork = self._main
        out = np.full(self.jobs.shape[1], -1, dtype=np.int64)
        running = iwork[kernel.RUNNING, : istate[kernel.RLEN]]
        base = np.searchsorted(self.jobs[kernel.SUBMIT], fwork[kernel.START, running], "right")
        out[running] = istate[kernel.NEXT_SUB] - np.maximum(base, self._xstate[rk.X_RESET])
        return self._restore(out)

    def arrays(self) -> RedirectArrays:
        """The results so far as arrays, in the caller's job order."""
        return RedirectArrays(
            start_s=self.start_s,
            first_start_s=self.first_start_s,
            killed_s=self.killed_s,
            redirected=self.redirected,
            wasted_proc_s=self.wasted_proc_s,
            backfilled=self.backfilled,
            redirections=self.redirections,
        )


def simulate_redirect_arrays(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    estimate_s: np.ndarray,
    machine_procs: int,
    *,
    alpha: float,
    theta: float | None,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    dedicated_primary: str | None = None,
    dedicated_backfill: str | None = None,
    balance: bool = False,
    requested_s: np.ndarray | None = None,
    job_id: np.ndarray | None = None,
    validate: bool = True,
) -> RedirectArrays:
    """A whole redirection run over arrays (the arguments of :class:`RedirectSimulation` and
    θ of :meth:`RedirectSimulation.run`); results in the given job order."""
    simulation = RedirectSimulation(
        submit_s, procs, run_s, estimate_s, machine_procs, alpha=alpha, primary=primary,
        backfill=backfill, dedicated_primary=dedicated_primary,
        dedicated_backfill=dedicated_backfill, balance=balance, requested_s=requested_s,
        job_id=job_id, validate=validate,
    )  # fmt: skip
    simulation.run(theta=theta)
    return simulation.arrays()


def _summary(
    jobs: pl.DataFrame, machine_procs: int, tau_s: float, redirections: int
) -> RedirectSummary:
    figures = run_figures(*table_arrays(jobs), machine_procs, tau_s=tau_s,
                          wasted_proc_s=jobs["wasted_proc_s"].to_numpy())  # fmt: skip
    return RedirectSummary.from_figures(figures, redirections=redirections)


def simulate_redirect(
    trace_or_table: Trace | pl.DataFrame,
    *,
    alpha: float,
    theta: float | None,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    dedicated_primary: str | None = None,
    dedicated_backfill: str | None = None,
    balance: bool = False,
    machine_procs: int | None = None,
    tau_s: float = REDIRECT_TAU_S,
) -> RedirectResult:
    """EASY on a main pool with redirection of long-standing jobs to a dedicated pool.

    Parameters
    ----------
    trace_or_table
        A :class:`~scheduler.traces.swf.Trace` (usually after :func:`scheduler.strong_filter`),
        or a table with the SWF columns ``job_id, submit_s, run_s, alloc_procs, req_procs,
        req_time_s`` (then ``machine_procs`` is required).
    alpha
        Dedicated share α in [0, 1): ``ceil(alpha * m)`` processors form the dedicated pool.
    theta
        Redirection threshold θ (submissions; a job is over it when its counter is > θ);
        ``inf`` or ``None``: plain EASY on the main pool.
    primary, backfill, dedicated_primary, dedicated_backfill, balance
        As for :class:`RedirectSimulation`.
    machine_procs
        m, processors of the whole machine; overrides the trace's.
    tau_s
        τ (s) of the bounded slowdown (default 60 s).

    Notes
    -----
    The schedulers see the requested time (SWF field 9) as each job's estimate; each job uses
    its allocated processors (field 5), or its requested ones (field 8) when unknown.
    """
    table, m = trace_table(trace_or_table, machine_procs, "simulate_redirect")
    m = machine_procs_value(m)
    balance = flag(balance, "balance")
    theta_value = _theta(theta)
    if isinstance(tau_s, bool) or not isinstance(tau_s, int | float) or not tau_s > 0:
        raise ConfigurationError(f"tau_s must be > 0 seconds, got {tau_s!r}")
    jobs = table.select(
        "job_id",
        "submit_s",
        used_procs().alias("procs"),
        "run_s",
        pl.col("req_time_s").cast(pl.Float64).alias("estimate_s"),
    )
    simulation = RedirectSimulation(
        jobs["submit_s"].to_numpy(), jobs["procs"].to_numpy(), jobs["run_s"].to_numpy(),
        jobs["estimate_s"].to_numpy(), m, alpha=alpha, primary=primary, backfill=backfill,
        dedicated_primary=dedicated_primary, dedicated_backfill=dedicated_backfill,
        balance=balance, job_id=jobs["job_id"].to_numpy(),
    )  # fmt: skip
    simulation.run(theta=theta_value)
    out = simulation.arrays()
    result = (
        jobs.with_columns(
            pl.Series("start_s", out.start_s),
            pl.Series("pool", np.where(out.redirected, "dedicated", "main")),
            pl.Series("redirected", out.redirected),
            pl.Series("first_start_s", out.first_start_s),
            pl.Series("killed_s", out.killed_s),
            pl.Series("wasted_proc_s", out.wasted_proc_s),
            pl.Series("backfilled", out.backfilled),
        )
        .select(*_RESULT_COLUMNS)
    )
    result = with_job_metrics(result, tau_s=float(tau_s)).sort("submit_s", "job_id")
    primary_name, backfill_name, d_primary, d_backfill = simulation.policies
    config = RedirectConfig(
        machine_procs=m,
        main_procs=simulation.main_procs,
        dedicated_procs=simulation.dedicated_procs,
        alpha=float(alpha),
        theta=theta_value,
        primary=get_policy(primary_name).name,
        backfill=None if backfill_name is None else get_policy(backfill_name).name,
        dedicated_primary=get_policy(d_primary).name,  # type: ignore[arg-type]
        dedicated_backfill=None if d_backfill is None else get_policy(d_backfill).name,
        balance=balance,
        tau_s=float(tau_s),
    )
    summary = _summary(result, m, float(tau_s), out.redirections)
    return RedirectResult(result, summary, config, out.redirections)
