"""The calendar of a trace: when its clock's 0 was, in which time zone, and its local days and
weeks.

An SWF log counts submit times in seconds from its ``UnixStartTime`` header (an instant, seconds
since the Unix epoch) and says where it was recorded in ``TimeZoneString`` (an IANA zone such as
``Europe/Stockholm``). A log without them is read as starting at the epoch (origin 0) in UTC.

Local wall clock
    :meth:`TraceCalendar.wall_clock_s` turns trace times into *local wall-clock seconds*: what
    a clock on the wall of the machine room showed, counted in seconds from 1970-01-01 00:00
    local time, as if every day had 86,400 s. On that clock every local day is
    ``[d·86,400, (d+1)·86,400)`` and every local week Monday 00:00 to Monday 00:00 is
    ``[w·W, (w+1)·W)`` shifted by :data:`MONDAY_S` (1970-01-05, the first Monday of the epoch),
    ``W`` = 604,800 s, whatever the daylight-saving time (DST) did.

Daylight-saving time
    The wall clock is not the elapsed time: a week whose Sunday moves the clocks forward lasts
    604,800 − 3,600 s, and no trace time falls in the skipped hour (02:00-03:00 local in
    Europe); a week whose Sunday moves them back lasts 604,800 + 3,600 s, and the repeated hour
    holds the submissions of both passes. Resampling on the calendar
    (:mod:`scheduler.traces.resample`) keeps every job's local weekday and time of day, i.e. its
    wall-clock offset in its week, so a resampled week is exactly W long; the price is that
    the submissions of a repeated hour are laid over one hour (their order inside that hour may
    change) and that a skipped hour stays empty. Run and requested times are durations and never
    change.

Both header values are checked once, when the log is read (:func:`scheduler.traces.swf.read_swf`
refuses a ``UnixStartTime`` outside the years 1-9999 and a ``TimeZoneString`` that is not an
IANA zone, naming the file, the header line and the key), so every study refuses such a log
alike. The filter step stores them in the filtered table's parquet metadata
(:data:`CALENDAR_KEY`, :func:`calendar_metadata`); the steps that need the calendar read them
back with :func:`table_calendar`, which checks them again (a table written by an older schedlab
may hold unchecked values) and names the SWF file, the key and the table.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from scheduler.core.constants import WEEK_S
from scheduler.core.errors import ConfigurationError, TraceFormatError
from scheduler.core.steps import table_metadata
from scheduler.traces.swf import SwfHeader, check_time_zone, check_unix_start_time

__all__ = [
    "CALENDAR_KEY",
    "DAY_S",
    "MONDAY_S",
    "UTC",
    "WEEK_ALIGNMENTS",
    "TraceCalendar",
    "WeekAlignment",
    "calendar_metadata",
    "check_week_alignment",
    "table_calendar",
    "table_calendar_metadata",
]

#: Seconds in a day of the wall clock.
DAY_S = 86_400
#: 1970-01-05 00:00, the first Monday of the epoch, in wall-clock seconds: local weeks start at
#: ``MONDAY_S + w·W``.
MONDAY_S = 4 * DAY_S
#: The zone of a log without ``TimeZoneString``.
UTC = "UTC"
#: Parquet metadata key of the calendar (JSON: ``unix_start_time``, ``time_zone`` as in the SWF
#: header, ``null`` when absent, and ``source``, the SWF file they were read from).
CALENDAR_KEY = "schedlab.calendar"

#: How resampled weeks are cut from a log: on the calendar (local Monday 00:00 to Monday 00:00)
#: or, as before, every W seconds from the first submission.
WEEK_ALIGNMENTS = ("calendar", "first_submit")
WeekAlignment = Literal["calendar", "first_submit"]


def check_week_alignment(value: object, key: str) -> str:
    """``value`` if it is one of :data:`WEEK_ALIGNMENTS`, else a ConfigurationError naming the
    config ``key``."""
    if value not in WEEK_ALIGNMENTS:
        raise ConfigurationError(
            f"config {key}: unknown alignment {value!r}; choose one of {list(WEEK_ALIGNMENTS)}"
        )
    return str(value)


@dataclass(frozen=True)
class TraceCalendar:
    """Where a trace's clock sits on the calendar.

    Attributes
    ----------
    unix_start_time
        The instant of trace time 0, seconds since the Unix epoch (``UnixStartTime``; 0 when
        the header has none).
    time_zone
        IANA time zone of the log (``TimeZoneString``; ``"UTC"`` when the header has none).
    source
        The file the values come from, named by errors (``None``: unknown).

    Raises
    ------
    TraceFormatError
        ``time_zone`` is not an IANA time zone, or ``unix_start_time`` no instant of the years
        1-9999 (names ``source`` and the key; :func:`~scheduler.traces.swf.read_swf` refuses
        such a header already, this is for a calendar made otherwise).
    """

    unix_start_time: int = 0
    time_zone: str = UTC
    source: str | None = None

    def __post_init__(self) -> None:
        # the checks read_swf makes (SwfHeader), again for a calendar made otherwise: from a
        # table written by an older schedlab, or by hand
        where = self.source or "<calendar>"
        check_unix_start_time(self.unix_start_time, where)
        check_time_zone(self.time_zone, where)

    @classmethod
    def from_header(
        cls, header: SwfHeader, source: str | os.PathLike[str] | None = None
    ) -> TraceCalendar:
        """The calendar of an SWF header (UTC from the epoch when the keys are absent)."""
        return cls.from_values(header.unix_start_time, header.time_zone_string, source)

    @classmethod
    def from_values(
        cls,
        unix_start_time: int | None,
        time_zone: str | None,
        source: str | os.PathLike[str] | None = None,
    ) -> TraceCalendar:
        """The calendar of the header values ``UnixStartTime`` and ``TimeZoneString`` (either
        ``None`` when absent)."""
        return cls(
            unix_start_time=int(unix_start_time or 0),
            time_zone=time_zone or UTC,
            source=None if source is None else str(source),
        )

    def wall_clock_s(self, times_s: np.ndarray) -> np.ndarray:
        """Local wall-clock seconds (see the module docstring) of trace times (s, float64).

        ``wall = time + UnixStartTime + UTC offset at that instant``; the offset of a fractional
        time is the one of its whole second (zones change offset on whole seconds).
        """
        times = np.asarray(times_s, dtype=np.float64)
        if times.size == 0:
            return times.copy()
        instants = np.floor(times).astype(np.int64) + self.unix_start_time
        utc = pl.from_epoch(pl.Series(instants), time_unit="s").dt.replace_time_zone(UTC)
        local = utc.dt.convert_time_zone(self.time_zone).dt.replace_time_zone(None)
        offset_s = (local.dt.epoch("s") - utc.dt.epoch("s")).to_numpy().astype(np.float64)
        return times + self.unix_start_time + offset_s

    @staticmethod
    def next_monday_s(wall_s: float) -> float:
        """The first local Monday 00:00 at or after wall-clock second ``wall_s``."""
        return MONDAY_S + math.ceil((wall_s - MONDAY_S) / WEEK_S) * WEEK_S

    def to_metadata(self) -> dict[str, str]:
        """This calendar as parquet metadata (:data:`CALENDAR_KEY`)."""
        record = {"unix_start_time": self.unix_start_time, "time_zone": self.time_zone,
                  "source": self.source}  # fmt: skip
        return {CALENDAR_KEY: json.dumps(record, sort_keys=True)}

    def describe(self) -> str:
        """``"Europe/Stockholm, trace time 0 = 1996-09-23 14:00:31 CEST"``, for logs."""
        zone = zoneinfo.ZoneInfo(self.time_zone)
        start = datetime.datetime.fromtimestamp(self.unix_start_time, tz=zone)
        return f"{self.time_zone}, trace time 0 = {start:%Y-%m-%d %H:%M:%S %Z}"


def calendar_metadata(header: SwfHeader, source: str | os.PathLike[str]) -> dict[str, str]:
    """Parquet metadata carrying an SWF header's ``UnixStartTime`` and ``TimeZoneString``
    (checked when the header was read, :meth:`SwfHeader.from_lines
    <scheduler.traces.swf.SwfHeader.from_lines>`)."""
    record = {"unix_start_time": header.unix_start_time, "time_zone": header.time_zone_string,
              "source": str(source)}  # fmt: skip
    return {CALENDAR_KEY: json.dumps(record, sort_keys=True)}


def table_calendar_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """The :data:`CALENDAR_KEY` entry of a table's metadata as it is (empty when absent), for
    a step whose output carries its input's calendar on (the train/test split)."""
    meta = table_metadata(path)
    return {CALENDAR_KEY: meta[CALENDAR_KEY]} if CALENDAR_KEY in meta else {}


def table_calendar(path: str | os.PathLike[str]) -> TraceCalendar:
    """The calendar stored in a parquet table's metadata by the filter step.

    Raises
    ------
    TableError
        The file is not a readable parquet table.
    ConfigurationError
        The table has no :data:`CALENDAR_KEY` (written before the calendar was recorded:
        rerun the filter step).
    TraceFormatError
        The recorded ``TimeZoneString`` is not an IANA zone; names the SWF file, the key and
        the table.
    """
    meta = table_metadata(path)
    if CALENDAR_KEY not in meta:
        raise ConfigurationError(
            f"{path}: no {CALENDAR_KEY} in its metadata (the trace's UnixStartTime and "
            f"TimeZoneString); rebuild it with the filter step"
        )
    record: Mapping[str, Any] = json.loads(meta[CALENDAR_KEY])
    source = record.get("source") or str(path)
    try:
        return TraceCalendar.from_values(
            record.get("unix_start_time"), record.get("time_zone"), source
        )
    except TraceFormatError as error:
        raise TraceFormatError(
            error.path, f"{error.message} (read from {path})", field=error.field
        ) from None
