"""Conservative backfilling with Slurm's limits (docs/simulator.md, "Conservative backfilling").

Hand-worked schedules (the reasoning in the comments, derived from the doc on paper) run on the
compiled variant and on the literal reference ``support.naive_conservative``; a hypothesis
differential test compares the two job by job; ``depth=1`` equals EASY(P, P, Θ) with the classic
reservation and the thresholded backfill order, job by job, on random workloads and on the
bundled KTH slice.

Notation: "A(1) r0 q4 p10" = job 1 submitted at 0, 4 processors, runs (and is estimated) 10 s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.adapters import fast_simulation
from support.naive import NaiveJob
from support.naive_conservative import naive_conservative
from support.workloads import workloads

from scheduler import ConfigurationError, read_swf, simulate, strong_filter
from scheduler.policies import policy_names
from scheduler.sim.conservative import (
    _run,
    checked_limits,
    simulate_conservative,
    simulate_conservative_arrays,
)

POLICIES = policy_names()
THRESHOLDS = (None, 0.0, 5.0, 30.0, 120.0)
KTH_SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"


def job(job_id, submit, procs, run, est=None, req=None) -> NaiveJob:
    est = run if est is None else est
    return NaiveJob(job_id, float(submit), procs, float(run), float(est),
                    float(est if req is None else req))  # fmt: skip


def fast_schedule(jobs, machine_procs, **kwargs):
    return simulate_conservative_arrays(
        np.array([j.submit_s for j in jobs]), np.array([j.procs for j in jobs]),
        np.array([j.run_s for j in jobs]), np.array([j.estimate_s for j in jobs]),
        machine_procs, requested_s=np.array([j.requested_s for j in jobs]),
        job_id=np.array([j.job_id for j in jobs]), **kwargs,
    )  # fmt: skip


def run_fast(jobs, machine_procs, **kwargs) -> dict[int, float]:
    starts = fast_schedule(jobs, machine_procs, **kwargs).start_s
    return {j.job_id: float(s) for j, s in zip(jobs, starts, strict=True)}


def run_naive(jobs, machine_procs, **kwargs) -> dict[int, float]:
    return {i: r.start_s for i, r in naive_conservative(jobs, machine_procs, **kwargs).items()}


@pytest.fixture(params=["naive", "fast"])
def sim(request):
    return {"naive": run_naive, "fast": run_fast}[request.param]


# -- hand-worked schedules ----------------------------------------------------------------------

# m=6. A(1) r0 q4 p10; B(2) r1 q4 p10; C(3) r1 q6 p10; F(5) r1 q2 p30; G(6) r1 q2 p9.
THREE = [job(1, 0, 4, 10), job(2, 1, 4, 10), job(3, 1, 6, 10), job(5, 1, 2, 30), job(6, 1, 2, 9)]


def test_a_profile_with_three_reservations(sim):
    # t=0: A starts, free 2. Profile at t=1: 2 free on [1,10), 6 from 10.
    # t=1, FCFS walk: B (q4) earliest 10 -> reserved [10,20) (2 free there).
    #   C (q6): 1 no, 10 no (2), 20: [20,30) has 6 -> reserved [20,30) (0 free there).
    #   F (q2, 30 s): now would hold [1,31), short at 20 (0 free) -> earliest: 10 no (short at
    #   20), 20 no, 30: [30,60) has 6 -> reserved at 30 (the third reservation).
    #   G (q2, 9 s): [1,10) has 2 -> starts at 1 (backfilled).
    # t=10: A ends; B starts (main pass); C reserved 20, F 30 again. t=20: C; t=30: F.
    assert sim(THREE, 6) == {1: 0, 2: 10, 3: 20, 5: 30, 6: 1}


def test_depth_one_is_easy_on_the_same_jobs(sim):
    # depth 1: only B gets a reservation ([10,20), 2 free); F fits now: [1,31) has 2 free
    # throughout (10..20: 6 - 4) -> starts at 1, and G finds no processor. As EASY: s=10, x=2,
    # F takes the extra processors. t=10: B starts; C waits for F's end 31; G (9 s) fits at 20
    # before C's reservation at 31 ([20,29) has 4 free) -> 20.
    expected = {1: 0, 2: 10, 3: 31, 5: 1, 6: 20}
    assert sim(THREE, 6, depth=1) == expected
    easy = fast_simulation(THREE, 6, primary="FCFS", backfill="FCFS", reservation="classic",
                           threshold_backfill=True)  # fmt: skip
    assert dict(zip([j.job_id for j in THREE], easy.start_s.tolist(), strict=True)) == expected


def test_a_window_hides_a_job(sim):
    # bf_window 15 s. t=1: B earliest 10 <= 16 -> reserved; C earliest 20 > 16 -> no reservation:
    # hidden, so F fits now ([1,31): 2 free, B leaves 2) -> starts at 1; G: no free processor.
    # t=10: A ends, B starts (free 0). C earliest 31 (F's end) > 25: hidden again. G earliest 20
    # (B's end) <= 25 -> reserved [20,29). t=20: B ends; C earliest 31 <= 35 -> reserved;
    # G fits [20,29) before it -> starts at 20. t=31: F ends, C starts.
    assert sim(THREE, 6, bf_window_s=15) == {1: 0, 2: 10, 3: 31, 5: 1, 6: 20}
    # the bound is inclusive: with 19 s, C's earliest start 20 = 1 + 19 is reserved at t=1 (and
    # F is hidden, not started: it fits neither now nor before 20); with 18 s C is hidden
    assert sim(THREE, 6, bf_window_s=19) == {1: 0, 2: 10, 3: 20, 5: 30, 6: 1}
    assert sim(THREE, 6, bf_window_s=18)[5] == 1


def test_resolution_rounds_ends_up(sim):
    # m=2. A(1) r0 q1 p7; B(2) r1 q2 p10; C(3) r1 q1 p8.
    # No resolution: B earliest 7 (A's end) -> [7,17); C would hold [1,9) -> short at 7; C
    #   reserved at 17. t=7: A ends, B starts; t=17: C.
    # Resolution 10: A's end is 10 -> B reserved [10,20); C holds [1, ⌈9⌉ = 10) -> fits, starts
    #   at 1. t=7: A ends (1 free); B earliest: C's end 9 rounds to 10. t=9: C ends, B starts.
    jobs = [job(1, 0, 1, 7), job(2, 1, 2, 10), job(3, 1, 1, 8)]
    assert sim(jobs, 2) == {1: 0, 2: 7, 3: 17}
    assert sim(jobs, 2, bf_resolution_s=10) == {1: 0, 2: 9, 3: 1}
    # and a job refused by it: C of 9.5 s ends at ⌈10.5⌉ = 20 > 10 (reserved at 20 instead)
    jobs = [job(1, 0, 1, 7), job(2, 1, 2, 10), job(3, 1, 1, 9.5)]
    assert sim(jobs, 2, bf_resolution_s=10)[3] == 17


def test_depth_zero_is_first_fit(sim):
    # m=2. A(1) r0 q1 p10; B(2) r1 q2 p5; C(3) r2 q1 p20.
    # conservative: B reserved [10,15); C would hold [2,22) -> short at 10; reserved at 15.
    # depth 0: no reservation: C fits now -> starts at 2 and B waits for its end, 22.
    jobs = [job(1, 0, 1, 10), job(2, 1, 2, 5), job(3, 2, 1, 20)]
    assert sim(jobs, 2) == {1: 0, 2: 10, 3: 15}
    assert sim(jobs, 2, depth=0) == {1: 0, 2: 22, 3: 2}


def test_periodic_backfill_pass(sim):
    # m=2. A(1) r0 q1 p10; B(2) r1 q2 p5; C(3) r2 q1 p3.
    # Every instant: t=2: C [2,5) fits before B's reservation at 10 -> 2.
    # bf_interval 4: t=2 runs the main pass only (B blocks); the pass at t=4 backfills C.
    jobs = [job(1, 0, 1, 10), job(2, 1, 2, 5), job(3, 2, 1, 3)]
    assert sim(jobs, 2) == {1: 0, 2: 10, 3: 2}
    assert sim(jobs, 2, bf_interval_s=4) == {1: 0, 2: 10, 3: 4}


def test_main_pass_depth(sim):
    # m=4, three 1-processor jobs at t=1, default_queue_depth 2, backfill every 100 s: the main
    # pass at 1 starts two; the third starts at the next event, their end at 11.
    jobs = [job(1, 1, 1, 10), job(2, 1, 1, 10), job(3, 1, 1, 10)]
    assert sim(jobs, 4, default_queue_depth=2, bf_interval_s=100) == {1: 1, 2: 1, 3: 11}
    assert sim(jobs, 4, default_queue_depth=2) == {1: 1, 2: 1, 3: 1}  # the backfill pass


def test_max_job_test_limits_the_walk(sim):
    # the THREE workload with bf_max_job_test 3: at t=1 the walk is B, C, F; G is not looked at
    # (nor at 10, when the walk is C, F, G... G starts then only if it fits: [10,19) has 2 free
    # before C's reservation at 20 -> 10).
    assert sim(THREE, 6, bf_max_job_test=3) == {1: 0, 2: 10, 3: 20, 5: 30, 6: 10}


def test_a_shorter_job_is_searched_before_a_longer_ones_start(sim):
    # m=4. A(1) r0 q1 p5; C(2) r0 q2 p12; then at 1: B(3) q4 p10; X(4) q2 p30; Y(5) q2 p5;
    # Z(6) q1 p8. Free: 1 to 5, 2 to 12, 4 after.
    # t=1: B reserved [12,22); X: 5 short at 12 -> reserved at 22. Y is as large as X but
    #   shorter: its search may not start at X's 22: [5,10) has 2 -> reserved at 5. Z (q1):
    #   now would hold [1,9), short at 5 (Y) -> reserved at 22 ([22,30): 2 beside X).
    # t=5: A ends; Y starts (backfilled). t=10: Y ends; Z reserved at 22 again. t=12: B starts.
    # t=22: X and Z start.
    jobs = [job(1, 0, 1, 5), job(2, 0, 2, 12), job(3, 1, 4, 10), job(4, 1, 2, 30),
            job(5, 1, 2, 5), job(6, 1, 1, 8)]  # fmt: skip
    assert sim(jobs, 4) == {1: 0, 2: 0, 3: 12, 4: 22, 5: 5, 6: 22}


def test_a_job_started_by_the_main_pass_is_in_the_next_profile(sim):
    # m=5, LPF. A(1) r0 q3 p30; B(2) r1 q5 p50; G(3) r1 q2 p40; C(4) r2 q1 p200; E(5) r2 q1 p39;
    # D(6) r2 q1 p10.
    # t=1: B reserved [30,80); G (q2, 2 free) would hold [1,41), short at 30: reserved at 80.
    # t=2: nothing ended, but the main pass starts C (the longest, ahead of B; 1 free): this
    #   pass may not resume t=1's walk, whose profile lacks C. Afresh: B earliest 202 (C's
    #   end); G reserved [30,70) (4 free there); E holds [2,41): 1 free to 30, then 2 -> starts;
    #   D (q1, 0 free) is not walked. (Resumed from t=1's profile, E would be short at 30 and D
    #   would start at 2.)
    # t=30: A ends (3 free): G starts ([30,70): 3 then 4), D starts ([30,40): 1). t=202: B.
    jobs = [job(1, 0, 3, 30), job(2, 1, 5, 50), job(3, 1, 2, 40), job(4, 2, 1, 200),
            job(5, 2, 1, 39), job(6, 2, 1, 10)]  # fmt: skip
    assert sim(jobs, 5, primary="LPF") == {1: 0, 2: 202, 3: 30, 4: 2, 5: 2, 6: 30}


# -- differential and degenerate settings -------------------------------------------------------

LIMITS = st.fixed_dictionaries({
    "depth": st.one_of(st.none(), st.integers(0, 3)),
    "bf_window_s": st.one_of(st.none(), st.sampled_from([0.0, 10.0, 45.0])),
    "bf_resolution_s": st.one_of(st.none(), st.sampled_from([1.0, 7.0, 30.0])),
    "bf_interval_s": st.one_of(st.none(), st.sampled_from([1.0, 5.0, 13.0])),
    "bf_max_job_test": st.one_of(st.none(), st.integers(1, 4)),
    "default_queue_depth": st.one_of(st.none(), st.integers(1, 3)),
})  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workload=workloads(),
    primary=st.sampled_from(POLICIES),
    threshold_s=st.sampled_from(THRESHOLDS),
    outlive=st.sampled_from(["requested", "double"]),
    limits=LIMITS,
)
def test_fast_equals_reference(workload, primary, threshold_s, outlive, limits):
    jobs, m = workload
    want = naive_conservative(jobs, m, primary, threshold_s, outlive=outlive, **limits)
    got = fast_schedule(jobs, m, primary=primary,
                        threshold_s=np.inf if threshold_s is None else threshold_s,
                        outlive=outlive, **limits)  # fmt: skip
    for j, start, backfilled in zip(jobs, got.start_s, got.backfilled, strict=True):
        assert (start, bool(backfilled)) == (want[j.job_id].start_s, want[j.job_id].backfilled), (
            f"job {j.job_id}: fast {start} ({bool(backfilled)}), reference "
            f"{want[j.job_id]} with {primary}, {threshold_s}, {outlive}, {limits}"
        )


# m=4. J1 r0 q2 p10 runs [0,10). t=1: J2 (q3, 10 s) reserved [10,20): the pool holds 3 there,
# free 1; J3 (q1, 20 s): [1,21) has 1 free throughout -> starts at 1 (backfilled). With whole
# nodes of 4 processors J2's reservation holds the node: J3 does not fit before 20; at 10 J1 ends,
# J2 starts (main pass) and J3 fits beside it (1 free, no reservation left) -> starts at 10.
NODE = [job(1, 0, 2, 10), job(2, 1, 3, 10), job(3, 1, 1, 20)]


def test_a_reservation_holds_whole_nodes(sim):
    assert sim(NODE, 4) == {1: 0, 2: 10, 3: 1}
    assert sim(NODE, 4, node_procs=4) == {1: 0, 2: 10, 3: 10}
    assert sim(NODE, 4, node_procs=2) == {1: 0, 2: 10, 3: 10}  # J2 holds 2 nodes: all 4
    assert sim(NODE, 4, node_procs=1) == sim(NODE, 4)  # nodes of one processor: processors


def test_node_procs_must_divide_the_machine():
    with pytest.raises(ConfigurationError, match="node_procs=3 does not divide the machine's 4"):
        fast_schedule(NODE, 4, node_procs=3)
    with pytest.raises(ConfigurationError, match="node_procs"):
        fast_schedule(NODE, 4, node_procs=0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(), primary=st.sampled_from(["FCFS", "SPF", "LEXP"]), limits=LIMITS,
       data=st.data())  # fmt: skip
def test_whole_node_reservations_equal_the_reference(workload, primary, limits, data):
    jobs, m = workload
    node_procs = data.draw(st.sampled_from([d for d in range(1, m + 1) if m % d == 0]))
    want = naive_conservative(jobs, m, primary, node_procs=node_procs, **limits)
    got = fast_schedule(jobs, m, primary=primary, node_procs=node_procs, **limits)
    assert [(s, bool(b)) for s, b in zip(got.start_s, got.backfilled, strict=True)] == [
        (want[j.job_id].start_s, want[j.job_id].backfilled) for j in jobs
    ]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workload=workloads(),
    primary=st.sampled_from(POLICIES),
    threshold_s=st.sampled_from(THRESHOLDS),
    outlive=st.sampled_from(["requested", "double"]),
)
def test_depth_one_is_easy_job_by_job(workload, primary, threshold_s, outlive):
    jobs, m = workload
    got = fast_schedule(jobs, m, primary=primary, depth=1, outlive=outlive,
                        threshold_s=np.inf if threshold_s is None else threshold_s)  # fmt: skip
    easy = fast_simulation(
        jobs, m, primary=primary, backfill=primary, threshold_s=threshold_s,
        reservation="classic", outlive=outlive, threshold_backfill=True,
    )  # fmt: skip
    assert got.start_s.tolist() == easy.start_s.tolist()
    assert got.backfilled.tolist() == easy.backfilled.tolist()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(), primary=st.sampled_from(POLICIES), depth=st.one_of(st.none(),
       st.integers(0, 3)))  # fmt: skip
def test_a_resolution_of_one_second_changes_nothing_on_whole_seconds(workload, primary, depth):
    jobs, m = workload
    plain = fast_schedule(jobs, m, primary=primary, depth=depth)
    rounded = fast_schedule(jobs, m, primary=primary, depth=depth, bf_resolution_s=1.0)
    assert plain.start_s.tolist() == rounded.start_s.tolist()


# -- the resumed backfill pass (docs/simulator.md, "Speed") ------------------------------------


@st.composite
def long_queues(draw, max_jobs: int = 24) -> tuple[list[NaiveJob], int]:
    """(jobs, machine_procs): bursts of submissions onto a small machine with long jobs, so that
    queues grow long and most instants only add jobs (where a backfill pass resumes the
    previous one); estimates exact, over or under (revisions), a few short jobs (that end
    between bursts)."""
    machine_procs = draw(st.integers(2, 10))
    n = draw(st.integers(4, max_jobs))
    ids = draw(st.permutations(range(1, n + 1)))
    bursts = draw(st.lists(st.integers(0, 200), min_size=1, max_size=6))
    jobs = []
    for job_id in ids:
        run = draw(st.one_of(st.integers(100, 400), st.integers(1, 30)))
        estimate = draw(st.one_of(st.just(run), st.integers(1, 600)))
        submit = draw(st.sampled_from(bursts)) + draw(st.integers(0, 3))
        jobs.append(NaiveJob(job_id, float(submit), draw(st.integers(1, machine_procs)),
                             float(run), float(estimate), float(estimate)))  # fmt: skip
    return jobs, machine_procs


def resumed_and_afresh(jobs, machine_procs, primary="FCFS", threshold_s=np.inf, **limits):
    """The schedules with the backfill passes resuming and starting afresh, and the number of
    resumed passes."""
    arrays = tuple(np.array([getattr(j, name) for j in jobs])
                   for name in ("submit_s", "procs", "run_s", "estimate_s"))  # fmt: skip
    runs = [
        _run(*arrays, machine_procs, primary=primary, threshold_s=threshold_s,
             limits=checked_limits(**{**dict.fromkeys(LIMITS_NAMES), **limits}),
             requested_s=arrays[3], job_id=np.array([j.job_id for j in jobs]),
             outlive="double", validate=True, resume=resume)
        for resume in (True, False)
    ]  # fmt: skip
    return runs[0][0], runs[1][0], runs[0][1]


LIMITS_NAMES = ("depth", "bf_window_s", "bf_resolution_s", "bf_interval_s", "bf_max_job_test",
                "default_queue_depth")  # fmt: skip


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=long_queues(max_jobs=40), primary=st.sampled_from(POLICIES),
       threshold_s=st.sampled_from(THRESHOLDS), limits=LIMITS)  # fmt: skip
def test_resumed_passes_equal_passes_from_scratch(workload, primary, threshold_s, limits):
    jobs, m = workload
    theta = np.inf if threshold_s is None else threshold_s
    resumed, afresh, _ = resumed_and_afresh(jobs, m, primary, theta, **limits)
    assert resumed.start_s.tolist() == afresh.start_s.tolist()
    assert resumed.backfilled.tolist() == afresh.backfilled.tolist()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=long_queues(), primary=st.sampled_from(["FCFS", "SPF", "WFP3"]),
       limits=LIMITS)  # fmt: skip
def test_long_queues_against_the_reference(workload, primary, limits):
    jobs, m = workload
    want = naive_conservative(jobs, m, primary, outlive="double", **limits)
    got = resumed_and_afresh(jobs, m, primary, **limits)[0]
    assert [(s, bool(b)) for s, b in zip(got.start_s, got.backfilled, strict=True)] == [
        (want[j.job_id].start_s, want[j.job_id].backfilled) for j in jobs
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(3, 8), seed=st.integers(0, 2**16), limits=LIMITS)
def test_runs_of_alike_jobs_against_the_reference(m, seed, limits):
    # job arrays: runs of jobs with alike processors and estimates, where an earliest-start
    # search starts at the one of a recent job when that job is no larger and no longer
    rng = np.random.default_rng(seed)
    jobs, job_id = [], 0
    for burst in range(4):
        q, est = int(rng.integers(1, m + 1)), float(rng.integers(5, 80))
        for _ in range(int(rng.integers(2, 6))):
            job_id += 1
            jobs.append(job(job_id, burst * 20 + int(rng.integers(0, 3)), q, est,
                            est * float(rng.choice([1.0, 2.0]))))  # fmt: skip
            q = min(m, max(1, q + int(rng.integers(-1, 2))))
            est = max(1.0, est + float(rng.integers(-10, 10)))
    want = naive_conservative(jobs, m, "FCFS", **limits)
    got = fast_schedule(jobs, m, **limits)
    assert [(s, bool(b)) for s, b in zip(got.start_s, got.backfilled, strict=True)] == [
        (want[j.job_id].start_s, want[j.job_id].backfilled) for j in jobs
    ]


@pytest.mark.parametrize(
    "limits",
    [{}, {"depth": 2}, {"bf_window_s": 500.0}, {"bf_resolution_s": 7.0},
     {"bf_interval_s": 5.0, "default_queue_depth": 3}, {"bf_max_job_test": 6}],
)  # fmt: skip
def test_a_long_queue_resumes_most_passes_and_changes_no_start(limits):
    # 300 jobs in bursts on 16 processors: the queue grows to hundreds, most instants only add
    # jobs, so most passes resume; the schedule is the one of passes from scratch
    rng = np.random.default_rng(7)
    n = 300
    submit = np.sort(rng.integers(0, 30, n) * 100 + rng.integers(0, 5, n)).astype(float)
    run = rng.choice([5.0, 60.0, 600.0, 3000.0], n)
    jobs = [NaiveJob(i + 1, float(submit[i]), int(rng.integers(1, 17)), float(run[i]),
                     float(run[i] * rng.choice([0.5, 1.0, 3.0])), float(run[i] * 3.0))
            for i in range(n)]  # fmt: skip
    resumed, afresh, count = resumed_and_afresh(jobs, 16, **limits)
    assert resumed.start_s.tolist() == afresh.start_s.tolist()
    assert resumed.backfilled.tolist() == afresh.backfilled.tolist()
    assert count > 0


@pytest.fixture(scope="module")
def kth_slice():
    return strong_filter(read_swf(KTH_SLICE))[0]


@pytest.mark.parametrize("policy", ["FCFS", "SPF", "LEXP", "WFP3", "F1"])
def test_depth_one_is_easy_on_the_kth_slice(kth_slice, policy):
    conservative = simulate_conservative(kth_slice, policy, depth=1)
    easy = simulate(kth_slice, primary=policy, backfill=policy, reservation="classic",
                    threshold_backfill=True)  # fmt: skip
    assert conservative.jobs["start_s"].to_list() == easy.jobs["start_s"].to_list()
    assert conservative.jobs["backfilled"].to_list() == easy.jobs["backfilled"].to_list()


def test_conservative_on_the_kth_slice_against_the_reference(kth_slice):
    jobs_table = kth_slice.jobs.head(400)
    result = simulate_conservative(kth_slice.with_jobs(jobs_table), "SPF", threshold="2h")
    jobs = [
        NaiveJob(int(r["job_id"]), float(r["submit_s"]), int(r["procs"]), float(r["run_s"]),
                 float(r["estimate_s"]), float(r["estimate_s"]))
        for r in result.jobs.iter_rows(named=True)
    ]  # fmt: skip
    want = naive_conservative(jobs, kth_slice.machine_procs, "SPF", 7200.0)
    assert result.jobs["start_s"].to_list() == [want[j.job_id].start_s for j in jobs]
    assert result.summary.jobs == len(jobs)


def test_same_input_same_result(kth_slice):
    first = simulate_conservative(kth_slice, "LEXP", bf_window_s="1h", bf_resolution_s=60)
    again = simulate_conservative(kth_slice, "LEXP", bf_window_s="1h", bf_resolution_s=60)
    assert first.jobs.equals(again.jobs)
    assert first.config.bf_window_s == 3600.0 and first.config.to_dict()["threshold_s"] is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"depth": -1}, "depth"),
        ({"depth": 1.5}, "depth"),
        ({"bf_window_s": -5}, "bf_window_s"),
        ({"bf_resolution_s": 0}, "bf_resolution_s"),
        ({"bf_interval_s": float("nan")}, "bf_interval_s"),
        ({"bf_max_job_test": 0}, "bf_max_job_test"),
        ({"default_queue_depth": True}, "default_queue_depth"),
        ({"threshold": -1.0}, ">= 0"),
    ],
)
def test_bad_settings_are_named(kth_slice, kwargs, message):
    with pytest.raises(ConfigurationError, match=message):
        simulate_conservative(kth_slice, **kwargs)


def test_bad_jobs_are_refused_by_the_shared_check():
    with pytest.raises(ConfigurationError, match="procs"):
        simulate_conservative_arrays([0.0, 1.0], [1, 5], [1.0, 1.0], [1.0, 1.0], 4)
