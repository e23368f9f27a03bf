"""The ``scheduler`` command line: inspect, filter and simulate SWF workload logs.

::

    scheduler info resources/KTH-SP2.swf.gz
    scheduler filter resources/KTH-SP2.swf.gz --out kth-filtered.swf.gz --report report.json
    scheduler simulate resources/KTH-SP2.swf.gz --primary SPF --threshold 40h --out schedule.swf
    scheduler policies
    scheduler warmup

Every error schedlab raises on purpose (:class:`~scheduler.core.errors.SchedlabError`) and every
operating-system error (missing file, permission denied, ...) is reported as one line
``scheduler: error: <message>`` on stderr with exit code 2, never as a traceback. Invalid
arguments exit with argparse's usual code 2 and a usage message.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from scheduler.core.atomic import atomic_path
from scheduler.core.constants import SWF_SCHEMA
from scheduler.core.errors import ConfigurationError, SchedlabError, TraceFormatError
from scheduler.core.units import format_duration, parse_duration
from scheduler.core.version import __version__
from scheduler.policies import POLICIES, get_policy
from scheduler.sim import _kernel as kernel
from scheduler.sim.engine import SimulationResult, simulate
from scheduler.traces.filters import FilterReport, strong_filter
from scheduler.traces.summary import trace_summary
from scheduler.traces.swf import SwfHeader, Trace, read_swf, write_swf

__all__ = ["build_parser", "main"]

PROG = "scheduler"
#: Exit code of every handled error (the same as argparse's for invalid arguments).
EXIT_ERROR = 2
#: Exit code after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130
_DAY_S = 86400.0
_HOUR_S = 3600.0
#: Per-job table formats of ``simulate --jobs-out``, by file suffix.
_TABLE_SUFFIXES = (".parquet", ".csv")
#: Rows of a strong-filter report: (FilterReport attribute, label).
_FILTER_ROWS = (
    ("jobs_in", "jobs in"),
    ("jobs_out", "jobs out (kept)"),
    ("removed_procs_exceed_machine", "removed: procs > machine"),
    ("repaired_procs", "repaired: one proc count unknown"),
    ("removed_no_procs", "removed: no proc count"),
    ("removed_bad_runtime_or_submit", "removed: run time <= 0 or submit < 0"),
    ("removed_bad_requested_time", "removed: requested time <= 0 or < run"),
)
#: Policies and backfilling modes ``scheduler warmup`` runs, covering every kernel path:
#: (primary, backfill) with a static and an aging (time-dependent) primary, backfilling on/off.
_WARMUP_RUNS: tuple[tuple[str, str | None], ...] = (
    ("FCFS", "FCFS"),
    ("FCFS", None),
    ("LEXP", "SPF"),
    ("LEXP", None),
)

Rows = list[tuple[str, str]]
Section = tuple[str, Rows]


# --------------------------------------------------------------------------------------------
# Argument types (argparse ``type=`` callables: a bad value exits 2 with a usage message)
# --------------------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    """Parse a positive integer (a processor count).

    Parameters
    ----------
    text
        The command-line value.

    Returns
    -------
    int

    Raises
    ------
    argparse.ArgumentTypeError
        ``text`` is not an integer >= 1.
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _duration(text: str) -> float:
    """Parse a duration with a unit (``"40h"``, ``"90m"``, ``"none"``) into seconds.

    Parameters
    ----------
    text
        The command-line value.

    Returns
    -------
    float
        Seconds; ``inf`` for ``none``.

    Raises
    ------
    argparse.ArgumentTypeError
        ``text`` is not a duration (see :func:`scheduler.core.units.parse_duration`).
    """
    try:
        return parse_duration(text)
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _policy(text: str) -> str:
    """Parse a registered policy name (case-insensitive) into its canonical name.

    Parameters
    ----------
    text
        The command-line value.

    Returns
    -------
    str
        The registered name, e.g. ``"SPF"``.

    Raises
    ------
    argparse.ArgumentTypeError
        Unknown policy; the message lists the known ones.
    """
    try:
        return get_policy(text).name
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _backfill_policy(text: str) -> str | None:
    """Parse a backfilling policy name, or ``none`` (no backfilling) into ``None``.

    Parameters
    ----------
    text
        The command-line value.

    Returns
    -------
    str or None
    """
    return None if text.strip().lower() == "none" else _policy(text)


def _table_path(text: str) -> Path:
    """Parse the path of a per-job table; its suffix chooses the format.

    Parameters
    ----------
    text
        The command-line value.

    Returns
    -------
    Path

    Raises
    ------
    argparse.ArgumentTypeError
        The name does not end with ``.parquet`` or ``.csv``.
    """
    path = Path(text)
    if path.suffix.lower() not in _TABLE_SUFFIXES:
        raise argparse.ArgumentTypeError(
            f"expected a file name ending with {' or '.join(_TABLE_SUFFIXES)}, got {text!r}"
        )
    return path


# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``scheduler`` with all its subcommands.

    Returns
    -------
    argparse.ArgumentParser
        Parsing sets ``handler`` (the subcommand function) on the namespace.
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="schedlab: simulate EASY-backfilling batch scheduling on SWF workload logs.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    _add_info_command(commands)
    _add_filter_command(commands)
    _add_simulate_command(commands)
    _add_policies_command(commands)
    _add_warmup_command(commands)
    _add_bench_command(commands)
    _add_timings_command(commands)
    return parser


def _add_timings_command(commands: Any) -> None:
    """Add ``scheduler timings`` (sum a workflow run's benchmark files per rule)."""
    command = _add_command(
        commands, "timings", _cmd_timings, "sum Snakemake benchmark files per rule (slowest first)"
    )
    command.add_argument("directory", nargs="?", default="benchmarks", help="default: benchmarks")


def _cmd_timings(args: argparse.Namespace) -> int:
    from scheduler.cli.timings import rule_timings

    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
        print(rule_timings(args.directory))
    return 0


def _add_bench_command(commands: Any) -> None:
    """Add ``scheduler bench`` (speed and memory figures of the simulator core)."""
    repo = Path(__file__).resolve().parents[1]
    command = _add_command(
        commands, "bench", _cmd_bench, "measure the simulator's speed and memory (prints figures)"
    )
    command.add_argument(
        "--traces-dir", type=Path, default=repo.parent / "shared" / "traces",
        help="directory holding CEA-Curie.swf.gz (default: ../shared/traces)",
    )  # fmt: skip
    command.add_argument(
        "--kth", type=Path, default=repo / "resources" / "KTH-SP2.swf.gz",
        help="the KTH-SP2 log (default: the bundled copy)",
    )  # fmt: skip
    _add_json_argument(command)


def _cmd_bench(args: argparse.Namespace) -> int:
    """Run ``scheduler bench``."""
    from scheduler.cli.bench import main_bench  # imported here: only this command needs it

    return main_bench(args.traces_dir, args.kth, args.json)


def _add_command(
    commands: Any, name: str, handler: Callable[[argparse.Namespace], int], summary: str
) -> argparse.ArgumentParser:
    """Add one subcommand whose namespace carries ``handler``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    name, summary
        Subcommand name and one-line description.
    handler
        Function run with the parsed arguments; returns the exit code.

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser.
    """
    command = commands.add_parser(name, help=summary, description=summary)
    command.set_defaults(handler=handler)
    return command


def _add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the trace-reading arguments shared by ``info``, ``filter`` and ``simulate``.

    Parameters
    ----------
    parser
        A subcommand parser; gets ``TRACE``, ``--machine-procs``, ``--infer-machine-procs``
        and ``--lenient`` (read by :func:`_read_trace`).
    """
    parser.add_argument("trace", metavar="TRACE", help="SWF workload log (.swf or .swf.gz)")
    reading = parser.add_argument_group("trace reading")
    reading.add_argument(
        "--machine-procs",
        metavar="N",
        type=_positive_int,
        help="machine size in processors (overrides the MaxProcs header)",
    )
    reading.add_argument(
        "--infer-machine-procs",
        action="store_true",
        help="without a MaxProcs/MaxNodes header, use the largest job's processor count",
    )
    reading.add_argument(
        "--lenient",
        action="store_true",
        help="skip malformed job lines (counted and reported) instead of failing",
    )


def _add_json_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--json`` (machine-readable output instead of aligned text).

    Parameters
    ----------
    parser
        A subcommand parser.
    """
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _add_info_command(commands: Any) -> None:
    """Add ``scheduler info``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = _add_command(
        commands, "info", _cmd_info, "summarise a trace and what the strong filter does to it"
    )
    _add_trace_arguments(command)
    _add_json_argument(command)


def _add_filter_command(commands: Any) -> None:
    """Add ``scheduler filter``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = _add_command(
        commands, "filter", _cmd_filter, "apply the strong filter and write the filtered SWF"
    )
    _add_trace_arguments(command)
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
    _add_json_argument(command)


def _add_simulate_command(commands: Any) -> None:
    """Add ``scheduler simulate``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = _add_command(
        commands, "simulate", _cmd_simulate, "simulate EASY(primary, backfill, threshold)"
    )
    _add_trace_arguments(command)
    policy = command.add_argument_group("scheduling policy")
    policy.add_argument(
        "--primary", metavar="POLICY", type=_policy, default="FCFS",
        help="primary queue order (default FCFS; see `scheduler policies`)",
    )  # fmt: skip
    policy.add_argument(
        "--backfill", metavar="POLICY|none", type=_backfill_policy, default="FCFS",
        help="backfilling order, or none for no backfilling (default FCFS)",
    )  # fmt: skip
    policy.add_argument(
        "--threshold", metavar="DURATION", type=_duration, default=math.inf,
        help="jobs waiting longer go first, e.g. 40h, 90m, 2d, 3600 (seconds); default none",
    )  # fmt: skip
    policy.add_argument(
        "--reservation", choices=("default", "classic"), default="default",
        help="extra-processor count of the reservation (docs/simulator.md)",
    )  # fmt: skip
    policy.add_argument(
        "--estimate", choices=("requested", "clairvoyant"), default="requested",
        help="run-time estimate the scheduler sees (default: the requested time)",
    )  # fmt: skip
    policy.add_argument(
        "--outlive", choices=("requested", "double"), default="requested",
        help="new estimate of a job that outlives its estimate",
    )  # fmt: skip
    command.add_argument(
        "--no-filter", action="store_true", help="simulate the raw trace (no strong filter)"
    )
    command.add_argument(
        "--out", metavar="SCHEDULE.swf[.gz]", type=Path,
        help="write the schedule as SWF (field 3: simulated wait, seconds)",
    )  # fmt: skip
    command.add_argument(
        "--jobs-out", metavar="JOBS.parquet|.csv", type=_table_path,
        help="write the per-job table (start, wait, bsld, ...)",
    )  # fmt: skip
    _add_json_argument(command)


def _add_policies_command(commands: Any) -> None:
    """Add ``scheduler policies``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = _add_command(
        commands, "policies", _cmd_policies, "list the registered queue policies"
    )
    _add_json_argument(command)


def _add_warmup_command(commands: Any) -> None:
    """Add ``scheduler warmup``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    _add_command(
        commands,
        "warmup",
        _cmd_warmup,
        "compile the simulator kernel (or load it from numba's on-disk cache)",
    )


# --------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------


def _read_trace(args: argparse.Namespace) -> Trace:
    """Read the trace named by the shared trace-reading arguments.

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
        The file cannot be read as SWF; a missing machine size names the options that help.
    """
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
        _warn(str(warning.message))
    return trace


def _warn(message: str) -> None:
    """Print a one-line warning on stderr.

    Parameters
    ----------
    message
        The warning; line breaks are folded into spaces.
    """
    print(f"{PROG}: warning: {_one_line(message)}", file=sys.stderr)


def _one_line(text: str) -> str:
    """Fold ``text`` onto one line.

    Parameters
    ----------
    text
        Any message.

    Returns
    -------
    str
    """
    return " ".join(text.split())


def _print_json(data: Any) -> None:
    """Print ``data`` as indented JSON with sorted keys.

    Parameters
    ----------
    data
        JSON-ready values.
    """
    print(json.dumps(data, indent=2, sort_keys=True))


def _print_sections(sections: Sequence[Section]) -> None:
    """Print titled sections of ``label value`` rows, values aligned in one column.

    Parameters
    ----------
    sections
        ``(title, [(label, value), ...])`` pairs.
    """
    width = max((len(label) for _, rows in sections for label, _ in rows), default=0)
    for title, rows in sections:
        print(title)
        for label, value in rows:
            print(f"  {label:<{width}}  {value}")


def _seconds_text(seconds: float | None, unit_s: float, unit: str) -> str:
    """``"144000 s (40.00 h)"``: seconds and the same in a larger unit.

    Parameters
    ----------
    seconds
        A duration in seconds, or ``None`` (printed as ``-``).
    unit_s, unit
        Size of the larger unit in seconds and its symbol.

    Returns
    -------
    str
    """
    if seconds is None:
        return "-"
    text = f"{seconds:.0f}" if float(seconds).is_integer() else f"{seconds:.1f}"
    return f"{text} s ({seconds / unit_s:.2f} {unit})"


def _threshold_text(seconds: float) -> str:
    """``"40h (144000 s)"``, or ``"none"`` for no threshold.

    Parameters
    ----------
    seconds
        The threshold, seconds (``inf``: none).

    Returns
    -------
    str
    """
    if math.isinf(seconds):
        return "none"
    return f"{format_duration(seconds)} ({seconds:g} s)"


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Report an operating-system error while writing ``path`` as an error naming ``path``.

    Parameters
    ----------
    path
        The output file being written (atomically, through a temporary file).

    Yields
    ------
    None

    Raises
    ------
    ConfigurationError
        The block raised an :class:`OSError` (no such directory, permission denied, ...).
    """
    try:
        yield
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _filter_rows(report: FilterReport, filtered_load: float | None = None) -> Rows:
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
    rows = [(label, str(getattr(report, name))) for name, label in _FILTER_ROWS]
    if filtered_load is not None:
        rows.append(("offered load after filtering", f"{filtered_load:.4f}"))
    return rows


def _report_dict(report: FilterReport) -> dict[str, Any]:
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


def _filter_header_line(report: FilterReport) -> str:
    """The provenance header line of a strongly filtered trace.

    Parameters
    ----------
    report
        The report of the filter that made the trace.

    Returns
    -------
    str
        ``"schedlab <version> strong filter: kept X of Y jobs (machine_procs=M)"``.
    """
    return (
        f"schedlab {__version__} strong filter: kept {report.jobs_out} of {report.jobs_in} jobs "
        f"(machine_procs={report.machine_procs})"
    )


def _machine_size_lines(trace: Trace, path: Path) -> list[str]:
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
        _warn(
            f"{path} keeps the header's machine size ({from_header}); read it with "
            f"--machine-procs {trace.machine_procs}"
        )
    return []


# --------------------------------------------------------------------------------------------
# scheduler info
# --------------------------------------------------------------------------------------------


def _cmd_info(args: argparse.Namespace) -> int:
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
    trace = _read_trace(args)
    raw = trace_summary(trace)
    span_s = raw["span_s"]
    raw["span_days"] = None if span_s is None else span_s / _DAY_S
    filtered, report = strong_filter(trace)
    after = trace_summary(filtered)
    if args.json:
        _print_json(
            {
                "trace": trace.path,
                "version": __version__,
                "raw": raw,
                "skipped_lines": trace.skipped,
                "filter": _report_dict(report),
                "filtered": after,
            }
        )
        return 0
    rows = [
        ("machine size", f"{raw['machine_procs']} processors"),
        ("jobs", str(raw["jobs"])),
        ("users", str(raw["users"])),
        ("time span", _seconds_text(span_s, _DAY_S, "days")),
        ("weeks", f"{raw['weeks']:.2f}"),
        ("offered load", f"{raw['offered_load']:.4f}"),
    ]
    rows += [(f"skipped: {reason}", str(count)) for reason, count in trace.skipped.items()]
    _print_sections(
        [
            (f"Trace {trace.path}", rows),
            ("Strong filter", _filter_rows(report, after["offered_load"])),
        ]
    )
    return 0


# --------------------------------------------------------------------------------------------
# scheduler filter
# --------------------------------------------------------------------------------------------


def _cmd_filter(args: argparse.Namespace) -> int:
    """``scheduler filter``: write the strongly filtered trace (and its report), atomically.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    trace = _read_trace(args)
    filtered, report = strong_filter(trace)
    extra = [_filter_header_line(report), *_machine_size_lines(filtered, args.out)]
    with _writing(args.out):
        write_swf(filtered, args.out, extra_header_lines=extra)
    if args.report is not None:
        with _writing(args.report):
            report.write_json(args.report)
    if args.json:
        report_path = None if args.report is None else str(args.report)
        _print_json({"out": str(args.out), "report": report_path, "filter": _report_dict(report)})
        return 0
    outputs = [("filtered trace", str(args.out))]
    if args.report is not None:
        outputs.append(("report", str(args.report)))
    _print_sections([(f"Strong filter of {trace.path}", _filter_rows(report)), ("Wrote", outputs)])
    return 0


# --------------------------------------------------------------------------------------------
# scheduler simulate
# --------------------------------------------------------------------------------------------


def _cmd_simulate(args: argparse.Namespace) -> int:
    """``scheduler simulate``: filter, simulate, print the summary, write the outputs.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    trace = _read_trace(args)
    report = None
    if not args.no_filter:
        trace, report = strong_filter(trace)
    started = time.perf_counter()
    result = simulate(
        trace,
        args.primary,
        args.backfill,
        args.threshold,
        estimate=args.estimate,
        reservation=args.reservation,
        outlive=args.outlive,
    )
    wall_ms = (time.perf_counter() - started) * 1000.0
    if args.out is not None:
        _write_schedule(result, trace, report, args.out)
    if args.jobs_out is not None:
        _write_job_table(result.jobs, args.jobs_out)
    if args.json:
        _print_json(
            {
                "trace": trace.path,
                "version": __version__,
                "filter": None if report is None else _report_dict(report),
                "summary": result.summary.to_dict(),
                "config": result.config.to_dict(),
                "wall_time_ms": wall_ms,
            }
        )
        return 0
    _print_simulation(trace, report, result, wall_ms)
    return 0


def _print_simulation(
    trace: Trace, report: FilterReport | None, result: SimulationResult, wall_ms: float
) -> None:
    """Print a simulation's summary and configuration as aligned text.

    Parameters
    ----------
    trace
        The simulated trace.
    report
        Its strong-filter report, or ``None`` with ``--no-filter``.
    result
        The simulation result.
    wall_ms
        Wall time of the simulation, milliseconds.
    """
    summary, config = result.summary, result.config
    kept = "off" if report is None else f"kept {report.jobs_out} of {report.jobs_in} jobs"
    summary_rows = [
        ("trace", str(trace.path)),
        ("strong filter", kept),
        ("jobs", str(summary.jobs)),
        ("AvgWait", _seconds_text(summary.avg_wait_s, _HOUR_S, "h")),
        ("MaxWait", _seconds_text(summary.max_wait_s, _HOUR_S, "h")),
        ("AVEbsld", f"{summary.avg_bsld:.2f}"),
        ("MaxBsld", f"{summary.max_bsld:.2f}"),
        ("utilisation", f"{summary.utilisation:.4f}"),
        ("makespan", _seconds_text(summary.makespan_s, _DAY_S, "days")),
        ("backfilled jobs", str(summary.backfilled_jobs)),
        ("simulation wall time", f"{wall_ms:.1f} ms"),
    ]
    config_rows = [
        ("machine size", f"{config.machine_procs} processors"),
        ("primary", config.primary),
        ("backfill", config.backfill or "none"),
        ("threshold", _threshold_text(config.threshold_s)),
        ("reservation", config.reservation),
        ("estimate", config.estimate),
        ("outlive", config.outlive),
    ]
    _print_sections([("Simulation", summary_rows), ("Configuration", config_rows)])


def _write_schedule(
    result: SimulationResult, trace: Trace, report: FilterReport | None, path: Path
) -> None:
    """Write the simulated schedule as SWF with provenance header lines, atomically.

    Parameters
    ----------
    result
        The simulation result; field 3 of each job becomes its simulated wait (s).
    trace
        The simulated trace (its header is kept).
    report
        The strong-filter report, or ``None`` when the trace was not filtered.
    path
        Output file (gzipped when it ends with ``.gz``).
    """
    config = json.dumps(result.config.to_dict(), sort_keys=True)
    extra = [
        f"schedlab {__version__} simulate: field 3 (wait time) holds the simulated wait, seconds",
        f"schedlab config: {config}",
    ]
    if report is not None:
        extra.insert(1, _filter_header_line(report))
    extra += _machine_size_lines(trace, path)
    with _writing(path):
        write_swf(result.to_swf_jobs(), path, header=trace.header, extra_header_lines=extra)


def _write_job_table(jobs: pl.DataFrame, path: Path) -> None:
    """Write the per-job table as Parquet or CSV (by suffix), atomically.

    Parameters
    ----------
    jobs
        ``SimulationResult.jobs``.
    path
        Output file ending with ``.parquet`` or ``.csv``.
    """
    with _writing(path), atomic_path(path) as tmp:
        if path.suffix.lower() == ".csv":
            jobs.write_csv(tmp)
        else:
            jobs.write_parquet(tmp)


# --------------------------------------------------------------------------------------------
# scheduler policies, scheduler warmup
# --------------------------------------------------------------------------------------------


def _cmd_policies(args: argparse.Namespace) -> int:
    """``scheduler policies``: the registered policies with their descriptions.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    if args.json:
        _print_json([{"name": p.name, "description": p.description} for p in POLICIES.values()])
        return 0
    _print_sections([("Policies", [(p.name, p.description) for p in POLICIES.values()])])
    return 0


def _warmup_trace() -> Trace:
    """A tiny synthetic workload (4 processors) with queueing, reservations and backfilling.

    Returns
    -------
    Trace
        Seven jobs; unknown SWF fields are -1.
    """
    rows = (  # (submit s, processors, run s, requested s)
        (0, 3, 100, 120), (1, 4, 50, 60), (2, 1, 30, 200), (3, 2, 10, 10), (4, 1, 500, 600),
        (5, 4, 20, 40), (6, 1, 5, 5),
    )  # fmt: skip
    known = ("submit_s", "alloc_procs", "run_s", "req_time_s")
    columns = {name: [-1] * len(rows) for name in SWF_SCHEMA}
    columns.update({name: [row[i] for row in rows] for i, name in enumerate(known)})
    columns["job_id"] = list(range(1, len(rows) + 1))
    columns["req_procs"] = columns["alloc_procs"]
    return Trace(jobs=pl.DataFrame(columns, schema=SWF_SCHEMA), header=SwfHeader(), machine_procs=4)


def _cmd_warmup(args: argparse.Namespace) -> int:
    """``scheduler warmup``: compile or load every specialisation of the simulator kernel.

    The runs go through :func:`scheduler.simulate`, so the kernel is called with exactly the
    argument types of a real simulation (numba caches per type signature).

    Parameters
    ----------
    args
        Parsed arguments (none).

    Returns
    -------
    int
        Exit code 0.
    """
    trace = _warmup_trace()
    started = time.perf_counter()
    for primary, backfill in _WARMUP_RUNS:
        simulate(trace, primary, backfill, "1m")
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    runs = ", ".join(f"EASY({p}, {b or 'none'})" for p, b in _WARMUP_RUNS)
    print(f"simulator kernel ready in {elapsed_ms:.0f} ms: {_kernel_cache_note()}")
    print(f"runs: {runs}")
    return 0


def _kernel_cache_note() -> str:
    """Whether the kernel was loaded from numba's on-disk cache or compiled (and cached).

    Returns
    -------
    str
        E.g. ``"loaded from the cache in scheduler/__pycache__"``.
    """
    stats = kernel.advance.stats
    if stats.cache_misses:
        return f"compiled and cached in {stats.cache_path}"
    if stats.cache_hits:
        return f"loaded from the cache in {stats.cache_path}"
    return "already loaded in this process"


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _error_message(exc: BaseException) -> str:
    """One-line text of a handled error.

    Parameters
    ----------
    exc
        A :class:`SchedlabError` or :class:`OSError`.

    Returns
    -------
    str
    """
    if isinstance(exc, OSError) and exc.filename is not None:
        return _one_line(f"{exc.filename}: {exc.strerror or exc}")
    return _one_line(str(exc))


def main(argv: list[str] | None = None) -> int:
    """Run the ``scheduler`` command line.

    Parameters
    ----------
    argv
        Arguments without the program name; ``None`` reads ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success; 2 after a handled error (one line ``scheduler: error: ...`` on stderr);
        130 after Ctrl-C.

    Raises
    ------
    SystemExit
        From argparse: code 2 for invalid arguments, 0 for ``--help`` and ``--version``.
    """
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (SchedlabError, OSError) as exc:
        print(f"{PROG}: error: {_error_message(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
