"""What an administrator reads of a simulated schedule: waits, slowdown, utilisation, fairness.

Input: a schedule's jobs (:data:`JOB_COLUMNS`: the week each belongs to, its user, account,
processors, submit, run and wait times in seconds). Every figure of one run comes from
:func:`scheduler.sim.metrics.run_figures` (mean and max wait, bounded slowdown with τ = 10 s,
utilisation) and :func:`scheduler.sim.metrics.jain_index`; this module adds the percentiles
(NumPy's linear interpolation between order statistics) and the groupings:

- per week (:func:`week_figures`): :data:`WEEK_FIGURES`; ``jain_users`` is Jain's index of the
  users' mean waits in the week (1: every user waited as long on average);
- per group (:func:`group_table`): pooled over the weeks, per job size class (upper bounds in
  processors, config ``whatif.size_classes``), per account and per user: jobs, mean, median
  and 90th-percentile wait, mean bounded slowdown, and for accounts the share of the
  processor-seconds delivered *inside* the weeks' windows (work done after a week's end, while
  the machine drains, does not count: the share a scheduler gave an account while its users
  were asking) beside the configured share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S
from scheduler.sim.metrics import bounded_slowdown, jain_index, run_figures
from scheduler.traces.site import ACCOUNT_COLUMN

__all__ = [
    "GROUP_COLUMNS",
    "JOB_COLUMNS",
    "SCOPES",
    "WEEK_FIGURES",
    "group_table",
    "size_class_labels",
    "size_classes",
    "week_figures",
]

#: A simulated schedule's per-job table.
JOB_COLUMNS: dict[str, pl.DataType] = {
    "week_index": pl.Int64(),
    "job_id": pl.Int64(),
    "user_id": pl.Int64(),
    ACCOUNT_COLUMN: pl.String(),
    "procs": pl.Int64(),
    "submit_s": pl.Float64(),
    "run_s": pl.Float64(),
    "wait_s": pl.Float64(),
}

#: The figures of one week, in table order (seconds, bounded slowdown, fractions).
WEEK_FIGURES = (
    "avg_wait_s",
    "median_wait_s",
    "p90_wait_s",
    "p99_wait_s",
    "max_wait_s",
    "avg_bsld",
    "utilisation",
    "jain_users",
)

#: The groupings of :func:`group_table`.
SCOPES = ("size", "account", "user")

#: Columns of :func:`group_table`.
GROUP_COLUMNS: dict[str, pl.DataType] = {
    "scope": pl.String(),
    "group": pl.String(),
    "jobs": pl.Int64(),
    "mean_wait_s": pl.Float64(),
    "median_wait_s": pl.Float64(),
    "p90_wait_s": pl.Float64(),
    "mean_bsld": pl.Float64(),
    "usage_share": pl.Float64(),
    "configured_share": pl.Float64(),
}


def size_class_labels(edges: Sequence[int]) -> list[str]:
    """Labels of the size classes cut at ``edges`` (increasing upper bounds, processors):
    ``[1, 8, 32]`` → ``["1", "2-8", "9-32", ">32"]``."""
    labels, low = [], 1
    for edge in edges:
        labels.append(str(edge) if edge == low else f"{low}-{edge}")
        low = edge + 1
    labels.append(f">{edges[-1]}" if edges else "all")
    return labels


def size_classes(procs: np.ndarray, edges: Sequence[int]) -> np.ndarray:
    """The class number of each job (0 .. len(edges)): the first edge >= its processors."""
    return np.searchsorted(np.asarray(edges, dtype=np.float64), np.asarray(procs), side="left")


def week_figures(jobs: pl.DataFrame, machine_procs: int) -> pl.DataFrame:
    """One row per week: ``week_index``, ``jobs`` and :data:`WEEK_FIGURES`."""
    rows = []
    for (week,), part in jobs.sort("week_index").group_by("week_index", maintain_order=True):
        submit, run, wait = (part[c].to_numpy() for c in ("submit_s", "run_s", "wait_s"))
        figures = run_figures(
            submit, submit + wait, run, part["procs"].to_numpy(), machine_procs, tau_s=BSLD_TAU_S
        )
        users = (
            part.group_by("user_id")
            .agg(pl.col("wait_s").mean())
            .sort("user_id")["wait_s"]
            .to_numpy()
        )
        median, p90, p99 = np.percentile(wait, [50.0, 90.0, 99.0])
        rows.append(
            {
                "week_index": int(week),
                "jobs": part.height,
                "avg_wait_s": figures.avg_wait_s,
                "median_wait_s": float(median),
                "p90_wait_s": float(p90),
                "p99_wait_s": float(p99),
                "max_wait_s": figures.max_wait_s,
                "avg_bsld": figures.avg_bsld,
                "utilisation": figures.utilisation,
                "jain_users": jain_index(users),
            }
        )
    schema = {"week_index": pl.Int64, "jobs": pl.Int64} | dict.fromkeys(WEEK_FIGURES, pl.Float64)
    return pl.DataFrame(rows, schema=schema)


def group_table(
    jobs: pl.DataFrame,
    *,
    size_edges: Sequence[int],
    shares: Mapping[str, int],
    week_s: float,
) -> pl.DataFrame:
    """:data:`GROUP_COLUMNS` per size class, account and user (scopes in :data:`SCOPES`
    order, groups in size, then name, then user-number order), pooled over the weeks.

    ``week_s``: the length of a week's window (s; submit times are offsets in it), for the
    accounts' delivered share; ``shares``: the configured shares by account (1 when absent;
    ``configured_share`` their normalised value among the accounts that ran jobs; NaN for other
    scopes).
    """
    wait = jobs["wait_s"].to_numpy()
    run = jobs["run_s"].to_numpy()
    start = jobs["submit_s"].to_numpy() + wait
    inside = np.clip(np.minimum(start + run, week_s) - np.minimum(start, week_s), 0.0, None)
    labels = size_class_labels(size_edges)
    frame = jobs.select("user_id", ACCOUNT_COLUMN, "wait_s").with_columns(
        pl.Series("bsld", bounded_slowdown(wait, run, tau_s=BSLD_TAU_S)),
        pl.Series("delivered", inside * jobs["procs"].to_numpy()),
        pl.Series(
            "size",
            np.asarray(labels, dtype=object)[
                size_classes(jobs["procs"].to_numpy(), size_edges)
            ].astype(str),
        ),
        pl.col("user_id").cast(pl.String).alias("user"),
    )
    total = float(frame["delivered"].sum()) or 1.0
    accounts = sorted(set(frame[ACCOUNT_COLUMN].to_list()))
    share_total = float(sum(shares.get(a, 1) for a in accounts)) or 1.0
    parts = []
    for scope, column in (("size", "size"), ("account", ACCOUNT_COLUMN), ("user", "user")):
        grouped = (
            frame.group_by(column)
            .agg(
                pl.len().cast(pl.Int64).alias("jobs"),
                pl.col("wait_s").mean().alias("mean_wait_s"),
                pl.col("wait_s").quantile(0.5, "linear").alias("median_wait_s"),
                pl.col("wait_s").quantile(0.9, "linear").alias("p90_wait_s"),
                pl.col("bsld").mean().alias("mean_bsld"),
                (pl.col("delivered").sum() / total).alias("usage_share"),
            )
            .rename({column: "group"})
        )
        if scope == "size":
            order = {label: i for i, label in enumerate(labels)}
            grouped = grouped.sort(pl.col("group").replace_strict(order, return_dtype=pl.Int64))
        elif scope == "user":
            grouped = grouped.sort(pl.col("group").cast(pl.Int64))
        else:
            grouped = grouped.sort("group")
        configured = (
            [shares.get(g, 1) / share_total for g in grouped["group"]]
            if scope == "account"
            else [float("nan")] * grouped.height
        )
        parts.append(
            grouped.with_columns(
                pl.lit(scope).alias("scope"),
                pl.Series("configured_share", configured, dtype=pl.Float64),
            )
        )
    return pl.concat([p.select(list(GROUP_COLUMNS)) for p in parts]).cast(GROUP_COLUMNS)
