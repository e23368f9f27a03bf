"""Batsim's JSON workload and jobs.csv (``scheduler.traces.batsim``): hand-worked files, the
round trip SWF -> JSON -> simulation, and errors that name the file, job and field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from scheduler.core.errors import ConfigurationError, TraceFormatError
from scheduler.sim.api import simulate
from scheduler.traces.batsim import (
    BATSIM_JOB_COLUMNS,
    BATSIM_JOB_SCHEMA,
    read_batsim_jobs,
    read_batsim_workload,
    write_batsim_jobs,
    write_batsim_workload,
)
from scheduler.traces.filters import strong_filter
from scheduler.traces.swf import SwfHeader, Trace, read_swf, write_swf


def small_trace(job_table: Callable[..., pl.DataFrame]) -> Trace:
    """Three jobs on 8 processors: an allocated count, a requested one only, no requested
    time; two share a run time (one profile)."""
    jobs = job_table(
        {"job_id": 7, "submit_s": 0, "run_s": 100, "alloc_procs": 4, "req_procs": 8,
         "req_time_s": 200, "user_id": 3},
        {"job_id": 9, "submit_s": 5, "run_s": 30, "req_procs": 2, "req_time_s": 60},
        {"job_id": 12, "submit_s": 5, "run_s": 100, "alloc_procs": 8, "req_procs": 8},
    )  # fmt: skip
    return Trace(jobs=jobs, header=SwfHeader(), machine_procs=8, path="/somewhere/small.swf")


def test_workload_hand_worked(job_table, tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    write_batsim_workload(small_trace(job_table), path)
    document = json.loads(path.read_text())
    assert document["nb_res"] == 8
    assert document["description"] == "written by schedlab 0.1.0 from small.swf"
    assert document["jobs"] == [
        {"id": 7, "profile": "100", "res": 4, "subtime": 0, "walltime": 200},
        {"id": 9, "profile": "30", "res": 2, "subtime": 5, "walltime": 60},
        {"id": 12, "profile": "100", "res": 8, "subtime": 5},  # unknown requested time
    ]
    assert document["profiles"] == {
        "30": {"delay": 30, "type": "delay"},
        "100": {"delay": 100, "type": "delay"},
    }
    assert list(document["profiles"]) == ["30", "100"]  # by delay
    first = path.read_bytes()
    write_batsim_workload(small_trace(job_table), path)
    assert path.read_bytes() == first  # deterministic
    write_batsim_workload(small_trace(job_table), path, profile_type="DelayProfile")
    profiles = json.loads(path.read_text())["profiles"]
    assert {p["type"] for p in profiles.values()} == {"DelayProfile"}


def test_workload_read_back(job_table, tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    write_batsim_workload(small_trace(job_table), path)
    trace = read_batsim_workload(path)
    assert trace.machine_procs == 8
    jobs = trace.jobs
    assert jobs["job_id"].to_list() == [7, 9, 12]
    assert jobs["submit_s"].to_list() == [0, 5, 5]
    assert jobs["run_s"].to_list() == [100, 30, 100]
    assert jobs["alloc_procs"].to_list() == jobs["req_procs"].to_list() == [4, 2, 8]
    assert jobs["req_time_s"].to_list() == [200, 60, -1]
    unknown = [c for c in jobs.columns
               if c not in ("job_id", "submit_s", "run_s", "alloc_procs", "req_procs",
                            "req_time_s")]  # fmt: skip
    assert jobs.select(unknown).to_numpy().tolist() == [[-1] * len(unknown)] * 3
    assert "; MaxJobs: 3" in trace.header.lines and "; MaxProcs: 8" in trace.header.lines
    # and on to SWF: read_swf gets the same table
    write_swf(trace, tmp_path / "w.swf", job_counts=True)
    assert_frame_equal(read_swf(tmp_path / "w.swf").jobs, jobs)


def test_workload_round_trip_simulates_alike(kth_path: Path, tmp_path: Path) -> None:
    """SWF -> Batsim JSON -> read -> simulate gives the start times of simulating the SWF."""
    trace, _ = strong_filter(read_swf(kth_path))
    path = tmp_path / "kth.json"
    write_batsim_workload(trace, path)
    back = read_batsim_workload(path)
    assert back.jobs.height == trace.jobs.height == 27992
    direct = simulate(trace, "SPF", "FCFS", "40h").jobs
    via_json = simulate(back, "SPF", "FCFS", "40h").jobs
    assert via_json["job_id"].to_list() == direct["job_id"].to_list()
    assert via_json["start_s"].to_list() == direct["start_s"].to_list()
    assert direct["wait_s"].sum() > 0  # a schedule with waits, not a trivial one


def test_read_foreign_workload(tmp_path: Path) -> None:
    """Ids as Batsim allows them, walltime -1 or absent, Batsim 5's profile type."""
    document = {
        "nb_res": 4,
        "jobs": [
            {"id": "w0!5", "subtime": 0, "res": 1, "profile": "a", "walltime": -1},
            {"id": "6", "subtime": 2.0, "res": 4, "profile": "b"},
            {"id": 3, "subtime": 3, "res": 2, "profile": "a", "walltime": 20},
        ],
        "profiles": {"a": {"type": "delay", "delay": 10}, "b": {"type": "DelayProfile",
                                                               "delay": 5.0}},
    }  # fmt: skip
    path = tmp_path / "w.json"
    path.write_text(json.dumps(document))
    jobs = read_batsim_workload(path).jobs
    assert jobs["job_id"].to_list() == [5, 6, 3]
    assert jobs["req_time_s"].to_list() == [-1, -1, 20]
    assert jobs["run_s"].to_list() == [10, 5, 10]
    assert read_batsim_workload(path, machine_procs=16).machine_procs == 16


def test_string_ids_renumbered_and_times_rounded(tmp_path: Path) -> None:
    document = {
        "nb_res": 4,
        "jobs": [
            {"id": "delay", "subtime": 0.4, "res": 1, "profile": "p", "walltime": 30},
            {"id": "simple", "subtime": 1.5, "res": 2, "profile": "p"},
        ],
        "profiles": {"p": {"type": "delay", "delay": 20.25}},
    }
    path = tmp_path / "w.json"
    path.write_text(json.dumps(document))
    with pytest.raises(TraceFormatError, match=r"jobs\[0\]\.id.*job \"delay\".*renumber"):
        read_batsim_workload(path)
    with pytest.raises(TraceFormatError, match=r"jobs\[0\]\.subtime.*whole seconds"):
        read_batsim_workload(path, renumber=True)
    jobs = read_batsim_workload(path, renumber=True, round_times=True).jobs
    assert jobs["job_id"].to_list() == [1, 2]  # file order
    assert jobs["submit_s"].to_list() == [0, 2]  # halves away from zero
    assert jobs["run_s"].to_list() == [20, 20]


def _workload(tmp_path: Path, **change: object) -> Path:
    document: dict[str, object] = {
        "nb_res": 4,
        "jobs": [
            {"id": 1, "subtime": 0, "res": 1, "profile": "p"},
            {"id": 2, "subtime": 1, "res": 2, "profile": "p"},
        ],
        "profiles": {"p": {"type": "delay", "delay": 10},
                     "par": {"type": "parallel", "cpu": [1e6], "com": [0]}},
    }  # fmt: skip
    job = change.pop("job", None)
    if job is not None:
        document["jobs"][1] = job  # type: ignore[index]
    document.update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"job": {"id": 2, "subtime": 1, "res": 2, "profile": "par"}}, "jobs[1].profile",
         'job 2: expected a delay profile .*found a string "par"; its profile has type "parallel"'),
        ({"job": {"id": 2, "subtime": 1, "res": 2, "profile": "nope"}}, "jobs[1].profile",
         "a profile defined in profiles"),
        ({"job": {"id": 2, "subtime": -1, "res": 2, "profile": "p"}}, "jobs[1].subtime",
         "seconds >= 0"),
        ({"job": {"id": 2, "subtime": 1, "res": 1.5, "profile": "p"}}, "jobs[1].res",
         "an integer number of processors"),
        ({"job": {"id": 2, "subtime": 1, "res": 2, "profile": "p", "walltime": 0}},
         "jobs[1].walltime", "> 0, or -1"),
        ({"job": {"id": 2, "res": 2, "profile": "p"}}, "jobs[1].subtime", "no such key"),
        ({"job": {"id": 1, "subtime": 1, "res": 2, "profile": "p"}}, "job_id",
         "job number 1 appears 2 times"),
        ({"job": [1, 2]}, "jobs[1]", "a job object, found an array"),
        ({"nb_res": 0}, "nb_res", "a positive integer.*machine_procs"),
        ({"jobs": []}, "jobs", "a non-empty array"),
        ({"profiles": {"p": {"type": "delay", "delay": 0}}}, "profiles.p.delay",
         "a delay > 0"),
    ],
)  # fmt: skip
def test_bad_workloads_name_file_job_and_field(
    tmp_path: Path, change: dict[str, object], field: str, message: str
) -> None:
    path = _workload(tmp_path, **change)
    with pytest.raises(TraceFormatError, match=message) as caught:
        read_batsim_workload(path)
    assert caught.value.path == str(path)
    assert caught.value.field == field


def test_not_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text('{\n  "nb_res": 4,\n  "jobs": [,]\n}\n')
    with pytest.raises(TraceFormatError, match="expected a JSON document") as caught:
        read_batsim_workload(path)
    assert caught.value.line == 3
    with pytest.raises(TraceFormatError, match="file not found; expected a Batsim JSON"):
        read_batsim_workload(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"run_s": 0}, r"job 9 \(row 2: run_s 0\) has a run time <= 0"),
        ({"alloc_procs": -1, "req_procs": -1}, "job 9 .* has no processor count"),
        ({"alloc_procs": 9}, "job 9 .* more processors than the machine's 8"),
        ({"submit_s": -5}, "job 9 .* negative submit time"),
    ],
)
def test_write_refuses_what_batsim_cannot_run(
    job_table, tmp_path: Path, row: dict[str, int], message: str
) -> None:
    trace = small_trace(job_table)
    trace = trace.with_jobs(trace.jobs.with_columns(
        pl.when(pl.col("job_id") == 9).then(pl.lit(value)).otherwise(pl.col(name)).alias(name)
        for name, value in row.items()
    ))  # fmt: skip
    with pytest.raises(ConfigurationError, match=message):
        write_batsim_workload(trace, tmp_path / "w.json")
    assert not list(tmp_path.iterdir())  # nothing written
    with pytest.raises(ConfigurationError, match="profile_type must be one of"):
        write_batsim_workload(small_trace(job_table), tmp_path / "w.json", profile_type="x")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# jobs.csv
# --------------------------------------------------------------------------------------------

#: Two rows as Batsim 4 writes them (its JobsTracer): six decimals, quoted metadata, and a
#: rejected job with empty times.
BATSIM_CSV = (
    ",".join(BATSIM_JOB_COLUMNS) + "\n"
    "1,w0,10,0.000000,2,20.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000000,10.000000,"
    '0.000000,10.000000,1.000000,0-1,-1.000000,""\n'
    'two,w0,5,1.500000,4,-1.000000,0,REJECTED,,,,,,,,,""\n'
)


def test_jobs_csv_reads_batsim_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(BATSIM_CSV)
    table = read_batsim_jobs(path)
    assert table.schema == pl.Schema(BATSIM_JOB_SCHEMA)
    assert table["job_id"].to_list() == ["1", "two"]
    assert table["allocated_resources"].to_list() == ["0-1", None]
    assert table["starting_time"].to_list() == [0.0, None]
    assert table["metadata"].to_list() == ["", ""]
    out = tmp_path / "again.csv"
    write_batsim_jobs(table, out)
    assert out.read_text() == BATSIM_CSV  # byte for byte Batsim's layout
    assert_frame_equal(read_batsim_jobs(out), table)


def test_jobs_csv_errors(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(BATSIM_CSV.replace("1,w0,10,0.000000,2,", "1,w0,10,soon,2,"))
    with pytest.raises(
        TraceFormatError, match="job '1': expected a number, found 'soon'"
    ) as caught:
        read_batsim_jobs(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (
        str(path),
        2,
        "submission_time",
    )
    path.write_text(BATSIM_CSV.replace("stretch,", "strech,"))
    with pytest.raises(TraceFormatError, match="column stretch") as caught:
        read_batsim_jobs(path)
    assert caught.value.field == "stretch"
    no_metadata = pl.DataFrame({name: ["1"] for name in BATSIM_JOB_COLUMNS[:-1]})
    with pytest.raises(ConfigurationError, match=r"lacks Batsim column\(s\) \['metadata'\]"):
        write_batsim_jobs(no_metadata, tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()
