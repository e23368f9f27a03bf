"""Relative changes, bootstrap intervals, paired tests, Holm and the wide tables of the online
study (scheduler.studies.online.changes), checked against the definitions by hand."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as scipy_stats
from support.online import (
    CANDIDATES,
    REFERENCE,
    REPLICAS,
    STRATEGIES,
    TRACES,
    B,
    Run,
    loto_totals,
    row,
    sums,
    totals_from,
)

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.tables import markdown_table
from scheduler.studies.online.changes import fixed_policy_table, relative_changes, strategy_table
from scheduler.studies.online.epsilon import choose_epsilon
from scheduler.studies.online.runs import BEST_FIXED, CHANGE_COLUMNS, LOTO_BANDIT

# --------------------------------------------------------------------------------------------
# relative_changes
# --------------------------------------------------------------------------------------------


def test_relative_change_is_a_ratio_of_sums_not_a_mean_of_ratios():
    waits = {
        ("L", 0, "fixed:FCFS", "none"): 100.0,
        ("L", 1, "fixed:FCFS", "none"): 1000.0,
        ("L", 0, "full", "1d"): 50.0,  # -50 %
        ("L", 1, "full", "1d"): 1500.0,  # +50 %
    }
    got = row(relative_changes(totals_from(waits), reference=REFERENCE, n_boot=50), strategy="full")
    mean_of_ratios = np.mean([50.0 / 100.0 - 1.0, 1500.0 / 1000.0 - 1.0])
    assert mean_of_ratios == pytest.approx(0.0)
    assert got["relative_change"] == pytest.approx((1550.0 - 1100.0) / 1100.0)
    assert got["total_wait_s"] == pytest.approx(1550.0)
    assert got["reference_wait_s"] == pytest.approx(1100.0)
    assert got["replicas"] == 2


def test_relative_changes_follow_the_definition(
    runs: dict[Run, list[float]], changes: pl.DataFrame
):
    assert changes.columns == list(CHANGE_COLUMNS)
    for trace in TRACES:
        reference = sums(runs, trace, "fixed:FCFS", "none")
        for strategy, period, _ in STRATEGIES:
            got = row(changes, trace=trace, strategy=strategy, period=period)
            total = sums(runs, trace, strategy, period)
            assert got["replicas"] == REPLICAS
            assert got["total_wait_s"] == pytest.approx(total)
            assert got["reference_wait_s"] == pytest.approx(reference)
            assert got["relative_change"] == pytest.approx((total - reference) / reference)
        assert row(changes, trace=trace, strategy="fixed:FCFS")["relative_change"] == 0.0


def test_best_fixed_in_hindsight(runs: dict[Run, list[float]], changes: pl.DataFrame):
    found = set()
    for trace in TRACES:
        fixed = {name: sums(runs, trace, name, "none") for name in ("fixed:FCFS", "fixed:SPF")}
        expected = min(fixed, key=fixed.__getitem__)
        found.add(expected)
        best = row(changes, trace=trace, strategy=BEST_FIXED)
        same = row(changes, trace=trace, strategy=expected)
        assert best["period"] == "none" and best["source"] == expected
        assert best["total_wait_s"] == pytest.approx(fixed[expected])
        assert best["relative_change"] == pytest.approx(same["relative_change"])
        assert (best["ci_low"], best["ci_high"]) == (same["ci_low"], same["ci_high"])
        assert set(changes.filter(pl.col("trace") == trace)["best_fixed"]) == {expected}
    assert found == {"fixed:FCFS", "fixed:SPF"}  # the fixture exercises both answers


def test_relative_changes_reject_a_missing_reference_or_extra_replicas():
    waits = {
        ("A", 0, "fixed:FCFS", "none"): 10.0,
        ("A", 0, "full", "1d"): 8.0,
        ("B", 0, "full", "1d"): 5.0,
    }
    with pytest.raises(ConfigurationError, match=r"'B'.*no run of the reference"):
        relative_changes(totals_from(waits), reference=REFERENCE, n_boot=10)
    waits = {
        ("A", 0, "fixed:FCFS", "none"): 10.0,
        ("A", 0, "full", "1d"): 8.0,
        ("A", 1, "full", "1d"): 9.0,
    }
    with pytest.raises(ConfigurationError, match=r"replica\(s\) \[1\]"):
        relative_changes(totals_from(waits), reference=REFERENCE, n_boot=10)


def test_a_strategy_on_fewer_replicas_uses_those_replicas_only():
    waits = {("A", k, "fixed:FCFS", "none"): 100.0 * (k + 1) for k in range(3)}
    waits[("A", 2, "full", "1d")] = 240.0
    got = row(relative_changes(totals_from(waits), reference=REFERENCE, n_boot=10), strategy="full")
    assert got["replicas"] == 1 and got["reference_wait_s"] == 300.0
    assert got["relative_change"] == pytest.approx(-0.2)
    assert math.isnan(got["p_value"])  # a single replica: no t-test


# --------------------------------------------------------------------------------------------
# Bootstrap intervals
# --------------------------------------------------------------------------------------------


def test_bootstrap_interval_contains_the_estimate_and_is_reproducible(
    totals: pl.DataFrame, changes: pl.DataFrame
):
    for got in changes.iter_rows(named=True):
        assert got["ci_low"] <= got["relative_change"] + 1e-12
        assert got["relative_change"] <= got["ci_high"] + 1e-12
    again = relative_changes(totals, reference=REFERENCE, n_boot=B, seed=3)
    assert again.equals(changes)
    other = relative_changes(totals, reference=REFERENCE, n_boot=B, seed=4)
    assert not other["ci_low"].equals(changes["ci_low"])
    assert other["relative_change"].equals(changes["relative_change"])


def test_bootstrap_interval_is_the_documented_percentile_interval(
    runs: dict[Run, list[float]], changes: pl.DataFrame
):
    w_s = np.array([runs[("T2", k, "full", "1d")][-1] for k in range(REPLICAS)])
    w_ref = np.array([runs[("T2", k, "fixed:FCFS", "none")][-1] for k in range(REPLICAS)])
    index = np.random.default_rng(3).integers(0, REPLICAS, size=(B, REPLICAS))
    boot = (w_s[index].sum(axis=1) - w_ref[index].sum(axis=1)) / w_ref[index].sum(axis=1)
    got = row(changes, trace="T2", strategy="full")
    assert got["ci_low"] == pytest.approx(np.quantile(boot, 0.025))
    assert got["ci_high"] == pytest.approx(np.quantile(boot, 0.975))


def test_bootstrap_interval_narrows_with_more_replicas():
    few_s, few_ref = [80.0, 130.0, 95.0, 60.0, 120.0], [100.0, 110.0, 105.0, 90.0, 100.0]

    def width(copies: int) -> tuple[float, float]:
        waits: dict[Run, float] = {}
        for k, (s, ref) in enumerate(zip(few_s * copies, few_ref * copies, strict=True)):
            waits[("A", k, "fixed:FCFS", "none")] = ref
            waits[("A", k, "full", "1d")] = s
        got = row(
            relative_changes(totals_from(waits), reference=REFERENCE, n_boot=1000, seed=0),
            strategy="full",
        )
        return got["ci_high"] - got["ci_low"], got["relative_change"]

    (narrow, estimate_many), (wide, estimate_few) = width(8), width(1)
    assert estimate_many == pytest.approx(estimate_few)  # same point estimate
    assert narrow < 0.6 * wide  # about 1 / sqrt(8) in theory


# --------------------------------------------------------------------------------------------
# Paired tests and Holm adjustment
# --------------------------------------------------------------------------------------------


def test_paired_p_value_matches_scipy(runs: dict[Run, list[float]], changes: pl.DataFrame):
    for trace in TRACES:
        best = row(changes, trace=trace, strategy=BEST_FIXED)["source"]
        for strategy in ("full", "bandit(eps=0.1)", "bandit(eps=0.3)"):
            w_s = [runs[(trace, k, strategy, "1d")][-1] for k in range(REPLICAS)]
            w_b = [runs[(trace, k, best, "none")][-1] for k in range(REPLICAS)]  # type: ignore[index]
            expected = scipy_stats.ttest_rel(w_s, w_b).pvalue
            got = row(changes, trace=trace, strategy=strategy)["p_value"]
            assert got == pytest.approx(expected, rel=1e-9)
    fixed = changes.filter(
        pl.col("strategy").str.starts_with("fixed:") | (pl.col("strategy") == BEST_FIXED)
    )
    assert fixed["p_value"].is_nan().all() and fixed["p_holm"].is_nan().all()
    assert fixed["significant"].is_null().all()


def test_holm_adjustment_by_hand(changes: pl.DataFrame):
    tested = changes.filter(pl.col("p_value").is_not_nan())
    assert tested.height == 3 * 4  # full, two bandits and the LOTO bandit per trace
    p = tested["p_value"].to_numpy()
    order = np.argsort(p)
    m = p.size
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    np.testing.assert_allclose(tested["p_holm"].to_numpy(), adjusted, rtol=1e-12)
    assert tested["significant"].to_list() == [bool(x < 0.05) for x in adjusted]


def test_p_value_conventions_all_zero_and_identical_runs():
    waits: dict[Run, float] = {}
    for k in range(4):
        waits[("A", k, "fixed:FCFS", "none")] = 100.0 + k
        waits[("A", k, "fixed:SPF", "none")] = 90.0 + 3 * k
        waits[("A", k, "random", "1d")] = 90.0 + 3 * k  # identical to the best fixed: d = 0
        waits[("A", k, "full", "1d")] = 80.0 + 3 * k  # constant d = -10: t = -inf, p = 0
    table = relative_changes(totals_from(waits), reference=REFERENCE, n_boot=20)
    assert row(table, strategy=BEST_FIXED)["source"] == "fixed:SPF"
    assert row(table, strategy="random")["p_value"] == 1.0
    assert row(table, strategy="full")["p_value"] == 0.0


def test_loto_bandit_row_uses_the_held_out_choice():
    totals = loto_totals()
    chosen = choose_epsilon(totals, candidates=CANDIDATES, period=None)
    table = relative_changes(totals, reference=REFERENCE, chosen_epsilon=chosen, n_boot=20)
    for log, strategy in (("A", "bandit(eps=0.3)"), ("B", "bandit(eps=0.1)")):
        loto = row(table, trace=log, strategy=LOTO_BANDIT, period="1d")
        same = row(table, trace=log, strategy=strategy, period="1d")
        assert loto["source"] == strategy
        assert loto["total_wait_s"] == same["total_wait_s"]
        assert loto["relative_change"] == same["relative_change"]
    # Without chosen_epsilon the vote is computed over the bandits of the table.
    assert relative_changes(totals, reference=REFERENCE, n_boot=20).equals(table)


# --------------------------------------------------------------------------------------------
# Wide tables
# --------------------------------------------------------------------------------------------


def test_fixed_policy_table_and_markdown(changes: pl.DataFrame):
    wide = fixed_policy_table(changes)
    assert wide.columns == ["policy", *TRACES]
    assert wide["policy"].to_list() == ["FCFS", "SPF"]
    for trace in TRACES:
        expected = row(changes, trace=trace, strategy="fixed:SPF")["relative_change"]
        assert wide.filter(pl.col("policy") == "SPF")[trace][0] == expected
    text = markdown_table(wide)
    lines = text.splitlines()
    assert lines[0] == "| policy | T1 | T2 | T3 |"
    assert lines[1] == "|---|---:|---:|---:|"
    assert lines[2] == "| FCFS | 0.000 | 0.000 | 0.000 |" and len(lines) == 4


def test_strategy_table_and_markdown(changes: pl.DataFrame):
    wide = strategy_table(changes)
    assert wide.columns == ["strategy", "period", *TRACES]
    assert wide.select("strategy", "period").rows() == [
        (BEST_FIXED, "none"),
        ("full", "1d"),
        (LOTO_BANDIT, "1d"),
    ]
    full = row(changes, trace="T3", strategy="full")["relative_change"]
    assert wide.filter(pl.col("strategy") == "full")["T3"][0] == full
    text = markdown_table(wide, float_digits=2)
    assert text.splitlines()[0] == "| strategy | period | T1 | T2 | T3 |"
    assert f"| full | 1d | {wide['T1'][1]:.2f} |" in text
    assert "bandit (LOTO ε) | 1d" in text


def test_relative_changes_against_spf_are_zero_for_spf(totals: pl.DataFrame):
    table = relative_changes(totals, reference="fixed:SPF", n_boot=20)
    spf = table.filter(pl.col("strategy") == "fixed:SPF")
    assert spf.height == len(TRACES)
    assert (spf.select("relative_change", "ci_low", "ci_high").to_numpy() == 0.0).all()
    assert (spf["total_wait_s"] == spf["reference_wait_s"]).all()
    fixed = fixed_policy_table(table)
    spf_row = fixed.filter(pl.col("policy") == "SPF").select(list(TRACES)).to_numpy()
    assert (spf_row == 0.0).all()
    assert not (
        fixed.filter(pl.col("policy") == "FCFS").select(list(TRACES)).to_numpy() == 0.0
    ).all()
