"""The compiled simulator against the reference implementation (tests/support/naive.py), job by
job.

Hypothesis draws small workloads (integer seconds, so the two implementations' floating-point
keys order alike), machine sizes, policy pairs, thresholds, the backfill order (plain or
thresholded), reservation and outlive rules; start times must be identical, and so must the
"started by backfilling" flags.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.adapters import fast_simulation
from support.naive import NaiveJob, naive_simulate
from support.workloads import workloads

from scheduler.policies import policy_names

POLICIES = policy_names()
THRESHOLDS = (None, 0.0, 5.0, 30.0, 120.0)


def assert_same_schedule(jobs: list[NaiveJob], machine_procs: int, **kwargs) -> None:
    expected = naive_simulate(jobs, machine_procs, **kwargs)
    simulation = fast_simulation(jobs, machine_procs, **kwargs)
    for job, start, backfilled in zip(jobs, simulation.start_s, simulation.backfilled, strict=True):
        want = expected[job.job_id]
        assert (start, bool(backfilled)) == (want.start_s, want.backfilled), (
            f"job {job.job_id}: fast starts at {start} (backfilled={bool(backfilled)}), "
            f"reference at {want.start_s} (backfilled={want.backfilled}) with {kwargs}"
        )


def quarter_seconds(jobs: list[NaiveJob]) -> list[NaiveJob]:
    """``jobs`` with every time divided by 4 (exact in binary): instants less than 1 s apart,
    where the time of an outlive revision (``now + 1``) decides."""
    return [replace(j, submit_s=j.submit_s / 4, run_s=j.run_s / 4, estimate_s=j.estimate_s / 4,
                    requested_s=j.requested_s / 4) for j in jobs]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workload=workloads(),
    primary=st.sampled_from(POLICIES),
    backfill=st.one_of(st.none(), st.sampled_from(POLICIES)),
    outlive=st.sampled_from(["requested", "double"]),
)
def test_fast_equals_reference_on_quarter_seconds(workload, primary, backfill, outlive):
    jobs, machine_procs = workload
    assert_same_schedule(quarter_seconds(jobs), machine_procs, primary=primary,
                         backfill=backfill, outlive=outlive)  # fmt: skip


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workload=workloads(),
    primary=st.sampled_from(POLICIES),
    backfill=st.one_of(st.none(), st.sampled_from(POLICIES)),
    threshold_s=st.sampled_from(THRESHOLDS),
    reservation=st.sampled_from(["default", "classic"]),
    outlive=st.sampled_from(["requested", "double"]),
    threshold_backfill=st.booleans(),
)
def test_fast_equals_reference(
    workload, primary, backfill, threshold_s, reservation, outlive, threshold_backfill
):
    jobs, machine_procs = workload
    assert_same_schedule(
        jobs,
        machine_procs,
        primary=primary,
        backfill=backfill,
        threshold_s=threshold_s,
        reservation=reservation,
        outlive=outlive,
        threshold_backfill=threshold_backfill,
    )


def fast_schedule(jobs: list[NaiveJob], machine_procs: int, **kwargs) -> tuple[list, list]:
    simulation = fast_simulation(jobs, machine_procs, **kwargs)
    return simulation.start_s.tolist(), simulation.backfilled.tolist()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workload=workloads(),
    primary=st.sampled_from(POLICIES),
    backfill=st.sampled_from(POLICIES),
    reservation=st.sampled_from(["default", "classic"]),
)
def test_threshold_backfill_without_threshold_changes_nothing(
    workload, primary, backfill, reservation
):
    """Θ = ∞: no job is ever overdue, so the thresholded backfill order is the policy's."""
    jobs, machine_procs = workload
    kwargs = {"primary": primary, "backfill": backfill, "reservation": reservation}
    assert fast_schedule(jobs, machine_procs, threshold_backfill=True, **kwargs) == (
        fast_schedule(jobs, machine_procs, **kwargs)
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workload=workloads(),
    primary=st.sampled_from(POLICIES),
    threshold_s=st.sampled_from(THRESHOLDS),
    outlive=st.sampled_from(["requested", "double"]),
)
def test_threshold_backfill_under_fcfs_backfilling_changes_nothing(
    workload, primary, threshold_s, outlive
):
    """Overdue jobs first in submit order, then FCFS, is FCFS: with P_B = FCFS (P = B = FCFS
    in the online study's terms, and any primary besides) the option changes nothing."""
    jobs, machine_procs = workload
    kwargs = {"primary": primary, "backfill": "FCFS", "threshold_s": threshold_s,
              "outlive": outlive}  # fmt: skip
    assert fast_schedule(jobs, machine_procs, threshold_backfill=True, **kwargs) == (
        fast_schedule(jobs, machine_procs, **kwargs)
    )


@pytest.mark.parametrize("threshold_s", THRESHOLDS)
@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_on_a_busy_random_workload(policy, threshold_s):
    # a longer, congested workload (queues of tens of jobs) per policy and threshold: the
    # kernel's sorted lists, dead-entry compaction and sort fallbacks are all exercised
    rng = np.random.default_rng(7)
    n, machine_procs = 300, 32
    run = rng.integers(1, 400, n)
    estimate = np.maximum(run, rng.integers(1, 600, n))
    submit = np.sort(rng.integers(0, 5000, n))
    procs = rng.integers(1, machine_procs + 1, n)
    jobs = [
        NaiveJob(i + 1, float(submit[i]), int(procs[i]), float(run[i]), float(estimate[i]),
                 float(estimate[i]))
        for i in range(n)
    ]  # fmt: skip
    for backfill in (policy, "FCFS", None):
        assert_same_schedule(
            jobs, machine_procs, primary=policy, backfill=backfill, threshold_s=threshold_s
        )
    if threshold_s is not None:  # EASY(P, Θ) of Algorithm 2: backfilling in the thresholded order
        assert_same_schedule(
            jobs, machine_procs, primary=policy, backfill=policy, threshold_s=threshold_s,
            threshold_backfill=True,
        )  # fmt: skip
