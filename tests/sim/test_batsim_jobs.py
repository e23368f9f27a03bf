"""A schedule as Batsim's jobs.csv (``scheduler.sim.batsim_jobs``): a hand-worked schedule,
runs that did not complete, and evalys itself reading schedlab's file and finding schedlab's
waits and utilisation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from scheduler.sim.api import simulate
from scheduler.sim.assignment import assign_processors
from scheduler.sim.batsim_jobs import batsim_jobs, write_schedule_batsim
from scheduler.sim.schedule import Schedule, schedule_of
from scheduler.traces.batsim import BATSIM_JOB_COLUMNS, read_batsim_jobs
from scheduler.traces.filters import strong_filter
from scheduler.traces.swf import SwfHeader, Trace, read_swf


def test_hand_worked_schedule(job_table, tmp_path: Path) -> None:
    """4 processors, FCFS with EASY: job 1 (3 procs, 10 s) runs at 0; job 2 (2 procs) waits
    for it; job 3 (1 proc, 5 s) backfills beside job 1 on the free processor."""
    jobs = job_table(
        {"submit_s": 0, "run_s": 10, "alloc_procs": 3, "req_procs": 3, "req_time_s": 10},
        {"submit_s": 1, "run_s": 4, "alloc_procs": 2, "req_procs": 2, "req_time_s": 8},
        {"submit_s": 2, "run_s": 5, "alloc_procs": 1, "req_procs": 1, "req_time_s": 6},
    )
    result = simulate(Trace(jobs=jobs, header=SwfHeader(), machine_procs=4), "FCFS", "FCFS")
    path = tmp_path / "jobs.csv"
    write_schedule_batsim(result, path)
    table = read_batsim_jobs(path)
    assert table.columns == list(BATSIM_JOB_COLUMNS)
    rows = {row["job_id"]: row for row in table.iter_rows(named=True)}
    assert set(rows) == {"1", "2", "3"}
    one, two, three = rows["1"], rows["2"], rows["3"]
    assert (one["starting_time"], one["finish_time"], one["waiting_time"]) == (0.0, 10.0, 0.0)
    assert (three["starting_time"], three["finish_time"]) == (2.0, 7.0)  # backfilled
    assert (two["starting_time"], two["waiting_time"], two["turnaround_time"]) == (10, 9, 13)
    assert two["stretch"] == pytest.approx(13 / 4)
    assert (one["requested_time"], three["requested_time"]) == (10.0, 6.0)
    assert [rows[j]["profile"] for j in "123"] == ["10", "4", "5"]
    # best fit: job 1 takes 0-2, job 3 the processor left, job 2 any two after job 1 ends
    assert (one["allocated_resources"], three["allocated_resources"]) == ("0-2", "3")
    assert two["allocated_resources"] == "0-1"
    assert {r["final_state"] for r in rows.values()} == {"COMPLETED_SUCCESSFULLY"}
    assert {r["success"] for r in rows.values()} == {1}
    assert {r["workload_name"] for r in rows.values()} == {"w0"}
    # a requested time unknown (-1) or absent: Batsim's "no walltime", -1
    unknown = jobs.with_columns(pl.when(pl.col("job_id") == 3).then(-1)
                                .otherwise(pl.col("req_time_s")).alias("req_time_s"))  # fmt: skip
    walltimes = batsim_jobs(schedule_of(result), requested=unknown.filter(pl.col("job_id") > 1))
    assert dict(walltimes.select("job_id", "requested_time").iter_rows()) == {
        "1": -1.0,
        "2": 8.0,
        "3": -1.0,
    }


def test_runs_that_did_not_complete() -> None:
    """Job 5 killed once (redirection), job 6 failed once for lack of memory: each earlier run
    is a row ``<job>#k`` with success 0, the completing run keeps the job number."""
    runs = pl.DataFrame(
        {
            "job_id": [5, 6, 5, 6],
            "submit_s": [0, 0, 0, 0],
            "start_s": [0.0, 0.0, 4.0, 3.0],
            "end_s": [4.0, 3.0, 14.0, 9.0],
            "procs": [2, 2, 2, 2],
            "run_s": [10, 6, 10, 6],
            "pool": [0, 0, 0, 0],
            "final": [False, False, True, True],
            "failed": [False, True, False, False],
        }
    ).sort("start_s", "job_id")
    assignment = assign_processors(
        runs["start_s"].to_numpy(), runs["end_s"].to_numpy(), runs["procs"].to_numpy(), 4
    )
    schedule = Schedule(runs=runs, pools=(("machine", 4),), assignment=assignment)
    table = batsim_jobs(schedule, workload="w1")
    got = {row["job_id"]: row for row in table.iter_rows(named=True)}
    assert set(got) == {"5#1", "6#1", "5", "6"}
    assert (got["5#1"]["final_state"], got["5#1"]["success"]) == ("COMPLETED_KILLED", 0)
    assert (got["6#1"]["final_state"], got["6#1"]["success"]) == ("COMPLETED_FAILED", 0)
    assert (got["5"]["final_state"], got["5"]["success"]) == ("COMPLETED_SUCCESSFULLY", 1)
    assert got["5"]["waiting_time"] == 4.0  # from the job's submission (Batsim's definition)
    assert got["5#1"]["execution_time"] == 4.0
    assert table["workload_name"].unique().to_list() == ["w1"]


@pytest.fixture(scope="module")
def kth_jobs_csv(kth_path: Path, tmp_path_factory: pytest.TempPathFactory):
    """The filtered KTH-SP2 log under EASY(SPF, FCFS, 40 h), written as jobs.csv."""
    trace, _ = strong_filter(read_swf(kth_path))
    result = simulate(trace, "SPF", "FCFS", "40h")
    path = tmp_path_factory.mktemp("batsim") / "jobs.csv"
    write_schedule_batsim(result, path)
    return result, path


@pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning")
def test_evalys_reads_schedlab_jobs_csv(kth_jobs_csv) -> None:
    """evalys's own reader: the same jobs, waits, processors and utilisation as schedlab's."""
    import evalys.jobset as jobset_module
    from evalys.metrics import load_mean

    result, path = kth_jobs_csv
    machine = result.config.machine_procs
    jobset = jobset_module.JobSet.from_csv(str(path), resource_bounds=(0, machine - 1))
    frame = pl.from_pandas(jobset.df[["jobID", "waiting_time", "proc_alloc",
                                      "requested_number_of_resources"]])  # fmt: skip
    ours = result.jobs.select(pl.col("job_id").cast(pl.String).alias("jobID"), "wait_s", "procs")
    joined = ours.join(frame, on="jobID", how="full", validate="1:1")
    assert joined.height == result.jobs.height == 27992
    assert joined["wait_s"].to_list() == joined["waiting_time"].to_list()
    # each job got as many processors (the interval set evalys parsed) as it asked for
    assert joined["proc_alloc"].to_list() == joined["procs"].to_list()
    assert joined["requested_number_of_resources"].to_list() == joined["procs"].to_list()
    assert jobset.df["waiting_time"].mean() == pytest.approx(result.summary.avg_wait_s, rel=1e-12)
    # evalys's mean load: processor-seconds over [first start, last end], in processors;
    # schedlab's utilisation: the same area over m * [first submit, last end]
    starts, ends = result.jobs["start_s"].to_numpy(), result.jobs["end_s"].to_numpy()
    busy_window = float(ends.max() - starts.min())
    evalys_util = load_mean(jobset.utilisation) / machine * busy_window / result.summary.makespan_s
    assert evalys_util == pytest.approx(result.summary.utilisation, rel=1e-9)
    assert 0.5 < result.summary.utilisation < 1.0  # a loaded machine: the check means something
    # at no instant more processors busy than the machine has (a valid assignment)
    assert int(jobset.utilisation["load"].max()) <= machine


def test_assignment_is_valid_on_kth(kth_jobs_csv) -> None:
    """No processor serves two overlapping jobs in the written file (checked from the text)."""
    _, path = kth_jobs_csv
    table = read_batsim_jobs(path).sort("starting_time")
    free_at = np.zeros(100)
    for start, end, text in table.select(
        "starting_time", "finish_time", "allocated_resources"
    ).iter_rows():
        procs = []
        for part in text.split():
            lo, _, hi = part.partition("-")
            procs.extend(range(int(lo), int(hi or lo) + 1))
        assert (free_at[procs] <= start).all()
        free_at[procs] = end


def test_schedule_argument_and_order(kth_jobs_csv, tmp_path: Path) -> None:
    result, path = kth_jobs_csv
    again = tmp_path / "jobs.csv"
    write_schedule_batsim(schedule_of(result), again)
    from_schedule = read_batsim_jobs(again)
    assert (from_schedule["requested_time"] == -1).all()  # a Schedule has no requested times
    assert_same = read_batsim_jobs(path).drop("requested_time")
    assert from_schedule.drop("requested_time").equals(assert_same)
