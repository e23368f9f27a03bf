"""Windowed list scheduling (the authors' evaluation scheduler): hand-worked schedules, a
differential test against the slow reference ``tests/support/window.py``, and the degenerate
setting (whole queue, no state jobs) that equals the EASY engine job by job."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.core.errors import ConfigurationError
from scheduler.policies import PolicyInputs, priority_key
from scheduler.sim.engine import simulate_arrays
from scheduler.sim.window import simulate_window
from tests.support.window import reference_window


def _starts(jobs: list[tuple[float, int, float, float]], machine: int, **options) -> list[float]:
    submit, procs, run, est = (np.array(c, dtype=float) for c in zip(*jobs, strict=True))
    return simulate_window(submit, procs, run, est, machine, **options).tolist()


# (submit s, processors, run s, estimate s)
ONE_PROC = [(0, 1, 10, 10), (1, 1, 100, 100), (2, 1, 50, 50), (3, 1, 1, 1)]


def test_window_hides_later_jobs() -> None:
    # A runs 0-10. Whole queue, SPF: at 10 D (1 s), C, B. A window of 2 sees only B and C at
    # 10: C starts (10-60), then B and D: D at 60, B at 61.
    assert _starts(ONE_PROC, 1, policy="SPF") == [0, 61, 11, 10]
    assert _starts(ONE_PROC, 1, policy="SPF", queue_window=2) == [0, 61, 10, 60]
    # a window of 1 is FCFS
    assert _starts(ONE_PROC, 1, policy="SPF", queue_window=1) == [0, 10, 110, 160]


def test_state_jobs_start_in_submission_order() -> None:
    # two state jobs: B starts at 10 although D and C are shorter; then SPF: D, C
    assert _starts(ONE_PROC, 1, policy="SPF", n_in_order=2) == [0, 10, 111, 110]
    assert _starts(ONE_PROC, 1, policy="SPF", n_in_order=4) == [0, 10, 110, 160]


BACKFILL = [(0, 3, 10, 10), (1, 4, 10, 10), (2, 1, 20, 20), (3, 1, 5, 5)]


def test_the_exchange_sort_orders_equal_estimates_otherwise() -> None:
    # 1 processor: X runs 0-10; B (est 5) at 1, C (est 5) at 2, A (est 1) at 3. At 10 the window
    # is B, C, A. Stable SPF: A, B, C. The exchange sort (for i, for j: if k_i < k_j swap) of
    # [B5, C5, A1]: i = 2 swaps A with B -> [A, C, B]: A at 10; at 11, [C, B] stays: C, then B.
    jobs = [(0, 1, 10, 10), (1, 1, 5, 5), (2, 1, 5, 5), (3, 1, 1, 1)]
    assert _starts(jobs, 1, policy="SPF") == [0, 11, 16, 10]
    assert _starts(jobs, 1, policy="SPF", exchange_sort=True) == [0, 16, 11, 10]


def test_first_fit_backfilling_inside_the_window() -> None:
    # 4 processors. A (3) runs 0-10; H (4) waits: shadow 10, no extra processor. X (1 proc,
    # 20 s) would end after the shadow; Y (1 proc, 5 s) at 3 ends by it: backfilled at 3.
    assert _starts(BACKFILL, 4, backfilling=True) == [0, 10, 20, 3]
    assert _starts(BACKFILL, 4, backfilling=True, queue_window=3) == [0, 10, 20, 3]
    # a window of 2 (H, X) never shows Y before H starts
    assert _starts(BACKFILL, 4, backfilling=True, queue_window=2) == [0, 10, 20, 20]
    # without backfilling Y waits behind H and X
    assert _starts(BACKFILL, 4) == [0, 10, 20, 20]


def test_extra_processors_admit_a_long_job() -> None:
    # 5 processors: A (3) runs 0-10, H (4) waits: shadow 10 and 5 - 4 = 1 extra processor, so
    # X (1 proc, 20 s) may start at 2 even though it ends after the shadow time
    jobs = [(0, 3, 10, 10), (1, 4, 10, 10), (2, 1, 20, 20)]
    assert _starts(jobs, 5, backfilling=True) == [0, 10, 2]


def test_invalid_inputs() -> None:
    with pytest.raises(ConfigurationError, match="queue_window"):
        _starts(ONE_PROC, 1, queue_window=0)
    with pytest.raises(ConfigurationError, match="n_in_order"):
        _starts(ONE_PROC, 1, n_in_order=-1)
    with pytest.raises(ConfigurationError, match="nondecreasing"):
        simulate_window(np.array([5.0, 1.0]), np.ones(2), np.ones(2), np.ones(2), 1)
    with pytest.raises(ConfigurationError, match="procs"):
        _starts(ONE_PROC, 0)


@st.composite
def workloads(draw, integer: bool = True):
    n = draw(st.integers(1, 14))
    machine = draw(st.integers(1, 6))
    if integer:
        gaps = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
        run = draw(st.lists(st.integers(1, 20), min_size=n, max_size=n))
        slack = draw(st.lists(st.integers(0, 10), min_size=n, max_size=n))
    else:
        gaps = draw(st.lists(st.floats(0, 8), min_size=n, max_size=n))
        run = draw(st.lists(st.floats(0.5, 20), min_size=n, max_size=n))
        slack = draw(st.lists(st.floats(0, 10), min_size=n, max_size=n))
    procs = draw(st.lists(st.integers(1, machine), min_size=n, max_size=n))
    submit = np.cumsum(np.array(gaps, dtype=float))
    run_s = np.array(run, dtype=float)
    return submit, np.array(procs, dtype=float), run_s, run_s + np.array(slack, float), machine


POLICIES = ["FCFS", "SPF", "WFP3", "UNICEF", "F1", "LQF"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=workloads(),
    policy=st.sampled_from(POLICIES),
    window=st.one_of(st.none(), st.integers(1, 6)),
    n_in_order=st.integers(0, 4),
    backfilling=st.booleans(),
    overrun=st.booleans(),
    exchange=st.booleans(),
)
def test_kernel_equals_the_reference(
    jobs, policy, window, n_in_order, backfilling, overrun, exchange
) -> None:
    submit, procs, run, est, machine = jobs
    if overrun:  # estimates below the run time: a job outlives its estimate
        est = np.maximum(1.0, run - 3.0)
    key = priority_key(policy, PolicyInputs(submit, procs, est, float(submit[0])))
    expected = reference_window(
        submit.tolist(), procs.astype(int).tolist(), run.tolist(), est.tolist(),
        key.base.tolist(), key.divisor.tolist(), machine,
        window=window, n_in_order=n_in_order, backfilling=backfilling, exchange_sort=exchange,
    )  # fmt: skip
    got = simulate_window(
        submit, procs, run, est, machine, policy=policy, backfilling=backfilling,
        queue_window=window, n_in_order=n_in_order, exchange_sort=exchange,
    )  # fmt: skip
    assert got.tolist() == expected
    assert (got >= submit).all()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=workloads(), policy=st.sampled_from(POLICIES))
def test_whole_queue_list_scheduling_equals_the_engine(jobs, policy) -> None:
    """Without a window, state jobs or backfilling: list scheduling, as the EASY engine's."""
    submit, procs, run, est, machine = jobs
    got = simulate_window(submit, procs, run, est, machine, policy=policy)
    expected = simulate_arrays(submit, procs, run, est, machine, primary=policy, backfill=None)
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=workloads(integer=False), policy=st.sampled_from(POLICIES))
def test_whole_queue_backfilling_equals_easy(jobs, policy) -> None:
    """One backfill per decision equals EASY's walk when no two running jobs share an
    estimated end and no job outlives its estimate (continuous times, est >= run)."""
    submit, procs, run, est, machine = jobs
    got = simulate_window(submit, procs, run, est, machine, policy=policy, backfilling=True)
    expected = simulate_arrays(submit, procs, run, est, machine, primary=policy, backfill=policy)
    np.testing.assert_array_equal(got, expected)


def test_same_input_same_schedule() -> None:
    rng = np.random.default_rng(7)
    submit = np.sort(rng.integers(0, 500, 200)).astype(float)
    procs = rng.integers(1, 9, 200).astype(float)
    run = rng.integers(1, 100, 200).astype(float)
    first = simulate_window(submit, procs, run, run * 2, 8, policy="F2", backfilling=True,
                            queue_window=32, n_in_order=16)  # fmt: skip
    again = simulate_window(submit, procs, run, run * 2, 8, policy="F2", backfilling=True,
                            queue_window=32, n_in_order=16)  # fmt: skip
    np.testing.assert_array_equal(first, again)
