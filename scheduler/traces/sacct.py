"""Import a Slurm cluster's accounting (``sacct --parsable2``) as an SWF trace.

Run on the cluster (the fields: :data:`SACCT_FIELDS`; the command: :data:`SACCT_COMMAND`)::

    TZ=UTC sacct --allusers --parsable2 --starttime 2024-01-01 --endtime 2024-07-01 \\
        --format=JobID,User,Group,Account,Partition,QOS,Submit,Eligible,Start,End,Timelimit,\\
    AllocCPUS,ReqCPUS,AllocNodes,ReqNodes,ReqMem,MaxRSS,State,ExitCode > accounting.txt

then :func:`read_sacct` (or ``scheduler import sacct accounting.txt --out trace.swf.gz``) turns
the rows into a :class:`~scheduler.traces.swf.Trace` with an SWF 2.2 header, a side table of
what SWF has no column for (account, QOS, partition name, eligible time, exit code, the Slurm
job id) and a :class:`SacctReport` counting every row dropped, folded or repaired, by reason.

What real accounting holds, and what becomes of it (``docs/workloads.md``, "Your own cluster's
accounting: sacct import"):

- job steps (``123.batch``, ``123.extern``, ``123.0``) are folded into their job; the job's used
  memory is the largest ``MaxRSS`` of its steps;
- array tasks (``123_4``) are jobs of their own; the pending remainder of an array
  (``123_[5-9]``) is a job that has not run, dropped as pending;
- the components of a heterogeneous job (``123+0``, ``123+1``) are merged into one job (their
  processors, nodes and memory added up, from the first start to the last end), since the
  simulator starts a job whole or not at all;
- a job cancelled before it started is dropped and counted; so is a job that ended without
  starting in another state, and one still pending, running, suspended or requeued at export;
- ``UNLIMITED`` (or ``Partition_Limit``) time limits become an unknown requested time (-1) or,
  when given, ``unlimited_time_s``; limits are ``[D-]HH:MM:SS`` (or ``MM:SS``, minutes...);
- ``ReqMem`` is read as Slurm writes it: with the suffix ``n`` (per node) or ``c`` (per CPU)
  before 21.08, without a suffix (the job's total, its ``mem`` TRES) since; units K, M
  (the default), G, T, P of 1024;
- times are local clock readings without zone, read in ``timezone`` (an IANA name; the header's
  ``TimeZoneString``); a time with an offset (``SLURM_TIME_FORMAT="%FT%T%z"``) or in epoch
  seconds (``SLURM_TIME_FORMAT=%s``) is taken as it is.

Users, groups and accounts are numbered in the order they first appear in the trace (jobs in
submit order), 1, 2, ...; their names are kept only on request (``keep_names``). Any line that
cannot be read is an error naming the file, the line and the field
(:class:`~scheduler.core.errors.TraceFormatError`).

Parsing is plain Python, one row at a time: 400,000 rows (200,000 jobs and their batch steps)
took 12.7 s on the 2-core development machine (2026-11-27).
"""

from __future__ import annotations

import datetime
import math
import os
import re
import zoneinfo
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.atomic import atomic_path
from scheduler.core.constants import SWF_SCHEMA, SWF_UNKNOWN
from scheduler.core.errors import ConfigurationError, NoJobsError, TraceFormatError, quote
from scheduler.core.flags import flag
from scheduler.core.version import __version__
from scheduler.traces.swf import SwfHeader, Trace, load_bytes, write_swf

__all__ = [
    "DROP_CANCELLED_UNSTARTED",
    "DROP_ENDED_UNSTARTED",
    "DROP_NOT_FINISHED",
    "DROP_REPEATED",
    "DROP_STEP_WITHOUT_JOB",
    "REPAIR_DST",
    "REPAIR_END_BEFORE_START",
    "REPAIR_START_BEFORE_SUBMIT",
    "REPAIR_UNLIMITED",
    "REPAIR_UNLIMITED_GIVEN",
    "REPAIR_WHOLE_NODE_MEMORY",
    "REQUIRED_FIELDS",
    "SACCT_COMMAND",
    "SACCT_FIELDS",
    "SIDE_SCHEMA",
    "SWF_STATUS",
    "SacctImport",
    "SacctReport",
    "default_side_path",
    "import_sacct",
    "parse_duration_s",
    "parse_memory_kb",
    "read_sacct",
    "read_side_table",
    "side_table_path",
    "write_side_table",
]

#: The ``sacct --format`` fields the import reads, in the documented order.
SACCT_FIELDS: tuple[str, ...] = (
    "JobID", "User", "Group", "Account", "Partition", "QOS", "Submit", "Eligible", "Start",
    "End", "Timelimit", "AllocCPUS", "ReqCPUS", "AllocNodes", "ReqNodes", "ReqMem", "MaxRSS",
    "State", "ExitCode",
)  # fmt: skip
#: Fields without which a row cannot become a job; the others, when absent, are unknown (-1).
REQUIRED_FIELDS: tuple[str, ...] = ("JobID", "Submit", "Start", "End", "State")
#: The command to run on the cluster (choose the period; ``TZ`` names the zone of the times).
SACCT_COMMAND = (
    "TZ=UTC sacct --allusers --parsable2 --starttime YYYY-MM-DD --endtime YYYY-MM-DD "
    f"--format={','.join(SACCT_FIELDS)}"
)

#: SWF status (field 11) of each finished Slurm state: 1 completed, 0 failed (Slurm's
#: failures, time-outs, out-of-memory kills, node failures, preemptions), 5 cancelled.
SWF_STATUS: dict[str, int] = {
    "COMPLETED": 1,
    "CANCELLED": 5,
    "FAILED": 0,
    "TIMEOUT": 0,
    "OUT_OF_MEMORY": 0,
    "NODE_FAIL": 0,
    "BOOT_FAIL": 0,
    "DEADLINE": 0,
    "PREEMPTED": 0,
    "REVOKED": 0,
}
#: Slurm states of a job not finished when sacct ran: dropped.
_NOT_FINISHED = frozenset(
    {"PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD",
     "RESIZING", "SPECIAL_EXIT", "STOPPED", "SIGNALING", "STAGE_OUT", "CONFIGURING",
     "COMPLETING", "POWER_UP_NODE", "UPDATE_DB"}
)  # fmt: skip

# Reasons (keys of SacctReport.dropped and .repaired) ----------------------------------------
DROP_CANCELLED_UNSTARTED = "cancelled before it started"
DROP_ENDED_UNSTARTED = "ended without starting (not cancelled)"
DROP_NOT_FINISHED = "not finished at export (pending, running, suspended, requeued)"
DROP_STEP_WITHOUT_JOB = "step row without its job row"
DROP_REPEATED = "repeated job id (the last row kept)"
REPAIR_UNLIMITED = "no time limit (UNLIMITED or none recorded): requested time unknown"
REPAIR_UNLIMITED_GIVEN = "no time limit (UNLIMITED or none recorded): unlimited_time_s taken"
REPAIR_WHOLE_NODE_MEMORY = "memory request 0 (a whole node's memory): unknown"
REPAIR_START_BEFORE_SUBMIT = "start before submit: wait set to 0"
REPAIR_END_BEFORE_START = "end before start: run time set to 0"
REPAIR_DST = "local time repeated or skipped by a DST change (earlier reading taken)"

#: Columns of the side table, one row per job of the trace (``job_id`` as in the SWF).
SIDE_SCHEMA: dict[str, pl.DataType] = {
    "job_id": pl.Int64(),
    "slurm_job_id": pl.String(),
    "account_id": pl.Int64(),
    "qos": pl.String(),
    "partition": pl.String(),
    "eligible_s": pl.Int64(),
    "state": pl.String(),
    "exit_code": pl.Int64(),
    "exit_signal": pl.Int64(),
    "max_rss_kb": pl.Float64(),
    "het_components": pl.Int64(),
}
_NAME_COLUMNS = {"user_name": "user_id", "group_name": "group_id", "account_name": "account_id"}

_MISSING_TIMES = frozenset({"", "unknown", "none", "n/a", "invalid"})
_UNLIMITED = frozenset({"unlimited", "partition_limit", "infinite"})
_JOB_ID = re.compile(
    r"^(?P<base>\d+)(?:_(?P<task>\d+|\[[^\]]*\]))?(?:\+(?P<het>\d+))?(?:\.(?P<step>[^.\s]+))?$"
)
_MEMORY = re.compile(r"^(?P<value>\d+(?:\.\d*)?)(?P<unit>[KMGTP]?)(?P<per>[nc]?)$", re.IGNORECASE)
_COUNT = re.compile(r"^(?P<value>\d+(?:\.\d*)?)(?P<unit>[KMGTP]?)$", re.IGNORECASE)
_EXIT = re.compile(r"^(\d+):(\d+)$")
_UNIT_POWER = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5}


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass
class SacctReport:
    """What the import did to the rows of an sacct file.

    Attributes
    ----------
    rows
        Data rows read (job and step rows; the header not counted).
    job_rows
        Rows of jobs (array tasks and heterogeneous components each count one).
    steps_folded
        Step rows (``.batch``, ``.extern``, ``.0``, ...) folded into their job.
    het_components_merged
        Rows of heterogeneous-job components merged into another component's job.
    array_tasks
        Jobs of the trace that are array tasks.
    jobs_out
        Jobs written to the trace.
    dropped
        Reason -> rows dropped (a merged heterogeneous job counts once).
    repaired
        Reason -> jobs kept with a value repaired (a job may count under several reasons).
    machine_procs
        The trace's machine size, processors.
    machine_procs_inferred
        Whether that size is the peak of concurrently allocated CPUs (not given).
    """

    rows: int = 0
    job_rows: int = 0
    steps_folded: int = 0
    het_components_merged: int = 0
    array_tasks: int = 0
    jobs_out: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    repaired: dict[str, int] = field(default_factory=dict)
    machine_procs: int = 0
    machine_procs_inferred: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values."""
        return {
            "rows": self.rows,
            "job_rows": self.job_rows,
            "steps_folded": self.steps_folded,
            "het_components_merged": self.het_components_merged,
            "array_tasks": self.array_tasks,
            "jobs_out": self.jobs_out,
            "dropped": dict(self.dropped),
            "repaired": dict(self.repaired),
            "machine_procs": self.machine_procs,
            "machine_procs_inferred": self.machine_procs_inferred,
        }


@dataclass(frozen=True, eq=False)
class SacctImport:
    """An imported accounting file.

    Attributes
    ----------
    trace
        The jobs as an SWF trace (job numbers 1, 2, ... in submit order; submit times in
        seconds from the header's ``UnixStartTime``, the first submission).
    side
        One row per job (:data:`SIDE_SCHEMA`): what SWF has no column for. ``eligible_s``
        counts from ``UnixStartTime`` like ``submit_s`` (null when unknown); with
        ``keep_names`` also ``user_name``, ``group_name``, ``account_name``.
    report
        The counts of :class:`SacctReport`.
    """

    trace: Trace
    side: pl.DataFrame
    report: SacctReport


# --------------------------------------------------------------------------------------------
# Pure parsing of single values
# --------------------------------------------------------------------------------------------


def parse_duration_s(text: str, *, minutes_only: bool = False) -> int | None:
    """Seconds of a Slurm duration (``Timelimit``, ``Elapsed``); ``None`` for no limit.

    Parameters
    ----------
    text
        ``D-HH:MM:SS``, ``D-HH:MM``, ``D-HH``, ``HH:MM:SS``, ``MM:SS`` or ``MM`` (Slurm's
        forms; a fraction of a second is dropped), or ``UNLIMITED`` / ``Partition_Limit``.
    minutes_only
        ``text`` is ``TimelimitRaw``: whole minutes.

    Returns
    -------
    int or None
        Seconds; ``None`` for an unlimited (or partition's) limit.

    Raises
    ------
    ValueError
        Not a duration.
    """
    text = text.strip()
    if not text or text.lower() in _UNLIMITED:
        return None
    if minutes_only:
        if not text.isdigit():
            raise ValueError("expected whole minutes")
        return int(text) * 60
    days, dash, rest = text.partition("-")
    if not dash:
        days, rest = "", text
    elif not days.isdigit():
        raise ValueError("expected a number of days before '-'")
    parts = rest.split(":")
    if not 1 <= len(parts) <= 3 or not all(parts):
        raise ValueError("expected [D-]HH:MM:SS")
    parts[-1] = parts[-1].split(".")[0] if len(parts) > 1 else parts[-1]
    if not all(part.isdigit() for part in parts):
        raise ValueError("expected [D-]HH:MM:SS")
    numbers = [int(part) for part in parts]
    if dash:  # D-HH, D-HH:MM, D-HH:MM:SS
        hours, minutes, seconds = [*numbers, 0, 0][:3]
    elif len(numbers) == 3:
        hours, minutes, seconds = numbers
    elif len(numbers) == 2:
        hours, (minutes, seconds) = 0, numbers
    else:
        hours, minutes, seconds = 0, numbers[0], 0
    return ((int(days or 0) * 24 + hours) * 60 + minutes) * 60 + seconds


def parse_memory_kb(text: str, *, default_unit: str) -> tuple[float, str] | None:
    """Kilobytes of a Slurm memory value, and its ``n``/``c`` suffix.

    Parameters
    ----------
    text
        ``4000M``, ``1.50G``, ``2000Mc``, ``4Gn``, ``10452K``, ``0``, or empty (unknown).
    default_unit
        Unit of a number without one: ``"M"`` for ``ReqMem``, ``""`` (bytes) for ``MaxRSS``.

    Returns
    -------
    tuple or None
        (kilobytes, ``"n"``, ``"c"`` or ``""``); ``None`` for an empty value.

    Raises
    ------
    ValueError
        Not a memory value.
    """
    text = text.strip()
    if not text:
        return None
    match = _MEMORY.match(text)
    if match is None:
        raise ValueError("expected a memory size such as 4000M, 1.50G, 2000Mc or 4Gn")
    unit = (match.group("unit") or default_unit).upper()
    kb = float(match.group("value")) * 1024.0 ** _UNIT_POWER[unit] / 1024.0
    return kb, match.group("per").lower()


def _parse_count(text: str) -> int | None:
    """A CPU or node count (``16``, ``2K``: Slurm shortens exact multiples of 1024); ``None``
    when empty."""
    text = text.strip()
    if not text:
        return None
    match = _COUNT.match(text)
    if match is None:
        raise ValueError("expected a whole count")
    value = float(match.group("value")) * 1024 ** _UNIT_POWER[match.group("unit").upper()]
    if value != math.floor(value):
        raise ValueError("expected a whole count")
    return int(value)


class _Clock:
    """Reads sacct's times as epoch seconds: local readings in ``zone``, offsets honoured."""

    def __init__(self, zone: zoneinfo.ZoneInfo) -> None:
        self.zone = zone
        self.dst_readings = 0
        self._cache: dict[str, tuple[int, bool]] = {}

    def epoch(self, text: str) -> int | None:
        text = text.strip()
        if text.lower() in _MISSING_TIMES:
            return None
        cached = self._cache.get(text)
        if cached is None:
            cached = self._cache[text] = self._read(text)
        self.dst_readings += cached[1]
        return cached[0]

    def _read(self, text: str) -> tuple[int, bool]:
        """Epoch seconds of a time, and whether a DST change makes its reading ambiguous."""
        dst = False
        if text.isdigit():  # SLURM_TIME_FORMAT=%s
            value = int(text)
        else:
            try:
                moment = datetime.datetime.fromisoformat(text)
            except ValueError:
                raise ValueError(
                    "expected a time YYYY-MM-DDTHH:MM:SS (sacct's default; unset "
                    "SLURM_TIME_FORMAT or set it to 'standard'), epoch seconds or Unknown"
                ) from None
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=self.zone)
                dst = moment.utcoffset() != moment.replace(fold=1).utcoffset()
            value = int(moment.timestamp())
        return value, dst


# --------------------------------------------------------------------------------------------
# Rows -> jobs
# --------------------------------------------------------------------------------------------


@dataclass
class _Job:
    """One job (or heterogeneous component) row with its folded steps."""

    line: int
    key: str
    base: int
    task: str | None
    het: int | None
    values: dict[str, str]
    max_rss_kb: float | None = None
    components: list[_Job] = field(default_factory=list)


def _read_lines(path: str | os.PathLike[str]) -> list[str]:
    """The lines of a (possibly gzipped) text file."""
    where = str(path)
    data = load_bytes(path, expected="sacct --parsable2 output", reader="read_sacct")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TraceFormatError(
            where, "expected UTF-8 text, found undecodable bytes", line=line
        ) from None
    return text.splitlines()


def _columns(lines: list[str], where: str) -> tuple[dict[str, int], int, int]:
    """Column index of each known field (lower-case name -> index), the number of fields and
    the index of the first data line."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise TraceFormatError(where, "expected sacct --parsable2 output, found an empty file")
    names = [name.strip() for name in lines[first].split("|")]
    lowered = [name.lower() for name in names]
    if "jobid" not in lowered:
        if len(names) == len(SACCT_FIELDS):  # --noheader with the documented fields
            lowered = [name.lower() for name in SACCT_FIELDS]
            return {name: i for i, name in enumerate(lowered)}, len(lowered), first
        raise TraceFormatError(
            where,
            "expected a header line naming the fields (JobID|User|...; run sacct without "
            f"--noheader), found {quote(lines[first])}",
            line=first + 1,
        )
    if lines[first].rstrip().endswith("|") and names[-1] == "":
        raise TraceFormatError(
            where, "found a '|' at the end of the header: use --parsable2, not --parsable",
            line=first + 1,
        )  # fmt: skip
    known = {name.lower(): name for name in (*SACCT_FIELDS, "TimelimitRaw", "JobIDRaw")}
    index = {name: i for i, name in enumerate(lowered) if name in known}
    missing = [name for name in REQUIRED_FIELDS if name.lower() not in index]
    if "alloccpus" not in index and "reqcpus" not in index:
        missing.append("AllocCPUS")
    if missing:
        raise TraceFormatError(
            where,
            f"the header lacks the field(s) {', '.join(missing)}; run sacct with "
            f"--format={','.join(SACCT_FIELDS)}",
            line=first + 1,
        )
    return index, len(names), first + 1


def _gather(
    lines: list[str], where: str, index: dict[str, int], width: int, first: int,
    report: SacctReport,
) -> list[_Job]:  # fmt: skip
    """Job rows with their steps folded in, heterogeneous components merged, repeats dropped."""
    jobs: dict[str, _Job] = {}
    dropped: Counter[str] = Counter()
    for number, line in enumerate(lines[first:], start=first + 1):
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) != width:
            raise TraceFormatError(
                where,
                f"expected {width} fields separated by '|' (as in the header), found "
                f"{len(cells)}: {quote(line)}",
                line=number,
            )
        values = {name: cells[i] for name, i in index.items()}
        report.rows += 1
        job_id = values["jobid"].strip()
        match = _JOB_ID.match(job_id)
        if match is None:
            raise TraceFormatError(
                where,
                f"expected a Slurm job id (123, 123_4, 123_[5-9], 123+0, 123.batch), found "
                f"{quote(job_id)}",
                line=number,
                field="JobID",
            )
        key = job_id.split(".")[0]
        if match.group("step") is not None:
            owner = jobs.get(key)
            if owner is None:
                dropped[DROP_STEP_WITHOUT_JOB] += 1
                continue
            report.steps_folded += 1
            rss = _value(values, "maxrss", number, where, "MaxRSS",
                         lambda text: parse_memory_kb(text, default_unit=""))  # fmt: skip
            if rss is not None:
                owner.max_rss_kb = max(owner.max_rss_kb or 0.0, rss[0])
            continue
        report.job_rows += 1
        if key in jobs:
            dropped[DROP_REPEATED] += 1
        het = match.group("het")
        jobs[key] = _Job(
            line=number, key=key, base=int(match.group("base")), task=match.group("task"),
            het=None if het is None else int(het), values=values,
        )  # fmt: skip
        own_rss = _value(values, "maxrss", number, where, "MaxRSS",
                         lambda text: parse_memory_kb(text, default_unit=""))  # fmt: skip
        if own_rss is not None and own_rss[0] > 0:
            jobs[key].max_rss_kb = own_rss[0]
    # heterogeneous components: merged into the first one (offset 0 when present)
    merged: dict[str, _Job] = {}
    for job in jobs.values():
        if job.het is None:
            merged[job.key] = job
            continue
        leader_key = f"{job.base}+het"
        leader = merged.get(leader_key)
        if leader is None:
            merged[leader_key] = job
            job.components = [job]
        else:
            leader.components.append(job)
            report.het_components_merged += 1
    for reason, count in dropped.items():
        report.dropped[reason] = report.dropped.get(reason, 0) + count
    return list(merged.values())


def _value(values: dict[str, str], name: str, line: int, where: str, label: str, parse: Any) -> Any:
    """``parse(values[name])``, ``None`` when the field is absent; an error names the line and
    field."""
    text = values.get(name)
    if text is None:
        return None
    try:
        return parse(text)
    except ValueError as exc:
        message = f"{exc}, found {quote(text)}"
        raise TraceFormatError(where, message, line=line, field=label) from None


@dataclass
class _Row:
    """A finished job, in epoch seconds and whole units, before numbering."""

    slurm_job_id: str
    base: int
    task_order: int
    submit: int
    eligible: int | None
    start: int
    end: int
    alloc_procs: int
    req_procs: int
    req_time_s: int
    req_mem_total_kb: float | None
    max_rss_kb: float | None
    state: str
    status: int
    exit_code: int | None
    exit_signal: int | None
    user: str
    group: str
    account: str
    partition: str
    qos: str
    het_components: int


def _finish(
    job: _Job, where: str, clock: _Clock, unlimited_time_s: int | None,
    drops: Counter[str], repairs: Counter[str],
) -> _Row | None:  # fmt: skip
    """The job's row, or ``None`` (and a drop counted) when it never ran or has not ended."""
    parts = job.components or [job]
    parsed = [_parse_component(part, where, clock) for part in parts]
    if any(p["state"] in _NOT_FINISHED or p["end"] is None for p in parsed):
        drops[DROP_NOT_FINISHED] += 1
        return None
    # a job cancelled while pending has a start time (its end) in some Slurm versions, and
    # AllocCPUS shows its request then: no allocated node tells that it never ran
    started = [p for p in parsed if p["start"] is not None and p["alloc_nodes"] != 0]
    if not started:
        cancelled = all(p["state"] == "CANCELLED" for p in parsed)
        drops[DROP_CANCELLED_UNSTARTED if cancelled else DROP_ENDED_UNSTARTED] += 1
        return None
    lead = parsed[0]
    submit = min(p["submit"] for p in parsed)
    start = min(p["start"] for p in started)
    end = max(p["end"] for p in started)
    if start < submit:
        repairs[REPAIR_START_BEFORE_SUBMIT] += 1
        start = submit
    if end < start:
        repairs[REPAIR_END_BEFORE_START] += 1
        end = start
    eligibles = [p["eligible"] for p in parsed if p["eligible"] is not None]
    limits = [p["limit"] for p in parsed]
    if any(limit is None for limit in limits):
        if unlimited_time_s is None:
            repairs[REPAIR_UNLIMITED] += 1
            req_time_s = SWF_UNKNOWN
        else:
            repairs[REPAIR_UNLIMITED_GIVEN] += 1
            req_time_s = unlimited_time_s
    else:
        req_time_s = max(limits)  # type: ignore[type-var]
    alloc = sum(p["alloc"] or 0 for p in started) or SWF_UNKNOWN
    req = sum(p["req"] or p["alloc"] or 0 for p in parsed) or SWF_UNKNOWN
    memory = [p["mem_total_kb"] for p in parsed]
    if any(value == 0 for value in memory):
        repairs[REPAIR_WHOLE_NODE_MEMORY] += 1
    req_mem = None if any(value in (None, 0) for value in memory) else sum(memory)
    rss = [part.max_rss_kb for part in parts if part.max_rss_kb is not None]
    states = [p["state"] for p in parsed]
    state = next((s for s in states if s != "COMPLETED"), "COMPLETED")
    task = job.task if job.task is not None and job.task.isdigit() else None
    return _Row(
        slurm_job_id=job.key if job.het is None else str(job.base),
        base=job.base,
        task_order=-1 if task is None else int(task),
        submit=submit,
        eligible=min(eligibles) if eligibles else None,
        start=start,
        end=end,
        alloc_procs=alloc,
        req_procs=req,
        req_time_s=req_time_s,
        req_mem_total_kb=req_mem,
        max_rss_kb=max(rss) if rss else None,
        state=state,
        status=SWF_STATUS[state],
        exit_code=lead["exit"][0],
        exit_signal=lead["exit"][1],
        user=lead["user"],
        group=lead["group"],
        account=lead["account"],
        partition=lead["partition"],
        qos=lead["qos"],
        het_components=len(parts),
    )


def _parse_component(job: _Job, where: str, clock: _Clock) -> dict[str, Any]:
    """The fields of one job row, parsed (errors name the line and field)."""
    values, line = job.values, job.line

    def get(name: str, label: str, parse: Any) -> Any:
        return _value(values, name, line, where, label, parse)

    state_text = values["state"].strip()
    state = state_text.split()[0].rstrip("+").upper() if state_text else ""
    if state not in SWF_STATUS and state not in _NOT_FINISHED:
        raise TraceFormatError(
            where,
            f"expected a Slurm job state (COMPLETED, FAILED, CANCELLED by 123, TIMEOUT, ...), "
            f"found {quote(state_text)}",
            line=line,
            field="State",
        )
    submit = get("submit", "Submit", clock.epoch)
    if submit is None and state not in _NOT_FINISHED:
        raise TraceFormatError(
            where, f"expected a submit time, found {quote(values['submit'])}",
            line=line, field="Submit",
        )  # fmt: skip
    if "timelimit" in values:
        limit = get("timelimit", "Timelimit", parse_duration_s)
    elif "timelimitraw" in values:
        limit = get("timelimitraw", "TimelimitRaw",
                    lambda text: parse_duration_s(text, minutes_only=True))  # fmt: skip
    else:
        limit = None
    alloc = get("alloccpus", "AllocCPUS", _parse_count)
    req = get("reqcpus", "ReqCPUS", _parse_count)
    procs = req or alloc
    alloc_nodes = get("allocnodes", "AllocNodes", _parse_count)
    nodes = alloc_nodes or get("reqnodes", "ReqNodes", _parse_count)
    memory = get("reqmem", "ReqMem", lambda text: parse_memory_kb(text, default_unit="M"))
    mem_total = None
    if memory is not None:
        kb, per = memory
        if per == "c":
            mem_total = kb * procs if procs else None
        elif per == "n":
            mem_total = kb * nodes if nodes else None
        else:
            mem_total = kb
        if kb == 0:
            mem_total = 0.0
    exit_code = get("exitcode", "ExitCode", _parse_exit) or (None, None)
    return {
        "state": state,
        "submit": submit,
        "eligible": get("eligible", "Eligible", clock.epoch),
        "start": get("start", "Start", clock.epoch),
        "end": get("end", "End", clock.epoch),
        "limit": limit,
        "alloc": alloc,
        "alloc_nodes": alloc_nodes,
        "req": req,
        "mem_total_kb": mem_total,
        "exit": exit_code,
        "user": values.get("user", "").strip(),
        "group": values.get("group", "").strip(),
        "account": values.get("account", "").strip(),
        "partition": values.get("partition", "").strip(),
        "qos": values.get("qos", "").strip(),
    }


def _parse_exit(text: str) -> tuple[int, int] | None:
    text = text.strip()
    if not text:
        return None
    match = _EXIT.match(text)
    if match is None:
        raise ValueError("expected an exit code CODE:SIGNAL such as 0:0")
    return int(match.group(1)), int(match.group(2))


# --------------------------------------------------------------------------------------------
# The import
# --------------------------------------------------------------------------------------------


def read_sacct(
    path: str | os.PathLike[str],
    *,
    timezone: str = "UTC",
    machine_procs: int | None = None,
    keep_names: bool = False,
    unlimited_time_s: int | None = None,
    computer: str | None = None,
) -> SacctImport:
    """Read ``sacct --parsable2`` output into an SWF trace, a side table and a report.

    Parameters
    ----------
    path
        The sacct output (plain or gzipped), with its header line, run with the fields of
        :data:`SACCT_FIELDS` (:data:`SACCT_COMMAND`); the fields may come in any order, and
        the optional ones (all but :data:`REQUIRED_FIELDS` and one of AllocCPUS/ReqCPUS) may
        be left out (their values are then unknown).
    timezone
        IANA zone of the clock sacct printed its times in (the ``TZ`` sacct ran with; default
        UTC); written as the header's ``TimeZoneString``. Times with an offset or in epoch
        seconds do not depend on it.
    machine_procs
        The cluster's size, processors (``MaxProcs``). Default: the peak of concurrently
        allocated CPUs in the accounting (a lower bound of the real size; the report says so).
    keep_names
        Keep user, group and account names in the side table (``user_name``, ``group_name``,
        ``account_name``) beside their numbers; default: numbers only (anonymised).
    unlimited_time_s
        Requested time (seconds) of a job without a time limit (``UNLIMITED``), e.g. the
        partition's maximum; default ``None``: unknown (-1), which the strong filter removes.
    computer
        The ``Computer`` header line (e.g. the cluster's name); default none.

    Returns
    -------
    SacctImport
        ``trace`` (jobs numbered 1, 2, ... by submit time, then Slurm job id), ``side`` (one
        row per job) and ``report`` (counts by reason).

    Raises
    ------
    TraceFormatError
        The file is missing or unreadable, has no header or lacks a required field, a line
        has another number of fields than the header, or a value cannot be read (the message
        names the file, the 1-based line and the field).
    NoJobsError
        No finished job is left (the message gives the drops by reason).
    ConfigurationError
        ``timezone`` is not an IANA zone, ``machine_procs`` or ``unlimited_time_s`` not a
        positive integer.

    Notes
    -----
    SWF fields: 1 job number; 2 submit (s from the first submission); 3 wait (start - submit);
    4 run (end - start); 5 allocated CPUs; 6 average CPU time: -1; 7 used memory: the largest
    ``MaxRSS`` of the job's steps (a task's peak), KB; 8 requested CPUs; 9 time limit, s;
    10 requested memory per requested CPU, KB; 11 status (:data:`SWF_STATUS`); 12 user,
    13 group: numbers by first appearance; 14 executable: -1; 15 queue: the QOS's number;
    16 partition: the partition's number (both listed in ``Queue:``/``Partition:`` header
    lines); 17, 18: -1.
    """
    keep_names = flag(keep_names, "keep_names")
    zone = _zone(timezone)
    if machine_procs is not None:
        machine_procs = _positive(machine_procs, "machine_procs")
    if unlimited_time_s is not None:
        unlimited_time_s = _positive(unlimited_time_s, "unlimited_time_s")
    where = str(path)
    lines = _read_lines(path)
    index, width, first = _columns(lines, where)
    report = SacctReport()
    jobs = _gather(lines, where, index, width, first, report)
    clock = _Clock(zone)
    drops: Counter[str] = Counter()
    repairs: Counter[str] = Counter()
    rows = [row for job in jobs if (row := _finish(job, where, clock, unlimited_time_s,
                                                   drops, repairs)) is not None]  # fmt: skip
    for reason, count in drops.items():
        report.dropped[reason] = report.dropped.get(reason, 0) + count
    if clock.dst_readings:
        repairs[REPAIR_DST] += clock.dst_readings
    report.repaired = dict(repairs)
    if not rows:
        found = ", ".join(f"{reason}: {count}" for reason, count in report.dropped.items())
        raise NoJobsError(
            f"{where}: no finished job to import ({report.rows} rows; dropped: {found or 'none'})",
            report,
        )
    rows.sort(key=lambda row: (row.submit, row.base, row.task_order, row.slurm_job_id))
    jobs_table, side = _tables(rows, keep_names)
    procs, inferred = _machine_size(jobs_table, machine_procs)
    report.machine_procs, report.machine_procs_inferred = procs, inferred
    report.jobs_out = len(rows)
    report.array_tasks = sum(row.task_order >= 0 for row in rows)
    header = _header(rows, jobs_table, side, zone, procs, inferred, computer, where)
    trace = Trace(jobs=jobs_table, header=header, machine_procs=procs, path=None)
    return SacctImport(trace=trace, side=side, report=report)


def _zone(name: str) -> zoneinfo.ZoneInfo:
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"timezone must be an IANA zone name, got {quote(name)}")
    try:
        return zoneinfo.ZoneInfo(name.strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ConfigurationError(
            f"unknown time zone {quote(name)}; expected an IANA name such as UTC or Europe/Oslo"
        ) from None


def _positive(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ConfigurationError(f"{name} must be a positive integer, got {quote(value)}")
    return int(value)


def _numbering(names: Sequence[str]) -> list[int]:
    """1, 2, ... in order of first appearance; an empty name is unknown (-1)."""
    numbers: dict[str, int] = {}
    out = []
    for name in names:
        if not name:
            out.append(SWF_UNKNOWN)
            continue
        out.append(numbers.setdefault(name, len(numbers) + 1))
    return out


def _tables(rows: list[_Row], keep_names: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The SWF jobs table and the side table of rows sorted by submit time."""
    origin = rows[0].submit
    procs = [row.req_procs if row.req_procs > 0 else row.alloc_procs for row in rows]
    req_mem = [
        SWF_UNKNOWN if row.req_mem_total_kb is None or p <= 0 else row.req_mem_total_kb / p
        for row, p in zip(rows, procs, strict=True)
    ]
    columns = {
        "job_id": list(range(1, len(rows) + 1)),
        "submit_s": [row.submit - origin for row in rows],
        "wait_s": [row.start - row.submit for row in rows],
        "run_s": [row.end - row.start for row in rows],
        "alloc_procs": [row.alloc_procs for row in rows],
        "avg_cpu_s": [float(SWF_UNKNOWN)] * len(rows),
        "used_mem_kb": [SWF_UNKNOWN if row.max_rss_kb is None else row.max_rss_kb for row in rows],
        "req_procs": [row.req_procs for row in rows],
        "req_time_s": [row.req_time_s for row in rows],
        "req_mem_kb": req_mem,
        "status": [row.status for row in rows],
        "user_id": _numbering([row.user for row in rows]),
        "group_id": _numbering([row.group for row in rows]),
        "executable_id": [SWF_UNKNOWN] * len(rows),
        "queue_id": _numbering([row.qos for row in rows]),
        "partition_id": _numbering([row.partition for row in rows]),
        "preceding_job_id": [SWF_UNKNOWN] * len(rows),
        "think_time_s": [SWF_UNKNOWN] * len(rows),
    }
    jobs = pl.DataFrame(columns, schema=SWF_SCHEMA)
    side = pl.DataFrame(
        {
            "job_id": columns["job_id"],
            "slurm_job_id": [row.slurm_job_id for row in rows],
            "account_id": _numbering([row.account for row in rows]),
            "qos": [row.qos or None for row in rows],
            "partition": [row.partition or None for row in rows],
            "eligible_s": [
                None if row.eligible is None else row.eligible - origin for row in rows
            ],
            "state": [row.state for row in rows],
            "exit_code": [row.exit_code for row in rows],
            "exit_signal": [row.exit_signal for row in rows],
            "max_rss_kb": [row.max_rss_kb for row in rows],
            "het_components": [row.het_components for row in rows],
        },
        schema=SIDE_SCHEMA,
    )
    if keep_names:
        side = side.with_columns(
            pl.Series("user_name", [row.user or None for row in rows], pl.String),
            pl.Series("group_name", [row.group or None for row in rows], pl.String),
            pl.Series("account_name", [row.account or None for row in rows], pl.String),
        )
    return jobs, side


def _machine_size(jobs: pl.DataFrame, given: int | None) -> tuple[int, bool]:
    """The given size, or the peak of concurrently allocated CPUs (and whether inferred)."""
    if given is not None:
        return given, False
    procs = jobs.select(
        pl.when(pl.col("alloc_procs") > 0).then("alloc_procs").otherwise("req_procs")
    ).to_series().to_numpy()
    start = (jobs["submit_s"] + jobs["wait_s"]).to_numpy()
    end = start + jobs["run_s"].to_numpy()
    times = np.concatenate([start, end])
    # ends before starts at the same second: a job ending at t frees its CPUs for one at t
    kinds = np.concatenate([np.ones_like(start), np.zeros_like(end)])
    deltas = np.concatenate([np.maximum(procs, 0), -np.maximum(procs, 0)])
    order = np.lexsort((kinds, times))
    peak = int(np.cumsum(deltas[order]).max(initial=0))
    return max(peak, int(procs.max(initial=0)), 1), True


def _header(
    rows: list[_Row], jobs: pl.DataFrame, side: pl.DataFrame, zone: zoneinfo.ZoneInfo,
    procs: int, inferred: bool, computer: str | None, where: str,
) -> SwfHeader:  # fmt: skip
    """The SWF 2.2 header of the imported trace."""
    origin = rows[0].submit
    last_end = max(row.end for row in rows)

    def local(epoch: int) -> str:
        moment = datetime.datetime.fromtimestamp(epoch, tz=zone)
        return moment.strftime("%a %b %d %H:%M:%S %Z %Y")

    lines = ["; Version: 2.2"]
    if computer:
        lines.append(f"; Computer: {' '.join(str(computer).split())}")
    lines += [
        f"; Conversion: schedlab {__version__} import sacct from {Path(where).name}",
        f"; UnixStartTime: {origin}",
        f"; TimeZoneString: {zone.key}",
        f"; StartTime: {local(origin)}",
        f"; EndTime: {local(last_end)}",
        f"; MaxJobs: {len(rows)}",
        f"; MaxRecords: {len(rows)}",
        f"; MaxProcs: {procs}",
    ]
    if inferred:
        lines.append(
            "; Note: MaxProcs is the peak of concurrently allocated CPUs in the accounting, "
            "a lower bound of the machine size"
        )
    lines.append(
        "; Note: users, groups and accounts are numbered by first appearance; queue numbers "
        "are QOS, partition numbers Slurm partitions; used memory is the largest MaxRSS of a "
        "job's steps"
    )
    for key, column, source in (("Queue", "queue_id", "qos"),
                                ("Partition", "partition_id", "partition")):  # fmt: skip
        pairs = (
            pl.DataFrame({"number": jobs[column], "name": side[source]})
            .filter(pl.col("number") > 0)
            .unique("number", keep="first", maintain_order=True)
            .rows()
        )
        for number, name in pairs:
            lines.append(f"; {key}: {number} {' '.join(str(name).split())}")
    return SwfHeader.from_lines(lines)


def default_side_path(out: str | os.PathLike[str]) -> Path:
    """The side table's default path beside an SWF output: ``trace.swf.gz`` ->
    ``trace.side.parquet``."""
    out = Path(out)
    name = out.name
    for suffix in (".swf.gz", ".swf", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return out.with_name(f"{name}.side.parquet")


def side_table_path(side: str | os.PathLike[str] | None, out: str | os.PathLike[str]) -> Path:
    """The side table's path: ``side``, or :func:`default_side_path` of ``out``, checked.

    Raises
    ------
    ConfigurationError
        It ends neither with ``.parquet`` nor ``.csv``, or names the same file as ``out``.
    """
    path = default_side_path(out) if side is None else Path(side)
    if path.suffix.lower() not in (".parquet", ".csv"):
        raise ConfigurationError(
            f"the side table must end with .parquet or .csv, got {quote(str(path))}"
        )
    if path.resolve() == Path(out).resolve():
        raise ConfigurationError(f"the side table and the trace are one file: {path}")
    return path


def read_side_table(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Read a side table written by :func:`write_side_table` (parquet, or CSV when ``path``
    ends with ``.csv``), its columns checked against :data:`SIDE_SCHEMA`.

    Raises
    ------
    ConfigurationError
        The file is missing or unreadable, or a column of :data:`SIDE_SCHEMA` is missing or of
        another type (naming the file and the column).
    """
    where = quote(str(path))
    try:
        if str(path).lower().endswith(".csv"):
            side = pl.read_csv(path, schema_overrides=SIDE_SCHEMA)
        else:
            side = pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as error:
        raise ConfigurationError(f"side table {where}: cannot be read: {error}") from None
    for column, dtype in SIDE_SCHEMA.items():
        if column not in side.columns:
            raise ConfigurationError(f"side table {where}: no column {column!r}")
        if side.schema[column] != dtype:
            raise ConfigurationError(
                f"side table {where}: column {column!r} is {side.schema[column]}, not {dtype}"
            )
    return side


def write_side_table(side: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write a side table atomically: CSV when ``path`` ends with ``.csv``, else parquet."""
    with atomic_path(path) as tmp:
        if str(path).lower().endswith(".csv"):
            side.write_csv(tmp)
        else:
            side.write_parquet(tmp)


def import_sacct(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    side: str | os.PathLike[str] | None = None,
    **options: Any,
) -> SacctImport:
    """Read sacct output (:func:`read_sacct`) and write the SWF trace and its side table.

    Parameters
    ----------
    path
        The sacct ``--parsable2`` output.
    out
        The SWF file (gzipped when the name ends with ``.gz``), written atomically.
    side
        The side table: ``.parquet`` or ``.csv``; default :func:`default_side_path` of
        ``out`` (``trace.swf.gz`` -> ``trace.side.parquet``). Written atomically.
    **options
        Passed to :func:`read_sacct` (``timezone``, ``machine_procs``, ``keep_names``,
        ``unlimited_time_s``, ``computer``).

    Returns
    -------
    SacctImport

    Raises
    ------
    ConfigurationError
        ``side`` ends neither with ``.parquet`` nor ``.csv``, or names the same file as ``out``
        (checked before anything is read or written).
    """
    side_path = side_table_path(side, out)
    imported = read_sacct(path, **options)
    write_swf(imported.trace, out)
    write_side_table(imported.side, side_path)
    return imported
