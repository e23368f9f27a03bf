"""The calendar of a trace (scheduler.traces.calendar) and resampled weeks cut on it
(scheduler.traces.resample with a calendar): local Monday 00:00 week starts in the log's time
zone, daylight-saving time, UTC when the header says nothing, and the errors of a bad zone.

Expected local times come from zoneinfo/datetime (tests/support/calendar_log.py)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.calendar_log import (
    FIRST_MONDAY,
    SPECIAL,
    START,
    TZ,
    ZONE,
    calendar_week,
    local_time_of_week_s,
    unix,
    write_calendar_log,
)

from scheduler.core.errors import ConfigurationError, TraceFormatError
from scheduler.core.steps import StepError
from scheduler.traces.calendar import (
    CALENDAR_KEY,
    MONDAY_S,
    TraceCalendar,
    table_calendar,
)
from scheduler.traces.filters import strong_filter
from scheduler.traces.resample import resample_weeks
from scheduler.traces.steps import filter_trace, resample_batch, split_trace
from scheduler.traces.swf import SwfHeader, read_swf

W = 604_800


def naive_local_s(moment: dt.datetime) -> float:
    """Wall-clock seconds of an aware datetime: its local date and time read as UTC."""
    return moment.replace(tzinfo=None).replace(tzinfo=dt.UTC).timestamp()


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> tuple[Path, dict[int, float]]:
    path = tmp_path_factory.mktemp("calendar") / "stockholm.swf"
    return path, write_calendar_log(path)


@pytest.fixture(scope="module")
def jobs(log) -> pl.DataFrame:
    return strong_filter(read_swf(log[0]))[0].jobs


@pytest.fixture(scope="module")
def calendar(log) -> TraceCalendar:
    return TraceCalendar.from_header(read_swf(log[0]).header, log[0])


# -- the calendar ------------------------------------------------------------------------------


def test_calendar_of_a_header(log, calendar) -> None:
    assert calendar == TraceCalendar(unix(START), ZONE, str(log[0]))
    assert calendar.describe() == f"{ZONE}, trace time 0 = 1996-10-09 12:00:00 CEST"


def test_utc_from_the_epoch_when_the_header_has_neither_key(tmp_path: Path) -> None:
    path = tmp_path / "bare.swf"
    write_calendar_log(path, zone=None, start=None)
    calendar = TraceCalendar.from_header(read_swf(path).header, path)
    assert (calendar.unix_start_time, calendar.time_zone) == (0, "UTC")
    times = np.array([0.0, 3.5, 86_400.0 * 400 + 17])
    assert np.array_equal(calendar.wall_clock_s(times), times)  # UTC has no offset, no DST
    # 1970-01-05 00:00 UTC was the epoch's first Monday
    assert TraceCalendar.next_monday_s(1.0) == MONDAY_S == 4 * 86_400
    assert TraceCalendar.next_monday_s(MONDAY_S) == MONDAY_S


@pytest.mark.parametrize(
    "moment",
    [
        dt.datetime(1996, 10, 27, 1, 59, 59, tzinfo=TZ),  # CEST, just before summer time ends
        dt.datetime(1996, 10, 27, 2, 30, tzinfo=TZ, fold=0),  # first 02:30 (CEST)
        dt.datetime(1996, 10, 27, 2, 30, tzinfo=TZ, fold=1),  # second 02:30 (CET)
        dt.datetime(1996, 10, 27, 3, 0, tzinfo=TZ),  # CET
        dt.datetime(1997, 3, 30, 1, 59, 59, tzinfo=TZ),  # CET, just before summer time starts
        dt.datetime(1997, 3, 30, 3, 0, tzinfo=TZ),  # CEST: 02:00-03:00 never happened
        dt.datetime(1997, 7, 1, 12, 0, tzinfo=TZ),
    ],
)
def test_wall_clock_is_the_local_time_across_both_dst_changes(calendar, moment) -> None:
    trace_time = moment.timestamp() - unix(START) + 0.25
    wall = calendar.wall_clock_s(np.array([trace_time]))[0]
    assert wall == naive_local_s(moment) + 0.25


def test_wall_clock_days_and_weeks_are_local_midnights_and_mondays(calendar) -> None:
    """Across the end of summer time: a wall-clock day starts at local midnight and the week of
    the change still lasts 7 x 86,400 s on the wall clock (604,800 + 3,600 s elapsed)."""
    mondays = [dt.datetime(1996, 10, 21, tzinfo=TZ), dt.datetime(1996, 10, 28, tzinfo=TZ)]
    walls = calendar.wall_clock_s(np.array([m.timestamp() - unix(START) for m in mondays]))
    assert ((walls - MONDAY_S) % W == 0).all() and walls[1] - walls[0] == W
    assert mondays[1].timestamp() - mondays[0].timestamp() == W + 3600
    assert TraceCalendar.next_monday_s(walls[0] - 1) == walls[0]


@pytest.mark.parametrize("zone", ["Mars/Olympus", "utc", "+01:00", "Europe/Stokholm"])
def test_a_zone_that_is_not_iana_names_the_file_and_the_key(tmp_path: Path, zone: str) -> None:
    """Refused where the log is read (every reader alike) and by a calendar made otherwise."""
    path = tmp_path / "bad.swf"
    write_calendar_log(path, zone=zone)
    with pytest.raises(TraceFormatError, match="TimeZoneString") as caught:
        read_swf(path)
    assert str(caught.value).startswith(f"{path}:3: field TimeZoneString: ")
    with pytest.raises(TraceFormatError, match="TimeZoneString") as caught:
        TraceCalendar.from_header(SwfHeader(time_zone_string=zone), path)
    assert str(path) in str(caught.value) and "IANA" in str(caught.value)
    assert caught.value.field == "TimeZoneString"


@pytest.mark.parametrize("start", [253402300800, -99999999999])
def test_a_start_outside_the_calendar_names_the_file_and_the_key(start: int) -> None:
    with pytest.raises(TraceFormatError, match="years 1-9999") as caught:
        TraceCalendar.from_values(start, ZONE, "x.swf")
    assert str(caught.value).startswith("x.swf: field UnixStartTime: ")


def test_unknown_zone_without_a_file() -> None:
    with pytest.raises(TraceFormatError, match=r"<calendar>: field TimeZoneString"):
        TraceCalendar.from_header(SwfHeader(time_zone_string="Nowhere/Land"))


# -- the calendar through the trace steps ------------------------------------------------------


def test_filter_and_split_carry_the_calendar(log, calendar, tmp_path: Path) -> None:
    filtered = tmp_path / "filtered.parquet"
    filter_trace(
        str(log[0]),
        str(filtered),
        str(tmp_path / "report.json"),
        trace="sthlm",
        machine_procs=None,
        overrun="drop",
    )
    assert table_calendar(filtered) == calendar
    train, test = tmp_path / "train.parquet", tmp_path / "test.parquet"
    split_trace(str(filtered), str(train), str(test), trace="sthlm")
    assert table_calendar(train) == table_calendar(test) == calendar


def test_a_bad_zone_stops_the_filter(tmp_path: Path) -> None:
    """The filter reads the log, so it refuses a header whose zone no step can use (every
    study alike, whether it uses the calendar or not)."""
    swf = tmp_path / "bad.swf"
    write_calendar_log(swf, zone="Mars/Olympus")
    filtered = tmp_path / "filtered.parquet"
    with pytest.raises(StepError, match="TimeZoneString") as caught:
        filter_trace(str(swf), str(filtered), str(tmp_path / "report.json"), trace="bad",
                     machine_procs=None, overrun="drop")  # fmt: skip
    assert str(caught.value).startswith(f"{swf}:3: field TimeZoneString: 'Mars/Olympus'")
    assert not filtered.exists()


@pytest.mark.parametrize(
    ("record", "key"),
    [
        ({"time_zone": "Mars/Olympus", "unix_start_time": 0}, "TimeZoneString"),
        ({"time_zone": "UTC", "unix_start_time": 253402300800}, "UnixStartTime"),
    ],
)
def test_a_bad_calendar_in_an_older_table_names_the_log_the_key_and_the_table(
    tmp_path: Path, record: dict, key: str
) -> None:
    """A table written before the header was checked on reading may hold an unusable calendar:
    the steps that use it name the log, the key and the table."""
    filtered = tmp_path / "filtered.parquet"
    meta = {CALENDAR_KEY: json.dumps({**record, "source": "old.swf"})}
    pl.DataFrame({"submit_s": [0]}).write_parquet(filtered, metadata=meta)
    with pytest.raises(TraceFormatError) as caught:
        table_calendar(filtered)
    message = str(caught.value)
    assert message.startswith(f"old.swf: field {key}: ") and str(filtered) in message


def test_a_table_without_calendar_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.parquet"
    pl.DataFrame({"submit_s": [0]}).write_parquet(path)
    with pytest.raises(ConfigurationError, match=f"no {CALENDAR_KEY}.*filter step"):
        table_calendar(path)


def test_resample_step_refuses_an_unknown_alignment(log, tmp_path: Path) -> None:
    filtered = tmp_path / "filtered.parquet"
    filter_trace(
        str(log[0]),
        str(filtered),
        str(tmp_path / "report.json"),
        trace="sthlm",
        machine_procs=None,
        overrun="drop",
    )
    with pytest.raises(StepError, match="alignment must be one of"):
        resample_batch(str(filtered), str(tmp_path / "w.parquet"), trace="sthlm", split="x",
                       first_week=0, last_week=0, seed=1, alignment="monday",
                       method="uniform",)  # fmt: skip


# -- resampled weeks on the calendar -----------------------------------------------------------


@pytest.fixture(scope="module")
def calendar_weeks(jobs, calendar) -> pl.DataFrame:
    """Every user-week of the log once (permutation: one cycle of K resampled weeks)."""
    return resample_weeks(jobs, range(4), seed=5, trace="sthlm", split="long",
                          method="permutation", calendar=calendar)  # fmt: skip


def test_calendar_weeks_run_monday_to_monday_in_the_log_time_zone(
    log, jobs, calendar_weeks
) -> None:
    instants = log[1]
    # complete local weeks from Monday 14 October (the log starts on a Wednesday): 14, 21,
    # 28 October, 4 November; the week of 11 November ends after the last submission
    assert calendar_weeks["source_week"].unique().sort().to_list() == [0, 1, 2, 3]
    used = [j for j in jobs["job_id"].to_list() if 0 <= calendar_week(instants[j]) < 4]
    assert sorted(calendar_weeks["source_job_id"].to_list()) == sorted(used)  # each once
    for row in calendar_weeks.iter_rows(named=True):
        instant = instants[row["source_job_id"]]
        # offset in the week = local weekday and time of day; source week = local week
        assert row["submit_s"] == local_time_of_week_s(instant), row
        assert row["source_week"] == calendar_week(instant), row
    assert (calendar_weeks["submit_s"] < W).all() and (calendar_weeks["submit_s"] >= 0).all()


def test_the_partial_weeks_are_never_drawn(log, calendar_weeks) -> None:
    """Neither the jobs before the first Monday nor those of the last, incomplete week."""
    last_monday = FIRST_MONDAY + dt.timedelta(weeks=4)  # 11 November, 00:00 CET
    outside = [j for j, t in log[1].items()
               if t < FIRST_MONDAY.timestamp() or t >= last_monday.timestamp()]  # fmt: skip
    drawn = set(calendar_weeks["source_job_id"].to_list())
    assert len(outside) > 20 and not set(outside) & drawn


def test_midnight_and_dst_special_jobs(log, calendar_weeks) -> None:
    """Sunday 23:59:59 and Monday 00:00:00 fall in two weeks; in the week summer time ends,
    Sunday 23:30 CET is 6 days 23.5 h after Monday 00:00 (not 24.5 h of elapsed time later),
    and both 02:30 of that Sunday share one offset."""
    offsets = dict(zip(calendar_weeks["source_job_id"], calendar_weeks["submit_s"], strict=True))
    weeks = dict(zip(calendar_weeks["source_job_id"], calendar_weeks["source_week"], strict=True))
    special = {name: next(j for j, t in log[1].items() if t == moment.timestamp())
               for name, moment in SPECIAL.items()}  # fmt: skip
    assert weeks[special["sunday_last_second"]] == 0 and weeks[special["monday_midnight"]] == 1
    assert offsets[special["sunday_last_second"]] == W - 1
    assert offsets[special["monday_midnight"]] == 0.0
    assert offsets[special["first_0230"]] == offsets[special["second_0230"]] == 6 * 86400 + 9000
    assert offsets[special["sunday_late_after_dst"]] == 6 * 86400 + 23.5 * 3600
    assert weeks[special["sunday_late_after_dst"]] == 1
    assert (weeks[special["monday_after_dst"]], offsets[special["monday_after_dst"]]) == (2, 600)


def test_first_submit_alignment_ignores_the_calendar(jobs) -> None:
    """Without a calendar, week 0 starts at the first submission (Wednesday 12:10 local)."""
    weeks = resample_weeks(jobs, range(3), seed=5, trace="sthlm", split="long",
                           method="permutation")  # fmt: skip
    t0 = float(jobs["submit_s"].min())
    by_id = dict(zip(jobs["job_id"], jobs["submit_s"], strict=True))
    for job_id, offset, week in weeks.select("source_job_id", "submit_s", "source_week").rows():
        assert offset == by_id[job_id] - t0 - week * W
    assert weeks["source_week"].max() == int((jobs["submit_s"].max() - t0) // W) - 1


def test_a_log_shorter_than_a_calendar_week(jobs, calendar) -> None:
    """Six days from a Wednesday: one week from the first submission, no Monday-to-Monday one."""
    t0 = jobs["submit_s"].min()
    short = jobs.filter(pl.col("submit_s") < t0 + 8 * 86400)
    assert resample_weeks(short, [0], seed=1, trace="t", split="s").height > 0
    with pytest.raises(ConfigurationError, match=r"complete calendar week.*Europe/Stockholm"):
        resample_weeks(short, [0], seed=1, trace="t", split="s", calendar=calendar)
