"""Times the engines cannot hold exactly are refused, naming the job and the field.

The engines compute in float64, exact to the second only up to 2**53: adding 2**62 s to every
submit time of the KTH-SP2 slice once changed its AvgWait (each time rounded to a multiple of
1024 s). Every engine refuses a submit time beyond ±MAX_TIME_S (2**52 s) and a run, estimated
or requested time above it, so that a submit time plus a run or requested time stays within
2**53 (``scheduler.core.constants.MAX_TIME_S``, ``docs/simulator.md``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import scheduler
from scheduler.core.constants import MAX_TIME_S
from scheduler.core.errors import ConfigurationError
from scheduler.sim.memory import MemoryConfig, simulate_memory
from scheduler.sim.trials import run_trials
from scheduler.sim.window import simulate_window
from scheduler.traces.swf import used_procs

SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"


@pytest.fixture(scope="module")
def kth_slice():
    """The bundled slice, without the jobs wider than a main pool of 90 processors."""
    trace = scheduler.strong_filter(scheduler.read_swf(SLICE))[0]
    return trace.with_jobs(trace.jobs.filter(used_procs() <= 90))


def _shifted(trace, column: str, value: int, row: int | None = None):
    """``trace`` with ``value`` added to ``column`` (of one row, or of every row)."""
    jobs = trace.jobs.with_row_index("_row")
    where = pl.lit(True) if row is None else pl.col("_row") == row
    changed = pl.when(where).then(pl.col(column) + value).otherwise(pl.col(column))
    return trace.with_jobs(jobs.with_columns(changed.alias(column)).drop("_row"))


ENGINES = {
    "simulate": lambda trace: scheduler.simulate(trace),
    "simulate_predicted": lambda trace: scheduler.simulate_predicted(trace, predictor="nag"),
    "simulate_redirect": lambda trace: scheduler.simulate_redirect(trace, alpha=0.1, theta=5),
}


@pytest.mark.parametrize("engine", ENGINES)
def test_submit_times_beyond_2_52_are_refused_naming_the_job(kth_slice, engine):
    """The report's case: 2**62 s added to every submit time of the slice."""
    shifted = _shifted(kth_slice, "submit_s", 2**62)
    first = shifted.jobs.row(0, named=True)
    with pytest.raises(ConfigurationError) as info:
        ENGINES[engine](shifted)
    message = str(info.value)
    assert message.startswith(f"job {first['job_id']} (index 0): submit_s must be ")
    assert "2**52" in message and "float64" in message


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("column", ["run_s", "req_time_s"])
def test_run_and_requested_times_beyond_2_52_are_refused(kth_slice, engine, column):
    row = 7
    job = kth_slice.jobs.row(row, named=True)
    value = MAX_TIME_S + 1 - job[column]
    if column == "run_s":  # keep it within the requested time, or the filter's sense
        shifted = _shifted(_shifted(kth_slice, "req_time_s", value + job["run_s"], row),
                           "run_s", value, row)  # fmt: skip
    else:
        shifted = _shifted(kth_slice, column, value, row)
    # the engines see the requested time as the estimate (or the prediction's start)
    field = {"run_s": "run_s", "req_time_s": "estimate_s"}[column]
    with pytest.raises(ConfigurationError) as info:
        ENGINES[engine](shifted)
    expected = f"job {job['job_id']} (index {row}): {field} must be > 0 and at most 2**52 s"
    assert str(info.value).startswith(expected)


def test_times_at_the_bound_are_accepted_and_exact():
    """2**52 itself is a time the engine takes; the schedule is the one of the same jobs at 0,
    shifted by 2**52, second for second."""
    submit, procs, run = np.array([0.0, 3.0, 5.0]), np.array([2.0, 2.0, 1.0]), np.full(3, 7.0)
    start = scheduler.simulate_arrays(submit, procs, run, run, 2)
    shifted = scheduler.simulate_arrays(submit + MAX_TIME_S - 5.0, procs, run, run, 2)
    np.testing.assert_array_equal(shifted - (MAX_TIME_S - 5.0), start)
    with pytest.raises(ConfigurationError, match=r"job 2 \(index 2\): submit_s"):
        scheduler.simulate_arrays(submit + MAX_TIME_S - 4.0, procs, run, run, 2)
    with pytest.raises(ConfigurationError, match=r"job 0 \(index 0\): submit_s"):
        scheduler.simulate_arrays(submit - MAX_TIME_S - 1.0, procs, run, run, 2)


def test_the_memory_engine_refuses_them_too():
    jobs = pl.DataFrame({
        "job_id": [1, 2], "submit_s": [0.0, float(2**62)], "procs": [1, 1],
        "run_s": [10.0, 10.0], "req_time_s": [10.0, 30.0], "req_mem_mb": [4.0, 4.0],
        "used_mem_mb": [2.0, 2.0], "user_id": [1, 2],
    })  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"^job 2 \(index 1\): submit_s must be .*2\*\*52"):
        simulate_memory(jobs, MemoryConfig(class_nodes=(2,), class_memory_mb=(8.0,)))
    jobs = jobs.with_columns(pl.Series("submit_s", [0.0, 5.0]),
                             pl.Series("req_time_s", [10.0, 2.0**53]))  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"^job 2 \(index 1\): req_time_s must be > 0"):
        simulate_memory(jobs, MemoryConfig(class_nodes=(2,), class_memory_mb=(8.0,)))


def test_the_study_schedulers_refuse_them_too():
    submit, procs, run = np.array([0.0, 2.0**62]), np.ones(2), np.full(2, 10.0)
    with pytest.raises(ConfigurationError, match=r"submit_s of job 1 must be within ±2\*\*52 s"):
        simulate_window(submit, procs, run, run, 4)
    with pytest.raises(ConfigurationError, match=r"run_s must be > 0 and at most 2\*\*52"):
        run_trials(np.zeros(2), procs, np.array([10.0, 2.0**53]), n_state=0, machine_procs=4,
                   n_trials=2, seed=1)  # fmt: skip
