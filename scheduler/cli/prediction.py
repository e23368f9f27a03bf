"""``scheduler prediction-grid``: EASY on NAG run-time predictions over a grid of (loss, η, λ).

For each trace: read it, strongly filter it, simulate plain EASY once and the NAG predictor for
every loss × η × λ (:func:`scheduler.studies.prediction.grid.learner_grid`), and print one row
per run with its AVEbsld and average wait, both also relative to plain EASY on the same trace.
The axes are checked before any trace is read. ``docs/prediction.md`` ("Choosing the learner's
η and λ") shows the run that chose the learner's defaults.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

import polars as pl

from scheduler.cli.arguments import (
    add_command,
    add_filter_arguments,
    add_json_argument,
    add_trace_arguments,
    number_list,
    table_path,
)
from scheduler.cli.output import print_json
from scheduler.cli.simulate import add_reservation_argument, write_job_table
from scheduler.cli.traces import read_trace, report_dict
from scheduler.core.version import __version__
from scheduler.predictors import CORRECTIONS, LOSSES
from scheduler.studies.prediction.grid import check_grid, learner_grid, trace_name
from scheduler.traces.filters import PROCESSOR_COUNTS, strong_filter, with_processor_count

__all__ = ["DEFAULT_ETAS", "DEFAULT_LAMS", "add_commands", "cmd_prediction_grid", "grid_text"]

#: Default axes of ``prediction-grid`` (η in s): the grid of ``docs/prediction.md``.
DEFAULT_ETAS = (1.0, 10.0, 100.0, 1000.0, 10000.0)
DEFAULT_LAMS = (0.0,)


def add_commands(commands: Any) -> None:
    """Add ``scheduler prediction-grid``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = add_command(
        commands,
        "prediction-grid",
        cmd_prediction_grid,
        "simulate EASY on NAG run-time predictions for every loss x eta x lambda, "
        "relative to plain EASY",
    )
    add_trace_arguments(command, many=True)
    learner = command.add_argument_group("learner (NAG predictor)")
    learner.add_argument(
        "--loss", metavar="LOSS", action="append",
        help=f"a loss: {', '.join(LOSSES)} or over=...,under=...,gamma=... (repeat for "
        "several; default eloss)",
    )  # fmt: skip
    learner.add_argument(
        "--eta", metavar="ETA,...", type=number_list, default=list(DEFAULT_ETAS),
        help="step sizes eta in seconds, each > 0 (default "
        f"{','.join(f'{v:g}' for v in DEFAULT_ETAS)})",
    )  # fmt: skip
    learner.add_argument(
        "--lam", metavar="LAM,...", type=number_list, default=list(DEFAULT_LAMS),
        help="l2 weights lambda, each >= 0 (default 0: plain NAG)",
    )  # fmt: skip
    scheduling = command.add_argument_group("scheduling")
    scheduling.add_argument(
        "--correction", choices=CORRECTIONS.names(), default="incremental",
        help="new prediction of a job that outlives its prediction (default incremental)",
    )  # fmt: skip
    scheduling.add_argument(
        "--backfill", choices=("easy", "sjbf"), default="sjbf",
        help="backfilling order: easy (FCFS) or sjbf (by increasing prediction; default)",
    )  # fmt: skip
    scheduling.add_argument(
        "--processors", choices=PROCESSOR_COUNTS, default="allocated",
        help="processor count a job occupies: allocated (SWF field 5, default) or requested "
        "(field 8, as the published study's simulator)",
    )  # fmt: skip
    add_reservation_argument(scheduling)
    scheduling.add_argument(
        "--whole-seconds", action="store_true",
        help="round NAG predictions down to whole seconds (as the published simulator)",
    )  # fmt: skip
    add_filter_arguments(command)
    command.add_argument(
        "--out", metavar="GRID.parquet|.csv", type=table_path,
        help="also write the grid, every trace's rows, as Parquet or CSV",
    )  # fmt: skip
    add_json_argument(command)


def cmd_prediction_grid(args: argparse.Namespace) -> int:
    """``scheduler prediction-grid``: check the axes, run the grid on each trace, print it.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.

    Raises
    ------
    ConfigurationError
        An unknown loss, an eta <= 0 or a lambda < 0 (before any trace is read).
    NoJobsError
        No job of a trace is left after filtering.
    """
    losses, etas, lams = check_grid(args.loss or ["eloss"], args.eta, args.lam)
    tables, reports = [], {}
    for path in args.trace:
        trace = read_trace(argparse.Namespace(**{**vars(args), "trace": path}))
        trace, report = strong_filter(trace, overrun=args.overrun, require_jobs=True)
        trace = replace(
            trace, jobs=with_processor_count(trace.jobs, args.processors, trace.machine_procs)
        )
        table = learner_grid(
            trace, losses=losses, etas=etas, lams=lams,
            correction=args.correction, backfill_order=args.backfill,
            reservation=args.reservation, whole_seconds=args.whole_seconds,
        )  # fmt: skip
        name = trace_name(trace) or str(path)
        tables.append(table.with_columns(pl.lit(name).alias("trace")))
        reports[name] = report_dict(report)
    grid = pl.concat(tables)
    if args.out is not None:
        write_job_table(grid, args.out)
    if args.json:
        print_json(
            {
                "version": __version__,
                "filter": reports,
                "overrun": args.overrun,
                "processors": args.processors,
                "reservation": args.reservation,
                "whole_seconds": args.whole_seconds,
                "rows": grid.to_dicts(),
            }
        )
        return 0
    print(grid_text(grid))
    return 0


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def grid_text(grid: pl.DataFrame) -> str:
    """The grid as an aligned text table, one line per run.

    Parameters
    ----------
    grid
        Rows of :func:`~scheduler.studies.prediction.grid.learner_grid` (several traces may
        follow each other).

    Returns
    -------
    str
        Columns: trace, loss (``EASY`` for the plain-EASY baseline), eta (s), lam, AVEbsld,
        AVEbsld relative to EASY, average wait (h), relative wait, MAE of the predictions at
        submission (h), shares of under-predictions and of predictions at the 1-s floor,
        corrections, wall time (s).
    """
    header = (
        "trace", "loss", "eta_s", "lam", "AVEbsld", "rel", "wait_h", "rel_wait", "MAE_h",
        "under", "floor", "corrections", "wall_s",
    )  # fmt: skip
    lines = [header]
    for row in grid.iter_rows(named=True):
        baseline = row["predictor"] == "requested"
        lines.append(
            (
                row["trace"] or "-",
                "EASY" if baseline else row["loss"],
                _number(row["eta"], "g"),
                _number(row["lam"], "g"),
                f"{row['avg_bsld']:.2f}",
                f"{row['relative_avg_bsld']:.3f}",
                f"{row['avg_wait_s'] / 3600:.2f}",
                _number(row["relative_avg_wait"], ".3f"),
                f"{row['mae_s'] / 3600:.2f}",
                f"{row['under_share']:.3f}",
                f"{row['floor_share']:.3f}",
                str(row["corrections"]),
                f"{row['wall_s']:.2f}",
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    # the two names left-aligned, the numbers right-aligned
    return "\n".join(
        "  ".join(
            cell.ljust(width) if i < 2 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in lines
    )
