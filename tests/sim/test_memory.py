"""The memory-aware engine (issue #15, scheduler.sim.memory) against its contract.

- hand-worked schedules, each on the compiled engine and on the reference
  (tests/support/memory.py, ``naive_simulate_memory``, written from docs/simulator.md without
  reading the kernel): estimation lets an over-requesting job use small nodes, a failing run ends
  at start + ξ'·p and rejoins the queue's tail, FCFS blocks where EASY backfills, the allocation
  limit makes A = 0 runs fail, user-ratio fails a job at most once, max_failures forces A = R;
- the perceptron update: weights after one- and two-job traces computed with the NumPy
  transcription of Algorithm 1 (``perceptron_update_numpy``);
- a hypothesis differential test between the kernel and the reference on random small workloads
  and every scheduler / estimator / feedback / memory limit;
- one class and no estimation are the base engine's EASY (or no backfilling) job by job;
- conservation: each job succeeds once, no class is ever over its size, failures are exactly the
  runs with a_j < U_j, a job's runs do not overlap, utilisations are ordered;
- the same seed gives the same result, another seed other failure times.

Notation in the comments: "X(1) r0 q1 R8 U2 p10 u1" = job 1, submitted at 0, 1 node, requests
8 MB per node, uses 2 MB, runs 10 s, user 1 (its requested time is its run time unless said).
"2x4+2x8" = two nodes of 4 MB and two of 8 MB. ξ'_k = the k-th draw of the seed's SplitMix64.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.memory import (
    RefMemoryConfig,
    estimate_numpy,
    naive_simulate_memory,
    perceptron_update_numpy,
    splitmix_draws,
)

try:  # the compiled engine; until it exists the tests check the reference alone
    from scheduler.sim.memory import MemoryConfig, simulate_memory_arrays
except ImportError:  # pragma: no cover
    MemoryConfig = None
    simulate_memory_arrays = None

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
KTH_SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"
FIELDS = ("start_s", "failures", "forced", "run_job", "run_start_s", "run_end_s", "run_alloc_mb",
          "run_memory_mb", "run_failed", "run_class_nodes")  # fmt: skip
A, B = 1.716, 2 / 3


class Job(NamedTuple):
    submit: float
    procs: int
    run: float
    req_mb: float
    used_mb: float
    user: int = 0
    est: float | None = None


def _arrays(jobs):
    return (
        np.array([j.submit for j in jobs], dtype=np.float64),
        np.array([j.procs for j in jobs], dtype=np.int64),
        np.array([j.run for j in jobs], dtype=np.float64),
        np.array([j.run if j.est is None else j.est for j in jobs], dtype=np.float64),
        np.array([j.req_mb for j in jobs], dtype=np.float64),
        np.array([j.used_mb for j in jobs], dtype=np.float64),
        np.array([j.user for j in jobs], dtype=np.int64),
    )


def config(**kwargs):
    """The engine's MemoryConfig when it exists, else the reference's stand-in."""
    return (RefMemoryConfig if MemoryConfig is None else MemoryConfig)(**kwargs)


def naive(jobs, cfg) -> dict:
    return naive_simulate_memory(*_arrays(jobs), cfg)


def fast(jobs, cfg) -> dict:
    out = simulate_memory_arrays(*_arrays(jobs), cfg)
    result = {name: np.asarray(getattr(out, name)) for name in (*FIELDS, "run_estimate_mb")}
    result["weights"] = np.asarray(out.weights)
    result["success_fraction"] = float(out.success_fraction)
    return result


def assert_same(got: dict, want: dict, context=None) -> None:
    """Exact schedules and runs; E', weights and p to 1e-9 relative (w·x may be summed in
    another order)."""
    for name in FIELDS:
        np.testing.assert_array_equal(got[name], want[name], err_msg=f"{name} {context}")
    np.testing.assert_allclose(got["run_estimate_mb"], want["run_estimate_mb"], rtol=1e-9,
                               atol=1e-12, err_msg=f"run_estimate_mb {context}")  # fmt: skip
    np.testing.assert_allclose(got["weights"], want["weights"], rtol=1e-9, atol=1e-12,
                               err_msg=f"weights {context}")  # fmt: skip
    assert got["success_fraction"] == pytest.approx(want["success_fraction"], rel=1e-12)


def both(jobs, **kwargs) -> dict:
    """The reference's result, after checking that the kernel (when present) agrees with it."""
    cfg = config(**kwargs)
    want = naive(jobs, cfg)
    if simulate_memory_arrays is not None:
        assert_same(fast(jobs, cfg), want, kwargs)
    return want


def runs(result) -> list[tuple]:
    """(job index, start, end, A, a_j, failed, class nodes) per run, in start order."""
    return [
        (int(j), float(s), float(e), float(al), float(m), bool(f), tuple(int(c) for c in n))
        for j, s, e, al, m, f, n in zip(
            result["run_job"], result["run_start_s"], result["run_end_s"],
            result["run_alloc_mb"], result["run_memory_mb"], result["run_failed"],
            result["run_class_nodes"], strict=True,
        )
    ]  # fmt: skip


# -- hand-worked schedules ------------------------------------------------------------------------

SMALL_BIG = {"class_nodes": (2, 2), "class_memory_mb": (4.0, 8.0)}  # 2x4+2x8


def test_hand_estimation_uses_the_small_nodes():
    # 2x4+2x8. X(0) r0 q2 R8 U2 p100; Y(1) r1 q2 R8 U8 p50.
    # estimator none: A = R = 8: X takes the two 8 MB nodes at 0; Y (A = 8) waits for them
    #   until X ends at 100, then runs to 150.
    # perceptron (w = 0, E' = 0): X at t=0: E = 8 (the 8 MB nodes reach q = 2), E' = 0 <= E:
    #   A = 0, best fit from the smallest class: both 4 MB nodes, a = 4 >= U = 2: success.
    #   Y at t=1: w still 0 (no run ended): A = 0; the 4 MB class is full, so best fit continues
    #   to the 8 MB class: a = 8 >= 8: success, 1..51. No draw, no failure.
    jobs = [Job(0, 2, 100, 8, 2), Job(1, 2, 50, 8, 8)]
    plain = both(jobs, **SMALL_BIG)
    assert runs(plain) == [(0, 0.0, 100.0, 8.0, 8.0, False, (0, 2)),
                           (1, 100.0, 150.0, 8.0, 8.0, False, (0, 2))]  # fmt: skip
    assert np.isnan(plain["run_estimate_mb"]).all()
    for feedback in ("implicit", "explicit"):
        learned = both(jobs, estimator="perceptron", feedback=feedback, **SMALL_BIG)
        assert runs(learned) == [(0, 0.0, 100.0, 0.0, 4.0, False, (2, 0)),
                                 (1, 1.0, 51.0, 0.0, 8.0, False, (0, 2))]  # fmt: skip
        assert learned["run_estimate_mb"].tolist() == [0.0, 0.0]
        assert learned["success_fraction"] == 1.0
    # implicit: success with z = +1 gives t - z = 0: w stays 0
    assert both(jobs, estimator="perceptron", **SMALL_BIG)["weights"].tolist() == [0.0] * 6


def features(free, nodes, procs, req_mb, waiting):
    """x of a decision: free fractions per class, need, log(1 + R), log(1 + L), bias."""
    total = sum(free)
    need = 1.0 if total == 0 else min(procs / total, 1.0)
    return [f / n for f, n in zip(free, nodes, strict=True)] + [
        need, math.log(1 + req_mb), math.log(1 + waiting), 1.0
    ]  # fmt: skip


def test_hand_explicit_feedback_weights_two_jobs():
    # The perceptron runs of test_hand_estimation_uses_the_small_nodes with explicit feedback.
    # Decisions: X at 0 with everything free (x_X), Y at 1 with the 4 MB class full (x_Y), both
    # with w = 0 (E' = 0). Y ends first (51): t = U = 8, z = E' = 0, f' at w = 0. Then X (100):
    # t = 2, z = 0, f' at the current w (after Y's update). M = 8.
    jobs = [Job(0, 2, 100, 8, 2), Job(1, 2, 50, 8, 8)]
    x_x = features([2, 2], [2, 2], 2, 8, 1)
    x_y = features([0, 2], [2, 2], 2, 8, 1)
    w = perceptron_update_numpy(np.zeros(6), x_y, 8.0, 0.0, 0.1, A, 8.0, B)
    w = perceptron_update_numpy(w, x_x, 2.0, 0.0, 0.1, A, 8.0, B)
    result = both(jobs, estimator="perceptron", feedback="explicit", **SMALL_BIG)
    np.testing.assert_allclose(result["weights"], w, rtol=1e-12)
    # the first update by hand: f'(0) = a M b; w = 0.1 * 8 * a M b * x_Y
    first = perceptron_update_numpy(np.zeros(6), x_y, 8.0, 0.0, 0.1, A, 8.0, B)
    np.testing.assert_allclose(first, 0.8 * A * 8.0 * B * np.array(x_y), rtol=1e-12)


def test_hand_user_ratio_failure_and_tail_rejoin():
    # 2x4+2x8, user-ratio, seed 0 (ξ'_1 = 0.8833...).
    # X(0) r0 q1 R8 U2 p10 u1: no history: A = 8, one 8 MB node, 0..10; ρ_1 = 2/8.
    # Y(1) r20 q2 R8 U6 p100 u1: A = 8 * 0.25 = 2: both 4 MB nodes, a = 4 < 6: fails at
    #   f = 20 + ξ'_1 * 100.
    # Z(2) r21 q4 R1 U1 p5 u2: needs all four nodes: waits (head).
    # W(3) r22 q1 R1 U1 p1 u3.
    # fcfs: W waits behind Z. At f: Y's nodes are freed, Y rejoins the tail: [Z, W, Y]; Z
    #   starts (f..f+5), W and Y wait. At f+5: W (A = 1) takes a 4 MB node, Y (A = R = 8 after
    #   its failure) both 8 MB nodes: success, f+5..f+105. Y failed once.
    # easy: at 22 the head Z (A = 1) reserves: free eligible nodes 2 (the 8 MB ones), then Y's
    #   two nodes at e = 20 + 100 = 120 (failures are not foreseen): s = 120, x = 0. W ends by
    #   22 + 1 <= 120: it starts at 22 on an 8 MB node (the 4 MB ones are Y's). The rest as fcfs.
    xi = splitmix_draws(0, 1)[0]
    f = 20 + xi * 100
    jobs = [Job(0, 1, 10, 8, 2, 1), Job(20, 2, 100, 8, 6, 1), Job(21, 4, 5, 1, 1, 2),
            Job(22, 1, 1, 1, 1, 3)]  # fmt: skip
    fcfs = both(jobs, estimator="user-ratio", **SMALL_BIG)
    assert runs(fcfs) == [
        (0, 0.0, 10.0, 8.0, 8.0, False, (0, 1)),
        (1, 20.0, f, 2.0, 4.0, True, (2, 0)),
        (2, f, f + 5, 1.0, 4.0, False, (2, 2)),
        (3, f + 5, f + 6, 1.0, 4.0, False, (1, 0)),
        (1, f + 5, f + 105, 8.0, 8.0, False, (0, 2)),
    ]
    assert fcfs["failures"].tolist() == [0, 1, 0, 0]
    assert fcfs["start_s"].tolist() == [0.0, f + 5, f, f + 5]
    assert fcfs["success_fraction"] == 4 / 5
    easy = both(jobs, estimator="user-ratio", scheduler="easy", **SMALL_BIG)
    assert runs(easy) == [
        (0, 0.0, 10.0, 8.0, 8.0, False, (0, 1)),
        (1, 20.0, f, 2.0, 4.0, True, (2, 0)),
        (3, 22.0, 23.0, 1.0, 8.0, False, (0, 1)),
        (2, f, f + 5, 1.0, 4.0, False, (2, 2)),
        (1, f + 5, f + 105, 8.0, 8.0, False, (0, 2)),
    ]


def test_hand_easy_does_not_backfill_past_the_shadow_time():
    # As test_hand_user_ratio_failure_and_tail_rejoin with W running 200 s (est 200): 22 + 200
    # > s = 120 and x = 0 extra nodes: W may not start at 22 even under EASY; it would use an
    # eligible (8 MB >= A_Z = 1) node. It waits for Z as under fcfs.
    jobs = [Job(0, 1, 10, 8, 2, 1), Job(20, 2, 100, 8, 6, 1), Job(21, 4, 5, 1, 1, 2),
            Job(22, 1, 200, 1, 1, 3)]  # fmt: skip
    easy = both(jobs, estimator="user-ratio", scheduler="easy", **SMALL_BIG)
    fcfs = both(jobs, estimator="user-ratio", **SMALL_BIG)
    assert runs(easy) == runs(fcfs)
    assert easy["start_s"][3] > easy["start_s"][2]


def test_hand_easy_extra_nodes_count_only_eligible_classes():
    # 2x4+2x8, no estimation. H(0) r0 q2 R8 U8 p100 takes both 8 MB nodes. G(1) r1 q2 R8 U8
    # p10: head, A = 8: eligible free 0, then H's two nodes at e = 100: s = 100, x = 0.
    # S(2) r2 q2 R4 U4 p500: ends after s, but its best fit takes the two 4 MB nodes, none of
    # them eligible for G (4 < 8): 0 <= x: it starts at 2. G runs 100..110.
    jobs = [Job(0, 2, 100, 8, 8), Job(1, 2, 10, 8, 8), Job(2, 2, 500, 4, 4)]
    easy = both(jobs, scheduler="easy", **SMALL_BIG)
    assert easy["start_s"].tolist() == [0.0, 100.0, 2.0]
    fcfs = both(jobs, **SMALL_BIG)
    assert fcfs["start_s"].tolist() == [0.0, 100.0, 100.0]


def test_hand_allocation_limit_fails_zero_allocations_until_forced():
    # 2x4+2x8, perceptron, implicit, memory_limit="allocation", max_failures = 3, seed 7.
    # J(0) r0 q2 R8 U2 p100 alone. w = 0: E' = 0 <= E = 8: A = 0, a = A = 0 < 2: fails at
    # ξ'_1 * 100 (no ξ was drawn: E' <= E). Learning: t = -1, z = +1: w moves by
    # -0.2 f'(0) x, so w.x < 0 and E' < 0 <= E from then on: A = 0 again, failing at
    # f1 + ξ'_2 * 100, then f2 + ξ'_3 * 100. After 3 failures the decision is forced to A = R
    # = 8: the two 8 MB nodes, a = 8, success, f3..f3 + 100. With memory_limit="node" the first
    # run (a = 4 >= 2) succeeds.
    xi = splitmix_draws(7, 3)
    ends = [0.0]
    for k in range(3):
        ends.append(ends[-1] + xi[k] * 100)
    jobs = [Job(0, 2, 100, 8, 2)]
    kwargs = {"estimator": "perceptron", "seed": 7, "max_failures": 3, **SMALL_BIG}
    result = both(jobs, memory_limit="allocation", **kwargs)
    assert runs(result) == [
        (0, ends[0], ends[1], 0.0, 0.0, True, (2, 0)),
        (0, ends[1], ends[2], 0.0, 0.0, True, (2, 0)),
        (0, ends[2], ends[3], 0.0, 0.0, True, (2, 0)),
        (0, ends[3], ends[3] + 100, 8.0, 8.0, False, (0, 2)),
    ]
    assert result["failures"].tolist() == [3] and result["forced"].tolist() == [1]
    assert result["success_fraction"] == 1 / 4
    assert (result["run_estimate_mb"][1:3] < 0).all()
    node = both(jobs, memory_limit="node", **kwargs)
    assert runs(node) == [(0, 0.0, 100.0, 0.0, 4.0, False, (2, 0))]


def test_hand_implicit_weights_after_one_failure():
    # J of the previous test with max_failures = 1: one failed run (t = -1, z = +1, f'(0)),
    # then a forced run. The weights are one NumPy update from 0 with x of J alone on an idle
    # machine (free 1, 1; need 2/4; L = 1).
    x = features([2, 2], [2, 2], 2, 8, 1)
    want = perceptron_update_numpy(np.zeros(6), x, -1.0, 1.0, 0.1, A, 8.0, B)
    np.testing.assert_allclose(want, -0.2 * A * 8.0 * B * np.array(x), rtol=1e-12)
    result = both([Job(0, 2, 100, 8, 2)], estimator="perceptron", memory_limit="allocation",
                  max_failures=1, seed=3, **SMALL_BIG)  # fmt: skip
    assert result["failures"].tolist() == [1]
    if not np.allclose(result["weights"], want, rtol=1e-12):  # the forced run also learned
        pytest.fail(f"weights {result['weights']} != one update {want}")
    assert estimate_numpy(want, x, A, 8.0, B) < 0


def test_hand_explicit_failure_raises_the_estimate_and_draws():
    # J(0) r0 q2 R8 U6 p100, 2x4+2x8, explicit feedback, node limit, seed 5.
    # t=0: E' = 0 <= E = 8: A = 0, the 4 MB nodes, a = 4 < 6: fails at f1 = ξ_1 * 100.
    # Learning: t = a = 4, z = E' = 0: w = 0.4 f'(0) x: E' = f(w.x) = a M tanh(...) ~ 13.7 > 8
    # = E: a draw ξ_2 against the exploration probability with p = 0 (one failed run):
    # 1 - e^0 / (e^0 + e^{0.1}); below it A = 0 (fails again), else A = R = 8 (success).
    x = features([2, 2], [2, 2], 2, 8, 1)
    w1 = perceptron_update_numpy(np.zeros(6), x, 4.0, 0.0, 0.1, A, 8.0, B)
    e1 = estimate_numpy(w1, x, A, 8.0, B)
    assert e1 > 8
    draws = splitmix_draws(5, 2)
    explore = 1 - 1 / (1 + math.exp(0.1))
    result = both([Job(0, 2, 100, 8, 6)], estimator="perceptron", feedback="explicit", seed=5,
                  **SMALL_BIG)  # fmt: skip
    first, second = runs(result)[:2]
    assert first == (0, 0.0, draws[0] * 100, 0.0, 4.0, True, (2, 0))
    assert result["run_estimate_mb"][1] == pytest.approx(e1, rel=1e-12)
    assert second[3] == (0.0 if draws[1] < explore else 8.0)


# -- differential: compiled vs reference ----------------------------------------------------------

MEMORIES = (2.0, 4.0, 6.0, 8.0, 16.0, 32.0)
COMBOS = [
    {"scheduler": s, "estimator": e, "feedback": f, "memory_limit": m}
    for s in ("fcfs", "easy")
    for e in ("none", "perceptron", "user-ratio")
    for f in (("implicit", "explicit") if e == "perceptron" else ("implicit",))
    for m in ("node", "allocation")
]


@st.composite
def memory_workloads(draw, max_jobs: int = 25, min_classes: int = 2, max_classes: int = 3):
    """(jobs, class_nodes, class_memory_mb): every job can start with A = R (R <= M and q no
    more than the nodes of classes >= R); R >= U > 0; integer or fractional submit times."""
    k = draw(st.integers(min_classes, max_classes))
    memories = draw(st.lists(st.sampled_from(MEMORIES), min_size=k, max_size=k, unique=True))
    nodes = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    fractional = draw(st.booleans())
    n = draw(st.integers(1, max_jobs))
    jobs = []
    for _ in range(n):
        c = draw(st.integers(0, k - 1))
        req = draw(st.sampled_from((memories[c], memories[c] * 0.75, memories[c] / 2)))
        used = req * draw(st.sampled_from((1.0, 0.9, 0.5, 0.25, 0.1)))
        room = sum(nn for nn, mm in zip(nodes, memories, strict=True) if mm >= req)
        submit = draw(st.floats(0, 60).map(lambda v: round(v, 3)) if fractional
                      else st.integers(0, 60))  # fmt: skip
        run = draw(st.integers(1, 40))
        est = draw(st.one_of(st.none(), st.integers(run, 80), st.integers(1, 40)))
        jobs.append(Job(float(submit), draw(st.integers(1, room)), float(run), req, used,
                        draw(st.integers(0, 2)), None if est is None else float(est)))  # fmt: skip
    jobs.sort(key=lambda j: j.submit)
    return jobs, tuple(nodes), tuple(memories)


needs_kernel = pytest.mark.skipif(simulate_memory_arrays is None, reason="kernel not merged")


@needs_kernel
@settings(SETTINGS, max_examples=40)
@given(memory_workloads(), st.integers(0, 2**64 - 1), st.sampled_from((50, 1, 3)))
def test_compiled_matches_reference(workload, seed, max_failures):
    jobs, nodes, memories = workload
    for combo in COMBOS:
        cfg = config(class_nodes=nodes, class_memory_mb=memories, seed=seed,
                     max_failures=max_failures, **combo)  # fmt: skip
        assert_same(fast(jobs, cfg), naive(jobs, cfg), cfg)
