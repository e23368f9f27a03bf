"""Statistics of the online policy-selection study, checked against the definitions by hand."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as scipy_stats

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.tables import markdown_table
from scheduler.studies.online.stats import (
    BEST_FIXED,
    CHANGE_COLUMNS,
    CHOICE_COLUMNS,
    CURVE_COLUMNS,
    IMPROVEMENT_COLUMNS,
    LOTO_BANDIT,
    SHARE_COLUMNS,
    choice_shares,
    choose_epsilon,
    fixed_policy_table,
    improvement_curves,
    relative_changes,
    run_totals,
    strategy_table,
)

TRACES = ("T1", "T2", "T3")
REPLICAS = 5
#: (strategy, period, scale of the daily waits relative to FCFS, per trace)
STRATEGIES = (
    ("fixed:FCFS", "none", {"T1": 1.0, "T2": 1.0, "T3": 1.0}),
    ("fixed:SPF", "none", {"T1": 0.7, "T2": 1.3, "T3": 0.8}),
    ("full", "1d", {"T1": 0.75, "T2": 0.9, "T3": 0.85}),
    ("bandit(eps=0.1)", "1d", {"T1": 0.8, "T2": 1.1, "T3": 0.95}),
    ("bandit(eps=0.3)", "1d", {"T1": 0.9, "T2": 0.95, "T3": 0.9}),
)
B = 300  # bootstrap resamples in most tests (the default 2000 is slower for no gain here)

Run = tuple[str, int, str, str]


def curves_from(runs: dict[Run, list[float]]) -> pl.DataFrame:
    """Curves table: run → cumulative wait (s) on days 0, 1, ...; finished_jobs = 10 (d + 1)."""
    rows = [
        (trace, replica, strategy, period, day, float(value), 10 * (day + 1))
        for (trace, replica, strategy, period), values in runs.items()
        for day, value in enumerate(values)
    ]
    return pl.DataFrame(rows, schema=list(CURVE_COLUMNS), orient="row")


def totals_from(waits: dict[Run, float]) -> pl.DataFrame:
    """Totals table from run → W (s) (jobs unused by the statistics)."""
    rows = [(*run, float(w), 100) for run, w in waits.items()]
    return pl.DataFrame(
        rows,
        schema=["trace", "replica", "strategy", "period", "total_wait_s", "jobs"],
        orient="row",
    )


@pytest.fixture(scope="module")
def runs() -> dict[Run, list[float]]:
    """3 traces x 5 replicas x 5 strategies; runs of one replica end on different days."""
    rng = np.random.default_rng(7)
    out: dict[Run, list[float]] = {}
    for trace in TRACES:
        for replica in range(REPLICAS):
            base = rng.uniform(500.0, 5000.0, size=8)  # daily waits of FCFS (s)
            for strategy, period, scale in STRATEGIES:
                days = int(rng.integers(5, 9))
                noise = rng.uniform(0.8, 1.2, size=days)
                out[(trace, replica, strategy, period)] = list(
                    np.cumsum(base[:days] * scale[trace] * noise)
                )
    return out


@pytest.fixture(scope="module")
def curves(runs: dict[Run, list[float]]) -> pl.DataFrame:
    return curves_from(runs)


@pytest.fixture(scope="module")
def totals(curves: pl.DataFrame) -> pl.DataFrame:
    return run_totals(curves)


@pytest.fixture(scope="module")
def changes(totals: pl.DataFrame) -> pl.DataFrame:
    return relative_changes(totals, n_boot=B, seed=3)


def sums(runs: dict[Run, list[float]], trace: str, strategy: str, period: str) -> float:
    return sum(runs[(trace, k, strategy, period)][-1] for k in range(REPLICAS))


def row(table: pl.DataFrame, **equal: str) -> dict[str, object]:
    selected = table
    for name, value in equal.items():
        selected = selected.filter(pl.col(name) == value)
    assert selected.height == 1, equal
    return selected.row(0, named=True)


# --------------------------------------------------------------------------------------------
# run_totals
# --------------------------------------------------------------------------------------------


def test_run_totals_takes_the_last_day(runs: dict[Run, list[float]], curves: pl.DataFrame):
    shuffled = curves.sample(fraction=1.0, shuffle=True, seed=1)
    totals = run_totals(shuffled)
    assert totals.columns == ["trace", "replica", "strategy", "period", "total_wait_s", "jobs"]
    assert totals.height == len(runs)
    for run, values in runs.items():
        got = row(
            totals,
            trace=run[0],
            replica=run[1],  # type: ignore[arg-type]
            strategy=run[2],
            period=run[3],
        )
        assert got["total_wait_s"] == pytest.approx(values[-1])
        assert got["jobs"] == 10 * len(values)


def test_run_totals_rejects_duplicates_and_missing_columns(curves: pl.DataFrame):
    with pytest.raises(ConfigurationError, match="duplicated"):
        run_totals(pl.concat([curves, curves.head(1)]))
    with pytest.raises(ConfigurationError, match="finished_jobs"):
        run_totals(curves.drop("finished_jobs"))


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
    got = row(relative_changes(totals_from(waits), n_boot=50), strategy="full")
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
        relative_changes(totals_from(waits), n_boot=10)
    waits = {
        ("A", 0, "fixed:FCFS", "none"): 10.0,
        ("A", 0, "full", "1d"): 8.0,
        ("A", 1, "full", "1d"): 9.0,
    }
    with pytest.raises(ConfigurationError, match=r"replica\(s\) \[1\]"):
        relative_changes(totals_from(waits), n_boot=10)


def test_a_strategy_on_fewer_replicas_uses_those_replicas_only():
    waits = {("A", k, "fixed:FCFS", "none"): 100.0 * (k + 1) for k in range(3)}
    waits[("A", 2, "full", "1d")] = 240.0
    got = row(relative_changes(totals_from(waits), n_boot=10), strategy="full")
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
    again = relative_changes(totals, n_boot=B, seed=3)
    assert again.equals(changes)
    other = relative_changes(totals, n_boot=B, seed=4)
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
        got = row(relative_changes(totals_from(waits), n_boot=1000, seed=0), strategy="full")
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
    table = relative_changes(totals_from(waits), n_boot=20)
    assert row(table, strategy=BEST_FIXED)["source"] == "fixed:SPF"
    assert row(table, strategy="random")["p_value"] == 1.0
    assert row(table, strategy="full")["p_value"] == 0.0


# --------------------------------------------------------------------------------------------
# Leave-one-trace-out ε
# --------------------------------------------------------------------------------------------


def loto_totals() -> pl.DataFrame:
    """3 logs, 2 replicas: own best ε A → 0.1, B → 0.3, C → 0.3 (period 1d); 1w: all 0.5."""
    per_log = {  # Σ_k W per ε, split evenly over the two replicas
        "A": {"0.1": 100.0, "0.3": 120.0, "0.5": 130.0},
        "B": {"0.1": 200.0, "0.3": 150.0, "0.5": 160.0},
        "C": {"0.1": 90.0, "0.3": 80.0, "0.5": 80.0},  # 0.3 and 0.5 tie: smaller ε
    }
    waits: dict[Run, float] = {}
    for log, by_eps in per_log.items():
        for k in range(2):
            waits[(log, k, "fixed:FCFS", "none")] = 100.0
            for eps, total in by_eps.items():
                waits[(log, k, f"bandit(eps={eps})", "1d")] = total / 2 + (5.0 if k else -5.0)
                waits[(log, k, f"bandit(eps={eps})", "1w")] = 70.0 if eps == "0.5" else 90.0
    return totals_from(waits)


CANDIDATES = ("bandit(eps=0.1)", "bandit(eps=0.3)", "bandit(eps=0.5)")


def test_loto_vote_by_hand():
    chosen = choose_epsilon(loto_totals(), candidates=CANDIDATES, period="1d")
    assert chosen.columns == [
        "period",
        "held_out",
        "chosen",
        "chosen_strategy",
        "votes",
        "own_best",
        "note",
    ]
    got = {r["held_out"]: r for r in chosen.iter_rows(named=True)}
    # A: the others (B, C) both prefer 0.3 although A itself is best with 0.1.
    assert (got["A"]["own_best"], got["A"]["chosen"], got["A"]["votes"]) == (0.1, 0.3, "0.3:2")
    assert got["A"]["chosen_strategy"] == "bandit(eps=0.3)"
    # B: A votes 0.1, C votes 0.3 → tie → smaller ε, which is not B's own best.
    assert (got["B"]["own_best"], got["B"]["chosen"], got["B"]["votes"]) == (
        0.3,
        0.1,
        "0.1:1, 0.3:1",
    )
    assert (got["C"]["own_best"], got["C"]["chosen"]) == (0.3, 0.1)
    assert chosen["note"].is_null().all() and set(chosen["period"]) == {"1d"}


def test_loto_vote_for_every_period_and_a_single_log():
    both = choose_epsilon(loto_totals(), candidates=CANDIDATES, period=None)
    assert both.height == 6 and sorted(set(both["period"])) == ["1d", "1w"]
    assert set(both.filter(pl.col("period") == "1w")["chosen"]) == {0.5}
    alone = choose_epsilon(
        loto_totals().filter(pl.col("trace") == "A"), candidates=CANDIDATES, period="1d"
    )
    assert alone.height == 1
    assert alone["chosen"][0] == 0.1 and alone["own_best"][0] == 0.1
    assert "single" in alone["note"][0] and alone["votes"][0] == ""


def test_loto_vote_rejects_bad_candidates():
    with pytest.raises(ConfigurationError, match="not a bandit name"):
        choose_epsilon(loto_totals(), candidates=("ucb",), period="1d")
    with pytest.raises(ConfigurationError, match="no run"):
        choose_epsilon(loto_totals(), candidates=CANDIDATES, period="2w")


def test_loto_bandit_row_uses_the_held_out_choice():
    totals = loto_totals()
    chosen = choose_epsilon(totals, candidates=CANDIDATES, period=None)
    table = relative_changes(totals, chosen_epsilon=chosen, n_boot=20)
    for log, strategy in (("A", "bandit(eps=0.3)"), ("B", "bandit(eps=0.1)")):
        loto = row(table, trace=log, strategy=LOTO_BANDIT, period="1d")
        same = row(table, trace=log, strategy=strategy, period="1d")
        assert loto["source"] == strategy
        assert loto["total_wait_s"] == same["total_wait_s"]
        assert loto["relative_change"] == same["relative_change"]
    # Without chosen_epsilon the vote is computed over the bandits of the table.
    assert relative_changes(totals, n_boot=20).equals(table)


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
    table = improvement_curves(curves)
    assert table.columns == list(IMPROVEMENT_COLUMNS)
    full = table.filter(pl.col("strategy") == "full").sort("day")
    assert full["day"].to_list() == [0, 1, 2, 3]
    expected = [0.0, (20 - 8) / 20, (30 - 8) / 30, (40 - 8) / 40]  # day 0: C_ref = 0 → 0
    np.testing.assert_allclose(full["mean_improvement"].to_numpy(), expected)
    np.testing.assert_allclose(full["q10"].to_numpy(), expected)
    reference = table.filter(pl.col("strategy") == "fixed:FCFS")
    assert (reference["mean_improvement"] == 0.0).all() and reference.height == 4


def test_improvement_curves_quantiles_match_numpy(
    runs: dict[Run, list[float]], curves: pl.DataFrame
):
    table = improvement_curves(curves)
    trace, strategy, period = "T2", "bandit(eps=0.3)", "1d"
    last = max(len(v) for run, v in runs.items() if run[0] == trace) - 1

    def padded(values: list[float]) -> np.ndarray:
        return np.array(values + [values[-1]] * (last + 1 - len(values)))

    per_replica = []
    for k in range(REPLICAS):
        c_ref = padded(runs[(trace, k, "fixed:FCFS", "none")])
        c_s = padded(runs[(trace, k, strategy, period)])
        per_replica.append((c_ref - c_s) / c_ref)
    matrix = np.vstack(per_replica)
    got = table.filter(
        (pl.col("trace") == trace) & (pl.col("strategy") == strategy) & (pl.col("period") == period)
    ).sort("day")
    assert got["day"].to_list() == list(range(last + 1))
    assert (got["replicas"] == REPLICAS).all()
    np.testing.assert_allclose(got["mean_improvement"].to_numpy(), matrix.mean(axis=0))
    np.testing.assert_allclose(got["q10"].to_numpy(), np.quantile(matrix, 0.1, axis=0))
    np.testing.assert_allclose(got["q90"].to_numpy(), np.quantile(matrix, 0.9, axis=0))


def test_improvement_curves_need_the_reference(curves: pl.DataFrame):
    with pytest.raises(ConfigurationError, match="no reference"):
        improvement_curves(curves.filter(pl.col("strategy") != "fixed:FCFS"))


# --------------------------------------------------------------------------------------------
# Choice shares
# --------------------------------------------------------------------------------------------


def choices_from(runs: dict[Run, list[str]]) -> pl.DataFrame:
    rows = [
        (*run, index, policy)
        for run, policies in runs.items()
        for index, policy in enumerate(policies)
    ]
    return pl.DataFrame(rows, schema=list(CHOICE_COLUMNS), orient="row")


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
