"""``scheduler timings``: where a workflow run spent its time, from its steps' logs.

Every step ends the log of a run that succeeded with a timing line
(:class:`~scheduler.core.steps.StepTiming`: wall and CPU seconds, and the peak memory when the
step ran in a process of its own, a worker of the step pool). This module gathers them by rule
family (the first two path components below ``logs/``, e.g. ``tuning/KTH-SP2/sims/...`` →
``simulate_batch KTH-SP2``) so a benchmark report can name the slowest rules. Logs without a
timing line (a step that failed, a rule that is not a step) are left out and counted.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import polars as pl

from scheduler.cli.arguments import add_command, positive_int
from scheduler.core.errors import ConfigurationError
from scheduler.core.scaling import DISPATCH_S, PER_READY_S, job_graph, model_table
from scheduler.core.steps import TIMING_PREFIX, StepTiming

__all__ = ["add_commands", "cmd_timings", "job_timings", "rule_timings"]


def add_commands(commands: Any) -> None:
    """Add ``scheduler timings`` (sum a workflow run's step timings per rule).

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = add_command(
        commands, "timings", cmd_timings, "sum the steps' timings per rule (slowest first)"
    )
    command.add_argument("directory", nargs="?", default="logs", help="default: logs")
    model = command.add_argument_group(
        "scaling model", "replay the run's job graph on more cores (scheduler.core.scaling)"
    )
    model.add_argument("--model", metavar="SUMMARY", help="the run's `snakemake "
                       "--detailed-summary` (same config): print the modelled wall time on "
                       "--cores instead of the per-rule table")  # fmt: skip
    model.add_argument("--cores", type=positive_int, nargs="+",
                       default=[1, 2, 4, 8, 16, 32, 64], help="default: 1 2 4 ... 64")  # fmt: skip
    model.add_argument("--dispatch-ms", type=float, default=DISPATCH_S * 1e3,
                       help="Snakemake's CPU per job, ms (default: %(default)s, measured)")
    model.add_argument("--per-ready-us", type=float, default=PER_READY_S * 1e6,
                       help="its cost per ready job at each dispatch, µs (default: %(default)s)")
    model.add_argument("--startup-s", type=float, default=0.0,
                       help="seconds before the first job (a dry run's wall time; default 0)")


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
        if args.model is None:
            print(rule_timings(args.directory))
            return 0
        jobs = job_timings(args.directory)
        root = Path(args.directory)
        pairs = zip(jobs["path"], jobs["seconds"], strict=True)
        durations = {os.path.abspath(root / path): seconds for path, seconds in pairs}
        graph = job_graph(args.model, durations)
        timed = sum(1 for log in graph.log if os.path.abspath(log) in durations)
        print(f"{graph.jobs} jobs ({timed} timed, {graph.duration_s.sum():.1f} s of job time; "
              f"the longest chain {graph.critical_path_s().max():.1f} s), dispatcher "
              f"{args.dispatch_ms:g} ms + {args.per_ready_us:g} µs per ready job, startup "
              f"{args.startup_s:g} s")  # fmt: skip
        table = model_table(
            graph, args.cores, dispatch_s=args.dispatch_ms / 1e3,
            per_ready_s=args.per_ready_us / 1e6, startup_s=args.startup_s,
        )  # fmt: skip
        print(pl.DataFrame(table))
    return 0


def _family(relative: Path) -> str:
    parts = relative.with_suffix("").parts
    if parts[0] == "tuning" and len(parts) > 2 and parts[2] == "sims":
        return f"simulate_batch {parts[1]}"
    if parts[0] == "tuning" and len(parts) > 3:  # the bootstrap's batches, the figures
        return f"{parts[2]} {parts[1]}"
    if parts[0] == "tuning" and len(parts) > 2:
        return f"{parts[-1]} {parts[1]}"
    if len(parts) > 1:
        return f"{parts[0]} {parts[1]}"
    return parts[0]


def _last_timing(path: Path) -> StepTiming | None:
    """The timing line of a step's log (its last one: a rerun appends), None if it has none."""
    found = None
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if f" {TIMING_PREFIX} " in line:
                found = line
    return None if found is None else StepTiming.parse(found.rstrip("\n"))


def job_timings(directory: str | os.PathLike[str]) -> pl.DataFrame:
    """One row per timed step log below ``directory``: ``family``, ``path``, ``seconds``
    (wall), ``cpu_s``, ``max_rss_mb`` (null where the step shared its process)."""
    root = Path(directory)
    files = sorted(root.rglob("*.log"))
    rows = []
    for path in files:
        try:
            timing = _last_timing(path)
        except (ValueError, KeyError) as error:
            raise ConfigurationError(f"{path}: a malformed timing line ({error})") from error
        if timing is None:
            continue
        rows.append(
            {
                "family": _family(path.relative_to(root)),
                "path": path.relative_to(root).as_posix(),
                "seconds": timing.wall_s,
                "cpu_s": timing.cpu_s,
                "max_rss_mb": timing.max_rss_mb,
            }
        )
    if not rows:
        raise ConfigurationError(
            f"{root}: no step log with a timing line ({len(files)} *.log files): "
            "point it at a workflow run's logs/ folder"
        )
    schema = {"family": pl.String, "path": pl.String, "seconds": pl.Float64,
              "cpu_s": pl.Float64, "max_rss_mb": pl.Float64}  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


def rule_timings(directory: str | os.PathLike[str]) -> pl.DataFrame:
    """Per rule family: jobs, total/mean/max wall seconds, total CPU seconds, largest peak
    memory (MB); slowest first."""
    return (
        job_timings(directory)
        .group_by("family")
        .agg(
            pl.len().alias("jobs"),
            pl.col("seconds").sum().alias("total_s"),
            pl.col("seconds").mean().alias("mean_s"),
            pl.col("seconds").max().alias("max_s"),
            pl.col("cpu_s").sum().alias("cpu_s"),
            pl.col("max_rss_mb").max().alias("max_rss_mb"),
        )
        .sort("total_s", descending=True)
    )
