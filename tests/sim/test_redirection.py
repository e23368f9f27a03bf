"""The redirection engine variant (issue #14, scheduler.sim.redirection).

- hand-worked schedules, each on the compiled variant and on the reference
  (tests/support/naive.py, ``naive_simulate_redirect``, written from docs/simulator.md);
- a hypothesis differential test between the two on random workloads, pool splits and θ;
- θ = ∞ and α = 0 are plain EASY job by job (random workloads and the bundled KTH-slice);
- conservation: every job finishes once, neither pool is ever over its size (from the result's
  runs), the wasted work is the killed runs' q · elapsed;
- a run split at any times with the same θ equals one run.

Notation in the comments: "A(1) r0 q2 p100" = job 1, submitted at 0, 2 processors, runs 100 s
(its estimate is its run time). m_main / m_d = processors of the main / dedicated pool; "A=2" =
A's counter is 2; "free" = idle processors of the main pool unless said.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.adapters import fast_simulation
from support.naive import NaiveJob, naive_pool_sizes, naive_simulate_redirect

from scheduler import read_swf, simulate, strong_filter
from scheduler.core.errors import ConfigurationError
from scheduler.policies import policy_names
from scheduler.sim.redirection import (
    RedirectSimulation,
    pool_sizes,
    simulate_redirect,
    simulate_redirect_arrays,
)
from scheduler.traces.swf import Trace, used_procs

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
POLICIES = policy_names()
KTH_SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"


def job(job_id, submit, procs, run, est=None) -> NaiveJob:
    est = run if est is None else est
    return NaiveJob(job_id, float(submit), procs, float(run), float(est), float(est))


def _arrays(jobs):
    return (
        np.array([j.submit_s for j in jobs]),
        np.array([j.procs for j in jobs], dtype=np.float64),
        np.array([j.run_s for j in jobs]),
        np.array([j.estimate_s for j in jobs]),
    )


def _none(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def fast(jobs, m, **kwargs) -> dict[int, tuple]:
    """job_id -> (start, first start, killed or None, pool, backfilled) from the compiled run."""
    out = simulate_redirect_arrays(
        *_arrays(jobs), m, requested_s=np.array([j.requested_s for j in jobs]),
        job_id=np.array([j.job_id for j in jobs]), **kwargs,
    )  # fmt: skip
    columns = (out.start_s, out.first_start_s, out.killed_s, out.redirected, out.backfilled)
    return {
        j.job_id: (float(s), float(f), _none(k), "dedicated" if r else "main", bool(b))
        for j, s, f, k, r, b in zip(jobs, *columns, strict=True)
    }


def naive(jobs, m, **kwargs) -> dict[int, tuple]:
    res = naive_simulate_redirect(jobs, m, **kwargs)
    return {
        i: (r.start_s, r.first_start_s, _none(r.killed_s), r.pool, r.backfilled)
        for i, r in res.items()
    }


def both(jobs, m, **kwargs) -> dict[int, tuple]:
    """The compiled result, after checking that the reference agrees with it."""
    a, b = fast(jobs, m, **kwargs), naive(jobs, m, **kwargs)
    assert a == b, kwargs
    return a


def starts(result) -> dict[int, tuple]:
    """job_id -> (final start, killed instant or None)."""
    return {i: (v[0], v[2]) for i, v in result.items()}


# -- hand-worked schedules ------------------------------------------------------------------------

# m = 4, α = 0.25: m_main = 3, m_d = 1. A(1) r0 q1 p100 runs in the main pool from 0; B..E (q1 p1)
# are submitted at 1, 2, 3, 4, each starting at once and ending a second later.
THRESHOLD_JOBS = [job(1, 0, 1, 100), job(2, 1, 1, 1), job(3, 2, 1, 1), job(4, 3, 1, 1),
                  job(5, 4, 1, 1)]  # fmt: skip


def test_hand_redirection_at_count_theta_plus_one():
    # θ = 3. A's counter: 1 at t=1 (B's submission; B itself starts after it: B=0), 2 at t=2,
    # 3 at t=3 (= θ: not over), 4 at t=4 (> θ): A is the only candidate (E, started at 4, has
    # 0), killed at 4 after the pass and submitted to the dedicated pool, which is idle: it
    # starts there at 4 in the second pass and runs its whole 100 s again.
    result = both(THRESHOLD_JOBS, 4, alpha=0.25, theta=3)
    assert starts(result) == {1: (4.0, 4.0), 2: (1.0, None), 3: (2.0, None), 4: (3.0, None),
                              5: (4.0, None)}  # fmt: skip
    assert result[1][1:4] == (0.0, 4.0, "dedicated")


def test_hand_no_redirection_at_count_theta():
    # θ = 4: A's counter reaches 4 at t=4 and no later submission comes: never over θ.
    result = both(THRESHOLD_JOBS, 4, alpha=0.25, theta=4)
    assert all(v[2] is None for v in result.values())
    assert result[1][0] == 0.0


def test_hand_tie_on_processors_goes_to_the_earliest_start():
    # m = 6, α = 0.5: m_main = 3, m_d = 3; θ = 1.
    # t=0: A(1) q1 p100 and X(2) q2 p5 start (free 0); Y(3) q1 p100 waits.
    # t=5: X completes (no submission): Y starts (free 1). A and Y now count alike.
    # t=10: B(4) q1 p1 submitted: A=1, Y=1 (not > 1); B starts (free 0).
    # t=11: B completes; C(5) q1 p1 submitted: A=2, Y=2; C starts. Candidates A and Y (both q1
    #       <= 3): same processors -> the earliest start, A (0 < 5). A restarts at 11 on the
    #       dedicated pool.
    jobs = [job(1, 0, 1, 100), job(2, 0, 2, 5), job(3, 0, 1, 100), job(4, 10, 1, 1),
            job(5, 11, 1, 1)]  # fmt: skip
    result = both(jobs, 6, alpha=0.5, theta=1)
    assert starts(result) == {1: (11.0, 11.0), 2: (0.0, None), 3: (5.0, None), 4: (10.0, None),
                              5: (11.0, None)}  # fmt: skip


def test_hand_tie_on_start_goes_to_the_lower_job_number():
    # m = 6, α = 0.5 (3 + 3), θ = 1.
    # t=0: W(1) q3 p5 starts (free 0); J(9) q1 p100 waits. t=1: K(4) q1 p100 submitted: W=1
    #      (not > 1); K waits.
    # t=5: W completes: J then K start (FCFS; free 1), both with counter 0.
    # t=6: L(5) q1 p1: J=1, K=1; L starts (free 0).
    # t=7: L completes; M(6) q1 p1: J=2, K=2; M starts. J and K: same processors, same start
    #      -> the lower job number, K (4 < 9), though J was submitted first.
    jobs = [job(1, 0, 3, 5), job(9, 0, 1, 100), job(4, 1, 1, 100), job(5, 6, 1, 1),
            job(6, 7, 1, 1)]  # fmt: skip
    result = both(jobs, 6, alpha=0.5, theta=1)
    assert starts(result) == {1: (0.0, None), 9: (5.0, None), 4: (7.0, 7.0), 5: (6.0, None),
                              6: (7.0, None)}  # fmt: skip


def test_hand_more_processors_wins_over_an_earlier_start():
    # The tie-break scenario with Y(3) made wider (q2) and X(2) q1: at t=11 A (q1, started 0)
    # and Y (q2, started 5) are over θ = 1: the most processors wins, Y.
    # t=0: A q1, X q1 start (free 1); Y q2 waits. t=5: X completes (free 2): Y starts (free 0).
    # t=10: B waits (A=1, Y=1). t=11: C arrives (A=2, Y=2); Y killed (free 2): B and C start in
    # the second pass.
    jobs = [job(1, 0, 1, 100), job(2, 0, 1, 5), job(3, 0, 2, 100), job(4, 10, 1, 1),
            job(5, 11, 1, 1)]  # fmt: skip
    result = both(jobs, 6, alpha=0.5, theta=1)
    assert starts(result) == {1: (0.0, None), 2: (0.0, None), 3: (11.0, 11.0), 4: (11.0, None),
                              5: (11.0, None)}  # fmt: skip


# m = 6, α = 0.5 (3 + 3), θ = 1. A(1) r0 q2 p100; B(2) r1 q1 p100; C(3) r2, D(4) r3, E(5) r4,
# q1 p1 each.
RESET_JOBS = [job(1, 0, 2, 100), job(2, 1, 1, 100), job(3, 2, 1, 1), job(4, 3, 1, 1),
              job(5, 4, 1, 1)]  # fmt: skip


def test_hand_counters_reset_after_a_redirection():
    # t=0: A starts (free 1). t=1: B submitted: A=1; B starts (free 0).
    # t=2: C submitted: A=2, B=1; C waits. A over -> killed at 2, restarts on the dedicated
    #      pool (free 3 -> 1 there). Every counter is reset: B=0. Second pass: C starts.
    # t=3: C completes; D submitted: B=1 (only D counts since the reset; without it B would be
    #      2 and be redirected here). D starts.
    # t=4: D completes; E submitted: B=2 > 1: B killed at 4, starts on the dedicated pool's last
    #      free processor. E starts.
    result = both(RESET_JOBS, 6, alpha=0.5, theta=1)
    assert starts(result) == {1: (2.0, 2.0), 2: (4.0, 4.0), 3: (2.0, None), 4: (3.0, None),
                              5: (4.0, None)}  # fmt: skip


def test_counters_property_after_the_reset():
    # the same run stopped at 3.5: B has counted only D's submission since the reset at 2; D,
    # started at 3 after its own submission, has 0; the others do not run in the main pool
    jobs = RESET_JOBS
    sim = RedirectSimulation(*_arrays(jobs), 6, alpha=0.5,
                             job_id=np.array([j.job_id for j in jobs]))  # fmt: skip
    sim.run(3.5, theta=1)
    assert sim.counters.tolist() == [-1, 1, -1, 0, -1]
    assert sim.redirections == 1
    sim.run(theta=1)
    assert sim.redirections == 2 and sim.done


def test_hand_job_too_wide_for_the_dedicated_pool():
    # m = 4, α = 0.25: m_main = 3, m_d = 1; θ = 0.
    # t=0: A(1) q2 p100 starts (free 1).
    # t=1: B(2) q1 p100 submitted: A=1 > 0 but A needs 2 > m_d = 1: not a candidate. B starts
    #      (free 0) with 0: no redirection.
    # t=2: C(3) q1 p1 submitted: A=2, B=1. The only candidate is B (A, wider and over the
    #      threshold, does not count): B killed at 2, restarts on the dedicated pool. C starts in
    #      the second pass. A runs to its end in the main pool.
    jobs = [job(1, 0, 2, 100), job(2, 1, 1, 100), job(3, 2, 1, 1)]
    result = both(jobs, 4, alpha=0.25, theta=0)
    assert starts(result) == {1: (0.0, None), 2: (2.0, 2.0), 3: (2.0, None)}


# m = 4, α = 0.5: m_main = 2, m_d = 2; θ = 0. A(1) r0 q2 p30; B(2) r1 q1 p20; C(3) r5 q1 p5.
RESTART_JOBS = [job(1, 0, 2, 30), job(2, 1, 1, 20), job(3, 5, 1, 5)]


def test_hand_redirected_job_waits_restarts_and_finishes():
    # t=0: A starts (main full).
    # t=1: B submitted: A=1 > 0: A killed at 1 (1 s of 2 processors lost), restarts on the
    #      dedicated pool at 1 (full there until 31). B starts in the main pool's second pass.
    # t=5: C submitted: B=1; C starts. B killed at 5 (4 s of 1 processor lost) and queued on the
    #      dedicated pool, which is full.
    # t=31: A completes there (1 + 30): B starts and runs its whole 20 s again, to 51.
    result = both(RESTART_JOBS, 4, alpha=0.5, theta=0)
    assert starts(result) == {1: (1.0, 1.0), 2: (31.0, 5.0), 3: (5.0, None)}
    out = simulate_redirect_arrays(*_arrays(RESTART_JOBS), 4, alpha=0.5, theta=0,
                                   job_id=np.array([1, 2, 3]))  # fmt: skip
    assert out.wasted_proc_s.tolist() == [2.0, 4.0, 0.0]
    assert out.redirections == 2


def test_hand_restart_metrics_through_simulate_redirect(job_table):
    table = job_table(*[
        {"job_id": j.job_id, "submit_s": int(j.submit_s), "run_s": int(j.run_s),
         "alloc_procs": j.procs, "req_procs": j.procs, "req_time_s": int(j.run_s)}
        for j in RESTART_JOBS
    ])  # fmt: skip
    result = simulate_redirect(table, machine_procs=4, alpha=0.5, theta=0)
    jobs = result.jobs
    assert jobs["pool"].to_list() == ["dedicated", "dedicated", "main"]
    # waits from the original submission to the final start: 1, 30, 0; B ends at 51
    assert jobs["wait_s"].to_list() == [1.0, 30.0, 0.0]
    assert jobs["end_s"].to_list() == [31.0, 51.0, 10.0]
    # bsld with τ = 60 s: A (31 - 0) / 60 < 1 -> 1; B (51 - 1) / 60 -> 1; C 1
    assert jobs["bsld"].to_list() == [1.0, 1.0, 1.0]
    assert result.summary.wasted_proc_s == 6.0
    assert result.redirections == result.summary.redirections == 2
    # useful work 2*30 + 20 + 5 = 85 proc-s; makespan 51; m = 4
    assert result.summary.utilisation == pytest.approx(85 / (4 * 51))
    assert result.summary.utilisation_with_waste == pytest.approx(91 / (4 * 51))
    assert result.config.main_procs == 2 and result.config.dedicated_procs == 2
    runs = result.runs()
    assert runs.filter(pl.col("killed")).select("job_id", "start_s", "end_s").rows() == [
        (1, 0.0, 1.0), (2, 1.0, 5.0)
    ]  # fmt: skip


def test_hand_one_redirection_per_instant_and_never_twice():
    # m = 6, α = 0.5 (3 + 3), θ = 0. A(1), B(2) r0 q1 p100; C(3) r1, D(4) r2 q1 p100; E(5) r3
    # q1 p1.
    # t=0: A and B start. t=1: C submitted: A=1, B=1, both over; C starts (free 0). One
    #      redirection: same q, same start -> A (lower number); reset: B=0, C=0.
    # t=2: D: B=1, C=1. D starts (free from A). B redirected (earliest start): one per instant.
    # t=3: E: C=1, D=1. E starts. C redirected (start 1 < 2). The dedicated pool now runs A,
    #      B, C: A, redirected at 1, saw two more submissions there and is never redirected
    #      again (redirection only looks at the main pool).
    # t=4: E completes, no submission: D's counter is 0 since the reset at 3.
    jobs = [job(1, 0, 1, 100), job(2, 0, 1, 100), job(3, 1, 1, 100), job(4, 2, 1, 100),
            job(5, 3, 1, 1)]  # fmt: skip
    result = both(jobs, 6, alpha=0.5, theta=0)
    assert starts(result) == {1: (1.0, 1.0), 2: (2.0, 2.0), 3: (3.0, 3.0), 4: (2.0, None),
                              5: (3.0, None)}  # fmt: skip


# RESTART_JOBS with C(3) running 100 s and D(4) r6 q1 p1.
BALANCE_JOBS = [job(1, 0, 2, 30), job(2, 1, 1, 20), job(3, 5, 1, 100), job(4, 6, 1, 1)]


def test_hand_load_balancing_off():
    # As in test_hand_redirected_job_waits_restarts_and_finishes up to t=5 (B queued on the
    # full dedicated pool). t=6: D submitted: C=1 > 0; D starts. C killed at 6, queued behind B.
    # t=31: A completes on the dedicated pool: B then C start there (2 processors).
    result = both(BALANCE_JOBS, 4, alpha=0.5, theta=0, balance=False)
    assert starts(result) == {1: (1.0, 1.0), 2: (31.0, 5.0), 3: (31.0, 6.0), 4: (6.0, None)}


def test_hand_load_balancing_on():
    # t=1 and t=5: the dedicated queue is empty after the passes (A started there at 1), so A
    # and B are redirected as before. t=6: C=1 is over, but B waits in the dedicated queue: no
    # redirection. t=7: D completes: B still waits. t=31 (a completion, no submission): A ends,
    # B starts, the dedicated queue is empty after the pass: C (counter 1) is redirected at 31
    # and starts on the dedicated pool's free processor in the second pass.
    result = both(BALANCE_JOBS, 4, alpha=0.5, theta=0, balance=True)
    assert starts(result) == {1: (1.0, 1.0), 2: (31.0, 5.0), 3: (31.0, 31.0), 4: (6.0, None)}


def test_dedicated_fcfs_orders_by_redirection_instant():
    # m = 3, α = 0.34: m_d = ceil(1.02) = 2, m_main = 1; θ = 0. All q1:
    # A(1) r0 p30, B(2) r1 p50, C(3) r2 p50, D(4) r3 p5, E(5) r4 p5.
    # t=0: A starts (main full). t=1: B queued, A=1: A killed, restarts on the dedicated pool
    # (1 of 2 busy); B starts in the main pool's second pass. t=2: C queued, B=1: B killed,
    # restarts on the dedicated pool (full); C starts. t=3: D queued, C=1: C killed and queued
    # on the dedicated pool (ρ = 3); D starts. t=4: E queued, D=1: D killed, queued (ρ = 4).
    # t=31: A ends on the dedicated pool (1 + 30), one processor free.
    # FCFS there orders by the redirection instant: C (3) starts at 31 and runs to 81; D waits
    # (head, no backfill fits) until B ends at 2 + 50 = 52.
    # LCFS there (no backfilling): D (4) first, at 31, to 36; then C at 36.
    jobs = [job(1, 0, 1, 30), job(2, 1, 1, 50), job(3, 2, 1, 50), job(4, 3, 1, 5),
            job(5, 4, 1, 5)]  # fmt: skip
    fcfs = starts(both(jobs, 3, alpha=0.34, theta=0))
    assert fcfs == {1: (1.0, 1.0), 2: (2.0, 2.0), 3: (31.0, 3.0), 4: (52.0, 4.0), 5: (4.0, None)}
    lcfs = starts(
        both(jobs, 3, alpha=0.34, theta=0, dedicated_primary="LCFS", dedicated_backfill="none")
    )
    assert lcfs[4] == (31.0, 4.0) and lcfs[3] == (36.0, 3.0)


# -- differential: compiled vs reference ----------------------------------------------------------

ALPHAS = (0.0, 0.1, 0.2, 0.25, 0.34, 0.5, 0.67)
THETAS = (0.0, 1.0, 2.0, 3.0, 5.0, 2.5, math.inf)


@st.composite
def redirect_workloads(draw, max_jobs: int = 14):
    """(jobs, m, alpha): jobs fit the main pool; integer seconds; estimates >= or < run."""
    m = draw(st.integers(2, 10))
    alpha = draw(st.sampled_from(ALPHAS))
    main, _ = naive_pool_sizes(alpha, m)
    if main < 1:
        alpha, main = 0.0, m
    n = draw(st.integers(1, max_jobs))
    ids = draw(st.permutations(range(1, n + 1)))
    jobs = []
    for job_id in ids:
        run = draw(st.integers(1, 40))
        est = draw(st.one_of(st.just(run), st.integers(run, 80)))
        jobs.append(job(job_id, draw(st.integers(0, 30)), draw(st.integers(1, main)), run, est))
    return jobs, m, alpha


@settings(SETTINGS, max_examples=500)
@given(
    redirect_workloads(),
    st.sampled_from(THETAS),
    st.booleans(),
    st.sampled_from(POLICIES),
    st.one_of(st.none(), st.sampled_from(POLICIES)),
    st.one_of(st.none(), st.sampled_from(POLICIES)),
)
def test_compiled_matches_reference(workload, theta, balance, primary, backfill, dedicated):
    jobs, m, alpha = workload
    kwargs = {"alpha": alpha, "theta": theta, "balance": balance, "primary": primary,
              "backfill": backfill, "dedicated_primary": dedicated}  # fmt: skip
    assert fast(jobs, m, **kwargs) == naive(jobs, m, **kwargs), kwargs


@pytest.mark.parametrize("balance", [False, True])
def test_compiled_matches_reference_on_longer_queues(balance):
    """Seeded workloads of 30-60 jobs on congested machines: many redirections, long dedicated
    queues and dead-entry compaction in both pools."""
    rng = np.random.default_rng(14)
    for _ in range(40):
        m = int(rng.integers(4, 13))
        alpha = float(rng.choice([0.2, 0.3, 0.5]))
        main, _ = naive_pool_sizes(alpha, m)
        n = int(rng.integers(30, 61))
        jobs = [
            job(int(i), int(rng.integers(0, 60)), int(rng.integers(1, main + 1)),
                int(rng.integers(1, 30)), None)
            for i in rng.permutation(np.arange(1, n + 1))
        ]  # fmt: skip
        for theta, policy in ((0.0, "FCFS"), (2.0, "SPF"), (4.0, "LEXP")):
            kwargs = {"alpha": alpha, "theta": theta, "balance": balance, "primary": policy,
                      "backfill": policy}  # fmt: skip
            assert fast(jobs, m, **kwargs) == naive(jobs, m, **kwargs), kwargs


# -- degenerate settings: plain EASY --------------------------------------------------------------


@settings(SETTINGS, max_examples=300)
@given(
    redirect_workloads(),
    st.sampled_from(POLICIES),
    st.one_of(st.none(), st.sampled_from(POLICIES)),
)
def test_infinite_theta_and_zero_alpha_are_plain_easy(workload, primary, backfill):
    jobs, m, alpha = workload
    main, _ = pool_sizes(alpha, m)
    for a, t, procs in ((alpha, math.inf, main), (0.0, 0.0, m), (0.0, 3.0, m)):
        plain = fast_simulation(jobs, procs, primary=primary, backfill=backfill)
        out = simulate_redirect_arrays(
            *_arrays(jobs), m, alpha=a, theta=t, primary=primary, backfill=backfill,
            job_id=np.array([j.job_id for j in jobs]),
        )  # fmt: skip
        assert out.start_s.tolist() == plain.start_s.tolist()
        assert out.backfilled.tolist() == plain.backfilled.tolist()
        assert out.redirections == 0


@pytest.fixture(scope="module")
def kth_slice() -> Trace:
    return strong_filter(read_swf(KTH_SLICE))[0]


def test_plain_easy_on_kth_slice(kth_slice):
    m = kth_slice.machine_procs
    for policy in ("FCFS", "LEXP"):
        plain = simulate(kth_slice, primary=policy, backfill=policy)
        zero = simulate_redirect(kth_slice, alpha=0.0, theta=0, primary=policy, backfill=policy)
        assert zero.redirections == 0
        for column in ("job_id", "start_s", "backfilled", "wait_s"):
            assert zero.jobs[column].to_list() == plain.jobs[column].to_list()
        # θ = ∞ with α = 0.1: plain EASY on the main pool's processors (the jobs that fit it)
        main, dedicated = pool_sizes(0.1, m)
        assert dedicated == -(-m // 10)
        narrow = kth_slice.with_jobs(kth_slice.jobs.filter(used_procs() <= main))
        plain = simulate(narrow, primary=policy, backfill=policy, machine_procs=main)
        inf = simulate_redirect(narrow, alpha=0.1, theta=math.inf, primary=policy,
                                backfill=policy)  # fmt: skip
        assert inf.redirections == 0 and inf.config.main_procs == main
        for column in ("job_id", "start_s", "backfilled", "wait_s"):
            assert inf.jobs[column].to_list() == plain.jobs[column].to_list()


# -- conservation ---------------------------------------------------------------------------------


def peak_use(runs: pl.DataFrame) -> int:
    """Peak processors in use: at equal instants, ends free before starts use."""
    if runs.height == 0:
        return 0
    times = np.concatenate([runs["start_s"].to_numpy(), runs["end_s"].to_numpy()])
    procs = runs["procs"].to_numpy().astype(np.int64)
    deltas = np.concatenate([procs, -procs])
    order = np.lexsort((deltas, times))
    return int(np.max(np.cumsum(deltas[order])))


@settings(SETTINGS, max_examples=200)
@given(redirect_workloads(max_jobs=30), st.sampled_from(THETAS), st.booleans())
def test_conservation(workload, theta, balance):
    jobs, m, alpha = workload
    table = pl.DataFrame({
        "job_id": [j.job_id for j in jobs], "submit_s": [int(j.submit_s) for j in jobs],
        "run_s": [int(j.run_s) for j in jobs], "alloc_procs": [j.procs for j in jobs],
        "req_procs": [j.procs for j in jobs], "req_time_s": [int(j.estimate_s) for j in jobs],
    })  # fmt: skip
    result = simulate_redirect(table, machine_procs=m, alpha=alpha, theta=theta, balance=balance)
    out = result.jobs
    runs = result.runs()
    # every job finishes exactly once, after its submission
    final = runs.filter(~pl.col("killed"))
    assert sorted(final["job_id"].to_list()) == sorted(j.job_id for j in jobs)
    assert out["start_s"].is_not_nan().all()
    assert (out["start_s"] >= out["submit_s"]).all()
    # each pool within its size at every instant
    main, dedicated = pool_sizes(alpha, m)
    assert peak_use(runs.filter(pl.col("pool") == "main")) <= main
    assert peak_use(runs.filter(pl.col("pool") == "dedicated")) <= dedicated
    # the wasted work is the killed runs' q * elapsed, and each killed run is a real one
    killed = runs.filter(pl.col("killed"))
    assert ((killed["end_s"] - killed["start_s"]) > 0).all()
    waste = float((killed["procs"] * (killed["end_s"] - killed["start_s"])).sum())
    assert result.summary.wasted_proc_s == pytest.approx(waste)
    assert killed.height == result.redirections == int(out["redirected"].sum())
    # at most one redirection per instant
    assert killed["end_s"].n_unique() == killed.height
    assert result.summary.utilisation_with_waste >= result.summary.utilisation


# -- resumption -----------------------------------------------------------------------------------


@settings(SETTINGS, max_examples=200)
@given(redirect_workloads(max_jobs=20), st.sampled_from(THETAS), st.booleans(),
       st.lists(st.integers(0, 200), max_size=6))  # fmt: skip
def test_split_runs_equal_one_run(workload, theta, balance, cuts):
    jobs, m, alpha = workload
    ids = np.array([j.job_id for j in jobs])
    one = simulate_redirect_arrays(*_arrays(jobs), m, alpha=alpha, theta=theta, balance=balance,
                                   primary="SPF", job_id=ids)  # fmt: skip
    sim = RedirectSimulation(*_arrays(jobs), m, alpha=alpha, balance=balance, primary="SPF",
                             job_id=ids)  # fmt: skip
    for cut in sorted(cuts):
        sim.run(float(cut), theta=theta)
    sim.run(theta=theta)
    split = sim.arrays()
    assert sim.done
    for name in ("start_s", "first_start_s", "killed_s", "backfilled", "wasted_proc_s"):
        np.testing.assert_array_equal(getattr(split, name), getattr(one, name), err_msg=name)
    assert split.redirections == one.redirections


def test_theta_changes_between_calls():
    # RESET_JOBS with θ = ∞ until 3.5: A and B run, C and D wait (main full): A=3 (B, C, D
    # submitted after its start), B=2. Then θ = 0: at t=4 E's submission puts A (4) and B (3)
    # over; A, the widest, is killed, and C and D start in the second pass. No later
    # submission: no other redirection.
    sim = RedirectSimulation(*_arrays(RESET_JOBS), 6, alpha=0.5,
                             job_id=np.array([j.job_id for j in RESET_JOBS]))  # fmt: skip
    sim.run(3.5, theta=math.inf)
    assert sim.redirections == 0
    assert sim.counters.tolist() == [3, 2, -1, -1, -1]
    sim.run(theta=0)
    assert sim.killed_s.tolist()[0] == 4.0
    assert sim.redirections == 1


# -- the API --------------------------------------------------------------------------------------


def test_pool_sizes():
    assert pool_sizes(0.1, 80640) == (72576, 8064)
    assert pool_sizes(0.0, 7) == (7, 0)
    assert pool_sizes(0.25, 4) == (3, 1)
    assert pool_sizes(0.26, 4) == (2, 2)
    with pytest.raises(ConfigurationError, match="alpha"):
        pool_sizes(1.0, 4)
    with pytest.raises(ConfigurationError, match="no processor"):
        pool_sizes(0.8, 4)


def test_bad_inputs_are_named():
    arrays = _arrays([job(1, 0, 4, 10)])
    with pytest.raises(ConfigurationError, match="main pool's 3"):
        simulate_redirect_arrays(*arrays, 4, alpha=0.25, theta=1)
    with pytest.raises(ConfigurationError, match="theta"):
        simulate_redirect_arrays(*arrays, 4, alpha=0.0, theta=-1)
    with pytest.raises(ConfigurationError, match="unknown policy"):
        simulate_redirect_arrays(*arrays, 4, alpha=0.0, theta=1, dedicated_primary="NOPE")
