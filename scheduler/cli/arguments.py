"""Arguments of the ``scheduler`` command shared by its command groups.

Argument types (argparse ``type=`` callables: a bad value exits 2 with a usage message), the
helper adding one subcommand (:func:`add_command`) and the options several subcommands share:
the trace-reading arguments, the strong filter's ``--overrun`` and ``--json``. Policy names are
checked against the policy registry (:data:`scheduler.policies.POLICIES`), whose error message
lists the known ones.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scheduler.core.constants import MAX_MACHINE_PROCS
from scheduler.core.errors import ConfigurationError, quote
from scheduler.core.units import parse_duration
from scheduler.policies import MULTIFACTOR, get_policy
from scheduler.traces.filters import OVERRUN_MODES

__all__ = [
    "TABLE_SUFFIXES",
    "add_command",
    "add_filter_arguments",
    "add_json_argument",
    "add_trace_arguments",
    "backfill_policy",
    "duration",
    "figure_path",
    "number_list",
    "policy",
    "positive_int",
    "primary_order",
    "table_path",
    "time_window",
]

#: Per-job table formats of ``simulate --jobs-out``, by file suffix.
TABLE_SUFFIXES = (".parquet", ".csv")

Handler = Callable[[argparse.Namespace], int]


# --------------------------------------------------------------------------------------------
# Argument types
# --------------------------------------------------------------------------------------------


def positive_int(text: str) -> int:
    """Parse a positive integer (a processor count), at most
    :data:`~scheduler.core.constants.MAX_MACHINE_PROCS`.

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
        ``text`` is not an integer in 1..MAX_MACHINE_PROCS.
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_MACHINE_PROCS:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer up to {MAX_MACHINE_PROCS}, got {quote(text)}"
        )
    return value


def duration(text: str) -> float:
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


def time_window(text: str) -> tuple[float, float]:
    """Parse a window ``START,END`` of two durations on the log's clock (``"30d,37d"``,
    ``"0,12h"``) into seconds.

    Raises
    ------
    argparse.ArgumentTypeError
        Not two durations separated by a comma, or END not after START.
    """
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(
            f"expected START,END (two durations such as 30d,37d), got {text!r}"
        )
    start, end = (duration(part.strip()) for part in parts)
    if not (math.isfinite(start) and math.isfinite(end) and end > start):
        raise argparse.ArgumentTypeError(f"the window must end after it starts, got {text!r}")
    return start, end


def figure_path(text: str) -> Path:
    """Parse the path of a figure; ``.png`` or ``.pdf``.

    Raises
    ------
    argparse.ArgumentTypeError
        The name ends otherwise.
    """
    path = Path(text)
    if path.suffix.lower() not in (".png", ".pdf"):
        raise argparse.ArgumentTypeError(f"a figure is written as .png or .pdf, got {text!r}")
    return path


def number_list(text: str) -> list[float]:
    """Parse a comma-separated list of numbers (``"1,10,1e3"``).

    Parameters
    ----------
    text
        The command-line value.

    Returns
    -------
    list of float
        In the order given; the range of each value is the command's to check.

    Raises
    ------
    argparse.ArgumentTypeError
        An empty list, or an item that is not a number.
    """
    items = [item.strip() for item in text.split(",")]
    values = []
    for item in items:
        try:
            values.append(float(item))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated numbers, got {quote(item)} in {quote(text)}"
            ) from None
    return values


def policy(text: str) -> str:
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
        Unknown policy; the message lists the known ones (from the registry).
    """
    try:
        return get_policy(text).name
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def primary_order(text: str) -> str:
    """Parse ``--primary``: a registered policy (:func:`policy`) or ``multifactor``, Slurm's
    multifactor priority (any case; conservative backfilling only, which the command checks).

    Raises
    ------
    argparse.ArgumentTypeError
        Neither; the message lists the known policies and multifactor.
    """
    if text.strip().lower() == MULTIFACTOR:
        return MULTIFACTOR
    try:
        return policy(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(
            f"{exc}; or {MULTIFACTOR} (with --backfilling conservative)"
        ) from None


def backfill_policy(text: str) -> str | None:
    """Parse a backfilling policy name, ``SJBF``, or ``none`` (no backfilling) into ``None``.

    Parameters
    ----------
    text
        The command-line value. ``SJBF`` (any case; shortest job backfilled first) is kept as
        ``"SJBF"``: :func:`scheduler.simulate` reads it as SPF without a predictor and as the
        prediction variant's order with one.

    Returns
    -------
    str or None
    """
    name = text.strip().lower()
    if name == "none":
        return None
    if name == "sjbf":
        return "SJBF"
    return policy(text)


def table_path(text: str) -> Path:
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
    if path.suffix.lower() not in TABLE_SUFFIXES:
        raise argparse.ArgumentTypeError(
            f"expected a file name ending with {' or '.join(TABLE_SUFFIXES)}, got {quote(text)}"
        )
    return path


# --------------------------------------------------------------------------------------------
# Subcommands and shared options
# --------------------------------------------------------------------------------------------


def add_command(
    commands: Any, name: str, handler: Handler, summary: str
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


def add_trace_arguments(parser: argparse.ArgumentParser, *, many: bool = False) -> None:
    """Add the trace-reading arguments shared by ``info``, ``filter``, ``simulate`` and
    ``prediction-grid``.

    Parameters
    ----------
    parser
        A subcommand parser; gets ``TRACE``, ``--machine-procs``, ``--infer-machine-procs``
        and ``--lenient`` (read by :func:`scheduler.cli.traces.read_trace`).
    many
        Accept one or more traces (``TRACE [TRACE ...]``, a list in ``args.trace``); the
        reading options apply to each.
    """
    if many:
        parser.add_argument(
            "trace",
            metavar="TRACE",
            nargs="+",
            help="SWF workload logs (.swf or .swf.gz) or Batsim JSON workloads (.json)",
        )
    else:
        parser.add_argument(
            "trace", metavar="TRACE",
            help="SWF workload log (.swf or .swf.gz) or Batsim JSON workload (.json)",
        )  # fmt: skip
    reading = parser.add_argument_group("trace reading")
    reading.add_argument(
        "--machine-procs",
        metavar="N",
        type=positive_int,
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


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the strong filter's ``--overrun {drop,clip}`` (``info``, ``filter``, ``simulate``).

    Parameters
    ----------
    parser
        A subcommand parser; gets ``--overrun`` (default ``drop``), passed to
        :func:`scheduler.traces.filters.strong_filter` as ``overrun``.
    """
    filtering = parser.add_argument_group("strong filter")
    filtering.add_argument(
        "--overrun",
        choices=OVERRUN_MODES,
        default="drop",
        help="a job that ran past its requested time: drop it (default) or clip its run time "
        "to the requested time and keep it",
    )


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--json`` (machine-readable output instead of aligned text).

    Parameters
    ----------
    parser
        A subcommand parser.
    """
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
