"""Statistics of the learned-priority-function evaluation: the median AVEbsld over sequences per
workload × mode × policy.

What is independent of what: the sequences of one log are consecutive 15-day periods of the same
machine (they share users and seasons, not jobs); each (sequence, mode, policy) is one
deterministic simulation. The median over sequences describes these sequences; with ten of them
a difference between two policies' medians is no test, and the table says how many sequences
each cell holds. The figure shows every sequence's value.
"""

from __future__ import annotations

import polars as pl

from scheduler.core.errors import ConfigurationError

__all__ = ["EVALUATION_COLUMNS", "median_table"]

#: One row per (workload, mode, policy, sequence).
EVALUATION_COLUMNS: dict[str, pl.DataType] = {
    "workload": pl.String(),
    "mode": pl.String(),
    "policy": pl.String(),
    "sequence": pl.Int64(),
    "first_job": pl.Int64(),
    "jobs": pl.Int64(),
    "avg_bsld": pl.Float64(),
    # AVEbsld with schedlab's default engine (whole queue): avg_bsld itself unless the config
    # asks for the authors' windowed scheduler
    "avg_bsld_default": pl.Float64(),
}


def median_table(evaluation: pl.DataFrame) -> pl.DataFrame:
    """Per workload × mode × policy: the number of sequences, the median AVEbsld, its
    quartiles, and the policy's rank by median within the workload and mode (1 = lowest)."""
    missing = [c for c in ("workload", "mode", "policy", "avg_bsld") if c not in evaluation.columns]
    if missing:
        raise ConfigurationError(f"evaluation table lacks {', '.join(missing)}")
    table = (
        evaluation.group_by("workload", "mode", "policy", maintain_order=True)
        .agg(
            pl.len().alias("sequences"),
            pl.col("avg_bsld").median().alias("median_avg_bsld"),
            pl.col("avg_bsld").quantile(0.25, "linear").alias("q1_avg_bsld"),
            pl.col("avg_bsld").quantile(0.75, "linear").alias("q3_avg_bsld"),
        )
        .with_columns(
            pl.col("median_avg_bsld")
            .rank("min")
            .over("workload", "mode")
            .cast(pl.Int64)
            .alias("rank")
        )
    )
    return table
