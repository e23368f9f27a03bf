"""What every workflow step shares: its log, its error, and the parquet tables steps pass on.

Each step (one function per Snakemake rule, in the ``steps`` module of its layer or study)

- logs a line per unit of work to the rule's log file (:func:`rule_log`),
- writes its outputs atomically with a provenance record (:mod:`scheduler.core.provenance`),
- turns a failure into one :class:`StepError` whose message ends with the log's path.

Tables between steps are parquet files; the machine size (processors) travels in their metadata
under :data:`MACHINE_PROCS_KEY`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from scheduler.core.errors import ConfigurationError, SchedlabError, TableError

__all__ = [
    "MACHINE_PROCS_KEY",
    "StepError",
    "flat_record",
    "optional_path",
    "procs_metadata",
    "read_table",
    "reading_table",
    "rule_log",
    "table_machine_procs",
]

MACHINE_PROCS_KEY = "schedlab.machine_procs"


Log = Callable[[str], None]


class StepError(SchedlabError):
    """A workflow step failed; the message names the cause and the step's log file."""


@contextlib.contextmanager
def rule_log(path: str | os.PathLike[str] | None) -> Iterator[Log]:
    """Yield a ``log(line)`` function appending time-stamped lines to ``path``.

    A :class:`~scheduler.core.errors.SchedlabError` or ``OSError`` raised inside the block is
    written to the log and re-raised as :class:`StepError` naming the log, so Snakemake prints one
    clear line (the file, line and field of a malformed trace come from the core's own message).
    """
    handle = None
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed in finally)

    def log(line: str) -> None:
        if handle is not None:
            handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")
            handle.flush()

    try:
        yield log
    except (SchedlabError, OSError) as error:
        log(f"error: {error}")
        raise StepError(f"{error} (log: {path})") from error
    finally:
        if handle is not None:
            handle.close()


@contextlib.contextmanager
def reading_table(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn polars' error on an unreadable parquet file (which does not name the file) into a
    :class:`TableError` naming it."""
    try:
        yield
    except pl.exceptions.PolarsError as error:
        raise TableError(f"{path}: not a readable parquet table ({error})") from error


def read_table(path: str | os.PathLike[str]) -> pl.DataFrame:
    """A parquet table written by an earlier step (:func:`reading_table` errors)."""
    with reading_table(path):
        return pl.read_parquet(path)


def table_machine_procs(path: str | os.PathLike[str]) -> int:
    with reading_table(path):
        meta = pl.read_parquet_metadata(path)
    if MACHINE_PROCS_KEY not in meta:
        raise ConfigurationError(f"{path}: no {MACHINE_PROCS_KEY} in its metadata")
    return int(meta[MACHINE_PROCS_KEY])


def procs_metadata(machine_procs: int) -> dict[str, str]:
    return {MACHINE_PROCS_KEY: str(int(machine_procs))}


def optional_path(path: str | Sequence[str] | None) -> str | None:
    """A Snakemake input that is a path or an empty list (no such input) as a path or None."""
    if path is None or isinstance(path, str):
        return path
    return path[0] if path else None


def flat_record(record: Mapping[str, Any]) -> dict[str, str]:
    """A provenance record as string values (image metadata holds text only)."""
    return {key: value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            for key, value in record.items()}  # fmt: skip
