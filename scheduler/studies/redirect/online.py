"""θ chosen online, period by period, by a bandit.

One week of a log, one dedicated share α, one load-balancing option: a
:class:`~scheduler.sim.redirection.RedirectSimulation` is advanced one period at a time. Period
k covers ``[s + k·P, s + (k+1)·P)``, s the start of the week and P the period
(``redirect.online.period``, 1 day by default); periods go on after the week's last submission
until every job has finished. At the start of period k a bandit
(:mod:`scheduler.studies.common.bandits`, arms = the thresholds of ``redirect.thetas`` in their
order) chooses θ_k; the simulation runs every event before the period's end with θ_k (the
waiting and running jobs and the counters carry over from one period to the next).

**Cost of a period.** The jobs that *finished* during period k: final start (on the dedicated
pool for a redirected job) plus run time in ``[s + k·P, s + (k+1)·P)``. The bandit receives the
sum of their bounded slowdowns ``max((w_j + p_j) / max(p_j, τ), 1)`` (w_j from the original
submission to the final start, τ = ``redirect.tau_s``, 60 s) and their number, i.e. the cost of
the period is their mean bounded slowdown (a period where no job finished is a period with count
0, which teaches nothing: ε-greedy gives no estimate to an arm without a counted job, the
normalised bandits ignore the period).

**Seeds.** Every run of a (log, week, α) draws from a generator seeded with
``(config seed, CRC-32 of the log name, week number, round(α·10⁶))``: the selectors and the two
balance options of a (log, week, α) see the same random numbers (common random numbers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler.sim.metrics import bounded_slowdown
from scheduler.sim.redirection import RedirectSimulation
from scheduler.studies.common.bandits import Bandit, BanditFeedback, make_bandit
from scheduler.studies.common.seeds import seed_key

__all__ = ["OnlineRun", "online_rng", "online_theta_run"]


def online_rng(seed: int, trace: str, week: int, alpha: float) -> np.random.Generator:
    """The generator of the online runs of (log, week, α) (see the module docstring)."""
    key = seed_key(seed, trace, week, round(alpha * 1e6))
    return np.random.default_rng(np.random.SeedSequence(key))


@dataclass(frozen=True)
class OnlineRun:
    """An online-θ run: the finished simulation and one history entry per period
    (``{"period": k, "theta": θ_k, "jobs": n_k, "cost": mean bsld or NaN, ...}`` plus the
    bandit's own quantities)."""

    simulation: RedirectSimulation
    history: list[dict[str, Any]]

    @property
    def thetas(self) -> list[float]:
        return [entry["theta"] for entry in self.history]


def online_theta_run(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    estimate_s: np.ndarray,
    machine_procs: int,
    *,
    alpha: float,
    thetas: Sequence[float],
    selector: str | Bandit,
    rng: np.random.Generator,
    start_s: float,
    period_s: float,
    tau_s: float,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    balance: bool = False,
    job_id: np.ndarray | None = None,
) -> OnlineRun:
    """Run the jobs with θ chosen at each period start by ``selector`` (a spec of
    :func:`~scheduler.studies.common.bandits.make_bandit` over ``thetas``, or a bandit whose
    arms are ``thetas``), periods of ``period_s`` seconds from ``start_s`` (at or before the
    first submission); see the module docstring."""
    if not period_s > 0 or not math.isfinite(period_s):
        raise ValueError(f"period_s must be finite and > 0, got {period_s!r}")
    arms = tuple(float(theta) for theta in thetas)
    bandit = make_bandit(selector, arms, rng=rng) if isinstance(selector, str) else selector
    simulation = RedirectSimulation(
        submit_s, procs, run_s, estimate_s, machine_procs, alpha=alpha, primary=primary,
        backfill=backfill, balance=balance, job_id=job_id,
    )  # fmt: skip
    submit = np.asarray(submit_s, dtype=np.float64)
    run = np.asarray(run_s, dtype=np.float64)
    history: list[dict[str, Any]] = []
    period = 0
    while not simulation.done:
        low = start_s + period * period_s
        high = low + period_s
        index, details = bandit.choose()
        theta = arms[index]
        simulation.run(high, theta=theta)
        start = simulation.start_s
        end = start + run
        finished = ~np.isnan(start) & (end >= low) & (end < high)
        wait = start[finished] - submit[finished]
        bsld = bounded_slowdown(wait, run[finished], tau_s=tau_s)
        count = int(finished.sum())
        total = float(bsld.sum())
        learned = bandit.update(index, BanditFeedback(total=total, count=count))
        history.append({"period": period, "theta": theta, "jobs": count,
                        "cost": total / count if count else math.nan,
                        **details, **learned})  # fmt: skip
        period += 1
    return OnlineRun(simulation=simulation, history=history)
