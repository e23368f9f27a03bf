"""Batsim's file formats: the JSON workload (input) and the ``jobs.csv`` table (output).

`Batsim <https://batsim.readthedocs.io>`_ simulates a resource manager driven by an external
scheduler; `evalys <https://pypi.org/project/evalys>`_ analyses and plots its outputs. This
module lets a schedlab trace go to Batsim and a Batsim workload come back, and reads and writes
the table Batsim writes after a run, so that a schedlab schedule can be compared with Batsim's
and drawn by evalys (``docs/formats.md``).

Workload (:func:`write_batsim_workload`, :func:`read_batsim_workload`)
    A JSON object with ``nb_res`` (the machine's processors), ``jobs`` (``id``, ``subtime``,
    ``res``, ``profile`` and, when known, ``walltime``; seconds and processors) and ``profiles``.
    As Batsim's own SWF converter does, every job runs a *delay* profile (the job occupies its
    processors for a fixed number of seconds), one profile per distinct run time, named by it
    (``"3600"``). Batsim 4 calls that profile type ``"delay"``, Batsim 5 ``"DelayProfile"``; the
    writer takes either, the reader accepts both.

Jobs table (:func:`write_batsim_jobs`, :func:`read_batsim_jobs`)
    The columns of :data:`BATSIM_JOB_COLUMNS`, in that order, as Batsim 4 and 5 write them:
    one row per job, times in seconds with six decimals, ``allocated_resources`` an interval
    set (``"0-3 8 10-11"``: inclusive ranges of processor numbers separated by spaces).
"""

from __future__ import annotations

import json
import math
import numbers
import os
from pathlib import Path
from typing import Any, Literal

import polars as pl

from scheduler.core.atomic import atomic_path, atomic_write_bytes
from scheduler.core.constants import MAX_TIME_S, SWF_COLUMNS, SWF_SCHEMA, SWF_UNKNOWN
from scheduler.core.errors import ConfigurationError, TraceFormatError, quote
from scheduler.core.version import __version__
from scheduler.traces.swf import (
    DEFAULT_MAX_BYTES,
    SwfHeader,
    Trace,
    check_unique_job_ids,
    load_bytes,
    used_procs,
)

__all__ = [
    "BATSIM_JOB_COLUMNS",
    "BATSIM_JOB_SCHEMA",
    "DELAY_PROFILE_TYPES",
    "FINAL_STATES",
    "DelayProfileType",
    "read_batsim_jobs",
    "read_batsim_workload",
    "write_batsim_jobs",
    "write_batsim_workload",
]

DelayProfileType = Literal["delay", "DelayProfile"]
#: The names of Batsim's delay profile type: Batsim 4's (the default) and Batsim 5's.
DELAY_PROFILE_TYPES: tuple[str, ...] = ("delay", "DelayProfile")

#: The columns of Batsim's ``jobs.csv`` and their dtypes, in Batsim's order (its docs,
#: "Jobs" output, and its ``JobsTracer``): times in seconds, ``success`` 1 or 0,
#: ``requested_time`` -1 for a job without walltime, ``consumed_energy`` in joules (-1: not
#: measured). The times of a rejected job are empty (null).
BATSIM_JOB_SCHEMA: dict[str, pl.DataType] = {
    "job_id": pl.String(),
    "workload_name": pl.String(),
    "profile": pl.String(),
    "submission_time": pl.Float64(),
    "requested_number_of_resources": pl.Int64(),
    "requested_time": pl.Float64(),
    "success": pl.Int64(),
    "final_state": pl.String(),
    "starting_time": pl.Float64(),
    "execution_time": pl.Float64(),
    "finish_time": pl.Float64(),
    "waiting_time": pl.Float64(),
    "turnaround_time": pl.Float64(),
    "stretch": pl.Float64(),
    "allocated_resources": pl.String(),
    "consumed_energy": pl.Float64(),
    "metadata": pl.String(),
}
BATSIM_JOB_COLUMNS: tuple[str, ...] = tuple(BATSIM_JOB_SCHEMA)

#: Batsim's final states of a job (``final_state``): run to its end with exit code 0; run to its
#: end with another code; stopped at its walltime; killed by the scheduler; never run.
FINAL_STATES: tuple[str, ...] = (
    "COMPLETED_SUCCESSFULLY",
    "COMPLETED_FAILED",
    "COMPLETED_WALLTIME_REACHED",
    "COMPLETED_KILLED",
    "REJECTED",
)

#: Batsim reads job ids and ``res`` as 32-bit signed integers (rapidjson's ``IsInt``).
_INT32_MAX = 2**31 - 1
#: Seconds Batsim writes after the decimal point (C++ ``std::to_string`` of a double).
_DECIMALS = 6


# --------------------------------------------------------------------------------------------
# Workload: writing
# --------------------------------------------------------------------------------------------


def write_batsim_workload(
    trace: Trace,
    path: str | os.PathLike[str],
    *,
    profile_type: DelayProfileType = "delay",
) -> None:
    """Write a trace as a Batsim JSON workload of delay jobs, atomically.

    Parameters
    ----------
    trace
        The jobs (strongly filtered, :func:`scheduler.traces.filters.strong_filter`: Batsim
        refuses what the filter removes) and the machine size, written as ``nb_res``.
    path
        Output file, replaced atomically.
    profile_type
        ``"delay"`` (Batsim 4, the released version; the default) or ``"DelayProfile"``
        (Batsim 5).

    Raises
    ------
    ConfigurationError
        ``profile_type`` is neither; a job Batsim would refuse or could not run, named by its
        job number and SWF field: no processor count (``alloc_procs`` and ``req_procs`` <= 0),
        more processors than the machine, a run time <= 0 (a delay must be > 0), a negative
        submit time, a job number outside 0 .. 2**31-1 (Batsim reads ids as 32-bit integers).
        Nothing is written then.

    Notes
    -----
    Each job becomes ``{"id", "profile", "res", "subtime", "walltime"}`` (keys sorted):

    - ``id``: its SWF job number (an integer), so that Batsim's ``jobs.csv`` names it alike;
    - ``subtime``: its submit time, s, as in the trace (not moved to start at 0);
    - ``res``: its allocated processors, or its requested ones when unknown
      (:func:`scheduler.traces.swf.used_procs`, as the simulator counts them);
    - ``profile``: its run time in seconds, as text: the name of a delay profile of that many
      seconds (one per distinct run time; the job occupies its processors that long);
    - ``walltime``: its requested time, s, when known (> 0). An unknown requested time (-1 or
      0) writes no ``walltime``: no limit, the one form Batsim 4 and 5 both read so (Batsim 4
      also reads -1, Batsim 5 refuses it). Batsim stops a job at its walltime; a job whose run
      time exceeds its requested time is therefore cut short there, where schedlab would run it
      to its end (the strong filter removes such jobs, or clips them with ``overrun="clip"``).

    Jobs keep the trace's order; profiles are sorted by their delay. The file is the same byte
    for byte for the same trace (no date or path inside): one job a line, readable and
    diff-able. The other SWF fields (user, memory, status, ...) are not written.
    """
    if profile_type not in DELAY_PROFILE_TYPES:
        raise ConfigurationError(
            f"profile_type must be one of {', '.join(DELAY_PROFILE_TYPES)}, got "
            f"{quote(profile_type)}"
        )
    jobs = trace.jobs.select(
        "job_id",
        "submit_s",
        "run_s",
        "req_time_s",
        "alloc_procs",
        "req_procs",
        used_procs().alias("res"),
    )
    _check_batsim_jobs(jobs, trace.machine_procs)
    job_lines = jobs.select(
        pl.concat_str(
            pl.lit('    {"id": '),
            pl.col("job_id").cast(pl.String),
            pl.lit(', "profile": "'),
            pl.col("run_s").cast(pl.String),
            pl.lit('", "res": '),
            pl.col("res").cast(pl.String),
            pl.lit(', "subtime": '),
            pl.col("submit_s").cast(pl.String),
            pl.when(pl.col("req_time_s") > 0)
            .then(pl.lit(', "walltime": ') + pl.col("req_time_s").cast(pl.String))
            .otherwise(pl.lit("")),
            pl.lit("}"),
        ).str.join(",\n")
    ).item()
    kind = json.dumps(profile_type)
    profile_lines = (
        jobs.select(pl.col("run_s").unique().sort())
        .select(
            pl.concat_str(
                pl.lit('    "'),
                pl.col("run_s").cast(pl.String),
                pl.lit('": {"delay": '),
                pl.col("run_s").cast(pl.String),
                pl.lit(f', "type": {kind}}}'),
            ).str.join(",\n")
        )
        .item()
    )
    source = "a table" if trace.path is None else Path(trace.path).name
    description = json.dumps(f"written by schedlab {__version__} from {source}")
    text = (
        "{\n"
        f'  "description": {description},\n'
        f'  "jobs": [\n{job_lines}\n  ],\n'
        f'  "nb_res": {trace.machine_procs},\n'
        f'  "profiles": {{\n{profile_lines}\n  }}\n'
        "}\n"
    )
    atomic_write_bytes(path, text.encode("utf-8"))


def _check_batsim_jobs(jobs: pl.DataFrame, machine_procs: int) -> None:
    """Refuse the first job Batsim would refuse or could not run (see the writer's Raises)."""
    procs = ("alloc_procs", "req_procs")
    checks = (
        (pl.col("res") <= 0, procs, "no processor count (allocated and requested unknown)"),
        (pl.col("res") > machine_procs, procs, f"more processors than the machine's "
         f"{machine_procs}"),
        (pl.col("run_s") <= 0, ("run_s",), "a run time <= 0 s (a Batsim delay must be > 0)"),
        (pl.col("submit_s") < 0, ("submit_s",), "a negative submit time"),
        ((pl.col("job_id") < 0) | (pl.col("job_id") > _INT32_MAX), ("job_id",),
         "a job number outside 0 .. 2**31-1 (Batsim reads ids as 32-bit integers)"),
    )  # fmt: skip
    for bad, fields, what in checks:
        rows = jobs.select(bad.arg_true()).to_series()
        if rows.len():
            row = jobs.row(int(rows[0]), named=True)
            values = ", ".join(f"{name} {row[name]}" for name in fields)
            raise ConfigurationError(
                f"job {row['job_id']} (row {int(rows[0]) + 1}: {values}) has {what}, which "
                f"Batsim cannot run ({rows.len()} job(s) so); strongly filter the trace first "
                "(scheduler.strong_filter, or `scheduler convert --filter`)"
            )


# --------------------------------------------------------------------------------------------
# Workload: reading
# --------------------------------------------------------------------------------------------


def read_batsim_workload(
    path: str | os.PathLike[str],
    *,
    machine_procs: int | None = None,
    renumber: bool = False,
    round_times: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Trace:
    """Read a Batsim JSON workload of delay jobs (plain or gzipped) as a trace.

    Parameters
    ----------
    path
        The workload file.
    machine_procs
        Machine size, processors; overrides ``nb_res``.
    renumber
        Number the jobs 1, 2, ... in the order of the file's ``jobs`` array (job number ``k``
        is the ``k``-th job there, so its original id is ``jobs[k-1]["id"]``). Needed when an
        id is not an integer (Batsim allows any string); without it such an id is refused.
    round_times
        Round fractional times (``subtime``, ``walltime``, delays) to whole seconds, halves
        away from zero; without it a fractional time is refused (schedlab counts whole seconds,
        as SWF does).
    max_bytes
        Largest content accepted, bytes, after decompression.

    Returns
    -------
    Trace
        One job per entry of ``jobs``, in file order: ``job_id`` its id (an integer, or the
        text of an integer, optionally after a workload prefix ``"w0!"``), ``submit_s`` its
        ``subtime``, ``run_s`` its profile's delay, ``alloc_procs`` and ``req_procs`` its
        ``res``, ``req_time_s`` its ``walltime`` (-1 when absent or -1), every other SWF field -1
        (unknown; a workload says nothing of waits, users or status). The header holds ``Version``,
        ``MaxJobs``, ``MaxRecords``, ``MaxProcs`` (the machine size) and a ``Note`` naming the
        file. Machine size: ``machine_procs``, else ``nb_res``.

    Raises
    ------
    TraceFormatError
        Naming the file and, for a job, ``jobs[i].<key>`` (``i`` from 0, as in the file) with
        the job's id: not JSON; not an object with ``jobs`` (a non-empty array) and
        ``profiles`` (an object); ``nb_res`` missing (without ``machine_procs``) or not a
        positive integer; a job that is not an object or lacks ``id``, ``subtime``, ``res`` or
        ``profile``; an id neither an integer nor a string (or not an integer without
        ``renumber``); ``subtime`` not a number >= 0; ``res`` not an integer >= 0;
        ``walltime`` neither > 0 nor -1; a profile not in ``profiles``, not a delay profile
        (its type named) or whose delay is not a number > 0; a fractional time without
        ``round_times``; a time beyond ±2**52 s; a repeated job number.
    ConfigurationError
        ``machine_procs`` is not a positive integer.
    """
    where = str(path)
    data = load_bytes(path, max_bytes, expected="a Batsim JSON workload",
                      reader="read_batsim_workload")  # fmt: skip
    try:
        document = json.loads(data)
    except UnicodeDecodeError as exc:
        raise TraceFormatError(
            where, f"expected UTF-8 JSON, found undecodable bytes ({exc.reason})"
        ) from None
    except json.JSONDecodeError as exc:
        raise TraceFormatError(
            where, f"expected a JSON document: {exc.msg} (column {exc.colno})", line=exc.lineno
        ) from None
    if not isinstance(document, dict):
        raise TraceFormatError(where, f"expected a JSON object, found {_kind(document)}")
    jobs = document.get("jobs")
    profiles = document.get("profiles")
    if not isinstance(jobs, list) or not jobs:
        raise TraceFormatError(
            where, f"expected a non-empty array of jobs, found {_kind(jobs)}", field="jobs"
        )
    if not isinstance(profiles, dict):
        raise TraceFormatError(
            where, f"expected an object of profiles, found {_kind(profiles)}", field="profiles"
        )
    if machine_procs is None:
        nb_res = document.get("nb_res")
        if not _is_int(nb_res) or nb_res <= 0:
            raise TraceFormatError(
                where,
                f"expected a positive integer (the machine's processors), found {_kind(nb_res)}"
                "; pass machine_procs=<processors>",
                field="nb_res",
            )
        machine_procs = int(nb_res)
    elif not _is_int(machine_procs) or machine_procs <= 0:
        raise ConfigurationError(
            f"machine_procs must be a positive integer (processors), got {quote(machine_procs)}"
        )
    delays = _delays(profiles, where)
    columns = _job_columns(jobs, delays, where, renumber=renumber, round_times=round_times)
    n = len(jobs)
    table = pl.DataFrame(
        {
            **{name: pl.Series(name, [SWF_UNKNOWN] * n, dtype=dtype)
               for name, dtype in SWF_SCHEMA.items()},
            **{name: pl.Series(name, values, dtype=SWF_SCHEMA[name])
               for name, values in columns.items()},
        }
    ).select(SWF_COLUMNS)  # fmt: skip
    if table.get_column("job_id").is_duplicated().any():
        check_unique_job_ids(table, where)
    note = Path(where).name.replace("\n", " ").replace("\r", " ")
    header = SwfHeader.from_lines(
        [
            "; Version: 2.2",
            f"; MaxJobs: {n}",
            f"; MaxRecords: {n}",
            f"; MaxProcs: {machine_procs}",
            f"; Note: read from the Batsim workload {note} by schedlab {__version__}",
        ],
        where,
    )
    return Trace(jobs=table, header=header, machine_procs=int(machine_procs), path=where)


def _kind(value: object) -> str:
    """How an unexpected JSON value is named in a message: its type and a short quote."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null"}  # fmt: skip
    if value is None:
        return "none"
    text = json.dumps(value)
    shown = quote(text, 40) if len(text) > 40 else text
    return f"{names.get(type(value), type(value).__name__)} {shown}"


def _is_int(value: object) -> bool:
    """A JSON integer (not a boolean, not a float)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    """A finite JSON number (not a boolean)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _delays(profiles: dict[str, Any], where: str) -> dict[str, float | str]:
    """Each profile's delay (s) when it is a delay profile, else its type as text (a job that
    uses such a profile is refused where it is read, naming the job and the profile)."""
    delays: dict[str, float | str] = {}
    for name, profile in profiles.items():
        kind = profile.get("type") if isinstance(profile, dict) else None
        if kind not in DELAY_PROFILE_TYPES:
            delays[name] = json.dumps(kind) if kind is not None else "none (no type)"
            continue
        delay = profile.get("delay")
        if not _is_number(delay) or delay <= 0:
            raise TraceFormatError(
                where,
                f"profile {quote(name)}: expected a delay > 0 (seconds), found {_kind(delay)}",
                field=f"profiles.{name}.delay",
            )
        delays[name] = float(delay)
    return delays


class _Job:
    """One entry of the ``jobs`` array being read: raises its errors, naming it."""

    def __init__(self, job: dict[str, Any], index: int, where: str) -> None:
        self.job, self.index, self.where = job, index, where

    def bad(self, key: str, expected: str, remedy: str = "") -> TraceFormatError:
        """The error of ``key``: what was expected, what was found, and the remedy if any."""
        found = _kind(self.job[key]) if key in self.job else "no such key"
        ident = self.job.get("id")
        name = json.dumps(ident) if _is_int(ident) or isinstance(ident, str) else "(no id)"
        return TraceFormatError(
            self.where,
            f"job {quote(name, 40) if len(name) > 40 else name}: expected {expected}, found "
            f"{found}" + (f"; {remedy}" if remedy else ""),
            field=f"jobs[{self.index}].{key}",
        )

    def seconds(self, key: str, value: float, round_times: bool) -> int:
        """``value`` (seconds, finite) as whole seconds, or the error of ``key``."""
        if abs(value) > MAX_TIME_S:
            raise self.bad(key, "a time within ±2**52 s (the simulator's exact range)")
        if value != int(value):
            if not round_times:
                raise self.bad(
                    key, "whole seconds", "pass round_times=True (--round-times) to round"
                )
            return int(math.copysign(math.floor(abs(value) + 0.5), value))
        return int(value)


def _job_columns(
    jobs: list[Any],
    profiles: dict[str, float | str],
    where: str,
    *,
    renumber: bool,
    round_times: bool,
) -> dict[str, list[int]]:
    """The SWF columns of the jobs (job_id, submit_s, run_s, alloc_procs, req_procs,
    req_time_s), each job checked; the first bad one raises."""
    ids: list[int] = []
    submit: list[int] = []
    run: list[int] = []
    res: list[int] = []
    wall: list[int] = []
    for index, entry in enumerate(jobs):
        if not isinstance(entry, dict):
            raise TraceFormatError(
                where, f"expected a job object, found {_kind(entry)}", field=f"jobs[{index}]"
            )
        job = _Job(entry, index, where)
        for key in ("id", "subtime", "res", "profile"):
            if key not in entry:
                raise job.bad(key, "this key (a job needs id, subtime, res and profile)")
        ids.append(index + 1 if renumber else _job_number(job))
        subtime = entry["subtime"]
        if not _is_number(subtime) or subtime < 0:
            raise job.bad("subtime", "a number of seconds >= 0")
        submit.append(job.seconds("subtime", subtime, round_times))
        if not _is_int(entry["res"]) or not 0 <= entry["res"] <= _INT32_MAX:
            raise job.bad("res", "an integer number of processors >= 0")
        res.append(entry["res"])
        name = entry["profile"]
        if not isinstance(name, str) or name not in profiles:
            raise job.bad("profile", "the name of a profile defined in profiles")
        delay = profiles[name]
        if isinstance(delay, str):
            raise job.bad(
                "profile",
                f"a delay profile (type {' or '.join(DELAY_PROFILE_TYPES)})",
                f"its profile has type {delay}, which schedlab cannot simulate",
            )
        run.append(job.seconds("profile", delay, round_times))
        walltime = entry.get("walltime", SWF_UNKNOWN)
        if not _is_number(walltime) or not (walltime > 0 or walltime == SWF_UNKNOWN):
            raise job.bad("walltime", "a number of seconds > 0, or -1 (no walltime)")
        wall.append(job.seconds("walltime", walltime, round_times))
    return {"job_id": ids, "submit_s": submit, "run_s": run, "alloc_procs": res,
            "req_procs": res, "req_time_s": wall}  # fmt: skip


def _job_number(job: _Job) -> int:
    """A job's id as an SWF job number: an integer, or the text of one, after an optional
    workload prefix (``"w0!12"`` -> 12, Batsim's full id)."""
    value = job.job["id"]
    if _is_int(value):
        return int(value)
    if isinstance(value, str):
        text = value.rpartition("!")[2].strip()
        if text.lstrip("+-").isdigit() and text.isascii():
            return int(text)
    raise job.bad(
        "id",
        "an integer job number (or its text)",
        "pass renumber=True (--renumber) to number the jobs 1, 2, ... in file order",
    )


# --------------------------------------------------------------------------------------------
# jobs.csv
# --------------------------------------------------------------------------------------------


def write_batsim_jobs(table: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write a table as Batsim's ``jobs.csv``, atomically.

    Parameters
    ----------
    table
        The columns of :data:`BATSIM_JOB_COLUMNS` (others are ignored), castable to the dtypes
        of :data:`BATSIM_JOB_SCHEMA`; ``allocated_resources`` an interval set per row
        (``scheduler.sim.batsim_jobs.batsim_jobs`` builds one from a schedule).
    path
        Output file, replaced atomically.

    Raises
    ------
    ConfigurationError
        A column is missing or cannot be cast to its dtype; nothing is written then.

    Notes
    -----
    As Batsim writes it: a header line, the columns in Batsim's order, times with six
    decimals, empty fields for nulls (the times of a rejected job), ``metadata`` quoted
    (``""`` when empty). Written by polars' CSV writer: a few hundred milliseconds for the
    290,000 jobs of CEA-Curie.
    """
    missing = [name for name in BATSIM_JOB_COLUMNS if name not in table.columns]
    if missing:
        raise ConfigurationError(
            f"the jobs table lacks Batsim column(s) {missing}; expected "
            f"{', '.join(BATSIM_JOB_COLUMNS)}"
        )
    try:
        out = table.select(
            pl.col(name).cast(dtype, strict=True) for name, dtype in BATSIM_JOB_SCHEMA.items()
        )
    except pl.exceptions.PolarsError as exc:
        raise ConfigurationError(f"a Batsim column cannot be cast to its dtype: {exc}") from exc
    with atomic_path(path) as tmp:
        out.write_csv(tmp, float_precision=_DECIMALS, quote_style="necessary", null_value="")


def read_batsim_jobs(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Read Batsim's ``jobs.csv`` (Batsim 4 or 5, or :func:`write_batsim_jobs`).

    Parameters
    ----------
    path
        The file.

    Returns
    -------
    polars.DataFrame
        The columns of :data:`BATSIM_JOB_COLUMNS` with the dtypes of
        :data:`BATSIM_JOB_SCHEMA`, in file order; empty fields are null (``metadata``: ``""``).
        Other columns of the file are dropped.

    Raises
    ------
    TraceFormatError
        Naming the file: it is missing or not CSV, a column is missing (``field``), or a value
        is not of its column's type (``line``, 1-based with the header line 1, and ``field``).
    """
    where = str(path)
    data = load_bytes(path, DEFAULT_MAX_BYTES, expected="a Batsim jobs.csv",
                      reader="read_batsim_jobs")  # fmt: skip
    try:
        raw = pl.read_csv(data, infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise TraceFormatError(where, f"expected a CSV table: {exc}") from None
    for name in BATSIM_JOB_COLUMNS:
        if name not in raw.columns:
            raise TraceFormatError(
                where,
                f"expected Batsim's column {name} in the header line, found "
                f"{quote(','.join(raw.columns), 120)}",
                line=1,
                field=name,
            )
    raw = raw.select(BATSIM_JOB_COLUMNS)
    typed = raw.select(
        pl.col(name).str.strip_chars().cast(dtype, strict=False) if dtype.is_numeric()
        else pl.col(name)
        for name, dtype in BATSIM_JOB_SCHEMA.items()
    )  # fmt: skip
    for name, dtype in BATSIM_JOB_SCHEMA.items():
        if not dtype.is_numeric():
            continue
        failed = (typed[name].is_null() & raw[name].is_not_null() & (raw[name] != "")).arg_true()
        if failed.len():
            row = int(failed[0])
            expected = "an integer" if dtype.is_integer() else "a number"
            raise TraceFormatError(
                where,
                f"job {quote(raw['job_id'][row])}: expected {expected}, found "
                f"{quote(raw[name][row])}",
                line=row + 2,
                field=name,
            )
    return typed.with_columns(pl.col("metadata").fill_null(""))
