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
from scheduler.studies.online.changes import (
    STRATEGY_TABLE_NOTE,
    fixed_policy_table,
    relative_changes,
    strategy_table,
)
from scheduler.studies.online.epsilon import choose_epsilon
from scheduler.studies.online.runs import (
    BEST_FIXED,
    CHANGE_COLUMNS,
    CONFIGURED_BANDIT,
    CROSSFIT_FIXED,
    LOTO_BANDIT,
)

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


def crossfit_by_hand(runs: dict[Run, list[float]], trace: str) -> dict[int, str]:
    """On replica r, the fixed policy with the lowest total wait over the replicas of the other
    fold (folds: even and odd replicas)."""
    fixed = ("fixed:FCFS", "fixed:SPF")  # in study order: ties go to FCFS
    return {
        r: min(fixed, key=lambda name: sum(runs[(trace, k, name, "none")][-1]
                                           for k in range(REPLICAS) if k % 2 != r % 2))
        for r in range(REPLICAS)
    }  # fmt: skip


def test_paired_p_value_is_against_the_cross_fitted_best_fixed(
    runs: dict[Run, list[float]], changes: pl.DataFrame
):
    for trace in TRACES:
        comparator = crossfit_by_hand(runs, trace)
        w_c = [runs[(trace, k, comparator[k], "none")][-1] for k in range(REPLICAS)]
        crossfit = row(changes, trace=trace, strategy=CROSSFIT_FIXED)
        assert crossfit["source"] == ",".join(comparator[k] for k in range(REPLICAS))
        assert crossfit["total_wait_s"] == pytest.approx(sum(w_c))
        assert crossfit["period"] == "none" and math.isnan(crossfit["p_value"])
        for strategy in ("full", "bandit(eps=0.1)", "bandit(eps=0.3)"):
            w_s = [runs[(trace, k, strategy, "1d")][-1] for k in range(REPLICAS)]
            expected = scipy_stats.ttest_rel(w_s, w_c).pvalue
            got = row(changes, trace=trace, strategy=strategy)["p_value"]
            assert got == pytest.approx(expected, rel=1e-9)
    fixed = changes.filter(
        pl.col("strategy").str.starts_with("fixed:")
        | pl.col("strategy").is_in([BEST_FIXED, CROSSFIT_FIXED])
    )
    assert fixed["p_value"].is_nan().all() and fixed["p_holm"].is_nan().all()
    assert fixed["significant"].is_null().all()


def test_cross_fitted_comparator_by_hand():
    """Folds {0, 2} and {1}: in hindsight SPF is best (Σ 160 < 240), but the comparator of
    replicas 0 and 2 is chosen on replica 1 alone, where FCFS is better (70 < 75)."""
    fcfs, spf = [100.0, 70.0, 70.0], [10.0, 75.0, 75.0]
    waits: dict[Run, float] = {}
    for k in range(3):
        waits[("A", k, "fixed:FCFS", "none")] = fcfs[k]
        waits[("A", k, "fixed:SPF", "none")] = spf[k]
        waits[("A", k, "full", "1d")] = 60.0 + k
    table = relative_changes(totals_from(waits), reference=REFERENCE, n_boot=10)
    assert row(table, strategy=BEST_FIXED)["source"] == "fixed:SPF"
    # r = 0, 2: chosen on replica 1 → FCFS; r = 1: chosen on 0 and 2 → SPF (85 < 170)
    crossfit = row(table, strategy=CROSSFIT_FIXED)
    assert crossfit["source"] == "fixed:FCFS,fixed:SPF,fixed:FCFS"
    assert crossfit["total_wait_s"] == 100.0 + 75.0 + 70.0
    assert crossfit["from_thesis"] is False and row(table, strategy=BEST_FIXED)["from_thesis"]
    expected = scipy_stats.ttest_rel([60.0, 61.0, 62.0], [100.0, 75.0, 70.0]).pvalue
    assert row(table, strategy="full")["p_value"] == pytest.approx(expected, rel=1e-12)
    # one replica: nothing to cross-fit on, no comparator row and no test
    one = {key: value for key, value in waits.items() if key[1] == 0}
    single = relative_changes(totals_from(one), reference=REFERENCE, n_boot=10)
    assert CROSSFIT_FIXED not in single["strategy"].to_list()
    assert math.isnan(row(single, strategy="full")["p_value"])


def test_cross_fitting_removes_the_bias_of_the_hindsight_comparator():
    """#16 (13), a known null: twelve fixed policies identically distributed on each replica,
    and a selector that is one more draw of the same law (as one that picks one of them at
    random). Tested against the best fixed policy in hindsight, the selector is found
    significantly worse far more often than α = 5 %; against the cross-fitted comparator, not
    (within 4 binomial standard deviations). Each repetition is a trace of one table."""
    rng = np.random.default_rng(2024)
    repetitions, replicas, alpha = 300, 16, 0.05
    policies = ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF",
                "LAF", "SAF")  # fmt: skip
    waits: dict[Run, float] = {}
    for t in range(repetitions):
        trace = f"L{t:03d}"
        level = rng.uniform(500.0, 2000.0, size=replicas)  # the replicas differ in load
        noise = rng.normal(0.0, 100.0, size=(replicas, len(policies) + 1))
        for k in range(replicas):
            for j, policy in enumerate(policies):
                waits[(trace, k, f"fixed:{policy}", "none")] = level[k] + noise[k, j]
            waits[(trace, k, "random", "1d")] = level[k] + noise[k, -1]
    table = relative_changes(totals_from(waits), reference=REFERENCE, n_boot=1)
    selector = table.filter(pl.col("strategy") == "random").sort("trace")
    comparator = table.filter(pl.col("strategy") == CROSSFIT_FIXED).sort("trace")
    # "beaten": the comparator significantly better (the selector's total wait higher)
    worse = (selector["total_wait_s"] > comparator["total_wait_s"]).to_numpy()
    crossfit_p = selector["p_value"].to_numpy()
    hindsight_p = np.array([
        scipy_stats.ttest_rel(
            [waits[(trace, k, "random", "1d")] for k in range(replicas)],
            [waits[(trace, k, best, "none")] for k in range(replicas)],
        ).pvalue
        for trace, best in selector.select("trace", "best_fixed").iter_rows()
    ])  # fmt: skip
    hindsight_worse = (
        selector["total_wait_s"].to_numpy()
        > table.filter(pl.col("strategy") == BEST_FIXED).sort("trace")["total_wait_s"].to_numpy()
    )
    tolerance = 4 * math.sqrt(alpha * (1 - alpha) / repetitions)  # 5 points
    crossfit_beaten = float(np.mean((crossfit_p < alpha) & worse))
    hindsight_beaten = float(np.mean((hindsight_p < alpha) & hindsight_worse))
    assert crossfit_beaten <= alpha + tolerance
    assert float(np.mean(crossfit_p < alpha)) <= alpha + tolerance  # either direction, too
    assert hindsight_beaten > alpha + tolerance and hindsight_beaten > 2 * crossfit_beaten
    # on average the hindsight comparator beats an identical law; the cross-fitted one does not
    change = {name: table.filter(pl.col("strategy") == name)["relative_change"].mean()
              for name in (BEST_FIXED, CROSSFIT_FIXED, "random")}  # fmt: skip
    assert change[BEST_FIXED] < change[CROSSFIT_FIXED] - 0.01  # type: ignore[operator]
    assert abs(change[CROSSFIT_FIXED] - change["random"]) < 0.005  # type: ignore[operator]


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
    votes = {
        "per_period": {"A": "bandit(eps=0.3)", "B": "bandit(eps=0.1)"},
        "pooled": {"A": "bandit(eps=0.3)", "B": "bandit(eps=0.5)"},
    }
    for vote, expected in votes.items():
        chosen = choose_epsilon(totals, candidates=CANDIDATES, vote=vote)  # type: ignore[arg-type]
        table = relative_changes(totals, reference=REFERENCE, chosen_epsilon=chosen, n_boot=20)
        for log, strategy in expected.items():
            loto = row(table, trace=log, strategy=LOTO_BANDIT, period="1d")
            same = row(table, trace=log, strategy=strategy, period="1d")
            assert loto["source"] == strategy
            assert loto["total_wait_s"] == same["total_wait_s"]
            assert loto["relative_change"] == same["relative_change"]
    # Without chosen_epsilon the (pooled) vote is computed over the bandits of the table.
    assert relative_changes(totals, reference=REFERENCE, n_boot=20).equals(table)


def test_a_single_trace_has_a_configured_bandit_row():
    """#16 (10): with one trace the bandit row is the configured ε, named so."""
    alone = loto_totals().filter(pl.col("trace") == "A")
    table = relative_changes(alone, reference=REFERENCE, configured_epsilon=0.5, n_boot=20)
    configured = row(table, strategy=CONFIGURED_BANDIT, period="1d")
    assert configured["source"] == "bandit(eps=0.5)" and configured["from_thesis"]
    assert LOTO_BANDIT not in table["strategy"].to_list()
    assert "bandit (configured ε) | 1d" in markdown_table(strategy_table(table))


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
        (CROSSFIT_FIXED, "none"),
        ("full", "1d"),
        (LOTO_BANDIT, "1d"),
    ]
    full = row(changes, trace="T3", strategy="full")["relative_change"]
    assert wide.filter(pl.col("strategy") == "full")["T3"][0] == full
    text = markdown_table(wide, float_digits=2)
    assert text.splitlines()[0] == "| strategy | period | T1 | T2 | T3 |"
    assert f"| full | 1d | {wide['T1'][2]:.2f} |" in text
    assert "bandit (LOTO ε) | 1d" in text


def test_additions_are_labelled_in_the_tables():
    """#16 (14): ucb, swucb and thompson are schedlab's additions: ``from_thesis`` is False in
    changes.csv and the strategy table shows "(addition)"; the thesis' selectors are plain."""
    waits: dict[Run, float] = {}
    for k in range(3):
        waits[("A", k, "fixed:FCFS", "none")] = 100.0 + k
        for n, name in enumerate(("random", "noisy", "ucb", "swucb", "thompson")):
            waits[("A", k, name, "1d")] = 90.0 + n + k
    table = relative_changes(totals_from(waits), reference=REFERENCE, n_boot=10)
    thesis = dict(table.select("strategy", "from_thesis").iter_rows())
    assert thesis == {"fixed:FCFS": True, BEST_FIXED: True, CROSSFIT_FIXED: False,
                      "random": True, "noisy": True, "ucb": False, "swucb": False,
                      "thompson": False}  # fmt: skip
    shown = strategy_table(table)["strategy"].to_list()
    assert shown == [BEST_FIXED, CROSSFIT_FIXED, "random", "noisy", "ucb (addition)",
                     "swucb (addition)", "thompson (addition)"]  # fmt: skip
    assert "(addition)" in STRATEGY_TABLE_NOTE and "cross-fitted" in STRATEGY_TABLE_NOTE


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
