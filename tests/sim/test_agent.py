"""EASY with an outside chooser (scheduler.sim.agent): against the reference EASY
(tests/support/naive.py) for every policy, job by job, and a step-by-step FCFS agent against the
base engine on a real log."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.naive import naive_simulate
from support.workloads import workloads

from scheduler import simulate_arrays, strong_filter
from scheduler.policies import policy_names
from scheduler.sim.agent import FEATURE_NAMES, AgentSimulation
from scheduler.sim.engine import job_table
from scheduler.traces.swf import read_swf

KTH_SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"


def agent(jobs, machine_procs, **kwargs) -> AgentSimulation:
    return AgentSimulation(
        np.array([j.submit_s for j in jobs]), np.array([j.procs for j in jobs], float),
        np.array([j.run_s for j in jobs]), np.array([j.estimate_s for j in jobs]),
        machine_procs, requested_s=np.array([j.requested_s for j in jobs]),
        job_id=np.array([j.job_id for j in jobs]), **kwargs,
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    workloads(),
    st.sampled_from(policy_names()),
    st.booleans(),
    st.sampled_from(["default", "classic"]),
    st.sampled_from(["requested", "double"]),
)
def test_a_policy_as_chooser_is_easy_with_fcfs_backfilling(
    workload, policy: str, backfill: bool, reservation: str, outlive: str
) -> None:
    jobs, m = workload
    want = naive_simulate(jobs, m, primary=policy, backfill="FCFS" if backfill else None,
                          reservation=reservation, outlive=outlive)  # fmt: skip
    sim = agent(jobs, m, backfill=backfill, reservation=reservation, outlive=outlive)
    starts = sim.run_policy(policy)
    for job, start, backfilled in zip(jobs, starts, sim.backfilled, strict=True):
        assert (start, bool(backfilled)) == (want[job.job_id].start_s, want[job.job_id].backfilled)


def kth_jobs():
    jobs, _ = job_table(strong_filter(read_swf(KTH_SLICE))[0].jobs, "requested")
    return [jobs[c].to_numpy().astype(np.float64) for c in
            ("submit_s", "procs", "run_s", "estimate_s", "requested_s", "job_id")]  # fmt: skip


@pytest.mark.parametrize("backfill", [True, False])
def test_first_job_agent_step_by_step_is_the_fcfs_engine(backfill: bool) -> None:
    submit, procs, run, est, req, ids = kth_jobs()
    m = int(read_swf(KTH_SLICE).machine_procs)
    sim = AgentSimulation(submit, procs, run, est, m, requested_s=req, job_id=ids,
                          backfill=backfill)  # fmt: skip
    obs = np.zeros((16, len(FEATURE_NAMES)), np.float32)
    rows = np.zeros(16, np.int64)
    while sim.decide():
        waiting = sim.observe(obs, rows, wait_scale_s=3600.0, estimate_scale_s=1e5)
        # some waiting job fits (in the window unless more jobs wait than it shows)
        assert rows[0] >= 0 and (obs[:, 3].max() == 1.0 or waiting > len(rows))
        sim.act(int(rows[0]))
    want = simulate_arrays(submit, procs, run, est, m, requested_s=req, job_id=ids,
                           backfill="FCFS" if backfill else None)  # fmt: skip
    assert np.array_equal(sim.start_s, want)
    assert sim.decisions >= len(submit)


def test_observation_rows() -> None:
    # 4 processors; job 0 (3 procs) runs from 0; at t=10 jobs 1 (2 procs) and 2 (1 proc) wait
    sim = AgentSimulation(np.array([0.0, 5, 10]), np.array([3.0, 2, 1]),
                          np.array([100.0, 50, 20]), np.array([100.0, 60, 30]), 4)  # fmt: skip
    assert sim.decide()
    sim.act(0)
    assert sim.decide() and sim.now_s == 10.0  # at t=5 job 1 does not fit: no decision
    obs = np.zeros((3, len(FEATURE_NAMES)), np.float32)
    rows = np.zeros(3, np.int64)
    assert sim.observe(obs, rows, wait_scale_s=10.0, estimate_scale_s=120.0) == 2
    assert rows.tolist() == [1, 2, -1]
    np.testing.assert_allclose(obs[0], [0.5, 0.5, 0.5, 0.0, 1.0, 0.25, 2 / 3])
    np.testing.assert_allclose(obs[1], [0.0, 0.25, 0.25, 1.0, 1.0, 0.25, 2 / 3])
    np.testing.assert_allclose(obs[2], [0, 0, 0, 0, 0, 0, 0])  # no job: zero


def test_choosing_a_job_that_is_not_waiting_is_refused() -> None:
    sim = AgentSimulation(np.array([0.0, 5]), np.array([1.0, 1]), np.array([10.0, 10]),
                          np.array([10.0, 10]), 2)  # fmt: skip
    with pytest.raises(RuntimeError, match="decide"):
        sim.act(0)
    assert sim.decide() and sim.decide()  # idempotent while pending
    with pytest.raises(ValueError, match="job 1 is not waiting"):
        sim.act(1)  # not submitted yet
    sim.act(0)
    assert sim.decide()
    with pytest.raises(ValueError, match="job 0 is not waiting"):
        sim.act(0)
