"""The benchmark's minimal EASY-FCFS loop (``scheduler/cli/_minimal_easy.py``) against the engine.

It must give the engine's start times exactly: on hypothesis workloads (integer seconds,
under-estimates and runs past the requested time included, so the outlive rule is exercised),
on the whole bundled KTH-SP2 log, and on a small hand-worked schedule.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from support.naive import NaiveJob, naive_simulate
from support.workloads import workloads

from scheduler.cli._minimal_easy import minimal_easy_fcfs
from scheduler.sim.engine import Simulation
from scheduler.traces.filters import FilterReport
from scheduler.traces.swf import Trace


def engine_starts(
    submit: np.ndarray,
    procs: np.ndarray,
    run: np.ndarray,
    est: np.ndarray,
    ids: np.ndarray,
    machine_procs: int,
    requested: np.ndarray | None = None,
) -> np.ndarray:
    """Start times (s) of the engine's EASY(FCFS, FCFS), Θ = ∞, default reservation."""
    simulation = Simulation(
        submit, procs, run, est, machine_procs, requested_s=requested, job_id=ids
    )
    simulation.run(primary="FCFS", backfill="FCFS")
    return simulation.start_s


def columns(jobs: list[NaiveJob]) -> tuple[np.ndarray, ...]:
    """submit, procs, run, estimate, job id, requested time of ``jobs`` (float64)."""
    return tuple(
        np.array([getattr(j, name) for j in jobs], dtype=np.float64)
        for name in ("submit_s", "procs", "run_s", "estimate_s", "job_id", "requested_s")
    )


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(max_jobs=20))
def test_same_starts_as_the_engine(workload: tuple[list[NaiveJob], int]) -> None:
    jobs, machine_procs = workload
    submit, procs, run, est, ids, requested = columns(jobs)
    want = engine_starts(submit, procs, run, est, ids, machine_procs, requested)
    got = minimal_easy_fcfs(submit, procs, run, est, ids, machine_procs, requested_s=requested)
    np.testing.assert_array_equal(got, want)


def test_same_starts_on_kth(kth_filtered: tuple[Trace, FilterReport]) -> None:
    """The whole strongly filtered KTH-SP2 log, read as ``scheduler bench`` reads it."""
    trace = kth_filtered[0]
    jobs, m = trace.jobs, trace.machine_procs
    submit, procs, run, req, ids = (
        jobs[c].to_numpy().astype(np.float64)
        for c in ("submit_s", "alloc_procs", "run_s", "req_time_s", "job_id")
    )
    want = engine_starts(submit, procs, run, req, ids, m)
    got = minimal_easy_fcfs(submit, procs, run, req, ids, m)
    assert len(got) == 27_992
    np.testing.assert_array_equal(got, want)


# Jobs (id: submit s, procs, run s = estimate s): 1: 0, 2, 10; 2: 1, 4, 5; 3: 2, 2, 5;
# 4: 3, 1, 20.
# - t=0: job 1 starts (ends 10).
# - t=1: job 2 (4 procs) does not fit; reservation: free + job 1's 2 procs reach 4 at job 1's
#   estimated end, shadow time 10, extra processors m - 4.
# - t=2: job 3 fits in the 2 free processors and ends by 2 + 5 = 7 <= 10: backfilled at 2.
# - t=3: job 4 would end at 23 > 10, so it may only use the extra processors.
#   m = 4: no free processor (and no extra one): it waits; at t=7 (job 3 ends) 2 are free but
#   still no extra one; t=10: job 2 starts (ends 15) and takes all 4; job 4 starts at 15.
#   m = 5: one processor is free and one is extra: job 4 is backfilled at 3 on it (it runs
#   till 23 beside job 2, 4 + 1 = 5 processors); job 2 still starts at 10.
@pytest.mark.parametrize(("machine_procs", "want"), [(4, [0, 10, 2, 15]), (5, [0, 10, 2, 3])])
def test_hand_worked_schedule(machine_procs: int, want: list[float]) -> None:
    submit = np.array([0.0, 1.0, 2.0, 3.0])
    procs = np.array([2.0, 4.0, 2.0, 1.0])
    run = np.array([10.0, 5.0, 5.0, 20.0])
    ids = np.array([1.0, 2.0, 3.0, 4.0])
    # given in another order than (submit, job number): the result comes back in this order
    perm = np.array([2, 0, 3, 1])
    got = minimal_easy_fcfs(submit[perm], procs[perm], run[perm], run[perm], ids[perm],
                            machine_procs)  # fmt: skip
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float64)[perm])
    engine = engine_starts(submit, procs, run, run, ids, machine_procs)
    np.testing.assert_array_equal(engine, want)


def test_pass_without_a_fitting_job_still_revises() -> None:
    """A pass at which no waiting job fits starts nothing but still revises outlived estimates
    (step 3 does whenever a job waits after step 2), in the engine and in the minimal loop.

    Job 1 (1 proc, requested 1 s) runs past its requested time on m = 2. At 1.5 job 2 (2 procs)
    fits nowhere; job 1's estimated end becomes now + 1 = 2.5. At 2 job 3 (1 proc, 0.7 s) would
    end at 2.7 > 2.5 with no extra processor: not backfilled (had the pass at 1.5 been skipped,
    the revision at 2 would give 3 and job 3 would start at 2). Only instants less than 1 s
    apart tell the two apart; the reference simulator decides.
    """
    submit = np.array([0.0, 1.5, 2.0])
    procs = np.array([1.0, 2.0, 1.0])
    run = np.array([10.0, 1.0, 0.7])
    est = np.array([1.0, 1.0, 0.7])
    ids = np.array([1.0, 2.0, 3.0])
    jobs = [NaiveJob(job_id=int(i), submit_s=float(r), procs=int(q), run_s=float(p),
                     estimate_s=float(e), requested_s=float(e))
            for i, r, q, p, e in zip(ids, submit, procs, run, est, strict=True)]  # fmt: skip
    reference = naive_simulate(jobs, 2)
    want = [reference[j.job_id].start_s for j in jobs]
    np.testing.assert_array_equal(want, [0.0, 10.0, 11.0])
    np.testing.assert_array_equal(engine_starts(submit, procs, run, est, ids, 2), want)
    np.testing.assert_array_equal(minimal_easy_fcfs(submit, procs, run, est, ids, 2), want)
