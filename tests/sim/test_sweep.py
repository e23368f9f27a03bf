"""simulate_thresholds (one run per Θ sharing the unthresholded prefix) against separate runs
and against the reference simulator; and the pause it relies on (Simulation.run's
pause_overdue_s) on hand-worked cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.naive import naive_simulate
from support.workloads import workloads

from scheduler.core.errors import ConfigurationError
from scheduler.policies import policy_names
from scheduler.sim.engine import Simulation, simulate_arrays
from scheduler.sim.sweep import simulate_thresholds

POLICIES = policy_names()
THRESHOLD_SETS = st.lists(
    st.sampled_from((0.0, 3.0, 5.0, 17.0, 30.0, 60.0, 120.0, math.inf)), min_size=1, max_size=6
)


def _columns(jobs):
    return dict(
        submit_s=np.array([j.submit_s for j in jobs]),
        procs=np.array([float(j.procs) for j in jobs]),
        run_s=np.array([j.run_s for j in jobs]),
        estimate_s=np.array([j.estimate_s for j in jobs]),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workload=workloads(max_jobs=18),
    thresholds=THRESHOLD_SETS,
    primary=st.sampled_from(POLICIES),
    backfill=st.sampled_from(POLICIES),
    threshold_backfill=st.booleans(),
    reservation=st.sampled_from(("default", "classic")),
    outlive=st.sampled_from(("requested", "double")),
)
def test_sweep_equals_separate_runs_and_the_reference(
    workload, thresholds, primary, backfill, threshold_backfill, reservation, outlive
):
    jobs, machine_procs = workload
    columns = _columns(jobs)
    extra = dict(
        requested_s=np.array([j.requested_s for j in jobs]),
        job_id=np.array([float(j.job_id) for j in jobs]),
        reservation=reservation, outlive=outlive,
    )  # fmt: skip
    policies = dict(primary=primary, backfill=backfill, threshold_backfill=threshold_backfill)
    swept = simulate_thresholds(*columns.values(), machine_procs, thresholds, **policies, **extra)
    assert len(swept) == len(thresholds)
    for theta, starts in zip(thresholds, swept, strict=True):
        separate = simulate_arrays(
            *columns.values(), machine_procs, threshold_s=theta, **policies, **extra
        )
        np.testing.assert_array_equal(starts, separate, err_msg=f"Θ = {theta}")
        reference = naive_simulate(
            jobs, machine_procs, threshold_s=None if math.isinf(theta) else theta,
            **policies, reservation=reservation, outlive=outlive,
        )  # fmt: skip
        want = [reference[j.job_id].start_s for j in jobs]
        np.testing.assert_array_equal(starts, want, err_msg=f"Θ = {theta} (reference)")


def test_results_are_independent_arrays():
    submit = np.array([0.0, 0.0, 1.0])
    swept = simulate_thresholds(submit, np.ones(3), np.full(3, 10.0), np.full(3, 10.0), 1,
                                [math.inf, 50.0, 50.0])  # fmt: skip
    swept[0][0] = -1.0
    assert swept[1][0] == 0.0 and swept[2][0] == 0.0


def test_pause_stops_before_the_first_pass_a_threshold_changes():
    # one processor; job 0 runs [0, 10), job 1 (submitted at 1) waits until 10, job 2 arrives
    # at 4 and waits too. With pause at 2 s under LCFS: at instant 4 job 1 has waited 3 s > 2 s
    # but no job fits, so the pass is the same under Θ = 2 s; at 10 LCFS starts job 2 while
    # Θ would start the overdue job 1 first: the run stops there, after the completion of job
    # 0 and before the pass (instants 0, 1 and 4 processed).
    submit = np.array([0.0, 1.0, 4.0])
    jobs = (submit, np.ones(3), np.full(3, 10.0), np.full(3, 10.0), 1)
    lcfs = {"primary": "LCFS", "backfill": "LCFS"}
    sim = Simulation(*jobs)
    assert sim.run(pause_overdue_s=2.0, **lcfs) == 3
    assert not sim.done
    np.testing.assert_array_equal(sim.start_s, [0.0, np.nan, np.nan])
    # the pending pass runs first when the run goes on: as an uninterrupted run
    sim.run(**lcfs)
    np.testing.assert_array_equal(sim.start_s, simulate_arrays(*jobs, **lcfs))
    # ... and a copy finished under Θ = 2 s is the separate run under Θ
    sim = Simulation(*jobs)
    sim.run(pause_overdue_s=2.0, **lcfs)
    twin = sim.copy()
    twin.run(threshold_s=2.0, **lcfs)
    np.testing.assert_array_equal(twin.start_s, [0.0, 10.0, 20.0])
    np.testing.assert_array_equal(twin.start_s, simulate_arrays(*jobs, threshold_s=2.0, **lcfs))
    # a pause at exactly the waited time does not stop (overdue means waited *more* than Θ)
    sim = Simulation(*jobs)
    assert sim.run(pause_overdue_s=9.0, **lcfs) == 6  # at 10 job 1 waited 9 s; at 20, 19 s
    assert sim.done
    # FCFS: overdue jobs come first in its own order, so no pass ever changes and no pause
    sim = Simulation(*jobs)
    assert sim.run(pause_overdue_s=0.0) == 6
    assert sim.done


def test_copy_is_independent():
    submit = np.array([0.0, 1.0, 4.0])
    sim = Simulation(submit, np.ones(3), np.full(3, 10.0), np.full(3, 10.0), 1)
    sim.run(until_s=2.0)
    twin = sim.copy()
    twin.run(primary="LCFS", backfill="LCFS")
    assert not sim.done and twin.done
    sim.run()
    np.testing.assert_array_equal(sim.start_s, [0.0, 10.0, 20.0])
    np.testing.assert_array_equal(twin.start_s, [0.0, 20.0, 10.0])


@pytest.mark.parametrize("bad", [-1.0, math.nan])
def test_bad_threshold_is_refused(bad):
    with pytest.raises(ConfigurationError, match="thresholds"):
        simulate_thresholds(np.zeros(1), np.ones(1), np.ones(1), np.ones(1), 1, [bad])
