"""Hypothesis strategy of small workloads for the differential tests of the simulator."""

from __future__ import annotations

from hypothesis import strategies as st

from support.naive import NaiveJob


@st.composite
def workloads(draw, max_jobs: int = 14) -> tuple[list[NaiveJob], int]:
    """(jobs, machine_procs): jobs with distinct, shuffled job numbers and clustered submits."""
    machine_procs = draw(st.integers(1, 12))
    n = draw(st.integers(1, max_jobs))
    ids = draw(st.permutations(range(1, n + 1)))
    jobs = []
    for job_id in ids:
        run = draw(st.integers(1, 60))
        # estimates: exact, over-estimated, or under-estimated (exercises the outlive rules)
        estimate = draw(st.one_of(st.just(run), st.integers(1, 120)))
        requested = draw(st.one_of(st.just(estimate), st.integers(1, 150)))
        jobs.append(
            NaiveJob(
                job_id=job_id,
                submit_s=float(draw(st.integers(0, 80))),
                procs=draw(st.integers(1, machine_procs)),
                run_s=float(run),
                estimate_s=float(estimate),
                requested_s=float(requested),
            )
        )
    return jobs, machine_procs
