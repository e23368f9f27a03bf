"""Read and write workload logs in the Standard Workload Format (SWF).

An SWF file holds header/comment lines that start with ``;`` (``; MaxProcs: 100``) and one line
per job with 18 whitespace-separated numbers (see :data:`scheduler.core.constants.SWF_FIELDS`).
:func:`read_swf` turns a file (plain or gzipped) into a :class:`Trace`: a polars table of the
jobs, the parsed header and the machine size in processors. :func:`write_swf` writes a trace back
so that reading it again gives the same table and header (lossless round trip).

Reading is vectorised. A fast path normalises the whitespace of the whole file at once and hands
it to polars' CSV parser; when that path meets anything unusual (a parse error, a missing field,
a non-finite number) the file is read again by a slower, line-aware path that finds the first bad
line and names its file, line number and field in a :class:`~scheduler.core.errors.TraceFormatError`
(or, in lenient mode, skips and counts the bad lines). Both paths accept the same files.
"""

from __future__ import annotations

import dataclasses
import datetime
import gzip
import io
import numbers
import os
import re
import warnings
import zlib
import zoneinfo
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from scheduler.core.atomic import atomic_write_bytes
from scheduler.core.constants import MAX_TIME_S, SWF_COLUMNS, SWF_SCHEMA
from scheduler.core.errors import ConfigurationError, TraceFormatError, quote
from scheduler.core.flags import flag

__all__ = [
    "CALENDAR_FIRST_S",
    "CALENDAR_LAST_S",
    "DEFAULT_MAX_BYTES",
    "MISSING_MACHINE_SIZE",
    "SWF_FIELD_COUNT",
    "SwfHeader",
    "Trace",
    "check_time_zone",
    "check_unique_job_ids",
    "check_unix_start_time",
    "is_iana_zone",
    "load_bytes",
    "read_swf",
    "repeated_job_number",
    "used_procs",
    "with_job_counts",
    "write_swf",
]

#: Number of whitespace-separated fields of an SWF job line.
SWF_FIELD_COUNT = len(SWF_COLUMNS)


def used_procs() -> pl.Expr:
    """The processors a job uses, as a polars expression over an SWF job table: its allocated
    processors (field 5, ``alloc_procs``) when known (> 0), else its requested ones (field 8,
    ``req_procs``). The simulator, the kernel input arrays and the trace summary all count a
    job's processors this way."""
    return pl.when(pl.col("alloc_procs") > 0).then(pl.col("alloc_procs")).otherwise("req_procs")


#: Largest (decompressed) content :func:`read_swf` accepts by default: 4 GiB, some 40 times the
#: largest log of the Parallel Workloads Archive; a gzip bomb stops there, not at the memory's end.
DEFAULT_MAX_BYTES = 4 * 2**30
#: Decompressed bytes read at a time when checking the cap.
_CHUNK_BYTES = 2**24

_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
#: Bytes that separate fields inside a line (ASCII whitespace except the newline).
_INLINE_WHITESPACE = b" \t\r\x0b\x0c"
_TO_SPACE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")
_SPACE = ord(" ")
_NEWLINE = ord("\n")

#: ``; Key: value`` — SWF keys are capitalised words; ``://`` after the colon is a URL, not a key.
_HEADER_PAIR = re.compile(r"^[ \t]*;[ \t]*([A-Z][A-Za-z0-9_]*)[ \t]*:(?!//)(.*)$")
#: A leading integer, optionally followed by a comment: ``338 (batch partition; 512 total)``.
_LEADING_INTEGER = re.compile(r"^([+-]?\d+)(?:\s+\S.*)?$")
_INT_HEADER_KEYS = {
    "MaxProcs": "max_procs",
    "MaxNodes": "max_nodes",
    "UnixStartTime": "unix_start_time",
}
_STR_HEADER_KEYS = {
    "TimeZoneString": "time_zone_string",
    "Version": "version",
    "Computer": "computer",
}

#: The error of a file without machine size, before the remedy the caller can offer (read_swf:
#: its arguments; the CLI: its options; the workflow: the config key).
MISSING_MACHINE_SIZE = (
    "expected a positive MaxProcs (or MaxNodes) header giving the machine size, found none"
)

#: Reasons a job line is rejected (keys of :attr:`Trace.skipped` in lenient mode).
REASON_UNDECODABLE = "undecodable bytes"
REASON_FIELD_COUNT = "wrong field count"
REASON_NON_NUMERIC = "non-numeric value"
REASON_NON_INTEGRAL = "non-integral value"
REASON_OUT_OF_RANGE = "integer out of range"
REASON_TIME_RANGE = "time beyond ±2**52 s"
_CODE_REASONS = {1: REASON_NON_NUMERIC, 2: REASON_NON_INTEGRAL, 3: REASON_OUT_OF_RANGE,
                 4: REASON_TIME_RANGE}  # fmt: skip
_INT64_LIMIT = 2.0**63
#: The fields the simulator reads as times (s): refused beyond ±MAX_TIME_S (2**52 s), the
#: range in which the engines' float64 arithmetic is exact to the second
#: (:data:`scheduler.core.constants.MAX_TIME_S`).
_TIME_FIELDS = ("submit_s", "run_s", "req_time_s")
_REST = "_rest"


# --------------------------------------------------------------------------------------------
# Header
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SwfHeader:
    """The header (``;`` comment lines) of an SWF file.

    Attributes
    ----------
    max_procs
        ``MaxProcs``: processors of the machine (leading integer of the value), or ``None``.
    max_nodes
        ``MaxNodes``: nodes of the machine, or ``None``.
    unix_start_time
        ``UnixStartTime``: the log's time origin, seconds since the Unix epoch, or ``None``.
    time_zone_string
        ``TimeZoneString``, e.g. ``"Europe/Stockholm"``, or ``None``.
    version
        ``Version`` of the SWF, e.g. ``"2.2"``, or ``None``.
    computer
        ``Computer``, e.g. ``"IBM SP2"``, or ``None``.
    fields
        Every ``; Key: value`` pair in file order, key and value stripped. When a key repeats
        (``Queue``, ``Note``), the first value is kept here; :meth:`values` gives all of them.
    lines
        Every header/comment line verbatim (without its line terminator), in file order.
    """

    max_procs: int | None = None
    max_nodes: int | None = None
    unix_start_time: int | None = None
    time_zone_string: str | None = None
    version: str | None = None
    computer: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    lines: tuple[str, ...] = ()

    @classmethod
    def from_lines(
        cls,
        lines: Iterable[str],
        path: str | os.PathLike[str] | None = None,
        *,
        line_numbers: Sequence[int] | None = None,
    ) -> SwfHeader:
        """Parse header lines.

        Parameters
        ----------
        lines
            Header lines, each starting with ``;`` (after optional whitespace), without line
            terminators.
        path
            The file they come from, for error messages.
        line_numbers
            1-based line number of each line in its file; defaults to 1, 2, 3, ...

        Returns
        -------
        SwfHeader

        Raises
        ------
        TraceFormatError
            A line does not start with ``;``, or ``MaxProcs``, ``MaxNodes`` or
            ``UnixStartTime`` does not hold an integer, or ``UnixStartTime`` is no instant of
            the years 1-9999 (:func:`check_unix_start_time`), or ``TimeZoneString`` is not an
            IANA time zone (:func:`check_time_zone`); the message names the file, line and key.
        """
        where = "<header>" if path is None else str(path)
        lines = tuple(lines)
        numbers_ = tuple(line_numbers) if line_numbers is not None else range(1, len(lines) + 1)
        pairs: dict[str, str] = {}
        first_line: dict[str, int] = {}
        for text, number in zip(lines, numbers_, strict=True):
            if not text.lstrip(" \t\r\x0b\x0c").startswith(";"):
                raise TraceFormatError(
                    where,
                    f"expected a header line starting with ';', found {quote(text)}",
                    line=number,
                )
            match = _HEADER_PAIR.match(text)
            if match is not None and match.group(1) not in pairs:
                pairs[match.group(1)] = match.group(2).strip()
                first_line[match.group(1)] = number
        typed: dict[str, int | str | None] = {}
        for key, attribute in _INT_HEADER_KEYS.items():
            if key in pairs:
                typed[attribute] = _header_integer(pairs[key], where, first_line[key], key)
        for key, attribute in _STR_HEADER_KEYS.items():
            typed[attribute] = pairs.get(key) or None
        # the calendar, checked once here: every reader of the log refuses a bad one alike
        start, zone = typed.get("unix_start_time"), typed.get("time_zone_string")
        if isinstance(start, int):
            check_unix_start_time(start, where, line=first_line["UnixStartTime"])
        if isinstance(zone, str):
            check_time_zone(zone, where, line=first_line["TimeZoneString"])
        return cls(fields=pairs, lines=lines, **typed)  # type: ignore[arg-type]

    def values(self, key: str) -> tuple[str, ...]:
        """All values of a header key, in file order (``Queue`` and ``Note`` repeat).

        Parameters
        ----------
        key
            Header key, e.g. ``"Queue"``.

        Returns
        -------
        tuple of str
            The stripped values; empty when the key is absent.
        """
        found = []
        for text in self.lines:
            match = _HEADER_PAIR.match(text)
            if match is not None and match.group(1) == key:
                found.append(match.group(2).strip())
        return tuple(found)


#: The earliest ``UnixStartTime`` accepted (Unix seconds): 0001-01-02 00:00 UTC. With
#: :data:`CALENDAR_LAST_S`, a day inside the calendar :mod:`datetime` can show (years 1-9999), so
#: that the origin is a date in every time zone (UTC offsets are under a day).
CALENDAR_FIRST_S = int(datetime.datetime(1, 1, 2, tzinfo=datetime.UTC).timestamp())
#: The latest ``UnixStartTime`` (and origin plus last submission) accepted: 9999-12-30 23:59:59 UTC.
CALENDAR_LAST_S = int(datetime.datetime(9999, 12, 31, tzinfo=datetime.UTC).timestamp()) - 1


def check_unix_start_time(
    value: int,
    path: str | os.PathLike[str],
    *,
    line: int | None = None,
    last_submit_s: float = 0.0,
) -> int:
    """``value`` (a ``UnixStartTime``, Unix seconds) if it and ``value + last_submit_s`` lie in
    ``[CALENDAR_FIRST_S, CALENDAR_LAST_S]``, else a :class:`TraceFormatError` naming ``path``,
    ``line`` and the key.

    A time origin outside the years 1-9999 cannot be shown as a date (``datetime`` raises
    "year 10000 is out of range"), so a log whose calendar no step can use is refused where it
    is read, not by whichever step first needs a date.
    """
    bounds = (f"between {CALENDAR_FIRST_S} (0001-01-02 00:00 UTC) and {CALENDAR_LAST_S} "
              "(9999-12-30 23:59:59 UTC)")  # fmt: skip
    remedy = "fix the header or remove the line to count trace time from 1970-01-01 00:00 UTC"
    if not CALENDAR_FIRST_S <= value <= CALENDAR_LAST_S:
        raise TraceFormatError(
            path,
            f"{quote(str(value))} s is not an instant of the years 1-9999: a time origin must "
            f"lie {bounds}; {remedy}",
            line=line,
            field="UnixStartTime",
        )
    if value + last_submit_s > CALENDAR_LAST_S:
        raise TraceFormatError(
            path,
            f"{value} s plus the last submission ({last_submit_s:,.0f} s) leaves the years "
            f"1-9999 (a trace instant must lie {bounds}); {remedy}",
            line=line,
            field="UnixStartTime",
        )
    return value


def is_iana_zone(name: object) -> bool:
    """Whether ``name`` is a key of the IANA time-zone database (``Europe/Stockholm``; not
    ``""``, ``"+01:00"``, ``"utc"`` or a path), known to both zoneinfo and polars."""
    if not isinstance(name, str) or not name or name != name.strip() or name.startswith("/"):
        return False
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    try:  # polars (chrono-tz) converts the times: its database must know the zone too
        pl.Series([0]).cast(pl.Datetime("us", "UTC")).dt.convert_time_zone(name)
    except pl.exceptions.PolarsError:
        return False
    return True


def check_time_zone(value: str, path: str | os.PathLike[str], *, line: int | None = None) -> str:
    """``value`` (a ``TimeZoneString``) if it is an IANA time zone (:func:`is_iana_zone`), else
    a :class:`TraceFormatError` naming ``path``, ``line`` and the key."""
    if not is_iana_zone(value):
        raise TraceFormatError(
            path,
            f"{quote(value)} is not an IANA time zone (e.g. Europe/Stockholm, US/Pacific); fix "
            "the header or remove it to use UTC",
            line=line,
            field="TimeZoneString",
        )
    return value


def _header_integer(value: str, path: str, line: int, key: str) -> int:
    """The leading integer of a header value (``"338 (batch partition)"`` -> 338)."""
    match = _LEADING_INTEGER.match(value)
    if match is None:
        raise TraceFormatError(
            path, f"expected an integer header value, found {quote(value)}", line=line, field=key
        )
    return int(match.group(1))


# --------------------------------------------------------------------------------------------
# Trace
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Trace:
    """A workload: the jobs of an SWF file, its header and the machine size.

    Attributes
    ----------
    jobs
        One row per job, in file order, with exactly the 18 columns of
        :data:`scheduler.core.constants.SWF_FIELDS` and their dtypes (times in seconds, processors,
        memory in kilobytes; -1 means unknown).
    header
        The parsed header.
    machine_procs
        Size of the machine, processors (resolved by :func:`read_swf`).
    path
        The file the trace was read from, or ``None``.
    skipped
        Lenient reading only: reason -> number of job lines skipped; empty when none.
    """

    jobs: pl.DataFrame
    header: SwfHeader
    machine_procs: int
    path: str | None = None
    skipped: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Check the jobs table's columns and dtypes and the machine size."""
        _check_machine_procs(self.machine_procs)
        if not isinstance(self.jobs, pl.DataFrame) or self.jobs.schema != pl.Schema(SWF_SCHEMA):
            raise ConfigurationError(
                "Trace.jobs must have exactly the 18 SWF columns with the dtypes of "
                "scheduler.core.constants.SWF_SCHEMA; use Trace.with_jobs to convert a table"
            )

    def with_jobs(self, jobs: pl.DataFrame) -> Trace:
        """Return a copy of this trace with other jobs (same header, machine size and path).

        Parameters
        ----------
        jobs
            A table with (at least) the 18 SWF columns; extra columns are dropped and numeric
            columns are cast to the SWF dtypes.

        Returns
        -------
        Trace

        Raises
        ------
        ConfigurationError
            A column is missing, not numeric, holds nulls, non-finite or (integer columns)
            non-integral values.
        """
        return dataclasses.replace(self, jobs=_coerce_jobs(jobs))


def _check_machine_procs(value: object) -> int:
    """Validate a machine size (a positive integer, processors)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ConfigurationError(
            f"machine_procs must be a positive integer (processors), got {quote(value)}"
        )
    return int(value)


def _coerce_jobs(jobs: object) -> pl.DataFrame:
    """Select the 18 SWF columns of ``jobs`` and cast them to the SWF dtypes, or raise."""
    if not isinstance(jobs, pl.DataFrame):
        raise ConfigurationError(f"expected a polars DataFrame of jobs, got {type(jobs).__name__}")
    missing = [name for name in SWF_COLUMNS if name not in jobs.columns]
    if missing:
        raise ConfigurationError(
            f"the jobs table lacks SWF column(s) {missing}; "
            "expected the 18 columns of scheduler.core.constants.SWF_COLUMNS"
        )
    return jobs.select(_coerce_column(jobs, name, dtype) for name, dtype in SWF_SCHEMA.items())


def _coerce_column(jobs: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Series:
    """One SWF column of ``jobs`` with its SWF dtype, after checking it can be written."""
    column = jobs.get_column(name)
    source = column.dtype
    if not source.is_numeric():
        raise ConfigurationError(f"column {name} must be numeric, found dtype {source}")
    if column.null_count():
        raise ConfigurationError(f"column {name} holds {column.null_count()} null value(s)")
    if source.is_float() and not column.is_finite().all():
        raise ConfigurationError(f"column {name} holds non-finite values (NaN or infinity)")
    if dtype.is_integer() and source.is_float():
        whole = (column == column.floor()) & (column.abs() < _INT64_LIMIT)
        if not whole.all():
            raise ConfigurationError(f"integer column {name} holds non-integral values")
    try:
        return column.cast(dtype)
    except pl.exceptions.PolarsError as exc:
        raise ConfigurationError(f"column {name} cannot be cast to {dtype}: {exc}") from exc


def check_unique_job_ids(
    jobs: pl.DataFrame, path: str | None, *, line_numbers: pl.Series | None = None
) -> None:
    """Refuse a jobs table in which a job number (``job_id``) appears more than once.

    Job numbers must be unique: the simulator orders jobs of equal submit time (and equal
    estimated ends) by job number, so a duplicate silently changes results. Nothing guesses
    which copy is meant; the error names the first repeated number and where it occurs.

    Parameters
    ----------
    jobs
        The jobs (an ``job_id`` column).
    path
        The file they were read from (``None``: the message says ``<jobs table>``).
    line_numbers
        1-based line number of each row in its file; without them the rows are named (1-based).

    Raises
    ------
    TraceFormatError
        ``field="job_id"``; ``line`` is the line of the first repeat when ``line_numbers`` are
        given. The message names the number, every occurrence (up to
        :data:`_LISTED_OCCURRENCES`) and how many numbers repeat.
    """
    ids = jobs.get_column("job_id")
    if line_numbers is None:
        found = repeated_job_number(ids, pl.Series(range(1, jobs.height + 1)), "on rows")
    else:
        found = repeated_job_number(ids, line_numbers, "on lines")
    if found is None:
        return
    message, first_repeat = found
    raise TraceFormatError(
        "<jobs table>" if path is None else path,
        message,
        line=None if line_numbers is None else first_repeat,
        field="job_id",
    )


def repeated_job_number(
    ids: pl.Series | np.ndarray, positions: pl.Series | np.ndarray, what: str
) -> tuple[str, int] | None:
    """What to say of the first job number that repeats in ``ids``, or None when all differ.

    The one wording of a repeated job number, for a file (:func:`check_unique_job_ids`, with
    line numbers) and for the simulator's inputs (``scheduler.sim._jobs``, with indices).

    Parameters
    ----------
    ids
        The job numbers, one per job.
    positions
        Where each job is (a line number, a row, an index), one per job.
    what
        What ``positions`` are, plural, after a preposition (``"on lines"``, ``"on rows"``,
        ``"at indices"``).

    Returns
    -------
    tuple or None
        The message (the number, every place it occurs up to :data:`_LISTED_OCCURRENCES`, how
        many numbers repeat, why they must not) and the position of its first repeat.
    """
    ids = pl.Series("job_id", ids)
    repeated = ids.is_duplicated()
    if not repeated.any():
        return None
    first = ids.is_first_distinct()
    table = pl.DataFrame({"job_id": ids, "at": pl.Series(positions), "first": first})
    table = table.filter(repeated)
    first_repeat = table.filter(~pl.col("first")).row(0, named=True)
    number = first_repeat["job_id"]
    if isinstance(number, float) and number.is_integer():
        number = int(number)
    where = table.filter(pl.col("job_id") == first_repeat["job_id"]).get_column("at").to_list()
    listed = [str(at) for at in where[:_LISTED_OCCURRENCES]]
    if len(where) > _LISTED_OCCURRENCES:
        places = ", ".join(listed) + ", ..."
    else:
        places = ", ".join(listed[:-1]) + f" and {listed[-1]}"
    message = f"job number {number} appears {len(where)} times, {what} {places}"
    others = table.get_column("job_id").n_unique()
    if others > 1:
        message += f" ({others} job numbers repeat)"
    message += (
        "; expected unique job numbers (ties of equal submit times are broken by job number, "
        "so a duplicate would change results)"
    )
    return message, int(first_repeat["at"])


#: Occurrences of a repeated job number that :func:`check_unique_job_ids` lists.
_LISTED_OCCURRENCES = 6


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def read_swf(
    path: str | os.PathLike[str],
    *,
    machine_procs: int | None = None,
    lenient: bool = False,
    infer_machine_procs: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Trace:
    """Read an SWF workload log (``.swf`` or gzipped ``.swf.gz``).

    Parameters
    ----------
    path
        The file. Gzip is recognised by its magic bytes, whatever the suffix.
    machine_procs
        Machine size, processors; overrides the header (e.g. 80640 for the thin nodes of
        CEA-Curie, whose header says 93312).
    lenient
        Skip malformed job lines instead of raising; :attr:`Trace.skipped` counts them by
        reason and one warning summarises them.
    infer_machine_procs
        When neither ``machine_procs`` nor a positive ``MaxProcs``/``MaxNodes`` header is
        available, use the largest allocated or requested processor count of any job (with a
        warning) instead of raising.
    max_bytes
        Largest content accepted, bytes, after decompression (default
        :data:`DEFAULT_MAX_BYTES`, 4 GiB): a larger file, or a gzip that inflates beyond it,
        is refused before it fills the memory.

    Returns
    -------
    Trace
        Jobs in file order (not sorted), header, machine size in processors.

    Raises
    ------
    TraceFormatError
        The file is missing, unreadable, a truncated or corrupt gzip, not UTF-8, has no job
        lines, a job line has not 18 fields or a field is not a (finite) number or an integer
        field holds a non-integral value or a submit, run or requested time is beyond
        ±2**52 s (the simulator's exact range, ``scheduler.core.constants.MAX_TIME_S``; strict
        mode: lenient mode skips the line), a typed header value is not an integer, the
        header's calendar cannot be used (``UnixStartTime``, also plus the last submission,
        outside the years 1-9999; ``TimeZoneString`` not an IANA time zone), or the machine
        size is unknown, or the content exceeds ``max_bytes``. The message
        names the file, the 1-based line of the
        decompressed file (header and blank lines count) and the field.
        A job number that appears on two job lines is refused too, in lenient mode as well
        (:func:`check_unique_job_ids`: the number and the lines of all its occurrences).
    ConfigurationError
        ``machine_procs`` or ``max_bytes`` is not a positive integer.

    Notes
    -----
    Machine size, in order: ``machine_procs``; header ``MaxProcs``; header ``MaxNodes`` (the
    synthetic Lublin-256 log has only that); the jobs when ``infer_machine_procs``.
    """
    if machine_procs is not None:
        machine_procs = _check_machine_procs(machine_procs)
    lenient = flag(lenient, "lenient")
    infer_machine_procs = flag(infer_machine_procs, "infer_machine_procs")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, numbers.Integral) or max_bytes < 1:
        raise ConfigurationError(
            f"max_bytes must be a positive integer (bytes), got {quote(max_bytes)}"
        )
    where = str(path)
    data = load_bytes(path, int(max_bytes))
    jobs, header_lines, skipped = _parse(data, where, lenient)
    header = SwfHeader.from_lines(
        (line for _, line in header_lines), where, line_numbers=[n for n, _ in header_lines]
    )
    _check_has_jobs(jobs, data, where, skipped)
    if header.unix_start_time is not None:
        last = max(float(jobs.get_column("submit_s").max() or 0.0), 0.0)  # type: ignore[arg-type]
        line = _key_line(header_lines, "UnixStartTime")
        check_unix_start_time(header.unix_start_time, where, line=line, last_submit_s=last)
    if jobs.get_column("job_id").is_duplicated().any():
        check_unique_job_ids(jobs, where, line_numbers=_job_line_numbers(data, where, lenient))
    if skipped:
        _warn_skipped(where, skipped)
    if machine_procs is None:
        machine_procs = _resolve_machine_procs(header, jobs, where, infer_machine_procs)
    return Trace(jobs=jobs, header=header, machine_procs=machine_procs, path=where, skipped=skipped)


def _key_line(header_lines: Sequence[tuple[int, str]], key: str) -> int | None:
    """The line number of the first ``; key: value`` line (None when absent)."""
    for number, text in header_lines:
        match = _HEADER_PAIR.match(text)
        if match is not None and match.group(1) == key:
            return number
    return None


def load_bytes(
    path: str | os.PathLike[str],
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    expected: str = "an SWF file",
    reader: str = "read_swf",
) -> bytes:
    """The content of a plain or gzipped text file ``path``, decompressed, without a UTF-8
    byte-order mark; refused beyond ``max_bytes`` (decompressed) before it fills the memory.

    A missing, unreadable, truncated or oversized file is a TraceFormatError naming ``path``
    and saying what was ``expected`` there; ``reader`` is the function whose ``max_bytes``
    raises the bound."""
    try:
        if Path(path).stat().st_size > max_bytes and not _is_gzip(path):
            raise _too_large(path, max_bytes, reader)
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise TraceFormatError(path, f"file not found; expected {expected}") from None
    except IsADirectoryError:
        raise TraceFormatError(path, f"is a directory; expected {expected}") from None
    except OSError as exc:
        raise TraceFormatError(path, f"cannot read the file: {exc.strerror or exc}") from None
    if data.startswith(_GZIP_MAGIC):
        try:
            data = _decompress(data, path, max_bytes, reader)
        except (EOFError, OSError, zlib.error) as exc:
            raise TraceFormatError(
                path, f"truncated or corrupt gzip data ({exc}); expected a complete gzip file"
            ) from None
    # A byte-order mark is not part of the first line (editors on Windows add one).
    return data.removeprefix(_UTF8_BOM)


def _is_gzip(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(_GZIP_MAGIC)) == _GZIP_MAGIC


def _decompress(data: bytes, path: str | os.PathLike[str], max_bytes: int, reader: str) -> bytes:
    """Inflate gzip ``data`` (every member) chunk by chunk, refusing more than ``max_bytes``."""
    chunks, total = [], 0
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        while chunk := stream.read(min(_CHUNK_BYTES, max_bytes - total + 1)):
            total += len(chunk)
            if total > max_bytes:
                raise _too_large(path, max_bytes, reader)
            chunks.append(chunk)
    return b"".join(chunks)


def _too_large(path: str | os.PathLike[str], max_bytes: int, reader: str) -> TraceFormatError:
    return TraceFormatError(
        path,
        f"larger than {max_bytes:,} bytes (decompressed), the most {reader} accepts; "
        "pass max_bytes=<bytes> to read it anyway",
    )


def _parse(
    data: bytes, path: str, lenient: bool
) -> tuple[pl.DataFrame, list[tuple[int, str]], dict[str, int]]:
    """Jobs, header lines as (1-based line number, text) and skipped counts of a file."""
    text, replaced = _decode(data, path, lenient)
    if replaced:
        data = text.encode("utf-8")
    normalised = _normalise_whitespace(data)
    jobs = None if replaced else _parse_fast(normalised)
    if jobs is not None:
        return jobs, _header_lines_fast(data), {}
    return _parse_by_line(text, normalised.decode("utf-8"), path, lenient)


def _job_line_numbers(data: bytes, path: str, lenient: bool) -> pl.Series:
    """The 1-based line number of each job row :func:`_parse` returns for ``data`` (the fast
    path does not track them; this re-reads the file line by line, for error messages only)."""
    text, replaced = _decode(data, path, lenient)
    normalised = _normalise_whitespace(text.encode("utf-8") if replaced else data)
    jobs, _, _ = _parse_by_line(text, normalised.decode("utf-8"), path, lenient, with_lines=True)
    return jobs.get_column("line")


def _decode(data: bytes, path: str, lenient: bool) -> tuple[str, bool]:
    """Decode UTF-8; in lenient mode replace bad bytes (second item: whether any were)."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError as exc:
        if lenient:
            return data.decode("utf-8", errors="replace"), True
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start : exc.end]
        raise TraceFormatError(
            path,
            f"expected UTF-8 text, found undecodable byte(s) {bad!r} ({exc.reason})",
            line=line,
        ) from None


def _check_has_jobs(jobs: pl.DataFrame, data: bytes, path: str, skipped: dict[str, int]) -> None:
    """Raise when no job line is left."""
    if jobs.height:
        return
    if skipped:
        found = f"all {sum(skipped.values())} job lines are malformed ({_format_counts(skipped)})"
    elif data.strip():
        found = "only header/comment lines"
    else:
        found = "an empty file"
    raise TraceFormatError(path, f"expected at least one job line, found {found}")


def _resolve_machine_procs(header: SwfHeader, jobs: pl.DataFrame, path: str, infer: bool) -> int:
    """Machine size from the header, or inferred from the jobs when allowed."""
    for value in (header.max_procs, header.max_nodes):
        if value is not None and value > 0:
            return value
    if not infer:
        raise TraceFormatError(
            path,
            f"{MISSING_MACHINE_SIZE}; pass machine_procs=<processors> or infer_machine_procs=True",
            field="MaxProcs",
        )
    largest = jobs.select(pl.max_horizontal(pl.col("alloc_procs").max(), pl.col("req_procs").max()))
    inferred = largest.item()
    if inferred is None or inferred <= 0:
        raise TraceFormatError(
            path,
            "cannot infer the machine size: no job has a positive processor count; "
            "pass machine_procs=<processors>",
            field="MaxProcs",
        )
    warnings.warn(
        f"{path}: no MaxProcs or MaxNodes header; machine size inferred from the jobs as "
        f"{inferred} processors (largest allocated or requested count)",
        UserWarning,
        stacklevel=3,
    )
    return int(inferred)


def _warn_skipped(path: str, skipped: dict[str, int]) -> None:
    """One warning summarising the job lines lenient mode skipped."""
    warnings.warn(
        f"{path}: skipped {sum(skipped.values())} malformed job line(s) "
        f"({_format_counts(skipped)})",
        UserWarning,
        stacklevel=3,
    )


def _format_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason}: {count}" for reason, count in counts.items())


# Fast path ----------------------------------------------------------------------------------


def _parse_fast(normalised: bytes) -> pl.DataFrame | None:
    """Parse a well-formed file in one vectorised pass; ``None`` when anything looks wrong.

    ``normalised`` is the file after :func:`_normalise_whitespace`, so that every job line reads
    ``f1 f2 ... f18`` with single spaces; polars' multi-threaded CSV reader parses it with the
    SWF schema, skipping ``;`` lines. Blank lines come back as all-null rows and are dropped.
    Anything else unusual (a parse error, a missing field, NaN or infinity) returns ``None``,
    and the caller re-reads the file line by line to report or skip the culprit precisely.
    """
    try:
        jobs = pl.read_csv(
            normalised,
            has_header=False,
            separator=" ",
            comment_prefix=";",
            quote_char=None,
            schema=SWF_SCHEMA,
        )
    except Exception:  # any parse failure: the line-by-line path explains it
        return None
    jobs = jobs.filter(~pl.all_horizontal(pl.all().is_null()))
    if jobs.height == 0 or sum(jobs.null_count().row(0)):
        return None
    finite = jobs.select(pl.col(pl.Float64).is_finite().all()).row(0)
    in_range = jobs.select(_in_time_range(pl.col(name)).all() for name in _TIME_FIELDS).row(0)
    return jobs if all(finite) and all(in_range) else None


def _in_time_range(value: pl.Expr) -> pl.Expr:
    """Whether an integer time (s) is within ±MAX_TIME_S (no ``abs``: it wraps at -2**63)."""
    return (value >= -MAX_TIME_S) & (value <= MAX_TIME_S)


def _normalise_whitespace(data: bytes) -> bytes:
    """Collapse whitespace runs to one space; drop leading and trailing whitespace of lines."""
    frame = pl.DataFrame({"b": np.frombuffer(data.translate(_TO_SPACE), dtype=np.uint8)})
    byte = pl.col("b")
    space = byte == _SPACE
    # Keep a space only when the byte before it is neither a space nor a newline: this keeps
    # the first space of each run and drops every run that opens a line.
    frame = frame.filter(~space | ~(space | (byte == _NEWLINE)).shift(1, fill_value=True))
    # A run that closed a line left one space before the newline (or the end of the file).
    frame = frame.filter(~(space & (byte.shift(-1, fill_value=_NEWLINE) == _NEWLINE)))
    return frame.to_series().to_numpy().tobytes()


def _header_lines_fast(data: bytes) -> list[tuple[int, str]]:
    """(1-based line number, text) of every line whose first non-blank byte is ``;``."""
    found: list[tuple[int, str]] = []
    line_number, counted_to = 1, 0
    position = data.find(b";")
    # Visits only the ';' bytes (a few dozen in a log), not every line.
    while position != -1:
        start = data.rfind(b"\n", 0, position) + 1
        end = data.find(b"\n", position)
        end = len(data) if end == -1 else end
        if not data[start:position].strip(_INLINE_WHITESPACE):
            line_number += data.count(b"\n", counted_to, start)
            counted_to = start
            found.append((line_number, data[start:end].decode("utf-8").removesuffix("\r")))
        position = data.find(b";", end)
    return found


# Line-by-line path --------------------------------------------------------------------------


def _parse_by_line(
    text: str, normalised: str, path: str, lenient: bool, *, with_lines: bool = False
) -> tuple[pl.DataFrame, list[tuple[int, str]], dict[str, int]]:
    """Parse with a line number on every row; raise on (or, lenient, skip) bad job lines.

    Parameters
    ----------
    text
        The decoded file.
    normalised
        ``text`` after :func:`_normalise_whitespace` (same lines, single spaces).
    path
        The file, for messages.
    lenient
        Skip bad job lines instead of raising.
    with_lines
        Add the column ``line`` (1-based line number of each job) to the jobs.

    Returns
    -------
    jobs, header lines as (line number, text), skipped counts by reason.
    """
    lines = pl.DataFrame({"raw": text.split("\n"), "norm": normalised.split("\n")}).with_row_index(
        "line", offset=1
    )
    is_header = pl.col("norm").str.starts_with(";")
    header = lines.filter(is_header).select("line", pl.col("raw").str.strip_suffix("\r")).rows()
    diagnosed = _diagnose(lines.filter(~is_header & (pl.col("norm") != "")))
    bad = diagnosed.filter(pl.col("_reason").is_not_null())
    if bad.height and not lenient:
        raise _job_line_error(path, bad.row(0, named=True))
    counts = bad.group_by("_reason", maintain_order=True).len().rows()  # first-seen order
    columns = [*SWF_COLUMNS, "line"] if with_lines else SWF_COLUMNS
    jobs = diagnosed.filter(pl.col("_reason").is_null()).select(columns)
    return jobs, [(int(n), raw) for n, raw in header], {reason: int(n) for reason, n in counts}


def _diagnose(candidates: pl.DataFrame) -> pl.DataFrame:
    """Split job lines into fields; parse each field and name the line's first problem.

    Returns ``candidates`` with the 18 parsed SWF columns, the raw tokens (``_token_<name>``),
    ``_reason`` (``None`` for a good line) and ``_field`` (the first bad field, if any).
    """
    tokens = candidates.select(
        "line",
        "raw",
        "norm",
        pl.col("norm")
        .str.splitn(" ", SWF_FIELD_COUNT + 1)
        .struct.rename_fields([f"_token_{name}" for name in SWF_COLUMNS] + [_REST])
        .alias("_tokens"),
    ).unnest("_tokens")
    columns, codes = [], {}
    for name, dtype in SWF_SCHEMA.items():
        value, code = _parse_tokens(tokens.get_column(f"_token_{name}"), dtype, name)
        columns.append(value.alias(name))
        if code is not None:
            codes[name] = code.alias(f"_code_{name}")
    tokens = tokens.with_columns(*columns, *codes.values())
    # Only fields with a problem somewhere have a code column; the first non-zero one wins.
    first_code = pl.coalesce(
        [pl.when(pl.col(f"_code_{n}") != 0).then(pl.col(f"_code_{n}")) for n in codes]
        or [pl.lit(None, pl.Int32)]
    )
    first_field = pl.coalesce(
        [pl.when(pl.col(f"_code_{n}") != 0).then(pl.lit(n)) for n in codes]
        or [pl.lit(None, pl.String)]
    )
    field_count_ok = pl.col(f"_token_{SWF_COLUMNS[-1]}").is_not_null() & pl.col(_REST).is_null()
    reason = (
        pl.when(pl.col("raw").str.contains("\ufffd", literal=True))
        .then(pl.lit(REASON_UNDECODABLE))
        .when(~field_count_ok)
        .then(pl.lit(REASON_FIELD_COUNT))
        .otherwise(first_code.replace_strict(_CODE_REASONS, default=None, return_dtype=pl.String))
    )
    return tokens.with_columns(reason.alias("_reason"), first_field.alias("_field"))


def _parse_tokens(
    tokens: pl.Series, dtype: pl.DataType, name: str
) -> tuple[pl.Series, pl.Series | None]:
    """Values of one field's tokens (field ``name``), and their problem codes (``None`` when
    all are fine).

    Codes: 0 fine, 1 not a finite number, 2 not integral, 3 outside the signed 64-bit range,
    4 a time (:data:`_TIME_FIELDS`) beyond ±MAX_TIME_S. A missing token (short line) is code 1;
    the field-count check reports such lines first.
    """
    time = name in _TIME_FIELDS
    if dtype.is_integer():
        as_int = tokens.cast(pl.Int64, strict=False)
        plain = as_int.null_count() == tokens.null_count()
        if plain and not (time and not _in_time_range(as_int).fill_null(True).all()):
            return as_int, None  # the usual case: every present token is a plain integer
    else:
        as_float = tokens.cast(pl.Float64, strict=False)
        if as_float.null_count() == tokens.null_count() and as_float.is_finite().all():
            return as_float, None
    value, code = _field_value_and_code(dtype)
    if time:
        code = pl.when((code == 0) & ~_in_time_range(value).fill_null(True)).then(4).otherwise(code)
    parsed = pl.DataFrame({"token": tokens}).select(value.alias("value"), code.alias("code"))
    return parsed.get_column("value"), parsed.get_column("code")


def _field_value_and_code(dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """Expressions of the parsed value and problem code of column ``token``."""
    token = pl.col("token")
    as_float = token.cast(pl.Float64, strict=False)
    numeric = as_float.is_not_null() & as_float.is_finite()
    if dtype.is_float():
        return as_float, pl.when(numeric).then(0).otherwise(1)
    as_int = token.cast(pl.Int64, strict=False)
    integral = as_float == as_float.floor()
    in_range = as_float.abs() < _INT64_LIMIT
    # "1e3" or "3.0" in an integer field are whole numbers: accept them.
    value = pl.coalesce(
        as_int, pl.when(numeric & integral & in_range).then(as_float.cast(pl.Int64, strict=False))
    )
    code = (
        pl.when(as_int.is_not_null())
        .then(0)
        .when(~numeric)
        .then(1)
        .when(~integral)
        .then(2)
        .when(~in_range)
        .then(3)
        .otherwise(0)
    )
    return value, code


def _job_line_error(path: str, row: dict[str, object]) -> TraceFormatError:
    """The error for the first bad job line (a row of :func:`_diagnose`)."""
    line = int(row["line"])  # type: ignore[call-overload]
    reason = row["_reason"]
    if reason == REASON_UNDECODABLE:
        return TraceFormatError(path, "expected UTF-8 text, found undecodable bytes", line=line)
    if reason == REASON_FIELD_COUNT:
        found = len(str(row["norm"]).split(" "))
        return TraceFormatError(
            path,
            f"expected {SWF_FIELD_COUNT} fields, found {found}: {quote(row['norm'])}",
            line=line,
        )
    name = str(row["_field"])
    token = row[f"_token_{name}"]
    expected = {
        REASON_NON_NUMERIC: "a finite number",
        REASON_NON_INTEGRAL: "an integer",
        REASON_OUT_OF_RANGE: "an integer within the signed 64-bit range",
        REASON_TIME_RANGE: (
            f"a time within ±2**52 s ({MAX_TIME_S:,} s: the simulator computes in float64, "
            "which holds whole seconds exactly only up to 2**53)"
        ),
    }[str(reason)]
    return TraceFormatError(
        path, f"expected {expected}, found {quote(token)}", line=line, field=name
    )


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def write_swf(
    trace_or_jobs: Trace | pl.DataFrame,
    path: str | os.PathLike[str],
    *,
    header: SwfHeader | None = None,
    extra_header_lines: Sequence[str] = (),
    job_counts: bool = False,
) -> None:
    """Write jobs as an SWF file, atomically (gzipped when ``path`` ends with ``.gz``).

    Parameters
    ----------
    trace_or_jobs
        A :class:`Trace`, or a table with the 18 SWF columns (extra columns are ignored).
    path
        Output file; replaced atomically, never left half-written.
    header
        Header whose lines are written first, verbatim; defaults to the trace's header (none
        for a bare table).
    extra_header_lines
        Lines written after the header, each prefixed with ``"; "`` unless it already starts
        with ``;`` (e.g. provenance: ``"Filtered: strong filter"``).
    job_counts
        Make the header's ``MaxJobs`` and ``MaxRecords`` tell the jobs written (distinct job
        numbers; job lines), as the Parallel Workloads Archive's format 2.2 defines them: lines
        that say otherwise are replaced in place, missing ones added after the header
        (:func:`with_job_counts`). For a filtered or simulated trace, whose header still counts
        the log's jobs. Off (the default), the header is written verbatim.

    Raises
    ------
    ConfigurationError
        A column is missing or not writable (nulls, non-finite, non-integral integers), a
        submit, run or requested time is beyond ±2**52 s (which :func:`read_swf` refuses), or
        a header line is not a single ``;`` line. Nothing is written then.

    Notes
    -----
    Job lines hold 18 right-aligned fields separated by spaces. Integers are written as
    integers; floats as integers when integral, else in the shortest form that reads back to
    the same float, so :func:`read_swf` returns an identical table.
    """
    if isinstance(trace_or_jobs, Trace):
        jobs = _coerce_jobs(trace_or_jobs.jobs)
        header = trace_or_jobs.header if header is None else header
    else:
        jobs = _coerce_jobs(trace_or_jobs)
    for name in _TIME_FIELDS:  # read_swf refuses them: the round trip would break
        far = jobs.select(_in_time_range(pl.col(name)).not_().arg_true()).to_series()
        if far.len():
            row = int(far[0])
            raise ConfigurationError(
                f"column {name}: job {jobs['job_id'][row]} (row {row + 1}) has the time "
                f"{jobs[name][row]} s, beyond ±2**52 s, which read_swf refuses (the simulator's "
                "exact range: scheduler.core.constants.MAX_TIME_S)"
            )
    if job_counts:
        header = with_job_counts(header, jobs)
    lines = _header_block(header, extra_header_lines)
    body = _job_lines(jobs)
    if body:
        lines.append(body)
    payload = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
    if str(path).endswith(".gz"):
        # mtime=0 keeps the output byte-identical across runs (stable checksums).
        payload = gzip.compress(payload, compresslevel=6, mtime=0)
    atomic_write_bytes(path, payload)


def with_job_counts(header: SwfHeader | None, jobs: pl.DataFrame) -> SwfHeader:
    """``header`` with ``MaxJobs`` and ``MaxRecords`` giving the counts of ``jobs``.

    Parameters
    ----------
    header
        The header (``None``: an empty one).
    jobs
        The jobs to be written (a ``job_id`` column).

    Returns
    -------
    SwfHeader
        Every ``; MaxJobs:`` line replaced by ``; MaxJobs: <distinct job numbers>`` and every
        ``; MaxRecords:`` line by ``; MaxRecords: <rows>`` (SWF 2.2: the totals of *this* file;
        a job split into several records counts once in ``MaxJobs``); a key that is absent is
        added at the end of the header. The other lines are kept verbatim.
    """
    counts = {
        "MaxJobs": int(jobs.get_column("job_id").n_unique()),
        "MaxRecords": int(jobs.height),
    }
    lines = list(header.lines) if header is not None else []
    seen: set[str] = set()
    for index, text in enumerate(lines):
        match = _HEADER_PAIR.match(text)
        if match is not None and match.group(1) in counts:
            key = match.group(1)
            lines[index] = f"; {key}: {counts[key]}"
            seen.add(key)
    lines += [f"; {key}: {value}" for key, value in counts.items() if key not in seen]
    return SwfHeader.from_lines(lines)


def _header_block(header: SwfHeader | None, extra_lines: Sequence[str]) -> list[str]:
    """The header lines to write, checked to be single ``;`` lines."""
    if isinstance(extra_lines, str):
        raise ConfigurationError("extra_header_lines must be a sequence of lines, not one string")
    lines = list(header.lines) if header is not None else []
    lines += [line if line.startswith(";") else f"; {line}" for line in extra_lines]
    for line in lines:
        if "\n" in line or "\r" in line or not line.lstrip(" \t\x0b\x0c").startswith(";"):
            raise ConfigurationError(
                f"a header line must be one line starting with ';': {quote(line)}"
            )
    return lines


def _job_lines(jobs: pl.DataFrame) -> str:
    """The job lines of ``jobs`` (SWF dtypes, checked), joined by newlines."""
    if jobs.height == 0:
        return ""
    texts = jobs.select(_number_text(name, dtype) for name, dtype in SWF_SCHEMA.items())
    widths = texts.select(pl.all().str.len_chars().max()).row(0)
    padded = [
        pl.col(name).str.pad_start(width) for name, width in zip(SWF_COLUMNS, widths, strict=True)
    ]
    return texts.select(pl.concat_str(padded, separator=" ").str.join("\n")).item()


def _number_text(name: str, dtype: pl.DataType) -> pl.Expr:
    """Text of one column: integers as such, floats as integers when integral and not -0.0,
    else polars' shortest round-trip representation."""
    column = pl.col(name)
    if dtype.is_integer():
        return column.cast(pl.String)
    negative_zero = (column == 0) & ((1.0 / column) < 0)
    whole = (column == column.floor()) & (column.abs() < _INT64_LIMIT) & ~negative_zero
    return (
        pl.when(whole)
        .then(column.cast(pl.Int64, strict=False).cast(pl.String))
        .otherwise(column.cast(pl.String))
    )
