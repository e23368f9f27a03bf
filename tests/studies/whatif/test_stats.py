"""The what-if study's tables (scheduler.studies.whatif.stats): the ranking's intervals are the
bootstrap-t intervals of the replicates' paired relative changes, Holm across alternatives."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.multitest import multipletests

from scheduler.studies.common.statistics import (
    bootstrap_t_interval,
    bootstrap_t_p_value,
    t_interval,
)
from scheduler.studies.whatif.measures import WEEK_FIGURES
from scheduler.studies.whatif.stats import group_changes, summary_table, user_changes


def jobs(scale: float, weeks: int = 3) -> pl.DataFrame:
    """Two jobs per week, waits scale x (100, 300) s plus the week number."""
    rows = []
    for week in range(weeks):
        for job, (user, wait) in enumerate(((1, 100.0), (2, 300.0)), start=1):
            rows.append(
                {
                    "week_index": week,
                    "job_id": job,
                    "user_id": user,
                    "account": f"a{user}",
                    "procs": job,
                    "submit_s": 0.0,
                    "run_s": 50.0,
                    "wait_s": scale * wait + week,
                }
            )
    return pl.DataFrame(rows)


def replicates(avg: list[float]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "replicate": list(range(len(avg))),
            "source_weeks": [4] * len(avg),
            "weeks": [3] * len(avg),
        }
        | dict.fromkeys(WEEK_FIGURES, avg)
    )


def test_summary_intervals_and_holm() -> None:
    names, changes = ["baseline", "half", "same-ish"], ["-", "x", "y"]
    weeks = [jobs(1.0), jobs(0.5), jobs(1.01)]
    boots = [
        replicates([200.0, 210.0, 190.0, 205.0]),
        replicates([100.0, 110.0, 90.0, 99.0]),
        replicates([202.0, 209.0, 192.0, 204.0]),
    ]
    table = summary_table(names, changes, weeks, weeks, boots, machine_procs=4, confidence=0.9)
    assert table["alternative"].to_list() == ["baseline", "half", "same-ish"]
    base_mean = np.mean([200 + w for w in range(3)])
    half = table.row(1, named=True)
    estimate = np.mean([100 + w for w in range(3)]) / base_mean - 1
    assert half["rel_avg_wait_s"] == pytest.approx(estimate)
    # the interval and test are on the log of the ratio, transformed back
    samples = np.log(np.array([100, 110, 90, 99]) / np.array([200, 210, 190, 205]))
    low, high = np.expm1(bootstrap_t_interval(np.log1p(estimate), samples, units=4, confidence=0.9))
    assert (half["rel_avg_wait_s_low"], half["rel_avg_wait_s_high"]) == pytest.approx((low, high))
    assert -1 < low < estimate < high
    p = [
        bootstrap_t_p_value(np.log1p(estimate), samples, units=4),
        table.row(2, named=True)["p_value"],
    ]
    assert half["p_value"] == pytest.approx(p[0])
    assert table["p_holm"].to_list()[1:] == pytest.approx(list(multipletests(p, method="holm")[1]))
    assert np.isnan(table["p_holm"][0]) and table["replicates"].to_list() == [4, 4, 4]


def test_group_and_user_changes() -> None:
    names = ["baseline", "half"]
    groups = group_changes(names, [jobs(1.0), jobs(0.5)], size_edges=[1], shares={}, week_s=1e9)
    users = groups.filter((pl.col("alternative") == "half") & (pl.col("scope") == "user"))
    assert users["change_mean_wait_s"].to_list() == pytest.approx([-50.0, -150.0])
    per_user = user_changes(names, [jobs(1.0), jobs(0.5)])
    assert per_user["user_id"].to_list() == [2, 1]  # the largest gain first
    assert per_user["change_mean_wait_s"].to_list() == pytest.approx([-150.0, -50.0])


def _paired_coverage(
    *, source_weeks: int, users: int, weeks: int, replicates: int, logs: int, seed: int
) -> tuple[float, float]:
    """Fraction of ``logs`` synthetic logs whose 95 % interval of the paired relative change
    holds its true value: t-intervals over the resampled weeks' paired changes, and the
    study's source-week bootstrap-t interval (as :func:`summary_table` builds it).

    A job of week k waits ``b = exp(e_k + ε)`` under the baseline and ``b · exp(δ + η_k + ν)``
    under the alternative: busy and quiet weeks (e_k), weeks where the change helps more or less
    (η_k), per-job noise (ε, ν), all normal and independent, job counts Poisson per user and
    week. The study's statistic is the ratio of the mean over resampled weeks of the weekly mean
    waits, minus 1; its true value (over logs, counts independent of the waits) is
    ``exp(δ + (s_η² + s_ν²)/2) − 1``. Both intervals are taken on the log of the ratio and
    transformed back, as the study does.
    """
    rng = np.random.default_rng(seed)
    user = np.arange(users)
    delta, s_e, s_eta, s_nu = -0.2, 0.8, 0.3, 0.5
    truth = np.exp(delta + (s_eta**2 + s_nu**2) / 2) - 1
    hits_t = hits_boot = 0
    for _ in range(logs):
        count = rng.poisson(rng.uniform(2.0, 12.0, users)[:, None], (users, source_weeks))
        e = rng.normal(0.0, s_e, source_weeks)
        eta = rng.normal(0.0, s_eta, source_weeks)
        # per (user, week): the sums of the jobs' waits under both schedulers
        base = np.zeros((users, source_weeks))
        alt = np.zeros((users, source_weeks))
        for u in range(users):
            for k in range(source_weeks):
                b = np.exp(e[k] + rng.normal(0.0, 1.0, count[u, k]))
                base[u, k] = b.sum()
                alt[u, k] = (b * np.exp(delta + eta[k] + rng.normal(0.0, s_nu, b.size))).sum()

        def means(chosen: np.ndarray, base=base, alt=alt, count=count) -> tuple:
            n = np.maximum(count[user, chosen].sum(-1), 1)
            return base[user, chosen].sum(-1) / n, alt[user, chosen].sum(-1) / n

        b_w, a_w = means(rng.integers(0, source_weeks, (weeks, users)))
        estimate = float(np.log(a_w.mean() / b_w.mean()))
        low, high = np.expm1(t_interval(np.log(a_w / b_w), 0.95))
        hits_t += low <= truth <= high
        week_map = rng.integers(0, source_weeks, (replicates, source_weeks))
        draws = rng.integers(0, source_weeks, (replicates, weeks, users))
        mapped = np.take_along_axis(week_map[:, None, :].repeat(weeks, axis=1), draws, axis=2)
        b_r, a_r = means(mapped)
        stars = np.log(a_r.mean(axis=1) / b_r.mean(axis=1))
        low, high = np.expm1(
            bootstrap_t_interval(estimate, stars, units=source_weeks, confidence=0.95)
        )
        hits_boot += low <= truth <= high
    return hits_t / logs, hits_boot / logs


def test_paired_bootstrap_intervals_keep_their_level() -> None:
    """The what-if study's intervals on synthetic logs with a known effect of the change: the
    source-week bootstrap-t interval keeps (about) its 95 %; t-intervals over the resampled
    weeks, which treat weeks sharing source weeks as independent, do not."""
    t_cover, boot_cover = _paired_coverage(
        source_weeks=20, users=15, weeks=40, replicates=100, logs=200, seed=5
    )
    # 200 logs: a binomial standard error of 1.5 points at 95 %. Seeds 1, 2, 3 and 5 gave
    # 0.89, 0.945, 0.91 and 0.93 (t: 0.335-0.415): a ratio over K = 20 weeks covers a little
    # under its level (docs/whatif.md); 0.87 fails a method that misses by more than that.
    assert boot_cover >= 0.87, boot_cover
    assert t_cover <= 0.75, t_cover
