"""The thesis's online policy selection as a baseline of the RL benchmark: a bandit chooses the
EASY policy period by period within a test sequence, on one continuous machine (jobs waiting or
running carry over a switch), from the feedback of the jobs that ended in the period (the sum
and number of their bounded slowdowns). RLScheduler compared its agent with fixed heuristics
only; this is the thesis's answer to the same question (choose, online, among known policies).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scheduler.core.constants import BSLD_TAU_S
from scheduler.sim.engine import Simulation
from scheduler.sim.metrics import bounded_slowdown
from scheduler.studies.common.bandits import BanditFeedback, make_bandit

__all__ = ["bandit_label", "bandit_schedule"]


def bandit_label(spec: str) -> str:
    """The policy name of a bandit's rows in the study's tables."""
    return f"online:{spec}"


def bandit_schedule(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    estimate_s: np.ndarray,
    machine_procs: int,
    *,
    policies: Sequence[str],
    spec: str,
    period_s: float,
    backfill: bool,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[str]]:
    """Start times (s) of the sequence when the bandit ``spec`` chooses, at the start of each
    period of ``period_s`` seconds from the first submission, the primary policy among
    ``policies`` (EASY with backfilling in submit order, or list scheduling); and the policy of
    each period."""
    simulation = Simulation(submit_s, procs, run_s, estimate_s, machine_procs)
    bandit = make_bandit(spec, list(policies), rng=rng)
    backfill_policy = "FCFS" if backfill else None
    now = float(submit_s.min())
    chosen = []
    while not simulation.done:
        index, _ = bandit.choose()
        until = now + period_s
        simulation.run(until, primary=policies[index], backfill=backfill_policy)
        start = simulation.start_s
        end = start + run_s
        ended = np.isfinite(end) & (end >= now) & (end < until)
        slowdowns = bounded_slowdown(start[ended] - submit_s[ended], run_s[ended],
                                     tau_s=BSLD_TAU_S)  # fmt: skip
        bandit.update(index, BanditFeedback(float(slowdowns.sum()), int(ended.sum())))
        chosen.append(policies[index])
        now = until
    return simulation.start_s, chosen
