"""``scheduler generate``: write a synthetic workload as an SWF file.

::

    scheduler generate lublin --procs 256 --jobs 10000 --seed 1 --estimates --out model.swf.gz

The file's header names the model, its arguments, the seed and schedlab's version
(:func:`scheduler.traces.lublin.lublin_trace`), plus one line for the estimates when
``--estimates`` fills the requested times (:func:`scheduler.traces.estimates.with_estimates`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from scheduler.cli.arguments import add_command, add_json_argument, positive_int
from scheduler.cli.output import print_json, print_sections, writing
from scheduler.core.version import __version__
from scheduler.traces.estimates import with_estimates
from scheduler.traces.lublin import JOB_TYPES, lublin_trace
from scheduler.traces.swf import write_swf

__all__ = ["add_commands", "cmd_generate_lublin", "estimates_header_line"]


def add_commands(commands: Any) -> None:
    """Add ``scheduler generate lublin``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    generate = commands.add_parser(
        "generate",
        help="write a synthetic workload (SWF)",
        description="write a synthetic workload (SWF)",
    )
    models = generate.add_subparsers(title="models", metavar="MODEL", required=True)
    command = add_command(
        models,
        "lublin",
        cmd_generate_lublin,
        "the Lublin-Feitelson model of rigid jobs (JPDC 2003)",
    )
    command.add_argument(
        "--procs", metavar="N", type=positive_int, default=256, help="machine size (default 256)"
    )
    command.add_argument(
        "--jobs", metavar="N", type=positive_int, default=10_000, help="jobs (default 10000)"
    )
    command.add_argument("--seed", metavar="S", type=_seed, required=True, help="random seed")
    command.add_argument(
        "--job-types",
        choices=JOB_TYPES,
        default="mixed",
        help="interactive and batch jobs merged (mixed, default), the class-blind fit "
        "(combined), or one class",
    )
    command.add_argument(
        "--estimates",
        action="store_true",
        help="fill the requested times with the Tsafrir-Etsion-Feitelson estimate model",
    )
    command.add_argument(
        "--max-estimate",
        metavar="SECONDS",
        type=positive_int,
        help="largest estimate, seconds (default: the longest run time, rounded up to hours)",
    )
    command.add_argument(
        "--out",
        metavar="OUT.swf[.gz]",
        type=Path,
        required=True,
        help="SWF output (gzipped when the name ends with .gz)",
    )
    add_json_argument(command)


def _seed(text: str) -> int:
    """Parse a seed: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def estimates_header_line(seed: int, max_estimate_s: int | None) -> str:
    """The header line recording how the requested times were made.

    Parameters
    ----------
    seed
        Seed of the estimates.
    max_estimate_s
        The ``--max-estimate`` given, or None (the default rule).

    Returns
    -------
    str
    """
    maximum = "default" if max_estimate_s is None else str(max_estimate_s)
    return (
        f"; Note: requested times by schedlab {__version__}: with_estimates(seed={seed}, "
        f"max_estimate_s={maximum}) (Tsafrir, Etsion & Feitelson, JSSPP 2005)"
    )


def cmd_generate_lublin(args: argparse.Namespace) -> int:
    """``scheduler generate lublin``: generate the jobs and write them, atomically.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    trace = lublin_trace(
        args.jobs, machine_procs=args.procs, seed=args.seed, job_types=args.job_types
    )
    extra = []
    if args.estimates:
        trace = with_estimates(trace, seed=args.seed, max_estimate_s=args.max_estimate)
        extra.append(estimates_header_line(args.seed, args.max_estimate))
    with writing(args.out):
        write_swf(trace, args.out, extra_header_lines=extra)
    summary = {
        "out": str(args.out),
        "model": "lublin",
        "jobs": trace.jobs.height,
        "machine_procs": trace.machine_procs,
        "seed": args.seed,
        "job_types": args.job_types,
        "estimates": args.estimates,
        "version": __version__,
    }
    if args.json:
        print_json(summary)
        return 0
    print_sections([("Wrote", [(key, str(value)) for key, value in summary.items()])])
    return 0
