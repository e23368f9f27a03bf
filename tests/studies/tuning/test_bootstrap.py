"""The source-week bootstrap of the queue-tuning study (scheduler.studies.tuning.bootstrap, the
``week_map`` of scheduler.traces.resample, the bootstrap-SE intervals of
scheduler.studies.common.statistics).

The coverage test is the point of the design: on synthetic logs with a known mean, t-intervals
over resampled weeks (the old protocol) miss the mean far more often than their level says,
because the weeks share the log's few source weeks; the source-week bootstrap intervals keep their
level.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps

from scheduler.core.errors import ConfigurationError
from scheduler.sim.arrays import week_arrays
from scheduler.studies.common.statistics import (
    bootstrap_standard_error,
    bootstrap_t_interval,
    bootstrap_t_p_value,
    t_interval,
)
from scheduler.studies.tuning.bootstrap import (
    BOOTSTRAP_COLUMNS,
    Configuration,
    bootstrap_replicates,
)
from scheduler.studies.tuning.weeks import simulate_weeks
from scheduler.traces.resample import bootstrap_week_map, complete_weeks, resample_weeks
from tests.traces.test_resample import make_jobs

W = 604_800
SEED = 7


# --------------------------------------------------------------------------------------------
# Coverage on synthetic logs with a known mean
# --------------------------------------------------------------------------------------------


def _coverage(*, source_weeks: int, users: int, weeks: int, replicates: int, logs: int,
              week_effect: float, seed: int) -> tuple[float, float]:  # fmt: skip
    """Fraction of ``logs`` synthetic logs whose 95 % interval holds the true mean, for the
    t-interval over resampled weeks and for the source-week bootstrap interval.

    A log has ``source_weeks`` weeks; user u submits Poisson(λ_u) jobs in week k, each with a
    value ~ N(e_k, 1) where e_k ~ N(0, week_effect²) is shared by the week's jobs (a busy or quiet
    week). The study statistic is the mean over ``weeks`` resampled weeks (each user brings its
    jobs of one uniformly drawn source week) of the week's mean job value, as the protocol's
    AvgWait difference is a mean of weekly per-job means. Its expectation over logs is exactly 0
    (e_k is independent of the job counts and centred). Replicates redraw the source weeks with
    replacement and resample from them, as :func:`bootstrap_replicates` does (vectorised here:
    the same draws, without building job tables).
    """
    rng = np.random.default_rng(seed)
    user = np.arange(users)
    hits_t = hits_boot = 0
    for _ in range(logs):
        rate = rng.uniform(2.0, 20.0, users)
        effect = rng.normal(0.0, week_effect, source_weeks)
        count = rng.poisson(rate[:, None], (users, source_weeks))
        total = rng.normal(count * effect[None, :], np.sqrt(count))

        def week_means(chosen: np.ndarray, total=total, count=count) -> np.ndarray:
            """Per-job mean of resampled weeks; ``chosen[..., u]`` is user u's source week."""
            return total[user, chosen].sum(-1) / np.maximum(count[user, chosen].sum(-1), 1)

        observed = week_means(rng.integers(0, source_weeks, (weeks, users)))
        estimate = float(observed.mean())
        low, high = t_interval(observed, 0.95)
        hits_t += low <= 0.0 <= high
        week_map = rng.integers(0, source_weeks, (replicates, source_weeks))
        draws = rng.integers(0, source_weeks, (replicates, weeks, users))
        mapped = np.take_along_axis(week_map[:, None, :].repeat(weeks, axis=1), draws, axis=2)
        stars = week_means(mapped).mean(axis=1)
        low, high = bootstrap_t_interval(estimate, stars, units=source_weeks, confidence=0.95)
        hits_boot += low <= 0.0 <= high
    return hits_t / logs, hits_boot / logs


@pytest.mark.parametrize("week_effect", [0.0, 1.0])
def test_bootstrap_intervals_keep_their_level_where_week_t_intervals_do_not(week_effect):
    t_cover, boot_cover = _coverage(
        source_weeks=20, users=30, weeks=50, replicates=100, logs=300,
        week_effect=week_effect, seed=11,
    )  # fmt: skip
    # 300 logs: a binomial standard error of 1.3 points at 95 %
    assert boot_cover >= 0.91, boot_cover
    assert t_cover <= 0.75, t_cover  # the old intervals: far below their 95 %


# --------------------------------------------------------------------------------------------
# The interval and test helpers
# --------------------------------------------------------------------------------------------


def test_bootstrap_t_helpers_follow_their_formulas():
    stars = np.array([1.0, 3.0, 2.0, 6.0, np.nan, 4.0])  # the NaN replicate is left out
    se = np.std([1.0, 3.0, 2.0, 6.0, 4.0], ddof=1)
    assert bootstrap_standard_error(stars) == pytest.approx(se)
    low, high = bootstrap_t_interval(2.5, stars, units=9, confidence=0.9)
    q = sps.t.ppf(0.95, 8)
    assert (low, high) == pytest.approx((2.5 - q * se, 2.5 + q * se))
    assert bootstrap_t_p_value(2.5, stars, units=9) == pytest.approx(2 * sps.t.sf(2.5 / se, 8))
    assert bootstrap_t_p_value(2.5, stars, units=9, null=2.5) == pytest.approx(1.0)
    flat = np.full(4, 7.0)
    assert bootstrap_t_p_value(0.0, flat, units=5) == 1.0
    assert bootstrap_t_p_value(1.0, flat, units=5) == 0.0
    assert all(math.isnan(x) for x in bootstrap_t_interval(1.0, np.array([1.0]), units=5,
                                                          confidence=0.95))  # fmt: skip
    assert math.isnan(bootstrap_t_p_value(1.0, stars, units=1))


# --------------------------------------------------------------------------------------------
# week_map and the replicates on a small log
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_log() -> pl.DataFrame:
    """Five users over six weeks and a day on a 16-processor machine."""
    rng = np.random.default_rng(3)
    n = 600
    submit = np.sort(rng.uniform(0, 6 * W + 86_400, n)).astype(np.int64)
    submit[0] = 0
    return make_jobs([
        {"submit_s": int(s), "user_id": int(u), "run_s": int(r), "req_time_s": int(2 * r),
         "alloc_procs": int(p), "req_procs": int(p)}
        for s, u, r, p in zip(submit, rng.integers(1, 6, n), rng.integers(60, 20_000, n),
                              rng.integers(1, 17, n), strict=True)
    ])  # fmt: skip


def test_identity_week_map_is_plain_resampling(small_log):
    k = complete_weeks(small_log)
    assert k == 6
    plain = resample_weeks(small_log, range(5), seed=SEED, trace="t", split="test")
    mapped = resample_weeks(small_log, range(5), seed=SEED, trace="t", split="test",
                            week_map=np.arange(k))  # fmt: skip
    assert plain.equals(mapped)


def test_week_map_draws_only_the_mapped_weeks(small_log):
    week_map = np.array([4, 4, 1, 4, 1, 1])
    weeks = resample_weeks(small_log, range(30), seed=SEED, trace="t", split="test",
                           week_map=week_map)  # fmt: skip
    assert set(weeks["source_week"].unique().to_list()) <= {1, 4}
    # each user still brings all its jobs of one source week per resampled week
    per_user = weeks.group_by("week_index", "user_id").agg(pl.col("source_week").n_unique())
    assert (per_user["source_week"] == 1).all()
    # and week 1 (3 of 6 entries) is drawn about as often as week 4 (3 of 6)
    draws = weeks.unique(["week_index", "user_id"])["source_week"].value_counts()
    assert draws.height == 2


def test_bootstrap_week_map_is_seeded_and_with_replacement():
    first = bootstrap_week_map(40, seed=SEED, trace="t", split="test", replicate=3)
    assert first.shape == (40,) and first.min() >= 0 and first.max() < 40
    assert np.unique(first).size < 40  # 40 draws with replacement repeat a week (P > 1 - 1e-16)
    same = bootstrap_week_map(40, seed=SEED, trace="t", split="test", replicate=3)
    other = bootstrap_week_map(40, seed=SEED, trace="t", split="test", replicate=4)
    assert np.array_equal(first, same) and not np.array_equal(first, other)


@pytest.mark.parametrize("bad", [np.arange(5), np.array([0, 1, 2, 3, 4, 6]),
                                 np.array([0.0, 1, 2, 3, 4, 5])])  # fmt: skip
def test_bad_week_map_is_refused(small_log, bad):
    with pytest.raises(ConfigurationError, match=r"t test: week_map must hold 6 week numbers"):
        resample_weeks(small_log, range(2), seed=SEED, trace="t", split="test", week_map=bad)


CONFIGS = [
    Configuration("SPF", "SPF", "20h", 72_000.0),
    Configuration("FCFS", "FCFS", "none", math.inf),
    Configuration("SPF", "SPF", "none", math.inf),
    Configuration("FCFS", "FCFS", "none", math.inf),  # a duplicate: simulated once
]


def test_replicates_are_the_simulated_means_of_their_resampled_weeks(small_log):
    table = bootstrap_replicates(small_log, 16, CONFIGS, replicates=[2, 0], weeks=4, seed=SEED,
                                 trace="t")  # fmt: skip
    assert table.schema == pl.Schema(BOOTSTRAP_COLUMNS)
    assert table.height == 2 * 3
    assert table["replicate"].to_list() == [2, 2, 2, 0, 0, 0]
    assert (table["source_weeks"] == 6).all() and (table["weeks"] == 4).all()
    # recompute replicate 2 from its definition
    week_map = bootstrap_week_map(6, seed=SEED, trace="t", split="test", replicate=2)
    weeks = resample_weeks(small_log, range(4), seed=SEED, trace="t", split="test/bootstrap2",
                           week_map=week_map)  # fmt: skip
    arrays = week_arrays(weeks, 16)
    for config in CONFIGS[:3]:
        alone = simulate_weeks(arrays, 16, primary=config.primary, backfill=config.backfill,
                               thresholds=[(config.threshold, config.threshold_s)],
                               trace="t", split="test")  # fmt: skip
        row = table.filter(
            (pl.col("replicate") == 2) & (pl.col("primary") == config.primary)
            & (pl.col("threshold") == config.threshold)
        ).row(0, named=True)  # fmt: skip
        assert row["mean_avg_wait_s"] == pytest.approx(alone["avg_wait_s"].mean(), rel=1e-12)
        assert row["mean_max_wait_s"] == pytest.approx(alone["max_wait_s"].mean(), rel=1e-12)
        assert row["worst_max_wait_s"] == alone["max_wait_s"].max()


def test_replicates_do_not_depend_on_their_batch(small_log):
    whole = bootstrap_replicates(small_log, 16, CONFIGS, replicates=range(3), weeks=3,
                                 seed=SEED, trace="t")  # fmt: skip
    parts = pl.concat([
        bootstrap_replicates(small_log, 16, CONFIGS, replicates=r, weeks=3, seed=SEED, trace="t")
        for r in (range(0, 2), range(2, 3))
    ])  # fmt: skip
    assert whole.equals(parts)
    assert whole.filter(pl.col("primary") == "FCFS")["mean_avg_wait_s"].n_unique() > 1


def test_replicate_arguments_are_checked(small_log):
    with pytest.raises(ConfigurationError, match="weeks per bootstrap replicate"):
        bootstrap_replicates(small_log, 16, CONFIGS, replicates=[0], weeks=0, seed=1, trace="t")
    with pytest.raises(ConfigurationError, match="replicate numbers must be >= 0"):
        bootstrap_replicates(small_log, 16, CONFIGS, replicates=[-1], weeks=2, seed=1, trace="t")
