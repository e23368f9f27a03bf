"""The ``scheduler`` command line: inspect, filter and simulate SWF workload logs.

::

    scheduler info resources/KTH-SP2.swf.gz
    scheduler filter resources/KTH-SP2.swf.gz --out kth-filtered.swf.gz --report report.json
    scheduler simulate resources/KTH-SP2.swf.gz --primary SPF --threshold 40h --out schedule.swf
    scheduler policies
    scheduler prediction-grid resources/KTH-SP2.swf.gz --loss eloss --eta 10,1000 --lam 0,1e-4
    scheduler generate lublin --procs 256 --jobs 10000 --seed 1 --estimates --out model.swf.gz
    scheduler import sacct accounting.txt --out cluster.swf.gz
    scheduler convert resources/KTH-SP2.swf.gz kth.json --filter
    scheduler warmup

This module assembles the parser from the command-group modules (:mod:`scheduler.cli.traces`:
``info``, ``filter``; :mod:`scheduler.cli.convert`: ``convert``;
:mod:`scheduler.cli.accounting`: ``import sacct``;
:mod:`scheduler.cli.simulate`: ``simulate``, ``policies``;
:mod:`scheduler.cli.prediction`: ``prediction-grid``; :mod:`scheduler.cli.warmup`;
:mod:`scheduler.cli.bench`; :mod:`scheduler.cli.timings`) and runs the chosen command. Every
error schedlab raises on purpose (:class:`~scheduler.core.errors.SchedlabError`) and every
operating-system error (missing file, permission denied, ...) is reported as one line
``scheduler: error: <message>`` on stderr with exit code 2, never as a traceback. Invalid
arguments exit with argparse's usual code 2 and a usage message.
"""

from __future__ import annotations

import argparse
import sys

from scheduler.cli import (
    accounting,
    bench,
    compare,
    config,
    convert,
    generate,
    prediction,
    simulate,
    timings,
    traces,
    warmup,
    whatif,
)
from scheduler.cli.output import PROG, error_message
from scheduler.core.errors import SchedlabError
from scheduler.core.version import __version__

__all__ = ["EXIT_ERROR", "EXIT_INTERRUPTED", "PROG", "build_parser", "main"]

#: Exit code of every handled error (the same as argparse's for invalid arguments).
EXIT_ERROR = 2
#: Exit code after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

#: Command-group modules, each with ``add_commands(subparsers)``, in the order of ``--help``.
COMMAND_GROUPS = (
    traces, convert, accounting, generate, simulate, prediction, warmup, bench, timings, config,
    compare, whatif,
)  # fmt: skip


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
    for group in COMMAND_GROUPS:
        group.add_commands(commands)
    return parser


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
        print(f"{PROG}: error: {error_message(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
