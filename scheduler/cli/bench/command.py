"""The ``scheduler bench`` command: its arguments, the choice of groups, the run and the output,
all read from the table :data:`~scheduler.cli.bench.table.BENCH_GROUPS`."""

from __future__ import annotations

import argparse
import json
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scheduler.cli.arguments import add_command, add_json_argument
from scheduler.cli.bench.group import BenchGroup, BenchInputs, Figures
from scheduler.cli.bench.table import BENCH_GROUPS
from scheduler.core.version import __version__
from scheduler.traces.catalogue import TRACE_CATALOGUE

__all__ = [
    "add_commands",
    "bench_header",
    "cmd_bench",
    "format_figures",
    "main_bench",
    "run_groups",
    "selected_groups",
]


def add_commands(commands: Any) -> None:
    """Add ``scheduler bench`` (speed and memory figures of the simulator core).

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    repo = Path(__file__).resolve().parents[3]  # scheduler/cli/bench/command.py -> the repo
    command = add_command(
        commands, "bench", cmd_bench, "measure the simulator's speed and memory (prints figures)"
    )
    command.add_argument(
        "--traces-dir", type=Path, default=repo.parent / "shared" / "traces",
        help="directory holding CEA-Curie.swf.gz (default: ../shared/traces)",
    )  # fmt: skip
    command.add_argument(
        "--kth", type=Path, default=repo / "resources" / "KTH-SP2.swf.gz",
        help="the KTH-SP2 log (default: the bundled copy)",
    )  # fmt: skip
    command.add_argument(
        "--rlscheduler-python", type=Path, default=None, metavar="PATH",
        help="rl-env group: the Python of an RLScheduler installation (gym 0.17, numpy), which "
        "runs its environment class in a subprocess; without it and --rlscheduler-repo, "
        "schedlab's side is measured alone and the skip recorded",
    )  # fmt: skip
    command.add_argument(
        "--rlscheduler-repo", type=Path, default=None, metavar="PATH",
        help="rl-env group: RLScheduler's repository (DIR-LAB/deep-batch-scheduler), a checkout "
        "or a git directory; its HPCSimPickJobs.py, job.py and cluster.py are copied to a "
        "temporary directory at run time",
    )  # fmt: skip
    default_run = ", ".join(name for name, group in BENCH_GROUPS.items() if group.in_default_run)
    groups = "; ".join(f"{name} ({group.help})" for name, group in BENCH_GROUPS.items())
    command.add_argument(
        "--only",
        choices=BENCH_GROUPS.names(),
        default=None,
        help=f"run one group of figures only (without --only: {default_run}): {groups}",
    )
    add_json_argument(command)


def cmd_bench(args: argparse.Namespace) -> int:
    """Run ``scheduler bench``.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    return main_bench(
        args.traces_dir, args.kth, args.json, only=args.only,
        rlscheduler_python=args.rlscheduler_python, rlscheduler_repo=args.rlscheduler_repo,
    )  # fmt: skip


def selected_groups(only: str | None) -> tuple[BenchGroup, ...]:
    """The group named ``only``, or (``None``) the groups of a plain run in table order.

    Raises
    ------
    ConfigurationError
        ``only`` is not a group's name (the message lists them).
    """
    if only is None:
        return tuple(group for group in BENCH_GROUPS.values() if group.in_default_run)
    return (BENCH_GROUPS.lookup(only, where="--only"),)


def bench_header() -> Figures:
    """The figures every run starts with: schedlab's version, Python's, and the machine."""
    return {
        "schedlab": __version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.processor() or ''}",
    }


def run_groups(groups: Sequence[BenchGroup], inputs: BenchInputs) -> Figures:
    """:func:`bench_header`, then the figures of each group of ``groups`` in turn."""
    figures = bench_header()
    for group in groups:
        figures.update(group.run(inputs))
    return figures


def format_figures(figures: Mapping[str, Any], groups: Sequence[BenchGroup]) -> str:
    """Human-readable lines of :func:`run_groups`' figures: the header line, then each group's
    lines (with the targets beside the figures)."""
    header = f"schedlab {figures['schedlab']}, Python {figures['python']}, {figures['machine']}"
    return "\n".join([header, *(line for group in groups for line in group.format(figures))])


def main_bench(
    traces_dir: Path,
    kth_path: Path,
    as_json: bool,
    only: str | None = None,
    *,
    catalogue: Path = TRACE_CATALOGUE,
    rlscheduler_python: Path | None = None,
    rlscheduler_repo: Path | None = None,
) -> int:
    """Run and print the benchmarks (the ``scheduler bench`` command).

    Parameters
    ----------
    traces_dir, kth_path, catalogue
        Where the logs and their machine sizes are (:class:`BenchInputs`).
    rlscheduler_python, rlscheduler_repo
        RLScheduler's Python and repository, for the ``rl-env`` group (:class:`BenchInputs`).
    as_json
        Print the figures as JSON instead of text.
    only
        The name of the one group to run; ``None``: the groups of a plain run.

    Returns
    -------
    int
        Exit code 0.
    """
    groups = selected_groups(only)
    inputs = BenchInputs(traces_dir, kth_path, catalogue, rlscheduler_python, rlscheduler_repo)
    figures = run_groups(groups, inputs)
    print(json.dumps(figures, indent=2) if as_json else format_figures(figures, groups))
    return 0
