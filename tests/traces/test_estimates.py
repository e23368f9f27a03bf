"""User run-time estimates from the Tsafrir–Etsion–Feitelson model (scheduler.traces.estimates)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.errors import ConfigurationError
from scheduler.traces import _estimates_kernel
from scheduler.traces.estimates import (
    HEAD_SHARE_PERCENT,
    JOINT_ESTIMATES_S,
    bin_count,
    estimate_distribution,
    head_estimates,
    with_estimates,
)
from scheduler.traces.lublin import lublin_jobs, lublin_trace
from scheduler.traces.swf import Trace

HOUR = 3600


def test_bin_count_follows_the_linear_model():
    assert [bin_count(n) for n in (0, 20, 200, 1000, 10_000, 70_000, 250_000, 10**7)] == [
        0, 10, 20, 35, 90, 340, 565, 565,
    ]  # fmt: skip
    assert bin_count(5_500) == 35 + round(4_500 * 55 / 9_000)


@given(st.integers(0, 400_000), st.integers(0, 400_000))
def test_bin_count_is_monotone(a, b):
    low, high = sorted((a, b))
    assert bin_count(low) <= bin_count(high)


def test_head_holds_the_maximum_then_the_joint_values_then_round_ones():
    head = head_estimates(46 * HOUR)
    assert len(head) == len(set(head)) == 20
    assert head[0] == 46 * HOUR and head[1:] == sorted(head[1:])
    assert set(JOINT_ESTIMATES_S) <= set(head)
    assert {40 * HOUR, 45 * HOUR, 30 * HOUR} <= set(head)  # multiples of 10 h, 5 h below 46 h
    short = head_estimates(HOUR)  # only the joint values below 1 h and 5-min steps
    assert short[0] == HOUR and max(short[1:]) < HOUR and len(short) == 12


@pytest.mark.parametrize("n_jobs", [10_000, 70_000])
def test_distribution_modal_values_dominate(n_jobs):
    times, counts = estimate_distribution(n_jobs, 36 * HOUR, seed=3)
    assert counts.sum() == n_jobs
    assert np.all(np.diff(times) > 0) and times.max() == 36 * HOUR and times.min() > 0
    assert times.size == bin_count(n_jobs)
    top = np.sort(counts)[::-1]
    # 89 % in the 20 head values (whole jobs: at most one job per value off)
    assert abs(top[:20].sum() - HEAD_SHARE_PERCENT / 100 * n_jobs) <= times.size
    assert set(times[np.argsort(counts)[::-1][:20]]) == set(head_estimates(36 * HOUR))
    # the maximum is the most popular value, 21.7 % of the jobs
    assert times[np.argmax(counts)] == 36 * HOUR
    assert counts.max() / n_jobs == pytest.approx(0.217, abs=0.002)


def test_distribution_is_seeded_and_small_counts_still_sum():
    first = estimate_distribution(5_000, 18 * HOUR, seed=1)
    again = estimate_distribution(5_000, 18 * HOUR, seed=1)
    other = estimate_distribution(5_000, 18 * HOUR, seed=2)
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))
    assert not np.array_equal(first[1], other[1])
    for n_jobs in (0, 1, 7, 150):
        assert estimate_distribution(n_jobs, 2 * HOUR, seed=0)[1].sum() == n_jobs


@pytest.fixture(scope="module")
def lublin() -> pl.DataFrame:
    return lublin_jobs(10_000, seed=1)


def test_with_estimates_covers_run_times_with_the_models_values(lublin):
    filled = with_estimates(lublin, seed=4)
    runs, estimates = filled["run_s"].to_numpy(), filled["req_time_s"].to_numpy()
    assert np.all(estimates >= runs) and np.all(estimates > 0)
    maximum = -(-lublin["run_s"].max() // HOUR) * HOUR  # default: longest run, whole hours
    assert estimates.max() == maximum
    values, counts = np.unique(estimates, return_counts=True)
    top20 = np.sort(counts)[::-1][:20].sum() / estimates.size
    assert top20 == pytest.approx(0.89, abs=0.01)
    # the marginal is exactly the model's histogram, whatever the pairing
    times, model_counts = estimate_distribution(10_000, int(maximum), seed=np.random.default_rng(4))
    assert np.array_equal(values, times[model_counts > 0])
    assert np.array_equal(counts, model_counts[model_counts > 0])
    # everything else is unchanged
    assert filled.drop("req_time_s").equals(lublin.drop("req_time_s"))


def test_only_missing_requested_times_are_filled(lublin):
    given = lublin.with_columns(
        pl.when(pl.col("job_id") % 3 == 0).then(pl.col("run_s") + 5).otherwise(-1)
        .alias("req_time_s"),
        pl.lit("x").alias("extra"),
    )  # fmt: skip
    filled = with_estimates(given, seed=2, max_estimate_s=48 * HOUR)
    kept = given["job_id"] % 3 == 0
    assert filled.filter(kept)["req_time_s"].equals(given.filter(kept)["req_time_s"])
    new = filled.filter(~kept)
    assert (new["req_time_s"] >= new["run_s"]).all() and (new["req_time_s"] <= 48 * HOUR).all()
    assert filled.columns == given.columns


def test_trace_in_trace_out_same_seed_same_estimates():
    trace = lublin_trace(2_000, seed=8)
    first = with_estimates(trace, seed=5)
    assert isinstance(first, Trace) and first.machine_procs == trace.machine_procs
    assert first.jobs.equals(with_estimates(trace, seed=5).jobs)
    assert not first.jobs.equals(with_estimates(trace, seed=6).jobs)


def test_impossible_requests_are_refused_naming_max_estimate(lublin, job_table):
    with pytest.raises(ConfigurationError, match="max_estimate_s=3600 is below"):
        with_estimates(lublin, seed=1, max_estimate_s=HOUR)
    with pytest.raises(ConfigurationError, match="max_estimate_s"):
        with_estimates(lublin, seed=1, max_estimate_s=600)
    # all jobs run the full hour, but only the maximum's share of estimates is that long
    long_jobs = job_table(*[{"run_s": HOUR} for _ in range(50)])
    with pytest.raises(ConfigurationError, match="cannot cover"):
        with_estimates(long_jobs, seed=1)
    with pytest.raises(ConfigurationError, match="seed"):
        with_estimates(lublin, seed=-1)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=60), st.integers(0, 2**31))
def test_assignment_is_a_permutation_covering_each_run(runs, seed):
    rng = np.random.default_rng(seed)
    runs_desc = np.sort(np.array(runs, dtype=np.int64))[::-1].copy()
    slack = rng.integers(0, 5_000, size=runs_desc.size)
    estimates_desc = np.sort(runs_desc + slack)[::-1].copy()  # dominates position by position
    chosen = _estimates_kernel.assign_sorted(runs_desc, estimates_desc, rng.random(runs_desc.size))
    assert np.all(chosen >= runs_desc)
    assert np.array_equal(np.sort(chosen), np.sort(estimates_desc))
