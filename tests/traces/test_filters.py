"""The strong filter (scheduler.traces.filters): each rule, their order, the report, real logs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from support.expected import KTH_FILTER_COUNTS

from scheduler.core.constants import SWF_COLUMNS, SWF_SCHEMA
from scheduler.traces.filters import FilterReport, strong_filter
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
