"""Trials of the learned-priority study (scheduler.sim.trials): hand-worked trials, the
reference of tests/support/trials.py, the generator, and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.errors import ConfigurationError
from scheduler.sim.trials import (
    run_trials,
    scores_from_trials,
    trial_permutations,
    trial_scores,
)
from tests.support import trials as reference

# -- a hand-worked tuple: |S| = 1, |Q| = 3, m = 4 processors, τ = 10 s -----------------------
#
# S: s0 submit 0, 3 procs, run 100 -> runs 0-100 in every trial, leaving 1 processor free.
# Q: a submit 10, 2 procs, run 50;  b submit 20, 1 proc, run 5;  c submit 30, 4 procs, run 20.
#
# (a,b,c): a waits for s0: 100-150; b fits beside a at 100: 100-105; c needs all 4: 150-170.
#          bsld a (90+50)/50 = 2.8, b (80+5)/10 = 8.5, c (120+20)/20 = 7.0    sum 18.3
# (a,c,b): a 100-150; c 150-170; b may not pass c (strict order) although a processor is free
#          from 100: 170-175.  a 2.8, c 7.0, b (150+5)/10 = 15.5            sum 25.3
# (b,a,c): b waits for its submit time only: 20-25 (bsld max(5/10, 1) = 1); a 100-150;
#          c 150-170.           b 1.0, a 2.8, c 7.0                             sum 10.8
# (b,c,a): b 20-25; c 100-120; a 120-170.  b 1.0, c (70+20)/20 = 4.5, a (110+50)/50 = 3.2
#                                                                             sum  8.7
# (c,a,b): c 100-120; a 120-170; b beside a: 120-125.  c 4.5, a 3.2, b (100+5)/10 = 10.5
#                                                                             sum 18.2
# (c,b,a): c 100-120; b 120-125; a 120-170 (3 free beside b).  4.5, 10.5, 3.2  sum 18.2
#
# All six orders once: Σ of the sums 99.5; score(a) = (18.3+25.3)/99.5, score(b) =
# (10.8+8.7)/99.5, score(c) = (18.2+18.2)/99.5 (the AVEbsld is the sum / 3 everywhere, so the
# thirds cancel). b, short and narrow, is the best job to start first.
HAND = {"submit_s": [0.0, 10.0, 20.0, 30.0], "procs": [3, 2, 1, 4], "run_s": [100.0, 50, 5, 20]}
HAND_SUMS = {
    (0, 1, 2): 18.3, (0, 2, 1): 25.3, (1, 0, 2): 10.8,
    (1, 2, 0): 8.7, (2, 0, 1): 18.2, (2, 1, 0): 18.2,
}  # fmt: skip
ALL_ORDERS = np.array(list(itertools.permutations(range(3))))


def hand_trials(**options: object):
    return run_trials(**HAND, n_state=1, machine_procs=4, **options)


def test_hand_worked_trials() -> None:
    result = hand_trials(permutations=ALL_ORDERS)
    expected = [HAND_SUMS[tuple(order)] / 3 for order in ALL_ORDERS.tolist()]
    np.testing.assert_allclose(result.avebsld, expected, rtol=1e-12)
    np.testing.assert_array_equal(result.first_job, ALL_ORDERS[:, 0])
    assert result.n_trials == 6 and result.n_queue == 3


def test_hand_worked_scores() -> None:
    scores = hand_trials(permutations=ALL_ORDERS).scores()
    np.testing.assert_allclose(scores, [43.6 / 99.5, 19.5 / 99.5, 36.4 / 99.5], rtol=1e-12)
    assert scores.sum() == pytest.approx(1.0)


def test_tau_is_the_floor_of_the_slowdown_denominator() -> None:
    # (b,a,c) with τ = 1 s: b's bsld (0+5)/5 = 1 unchanged; a (90+50)/50 = 2.8; c 140/20 = 7
    # with τ = 100 s: b max(5/100, 1) = 1, a 140/100 = 1.4, c 140/100 = 1.4
    order = np.array([[1, 0, 2]])
    assert hand_trials(permutations=order, tau_s=1.0).avebsld[0] == pytest.approx(10.8 / 3)
    assert hand_trials(permutations=order, tau_s=100.0).avebsld[0] == pytest.approx(3.8 / 3)


def test_s_is_placed_in_its_order_and_not_scored() -> None:
    # S: a 4-processor job 0-1000, then a 1-processor job that may not start before it (strict
    # order) and has no room beside it: 1000-1500 (bsld 3, not counted). Q: one 1-processor
    # job, ready at 1000 (the previous start) with 3 processors free: 1000-1010, bsld 101.
    result = run_trials(
        [0.0, 0.0, 0.0], [4, 1, 1], [1000.0, 500.0, 10.0], n_state=2, machine_procs=4,
        permutations=np.array([[0]]),
    )  # fmt: skip
    assert result.avebsld[0] == pytest.approx(101.0)


def test_reference_agrees_on_the_hand_tuple() -> None:
    for order in ALL_ORDERS.tolist():
        value = reference.trial_avebsld(
            HAND["submit_s"], HAND["procs"], HAND["run_s"], 1, order, machine_procs=4
        )
        assert value == pytest.approx(HAND_SUMS[tuple(order)] / 3, rel=1e-12)


@st.composite
def tuples(draw: st.DrawFn) -> dict[str, object]:
    machine = draw(st.integers(1, 12))
    n = draw(st.integers(2, 9))
    n_state = draw(st.integers(0, n - 1))
    # integer-valued times make ties (equal ends and submits) frequent
    submit = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    procs = draw(st.lists(st.integers(1, machine), min_size=n, max_size=n))
    run = draw(st.lists(st.integers(1, 40) | st.floats(0.5, 40.0), min_size=n, max_size=n))
    orders = draw(st.lists(st.permutations(list(range(n - n_state))), min_size=1, max_size=4))
    return {
        "submit_s": [float(s) for s in submit], "procs": procs, "run_s": [float(r) for r in run],
        "n_state": n_state, "machine_procs": machine, "orders": orders,
        "tau_s": draw(st.sampled_from([1.0, 10.0])),
    }  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(tuples())
def test_kernel_matches_the_reference(case: dict) -> None:
    orders = case.pop("orders")
    result = run_trials(**case, permutations=np.array(orders))
    for trial, order in enumerate(orders):
        expected = reference.trial_avebsld(
            case["submit_s"], case["procs"], case["run_s"], case["n_state"], order,
            case["machine_procs"], case["tau_s"],
        )  # fmt: skip
        assert result.avebsld[trial] == pytest.approx(expected, rel=1e-12)
        assert result.first_job[trial] == order[0]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**64 - 1))
def test_drawn_permutations_are_the_documented_stream(n_queue: int, seed: int) -> None:
    perms = trial_permutations(n_queue, 5, seed)
    assert perms.tolist() == reference.permutations(n_queue, 5, seed)


def test_drawn_trials_are_the_trials_of_the_drawn_permutations() -> None:
    drawn = hand_trials(n_trials=50, seed=7)
    given_ = hand_trials(permutations=trial_permutations(3, 50, 7))
    np.testing.assert_array_equal(drawn.avebsld, given_.avebsld)
    np.testing.assert_array_equal(drawn.first_job, given_.first_job)


def test_a_seed_gives_the_same_trials_and_another_seed_others() -> None:
    one, again, other = (hand_trials(n_trials=200, seed=s).first_job for s in (3, 3, 4))
    np.testing.assert_array_equal(one, again)
    assert (one != other).any()


def test_first_jobs_are_uniform() -> None:
    # chi-square over 32 cells, 64,000 draws of a fixed seed: the 0.999 quantile (31 d.f.)
    # is 61.1; the biased "swap with any position" shuffle gives ~1,900 here
    first = trial_permutations(32, 64_000, 2024)[:, 0]
    counts = np.bincount(first, minlength=32)
    chi2 = float(((counts - 2000.0) ** 2 / 2000.0).sum())
    assert chi2 < 61.1


def test_scores_converge_to_the_exhaustive_scores() -> None:
    exact = hand_trials(permutations=ALL_ORDERS).scores()
    drawn = trial_scores(**HAND, n_state=1, machine_procs=4, n_trials=60_000, seed=1)
    np.testing.assert_allclose(drawn, exact, rtol=0.02)


def test_a_job_never_drawn_first_has_no_score() -> None:
    scores = scores_from_trials(np.array([2.0, 6.0]), np.array([0, 2]), 3)
    np.testing.assert_allclose(scores[[0, 2]], [0.25, 0.75])
    assert np.isnan(scores[1])


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"procs": [3, 2, 5, 4]}, "procs must be an integer in 1..4.*job 2"),
        ({"procs": [3, 2, 0, 4]}, "procs must be"),
        ({"procs": [3, 2, 1.5, 4]}, "procs must be"),
        ({"run_s": [100.0, -5.0, 5.0, 20.0]}, "run_s must be > 0.*job 1"),
        ({"run_s": [100.0, 50.0, 0.0, 20.0]}, "run_s must be > 0"),
        ({"submit_s": [0.0, np.nan, 20.0, 30.0]}, "submit_s must be a finite"),
        ({"run_s": [1.0, 2.0]}, "run_s has 2 values, expected 4"),
        ({"n_state": 4}, "n_state must be in 0..3"),
        ({"n_state": -1}, "n_state must be in 0..3"),
        ({"n_state": 1.0}, "n_state must be an integer"),
        ({"machine_procs": 0}, "machine_procs must be a positive integer"),
        ({"tau_s": 0.0}, "tau_s must be"),
        ({"seed": -1}, "seed must be an integer in 0..2"),
        ({"seed": 2**64}, "seed must be an integer"),
        ({"seed": None}, "seed is required"),
        ({"n_trials": 0}, "n_trials must be an integer >= 1"),
        ({"permutations": ALL_ORDERS}, "exactly one of n_trials"),
    ],
)
def test_bad_input_is_named(change: dict, match: str) -> None:
    options = {**HAND, "n_state": 1, "machine_procs": 4, "n_trials": 10, "seed": 1, **change}
    with pytest.raises(ConfigurationError, match=match):
        run_trials(**options)


@pytest.mark.parametrize(
    ("permutations", "match"),
    [
        (np.array([[0, 1, 1]]), "row 0 is not a permutation of 0..2"),
        (np.array([[0, 1, 2], [2, 1, 3]]), "row 1 is not a permutation"),
        (np.array([[0, 1]]), r"shape \(trials, 3\)"),
        (np.array([0, 1, 2]), r"shape \(trials, 3\)"),
        (np.array([[0.0, 1.0, 2.0]]), "integer array"),
        (np.empty((0, 3), dtype=np.int64), "at least one trial"),
    ],
)
def test_bad_permutations_are_named(permutations: np.ndarray, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        hand_trials(permutations=permutations)


def test_seed_does_not_go_with_permutations() -> None:
    with pytest.raises(ConfigurationError, match="seed goes with n_trials"):
        hand_trials(permutations=ALL_ORDERS, seed=1)
