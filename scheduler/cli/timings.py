"""Where a workflow run spent its time: Snakemake's per-job ``benchmark:`` files, summed.

Every rule that does real work has a ``benchmark:`` directive writing
``benchmarks/<rule path>.tsv`` (columns ``s``, ``h:m:s``, ``max_rss``, ... ``cpu_time``). This
module gathers them by rule family (the first two path components, e.g. ``tuning/KTH-SP2`` →
``sims``) so a benchmark report can name the slowest rules.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from scheduler.core.errors import ConfigurationError

__all__ = ["job_timings", "rule_timings"]


def _family(relative: Path) -> str:
    parts = relative.parts
    if parts[0] == "tuning" and len(parts) > 2 and parts[2] == "sims":
        return f"simulate_batch {parts[1]}"
    if parts[0] == "tuning" and len(parts) > 2:
        return f"{Path(parts[-1]).stem} {parts[1]}"
    if len(parts) > 1:
        return f"{parts[0]} {parts[1].removesuffix('.tsv')}"
    return Path(parts[0]).stem


def job_timings(directory: str | os.PathLike[str]) -> pl.DataFrame:
    """One row per benchmark file: ``family``, ``path``, ``seconds`` (wall), ``max_rss_mb``."""
    root = Path(directory)
    files = sorted(root.rglob("*.tsv"))
    if not files:
        raise ConfigurationError(f"{root}: no Snakemake benchmark files (*.tsv) found")
    rows = []
    for path in files:
        table = pl.read_csv(path, separator="\t", null_values=["NA", "-"])
        if "s" not in table.columns or table.height == 0:
            raise ConfigurationError(f"{path}: not a Snakemake benchmark file")
        rss = table["max_rss"][0] if "max_rss" in table.columns else None
        rows.append(
            {
                "family": _family(path.relative_to(root)),
                "path": path.relative_to(root).as_posix(),
                "seconds": float(table["s"][0]),
                "max_rss_mb": None if rss is None else float(rss),
            }
        )
    return pl.DataFrame(rows)


def rule_timings(directory: str | os.PathLike[str]) -> pl.DataFrame:
    """Per rule family: jobs, total/mean/max wall seconds, largest max RSS (MB); slowest first."""
    return (
        job_timings(directory)
        .group_by("family")
        .agg(
            pl.len().alias("jobs"),
            pl.col("seconds").sum().alias("total_s"),
            pl.col("seconds").mean().alias("mean_s"),
            pl.col("seconds").max().alias("max_s"),
            pl.col("max_rss_mb").max().alias("max_rss_mb"),
        )
        .sort("total_s", descending=True)
    )
