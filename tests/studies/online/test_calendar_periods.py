"""Policy periods on the calendar (issue #16, point 12): long traces cut at local Monday 00:00
of a log with a known time zone (Europe/Stockholm, across the end of summer time), periods of
1 day from local midnight, of 1 week from Monday 00:00, other lengths laid from that Monday; and
the published alignment (first submission) kept as an option that reproduces the earlier
results exactly."""

from __future__ import annotations

import hashlib

import numpy as np
import polars as pl
import pytest
from support.calendar_log import (
    MACHINE_PROCS,
    SPECIAL,
    calendar_week,
    local_time_of_week_s,
    write_calendar_log,
)

import scheduler
from scheduler.core.errors import ConfigurationError
from scheduler.core.steps import StepError
from scheduler.sim.arrays import kernel_arrays, trace_arrays
from scheduler.studies.online import steps as online_steps
from scheduler.studies.online.live import (
    DAY_S,
    run_online,
    simulated_period_costs,
)
from scheduler.studies.online.long_traces import long_trace
from scheduler.studies.online.selectors import PeriodFeedback, Selector, make_selector
from scheduler.traces.calendar import CALENDAR_KEY
from scheduler.traces.filters import strong_filter
from scheduler.traces.steps import filter_trace
from scheduler.traces.swf import read_swf

W = 7 * DAY_S
THETA = 40 * 3600.0
POLICIES = ("FCFS", "SPF", "LQF")


class Recorder(Selector):
    """Always FCFS; keeps every period's feedback."""

    def __init__(self) -> None:
        self.name, self.needs_simulation, self.policies = "recorder", False, ("FCFS",)
        self.history: list = []
        self.feedback: list[PeriodFeedback] = []

    def choose(self, period: int) -> str:
        return "FCFS"

    def observe(self, period: int, feedback: PeriodFeedback) -> None:
        self.feedback.append(feedback)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> dict:
    """The Stockholm log filtered by the filter step and a 6-week long trace on each
    alignment (by the long-trace step)."""
    root = tmp_path_factory.mktemp("calendar_periods")
    swf = root / "stockholm.swf"
    instants = write_calendar_log(swf)
    filtered = root / "filtered.parquet"
    filter_trace(
        str(swf),
        str(filtered),
        str(root / "report.json"),
        trace="sthlm",
        machine_procs=None,
        overrun="drop",
    )
    paths = {}
    for alignment in ("calendar", "first_submit"):
        paths[alignment] = root / f"{alignment}.parquet"
        online_steps.make_long_trace(
            str(filtered), str(paths[alignment]), trace="sthlm", replica=0, weeks=6, seed=11,
            alignment=alignment,
            method="uniform",
        )  # fmt: skip
    return {"root": root, "instants": instants, "filtered": filtered, "paths": paths}


@pytest.fixture(scope="module")
def calendar_trace(study) -> pl.DataFrame:
    return pl.read_parquet(study["paths"]["calendar"])


@pytest.fixture(scope="module")
def calendar_arrays(study):
    return kernel_arrays("long_trace", str(study["paths"]["calendar"]))[0]


def source_instants(study, table: pl.DataFrame) -> np.ndarray:
    return np.array([study["instants"][j] for j in table["source_job_id"].to_list()])


def test_long_trace_starts_on_a_monday_and_keeps_local_times(study, calendar_trace) -> None:
    """Replica time 0 is a Monday 00:00: each job's time in its replica week is the local
    weekday and time of day of the source job, whatever the daylight-saving time did."""
    table = calendar_trace
    instants = source_instants(study, table)
    expected = np.array([local_time_of_week_s(t) for t in instants])
    assert np.array_equal(table["submit_s"].to_numpy() % W, expected)
    assert np.array_equal(table["submit_s"].to_numpy() // W, table["week_index"].to_numpy())
    assert np.array_equal(table["source_week"].to_numpy(), [calendar_week(t) for t in instants])
    meta = pl.read_parquet_metadata(study["paths"]["calendar"])
    assert meta[online_steps.WEEK_ALIGNMENT_KEY] == "calendar"
    assert '"time_zone": "Europe/Stockholm"' in meta[CALENDAR_KEY]
    first = pl.read_parquet_metadata(study["paths"]["first_submit"])
    assert first[online_steps.WEEK_ALIGNMENT_KEY] == "first_submit"


def test_daily_periods_run_from_local_midnight_to_midnight(
    study, calendar_trace, calendar_arrays
) -> None:
    """Δ = 1 day on the calendar: period t holds the jobs submitted on local day t % 7 (Monday
    0) of replica week t // 7, and each is simulated alone as the definition says."""
    table, arrays = calendar_trace, calendar_arrays
    costs = simulated_period_costs(arrays, MACHINE_PROCS, POLICIES, period_s=DAY_S,
                                   threshold_s=THETA, period_origin_s=0.0)  # fmt: skip
    assert costs.shape[0] == int(table["submit_s"].max() // DAY_S) + 1
    weekday = np.floor(table["submit_s"].to_numpy() % W / DAY_S).astype(int)
    instants = source_instants(study, table)
    local_weekday = [int(local_time_of_week_s(t) // DAY_S) for t in instants]
    assert np.array_equal(weekday, local_weekday)
    days = np.floor(table["submit_s"].to_numpy() / DAY_S).astype(int)
    for t in sorted({int(days.min()), 6, 7, 13, 20, int(days.max())}):
        jobs = table.filter(pl.Series(days == t))
        for k, policy in enumerate(POLICIES):
            expected = 0.0
            if jobs.height:
                done = scheduler.simulate(jobs, policy, policy, THETA,
                                          machine_procs=MACHINE_PROCS)  # fmt: skip
                expected = float(done.jobs["wait_s"].sum())
            assert costs[t, k] == expected, (t, policy)


def test_midnight_splits_sunday_from_monday_across_the_dst_change(study, calendar_trace) -> None:
    """Sunday 23:59:59 and Monday 00:00:00 (and Sunday 23:30 CET, the day summer time ended,
    and Monday 00:10) fall in different daily and weekly periods wherever they were drawn."""
    table = calendar_trace
    by_source = {}
    for source, submit in table.select("source_job_id", "submit_s").rows():
        by_source.setdefault(study["instants"][source], []).append(submit)
    pairs = [("sunday_last_second", "monday_midnight"),
             ("sunday_late_after_dst", "monday_after_dst")]  # fmt: skip
    seen = 0
    for late, early in pairs:
        for submit in by_source.get(SPECIAL[late].timestamp(), []):
            assert submit % DAY_S >= 23 * 3600 and (submit // DAY_S) % 7 == 6
            seen += 1
        for submit in by_source.get(SPECIAL[early].timestamp(), []):
            assert submit % DAY_S < 3600 and (submit // DAY_S) % 7 == 0
            seen += 1
    assert seen >= 2  # user 4 drew some of these weeks


def test_weekly_and_other_periods_are_laid_from_the_monday_origin(calendar_arrays) -> None:
    arrays = calendar_arrays
    submit = arrays.submit_s
    assert submit[0] > 0  # the first job comes after the Monday 00:00 origin
    for period_s in (W, 6 * 3600.0, 2 * DAY_S):
        recorder = Recorder()
        run = run_online(arrays, MACHINE_PROCS, recorder, period_s=period_s, threshold_s=THETA,
                         period_origin_s=0.0)  # fmt: skip
        ends = run.start_s + arrays.run_s
        for t, feedback in enumerate(recorder.feedback):
            inside = (ends >= t * period_s) & (ends < (t + 1) * period_s)
            assert feedback.live_jobs == int(inside.sum()), (period_s, t)
        costs = simulated_period_costs(arrays, MACHINE_PROCS, ("FCFS",), period_s=period_s,
                                       threshold_s=THETA, period_origin_s=0.0)  # fmt: skip
        assert costs.shape[0] == int(submit[-1] // period_s) + 1
        # the daily curve counts local days from the Monday origin too
        day = np.floor(ends / DAY_S).astype(int)
        waits = run.start_s - submit
        expected = np.cumsum(np.bincount(day, weights=waits))
        assert np.array_equal(run.daily_cumulative_wait_s, expected)


def test_period_origin_after_the_first_submission_is_refused(calendar_arrays) -> None:
    late = float(calendar_arrays.submit_s[0]) + 1
    with pytest.raises(ConfigurationError, match="period_origin_s"):
        run_online(calendar_arrays, MACHINE_PROCS, Recorder(), period_s=DAY_S,
                   period_origin_s=late)  # fmt: skip
    with pytest.raises(ConfigurationError, match="period_origin_s"):
        simulated_period_costs(calendar_arrays, MACHINE_PROCS, ("FCFS",), period_s=DAY_S,
                               threshold_s=THETA, period_origin_s=float("nan"))  # fmt: skip


def test_online_steps_align_periods_and_days_as_configured(study) -> None:
    """The steps: calendar periods on a calendar long trace start at 0; first_submit ones at the
    first submission; calendar periods on a first_submit long trace are refused."""
    root, paths = study["root"], study["paths"]
    assert online_steps.long_trace_period_origin(str(paths["calendar"]), "calendar") == 0.0
    assert online_steps.long_trace_period_origin(str(paths["calendar"]), "first_submit") is None
    with pytest.raises(ConfigurationError, match=r"online\.week_alignment: calendar"):
        online_steps.long_trace_period_origin(str(paths["first_submit"]), "calendar")
    with pytest.raises(ConfigurationError, match=r"online\.period_alignment"):
        online_steps.long_trace_period_origin(str(paths["calendar"]), "monday")
    arrays = kernel_arrays("long_trace", str(paths["calendar"]))[0]
    curves = {}
    for alignment in ("calendar", "first_submit"):
        curve, choices = root / f"curve-{alignment}.parquet", root / f"choices-{alignment}.parquet"
        online_steps.online_run(
            [str(paths["calendar"])], str(curve), str(choices), trace="sthlm", replicas=[0],
            strategy="fixed:FCFS", period="1d", period_s=DAY_S, policies=list(POLICIES),
            threshold_s=THETA, seed=1, period_alignment=alignment,
            threshold_backfill=True, options={}, slurm=None,
        )  # fmt: skip
        curves[alignment] = pl.read_parquet(curve)
    direct = scheduler.simulate(pl.read_parquet(paths["calendar"]), "FCFS", "FCFS", THETA,
                                machine_procs=MACHINE_PROCS).jobs.sort("job_id")  # fmt: skip
    ends = (direct["start_s"] + direct["run_s"]).to_numpy()
    first = float(arrays.submit_s[0])
    assert curves["calendar"].height == int(ends.max() // DAY_S) + 1
    assert curves["first_submit"].height == int((ends.max() - first) // DAY_S) + 1
    for curve in curves.values():
        assert curve["cumulative_wait_s"][-1] == float(direct["wait_s"].sum())
    with pytest.raises(StepError, match=r"online\.week_alignment: calendar"):
        online_steps.period_costs(
            str(paths["first_submit"]), str(root / "costs.parquet"), trace="sthlm", replica=0,
            period="1d", period_s=DAY_S, policies=list(POLICIES), threshold_s=THETA,
            period_alignment="calendar",
            threshold_backfill=True, slurm=None,
        )  # fmt: skip


# -- the published alignment, kept as an option --------------------------------------------------


@pytest.fixture(scope="module")
def kth_filtered(kth_path) -> pl.DataFrame:
    return strong_filter(read_swf(kth_path))[0].jobs


def test_first_submit_alignment_reproduces_the_earlier_results(kth_filtered) -> None:
    """Long trace, period costs and live runs with the first_submit alignment (no calendar,
    period origin None or the first submission): the values the code gave before periods were
    put on the calendar (computed with it, commit c1341c8), to the last bit. That commit
    backfilled in the plain order and ran the bandit with a forced round of untried policies:
    both are options now (``threshold_backfill=False``, ``forced=1``)."""
    table = long_trace(kth_filtered, 0, weeks=6, seed=3, trace="KTH-SP2", calendar=None)
    csv = table.select("submit_s", "source_job_id", "user_id").write_csv().encode()
    assert (table.height, hashlib.sha256(csv).hexdigest()[:16]) == (3585, "02b5572325202cca")
    arrays = trace_arrays(table, 100)
    policies = ("FCFS", "SPF", "LEXP", "LQF")
    first = float(arrays.submit_s[0])
    for origin in (None, first):
        weekly = simulated_period_costs(arrays, 100, policies, period_s=W, threshold_s=THETA,
                                        period_origin_s=origin,
                                        threshold_backfill=False)  # fmt: skip
        assert weekly.shape == (6, 4) and float(weekly.sum()) == 49185104.0
        assert weekly[:, 1].tolist() == [2128412.0, 1439030.0, 633369.0, 3137215.0, 1345555.0,
                                         968202.0]  # fmt: skip
        daily = simulated_period_costs(arrays, 100, policies, period_s=DAY_S, threshold_s=THETA,
                                       period_origin_s=origin,
                                       threshold_backfill=False)  # fmt: skip
        full = make_selector("full", policies, rng=np.random.default_rng(7))
        run = run_online(arrays, 100, full, period_s=DAY_S, threshold_s=THETA, costs=daily,
                         period_origin_s=origin, threshold_backfill=False)  # fmt: skip
        assert run.total_wait_s == 12312738.0 and len(run.choices) == 43
        assert "".join(p[0] for p in run.choices) == "FFFLFFFFF" + "S" * 34
        assert run.daily_cumulative_wait_s.size == 43
        assert run.daily_cumulative_wait_s[10] == 4521038.0
        bandit = make_selector("bandit(eps=0.3,forced=1)", policies,
                               rng=np.random.default_rng(7))  # fmt: skip
        run = run_online(arrays, 100, bandit, period_s=W, threshold_s=THETA,
                         period_origin_s=origin, threshold_backfill=False)  # fmt: skip
        assert run.total_wait_s == 14147619.0
        assert run.choices == ("FCFS", "SPF", "FCFS", "LEXP", "SPF", "LQF", "FCFS")
        assert run.daily_cumulative_wait_s[10] == 4141994.0
