"""``scheduler convert``: a workload from SWF to a Batsim JSON workload, or back.

The formats come from the names: ``.swf`` or ``.swf.gz`` is SWF
(:mod:`scheduler.traces.swf`), ``.json`` or ``.json.gz`` a Batsim workload of delay jobs
(:mod:`scheduler.traces.batsim`)::

    scheduler convert resources/KTH-SP2.swf.gz kth.json --filter
    scheduler convert kth.json kth.swf
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from scheduler.cli.arguments import (
    add_command,
    add_filter_arguments,
    add_json_argument,
    add_trace_arguments,
)
from scheduler.cli.output import print_json, print_sections, writing
from scheduler.cli.traces import (
    filter_header_line,
    filter_rows,
    is_batsim_workload,
    read_trace,
    report_dict,
)
from scheduler.core.errors import ConfigurationError
from scheduler.core.version import __version__
from scheduler.traces.batsim import DELAY_PROFILE_TYPES, write_batsim_workload
from scheduler.traces.filters import strong_filter
from scheduler.traces.swf import write_swf

__all__ = ["add_commands", "cmd_convert"]

#: Suffixes of the SWF files ``convert`` writes.
_SWF_SUFFIXES = (".swf", ".swf.gz")


def add_commands(commands: Any) -> None:
    """Add ``scheduler convert``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = add_command(
        commands, "convert", cmd_convert,
        "convert a workload between SWF (.swf, .swf.gz) and Batsim JSON (.json)",
    )  # fmt: skip
    add_trace_arguments(command)
    command.add_argument(
        "out", metavar="OUT", type=Path,
        help="output: .swf or .swf.gz (SWF) or .json (Batsim workload of delay jobs)",
    )  # fmt: skip
    command.add_argument(
        "--filter", action="store_true",
        help="strongly filter the jobs first (Batsim refuses jobs without processors or with "
        "a run time <= 0, which the filter removes)",
    )  # fmt: skip
    add_filter_arguments(command)
    batsim = command.add_argument_group("Batsim workloads (docs/formats.md)")
    batsim.add_argument(
        "--profile-type", choices=DELAY_PROFILE_TYPES, default=DELAY_PROFILE_TYPES[0],
        help="the delay profiles' type written: delay (Batsim 4, default) or DelayProfile "
        "(Batsim 5)",
    )  # fmt: skip
    batsim.add_argument(
        "--renumber", action="store_true",
        help="reading JSON: number the jobs 1, 2, ... in file order (for ids that are not "
        "integers)",
    )  # fmt: skip
    batsim.add_argument(
        "--round-times", action="store_true",
        help="reading JSON: round fractional times to whole seconds",
    )  # fmt: skip
    add_json_argument(command)


def cmd_convert(args: argparse.Namespace) -> int:
    """``scheduler convert``: read TRACE, filter it when asked, write OUT in its format.

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
        OUT has no known suffix, or ``--overrun`` without ``--filter``; a job the Batsim
        workload cannot hold (:func:`~scheduler.traces.batsim.write_batsim_workload`).
    """
    out: Path = args.out
    to_batsim = is_batsim_workload(out)
    if not to_batsim and not str(out).lower().endswith(_SWF_SUFFIXES):
        raise ConfigurationError(
            f"{out}: expected an output name ending with .swf, .swf.gz (SWF) or .json "
            "(Batsim workload)"
        )
    if out.name.lower().endswith(".json.gz"):
        raise ConfigurationError(f"{out}: Batsim reads plain JSON; name the output .json")
    if args.overrun != "drop" and not args.filter:
        raise ConfigurationError(f"--overrun {args.overrun} applies to --filter; add --filter")
    trace = read_trace(args)
    report = None
    if args.filter:
        trace, report = strong_filter(trace, overrun=args.overrun, require_jobs=True)
    with writing(out):
        if to_batsim:
            write_batsim_workload(trace, out, profile_type=args.profile_type)
        else:
            extra = [f"schedlab {__version__} convert: from {Path(str(trace.path)).name}"]
            if report is not None:
                extra.append(filter_header_line(report))
            write_swf(trace, out, extra_header_lines=extra, job_counts=True)
    target = "Batsim JSON workload" if to_batsim else "SWF"
    if args.json:
        print_json(
            {
                "trace": trace.path,
                "out": str(out),
                "format": "batsim" if to_batsim else "swf",
                "jobs": trace.jobs.height,
                "machine_procs": trace.machine_procs,
                "filter": None if report is None else report_dict(report),
            }
        )
        return 0
    sections = [
        (
            f"Converted {trace.path}",
            [
                ("wrote", f"{out} ({target})"),
                ("jobs", str(trace.jobs.height)),
                ("machine size", f"{trace.machine_procs} processors"),
            ],
        )
    ]
    if report is not None:
        sections.append(("Strong filter", filter_rows(report)))
    print_sections(sections)
    return 0
