"""The strong filter (scheduler.traces.filters): each rule, their order, the report, real logs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from support.expected import KTH_CLIPPED, KTH_FILTER_COUNTS

from scheduler.core.constants import SWF_COLUMNS, SWF_SCHEMA
from scheduler.core.errors import ConfigurationError
from scheduler.traces.filters import FilterReport, strong_filter, with_processor_count
from scheduler.traces.swf import SwfHeader, Trace, read_swf

MACHINE_PROCS = 8
#: A job every rule keeps.
OK = {"submit_s": 0, "run_s": 10, "alloc_procs": 2, "req_procs": 2, "req_time_s": 20}
REMOVAL_COUNTS = (
    "removed_procs_exceed_machine",
    "removed_no_procs",
    "removed_bad_runtime_or_submit",
    "removed_bad_requested_time",
)


def make_trace(jobs: pl.DataFrame, machine_procs: int = MACHINE_PROCS) -> Trace:
    header = SwfHeader.from_lines([f"; MaxProcs: {machine_procs}"])
    return Trace(jobs=jobs, header=header, machine_procs=machine_procs, path="crafted.swf")


def assert_consistent(report: FilterReport) -> None:
    removed = sum(getattr(report, name) for name in REMOVAL_COUNTS)
    assert report.removed == removed
    assert report.jobs_in - removed == report.jobs_out


def assert_clean(filtered: Trace) -> None:
    """The guarantees of the filter's output."""
    jobs = filtered.jobs
    m = filtered.machine_procs
    for column in ("alloc_procs", "req_procs"):
        assert jobs.get_column(column).is_between(1, m).all()
    assert (jobs.get_column("run_s") > 0).all()
    assert (jobs.get_column("submit_s") >= 0).all()
    assert (jobs.get_column("req_time_s") >= jobs.get_column("run_s")).all()
    assert jobs.equals(jobs.sort(["submit_s", "job_id"], maintain_order=True))


def run(job_table, *rows: dict) -> tuple[Trace, FilterReport]:
    filtered, report = strong_filter(make_trace(job_table(*rows)))
    assert_consistent(report)
    return filtered, report


def ids(trace: Trace) -> list[int]:
    return trace.jobs.get_column("job_id").to_list()


# --------------------------------------------------------------------------------------------
# One rule at a time
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "counter"),
    [
        ({"alloc_procs": 9}, "removed_procs_exceed_machine"),
        ({"req_procs": 9}, "removed_procs_exceed_machine"),
        ({"alloc_procs": -1, "req_procs": 0}, "removed_no_procs"),
        ({"run_s": 0}, "removed_bad_runtime_or_submit"),
        ({"run_s": -1}, "removed_bad_runtime_or_submit"),
        ({"submit_s": -5}, "removed_bad_runtime_or_submit"),
        ({"req_time_s": -1}, "removed_bad_requested_time"),
        ({"req_time_s": 0}, "removed_bad_requested_time"),
        ({"req_time_s": 9}, "removed_bad_requested_time"),
    ],
)
def test_each_rule_removes_exactly_its_job(job_table, change: dict, counter: str) -> None:
    filtered, report = run(job_table, OK, {**OK, **change}, OK)
    assert ids(filtered) == [1, 3]
    assert getattr(report, counter) == 1
    assert report.removed == 1
    assert (report.jobs_in, report.jobs_out) == (3, 2)


def test_boundaries_are_kept(job_table) -> None:
    edge = {"submit_s": 0, "run_s": 1, "alloc_procs": 8, "req_procs": 8, "req_time_s": 1}
    filtered, report = run(job_table, edge)
    assert ids(filtered) == [1]
    assert report.removed == 0


def test_repair_rule(job_table) -> None:
    filtered, report = run(
        job_table,
        {**OK, "alloc_procs": -1, "req_procs": 4},
        {**OK, "alloc_procs": 6, "req_procs": 0},
        {**OK, "alloc_procs": 3, "req_procs": 5},
    )
    procs = filtered.jobs.select("alloc_procs", "req_procs").rows()
    assert procs == [(4, 4), (6, 6), (3, 5)]  # a job with both counts known is left alone
    assert report.repaired_procs == 2
    assert report.removed == 0


# --------------------------------------------------------------------------------------------
# Order of the rules
# --------------------------------------------------------------------------------------------


def test_rules_apply_in_order(job_table) -> None:
    _, report = run(
        job_table,
        {**OK, "alloc_procs": 9, "run_s": 0, "req_time_s": -1},  # rule 1 only
        {**OK, "alloc_procs": 0, "req_procs": -1, "run_s": 0},  # rule 2 only
        {**OK, "run_s": -1, "req_time_s": -1},  # rule 3 only
        {**OK, "req_procs": 9, "alloc_procs": -1},  # rule 1, not repaired
        OK,
    )
    assert report.to_dict() == {
        "jobs_in": 5,
        "jobs_out": 1,
        "removed_procs_exceed_machine": 2,
        "repaired_procs": 0,
        "removed_no_procs": 1,
        "removed_bad_runtime_or_submit": 1,
        "removed_bad_requested_time": 0,
        "machine_procs": MACHINE_PROCS,
        "source_path": "crafted.swf",
        "overrun": "drop",
        "clipped_overrun": 0,
    }


def test_repaired_job_can_still_be_removed(job_table) -> None:
    _, report = run(job_table, {**OK, "alloc_procs": -1, "req_time_s": 5})
    assert report.repaired_procs == 1
    assert report.removed_bad_requested_time == 1
    assert report.jobs_out == 0


def test_repaired_count_applies_rule_two_after_rule_one(job_table) -> None:
    # alloc unknown and req too large: removed by rule 1, so never repaired
    _, report = run(job_table, {**OK, "alloc_procs": -1, "req_procs": 99})
    assert (report.removed_procs_exceed_machine, report.repaired_procs) == (1, 0)


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def test_output_sorted_stably_and_input_untouched(job_table) -> None:
    jobs = job_table(
        {**OK, "job_id": 7, "submit_s": 50},
        {**OK, "job_id": 3, "submit_s": 50},
        {**OK, "job_id": 9, "submit_s": 10},
        {**OK, "job_id": 4, "submit_s": 50, "run_s": 11},  # (job numbers are unique)
    )
    trace = make_trace(jobs)
    filtered, _ = strong_filter(trace)
    assert filtered.jobs.select("job_id", "run_s").rows() == [(9, 10), (3, 10), (4, 11), (7, 10)]
    assert trace.jobs.equals(jobs)
    assert filtered.header == trace.header
    assert (filtered.machine_procs, filtered.path) == (trace.machine_procs, trace.path)
    assert filtered.jobs.schema == pl.Schema(SWF_SCHEMA)


def test_report_json(job_table, tmp_path: Path) -> None:
    _, report = run(job_table, OK, {**OK, "run_s": 0})
    out = tmp_path / "reports" / "filter.json"
    report.write_json(out)
    text = out.read_text()
    assert json.loads(text) == report.to_dict()
    assert text == json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n"
    assert list(out.parent.iterdir()) == [out]


# --------------------------------------------------------------------------------------------
# Real logs
# --------------------------------------------------------------------------------------------


def test_kth_filter_report(kth_path: Path) -> None:
    trace = read_swf(kth_path)
    filtered, report = strong_filter(trace)
    assert_consistent(report)
    assert_clean(filtered)
    # the rules are independent of each other here (no job exceeds the 100 processors, none
    # has only one count unknown)
    assert report.to_dict() == {**KTH_FILTER_COUNTS, "source_path": str(kth_path)}
    assert filtered.jobs.height == report.jobs_out


@pytest.mark.slow
def test_cea_curie_thin_nodes_filter(shared_trace) -> None:
    trace = read_swf(shared_trace("CEA-Curie.swf.gz"), machine_procs=80640)
    filtered, report = strong_filter(trace)
    assert_consistent(report)
    assert_clean(filtered)
    assert report.machine_procs == 80640
    wider = (pl.col("alloc_procs") > 80640) | (pl.col("req_procs") > 80640)
    assert report.removed_procs_exceed_machine == trace.jobs.filter(wider).height
    assert report.repaired_procs > 0  # many CEA jobs lack the allocated count
    assert filtered.jobs.height == report.jobs_out


# --------------------------------------------------------------------------------------------
# Differential test against a plain loop
# --------------------------------------------------------------------------------------------


def reference_filter(rows: list[dict], machine_procs: int) -> tuple[list[dict], dict[str, int]]:
    """The strong filter written as a loop over jobs, straight from its definition."""
    counts = dict.fromkeys([*REMOVAL_COUNTS, "repaired_procs"], 0)
    kept = []
    for original in rows:
        job = dict(original)
        alloc, req = job["alloc_procs"], job["req_procs"]
        if alloc > machine_procs or req > machine_procs:
            counts["removed_procs_exceed_machine"] += 1
            continue
        if alloc <= 0 and req <= 0:
            counts["removed_no_procs"] += 1
            continue
        if alloc <= 0 or req <= 0:
            counts["repaired_procs"] += 1
            job["alloc_procs"] = job["req_procs"] = max(alloc, req)
        if job["run_s"] <= 0 or job["submit_s"] < 0:
            counts["removed_bad_runtime_or_submit"] += 1
            continue
        if job["req_time_s"] <= 0 or job["req_time_s"] < job["run_s"]:
            counts["removed_bad_requested_time"] += 1
            continue
        kept.append(job)
    kept.sort(key=lambda job: (job["submit_s"], job["job_id"]))  # list.sort is stable
    return kept, counts


_SMALL = st.integers(min_value=-2, max_value=12)
_ROW = st.fixed_dictionaries(
    {
        "job_id": st.integers(min_value=1, max_value=60),
        "submit_s": _SMALL,
        "run_s": _SMALL,
        "alloc_procs": _SMALL,
        "req_procs": _SMALL,
        "req_time_s": _SMALL,
        "user_id": st.integers(min_value=0, max_value=10**6),
    }
)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(_ROW, max_size=30, unique_by=lambda row: row["job_id"]))
def test_matches_reference_loop(rows: list[dict]) -> None:
    full = [{**dict.fromkeys(SWF_COLUMNS, -1), **row} for row in rows]
    jobs = pl.DataFrame(full, schema=SWF_SCHEMA)
    filtered, report = strong_filter(make_trace(jobs))
    expected_rows, counts = reference_filter(full, MACHINE_PROCS)
    assert_frame_equal(filtered.jobs, pl.DataFrame(expected_rows, schema=SWF_SCHEMA))
    assert {name: getattr(report, name) for name in counts} == counts
    assert_consistent(report)
    assert_clean(filtered)


# -- bad input (issue #11) -----------------------------------------------------------------------


def test_duplicate_job_numbers_are_refused(job_table) -> None:
    from scheduler.core.errors import TraceFormatError

    jobs = job_table({**OK, "job_id": 4}, {**OK, "job_id": 9}, {**OK, "job_id": 4})
    message = r"crafted.swf: field job_id: job number 4 .*rows 1 and 3"
    with pytest.raises(TraceFormatError, match=message):
        strong_filter(make_trace(jobs))


def test_no_job_left_is_an_error_when_jobs_are_required(job_table) -> None:
    from scheduler.core.errors import NoJobsError

    jobs = job_table({**OK, "run_s": 0}, {**OK, "alloc_procs": 99}, {**OK, "run_s": -4})
    trace = make_trace(jobs)
    filtered, report = strong_filter(trace)  # the default: an empty trace and its report
    assert (filtered.jobs.height, report.jobs_out) == (0, 0)
    with pytest.raises(NoJobsError) as info:
        strong_filter(trace, require_jobs=True)
    assert str(info.value) == (
        "crafted.swf: no job left after filtering (3 jobs in; removed by rule: "
        "procs > machine 1, no proc count 0, run time <= 0 or submit < 0 2, "
        "requested time <= 0 or < run 0)"
    )
    assert info.value.report == report
    assert strong_filter(make_trace(job_table(OK)), require_jobs=True)[1].jobs_out == 1


# -- overrun="clip": jobs that ran past their requested time (issue #12) -------------------------

#: The counts that must not depend on the overrun mode.
SAME_IN_BOTH_MODES = (
    "jobs_in",
    "removed_procs_exceed_machine",
    "repaired_procs",
    "removed_no_procs",
    "removed_bad_runtime_or_submit",
    "machine_procs",
    "source_path",
)


def assert_clip_extends_drop(trace: Trace) -> tuple[FilterReport, FilterReport]:
    """Both modes on ``trace``: clip keeps drop's jobs plus the clipped ones, counts add up."""
    dropped, drop = strong_filter(trace)
    clipped, clip = strong_filter(trace, overrun="clip")
    for report in (drop, clip):
        assert_consistent(report)
    assert (drop.overrun, drop.clipped_overrun, clip.overrun) == ("drop", 0, "clip")
    assert {n: getattr(drop, n) for n in SAME_IN_BOTH_MODES} == {
        n: getattr(clip, n) for n in SAME_IN_BOTH_MODES
    }
    # only rule 4 changes: its overrunning jobs move from "removed" to "clipped"
    assert drop.removed_bad_requested_time == clip.removed_bad_requested_time + clip.clipped_overrun
    assert clip.jobs_out == drop.jobs_out + clip.clipped_overrun
    assert_clean(dropped)
    assert_clean(clipped)
    raw = trace.jobs.select("job_id", pl.col("run_s").alias("raw_run_s"))
    extra = clipped.jobs.join(dropped.jobs.select("job_id"), on="job_id", how="anti")
    assert extra.height == clip.clipped_overrun
    extra = extra.join(raw, on="job_id")
    assert (extra.get_column("run_s") == extra.get_column("req_time_s")).all()
    assert (extra.get_column("raw_run_s") > extra.get_column("req_time_s")).all()
    # drop's jobs are kept unchanged, in the same order
    assert_frame_equal(clipped.jobs.join(extra.select("job_id"), on="job_id", how="anti"),
                       dropped.jobs)  # fmt: skip
    return drop, clip


def test_overrun_job_dropped_or_clipped(job_table) -> None:
    over = {**OK, "run_s": 30, "req_time_s": 20}
    trace = make_trace(job_table(OK, over, OK))
    dropped, drop = strong_filter(trace)
    assert ids(dropped) == [1, 3]
    assert (drop.removed_bad_requested_time, drop.clipped_overrun, drop.overrun) == (1, 0, "drop")
    clipped, clip = strong_filter(trace, overrun="clip")
    assert ids(clipped) == [1, 2, 3]
    assert clipped.jobs.get_column("run_s").to_list() == [10, 20, 10]  # 30 s clipped to 20 s
    assert clipped.jobs.get_column("req_time_s").to_list() == [20, 20, 20]
    assert (clip.removed_bad_requested_time, clip.clipped_overrun, clip.overrun) == (0, 1, "clip")
    assert (clip.jobs_in, clip.jobs_out, clip.removed) == (3, 3, 0)
    assert trace.jobs.get_column("run_s").to_list() == [10, 30, 10]  # input untouched
    assert_clip_extends_drop(trace)


def test_clip_mode_changes_only_rule_four(job_table) -> None:
    trace = make_trace(
        job_table(
            {**OK, "alloc_procs": 9, "run_s": 50},  # rule 1 (also overrunning)
            {**OK, "alloc_procs": 0, "req_procs": 0, "run_s": 50},  # rule 2 (also overrunning)
            {**OK, "alloc_procs": -1, "run_s": 50},  # repaired, then clipped
            {**OK, "submit_s": -1, "run_s": 50},  # rule 3 (also overrunning)
            {**OK, "req_time_s": 0, "run_s": 50},  # rule 4 in both modes
            {**OK, "req_time_s": -3},  # rule 4 in both modes
            {**OK, "run_s": 21},  # clipped to 20
            {**OK, "run_s": 20},  # run == requested: kept as is in both modes
            OK,
        )
    )
    drop, clip = assert_clip_extends_drop(trace)
    changed = {"overrun": "clip", "clipped_overrun": 2, "removed_bad_requested_time": 2}
    assert drop.to_dict() | changed | {"jobs_out": 4} == clip.to_dict()
    assert (drop.removed_bad_requested_time, drop.jobs_out) == (4, 2)
    assert (clip.jobs_out, clip.repaired_procs) == (4, 1)
    assert clip.removal_text() == (
        "9 jobs in; removed by rule: procs > machine 1, no proc count 1, "
        "run time <= 0 or submit < 0 1, requested time <= 0 2; clipped (run > requested) 2"
    )
    clipped = strong_filter(trace, overrun="clip")[0]
    assert clipped.jobs.select("job_id", "run_s").rows() == [(3, 20), (7, 20), (8, 20), (9, 10)]


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(_ROW, max_size=30, unique_by=lambda row: row["job_id"]))
def test_clip_mode_on_random_tables(rows: list[dict]) -> None:
    full = [{**dict.fromkeys(SWF_COLUMNS, -1), **row} for row in rows]
    assert_clip_extends_drop(make_trace(pl.DataFrame(full, schema=SWF_SCHEMA)))


def test_clip_report_json(job_table, tmp_path: Path) -> None:
    _, report = strong_filter(make_trace(job_table(OK, {**OK, "run_s": 99})), overrun="clip")
    report.write_json(tmp_path / "filter.json")
    written = json.loads((tmp_path / "filter.json").read_text())
    assert (written["overrun"], written["clipped_overrun"], written["jobs_out"]) == ("clip", 1, 2)


@pytest.mark.parametrize("bad", ["cut", "DROP", "", None, 1])
def test_bad_overrun_is_refused(job_table, bad) -> None:
    with pytest.raises(ConfigurationError, match=r"overrun must be one of 'drop', 'clip'"):
        strong_filter(make_trace(job_table(OK)), overrun=bad)


def test_no_job_left_in_clip_mode_names_the_clip_rule(job_table) -> None:
    from scheduler.core.errors import NoJobsError

    with pytest.raises(NoJobsError) as info:
        strong_filter(make_trace(job_table({**OK, "req_time_s": 0})), overrun="clip",
                      require_jobs=True)  # fmt: skip
    assert str(info.value).endswith("requested time <= 0 1; clipped (run > requested) 0)")


def test_kth_clip_mode(kth_path: Path) -> None:
    _, clip = assert_clip_extends_drop(read_swf(kth_path))
    assert clip.clipped_overrun == KTH_CLIPPED
    assert clip.jobs_out == KTH_FILTER_COUNTS["jobs_out"] + KTH_CLIPPED


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "machine_procs", "clipped"), [("CTC-SP2.swf.gz", None, 7174),
                                           ("CEA-Curie.swf.gz", 80640, 5416)]
)  # fmt: skip
def test_real_logs_clip_mode(shared_trace, name: str, machine_procs, clipped: int) -> None:
    _, clip = assert_clip_extends_drop(read_swf(shared_trace(name), machine_procs=machine_procs))
    assert clip.clipped_overrun == clipped


# -- the processor count a simulation occupies ----------------------------------------------------


def test_processor_count_allocated_is_the_table_itself(job_table) -> None:
    jobs = job_table({"alloc_procs": 4, "req_procs": 2}, {"alloc_procs": 1, "req_procs": 3})
    assert with_processor_count(jobs, "allocated", 8) is jobs


def test_processor_count_requested_is_bounded_and_keeps_unknown_requests(job_table) -> None:
    jobs = job_table(
        {"alloc_procs": 4, "req_procs": 2},  # fewer requested than allocated
        {"alloc_procs": 1, "req_procs": 3},  # more requested
        {"alloc_procs": 6, "req_procs": 12},  # more than the machine: bounded to 8
        {"alloc_procs": 5, "req_procs": -1},  # unknown request: the allocated count stays
    )
    out = with_processor_count(jobs, "requested", 8)
    assert out["alloc_procs"].to_list() == [2, 3, 8, 5]
    assert out["req_procs"].to_list() == jobs["req_procs"].to_list()
    assert out.schema == jobs.schema


def test_processor_count_changes_a_hand_worked_schedule(job_table) -> None:
    """Machine of 4. A (t=0, 10 s) was given 4 processors but requested 2; B (t=1, 5 s) needs 2.
    On the allocated counts B waits for A (starts at 10); on the requested ones it starts at
    once (t=1)."""
    import scheduler

    jobs = job_table(
        {"submit_s": 0, "run_s": 10, "req_time_s": 10, "alloc_procs": 4, "req_procs": 2},
        {"submit_s": 1, "run_s": 5, "req_time_s": 5, "alloc_procs": 2, "req_procs": 2},
    )
    starts = {}
    for processors in ("allocated", "requested"):
        trace = Trace(jobs=with_processor_count(jobs, processors, 4), header=SwfHeader(),
                      machine_procs=4)  # fmt: skip
        starts[processors] = scheduler.simulate(trace, "FCFS", "FCFS").jobs["start_s"].to_list()
    assert starts == {"allocated": [0.0, 10.0], "requested": [0.0, 1.0]}


def test_processor_count_unknown_name_is_refused(job_table) -> None:
    with pytest.raises(ConfigurationError, match=r"allocated, requested.*'both'"):
        with_processor_count(job_table({"alloc_procs": 1, "req_procs": 1}), "both", 8)
