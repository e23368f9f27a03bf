"""``scheduler import sacct``: a Slurm cluster's accounting as an SWF trace and a side table.

::

    TZ=UTC sacct --allusers --parsable2 --starttime 2024-01-01 --endtime 2024-07-01 \\
        --format=JobID,User,Group,Account,Partition,QOS,Submit,Eligible,Start,End,Timelimit,\\
    AllocCPUS,ReqCPUS,AllocNodes,ReqNodes,ReqMem,MaxRSS,State,ExitCode > accounting.txt
    scheduler import sacct accounting.txt --out trace.swf.gz

The reading is :func:`scheduler.traces.sacct.read_sacct`; this module parses the options,
writes the two files (each atomically) and prints the report: rows read, steps folded,
heterogeneous components merged, array tasks, and every drop and repair by reason.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from scheduler.cli.arguments import add_command, add_json_argument, duration, positive_int
from scheduler.cli.output import Rows, print_json, print_sections, warn, writing
from scheduler.core.errors import ConfigurationError
from scheduler.traces.sacct import (
    SACCT_FIELDS,
    SacctReport,
    read_sacct,
    side_table_path,
    write_side_table,
)
from scheduler.traces.swf import write_swf

__all__ = ["add_commands", "cmd_import_sacct", "report_rows"]


def add_commands(commands: Any) -> None:
    """Add ``scheduler import sacct``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    group = commands.add_parser(
        "import",
        help="import a cluster's accounting as an SWF trace",
        description="import a cluster's accounting as an SWF trace",
    )
    sources = group.add_subparsers(title="sources", metavar="SOURCE", required=True)
    command = add_command(
        sources,
        "sacct",
        cmd_import_sacct,
        "Slurm's sacct --parsable2 output (with its header line) as an SWF trace",
    )
    command.epilog = f"sacct fields: --format={','.join(SACCT_FIELDS)}"
    command.add_argument("accounting", metavar="FILE", help="sacct --parsable2 output (or .gz)")
    command.add_argument(
        "--out",
        metavar="OUT.swf[.gz]",
        type=Path,
        required=True,
        help="SWF output (gzipped when the name ends with .gz)",
    )
    command.add_argument(
        "--side",
        metavar="SIDE.parquet|.csv",
        type=Path,
        help="side table: account, QOS, partition, eligible time, state, exit code, Slurm job "
        "id per job (default: OUT's name with .side.parquet)",
    )
    command.add_argument(
        "--timezone",
        metavar="ZONE",
        default="UTC",
        help="IANA zone of sacct's clock (the TZ it ran with; default UTC); written as the "
        "trace's TimeZoneString",
    )
    command.add_argument(
        "--machine-procs",
        metavar="N",
        type=positive_int,
        help="the cluster's size in processors (default: the peak of concurrently allocated "
        "CPUs, a lower bound)",
    )
    command.add_argument(
        "--unlimited-limit",
        metavar="DURATION",
        type=duration,
        help="requested time of jobs without a time limit (UNLIMITED), e.g. 7d (default: "
        "unknown, -1)",
    )
    command.add_argument(
        "--keep-names",
        action="store_true",
        help="keep user, group and account names in the side table (default: numbers only)",
    )
    command.add_argument("--computer", metavar="NAME", help="the header's Computer line")
    add_json_argument(command)


def report_rows(report: SacctReport) -> Rows:
    """Text rows of an import report.

    Parameters
    ----------
    report
        The report.

    Returns
    -------
    list of (label, value)
    """
    rows = [
        ("rows read", str(report.rows)),
        ("job rows", str(report.job_rows)),
        ("steps folded into their job", str(report.steps_folded)),
        ("het. components merged", str(report.het_components_merged)),
        ("array tasks kept", str(report.array_tasks)),
    ]
    rows += [(f"dropped: {reason}", str(count)) for reason, count in report.dropped.items()]
    rows += [(f"repaired: {reason}", str(count)) for reason, count in report.repaired.items()]
    rows.append(("jobs out", str(report.jobs_out)))
    inferred = " (peak of allocated CPUs)" if report.machine_procs_inferred else ""
    rows.append(("machine size", f"{report.machine_procs} processors{inferred}"))
    return rows


def cmd_import_sacct(args: argparse.Namespace) -> int:
    """``scheduler import sacct``: read the accounting, write the trace and the side table.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    side = side_table_path(args.side, args.out)
    unlimited = args.unlimited_limit
    if unlimited is not None and math.isinf(unlimited):
        unlimited = None
    elif unlimited is not None:
        if unlimited < 1 or not float(unlimited).is_integer():
            raise ConfigurationError(
                f"--unlimited-limit must be a whole number of seconds >= 1, got {unlimited:g} s"
            )
        unlimited = int(unlimited)
    imported = read_sacct(
        args.accounting,
        timezone=args.timezone,
        machine_procs=args.machine_procs,
        keep_names=args.keep_names,
        unlimited_time_s=unlimited,
        computer=args.computer,
    )
    with writing(args.out):
        write_swf(imported.trace, args.out)
    with writing(side):
        write_side_table(imported.side, side)
    report = imported.report
    if report.machine_procs_inferred:
        warn(
            f"machine size {report.machine_procs} processors is the peak of concurrently "
            "allocated CPUs; pass --machine-procs N with the cluster's size"
        )
    if args.json:
        print_json({"out": str(args.out), "side": str(side), "report": report.to_dict()})
        return 0
    print_sections(
        [
            (f"Accounting {args.accounting}", report_rows(report)),
            ("Wrote", [("trace", str(args.out)), ("side table", str(side))]),
        ]
    )
    return 0
