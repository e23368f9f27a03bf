"""The engine's job inputs (private): checks, the job matrix and the kernel's job order.

One home for what the base engine (:mod:`scheduler.sim.engine`) and its variants
(:mod:`~scheduler.sim.prediction`, :mod:`~scheduler.sim.redirection`, :mod:`~scheduler.sim.trials`)
do to the jobs they are given before a kernel sees them:

- :func:`trace_table`: the job table and machine size of a trace or bare table;
- :func:`machine_procs_value`, :func:`job_column`, :func:`check_choice`: one argument each;
- :func:`first_invalid`, :func:`check_columns` and :func:`check_jobs`: the values a kernel
  cannot simulate (a submit time that is not a finite number within ±2**52 s, processors
  outside 1..m, a run time, estimate or requested time that is not > 0 and at most 2**52 s:
  :data:`~scheduler.core.constants.MAX_TIME_S`; job numbers not finite or not unique), the
  one check of every engine (base, prediction, redirection, memory, trials, window);
- :func:`check_job_count` and :func:`check_job_ids`: no job at all, job numbers not finite or
  not unique (also used by the memory-aware engine, whose jobs are a table);
- :func:`job_matrix`: the kernel's ``jobs`` array (rows :data:`scheduler.sim._kernel.SUBMIT` ..
  ``JOBID``), checked, in (submit time, job number) order, as a :class:`JobMatrix` that
  restores the caller's order of any per-job result.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from scheduler.core.constants import MAX_MACHINE_PROCS, MAX_TIME_S
from scheduler.core.errors import ConfigurationError
from scheduler.policies import PolicyInputs
from scheduler.sim import _kernel as kernel
from scheduler.traces.swf import Trace, repeated_job_number

#: Columns :func:`trace_table` requires of a bare job table by default.
TABLE_COLUMNS = ("job_id", "submit_s", "run_s", "alloc_procs", "req_procs", "req_time_s")

#: The rows of the job matrix, by name.
_ROWS = {"submit_s": kernel.SUBMIT, "procs": kernel.PROCS, "run_s": kernel.RUN,
         "estimate_s": kernel.EST, "requested_s": kernel.REQ}  # fmt: skip

#: How each job column is checked (:func:`first_invalid`): a time (the submit time), a
#: processor count, a duration (run, estimated or requested time; ``req_time_s`` is the memory
#: engine's name of the requested time).
_KINDS = {"submit_s": "time", "procs": "procs", "run_s": "duration", "estimate_s": "duration",
          "requested_s": "duration", "req_time_s": "duration"}  # fmt: skip

#: Why a time beyond :data:`MAX_TIME_S` is refused (the end of a message).
_EXACT_RANGE = (
    f" ({MAX_TIME_S:,} s: the engines compute in float64, which holds whole seconds exactly "
    "only up to 2**53, and a submit time plus a run or requested time must stay within it)"
)


def trace_table(
    trace: Trace | pl.DataFrame,
    machine_procs: int | None,
    caller: str = "simulate",
    columns: tuple[str, ...] = TABLE_COLUMNS,
) -> tuple[pl.DataFrame, object]:
    """The job table and the machine size (processors, unchecked) of what a caller was given.

    ``trace`` is a :class:`~scheduler.traces.swf.Trace` (its size unless ``machine_procs``
    overrides it) or a bare SWF job table (then ``machine_procs`` is required and ``columns``
    must be present). A path or any other object is a :class:`TypeError` saying how to read it;
    ``caller`` names the public function in the messages.
    """
    if isinstance(trace, Trace):
        table = trace.jobs
        m = trace.machine_procs if machine_procs is None else machine_procs
    elif isinstance(trace, pl.DataFrame):
        table = trace
        if machine_procs is None:
            raise ConfigurationError(f"{caller}() needs machine_procs when given a bare table")
        m = machine_procs
        missing = [name for name in columns if name not in table.columns]
        if missing:
            raise ConfigurationError(
                f"the job table lacks the column{'s' if len(missing) > 1 else ''} "
                f"{', '.join(missing)}; expected the SWF columns {', '.join(columns)} "
                "(as scheduler.read_swf gives them)"
            )
    elif isinstance(trace, str | os.PathLike):
        raise TypeError(
            f"trace must be a scheduler.Trace or a polars DataFrame, got the path {trace!r}; "
            "read it with scheduler.read_swf(path) (and scheduler.strong_filter) first"
        )
    else:
        raise TypeError(
            "trace must be a scheduler.Trace or a polars DataFrame, got "
            f"{type(trace).__name__} {trace!r:.60}"
        )
    return table, m


def machine_procs_value(value: object) -> int:
    """``value`` as a machine size, or a ConfigurationError naming ``machine_procs``."""
    ok = (
        isinstance(value, int | float | np.integer | np.floating)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value == int(value)
        and 1 <= value <= MAX_MACHINE_PROCS
    )
    if not ok:
        raise ConfigurationError(
            f"machine_procs must be a positive integer up to {MAX_MACHINE_PROCS}, got {value!r}"
        )
    return int(value)  # type: ignore[arg-type]


def job_column(name: str, values: object, n: int | None) -> np.ndarray:
    """``values`` as a float64 array of one value per job (``n`` of them; any when None)."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigurationError(
            f"{name} must hold numbers (one per job), got {type(values).__name__}"
        ) from None
    if array.ndim != 1:
        raise ConfigurationError(
            f"{name} must be a 1-D array (one value per job), got shape {array.shape}"
        )
    if n is not None and array.shape[0] != n:
        count = array.shape[0]
        raise ConfigurationError(
            f"{name} has {count} value{'' if count == 1 else 's'}, expected {n} "
            "(one per job, as submit_s)"
        )
    return array


def check_choice(name: str, value: str, allowed: object) -> None:
    """A ConfigurationError naming ``name`` unless ``value`` is one of ``allowed``."""
    if value not in allowed:  # type: ignore[operator]
        raise ConfigurationError(f"{name} must be one of {sorted(allowed)}, got {value!r}")  # type: ignore[call-overload]


class Invalid(NamedTuple):
    """A value a kernel cannot simulate: its column, the job's index (0-based, in the order
    given), what the value must be, and whether it is out of the engines' exact time range
    (finite, but beyond :data:`MAX_TIME_S`) rather than meaningless (NaN, <= 0, ...)."""

    name: str
    index: int
    expected: str
    out_of_range: bool


def first_invalid(columns: Mapping[str, np.ndarray], machine_procs: int) -> Invalid | None:
    """The first value a kernel cannot simulate, or None.

    ``columns`` maps names among ``submit_s`` (a finite number within ±:data:`MAX_TIME_S`
    s), ``procs`` (an integer in 1..``machine_procs``), ``run_s``, ``estimate_s`` and
    ``requested_s`` (or ``req_time_s``; seconds, > 0 and at most :data:`MAX_TIME_S`) to one
    float64 value per job; they are checked in the order given, each over every job.

    Why the time bound: the engines compute in float64, which holds whole seconds exactly only
    up to 2**53. With every time within 2**52 s, a job's submit time plus its run, estimated or
    requested time stays within 2**53; a submit time of 2**62 s would be rounded to a multiple
    of 1024 s, silently changing the waits.
    """
    for name, values in columns.items():
        kind = _KINDS[name]
        if kind == "procs":
            expected, wide = f"an integer in 1..{machine_procs}", ""
            ok = (values >= 1) & (values <= machine_procs) & (values == np.floor(values))
            in_range = ok
        elif kind == "time":
            expected, wide = "a finite number", "within ±2**52 s"
            ok = np.isfinite(values)
            in_range = np.abs(values) <= MAX_TIME_S
        else:
            expected, wide = "> 0 and finite", "> 0 and at most 2**52 s"
            ok = (values > 0) & np.isfinite(values)
            in_range = values <= MAX_TIME_S
        valid = ok & in_range
        if not np.all(valid):
            j = int(np.flatnonzero(~valid)[0])
            if ok[j]:
                return Invalid(name, j, wide + _EXACT_RANGE, True)
            return Invalid(name, j, expected, False)
    return None


def check_columns(
    columns: Mapping[str, np.ndarray],
    machine_procs: int,
    job_id: np.ndarray,
    hint: str = " (apply scheduler.strong_filter to raw traces)",
) -> None:
    """Raise a ConfigurationError naming the first job (its number ``job_id`` and index) whose
    value in ``columns`` cannot be simulated (:func:`first_invalid`), the column, what it must
    be and the value; ``hint`` (how to repair it) follows a value that is not out of range."""
    bad = first_invalid(columns, machine_procs)
    if bad is not None:
        value = float(columns[bad.name][bad.index])
        raise ConfigurationError(
            f"job {int(job_id[bad.index])} (index {bad.index}): {bad.name} must be "
            f"{bad.expected}, got {value:g}{'' if bad.out_of_range else hint}"
        )


def check_jobs(jobs: np.ndarray, machine_procs: int) -> None:
    """Raise a ConfigurationError naming the first job of the matrix ``jobs`` (rows of
    :mod:`scheduler.sim._kernel`, in the caller's order) whose value cannot be simulated
    (:func:`check_columns`), or whose job number is not finite or repeats
    (:func:`check_job_ids`)."""
    check_job_ids(jobs[kernel.JOBID])
    columns = {name: jobs[row] for name, row in _ROWS.items()}
    check_columns(columns, machine_procs, jobs[kernel.JOBID])


def check_job_count(n: int) -> None:
    """A ConfigurationError when there is no job: a run of 0 jobs has no figures (its means
    would be NaN or 0 and read as a result)."""
    if n == 0:
        raise ConfigurationError(
            "no job to simulate: the input holds 0 jobs (did a filter remove every job?)"
        )


def check_job_ids(job_id: np.ndarray) -> None:
    """A ConfigurationError unless the job numbers ``job_id`` (one per job, in the caller's
    order) are finite and unique: equal submit times are ordered by job number. The message
    names the first bad number and its index (0-based) in the caller's order."""
    ids = np.asarray(job_id, dtype=np.float64)
    finite = np.isfinite(ids)
    if not finite.all():
        j = int(np.flatnonzero(~finite)[0])
        raise ConfigurationError(f"job_id must be finite job numbers, got {ids[j]:g} at index {j}")
    found = repeated_job_number(ids, np.arange(ids.shape[0]), "at indices")
    if found is not None:
        raise ConfigurationError(f"job_id: {found[0]}")


def is_job_ordered(submit: np.ndarray, job_id: np.ndarray) -> bool:
    """True when jobs are in (submit time, job number) order (the kernels' precondition)."""
    later = submit[1:] - submit[:-1]
    return bool(((later > 0) | ((later == 0) & (job_id[1:] > job_id[:-1]))).all())


@dataclass(frozen=True)
class JobMatrix:
    """The kernel's job matrix and the permutation that put it in order.

    ``jobs`` is float64 (JOB_ROWS, n), C-contiguous, in (submit time, job number) order;
    ``order`` the permutation from the caller's job order to it (``jobs[:, k]`` is the
    caller's job ``order[k]``), or None when the caller's order already was the kernel's.
    """

    jobs: np.ndarray
    order: np.ndarray | None

    def restore(self, values: np.ndarray) -> np.ndarray:
        """A copy of per-job ``values`` (first axis: jobs in the kernel's order) in the
        caller's order."""
        if self.order is None:
            return values.copy()
        out = np.empty_like(values)
        out[self.order] = values
        return out

    def policy_inputs(self) -> PolicyInputs:
        """The policies' view of these jobs (submit, processors, estimate; kernel order)."""
        jobs = self.jobs
        return PolicyInputs(
            submit_s=jobs[kernel.SUBMIT],
            procs=jobs[kernel.PROCS],
            estimate_s=jobs[kernel.EST],
            first_submit_s=float(jobs[kernel.SUBMIT, 0]) if jobs.shape[1] else 0.0,
        )


def job_matrix(
    submit_s: object,
    procs: object,
    run_s: object,
    estimate_s: object,
    machine_procs: int,
    *,
    requested_s: object | None = None,
    job_id: object | None = None,
    validate: bool = True,
    allow_empty: bool = False,
) -> JobMatrix:
    """The kernel's job matrix of jobs given as one array per quantity (any job order).

    Parameters
    ----------
    submit_s, procs, run_s, estimate_s
        Submit time (s), processors, actual run time (s) and the estimate the scheduler sees
        (s) of each job.
    machine_procs
        m, processors (checked by the caller: :func:`machine_procs_value`).
    requested_s
        Requested time (s) used when a job outlives its estimate (default: ``estimate_s``).
    job_id
        Unique job numbers (default 0..n-1): tie-breaks of equal submit times.
    validate
        Check every value (:func:`check_jobs`); the lengths and types are always checked.
    allow_empty
        Accept no job (else a ConfigurationError).
    """
    submit = job_column("submit_s", submit_s, None)
    n = submit.shape[0]
    if not allow_empty:
        check_job_count(n)
    jobs = np.empty((kernel.JOB_ROWS, n), dtype=np.float64)
    jobs[kernel.SUBMIT] = submit
    jobs[kernel.PROCS] = job_column("procs", procs, n)
    jobs[kernel.RUN] = job_column("run_s", run_s, n)
    jobs[kernel.EST] = job_column("estimate_s", estimate_s, n)
    jobs[kernel.REQ] = (
        jobs[kernel.EST] if requested_s is None else job_column("requested_s", requested_s, n)
    )
    jobs[kernel.JOBID] = (
        np.arange(n, dtype=np.float64) if job_id is None else job_column("job_id", job_id, n)
    )
    if validate:
        check_jobs(jobs, machine_procs)
    if n > 1 and not is_job_ordered(jobs[kernel.SUBMIT], jobs[kernel.JOBID]):
        order = np.lexsort((jobs[kernel.JOBID], jobs[kernel.SUBMIT]))
        return JobMatrix(np.ascontiguousarray(jobs[:, order]), order)
    return JobMatrix(jobs, None)
