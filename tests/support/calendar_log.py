"""A small SWF log with a known time zone for the calendar tests: Europe/Stockholm, five weeks
from Wednesday 9 October 1996 12:00 CEST, across the end of summer time (Sunday 27 October,
03:00 CEST -> 02:00 CET: the hour 02:00-03:00 happens twice).

Expected values come from :mod:`zoneinfo` and :mod:`datetime` (the local weekday and time of day
of every job), never from the code under test.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from pathlib import Path

ZONE = "Europe/Stockholm"
TZ = zoneinfo.ZoneInfo(ZONE)
#: The log's UnixStartTime: a Wednesday noon, so that neither midnight nor Monday is its origin.
START = dt.datetime(1996, 10, 9, 12, 0, tzinfo=TZ)
MACHINE_PROCS = 8
#: The first Monday 00:00 on or after the first submission: where calendar weeks start.
FIRST_MONDAY = dt.datetime(1996, 10, 14, 0, 0, tzinfo=TZ)

#: Jobs of user 4 at telling local times (fold=1: the second 02:30 of 27 October, in CET).
SPECIAL = {
    "sunday_last_second": dt.datetime(1996, 10, 20, 23, 59, 59, tzinfo=TZ),
    "monday_midnight": dt.datetime(1996, 10, 21, 0, 0, 0, tzinfo=TZ),
    "first_0230": dt.datetime(1996, 10, 27, 2, 30, tzinfo=TZ, fold=0),
    "second_0230": dt.datetime(1996, 10, 27, 2, 30, tzinfo=TZ, fold=1),
    "sunday_late_after_dst": dt.datetime(1996, 10, 27, 23, 30, tzinfo=TZ),
    "monday_after_dst": dt.datetime(1996, 10, 28, 0, 10, tzinfo=TZ),
}


def unix(moment: dt.datetime) -> int:
    return int(moment.timestamp())


def local_time_of_week_s(instant: float) -> float:
    """Seconds from the local Monday 00:00 to ``instant`` (Unix seconds) on the wall clock:
    weekday x 86,400 + the local time of day."""
    moment = dt.datetime.fromtimestamp(instant, TZ)
    return float(moment.weekday() * 86400 + moment.hour * 3600 + moment.minute * 60
                 + moment.second) + (instant - int(instant))  # fmt: skip


def calendar_week(instant: float) -> int:
    """Which local Monday-to-Monday week after :data:`FIRST_MONDAY` ``instant`` falls in."""
    day = dt.datetime.fromtimestamp(instant, TZ).date()
    return (day - FIRST_MONDAY.date()).days // 7


def write_calendar_log(
    path: Path, *, zone: str | None = ZONE, start: dt.datetime | None = START
) -> dict[int, float]:
    """Write the log to ``path``; return job number -> submission instant (Unix seconds).

    ``zone``/``start``: the ``TimeZoneString`` and ``UnixStartTime`` header values (``None``
    leaves the line out; the submissions stay the same instants, counted from ``START``).
    Users 1-3 submit every 5 h 20 min (600-840 s jobs of 1-4 processors); user 4 the
    :data:`SPECIAL` jobs.
    """
    origin = unix(START)
    submits = [(origin + 600 + k * 19_200, 1 + k % 3, 600 + 60 * (k % 5), 1 + k % 4)
               for k in range(5 * 7 * 86400 // 19_200)]  # fmt: skip
    submits += [(unix(moment), 4, 300, 2) for moment in SPECIAL.values()]
    submits.sort()
    lines = [f"; MaxProcs: {MACHINE_PROCS}"]
    if start is not None:
        lines.append(f"; UnixStartTime: {unix(start)}")
    if zone is not None:
        lines.append(f"; TimeZoneString: {zone}")
    instants = {}
    for job_id, (instant, user, run, procs) in enumerate(submits, start=1):
        submit = instant - origin
        lines.append(f"{job_id} {submit} 0 {run} {procs} -1 -1 {procs} 3600 -1 1 {user} 1 1 1 "
                     "-1 -1 -1")  # fmt: skip
        instants[job_id] = float(instant)
    path.write_text("\n".join(lines) + "\n")
    return instants
