"""Improvement curves and choice shares of the online study (scheduler.studies.online.curves)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from support.online import (
    REFERENCE,
    REPLICAS,
    TRACES,
    Run,
    choices_from,
    curves_from,
)

from scheduler.core.errors import ConfigurationError
from scheduler.studies.online.changes import relative_changes
from scheduler.studies.online.curves import choice_shares, improvement_curves
from scheduler.studies.online.runs import (
    CROSSFIT_FIXED,
    IMPROVEMENT_COLUMNS,
    SHARE_COLUMNS,
    run_totals,
)

# --------------------------------------------------------------------------------------------
# Improvement curves
# --------------------------------------------------------------------------------------------


def test_improvement_curves_pad_a_run_that_ends_earlier():
    curves = curves_from(
        {
            ("X", 0, "fixed:FCFS", "none"): [0.0, 20.0, 30.0, 40.0],
            ("X", 0, "full", "1d"): [3.0, 8.0],  # ends on day 1, then stays at 8
        }
    )
    table = improvement_curves(curves, reference=REFERENCE)
    assert table.columns == list(IMPROVEMENT_COLUMNS)
    full = table.filter(pl.col("strategy") == "full").sort("day")
    assert full["day"].to_list() == [0, 1, 2, 3]
    expected = [0.0, (20 - 8) / 20, (30 - 8) / 30, (40 - 8) / 40]  # day 0: C_ref = 0 → 0
    np.testing.assert_allclose(full["improvement"].to_numpy(), expected)
    np.testing.assert_allclose(full["q10"].to_numpy(), expected)
    reference = table.filter(pl.col("strategy") == "fixed:FCFS")
    assert (reference["improvement"] == 0.0).all() and reference.height == 4


def test_improvement_is_a_ratio_of_sums_not_a_mean_of_ratios():
    """#16 (11): two replicas, −50 % and +50 % of the reference: the mean of the per-replica
    ratios is 0, the ratio of sums (the tables' statistic) is (1100 − 1550) / 1100."""
    curves = curves_from(
        {
            ("X", 0, "fixed:FCFS", "none"): [100.0],
            ("X", 1, "fixed:FCFS", "none"): [1000.0],
            ("X", 0, "full", "1d"): [50.0],
            ("X", 1, "full", "1d"): [1500.0],
        }
    )
    full = improvement_curves(curves, reference=REFERENCE).filter(pl.col("strategy") == "full")
    assert full["improvement"][0] == pytest.approx((1100.0 - 1550.0) / 1100.0)
    assert (full["q10"][0], full["q90"][0]) == pytest.approx((-0.4, 0.4))  # 10 %, 90 % of ±0.5


def test_improvement_curves_quantiles_match_numpy(
    runs: dict[Run, list[float]], curves: pl.DataFrame
):
    table = improvement_curves(curves, reference=REFERENCE)
    trace, strategy, period = "T2", "bandit(eps=0.3)", "1d"
    last = max(len(v) for run, v in runs.items() if run[0] == trace) - 1

    def padded(values: list[float]) -> np.ndarray:
        return np.array(values + [values[-1]] * (last + 1 - len(values)))

    per_replica, refs, selected = [], [], []
    for k in range(REPLICAS):
        c_ref = padded(runs[(trace, k, "fixed:FCFS", "none")])
        c_s = padded(runs[(trace, k, strategy, period)])
        per_replica.append((c_ref - c_s) / c_ref)
        refs.append(c_ref)
        selected.append(c_s)
    matrix = np.vstack(per_replica)
    ref_sum, sum_s = np.vstack(refs).sum(axis=0), np.vstack(selected).sum(axis=0)
    got = table.filter(
        (pl.col("trace") == trace) & (pl.col("strategy") == strategy) & (pl.col("period") == period)
    ).sort("day")
    assert got["day"].to_list() == list(range(last + 1))
    assert (got["replicas"] == REPLICAS).all()
    np.testing.assert_allclose(got["improvement"].to_numpy(), (ref_sum - sum_s) / ref_sum)
    np.testing.assert_allclose(got["q10"].to_numpy(), np.quantile(matrix, 0.1, axis=0))
    np.testing.assert_allclose(got["q90"].to_numpy(), np.quantile(matrix, 0.9, axis=0))


def test_improvement_curves_need_the_reference(curves: pl.DataFrame):
    with pytest.raises(ConfigurationError, match="no reference"):
        improvement_curves(curves.filter(pl.col("strategy") != REFERENCE), reference=REFERENCE)


# --------------------------------------------------------------------------------------------


# Choice shares
# --------------------------------------------------------------------------------------------


def test_choice_shares_by_hand():
    choices = choices_from(
        {
            ("X", 0, "noisy", "1d"): ["SPF"] * 7 + ["LQF"] * 3,
            ("X", 1, "noisy", "1d"): ["SPF"] * 4 + ["FCFS"] * 3 + ["SPF", "LQF"],  # ends earlier
            ("X", 0, "noisy", "1w"): ["SPF", "FCFS", "FCFS"],
        }
    )
    shares = choice_shares(choices)
    assert shares.columns == list(SHARE_COLUMNS)
    daily = {
        (r["day"], r["policy"]): r["share"]
        for r in shares.filter(pl.col("period") == "1d").iter_rows(named=True)
    }
    assert daily[(0, "SPF")] == pytest.approx((1.0 + 4 / 7) / 2)
    assert daily[(0, "FCFS")] == pytest.approx((0.0 + 3 / 7) / 2)
    assert daily[(0, "LQF")] == 0.0
    assert daily[(7, "LQF")] == pytest.approx((1.0 + 0.5) / 2)
    assert daily[(7, "SPF")] == pytest.approx((0.0 + 0.5) / 2)
    weekly = shares.filter(pl.col("period") == "1w")
    assert sorted(set(weekly["day"])) == [0, 7, 14]  # one weekly period per 7-day bin
    assert shares.filter(pl.col("period") == "1d")["policy"].to_list()[:3] == ["FCFS", "SPF", "LQF"]


def test_choice_shares_sum_to_one_per_bin():
    rng = np.random.default_rng(11)
    policies = ["FCFS", "SPF", "LQF", "SAF", "LEXP"]
    runs = {
        (trace, k, strategy, "1d"): [
            str(p) for p in rng.choice(policies, int(rng.integers(20, 40)))
        ]
        for trace in ("T1", "T2")
        for k in range(4)
        for strategy in ("noisy", "bandit(eps=0.3)")
    }
    shares = choice_shares(choices_from(runs), bin_days=5)
    totals = shares.group_by("trace", "strategy", "period", "day").agg(pl.col("share").sum())
    np.testing.assert_allclose(totals["share"].to_numpy(), 1.0)
    assert set(shares["day"]) <= set(range(0, 40, 5))


def test_choice_shares_reject_unknown_periods_and_bins():
    choices = choices_from({("X", 0, "noisy", "2d"): ["SPF"]})
    with pytest.raises(ConfigurationError, match="2d"):
        choice_shares(choices)
    assert choice_shares(choices, period_s_by_label={"2d": 172800.0})["share"].to_list() == [1.0]
    with pytest.raises(ConfigurationError, match="bin_days"):
        choice_shares(choices, period_s_by_label={"2d": 172800.0}, bin_days=0)


def test_improvement_curves_against_spf_are_zero_for_spf(curves: pl.DataFrame):
    """online.reference SPF: fixed:SPF's curve is exactly 0, FCFS's is the mirror image."""
    table = improvement_curves(curves, reference="fixed:SPF")
    spf = table.filter(pl.col("strategy") == "fixed:SPF")
    assert spf.height > 0
    assert (spf.select("improvement", "q10", "q90").to_numpy() == 0.0).all()
    fcfs = table.filter(pl.col("strategy") == "fixed:FCFS")
    assert (fcfs["improvement"] != 0.0).any()
    against_fcfs = improvement_curves(curves, reference=REFERENCE)
    assert (against_fcfs.filter(pl.col("strategy") == "fixed:FCFS")["improvement"] == 0.0).all()


@pytest.mark.parametrize("reference", [REFERENCE, "fixed:SPF"])
def test_every_curve_ends_at_the_table_value(curves: pl.DataFrame, reference: str):
    """#16 (11): the last point of every cumulative-improvement curve is the relative change of
    the tables (sign reversed: improvement = less waiting), for every trace, strategy and
    period, the pseudo-strategies (best fixed, cross-fitted, LOTO bandit) through their runs;
    the runs of one replica end on different days."""
    totals = run_totals(curves)
    changes = relative_changes(totals, reference=reference, n_boot=1)
    table = improvement_curves(curves, reference=reference)
    last = (
        table.sort("day")
        .group_by("trace", "strategy", "period")
        .agg(pl.col("improvement").last(), pl.col("replicas").last())
    )
    ends = {(t, s, p): (i, n) for t, s, p, i, n in last.iter_rows()}
    checked = 0
    for trace, strategy, period, change, replicas, source in changes.select(
        "trace", "strategy", "period", "relative_change", "replicas", "source"
    ).iter_rows():
        if strategy == CROSSFIT_FIXED:  # a different fixed policy per replica: no single run
            continue
        improvement, count = ends[(trace, source, period)]
        assert count == replicas
        assert improvement == pytest.approx(-change, rel=1e-12, abs=1e-12), (trace, strategy)
        checked += 1
    assert checked == changes.height - len(TRACES)
