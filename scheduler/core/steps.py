"""What every workflow step shares: its log, its error, its provenance, and the parquet tables
steps pass on.

Each step (one function per Snakemake rule, in the ``steps`` module of its layer or study) is
decorated with :func:`workflow_step`, which

- opens the rule's log file and writes the step's name to it, then the step writes a line per
  unit of work (:func:`rule_log`; standard error takes the lines the log cannot),
- hands the step a :class:`StepContext` whose :meth:`~StepContext.record` is the provenance record
  of its outputs (:mod:`scheduler.core.provenance`): the step's name and its bound settings,
- writes any failure to the log and turns bad input and a failing environment into one
  :class:`StepError` with its real cause (a full disk hidden behind a library's own error is
  named as the full disk, with the output), whose message ends with the log's path; a bug
  propagates as itself, its traceback in the log,
- times the step and ends the log of a step that succeeded with one :data:`TIMING_PREFIX` line
  (wall and CPU seconds, peak memory: :class:`StepTiming`), which ``scheduler timings`` sums.
  Snakemake's ``benchmark:`` directive is not used: in the local profile's thread mode it
  measured the Snakemake process and every worker, not the step, and sampling them cost the
  Snakemake process about 28 ms of CPU per job (docs/benchmarks.md).

A step's parameters are its files (names ending in ``_path`` or ``_paths``: inputs and outputs,
left out of the record) and its settings (everything else: recorded). Each is spelled once in the
step's signature and once where the study's plan computes it.

Tables between steps are parquet files; the machine size (processors) travels in their metadata
under :data:`MACHINE_PROCS_KEY`. Each is read through :func:`read_table` (or
:func:`table_metadata`), which checks the checksum its step recorded
(:func:`scheduler.core.provenance.verify_parquet`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from scheduler.core.errors import ConfigurationError, SchedlabError, TableError, os_error_cause
from scheduler.core.provenance import provenance, verify_parquet

__all__ = [
    "MACHINE_PROCS_KEY",
    "TIMING_PREFIX",
    "StepContext",
    "StepError",
    "StepTiming",
    "flat_record",
    "mark_dedicated_process",
    "optional_path",
    "procs_metadata",
    "read_table",
    "reading_table",
    "rule_log",
    "table_machine_procs",
    "table_metadata",
    "workflow_step",
]

MACHINE_PROCS_KEY = "schedlab.machine_procs"


Log = Callable[[str], None]


class StepError(SchedlabError):
    """A workflow step failed; the message names the cause and the step's log file."""


class _LogFile:
    """A rule's log, appended to line by line; when it cannot be written (a full disk), its
    lines go to standard error instead (Snakemake's output), after one line saying why."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = path
        self.handle: Any = None
        #: Why the log could not be written ("" while it can), for the step's error message.
        self.trouble = ""
        if path is None:
            return
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close)
        except OSError as error:
            self._broken(error)

    def write(self, line: str) -> None:
        text = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n"
        if self.handle is not None:
            try:
                self.handle.write(text)
                self.handle.flush()
                return
            except OSError as error:
                self._broken(error)
        if self.path is not None:
            sys.stderr.write(f"{self.path}: {text}")
            sys.stderr.flush()

    def _broken(self, error: OSError) -> None:
        self.trouble = f"; it could not be written: {error}"
        sys.stderr.write(f"schedlab: cannot write the log {self.path} ({error}); its lines "
                         "follow here\n")  # fmt: skip
        self.close()

    def close(self) -> None:
        handle, self.handle = self.handle, None
        if handle is not None:
            with contextlib.suppress(OSError):  # a line still buffered, on a full disk
                handle.close()


@contextlib.contextmanager
def rule_log(path: str | os.PathLike[str] | None, *, step: str | None = None) -> Iterator[Log]:
    """Yield a ``log(line)`` function appending time-stamped lines to ``path``.

    ``step`` (the step's name) is logged first, when given: the log then holds a page of the
    disk before the step writes anything, so that its error still fits when the step's outputs
    fill the disk. A line that cannot be written (the log's disk full, no permission) goes to
    standard error instead (Snakemake's output), after a line saying why.

    Any failure inside the block is written to the log. Bad input and a failing environment are
    re-raised as one :class:`StepError` naming the log, so Snakemake prints one clear line: the
    message of a :class:`~scheduler.core.errors.SchedlabError` (the file, line and field of a
    malformed trace come from the core's own message); else the operating-system error behind
    the failure, also when a library hid it behind one of its own
    (:func:`~scheduler.core.errors.os_error_cause`:
    ``[Errno 28] No space left on device: 'results/…/figure.pdf'`` where matplotlib raised
    ``AttributeError: 'Stream' object has no attribute 'pos'``). Any other error is a bug: it is
    logged with its type, message and traceback and propagates as it is (a note names the
    log), and so do ``KeyboardInterrupt`` and ``SystemExit``.
    """
    log_file = _LogFile(path)
    if step is not None:
        log_file.write(f"{step}: started")
    try:
        yield log_file.write
    except (KeyboardInterrupt, SystemExit, GeneratorExit) as error:
        log_file.write(f"stopped: {type(error).__name__}")
        raise
    except BaseException as error:  # a panic of polars' Rust code is a BaseException too
        message = _failure(error, log_file.write)
        if message is None:  # a bug: its own type and traceback, the log named in a note
            error.add_note(f"(log: {path}{log_file.trouble})")
            raise
        raise StepError(f"{message} (log: {path}{log_file.trouble})") from error
    finally:
        log_file.close()


def _failure(error: BaseException, log: Log) -> str | None:
    """The message of a step's failure (see :func:`rule_log`), written to ``log`` with what
    else the log should hold; None for an unexpected error (logged with its traceback)."""
    if isinstance(error, SchedlabError):
        log(f"error: {error}")
        return str(error)
    cause = error if isinstance(error, OSError) else os_error_cause(error)
    if cause is not None:
        log(f"error: {cause}")
        if cause is not error:
            log(f"(the cause of {type(error).__name__}: {error})")
        return str(cause)
    log(f"error: unexpected {type(error).__name__}: {error}; its traceback:")
    for block in traceback.format_exception(error):
        for line in block.rstrip("\n").splitlines():
            log(f"  {line}")
    return None


@contextlib.contextmanager
def reading_table(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn polars' error on an unreadable parquet file (which does not name the file) into a
    :class:`TableError` naming it; a panic of polars' Rust code on a damaged file too
    (``pyo3_runtime.PanicException``, a :class:`BaseException` no ``except Exception``
    catches)."""
    try:
        yield
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException) as error:
        kind = "polars panicked: " if isinstance(error, pl.exceptions.PanicException) else ""
        raise TableError(f"{path}: not a readable parquet table ({kind}{error})") from error


def read_table(path: str | os.PathLike[str]) -> pl.DataFrame:
    """A parquet table written by an earlier step, checked against the checksum its step
    recorded (:func:`~scheduler.core.provenance.verify_parquet`: a file that changed since is
    refused by name, never read as other data; a file without checksum, from a schedlab
    before checksums, is read unchecked), with :func:`reading_table`'s errors."""
    with reading_table(path):
        verify_parquet(path)
        return pl.read_parquet(path)


def table_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """The key-value metadata of a parquet table written by an earlier step, checked as
    :func:`read_table` checks it."""
    with reading_table(path):
        verify_parquet(path)
        return pl.read_parquet_metadata(path)


def table_machine_procs(path: str | os.PathLike[str]) -> int:
    meta = table_metadata(path)
    if MACHINE_PROCS_KEY not in meta:
        raise ConfigurationError(f"{path}: no {MACHINE_PROCS_KEY} in its metadata")
    return int(meta[MACHINE_PROCS_KEY])


def procs_metadata(machine_procs: int) -> dict[str, str]:
    return {MACHINE_PROCS_KEY: str(int(machine_procs))}


#: What starts the last line of the log of a step that succeeded (:meth:`StepTiming.line`).
TIMING_PREFIX = "timing:"

#: Whether this process runs one step at a time and nothing else (a worker of the step pool):
#: then a step's CPU time is the process's and its peak memory can be measured.
_DEDICATED = False


def mark_dedicated_process() -> None:
    """Declare this process one that runs one step at a time and nothing else (the step pool's
    workers call it at their start): steps then report the process's CPU time, their child
    threads' included, and its peak resident memory during the step."""
    global _DEDICATED
    _DEDICATED = True


def _reset_peak_rss() -> bool:
    """Reset this process's peak resident set size (Linux's ``VmHWM``, through
    ``/proc/self/clear_refs``); False where that cannot be done."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb() -> float | None:
    """This process's peak resident set size since its last reset (MB = 2**20 bytes)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclass(frozen=True)
class StepTiming:
    """How long a step took and how much memory it held.

    Attributes
    ----------
    wall_s
        Wall-clock seconds from the step's start to its end (its outputs written).
    cpu_s
        CPU seconds (user + system): the process's in a dedicated process (a step pool worker,
        threads the step starts included), else the calling thread's (the step's own work,
        its compiled kernels included; threads it starts are not counted).
    max_rss_mb
        Peak resident memory of the dedicated process during the step (MB); None in a shared
        process, where it cannot be told apart from the other jobs'.
    """

    wall_s: float
    cpu_s: float
    max_rss_mb: float | None

    def line(self) -> str:
        """The log line (``timing: wall_s=… cpu_s=… max_rss_mb=…``, ``NA`` for no memory)."""
        rss = "NA" if self.max_rss_mb is None else f"{self.max_rss_mb:.1f}"
        return f"{TIMING_PREFIX} wall_s={self.wall_s:.4f} cpu_s={self.cpu_s:.4f} max_rss_mb={rss}"

    @classmethod
    def parse(cls, line: str) -> StepTiming:
        """The timing of a log line as :meth:`line` writes it (after the log's time stamp).

        Raises
        ------
        ValueError
            The line is not a timing line.
        """
        _, found, fields = line.partition(f" {TIMING_PREFIX} ")
        if not found:
            raise ValueError(f"not a step timing line: {line!r}")
        values = dict(field.split("=", 1) for field in fields.split())
        rss = values["max_rss_mb"]
        return cls(
            float(values["wall_s"]), float(values["cpu_s"]), None if rss == "NA" else float(rss)
        )


@contextlib.contextmanager
def _timed(log: Log) -> Iterator[None]:
    """Time the block; when it succeeds, log its :class:`StepTiming` line."""
    dedicated = _DEDICATED
    clock = time.process_time if dedicated else time.thread_time
    memory = dedicated and _reset_peak_rss()
    wall, cpu = time.perf_counter(), clock()
    yield
    timing = StepTiming(
        time.perf_counter() - wall, clock() - cpu, _peak_rss_mb() if memory else None
    )
    log(timing.line())


#: The suffixes of a step's file parameters (left out of the provenance record).
FILE_SUFFIXES = ("_path", "_paths")
#: The keyword every step takes for its log file (None: no log).
LOG_PARAMETER = "log_path"
#: The keyword under which :func:`workflow_step` passes the :class:`StepContext`.
CONTEXT_PARAMETER = "ctx"

R = TypeVar("R")


@dataclass(frozen=True)
class StepContext:
    """What :func:`workflow_step` hands a running step.

    Attributes
    ----------
    name
        The step's name: its module below ``scheduler`` and its function
        (``studies.memory.steps.simulate_batch``).
    log
        Appends a time-stamped line to the rule's log.
    settings
        The step's bound arguments but its files and log, as called (defaults included).
    """

    name: str
    log: Callable[[str], None]
    settings: Mapping[str, Any]

    def record(self, **extra: Any) -> dict[str, Any]:
        """The provenance record of the step's outputs: versions, code hash, ``config`` (the
        settings) and ``step``, plus ``extra`` fields."""
        return provenance(dict(self.settings), step=self.name, **extra)


def is_file_parameter(name: str) -> bool:
    """Whether a step parameter names files (inputs or outputs) rather than a setting."""
    return name.endswith(FILE_SUFFIXES)


def workflow_step(function: Callable[..., R]) -> Callable[..., R]:
    """Make ``function`` a workflow step.

    ``function`` takes its files and settings and a keyword-only ``ctx`` (a
    :class:`StepContext`); the step it returns takes the same files and settings and a keyword
    ``log_path`` instead of ``ctx``. Calling the step opens the log (:func:`rule_log`: every
    failure is logged; bad input and a failing environment become a :class:`StepError` with
    their real cause, naming the log) and runs ``function`` with the context.
    """
    signature = inspect.signature(function)
    parameters = [p for p in signature.parameters.values() if p.name != CONTEXT_PARAMETER]
    where = f"step {function.__qualname__}"
    if len(parameters) == len(signature.parameters):
        raise TypeError(f"{where} must take a keyword-only {CONTEXT_PARAMETER}")
    if LOG_PARAMETER in signature.parameters:
        raise TypeError(f"{where}: {LOG_PARAMETER} is added by workflow_step")
    log_parameter = inspect.Parameter(LOG_PARAMETER, inspect.Parameter.KEYWORD_ONLY, default=None)
    variadic = [p for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]
    others = [p for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD]
    public = signature.replace(parameters=[*others, log_parameter, *variadic])
    name = f"{function.__module__.removeprefix('scheduler.')}.{function.__name__}"

    @functools.wraps(function)
    def step(*args: Any, **kwargs: Any) -> R:
        bound = public.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        log_path = arguments.pop(LOG_PARAMETER)
        settings = {key: value for key, value in arguments.items() if not is_file_parameter(key)}
        with rule_log(log_path, step=name) as log, _timed(log):
            context = StepContext(name, log, settings)
            call = public.bind(*args, **{k: v for k, v in kwargs.items() if k != LOG_PARAMETER})
            return function(*call.args, **call.kwargs, **{CONTEXT_PARAMETER: context})

    step.__signature__ = public  # type: ignore[attr-defined]
    return step


def optional_path(path: str | Sequence[str] | None) -> str | None:
    """A Snakemake input that is a path or an empty list (no such input) as a path or None."""
    if path is None or isinstance(path, str):
        return path
    return path[0] if path else None


def flat_record(record: Mapping[str, Any]) -> dict[str, str]:
    """A provenance record as string values (image metadata holds text only)."""
    return {key: value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            for key, value in record.items()}  # fmt: skip
