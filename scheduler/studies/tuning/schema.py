"""Columns of the tables the queue-tuning study passes between its steps."""

from __future__ import annotations

import polars as pl

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
