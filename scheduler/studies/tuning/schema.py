"""What the queue-tuning study's steps agree on: the columns of the weekly table and the
baseline every configuration is compared with."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

__all__ = ["BOOTSTRAP_COLUMNS", "WEEKLY_COLUMNS", "Baseline"]

#: Columns of the weekly result table (one row per simulated week), in order. Times in seconds;
#: ``threshold_s`` is ``inf`` for no threshold; ``utilisation`` in [0, 1].
WEEKLY_COLUMNS = {
    "trace": pl.String,
    "split": pl.String,
    "week_index": pl.Int64,
    "primary": pl.String,
    "backfill": pl.String,
    "threshold": pl.String,
    "threshold_s": pl.Float64,
    "jobs": pl.Int64,
    "avg_wait_s": pl.Float64,
    "max_wait_s": pl.Float64,
    "avg_bsld": pl.Float64,
    "max_bsld": pl.Float64,
    "utilisation": pl.Float64,
}


#: Columns of :func:`scheduler.studies.tuning.bootstrap.bootstrap_replicates`: one row per
#: (replicate, configuration). Times in seconds; ``threshold_s`` is ``inf`` for no threshold.
BOOTSTRAP_COLUMNS: dict[str, type[pl.DataType]] = {
    "trace": pl.String,
    "split": pl.String,
    "replicate": pl.Int64,
    "primary": pl.String,
    "backfill": pl.String,
    "threshold": pl.String,
    "threshold_s": pl.Float64,
    "source_weeks": pl.Int64,
    "weeks": pl.Int64,
    "mean_avg_wait_s": pl.Float64,
    "mean_max_wait_s": pl.Float64,
    "worst_max_wait_s": pl.Float64,
}


@dataclass(frozen=True)
class Baseline:
    """The configuration every other one is compared with.

    Attributes
    ----------
    primary
        Primary queue policy name, e.g. ``"FCFS"``.
    backfill
        Backfilling queue policy name, e.g. ``"FCFS"``.
    threshold
        Waiting-time threshold *label* as in the weekly table's ``threshold`` column, e.g.
        ``"none"`` (no threshold) or ``"20h"``.
    """

    primary: str = "FCFS"
    backfill: str = "FCFS"
    threshold: str = "none"

    @property
    def label(self) -> str:
        """``"primary/backfill/threshold"``, for messages."""
        return f"{self.primary}/{self.backfill}/{self.threshold}"

    @property
    def name(self) -> str:
        """``"EASY-primary-backfill"`` (with ``", Θ = 20h"`` when thresholded): how figures and
        tables name the baseline."""
        name = f"EASY-{self.primary}-{self.backfill}"
        return name if self.threshold == "none" else f"{name} (Θ = {self.threshold})"

    def expr(self) -> pl.Expr:
        """Polars predicate selecting the rows of this configuration."""
        return (
            (pl.col("primary") == self.primary)
            & (pl.col("backfill") == self.backfill)
            & (pl.col("threshold") == self.threshold)
        )
