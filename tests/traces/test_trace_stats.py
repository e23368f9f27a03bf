"""Trace summaries (scheduler.traces.summary) on hand-made tables and the KTH log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler.core.constants import WEEK_S
from scheduler.traces.summary import trace_summary
from scheduler.traces.swf import SwfHeader, Trace, read_swf

KEYS = {
    "machine_procs",
    "jobs",
    "users",
    "first_submit_s",
    "last_submit_s",
    "span_s",
    "weeks",
    "offered_load",
}


def make_trace(jobs, machine_procs: int = 10) -> Trace:
    return Trace(jobs=jobs, header=SwfHeader(), machine_procs=machine_procs)


def test_hand_made_summary(job_table) -> None:
    jobs = job_table(
        {"submit_s": 100, "user_id": 1, "alloc_procs": 2, "req_procs": 4, "run_s": 50},
        {"submit_s": 300, "user_id": 2, "alloc_procs": -1, "req_procs": 3, "run_s": 100},
        {"submit_s": 200, "user_id": 1, "alloc_procs": 5, "run_s": 0},  # p = 0: no work
        {"submit_s": 250, "user_id": 3, "alloc_procs": 0, "req_procs": -1, "run_s": 9},  # q <= 0
    )
    summary = trace_summary(make_trace(jobs))
    assert set(summary) == KEYS
    assert summary["machine_procs"] == 10
    assert summary["jobs"] == 4
    assert summary["users"] == 3
    assert (summary["first_submit_s"], summary["last_submit_s"]) == (100, 300)
    assert summary["span_s"] == 200
    assert summary["weeks"] == pytest.approx(200 / WEEK_S)
    # (2 * 50 + 3 * 100) processor-seconds over 10 processors x 200 s
    assert summary["offered_load"] == pytest.approx(400 / 2000)


def test_zero_span_counts_as_one_second(job_table) -> None:
    jobs = job_table({"submit_s": 7, "alloc_procs": 1, "run_s": 5, "user_id": 0})
    summary = trace_summary(make_trace(jobs, machine_procs=5))
    assert summary["span_s"] == 1
    assert summary["offered_load"] == pytest.approx(1.0)


def test_empty_trace(job_table) -> None:
    summary = trace_summary(make_trace(job_table()))
    assert summary["jobs"] == 0
    assert summary["span_s"] is None
    assert summary["offered_load"] == 0.0


def test_kth_summary(kth_path: Path) -> None:
    summary = trace_summary(read_swf(kth_path))
    json.dumps(summary)  # plain Python values only
    assert summary["machine_procs"] == 100
    assert summary["jobs"] == 28476
    assert summary["users"] == 214
    assert (summary["first_submit_s"], summary["last_submit_s"]) == (599850, 29363618)
    assert summary["span_s"] == 29363618 - 599850
    assert summary["weeks"] == pytest.approx(47.559, abs=1e-3)
    assert 0.6 < summary["offered_load"] < 0.8  # 0.701: a busy production machine
