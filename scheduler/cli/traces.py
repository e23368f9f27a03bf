"""``scheduler info`` and ``scheduler filter``: summarise a trace, write its strong filtering.

Also the trace handling the other commands share: reading the trace named by the shared
trace-reading arguments (:func:`read_trace`, reader warnings printed as one line each), the rows
and JSON form of a strong-filter report, and the provenance and machine-size header lines of a
written trace.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

from scheduler.cli.arguments import (
    add_command,
    add_filter_arguments,
    add_json_argument,
    add_trace_arguments,
)
from scheduler.cli.output import (
    DAY_S,
    Rows,
    print_json,
    print_sections,
    seconds_text,
    warn,
    writing,
)
from scheduler.core.errors import ConfigurationError, TraceFormatError
from scheduler.core.version import __version__
from scheduler.traces.batsim import read_batsim_workload
from scheduler.traces.filters import FilterReport, strong_filter
from scheduler.traces.summary import trace_summary
from scheduler.traces.swf import SwfHeader, Trace, read_swf, write_swf

__all__ = [
    "FILTER_ROWS",
    "add_commands",
    "cmd_filter",
    "cmd_info",
    "filter_header_line",
    "filter_rows",
    "is_batsim_workload",
    "machine_size_lines",
    "read_trace",
    "report_dict",
]

#: Rows of a strong-filter report: (FilterReport attribute, label).
FILTER_ROWS = (
    ("jobs_in", "jobs in"),
    ("jobs_out", "jobs out (kept)"),
    ("removed_procs_exceed_machine", "removed: procs > machine"),
    ("repaired_procs", "repaired: one proc count unknown"),
    ("removed_no_procs", "removed: no proc count"),
    ("removed_bad_runtime_or_submit", "removed: run time <= 0 or submit < 0"),
    ("removed_bad_requested_time", "removed: requested time <= 0 or < run"),
    ("clipped_overrun", "clipped: run time > requested (kept)"),
    ("overrun", "overrun jobs (run > requested)"),
)
#: The label of rule 4's row in "clip" mode (the overrunning jobs are clipped, not removed).
_CLIP_RULE4_ROW = "removed: requested time <= 0"


# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------


def add_commands(commands: Any) -> None:
    """Add ``scheduler info`` and ``scheduler filter``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = add_command(
        commands, "info", cmd_info, "summarise a trace and what the strong filter does to it"
    )
    add_trace_arguments(command)
    add_filter_arguments(command)
    add_json_argument(command)

    command = add_command(
        commands, "filter", cmd_filter, "apply the strong filter and write the filtered SWF"
    )
    add_trace_arguments(command)
    add_filter_arguments(command)
    command.add_argument(
        "--out",
        metavar="FILTERED.swf[.gz]",
        type=Path,
        required=True,
        help="filtered SWF output (gzipped when the name ends with .gz)",
    )
    command.add_argument(
        "--report", metavar="REPORT.json", type=Path, help="also write the report as JSON"
    )
    add_json_argument(command)


# --------------------------------------------------------------------------------------------
# Shared trace handling
# --------------------------------------------------------------------------------------------


def is_batsim_workload(path: str | Path) -> bool:
    """Whether ``path`` names a Batsim JSON workload (``.json`` or ``.json.gz``, any case)
    rather than an SWF log."""
    return str(path).lower().endswith((".json", ".json.gz"))


def read_trace(args: argparse.Namespace) -> Trace:
    """Read the trace named by the shared trace-reading arguments: an SWF log, or a Batsim JSON
    workload of delay jobs when its name ends with ``.json`` or ``.json.gz``
    (:func:`scheduler.traces.batsim.read_batsim_workload`; ``--machine-procs`` overrides its
    ``nb_res``).

    Warnings of the reader (lenient skips, inferred machine size) are printed as one line
    each, ``scheduler: warning: <message>``, on stderr.

    Parameters
    ----------
    args
        Parsed arguments with ``trace``, ``machine_procs``, ``infer_machine_procs``, ``lenient``.

    Returns
    -------
    Trace

    Raises
    ------
    TraceFormatError
        The file cannot be read as SWF (or as a Batsim workload); a missing machine size names
        the options that help.
    ConfigurationError
        ``--lenient`` with a Batsim workload (it reads no lines to skip).
    """
    if is_batsim_workload(args.trace):
        if args.lenient:
            raise ConfigurationError(
                f"--lenient skips malformed SWF job lines; {args.trace} is a Batsim JSON workload"
            )
        return read_batsim_workload(
            args.trace,
            machine_procs=args.machine_procs,
            renumber=getattr(args, "renumber", False),
            round_times=getattr(args, "round_times", False),
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            trace = read_swf(
                args.trace,
                machine_procs=args.machine_procs,
                lenient=args.lenient,
                infer_machine_procs=args.infer_machine_procs,
            )
        except TraceFormatError as exc:
            if exc.field == "MaxProcs" and exc.line is None and not args.infer_machine_procs:
                raise TraceFormatError(
                    exc.path,
                    "no positive MaxProcs or MaxNodes header gives the machine size; "
                    "pass --machine-procs N or --infer-machine-procs",
                ) from None
            raise
    for warning in caught:
        warn(str(warning.message))
    return trace


def filter_rows(report: FilterReport, filtered_load: float | None = None) -> Rows:
    """Text rows of a strong-filter report.

    Parameters
    ----------
    report
        The report.
    filtered_load
        Offered load of the filtered trace, when known.

    Returns
    -------
    list of (label, value)
    """
    rows = [
        (_CLIP_RULE4_ROW if report.overrun == "clip" and name == "removed_bad_requested_time"
         else label, str(getattr(report, name)))
        for name, label in FILTER_ROWS
    ]  # fmt: skip
    if filtered_load is not None:
        rows.append(("offered load after filtering", f"{filtered_load:.4f}"))
    return rows


def report_dict(report: FilterReport) -> dict[str, Any]:
    """A filter report as JSON-ready values, with the total ``removed``.

    Parameters
    ----------
    report
        The report.

    Returns
    -------
    dict
    """
    return {**report.to_dict(), "removed": report.removed}


def filter_header_line(report: FilterReport) -> str:
    """The provenance header line of a strongly filtered trace.

    Parameters
    ----------
    report
        The report of the filter that made the trace.

    Returns
    -------
    str
        ``"schedlab <version> strong filter: kept X of Y jobs (machine_procs=M)"``; in
        "clip" mode the parenthesis ends with ``", overrun=clip, clipped=C"``.
    """
    clip = ""
    if report.overrun == "clip":
        clip = f", overrun=clip, clipped={report.clipped_overrun}"
    return (
        f"schedlab {__version__} strong filter: kept {report.jobs_out} of {report.jobs_in} jobs "
        f"(machine_procs={report.machine_procs}{clip})"
    )


def machine_size_lines(trace: Trace, path: Path) -> list[str]:
    """Header lines that let the written trace be read back with the same machine size.

    A ``MaxProcs`` line is added when the header gives no machine size (``--machine-procs`` or
    ``--infer-machine-procs`` supplied it); when the header gives another size, a warning
    says how to read the output.

    Parameters
    ----------
    trace
        The trace being written.
    path
        The output file (named in the warning).

    Returns
    -------
    list of str
        Extra header lines (possibly none).
    """
    header: SwfHeader = trace.header
    from_header = next((v for v in (header.max_procs, header.max_nodes) if v and v > 0), None)
    if from_header is None and "MaxProcs" not in header.fields:
        return [f"MaxProcs: {trace.machine_procs}"]
    if from_header != trace.machine_procs:
        warn(
            f"{path} keeps the header's machine size ({from_header}); read it with "
            f"--machine-procs {trace.machine_procs}"
        )
    return []


# --------------------------------------------------------------------------------------------
# scheduler info
# --------------------------------------------------------------------------------------------


def cmd_info(args: argparse.Namespace) -> int:
    """``scheduler info``: the raw trace's summary and the strong-filter report.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    trace = read_trace(args)
    raw = trace_summary(trace)
    span_s = raw["span_s"]
    raw["span_days"] = None if span_s is None else span_s / DAY_S
    filtered, report = strong_filter(trace, overrun=args.overrun)
    if report.jobs_out == 0:
        warn(report.no_job_left_message())
    after = trace_summary(filtered)
    if args.json:
        print_json(
            {
                "trace": trace.path,
                "version": __version__,
                "raw": raw,
                "skipped_lines": trace.skipped,
                "filter": report_dict(report),
                "filtered": after,
            }
        )
        return 0
    rows = [
        ("machine size", f"{raw['machine_procs']} processors"),
        ("jobs", str(raw["jobs"])),
        ("users", str(raw["users"])),
        ("time span", seconds_text(span_s, DAY_S, "days")),
        ("weeks", f"{raw['weeks']:.2f}"),
        ("offered load", f"{raw['offered_load']:.4f}"),
    ]
    rows += [(f"skipped: {reason}", str(count)) for reason, count in trace.skipped.items()]
    print_sections(
        [
            (f"Trace {trace.path}", rows),
            ("Strong filter", filter_rows(report, after["offered_load"])),
        ]
    )
    return 0


# --------------------------------------------------------------------------------------------
# scheduler filter
# --------------------------------------------------------------------------------------------


def cmd_filter(args: argparse.Namespace) -> int:
    """``scheduler filter``: write the strongly filtered trace (and its report), atomically;
    its header's ``MaxJobs`` and ``MaxRecords`` count the jobs kept.

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
    NoJobsError
        No job is left after filtering (nothing is written; the message gives each rule's count).
    """
    trace = read_trace(args)
    filtered, report = strong_filter(trace, overrun=args.overrun, require_jobs=True)
    extra = [filter_header_line(report), *machine_size_lines(filtered, args.out)]
    with writing(args.out):
        write_swf(filtered, args.out, extra_header_lines=extra, job_counts=True)
    if args.report is not None:
        with writing(args.report):
            report.write_json(args.report)
    if args.json:
        report_path = None if args.report is None else str(args.report)
        print_json({"out": str(args.out), "report": report_path, "filter": report_dict(report)})
        return 0
    outputs = [("filtered trace", str(args.out))]
    if args.report is not None:
        outputs.append(("report", str(args.report)))
    print_sections([(f"Strong filter of {trace.path}", filter_rows(report)), ("Wrote", outputs)])
    return 0
