"""A benchmark group of ``scheduler bench``: the table's row type, what a group is given, and
the two common shapes of a group (figures under one key; a group needing one log that may be
missing).

A group measures a set of figures (:attr:`BenchGroup.run`) and prints them
(:attr:`BenchGroup.format`). Its figures are top-level keys of the run's figures mapping, the
object ``--json`` prints; a plain run merges the figures of several groups into one mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler.traces.catalogue import TRACE_CATALOGUE

__all__ = ["BenchGroup", "BenchInputs", "Figures", "keyed_group", "log_group"]

#: Figures as ``--json`` prints them: names to numbers, texts, lists and nested mappings.
Figures = dict[str, object]


@dataclass(frozen=True)
class BenchInputs:
    """Where a benchmark run finds its logs and their machine sizes.

    Attributes
    ----------
    traces_dir
        Directory of the workload logs, each as ``<name>.swf.gz`` (``CEA-Curie.swf.gz``,
        ``LANL-CM5.swf.gz``, ``Lublin-256.swf.gz``, ...); a group skips a missing log.
    kth_path
        The KTH-SP2 log (``scheduler bench``'s default: the bundled copy).
    catalogue
        The trace catalogue the machine sizes are read from
        (:func:`~scheduler.traces.catalogue.catalogue_machine_procs`).
    rlscheduler_python, rlscheduler_repo
        The Python of an RLScheduler installation (old gym, numpy) and RLScheduler's repository
        (a checkout or a git directory), for the ``rl-env`` group's comparison with its own
        environment class; ``None``: that side is skipped, the reason recorded.
    """

    traces_dir: Path
    kth_path: Path
    catalogue: Path = TRACE_CATALOGUE
    rlscheduler_python: Path | None = None
    rlscheduler_repo: Path | None = None

    def log_path(self, name: str) -> Path:
        """The file of the log ``name`` in :attr:`traces_dir`: ``<name>.swf.gz``."""
        return self.traces_dir / f"{name}.swf.gz"


@dataclass(frozen=True)
class BenchGroup:
    """One group of figures: a row of the table
    :data:`~scheduler.cli.bench.table.BENCH_GROUPS`.

    Attributes
    ----------
    name
        The group's name: its ``--only`` choice.
    help
        One line for ``scheduler bench --help``: what is measured, on which logs.
    run
        Measures the figures: given the run's :class:`BenchInputs`, returns the top-level
        figures it adds (wall times in seconds, rates, job counts, ...).
    format
        The printed lines of the group's figures, read from the whole figures mapping of the
        run (which holds at least what :attr:`run` returned).
    in_default_run
        Whether a plain ``scheduler bench`` (without ``--only``) runs the group.
    """

    name: str
    help: str
    run: Callable[[BenchInputs], Figures]
    format: Callable[[Mapping[str, Any]], list[str]]
    in_default_run: bool = False


def _figures_key(name: str) -> str:
    """The figures key of the group ``name`` (``threshold-sweep``: ``threshold_sweep``)."""
    return name.replace("-", "_")


def keyed_group(
    name: str,
    help: str,
    measure: Callable[[BenchInputs], object],
    format_part: Callable[[Any], list[str]],
    *,
    in_default_run: bool = False,
) -> BenchGroup:
    """A group whose figures are one top-level key, its name with ``_`` for ``-``:
    ``{key: measure(inputs)}``, printed as ``format_part(figures[key])``."""
    key = _figures_key(name)
    return BenchGroup(
        name,
        help,
        run=lambda inputs: {key: measure(inputs)},
        format=lambda figures: format_part(figures[key]),
        in_default_run=in_default_run,
    )


def log_group(
    name: str,
    help: str,
    log: str,
    measure: Callable[[Path, BenchInputs], object],
    format_part: Callable[[Any], list[str]],
    *,
    in_default_run: bool = False,
) -> BenchGroup:
    """A group that needs one log of the traces directory (:meth:`BenchInputs.log_path`):
    ``{key: measure(path, inputs)}`` as :func:`keyed_group`, or, when the log is missing,
    ``{key + "_skipped": "not found: <path>"}`` printed as ``<key> skipped: not found: <path>``.
    """
    key = _figures_key(name)

    def run(inputs: BenchInputs) -> Figures:
        path = inputs.log_path(log)
        if not path.is_file():
            return {f"{key}_skipped": f"not found: {path}"}
        return {key: measure(path, inputs)}

    def lines(figures: Mapping[str, Any]) -> list[str]:
        if key in figures:
            return format_part(figures[key])
        return [f"{key} skipped: {figures.get(f'{key}_skipped')}"]

    return BenchGroup(name, help, run=run, format=lines, in_default_run=in_default_run)
