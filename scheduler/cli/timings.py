"""``scheduler timings``: where a workflow run spent its time, Snakemake's ``benchmark:`` files.

Every rule that does real work has a ``benchmark:`` directive writing
``benchmarks/<rule path>.tsv`` (columns ``s``, ``h:m:s``, ``max_rss``, ... ``cpu_time``). This
module gathers them by rule family (the first two path components, e.g. ``tuning/KTH-SP2`` →
``sims``) so a benchmark report can name the slowest rules.

The sums are of ``s``, the job's wall seconds. A job run as a thread of the Snakemake process
(the local default profile), with its step in a worker of the step pool or not, has ``max_rss``
and CPU columns measured on the Snakemake process, not on the step: read ``max_rss_mb`` as the
job's own only for jobs that ran as their own process (a cluster job, ``--no-force-use-threads``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import polars as pl

from scheduler.cli.arguments import add_command
from scheduler.core.errors import ConfigurationError

__all__ = ["add_commands", "cmd_timings", "job_timings", "rule_timings"]


def add_commands(commands: Any) -> None:
    """Add ``scheduler timings`` (sum a workflow run's benchmark files per rule).

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = add_command(
        commands, "timings", cmd_timings, "sum Snakemake benchmark files per rule (slowest first)"
    )
    command.add_argument("directory", nargs="?", default="benchmarks", help="default: benchmarks")


def cmd_timings(args: argparse.Namespace) -> int:
    """Run ``scheduler timings``: print the per-rule table, every row.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
        print(rule_timings(args.directory))
    return 0


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
