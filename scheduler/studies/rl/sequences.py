"""Every policy on every test sequence of one log: RLScheduler's heuristics in its scheduler (the
compatible mode) and schedlab's policies in its EASY engine (the easy mode), with and without
backfilling.

Both modes schedule the same jobs: the log as RLScheduler reads it
(:func:`scheduler.sim.rlscheduler.rls_workload`), the sequences it draws. The easy mode counts
processors (the machine is ``MaxProcs``), sees as estimate the requested time (the run time
when unknown, as RLScheduler's reading) and backfills by EASY's rule in submit order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from scheduler.sim.agent import AgentSimulation
from scheduler.sim.engine import simulate_arrays
from scheduler.sim.rlscheduler import RlsWorkload, rls_keys, run_rls_sequence
from scheduler.studies.rl.online import bandit_label, bandit_schedule
from scheduler.studies.rl.plan import (
    COMPATIBLE,
    COMPATIBLE_EASY_BACKFILL,
    EASY,
    EASY_COMPATIBLE_SCORES,
)

__all__ = ["SEQUENCE_FIGURES", "score_ranks", "sequence_runs"]

#: The figures of a sequence kept in the tables (fields of RunFigures).
SEQUENCE_FIGURES = ("avg_bsld", "avg_wait_s", "max_wait_s", "utilisation")


def score_ranks(keys: np.ndarray) -> np.ndarray:
    """One number per job ordering the jobs as RLScheduler's two-row keys do (row 0, then row
    1; equal pairs share a rank, so the engine breaks their tie in submit order; NaN last)."""
    order = np.lexsort((keys[1], keys[0]))
    pairs = keys[:, order]
    new = np.ones(order.shape[0], dtype=bool)
    new[1:] = ~((pairs[0, 1:] == pairs[0, :-1]) & (pairs[1, 1:] == pairs[1, :-1]))
    ranks = np.empty(order.shape[0])
    ranks[order] = np.cumsum(new)
    return ranks


def _easy_with_scores(workload: RlsWorkload, start: int, length: int, score: str,
                      backfill: bool) -> np.ndarray:  # fmt: skip
    """schedlab's EASY choosing by RLScheduler's score ``score`` (its static key)."""
    sl = slice(start, start + length)
    simulation = AgentSimulation(
        workload.submit_s[sl], workload.procs[sl], workload.run_s[sl], workload.estimate_s[sl],
        workload.max_procs, job_id=workload.job_id[sl], backfill=backfill,
    )  # fmt: skip
    return simulation.run_keys(score_ranks(rls_keys(workload, start, length, score)))


class _Run:
    """One sequence with one backfilling setting: :meth:`add` records a schedule of it as a
    row of :func:`sequence_runs`'s table."""

    def __init__(self, workload: RlsWorkload, backfill: bool, index: int, start: int,
                 rows: list[dict]) -> None:  # fmt: skip
        self.workload, self.backfill, self.index, self.start = workload, backfill, index, start
        self.rows = rows

    def add(self, mode: str, policy: str, start_s: np.ndarray) -> None:
        figures = self.workload.figures(self.start, start_s)
        self.rows.append({
            "mode": mode, "backfill": self.backfill, "policy": policy, "sequence": self.index,
            "start": self.start, **{name: float(getattr(figures, name)) for name in
                                     SEQUENCE_FIGURES},
        })  # fmt: skip


def sequence_runs(
    workload: RlsWorkload,
    starts: Sequence[int],
    length: int,
    *,
    heuristics: Sequence[str],
    policies: Sequence[str],
    backfill: Sequence[bool],
    bandits: Sequence[str] = (),
    period_s: float = 43200.0,
    seed: int = 0,
    ablation: bool = False,
) -> pl.DataFrame:
    """One row per (mode, backfill, policy, sequence): ``mode, backfill, policy, sequence,
    start`` and :data:`SEQUENCE_FIGURES`; the ``bandits`` choose among ``policies`` every
    ``period_s`` seconds (:mod:`scheduler.studies.rl.online`; policy ``online:<spec>``, random
    draws from ``seed``, the sequence and the bandit); with ``ablation`` the heuristics also in
    modes ``compatible+easy-backfill`` (with backfilling only: without, it is the compatible
    mode) and ``easy+compatible-scores``."""
    estimates = workload.estimate_s
    rows = []
    for bf in backfill:
        for index, start in enumerate(starts):
            sl = slice(start, start + length)
            add = _Run(workload, bf, index, int(start), rows).add
            for score in heuristics:
                add(COMPATIBLE, score, run_rls_sequence(workload, start, length, score, bf))
                if ablation and bf:
                    add(COMPATIBLE_EASY_BACKFILL, score,
                        run_rls_sequence(workload, start, length, score, bf, easy_rule=True))
                if ablation:
                    add(EASY_COMPATIBLE_SCORES, score,
                        _easy_with_scores(workload, start, length, score, bf))
            for policy in policies:
                add(EASY, policy, simulate_arrays(
                    workload.submit_s[sl], workload.procs[sl], workload.run_s[sl],
                    estimates[sl], workload.max_procs, primary=policy,
                    backfill="FCFS" if bf else None, job_id=workload.job_id[sl],
                ))  # fmt: skip
            for number, spec in enumerate(bandits):
                starts_s, _ = bandit_schedule(
                    workload.submit_s[sl], workload.procs[sl], workload.run_s[sl],
                    estimates[sl], workload.max_procs, policies=policies, spec=spec,
                    period_s=period_s, backfill=bf,
                    rng=np.random.default_rng([seed, index, number]),
                )  # fmt: skip
                add(EASY, bandit_label(spec), starts_s)
    return pl.DataFrame(rows).with_columns(pl.col("sequence").cast(pl.Int64))
