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

from scheduler.core.constants import BSLD_TAU_S
from scheduler.sim.engine import simulate_arrays
from scheduler.sim.metrics import RunFigures, run_figures
from scheduler.sim.rlscheduler import RlsWorkload, run_rls_sequence
from scheduler.studies.rl.plan import COMPATIBLE, EASY

__all__ = ["SEQUENCE_FIGURES", "easy_estimates", "figures_row", "sequence_runs"]

#: The figures of a sequence kept in the tables (fields of RunFigures).
SEQUENCE_FIGURES = ("avg_bsld", "avg_wait_s", "max_wait_s", "utilisation")


def easy_estimates(workload: RlsWorkload) -> np.ndarray:
    """The estimates the EASY engine sees: the requested time, or the run time when the log's
    requested time is unknown (RLScheduler's -1 of a job with a negative run time)."""
    return np.where(workload.requested_s > 0, workload.requested_s, workload.run_s)


def figures_row(workload: RlsWorkload, start: int, start_s: np.ndarray) -> dict[str, float]:
    """The :data:`SEQUENCE_FIGURES` of a scheduled sequence (τ = 10 s)."""
    sl = slice(start, start + start_s.shape[0])
    figures: RunFigures = run_figures(
        workload.submit_s[sl], start_s, workload.run_s[sl], workload.procs[sl],
        workload.max_procs, tau_s=BSLD_TAU_S,
    )  # fmt: skip
    return {name: float(getattr(figures, name)) for name in SEQUENCE_FIGURES}


def sequence_runs(
    workload: RlsWorkload,
    starts: Sequence[int],
    length: int,
    *,
    heuristics: Sequence[str],
    policies: Sequence[str],
    backfill: Sequence[bool],
) -> pl.DataFrame:
    """One row per (mode, backfill, policy, sequence): ``mode, backfill, policy, sequence,
    start`` and :data:`SEQUENCE_FIGURES`."""
    estimates = easy_estimates(workload)
    rows = []
    for bf in backfill:
        for index, start in enumerate(starts):
            sl = slice(start, start + length)
            for score in heuristics:
                starts_s = run_rls_sequence(workload, start, length, score, bf)
                rows.append({"mode": COMPATIBLE, "backfill": bf, "policy": score,
                             "sequence": index, "start": int(start),
                             **figures_row(workload, start, starts_s)})  # fmt: skip
            for policy in policies:
                starts_s = simulate_arrays(
                    workload.submit_s[sl], workload.procs[sl], workload.run_s[sl],
                    estimates[sl], workload.max_procs, primary=policy,
                    backfill="FCFS" if bf else None, job_id=workload.job_id[sl],
                )  # fmt: skip
                rows.append({"mode": EASY, "backfill": bf, "policy": policy,
                             "sequence": index, "start": int(start),
                             **figures_row(workload, start, starts_s)})  # fmt: skip
    return pl.DataFrame(rows).with_columns(pl.col("sequence").cast(pl.Int64))
