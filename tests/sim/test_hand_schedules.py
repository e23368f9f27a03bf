"""Small schedules worked out by hand from docs/simulator.md.

Every expected start time below was derived on paper (the reasoning is in the comments), not
copied from a simulator. Each scenario runs against every simulator in SIMULATORS; a simulator is
`run(jobs, machine_procs, **kwargs) -> {job_id: start_s}` taking a list of NaiveJob and the
keyword arguments of naive_simulate (primary, backfill, threshold_s, reservation, outlive).

Notation in the comments: "A(id1) q3 p10 e10" = job 1, 3 processors, runs 10 s, estimate 10 s;
s = shadow time, x = extra processors, free = idle processors.
"""

from __future__ import annotations

import math

import pytest
from support.adapters import run_fast
from support.naive import NaiveJob, naive_priority, naive_simulate


def run_naive(jobs, machine_procs, **kwargs) -> dict[int, float]:
    return {i: r.start_s for i, r in naive_simulate(jobs, machine_procs, **kwargs).items()}


SIMULATORS = {"naive": run_naive, "fast": run_fast}


@pytest.fixture(params=sorted(SIMULATORS))
def sim(request):
    return SIMULATORS[request.param]


def job(job_id, submit, procs, run, est=None, req=None) -> NaiveJob:
    """A job; the estimate defaults to the run time, the requested time to the estimate."""
    est = run if est is None else est
    req = est if req is None else req
    return NaiveJob(job_id, float(submit), procs, float(run), float(est), float(req))


# ---------------------------------------------------------------------------------------------
# Plain FCFS EASY backfilling
# ---------------------------------------------------------------------------------------------


def test_backfill_ends_before_shadow_time(sim):
    # m=4. A(1) r0 q3 p10; B(2) r1 q4 p5; C(3) r2 q1 p8.
    # t=0: A starts, free 1.
    # t=1: B (4) does not fit. Walk: free 1 + A's 3 = 4 >= 4 at A's end 10 -> s=10, x=0.
    # t=2: queue B, C. h=B, s=10, x=0. C: q1 <= free 1, ends 2+8 = 10 <= s=10 (equality is
    #      allowed) -> backfilled at 2, free 0.
    # t=10: A and C complete together; free 4 -> B starts at 10.
    jobs = [job(1, 0, 3, 10), job(2, 1, 4, 5), job(3, 2, 1, 8)]
    assert sim(jobs, 4) == {1: 0, 2: 10, 3: 2}


def test_backfill_refused_when_it_would_delay_reservation(sim):
    # Same as above but C runs 9: at t=2 C would end 11 > s=10 and q1 > x=0 -> refused.
    # t=10: A completes, free 4. Queue B, C: B starts at 10 (free 0). h=C: walk B (end 15):
    #       s=15. Nothing else.
    # t=15: B completes -> C starts at 15.
    jobs = [job(1, 0, 3, 10), job(2, 1, 4, 5), job(3, 2, 1, 9)]
    assert sim(jobs, 4) == {1: 0, 2: 10, 3: 15}


def test_backfill_with_extra_processors(sim):
    # m=8. A(1) r0 q4 p10; B(2) r1 q6 p5; C(3) r2 q2 p20; D(4) r2 q1 p20; E(5) r2 q1 p5.
    # t=0: A starts, free 4.
    # t=1: B (6) does not fit; walk: 4 + A's 4 = 8 >= 6 at 10 -> s=10, x=2.
    # t=2: h=B, s=10, x=2. Backfill in FCFS order C, D, E:
    #      C: ends 22 > 10 but q2 <= x=2 -> starts at 2, x=0, free 2.
    #      D: ends 22 > 10 and q1 > x=0 -> refused.
    #      E: ends 7 <= 10 -> starts at 2 (no extra used), free 1.
    # t=7: E completes, free 2. h=B: walk A: 2+4 = 6 -> s=10, x=0. D: 27 > 10, 1 > 0 -> refused.
    # t=10: A completes, free 6 -> B starts at 10, free 0. h=D, nothing else waits.
    # t=15: B completes, free 6 -> D starts at 15.
    jobs = [job(1, 0, 4, 10), job(2, 1, 6, 5), job(3, 2, 2, 20), job(4, 2, 1, 20), job(5, 2, 1, 5)]
    assert sim(jobs, 8) == {1: 0, 2: 10, 3: 2, 4: 15, 5: 2}


def test_backfilled_flags_naive():
    # Same scenario: C and E were started in step 4, the others in step 2. Naive-only (the
    # SIMULATORS interface returns start times only).
    jobs = [job(1, 0, 4, 10), job(2, 1, 6, 5), job(3, 2, 2, 20), job(4, 2, 1, 20), job(5, 2, 1, 5)]
    res = naive_simulate(jobs, 8)
    assert {i: r.backfilled for i, r in res.items()} == {
        1: False,
        2: False,
        3: True,
        4: False,
        5: True,
    }


def test_walk_includes_jobs_started_in_step_2(sim):
    # m=4. All submitted at t=0: A(1) q2 p10; B(2) q4 p5; C(3) q2 p3; D(4) q2 p20.
    # t=0: A starts (step 2), free 2; B does not fit. Walk over A (started this pass):
    #      2 + 2 = 4 -> s=10, x=0. C: ends 3 <= 10 -> starts at 0, free 0. D: q2 > free 0.
    # t=3: C completes, free 2. h=B, s=10, x=0. D: ends 23 > 10, q2 > x=0 -> refused.
    # t=10: A completes, free 4 -> B starts at 10, free 0; h=D.
    # t=15: B completes -> D starts at 15.
    jobs = [job(1, 0, 2, 10), job(2, 0, 4, 5), job(3, 0, 2, 3), job(4, 0, 2, 20)]
    assert sim(jobs, 4) == {1: 0, 2: 10, 3: 0, 4: 15}


# ---------------------------------------------------------------------------------------------
# Reservation "default" versus "classic"
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("reservation", "start_d"), [("default", 10), ("classic", 1)])
def test_default_vs_classic_reservation(sim, reservation, start_d):
    # m=5. A(1) r0 q2 p10; B(2) r0 q2 p10; C(3) r1 q3 p5; D(4) r1 q1 p100.
    # t=0: A, B start, free 1. Both have estimated end 10.
    # t=1: h=C (3 > 1). Walk by (e, id): A first: 1 + 2 = 3 >= 3 -> s=10.
    #      default: x = 3 - 3 = 0.  classic: B also ends at s=10 and releases: x = 5 - 3 = 2.
    #      D: ends 101 > 10. default: q1 > x=0 -> refused. classic: q1 <= 2 -> starts at 1.
    # default: t=10 A, B complete, free 5: C starts (free 2), then D (q1) fits -> D at 10.
    # classic: t=10 A, B complete, free 4: C starts at 10.
    jobs = [job(1, 0, 2, 10), job(2, 0, 2, 10), job(3, 1, 3, 5), job(4, 1, 1, 100)]
    assert sim(jobs, 5, reservation=reservation) == {1: 0, 2: 0, 3: 10, 4: start_d}


# ---------------------------------------------------------------------------------------------
# No backfilling: plain list scheduling
# ---------------------------------------------------------------------------------------------


def test_no_backfill_blocks_at_head(sim):
    # Jobs of test_backfill_ends_before_shadow_time plus D(4) r0 q1 p4, backfill=None.
    # t=0: queue A, D: A starts (free 1), D starts from the head too (step 2), free 0.
    # t=1, t=2: B is head and does not fit; C would fit later but the queue blocks.
    # t=4: D completes, free 1: head B (4) does not fit, C blocked behind it.
    # t=10: A completes, free 4 -> B at 10, free 0.  t=15: B completes -> C at 15.
    jobs = [job(1, 0, 3, 10), job(2, 1, 4, 5), job(3, 2, 1, 8), job(4, 0, 1, 4)]
    assert sim(jobs, 4, backfill=None) == {1: 0, 2: 10, 3: 15, 4: 0}


# ---------------------------------------------------------------------------------------------
# Primary policies
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primary", "expected"),
    [("FCFS", {1: 0, 2: 10, 3: 30}), ("SPF", {1: 0, 2: 15, 3: 10})],
)
def test_spf_vs_fcfs(sim, primary, expected):
    # m=2, every job takes the whole machine so nothing can be backfilled.
    # A(1) r0 q2 p10; B(2) r1 q2 p20; C(3) r2 q2 p5.
    # At t=10 A completes with B and C waiting.
    # FCFS: B (r1) first -> B 10..30, C at 30.
    # SPF: keys est: C 5 < B 20 -> C 10..15, B at 15.
    jobs = [job(1, 0, 2, 10), job(2, 1, 2, 20), job(3, 2, 2, 5)]
    assert sim(jobs, 2, primary=primary) == expected


def test_lcfs(sim):
    # m=2. A(1) r0 q2 p10; B(2) r1, C(3) r2, D(4) r3, all q2 p5. Key -r: latest first.
    # t=10: waiting B, C, D -> D (-3) first: D 10..15.
    # t=15: C (-2) before B (-1): C 15..20.  t=20: B at 20.
    jobs = [job(1, 0, 2, 10), job(2, 1, 2, 5), job(3, 2, 2, 5), job(4, 3, 2, 5)]
    assert sim(jobs, 2, primary="LCFS", backfill="LCFS") == {1: 0, 2: 20, 3: 15, 4: 10}


def test_backfill_policy_orders_candidates(sim):
    # m=4. A(1) r0 q3 p10; B(2) r1 q4 p5; C(3) r2 q1 p8; D(4) r2 q1 p5.
    # t=2: h=B, walk A: 1 + 3 = 4 -> s=10, x=0. Both C (ends 10) and D (ends 7) end by s but
    #      only 1 processor is free; the backfill policy chooses.
    # backfill FCFS: C (r2, id3) before D (r2, id4): C at 2 (free 0), D no room.
    #      t=10: A, C complete, free 4: B at 10 (free 0); h=D, walk B -> s=15. t=15: D at 15.
    # backfill SPF: D (5) before C (8): D at 2, C no room.
    #      t=7: D completes, free 1: h=B, s=10, x=0; C ends 15 > 10, q1 > 0 -> refused.
    #      t=10: A completes: B at 10. t=15: C at 15.
    jobs = [job(1, 0, 3, 10), job(2, 1, 4, 5), job(3, 2, 1, 8), job(4, 2, 1, 5)]
    assert sim(jobs, 4, backfill="FCFS") == {1: 0, 2: 10, 3: 2, 4: 15}
    assert sim(jobs, 4, backfill="SPF") == {1: 0, 2: 10, 3: 15, 4: 2}


# ---------------------------------------------------------------------------------------------
# Threshold Θ
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("threshold_s", "expected"),
    [
        (98.0, {1: 0, 2: 100, 3: 150}),  # wait_B = 99 > 98: B moved to the head
        (99.0, {1: 0, 2: 110, 3: 100}),  # wait_B = 99, not > 99: SPF order kept
        (None, {1: 0, 2: 110, 3: 100}),  # Θ = ∞
    ],
)
def test_threshold_strictly_greater(sim, threshold_s, expected):
    # m=2, SPF. A(1) r0 q2 p100; B(2) r1 q2 p50; C(3) r2 q2 p10 (all need the whole machine).
    # t=100: A completes. SPF order: C (10) then B (50). wait_B = 99, wait_C = 98.
    # Θ=98: B is older than Θ -> head: B 100..150, then C at 150.
    # Θ=99 (equality) or none: C 100..110, then B at 110 (at t=110 wait_B = 109 > 99 but B is
    #      the only waiting job anyway).
    jobs = [job(1, 0, 2, 100), job(2, 1, 2, 50), job(3, 2, 2, 10)]
    assert sim(jobs, 2, primary="SPF", threshold_s=threshold_s) == expected


@pytest.mark.parametrize(
    ("threshold_s", "expected"),
    [
        (None, {1: 0, 2: 120, 3: 110, 4: 100}),
        (97.5, {1: 0, 2: 100, 3: 110, 4: 120}),
    ],
)
def test_threshold_old_jobs_in_submit_order_under_lcfs(sim, threshold_s, expected):
    # m=2, LCFS. A(1) r0 q2 p100; B(2) r1, C(3) r2, D(4) r3, all q2 p10.
    # No Θ: t=100 D (latest), t=110 C, t=120 B.
    # Θ=97.5: at t=100 waits B 99, C 98, D 97: B and C are old, moved to the head by (r, id):
    #   queue B, C, D -> B at 100. t=110: waits C 108, D 107, both old -> C (r2) first at 110.
    #   t=120: D.
    jobs = [job(1, 0, 2, 100), job(2, 1, 2, 10), job(3, 2, 2, 10), job(4, 3, 2, 10)]
    assert sim(jobs, 2, primary="LCFS", backfill="LCFS", threshold_s=threshold_s) == expected


# ---------------------------------------------------------------------------------------------
# Thresholded backfill order (threshold_backfill, issue #16 point 8)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("threshold_s", "threshold_backfill", "expected"),
    [
        (5.0, False, {1: 0, 2: 0, 3: 30, 4: 15, 5: 10}),  # SPF order: D before C
        (5.0, True, {1: 0, 2: 0, 3: 30, 4: 10, 5: 25}),  # overdue C before young D
        (None, False, {1: 0, 2: 0, 3: 30, 4: 15, 5: 10}),  # Θ = ∞: the option changes nothing
        (None, True, {1: 0, 2: 0, 3: 30, 4: 15, 5: 10}),
    ],
)
def test_threshold_backfill_tries_overdue_candidates_first(
    sim, threshold_s, threshold_backfill, expected
):
    # m=4, EASY(SPF, SPF, Θ) (Algorithm 2 when threshold_backfill). A(1) r0 q2 p10;
    # X(2) r0 q2 p30; B(3) r1 q4 p10; C(4) r2 q2 p15; D(5) r6 q2 p5.
    # t=0: A and X start, free 0. t=1..6: nothing fits.
    # Θ=5, t=10: A completes, free 2. Waits B 9, C 8, D 4: B and C overdue -> queue B, C, D.
    #   B (4) does not fit: h=B; walk X (e 30): 2 + 2 = 4 -> s=30, x=0. Candidates C, D:
    #   plain SPF order: D (e5) first: 10+5 = 15 <= 30 -> D at 10, free 0; C no room.
    #     t=15: D completes, free 2; h=B, s=30, x=0; C: 15+15 = 30 <= 30 -> C at 15.
    #     t=30: X and C complete, free 4 -> B at 30.
    #   thresholded: C (overdue) first: 10+15 = 25 <= 30 -> C at 10, free 0; D no room.
    #     t=25: C completes, free 2. Waits B 24, D 19: both overdue -> queue B, D; h=B, s=30,
    #     x=0; D: 25+5 = 30 <= 30 -> D at 25. t=30: X and D complete -> B at 30.
    # Θ=∞, t=10: SPF queue D (5), B (10), C (15): D fits -> D at 10 (step 2), free 0; h=B;
    #   walk D (e15): 2 < 4, X (e30): 4 -> s=30, x=0; no room for C. t=15: D completes, free 2;
    #   queue B, C: h=B, s=30, x=0; C: 30 <= 30 -> C at 15. t=30: B at 30.
    jobs = [job(1, 0, 2, 10), job(2, 0, 2, 30), job(3, 1, 4, 10), job(4, 2, 2, 15),
            job(5, 6, 2, 5)]  # fmt: skip
    assert (
        sim(jobs, 4, primary="SPF", backfill="SPF", threshold_s=threshold_s,
            threshold_backfill=threshold_backfill)
        == expected
    )  # fmt: skip


@pytest.mark.parametrize(
    ("threshold_backfill", "expected"),
    [
        (False, {1: 0, 2: 0, 3: 30, 4: 15, 5: 10}),  # LCFS order: E before C
        (True, {1: 0, 2: 0, 3: 30, 4: 10, 5: 15}),  # overdue: C (r2) before E (r3)
    ],
)
def test_threshold_backfill_orders_overdue_candidates_by_submit_time(
    sim, threshold_backfill, expected
):
    # m=4, EASY(LCFS, LCFS, Θ=5). A(1) r0 q2 p10; X(2) r0 q2 p30; B(3) r1 q4 p10;
    # C(4) r2 q2 p5; E(5) r3 q2 p5.
    # t=0: A and X start, free 0. t=1..3: nothing fits (no job is overdue yet).
    # t=10: A completes, free 2. Waits B 9, C 8, E 7: all overdue -> queue B, C, E by (r, id).
    #   B (4) does not fit: h=B; walk X (e30): 2 + 2 = 4 -> s=30, x=0. Candidates C, E, both
    #   end by s, room for one:
    #   plain LCFS order: E (r3) first -> E at 10. t=15: E completes, free 2; h=B; C:
    #     15+5 = 20 <= 30 -> C at 15. t=30: X completes -> B at 30.
    #   thresholded: both overdue, by submit time: C first -> C at 10. t=15: C completes;
    #     h=B; E: 20 <= 30 -> E at 15. t=30: B at 30.
    jobs = [job(1, 0, 2, 10), job(2, 0, 2, 30), job(3, 1, 4, 10), job(4, 2, 2, 5),
            job(5, 3, 2, 5)]  # fmt: skip
    assert (
        sim(jobs, 4, primary="LCFS", backfill="LCFS", threshold_s=5.0,
            threshold_backfill=threshold_backfill)
        == expected
    )  # fmt: skip


@pytest.mark.parametrize(
    ("threshold_backfill", "expected"),
    [
        (False, {1: 0, 2: 0, 3: 30, 4: 40, 5: 10}),  # young D takes the extra processor
        (True, {1: 0, 2: 0, 3: 30, 4: 10, 5: 40}),  # overdue C takes it
    ],
)
def test_threshold_backfill_gives_the_extra_processors_to_overdue_jobs_first(
    sim, threshold_backfill, expected
):
    # m=6, EASY(SPF, SPF, Θ=5). A(1) r0 q4 p10; X(2) r0 q2 p30; B(3) r1 q5 p10;
    # C(4) r2 q1 p40; D(5) r6 q1 p35.
    # t=0: A and X start, free 0; the passes at t=1, 2, 6 find no free processor.
    # t=10: A completes, free 4. Waits B 9, C 8, D 4: B, C overdue -> queue B, C, D. B (5)
    #   does not fit: h=B; walk X (e30): 4 + 2 = 6 >= 5 -> s=30, x=1. C (ends 50) and D
    #   (ends 45) both end after s: each needs the one extra processor.
    #   plain SPF order: D (e35) first: q1 <= x=1 -> D at 10, x=0; C: q1 > x=0 -> refused.
    #     t=30: X completes, free 5: queue B, C (overdue): B at 30, free 0; h=C.
    #     t=40: B completes -> C at 40.
    #   thresholded: C (overdue) first -> C at 10, x=0; D refused. t=30: X completes, free 5:
    #     queue B, D (wait 24, overdue): B at 30. t=40: B completes -> D at 40.
    jobs = [job(1, 0, 4, 10), job(2, 0, 2, 30), job(3, 1, 5, 10), job(4, 2, 1, 40),
            job(5, 6, 1, 35)]  # fmt: skip
    assert (
        sim(jobs, 6, primary="SPF", backfill="SPF", threshold_s=5.0,
            threshold_backfill=threshold_backfill)
        == expected
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Estimates: early completion, outliving the estimate, passes only at events
# ---------------------------------------------------------------------------------------------


def test_actual_shorter_than_estimate_moves_queue_earlier(sim):
    # m=4. A(1) r0 q4 p5 e20; B(2) r1 q4 p10.
    # t=1: h=B, s=20 (A's estimated end). t=5: A really completes -> B starts at 5, not 20.
    jobs = [job(1, 0, 4, 5, est=20), job(2, 1, 4, 10)]
    assert sim(jobs, 4) == {1: 0, 2: 5}


def test_actual_shorter_than_estimate_with_backfilled_job(sim):
    # m=4. A(1) r0 q3 p5 e20; B(2) r1 q4 p10; C(3) r2 q1 p10.
    # t=2: h=B, walk A: 1 + 3 = 4 at e=20 -> s=20, x=0. C ends 12 <= 20 -> backfilled at 2.
    # t=5: A completes (early), free 3 < 4. Walk: 3 + C's 1 = 4 at C's end 12 -> s=12.
    # t=12: C completes -> B starts at 12.
    jobs = [job(1, 0, 3, 5, est=20), job(2, 1, 4, 10), job(3, 2, 1, 10)]
    assert sim(jobs, 4) == {1: 0, 2: 12, 3: 2}


@pytest.mark.parametrize(
    ("outlive", "c_est", "expected"),
    [
        # requested: A's estimate 5 -> 30, e=30. C ends 12 + c_est <= 30 -> backfilled.
        #   c_est=7: C 12..19. t=19: free 1, h=B, walk A e=30. t=20: A done, free 4: B at 20.
        ("requested", 7, {1: 0, 2: 20, 3: 12}),
        #   c_est=9: C 12..21. t=20: A done, free 3 < 4; walk C (e=21) -> s=21. t=21: B at 21.
        ("requested", 9, {1: 0, 2: 21, 3: 12}),
        # double: 5 -> 10 (0 + 10 <= 12, double again) -> 20 > 12: e=20 -> s=20, x=0.
        #   c_est=7: C ends 19 <= 20 -> backfilled at 12. t=20: A done (C done at 19): B at 20.
        ("double", 7, {1: 0, 2: 20, 3: 12}),
        #   c_est=9: C ends 21 > 20, x=0 -> refused. t=20: A done: B 20..30, h=C. C at 30.
        ("double", 9, {1: 0, 2: 20, 3: 30}),
    ],
)
def test_outlive_underestimated_running_job(sim, outlive, c_est, expected):
    # m=4. A(1) r0 q3 p20 with an estimate array value 5 (requested 30); B(2) r1 q4 p10;
    # C(3) r12 q1, runs its estimate.
    # t=1: h=B, walk A (e=5 > 1, not outlived): s=5, x=0. No other event before t=12
    #      (A's estimated end 5 is not an event).
    # t=12: A is still running with e=5 <= 12: revised per `outlive` before the walk.
    jobs = [job(1, 0, 3, 20, est=5, req=30), job(2, 1, 4, 10), job(3, 12, 1, c_est)]
    assert sim(jobs, 4, outlive=outlive) == expected


@pytest.mark.parametrize(
    ("outlive", "c_est", "expected"),
    [
        # requested: requested end 10 <= 12 -> e = now + 1 = 13 -> s=13, x=0.
        #   c_est=1: C ends 13 <= 13 -> backfilled at 12. t=20: A done, B at 20.
        ("requested", 1, {1: 0, 2: 20, 3: 12}),
        #   c_est=2: ends 14 > 13 -> refused. t=20: A done: B 20..30, C at 30.
        ("requested", 2, {1: 0, 2: 20, 3: 30}),
        # double: 10 -> 20 > 12, e=20 -> s=20. c_est=2: ends 14 <= 20 -> backfilled at 12.
        ("double", 2, {1: 0, 2: 20, 3: 12}),
    ],
)
def test_outlive_past_requested_time_now_plus_one(sim, outlive, c_est, expected):
    # m=4. A(1) r0 q3 p20, estimate = requested = 10 (runs past its requested time);
    # B(2) r1 q4 p10; C(3) r12 q1 runs its estimate.
    # t=1: h=B, s=10, x=0. t=12: A running with e=10 <= 12 -> revised.
    jobs = [job(1, 0, 3, 20, est=10, req=10), job(2, 1, 4, 10), job(3, 12, 1, c_est)]
    assert sim(jobs, 4, outlive=outlive) == expected


def test_no_pass_at_estimated_end(sim):
    # m=4. A(1) r0 q3 p20 e5 (requested 30); B(2) r1 q4 p10; C(3) r2 q1 p20.
    # t=2: h=B, A's e=5 > 2 (not revised) -> s=5, x=0. C ends 22 > 5 -> refused.
    # There is no pass at t=5 (an estimated end is not an event), so C is never reconsidered
    # with A's revised estimate. Next event t=20: A completes, free 4: B 20..30 (free 0), h=C.
    # t=30: C starts.
    jobs = [job(1, 0, 3, 20, est=5, req=30), job(2, 1, 4, 10), job(3, 2, 1, 20)]
    assert sim(jobs, 4) == {1: 0, 2: 20, 3: 30}


# ---------------------------------------------------------------------------------------------
# Simultaneous events and tie-breaking
# ---------------------------------------------------------------------------------------------


def test_simultaneous_completion_and_submission_one_pass(sim):
    # m=4, SPF. A(1) r0 q4 p10; B(2) r5 q4 p20; C(3) r10 q4 p3.
    # t=10: A completes AND C is submitted; both are applied before the single pass, so the
    #       queue is B (20), C (3) under SPF -> C starts at 10, B waits.
    #       (A pass before C's submission would have started B at 10.)
    # t=13: C completes -> B at 13.
    jobs = [job(1, 0, 4, 10), job(2, 5, 4, 20), job(3, 10, 4, 3)]
    assert sim(jobs, 4, primary="SPF") == {1: 0, 2: 13, 3: 10}


def test_ties_by_submit_time_then_job_number(sim):
    # m=2, SPF, all keys equal (estimate 5). A(1) r0 q2 p10; then jobs 3 and 2 at r2, job 4 at r1,
    # all q2 p5. Equal keys -> submit time, then job number: 4 (r1), 2 (r2), 3 (r2).
    # t=10: 4 at 10; t=15: 2 at 15; t=20: 3 at 20.
    jobs = [job(1, 0, 2, 10), job(3, 2, 2, 5), job(2, 2, 2, 5), job(4, 1, 2, 5)]
    assert sim(jobs, 2, primary="SPF") == {1: 0, 4: 10, 2: 15, 3: 20}


# ---------------------------------------------------------------------------------------------
# Dynamic policies: the order depends on the waiting time at the pass
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a_run", "expected"),
    [
        # t=11: Y key -(11 + 100)/100 = -1.11; X key -(1 + 10)/10 = -1.1 -> Y first.
        #       Y 11..111, X at 111.
        (11, {1: 0, 2: 11, 3: 111}),
        # t=20: Y -(20 + 100)/100 = -1.2; X -(10 + 10)/10 = -2 -> X first. X 20..30, Y at 30.
        (20, {1: 0, 2: 30, 3: 20}),
    ],
)
def test_lexp_order_changes_with_waiting_time(sim, a_run, expected):
    # m=1. A(1) r0 p=a_run; Y(2) r0 p100; X(3) r10 p10; all q1. Primary LEXP; no backfill is
    # possible (free is always 0 while something waits). At A's completion the expansion
    # factors decide; the crossover is at t = 100/9 ~ 11.1.
    jobs = [job(1, 0, 1, a_run), job(2, 0, 1, 100), job(3, 10, 1, 10)]
    assert sim(jobs, 1, primary="LEXP") == expected


@pytest.mark.parametrize(
    ("a_run", "expected"),
    [
        # t=8: Y (8/10)^3 * 1 = 0.512, X (3/10)^3 * 8 = 0.216 -> keys -0.512 < -0.216: Y first.
        #      Y starts (free 7), h=X (8): walk Y e=18 -> X at 18.
        (8, {1: 0, 2: 8, 3: 18}),
        # t=20: Y (20/10)^3 = 8, X (15/10)^3 * 8 = 27 -> X first: X 20..30 (free 0), h=Y: 30.
        (20, {1: 0, 2: 30, 3: 20}),
    ],
)
def test_wfp3_order_changes_with_waiting_time(sim, a_run, expected):
    # m=8, WFP3. A(1) r0 q8 p=a_run; Y(2) r0 q1 p10; X(3) r5 q8 p10.
    # Y: (T/10)^3, X: 8 ((T-5)/10)^3 -> X ahead iff 2(T-5) > T iff T > 10.
    # (At t=5 X's wait is 0, Y is ahead, nothing fits: free 0.)
    jobs = [job(1, 0, 8, a_run), job(2, 0, 1, 10), job(3, 5, 8, 10)]
    assert sim(jobs, 8, primary="WFP3") == expected


# ---------------------------------------------------------------------------------------------
# Policy formulas (naive only)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # job: r=99, est=100, q=2; now=129 -> wait 30; first submission 0 -> r' = 100.
        ("FCFS", 99.0),
        ("LCFS", -99.0),
        ("SPF", 100.0),
        ("LPF", -100.0),
        ("SQF", 2.0),
        ("LQF", -2.0),
        ("LEXP", -1.3),  # -(30 + 100)/100
        ("SEXP", 1.3),
        ("LRF", -50.0),  # -100/2
        ("SRF", 50.0),
        ("LAF", -200.0),
        ("SAF", 200.0),
        ("WFP3", -0.054),  # -(0.3^3 * 2) = -0.027 * 2
        ("UNICEF", -0.3),  # log2(2) = 1 -> -30 / (1 * 100)
        ("F1", 1744.0),  # log10(100) * 2 + 870 * log10(100) = 4 + 1740
        ("F2", 51220.0),  # sqrt(100) * 2 + 25600 * 2
        ("F3", 13_720_200.0),  # 100 * 2 + 6.86e6 * 2
        ("F4", 100 * math.sqrt(2) + 1.06e6),  # 100 * sqrt(2) + 5.3e5 * 2
    ],
)
def test_naive_priority_formulas(policy, expected):
    job = NaiveJob(7, 99.0, 2, 50.0, 100.0, 200.0)
    assert naive_priority(policy, job, 129.0, 0.0) == pytest.approx(expected, rel=1e-12)


def test_naive_priority_more_values():
    # q=1: UNICEF's log2 is guarded to 1: wait 20, est 10 -> -20/10 = -2.
    one = NaiveJob(1, 0.0, 1, 5.0, 10.0, 10.0)
    assert naive_priority("UNICEF", one, 20.0, 0.0) == pytest.approx(-2.0)
    # q=8: log2(8) = 3 -> -20/(3 * 10) = -2/3.
    eight = NaiveJob(2, 0.0, 8, 5.0, 10.0, 10.0)
    assert naive_priority("UNICEF", eight, 20.0, 0.0) == pytest.approx(-2.0 / 3.0)
    # WFP3: wait 20, est 10, q 4 -> -(2^3 * 4) = -32. LEXP: -(20 + 10)/10 = -3.
    four = NaiveJob(3, 0.0, 4, 5.0, 10.0, 10.0)
    assert naive_priority("WFP3", four, 20.0, 0.0) == pytest.approx(-32.0)
    assert naive_priority("LEXP", four, 20.0, 0.0) == pytest.approx(-3.0)
    # F4 with q=4, est 100, r=1009, first submission 10 -> r' = 1000:
    # 100 * 2 + 5.3e5 * 3 = 1_590_200.
    f4 = NaiveJob(4, 1009.0, 4, 5.0, 100.0, 100.0)
    assert naive_priority("F4", f4, 2000.0, 10.0) == pytest.approx(1_590_200.0)
    # first_submit_s in naive_simulate is the smallest submit time of the jobs: with F1 and
    # equal (est, q) the earlier job has the smaller key.
    with pytest.raises(ValueError):
        naive_priority("NOPE", one, 0.0, 0.0)


def test_job_larger_than_machine_is_rejected():
    with pytest.raises(ValueError):
        naive_simulate([job(1, 0, 5, 10)], 4)
