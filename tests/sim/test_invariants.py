"""Properties every schedule must have, on random workloads (hypothesis) and on real logs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler import Simulation, policy_names, read_swf, simulate, strong_filter

POLICIES = policy_names()


def max_procs_in_use(start: np.ndarray, run: np.ndarray, procs: np.ndarray) -> int:
    """Peak processor use of a schedule: completions at an instant free before starts use."""
    times = np.concatenate([start, start + run])
    deltas = np.concatenate([procs, -procs])
    # at equal times, releases (negative deltas) come first
    order = np.lexsort((deltas, times))
    return int(np.max(np.cumsum(deltas[order])))


def check_schedule(submit, procs, run, start, machine_procs) -> None:
    assert not np.any(np.isnan(start)), "every job starts"
    assert np.all(start >= submit), "no job starts before its submission"
    assert max_procs_in_use(start, run, procs) <= machine_procs


@st.composite
def random_jobs(draw):
    m = draw(st.integers(1, 64))
    n = draw(st.integers(1, 60))
    ints = st.lists(st.integers(0, 10_000), min_size=n, max_size=n)
    submit = np.array(draw(ints), dtype=np.float64)
    procs = np.array(draw(st.lists(st.integers(1, m), min_size=n, max_size=n)), np.float64)
    run = np.array(draw(st.lists(st.integers(1, 3000), min_size=n, max_size=n)), np.float64)
    slack = np.array(draw(st.lists(st.integers(0, 3000), min_size=n, max_size=n)), np.float64)
    return m, submit, procs, run, run + slack


@settings(max_examples=300, deadline=None)
@given(
    jobs=random_jobs(),
    primary=st.sampled_from(POLICIES),
    backfill=st.one_of(st.none(), st.sampled_from(POLICIES)),
    threshold_s=st.sampled_from([math.inf, 0.0, 600.0, 7200.0]),
    reservation=st.sampled_from(["default", "classic"]),
)
def test_random_schedules_are_feasible(jobs, primary, backfill, threshold_s, reservation):
    m, submit, procs, run, estimate = jobs
    sim = Simulation(submit, procs, run, estimate, m, reservation=reservation)
    sim.run(primary=primary, backfill=backfill, threshold_s=threshold_s)
    assert sim.done
    check_schedule(submit, procs, run, sim.start_s, m)


@settings(max_examples=200, deadline=None)
@given(jobs=random_jobs(), reservation=st.sampled_from(["default", "classic"]))
def test_fcfs_head_never_starts_after_its_reservation(jobs, reservation):
    # with exact estimates, EASY-FCFS-FCFS honours every reservation it makes
    m, submit, procs, run, _ = jobs
    sim = Simulation(submit, procs, run, run, m, reservation=reservation)
    sim.run(primary="FCFS", backfill="FCFS")
    reserved = sim.first_reservation_s
    blocked = ~np.isnan(reserved)
    assert np.all(sim.start_s[blocked] <= reserved[blocked])


@settings(max_examples=100, deadline=None)
@given(jobs=random_jobs(), cut=st.floats(0, 20_000), primary=st.sampled_from(POLICIES))
def test_stopping_and_resuming_changes_nothing(jobs, cut, primary):
    m, submit, procs, run, estimate = jobs
    whole = Simulation(submit, procs, run, estimate, m)
    whole.run(primary=primary, backfill="FCFS", threshold_s=3600.0)
    halves = Simulation(submit, procs, run, estimate, m)
    halves.run(cut, primary=primary, backfill="FCFS", threshold_s=3600.0)
    halves.run(primary=primary, backfill="FCFS", threshold_s=3600.0)
    np.testing.assert_array_equal(whole.start_s, halves.start_s)


@pytest.fixture(scope="module")
def kth(kth_path):
    return strong_filter(read_swf(kth_path))[0]


@pytest.mark.parametrize("policy", ["FCFS", "SPF", "LQF", "LEXP", "WFP3", "F2"])
@pytest.mark.parametrize("threshold", [None, "20h"])
def test_real_log_schedules_are_feasible(kth, policy, threshold):
    result = simulate(kth, primary=policy, backfill="FCFS", threshold=threshold)
    jobs = result.jobs
    submit, procs, run, start = (jobs[c].to_numpy().astype(np.float64)
                                 for c in ("submit_s", "procs", "run_s", "start_s"))  # fmt: skip
    check_schedule(submit, procs, run, start, kth.machine_procs)
    np.testing.assert_array_equal(jobs["end_s"].to_numpy() - start, run)
    assert result.summary.jobs == kth.jobs.height == 27992


def test_same_input_same_schedule(kth):
    first = simulate(kth, primary="LEXP", backfill="SPF", threshold="10h")
    second = simulate(kth, primary="LEXP", backfill="SPF", threshold="10h")
    assert first.jobs.equals(second.jobs)
    assert first.summary == second.summary


def test_fcfs_reservations_hold_on_the_real_log_with_exact_estimates(kth):
    result = simulate(kth, estimate="clairvoyant")
    jobs = result.jobs
    sim = Simulation(
        jobs["submit_s"].to_numpy(), jobs["procs"].to_numpy(), jobs["run_s"].to_numpy(),
        jobs["run_s"].to_numpy(), kth.machine_procs, job_id=jobs["job_id"].to_numpy(),
    )  # fmt: skip
    sim.run()
    reserved = sim.first_reservation_s
    blocked = ~np.isnan(reserved)
    assert blocked.sum() > 1000  # the log is congested: many jobs did wait for a reservation
    assert np.all(sim.start_s[blocked] <= reserved[blocked])
    np.testing.assert_array_equal(sim.start_s, jobs["start_s"].to_numpy())
