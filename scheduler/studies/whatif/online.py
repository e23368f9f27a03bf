"""Choosing the scheduler online with the bandits, and the regret against the best fixed one.

Instead of fixing one alternative, a bandit (:mod:`scheduler.studies.common.bandits`: ε-greedy,
UCB1, sliding-window UCB1, Thompson sampling; the online and redirection studies share them)
chooses one alternative per week of the log and sees only that alternative's cost in that week:
the sum of its jobs' waits (s) and their number (:class:`~scheduler.studies.common.bandits.
BanditFeedback`). The weeks come in the log's order.

A week's cost under each alternative is measured once by simulating the week on its own, from an
empty machine (:func:`scheduler.studies.whatif.runs.simulate_source_weeks`). *Modelling choice*:
a switch therefore takes effect on a fresh week, with no queue carried over from the week
before (on a real cluster, the jobs left waiting by last week's scheduler are this week's);
what is measured is how fast a bandit finds the right setting for this workload, not the cost
of switching mid-queue (the online study measures that on one machine for EASY policies).

Regret (s per job): the mean wait of the jobs under the bandit's choices minus that under the
best fixed alternative in hindsight (the one with the smallest total wait over all weeks, chosen
knowing every week's cost). A bandit's own random draws (ε-greedy's exploration, Thompson's
samples) come from ``seed``, the bandit's spec and the draw number; ``draws`` repeats it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.bandits import BanditFeedback, make_bandit
from scheduler.studies.common.seeds import seed_key

__all__ = ["ONLINE_COLUMNS", "cost_matrix", "online_choices", "week_costs"]

#: Columns of :func:`online_choices`.
ONLINE_COLUMNS: dict[str, pl.DataType] = {
    "selector": pl.String(),
    "draw": pl.Int64(),
    "weeks": pl.Int64(),
    "jobs": pl.Int64(),
    "avg_wait_s": pl.Float64(),
    "best_fixed": pl.String(),
    "best_fixed_avg_wait_s": pl.Float64(),
    "regret_s": pl.Float64(),
    "relative_regret": pl.Float64(),
    "choices": pl.String(),
}


def week_costs(names: Sequence[str], tables: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """``alternative, week_index, jobs, total_wait_s`` of each alternative's week-by-week replay
    (per-job tables of :func:`~scheduler.studies.whatif.runs.simulate_source_weeks`)."""
    parts = [
        table.group_by("week_index")
        .agg(pl.len().cast(pl.Int64).alias("jobs"), pl.col("wait_s").sum().alias("total_wait_s"))
        .with_columns(pl.lit(name).alias("alternative"))
        for name, table in zip(names, tables, strict=True)
    ]
    return (
        pl.concat(parts)
        .select("alternative", "week_index", "jobs", "total_wait_s")
        .sort("alternative", "week_index")
    )


def cost_matrix(
    costs: pl.DataFrame, names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The weeks of :func:`week_costs` (``week_index``, in order), the total wait (s) of each
    week under each alternative of ``names`` (weeks x alternatives) and the jobs of each week.

    Raises
    ------
    ConfigurationError
        An alternative without costs, or one whose replay misses a week.
    """
    wide = costs.pivot(on="alternative", index="week_index", values="total_wait_s").sort(
        "week_index"
    )
    missing = [name for name in names if name not in wide.columns]
    if missing:
        raise ConfigurationError(f"no week costs for {missing}")
    totals = wide.select(list(names)).to_numpy()
    if np.isnan(totals).any():
        raise ConfigurationError("an alternative's replay misses a week of the log")
    jobs = costs.filter(pl.col("alternative") == names[0]).sort("week_index")["jobs"].to_numpy()
    return wide["week_index"].to_numpy(), totals, jobs


def online_choices(
    totals: np.ndarray,
    jobs: np.ndarray,
    names: Sequence[str],
    selectors: Sequence[str],
    *,
    draws: int,
    seed: int,
) -> pl.DataFrame:
    """Every selector of ``selectors`` (bandit specs) run ``draws`` times over the weeks of
    :func:`cost_matrix` (``totals``: weeks x ``names``, s; ``jobs`` per week):
    :data:`ONLINE_COLUMNS`, one row per (selector, draw); ``choices`` is the alternative chosen
    each week, comma-separated (``names``' positions)."""
    n_jobs = int(jobs.sum())
    best = int(np.argmin(totals.sum(axis=0)))
    best_avg = float(totals[:, best].sum()) / n_jobs
    rows = []
    for spec in selectors:
        for draw in range(draws):
            rng = np.random.default_rng(
                np.random.SeedSequence(seed_key(seed, "whatif", spec, draw))
            )
            bandit = make_bandit(spec, list(names), rng=rng)
            chosen = []
            for week in range(totals.shape[0]):
                index, _ = bandit.choose()
                bandit.update(index, BanditFeedback(float(totals[week, index]), int(jobs[week])))
                chosen.append(index)
            avg = float(totals[np.arange(len(chosen)), chosen].sum()) / n_jobs
            rows.append(
                {
                    "selector": spec,
                    "draw": draw,
                    "weeks": len(chosen),
                    "jobs": n_jobs,
                    "avg_wait_s": avg,
                    "best_fixed": names[best],
                    "best_fixed_avg_wait_s": best_avg,
                    "regret_s": avg - best_avg,
                    "relative_regret": avg / best_avg - 1.0 if best_avg > 0 else 0.0,
                    "choices": ",".join(str(i) for i in chosen),
                }
            )
    return pl.DataFrame(rows, schema=ONLINE_COLUMNS)
