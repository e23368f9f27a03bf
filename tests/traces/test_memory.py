"""The memory study's job tables (scheduler.traces.memory): the memory filter rule by rule and
on LANL-CM5, the offered load of eq. 1 and its scaling to a target."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.constants import SWF_COLUMNS, SWF_SCHEMA
from scheduler.core.errors import ConfigurationError
from scheduler.traces.memory import (
    MEMORY_REMOVAL_RULES,
    memory_filter,
    offered_load,
    scale_to_load,
)
from scheduler.traces.swf import read_swf

ROOT = Path(__file__).resolve().parents[2]
SLICE = ROOT / "resources" / "LANL-CM5-slice.swf.gz"
NODES = 8
LARGEST_KB = 32 * 1024.0
#: A job every rule keeps (memory in KB per processor).
OK = {"submit_s": 0, "run_s": 10, "alloc_procs": 2, "req_procs": 2, "req_time_s": 20,
      "used_mem_kb": 1000.0, "req_mem_kb": 4000.0}  # fmt: skip


def table(*rows: dict) -> pl.DataFrame:
    unknown = dict.fromkeys(SWF_COLUMNS, -1)
    full = [{**unknown, "job_id": i + 1, **OK, **row} for i, row in enumerate(rows)]
    return pl.DataFrame(full, schema=SWF_SCHEMA)


def removed(report: dict) -> int:
    return sum(report[name] for name, _ in MEMORY_REMOVAL_RULES)


@pytest.mark.parametrize(
    ("row", "rule"),
    [
        ({"used_mem_kb": -1.0}, "removed_no_used_memory"),
        ({"used_mem_kb": 0.0}, "removed_no_used_memory"),
        ({"req_mem_kb": -1.0}, "removed_no_requested_memory"),
        ({"alloc_procs": -1, "req_procs": -1}, "removed_no_procs"),
        ({"alloc_procs": NODES, "req_procs": NODES}, "removed_whole_machine"),
        ({"alloc_procs": -1, "req_procs": NODES}, "removed_whole_machine"),
        ({"run_s": 0}, "removed_bad_runtime"),
        ({"submit_s": -5}, "removed_bad_runtime"),
        ({"req_time_s": -1}, "removed_bad_requested_time"),
        (
            {"used_mem_kb": LARGEST_KB + 1, "req_mem_kb": LARGEST_KB + 2},
            "removed_exceeds_largest_node",
        ),
    ],
)
def test_each_rule_removes_and_counts(row: dict, rule: str) -> None:
    jobs, report = memory_filter(table(OK, row), NODES, largest_node_kb=LARGEST_KB,
                                 missing_memory="drop")  # fmt: skip
    assert jobs["job_id"].to_list() == [1]
    assert report[rule] == 1 and removed(report) == 1
    assert report["jobs_in"] == 2 and report["jobs_out"] == 1


def test_a_job_is_counted_under_the_first_rule_only() -> None:
    # no memory at all, the whole machine and no run time: counted once, under rule 1
    row = {"used_mem_kb": -1.0, "req_mem_kb": -1.0, "alloc_procs": NODES, "run_s": 0}
    _, report = memory_filter(table(row), NODES, largest_node_kb=LARGEST_KB,
                              missing_memory="drop")  # fmt: skip
    assert report["removed_no_used_memory"] == 1 and removed(report) == 1
    assert report["jobs_out"] == 0
    # filled, the same job is removed as needing the whole machine
    _, report = memory_filter(table(row), NODES, largest_node_kb=LARGEST_KB)
    assert report["removed_whole_machine"] == 1 and removed(report) == 1


def test_unknown_memory_is_filled_or_dropped() -> None:
    # no request: a whole node (the largest); no use: the request (capped at the largest node)
    rows = (OK, {"req_mem_kb": -1.0, "used_mem_kb": 900.0}, {"used_mem_kb": -1.0},
            {"used_mem_kb": -1.0, "req_mem_kb": -1.0}, {"used_mem_kb": 0.0,
                                                         "req_mem_kb": 2 * LARGEST_KB})  # fmt: skip
    filled, report = memory_filter(table(*rows), NODES, largest_node_kb=LARGEST_KB)
    assert filled["req_mem_kb"].to_list() == [4000.0, LARGEST_KB, 4000.0, LARGEST_KB, LARGEST_KB]
    assert filled["used_mem_kb"].to_list() == [1000.0, 900.0, 4000.0, LARGEST_KB, LARGEST_KB]
    assert report["filled_requested_memory"] == 2 and report["filled_used_memory"] == 3
    assert report["capped_request"] == 1 and report["jobs_out"] == 5 and removed(report) == 0
    assert report["missing_memory"] == "fill"
    dropped, report = memory_filter(table(*rows), NODES, largest_node_kb=LARGEST_KB,
                                    missing_memory="drop")  # fmt: skip
    assert dropped["job_id"].to_list() == [1]
    assert report["removed_no_used_memory"] == 3 and report["removed_no_requested_memory"] == 1
    assert report["filled_requested_memory"] == report["filled_used_memory"] == 0


def test_under_requests_are_raised_or_dropped() -> None:
    rows = (OK, {"used_mem_kb": 5000.0, "req_mem_kb": 3000.0}, {"req_mem_kb": 1000.0})
    raised, report = memory_filter(table(*rows), NODES, largest_node_kb=LARGEST_KB)
    assert raised["req_mem_kb"].to_list() == [4000.0, 5000.0, 1000.0]
    assert report["raised_under_request"] == 1 and report["removed_under_request"] == 0
    assert report["under_request"] == "raise" and report["jobs_out"] == 3
    assert (raised["used_mem_kb"] <= raised["req_mem_kb"]).all()
    dropped, report = memory_filter(table(*rows), NODES, largest_node_kb=LARGEST_KB,
                                    under_request="drop")  # fmt: skip
    assert dropped["job_id"].to_list() == [1, 3]
    assert report["removed_under_request"] == 1 and report["raised_under_request"] == 0


def test_requests_above_the_largest_node_are_capped() -> None:
    rows = (OK, {"req_mem_kb": LARGEST_KB * 2}, {"used_mem_kb": 5000.0, "req_mem_kb": 3000.0})
    jobs, report = memory_filter(table(*rows), NODES, largest_node_kb=LARGEST_KB)
    assert jobs["req_mem_kb"].to_list() == [4000.0, LARGEST_KB, 5000.0]
    assert report["capped_request"] == 1 and report["raised_under_request"] == 1
    assert report["jobs_out"] == 3


def test_survivors_are_sorted_and_the_input_untouched() -> None:
    jobs = table({"submit_s": 50}, {"submit_s": 10}, {"submit_s": 10, "job_id": 0})
    before = jobs.clone()
    kept, _ = memory_filter(jobs, NODES, largest_node_kb=LARGEST_KB)
    assert kept["job_id"].to_list() == [0, 2, 1]
    assert jobs.equals(before)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"under_request": "clip"}, "under_request"),
        ({"missing_memory": "guess"}, "missing_memory must be one of fill, drop"),
        ({"largest_node_kb": 0.0}, "largest_node_kb"),
        ({"largest_node_kb": math.inf}, "largest_node_kb"),
    ],
)
def test_filter_errors_name_the_argument(kwargs: dict, message: str) -> None:
    arguments = {"largest_node_kb": LARGEST_KB} | kwargs
    with pytest.raises(ConfigurationError, match=message):
        memory_filter(table(OK), NODES, **arguments)
    with pytest.raises(ConfigurationError, match="machine_nodes"):
        memory_filter(table(OK), 0, largest_node_kb=LARGEST_KB)


def test_filter_counts_on_the_bundled_lanl_slice() -> None:
    jobs, report = memory_filter(read_swf(SLICE).jobs, 1024, largest_node_kb=LARGEST_KB,
                                 missing_memory="drop")  # fmt: skip
    assert report["jobs_in"] == 10_000
    assert report["removed_no_used_memory"] == 1770
    assert report["removed_no_requested_memory"] == 885
    assert report["removed_whole_machine"] == 0 and report["removed_bad_runtime"] == 1
    assert report["raised_under_request"] == 1648 and report["capped_request"] == 0
    assert report["jobs_out"] == jobs.height == 7344 == 10_000 - removed(report)


def test_filter_counts_on_the_whole_lanl_log(shared_trace) -> None:
    """The paper's numbers: 94,336 jobs with both memory fields, 21,033 of them using more
    than they requested; 6 jobs need all 1,024 nodes (3 of them lack a memory field)."""
    raw = read_swf(shared_trace("LANL-CM5.swf.gz")).jobs
    assert raw.filter(pl.col("alloc_procs") >= 1024).height == 6
    jobs, report = memory_filter(raw, 1024, largest_node_kb=LARGEST_KB, missing_memory="drop")
    assert report["jobs_in"] == 122_060
    assert report["jobs_in"] - report["removed_no_used_memory"] - report[
        "removed_no_requested_memory"] == 94_336  # fmt: skip
    assert report["removed_whole_machine"] == 3 and report["raised_under_request"] == 21_033
    assert report["jobs_out"] == jobs.height == 94_332
    _, drop = memory_filter(raw, 1024, largest_node_kb=LARGEST_KB, under_request="drop",
                            missing_memory="drop")
    assert drop["removed_under_request"] == 21_033 and drop["jobs_out"] == 94_332 - 21_033



def test_filled_whole_log_removes_the_papers_six_jobs(shared_trace) -> None:
    """missing_memory="fill" keeps almost what the paper keeps: every job but the six that need
    all 1,024 nodes, three without a processor count and two without a run time (no slowdown
    can be computed for them)."""
    raw = read_swf(shared_trace("LANL-CM5.swf.gz")).jobs
    jobs, report = memory_filter(raw, 1024, largest_node_kb=LARGEST_KB)
    assert report["removed_whole_machine"] == 6 and report["removed_bad_runtime"] == 2
    assert report["removed_no_procs"] == 3  # three of the six jobs without any memory field
    assert removed(report) == 11 and jobs.height == 122_049
    assert report["filled_requested_memory"] == 11_284 + 6
    assert report["filled_used_memory"] == 16_434 + 6
    assert report["filled_requested_time"] == 11_284 + 6

# -- the offered load (eq. 1) ----------------------------------------------------------------


def test_offered_load_by_hand() -> None:
    # work 2*10 + 4*30 + 1*20 = 160 node-s; a_last = 100 - 10 = 90 s, p_last = 20 s (job 3:
    # the last submission, and the last by number among equal submit times)
    jobs = table(
        {"submit_s": 10, "run_s": 10, "alloc_procs": 2},
        {"submit_s": 100, "run_s": 30, "alloc_procs": 4},
        {"submit_s": 100, "run_s": 20, "alloc_procs": 1},
    )
    assert offered_load(jobs, 4) == pytest.approx(160 / (4 * (90 + 20)))
    # the engine's table (a procs column) gives the same
    engine = jobs.select("job_id", "submit_s", "run_s", pl.col("alloc_procs").alias("procs"))
    assert offered_load(engine, 4) == offered_load(jobs, 4)


def test_scaling_by_hand() -> None:
    jobs = table(
        {"submit_s": 10, "run_s": 10, "alloc_procs": 2},
        {"submit_s": 100, "run_s": 30, "alloc_procs": 4},
        {"submit_s": 100, "run_s": 20, "alloc_procs": 1},
    )
    scaled = scale_to_load(jobs, 4, 0.8)
    # c = (160 / (4 * 0.8) - 20) / 90 = 1/3
    assert scaled["submit_s"].dtype == pl.Float64
    assert scaled["submit_s"].to_list() == pytest.approx([10.0, 40.0, 40.0])
    assert offered_load(scaled, 4) == pytest.approx(0.8, rel=1e-12)
    assert scaled.drop("submit_s").equals(jobs.drop("submit_s"))


@pytest.mark.parametrize("target", [0.3, 0.5, 0.8, 1.0, 1.2])
def test_scaling_hits_the_target_on_the_lanl_slice(target: float) -> None:
    jobs, _ = memory_filter(read_swf(SLICE).jobs, 1024, largest_node_kb=LARGEST_KB)
    scaled = scale_to_load(jobs, 1024, target)
    assert offered_load(scaled, 1024) == pytest.approx(target, rel=0.01)
    assert offered_load(scaled, 1024) == pytest.approx(target, rel=1e-9)
    assert scaled["job_id"].to_list() == jobs["job_id"].to_list()  # the order is kept
    assert scaled["submit_s"].min() == jobs["submit_s"].min()


def test_the_engine_accepts_scaled_submit_times() -> None:
    from scheduler.sim.memory import memory_jobs

    jobs, _ = memory_filter(read_swf(SLICE).jobs.head(200), 1024, largest_node_kb=LARGEST_KB)
    converted = memory_jobs(scale_to_load(jobs, 1024, 0.9))
    assert converted["submit_s"].dtype == pl.Float64 and converted.height == jobs.height
    assert offered_load(converted, 1024) == pytest.approx(0.9, rel=1e-9)


@st.composite
def job_tables(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(2, 40))
    submits = draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n))
    if len(set(submits)) < 2:
        submits[-1] = submits[0] + 1
    runs = draw(st.lists(st.integers(1, 10**5), min_size=n, max_size=n))
    procs = draw(st.lists(st.integers(1, 64), min_size=n, max_size=n))
    rows = [{"submit_s": s, "run_s": r, "alloc_procs": q, "req_procs": q}
            for s, r, q in zip(submits, runs, procs, strict=True)]  # fmt: skip
    return table(*rows)


@settings(max_examples=60, deadline=None)
@given(jobs=job_tables(), target=st.floats(0.01, 5.0))
def test_scaling_hits_any_reachable_target(jobs: pl.DataFrame, target: float) -> None:
    try:
        scaled = scale_to_load(jobs, 64, target)
    except ConfigurationError as error:
        # only when the last job's run time alone keeps the load below the target
        assert "unreachable" in str(error)
        ordered = jobs.sort("submit_s", "job_id")
        work = float((ordered["alloc_procs"] * ordered["run_s"]).sum())
        assert work / (64 * float(ordered["run_s"][-1])) <= target * (1 + 1e-12)
        return
    assert offered_load(scaled, 64) == pytest.approx(target, rel=1e-9)
    order = scaled.sort("submit_s", "job_id", maintain_order=True)["job_id"].to_list()
    assert order == jobs.sort("submit_s", "job_id")["job_id"].to_list()


@pytest.mark.parametrize(
    ("jobs", "target", "message"),
    [
        (table(OK), 0.5, "one instant"),
        (table(OK, OK), 0.5, "one instant"),
        (table({"run_s": 10}, {"submit_s": 10, "run_s": 10**6}), 1.0, "unreachable"),
        (table(OK, {"submit_s": 5}), 0.0, "positive"),
        (table(OK, {"submit_s": 5}), math.nan, "positive"),
    ],
)
def test_scaling_errors(jobs: pl.DataFrame, target: float, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        scale_to_load(jobs, NODES, target)
