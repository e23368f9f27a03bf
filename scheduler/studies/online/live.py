"""Online policy selection on long resampled traces: the live system and its feedback.

The live system is EASY(P, Θ) with the same policy P ordering the primary and the backfilling queue
(Θ = 40 h by default). Time is cut into policy periods of ``period_s`` seconds aligned on an
origin ``period_origin_s``: period t is ``[origin + t·Δ, origin + (t+1)·Δ)``. The online study
aligns them on the calendar: its long traces (:mod:`scheduler.studies.online.long_traces`) count
time on the log's local wall clock from a Monday 00:00, so with origin 0 a 1d period runs from
local midnight to midnight, a 1w period from Monday 00:00 to Monday 00:00, and any other Δ
(6 h, 2 d) is laid end to end from that Monday 00:00. ``period_origin_s=None`` aligns them on
the trace's first submission (the published study). At the start of period t a selector
(:mod:`scheduler.studies.online.selectors`) picks P_t and the live system runs with it until the
next period. The system is never reset: jobs waiting or running at a switch carry over (one
resumable :class:`~scheduler.sim.engine.Simulation` advanced period by period).

Both queues are in the thresholded order of P, Algorithm 2 of Reis's thesis: with
``threshold_backfill=True`` (the default here) the backfill candidates waiting more than Θ come
first too; ``False`` orders them by P alone (``docs/simulator.md``, step 4).

Feedback at the end of period t:

- live: the sum of the waits (s) of the jobs that finished during the period (end time in
  ``[t_start, t_end)``) and their number;
- simulated (only for selectors that need it): for every policy P of the set, w(t; P) = the sum
  of the waits of the jobs *submitted* during the period, simulated alone from an empty machine
  until it drains (:func:`simulated_period_costs`; computed once per trace and period length
  and shared by the ``full`` and ``noisy`` selectors).

The long traces it runs on are built by :mod:`scheduler.studies.online.long_traces`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError
from scheduler.sim.arrays import TraceArrays
from scheduler.sim.conservative import simulate_conservative_arrays
from scheduler.sim.engine import (
    Simulation,
    SimulationConfig,
    SimulationResult,
    scheduled_jobs,
    simulate_arrays,
)
from scheduler.sim.metrics import summarize
from scheduler.sim.multifactor import MULTIFACTOR
from scheduler.sim.slurm_arm import MultifactorArm
from scheduler.studies.common.slurm import conservative_kwargs, user_attributes
from scheduler.studies.online.selectors import PeriodFeedback, Selector

__all__ = [
    "DAY_S",
    "OnlineRun",
    "online_result",
    "replay_online",
    "run_online",
    "simulated_period_costs",
]


DAY_S = 86_400.0


def _period_origin(submit_s: np.ndarray, period_origin_s: float | None) -> float:
    """The instant (s) period 0 starts at: ``period_origin_s``, or the first submission when
    it is ``None`` (0 for a trace without jobs).

    Raises ConfigurationError when the origin is not finite or comes after the first
    submission (a job would fall before period 0).
    """
    first = float(submit_s[0]) if submit_s.size else 0.0
    if period_origin_s is None:
        return first
    origin = float(period_origin_s)
    if not math.isfinite(origin) or origin > first:
        raise ConfigurationError(
            f"period_origin_s must be finite and at most the first submission ({first} s), "
            f"got {period_origin_s}"
        )
    return origin


def _period_bounds(submit_s: np.ndarray, period_s: float, t0: float) -> np.ndarray:
    """Index bounds of the jobs submitted in each period from ``t0`` (jobs sorted by submit
    time)."""
    periods = int((submit_s[-1] - t0) // period_s) + 1
    edges = t0 + period_s * np.arange(periods + 1, dtype=np.float64)
    return np.searchsorted(submit_s, edges, side="left")


def simulated_period_costs(
    trace: TraceArrays,
    machine_procs: int,
    policies: tuple[str, ...],
    *,
    period_s: float,
    threshold_s: float,
    threshold_backfill: bool = True,
    period_origin_s: float | None = None,
    slurm: Mapping[str, Any] | None = None,
) -> np.ndarray:
    """w(t; P): for each period t and policy P, the sum of the waits (s) of the jobs submitted
    during t, simulated alone under EASY(P, P, Θ) from an empty machine until it drains
    (``threshold_backfill``: backfill in the thresholded order, as the live system); for P =
    ``"multifactor"`` under Slurm's scheduler as ``slurm`` configures it
    (:mod:`scheduler.studies.common.slurm`; fair-share per user, from no usage).

    Period t is ``[origin + t·Δ, origin + (t+1)·Δ)`` with origin ``period_origin_s`` (s;
    ``None``: the first submission), as in :func:`run_online`. Returns a float64 array of shape
    (periods, len(policies)); periods run from the origin to the last submission (later periods
    have no submitted job, hence cost 0).
    """
    if period_s <= 0:
        raise ConfigurationError(f"period_s must be > 0, got {period_s}")
    t0 = _period_origin(trace.submit_s, period_origin_s)
    bounds = _period_bounds(trace.submit_s, period_s, t0)
    costs = np.zeros((bounds.size - 1, len(policies)), dtype=np.float64)
    options = conservative_kwargs(slurm, MULTIFACTOR) if MULTIFACTOR in policies else {}
    for t in range(bounds.size - 1):
        lo, hi = bounds[t], bounds[t + 1]
        if hi == lo:
            continue
        submit = trace.submit_s[lo:hi]
        for k, policy in enumerate(policies):
            if policy == MULTIFACTOR:
                start = simulate_conservative_arrays(
                    submit, trace.procs[lo:hi], trace.run_s[lo:hi], trace.estimate_s[lo:hi],
                    machine_procs, primary=policy, threshold_s=threshold_s,
                    job_id=trace.job_id[lo:hi], validate=False,
                    attributes=user_attributes(trace.user_id[lo:hi], submit), **options,
                ).start_s  # fmt: skip
            else:
                start = simulate_arrays(
                    submit, trace.procs[lo:hi], trace.run_s[lo:hi], trace.estimate_s[lo:hi],
                    machine_procs, primary=policy, backfill=policy, threshold_s=threshold_s,
                    threshold_backfill=threshold_backfill, job_id=trace.job_id[lo:hi],
                    validate=False,
                )  # fmt: skip
            costs[t, k] = float((start - submit).sum())
    return costs


@dataclass(frozen=True)
class OnlineRun:
    """A live run: start times (s, job order of the trace), the policy of every period, the
    cumulative waiting time (s) of the jobs finished by the end of each day (day d is
    ``[origin + d·86,400, origin + (d+1)·86,400)``, the periods' origin), and which jobs were
    started by backfilling (job order of the trace)."""

    strategy: str
    period_s: float
    start_s: np.ndarray
    choices: tuple[str, ...]
    daily_cumulative_wait_s: np.ndarray
    daily_finished_jobs: np.ndarray
    backfilled: np.ndarray

    @property
    def total_wait_s(self) -> float:
        return float(self.daily_cumulative_wait_s[-1]) if self.daily_cumulative_wait_s.size else 0.0


def run_online(
    trace: TraceArrays,
    machine_procs: int,
    selector: Selector,
    *,
    period_s: float,
    threshold_s: float = 40 * 3600.0,
    threshold_backfill: bool = True,
    costs: np.ndarray | None = None,
    period_origin_s: float | None = None,
    slurm: Mapping[str, Any] | None = None,
) -> OnlineRun:
    """Run the live EASY(P_t, P_t, Θ) system, asking ``selector`` for P_t every period.

    ``threshold_backfill`` (default: Algorithm 2) backfills in the thresholded order of P_t.
    P_t = ``"multifactor"`` runs the period under Slurm's scheduler as ``slurm`` configures
    it (:class:`scheduler.sim.slurm_arm.MultifactorArm` on the same machine: its fair-share
    usage counts every job that ran, whichever policy scheduled it; Θ applies, overdue jobs
    first).

    ``costs`` is :func:`simulated_period_costs` for the selector's policies, ``period_s`` and
    ``period_origin_s`` (required when ``selector.needs_simulation``). Period t is
    ``[origin + t·Δ, origin + (t+1)·Δ)`` and day d of the curve ``[origin + d·86,400,
    origin + (d+1)·86,400)``, with origin ``period_origin_s`` (s, at most the first submission;
    0 on a calendar-aligned long trace: local midnights and Mondays) or, when ``None``, the
    first submission. The run goes on period by period until every job has finished; the
    selector is asked and informed every period, also after the last submission (the simulated
    costs of such periods are 0).
    """
    if period_s <= 0 or math.isnan(period_s):
        raise ConfigurationError(f"period_s must be > 0, got {period_s}")
    if selector.needs_simulation and costs is None:
        raise ConfigurationError(f"selector {selector.name} needs the simulated period costs")
    if costs is not None and costs.shape[1] != len(selector.policies):
        raise ConfigurationError("costs must have one column per policy of the selector")
    submit, run = trace.submit_s, trace.run_s
    simulation = Simulation(
        submit, trace.procs, run, trace.estimate_s, machine_procs, job_id=trace.job_id
    )
    if simulation.kernel_order is not None:
        raise ConfigurationError("the trace's jobs must be in (submit time, job number) order")
    arm = None
    if MULTIFACTOR in selector.policies:
        arm = MultifactorArm(
            simulation, attributes=user_attributes(trace.user_id, submit),
            **conservative_kwargs(slurm, MULTIFACTOR),
        )  # fmt: skip
    started = simulation.start_s_view()
    zero = np.zeros(len(selector.policies))
    t0 = _period_origin(submit, period_origin_s)
    pending = np.empty(0, dtype=np.int64)
    next_job, period, choices = 0, 0, []
    while True:
        policy = selector.choose(period)
        choices.append(policy)
        t_end = t0 + (period + 1) * period_s
        if policy == MULTIFACTOR:
            arm.run(t_end, threshold_s=threshold_s)  # type: ignore[union-attr]
        else:
            simulation.run(
                t_end, primary=policy, backfill=policy, threshold_s=threshold_s,
                threshold_backfill=threshold_backfill,
            )  # fmt: skip
        # jobs submitted by t_end join the watch list; those ended before t_end report now
        arrived = int(np.searchsorted(submit, t_end, side="left"))
        pending = np.concatenate((pending, np.arange(next_job, arrived, dtype=np.int64)))
        next_job = arrived
        start = started[pending]
        finished = ~np.isnan(start) & (start + run[pending] < t_end)
        done = pending[finished]
        pending = pending[~finished]
        simulated = None
        if selector.needs_simulation:
            simulated = costs[period] if period < costs.shape[0] else zero  # type: ignore[index]
        selector.observe(
            period,
            PeriodFeedback(
                policy=policy,
                live_wait_s=float((started[done] - submit[done]).sum()),
                live_jobs=int(done.size),
                simulated_wait_s=simulated,
            ),
        )
        if simulation.done:
            break
        period += 1
    start_s = simulation.start_s
    end_s = start_s + run
    day = np.floor((end_s - t0) / DAY_S).astype(np.int64)
    wait = start_s - submit
    per_day = np.bincount(day, weights=wait) if wait.size else np.zeros(0)
    finished_per_day = np.bincount(day) if wait.size else np.zeros(0, dtype=np.int64)
    return OnlineRun(
        strategy=selector.name,
        period_s=float(period_s),
        start_s=start_s,
        choices=tuple(choices),
        daily_cumulative_wait_s=np.cumsum(per_day),
        daily_finished_jobs=np.cumsum(finished_per_day),
        backfilled=simulation.backfilled,
    )


class _Replay(Selector):
    """A selector that plays back recorded choices (the policy of period t is ``choices[t]``):
    the same live system as the run that recorded them, without its learning."""

    needs_simulation = False

    def __init__(self, choices: Sequence[str], name: str) -> None:
        self.name = name
        self.choices = tuple(choices)
        self.policies = tuple(dict.fromkeys(self.choices))
        self.history: list[dict[str, Any]] = []

    def choose(self, period: int) -> str:
        if period >= len(self.choices):
            raise ConfigurationError(
                f"replay of {self.name}: the run needs a policy for period {period}, the "
                f"recorded choices cover {len(self.choices)} periods"
            )
        self.history.append({"period": period, "policy": self.choices[period]})
        return self.choices[period]

    def observe(self, period: int, feedback: PeriodFeedback) -> None:
        self.history[period]["live_wait_s"] = feedback.live_wait_s


def replay_online(
    trace: TraceArrays,
    machine_procs: int,
    choices: Sequence[str],
    *,
    name: str,
    period_s: float,
    threshold_s: float = 40 * 3600.0,
    threshold_backfill: bool = True,
    period_origin_s: float | None = None,
    slurm: Mapping[str, Any] | None = None,
) -> OnlineRun:
    """Replay a live run from its recorded choices: :func:`run_online` with period t run under
    ``choices[t]`` (the ``policy`` column of a run's choices table, in period order), the other
    arguments as the recorded run's. The live system is deterministic given its choices, so
    the schedule is the recorded run's, job for job, and the replay costs one live run without
    the selector's work or the simulated period costs.

    Raises
    ------
    ConfigurationError
        The choices end before the run does (they are not the run's on this trace), or as
        :func:`run_online`.
    """
    if not choices:
        raise ConfigurationError(f"replay of {name}: no recorded choices")
    return run_online(
        trace, machine_procs, _Replay(choices, name), period_s=period_s,
        threshold_s=threshold_s, threshold_backfill=threshold_backfill,
        period_origin_s=period_origin_s, slurm=slurm,
    )  # fmt: skip


def online_result(trace: TraceArrays, machine_procs: int, run: OnlineRun) -> SimulationResult:
    """A live run as an engine result over the trace's jobs: per-job start, backfilled flag and
    metrics (:func:`~scheduler.sim.engine.scheduled_jobs`: wait, end, bounded slowdown with
    τ = 10 s), its summary, and the machine size (processors), for what draws or compares
    engine results (``scheduler.sim.schedule.schedule_of``). The config's policy is the first
    period's (the run switches)."""
    jobs = pl.DataFrame({
        "job_id": trace.job_id, "submit_s": trace.submit_s, "procs": trace.procs,
        "run_s": trace.run_s, "estimate_s": trace.estimate_s, "requested_s": trace.estimate_s,
    })  # fmt: skip
    table = scheduled_jobs(jobs, run.start_s, run.backfilled)
    policy = run.choices[0] if run.choices else "FCFS"
    config = SimulationConfig(machine_procs=int(machine_procs), primary=policy, backfill=policy)
    return SimulationResult(table, summarize(table, int(machine_procs), tau_s=BSLD_TAU_S), config)
