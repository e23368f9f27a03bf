"""Study statistics (scheduler.studies.tuning.stats) on small hand-made weekly tables.

Every expected number is recomputed here from its definition (numpy / scipy), never copied
from the implementation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.tables import markdown_table
from scheduler.studies.tuning.schema import WEEKLY_COLUMNS
from scheduler.studies.tuning.stats import (
    PROTOCOL_COLUMNS,
    RELATIVE_COLUMNS,
    REQUIRED_WEEKLY_COLUMNS,
    SUMMARY_COLUMNS,
    Baseline,
    add_relative_columns,
    summarize_configs,
    train_test_protocol,
)

BASE = Baseline()
THRESHOLD_S = {"none": math.inf, "5h": 5 * 3600.0, "20h": 20 * 3600.0}
SCHEMA = WEEKLY_COLUMNS
DECILE_COLUMNS = [f"relative_avg_wait_d{d}" for d in range(1, 10)]


def rows(
    primary: str,
    backfill: str,
    threshold: str,
    avg_wait_s: Sequence[float],
    *,
    max_wait_s: Sequence[float] | None = None,
    avg_bsld: Sequence[float] | None = None,
    max_bsld: Sequence[float] | None = None,
    trace: str = "T",
    split: str = "train",
    weeks: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Weekly rows of one configuration, weeks 0, 1, ... unless ``weeks`` is given.

    Unspecified figures are derived from AvgWait (MaxWait = 3·AvgWait, AvgBSLD = 1 + AvgWait,
    MaxBSLD = 2 + 3·AvgWait) so that zero waits give zero waits everywhere.
    """
    n = len(avg_wait_s)
    weeks = list(range(n)) if weeks is None else list(weeks)
    max_wait_s = [3.0 * a for a in avg_wait_s] if max_wait_s is None else max_wait_s
    avg_bsld = [1.0 + a for a in avg_wait_s] if avg_bsld is None else avg_bsld
    max_bsld = [2.0 + 3.0 * a for a in avg_wait_s] if max_bsld is None else max_bsld
    return [
        {
            "trace": trace,
            "split": split,
            "week_index": weeks[i],
            "primary": primary,
            "backfill": backfill,
            "threshold": threshold,
            "threshold_s": THRESHOLD_S[threshold],
            "jobs": 100 + 10 * weeks[i],
            "avg_wait_s": float(avg_wait_s[i]),
            "max_wait_s": float(max_wait_s[i]),
            "avg_bsld": float(avg_bsld[i]),
            "max_bsld": float(max_bsld[i]),
            "utilisation": 0.5 + 0.01 * weeks[i],
        }
        for i in range(n)
    ]


def frame(*groups: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame([row for group in groups for row in group], schema=SCHEMA)


def config(df: pl.DataFrame, primary: str, backfill: str, threshold: str, **eq: Any):
    out = df.filter(
        (pl.col("primary") == primary)
        & (pl.col("backfill") == backfill)
        & (pl.col("threshold") == threshold)
    )
    for name, value in eq.items():
        out = out.filter(pl.col(name) == value)
    return out


def hand_holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values, from the definition."""
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(np.argsort(p, kind="stable")):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted


# --------------------------------------------------------------------------------------------
# add_relative_columns
# --------------------------------------------------------------------------------------------

BASE_FIGURES = {
    "avg_wait_s": [10.0, 20.0, 40.0],
    "max_wait_s": [100.0, 50.0, 80.0],
    "avg_bsld": [2.0, 3.0, 4.0],
    "max_bsld": [10.0, 20.0, 30.0],
}
SPF_FIGURES = {
    "avg_wait_s": [5.0, 30.0, 40.0],
    "max_wait_s": [200.0, 25.0, 80.0],
    "avg_bsld": [1.5, 6.0, 1.0],
    "max_bsld": [5.0, 40.0, 33.0],
}


def test_relative_columns_are_value_over_baseline_of_the_same_week() -> None:
    weekly = frame(
        rows("SPF", "FCFS", "none", **SPF_FIGURES),
        rows("FCFS", "FCFS", "none", **BASE_FIGURES),
    )
    relative = add_relative_columns(weekly, BASE)
    assert relative.columns == [*REQUIRED_WEEKLY_COLUMNS, *RELATIVE_COLUMNS.values()]
    assert relative.height == 6
    spf = config(relative, "SPF", "FCFS", "none").sort("week_index")
    for metric, rel in RELATIVE_COLUMNS.items():
        expected = [v / b for v, b in zip(SPF_FIGURES[metric], BASE_FIGURES[metric], strict=True)]
        assert spf.get_column(rel).to_list() == pytest.approx(expected, rel=1e-15)
        assert config(relative, "FCFS", "FCFS", "none").get_column(rel).to_list() == [1.0] * 3


def test_zero_over_zero_is_one() -> None:
    weekly = frame(
        rows("FCFS", "FCFS", "none", [10.0, 0.0, 4.0]),
        rows("SPF", "FCFS", "none", [5.0, 0.0, 2.0]),
    )
    relative = add_relative_columns(weekly, BASE)
    week1 = config(relative, "SPF", "FCFS", "none", week_index=1).row(0, named=True)
    assert week1["relative_avg_wait"] == 1.0
    assert week1["relative_max_wait"] == 1.0  # max wait 0 under both
    assert week1["relative_avg_bsld"] == 1.0  # 1 / 1
    week0 = config(relative, "SPF", "FCFS", "none", week_index=0).row(0, named=True)
    assert week0["relative_avg_wait"] == 0.5


def test_positive_over_zero_raises_naming_the_week() -> None:
    weekly = frame(
        rows("FCFS", "FCFS", "none", [10.0, 3.0, 0.0], split="test"),
        rows("SPF", "FCFS", "none", [5.0, 2.0, 7.0], split="test"),
    )
    with pytest.raises(ConfigurationError) as info:
        add_relative_columns(weekly, BASE)
    message = str(info.value)
    assert "trace 'T'" in message
    assert "split 'test'" in message
    assert "week 2" in message
    assert "avg_wait_s" in message


def test_missing_baseline_weeks_are_named_at_most_five() -> None:
    weekly = frame(
        rows("FCFS", "FCFS", "none", [1.0, 2.0], split="test", trace="KTH"),
        rows("SPF", "FCFS", "none", [1.0] * 9, split="test", trace="KTH"),
        rows("FCFS", "FCFS", "none", [1.0] * 9, split="train", trace="KTH"),
        rows("SPF", "FCFS", "none", [1.0] * 9, split="train", trace="KTH"),
    )
    with pytest.raises(ConfigurationError) as info:
        add_relative_columns(weekly, BASE)
    message = str(info.value)
    assert "FCFS/FCFS/none" in message
    assert "trace 'KTH', split 'test': weeks 2, 3, 4, 5, 6 and 2 more" in message
    assert "7" not in message.split("weeks", 1)[1]
    assert "'train'" not in message


def test_missing_baseline_for_a_whole_trace() -> None:
    weekly = frame(
        rows("FCFS", "FCFS", "none", [1.0, 2.0], trace="A"),
        rows("SPF", "FCFS", "none", [1.0, 2.0], trace="B"),
    )
    with pytest.raises(ConfigurationError, match=r"trace 'B', split 'train': weeks 0, 1"):
        add_relative_columns(weekly, BASE)


def test_duplicated_row_raises() -> None:
    weekly = frame(
        rows("FCFS", "FCFS", "none", [1.0, 2.0, 3.0]),
        rows("SPF", "FCFS", "none", [1.0, 2.0, 3.0]),
        rows("SPF", "FCFS", "none", [9.0], weeks=[1]),
    )
    with pytest.raises(ConfigurationError, match=r"duplicated.*week 1, SPF/FCFS/none \(2 rows\)"):
        add_relative_columns(weekly, BASE)


def test_other_baseline_and_missing_column() -> None:
    weekly = frame(
        rows("FCFS", "FCFS", "none", [10.0, 20.0]),
        rows("SPF", "FCFS", "5h", [5.0, 40.0]),
    )
    relative = add_relative_columns(weekly, Baseline("SPF", "FCFS", "5h"))
    fcfs = config(relative, "FCFS", "FCFS", "none").get_column("relative_avg_wait").to_list()
    assert fcfs == [2.0, 0.5]
    with pytest.raises(ConfigurationError, match="lacks columns: utilisation"):
        add_relative_columns(weekly.drop("utilisation"), BASE)
    with pytest.raises(ConfigurationError, match="add_relative_columns"):
        summarize_configs(weekly, BASE)


def test_relative_row_order_is_deterministic() -> None:
    weekly = frame(
        rows("SPF", "FCFS", "none", [5.0, 6.0, 7.0]),
        rows("FCFS", "FCFS", "none", [1.0, 2.0, 3.0]),
        rows("FCFS", "FCFS", "5h", [4.0, 5.0, 6.0]),
        rows("FCFS", "FCFS", "none", [1.0, 2.0, 3.0], split="test"),
    )
    relative = add_relative_columns(weekly, BASE)
    shuffled = add_relative_columns(weekly.sample(fraction=1.0, shuffle=True, seed=3), BASE)
    assert relative.equals(shuffled)
    keys = list(
        zip(
            *(relative.get_column(c).to_list() for c in ("split", "primary", "threshold")),
            strict=True,
        )
    )
    assert keys == [
        *[("test", "FCFS", "none")] * 3,
        *[("train", "FCFS", "5h")] * 3,  # threshold_s 18000 < inf
        *[("train", "FCFS", "none")] * 3,
        *[("train", "SPF", "none")] * 3,
    ]
    assert relative.get_column("week_index").to_list() == [0, 1, 2] * 4


# --------------------------------------------------------------------------------------------
# summarize_configs
# --------------------------------------------------------------------------------------------


def test_summary_means_and_deciles_match_numpy() -> None:
    rng = np.random.default_rng(7)
    base_wait = rng.uniform(100.0, 1000.0, size=11)
    spf_wait = rng.uniform(50.0, 1200.0, size=11)
    weekly = frame(
        rows("FCFS", "FCFS", "none", base_wait),
        rows("SPF", "FCFS", "none", spf_wait),
    )
    summary = summarize_configs(add_relative_columns(weekly, BASE), BASE)
    assert summary.columns == list(SUMMARY_COLUMNS)
    assert summary.height == 2
    spf = config(summary, "SPF", "FCFS", "none").row(0, named=True)
    ratio = spf_wait / base_wait
    assert spf["weeks"] == 11
    assert spf["mean_avg_wait_s"] == pytest.approx(np.mean(spf_wait), rel=1e-12)
    assert spf["mean_relative_avg_wait"] == pytest.approx(np.mean(ratio), rel=1e-12)
    deciles = np.quantile(ratio, np.arange(1, 10) / 10)
    assert [spf[c] for c in DECILE_COLUMNS] == pytest.approx(deciles, rel=1e-12)
    assert spf["mean_max_wait_s"] == pytest.approx(np.mean(3 * spf_wait), rel=1e-12)
    assert spf["worst_max_wait_s"] == pytest.approx(np.max(3 * spf_wait), rel=1e-15)
    assert spf["mean_relative_max_wait"] == pytest.approx(np.mean(ratio), rel=1e-12)
    assert spf["mean_avg_bsld"] == pytest.approx(np.mean(1 + spf_wait), rel=1e-12)
    assert spf["mean_relative_avg_bsld"] == pytest.approx(
        np.mean((1 + spf_wait) / (1 + base_wait)), rel=1e-12
    )
    assert spf["mean_utilisation"] == pytest.approx(np.mean(0.5 + 0.01 * np.arange(11)))
    assert spf["mean_jobs"] == pytest.approx(np.mean(100 + 10 * np.arange(11)))
    base = config(summary, "FCFS", "FCFS", "none").row(0, named=True)
    assert base["mean_relative_avg_wait"] == 1.0
    assert [base[c] for c in DECILE_COLUMNS] == [1.0] * 9
    assert base["relative_worst_max_wait"] == 1.0


def test_summary_max_wait_deciles_match_numpy() -> None:
    """The deciles of the weekly relative MaxWait (the pair figures' y bars), independent of
    the AvgWait ratios: MaxWait is drawn apart from AvgWait here."""
    rng = np.random.default_rng(11)
    base_max = rng.uniform(1000.0, 9000.0, size=13)
    lpf_max = rng.uniform(500.0, 20000.0, size=13)
    weekly = frame(
        rows("FCFS", "FCFS", "none", [100.0] * 13, max_wait_s=base_max),
        rows("LPF", "FCFS", "none", [100.0] * 13, max_wait_s=lpf_max),
    )
    summary = summarize_configs(add_relative_columns(weekly, BASE), BASE)
    # the new columns come last: every older column keeps its position
    assert summary.columns[-9:] == [f"relative_max_wait_d{d}" for d in range(1, 10)]
    lpf = config(summary, "LPF", "FCFS", "none").row(0, named=True)
    expected = np.quantile(lpf_max / base_max, np.arange(1, 10) / 10)
    got = [lpf[f"relative_max_wait_d{d}"] for d in range(1, 10)]
    assert got == pytest.approx(expected, rel=1e-12)
    assert [lpf[c] for c in DECILE_COLUMNS] == [1.0] * 9  # same AvgWait as the baseline
    base = config(summary, "FCFS", "FCFS", "none").row(0, named=True)
    assert [base[f"relative_max_wait_d{d}"] for d in range(1, 10)] == [1.0] * 9


def test_worst_max_wait_ratio() -> None:
    weekly = frame(
        rows("FCFS", "FCFS", "none", [1.0, 1.0, 1.0], max_wait_s=[10.0, 30.0, 20.0]),
        rows("SPF", "FCFS", "none", [1.0, 1.0, 1.0], max_wait_s=[40.0, 5.0, 5.0]),
        rows("SPF", "FCFS", "5h", [1.0, 1.0, 1.0], max_wait_s=[1.0, 6.0, 3.0]),
        # Trace Z: nobody ever waits, 0/0 → 1.
        rows("FCFS", "FCFS", "none", [0.0, 0.0], trace="Z"),
        rows("SPF", "FCFS", "none", [0.0, 0.0], trace="Z"),
    )
    summary = summarize_configs(add_relative_columns(weekly, BASE), BASE)
    t = summary.filter(pl.col("trace") == "T")
    assert config(t, "SPF", "FCFS", "none").item(0, "relative_worst_max_wait") == 40.0 / 30.0
    assert config(t, "SPF", "FCFS", "5h").item(0, "relative_worst_max_wait") == 6.0 / 30.0
    spf = config(t, "SPF", "FCFS", "none").row(0, named=True)
    assert spf["mean_relative_max_wait"] == pytest.approx((4.0 + 5 / 30 + 5 / 20) / 3)
    z = summary.filter(pl.col("trace") == "Z")
    assert z.get_column("relative_worst_max_wait").to_list() == [1.0, 1.0]
    assert z.get_column("mean_relative_avg_wait").to_list() == [1.0, 1.0]
    # Sorted by trace, split, threshold_s, primary, backfill.
    order = list(zip(summary["trace"], summary["threshold"], summary["primary"], strict=True))
    assert order == [
        ("T", "5h", "SPF"),
        ("T", "none", "FCFS"),
        ("T", "none", "SPF"),
        ("Z", "none", "FCFS"),
        ("Z", "none", "SPF"),
    ]


# --------------------------------------------------------------------------------------------
# train_test_protocol
# --------------------------------------------------------------------------------------------


def choice_study() -> pl.DataFrame:
    """Threshold none: SPF/FCFS best in training (mean 5) though worst in test.
    Threshold 5h: three pairs tie at mean 3 in training."""
    return frame(
        rows("FCFS", "FCFS", "none", [10.0, 10.0, 10.0]),
        rows("SPF", "FCFS", "none", [4.0, 6.0, 5.0]),
        rows("LPF", "SPF", "none", [6.0, 6.0, 6.0]),
        rows("FCFS", "FCFS", "5h", [3.5, 3.5, 3.5]),
        rows("WFP", "AAA", "5h", [3.0, 3.0, 3.0]),
        rows("SPF", "LPF", "5h", [2.0, 4.0, 3.0]),
        rows("SPF", "FCFS", "5h", [3.0, 3.0, 3.0]),
        rows("FCFS", "FCFS", "none", [10.0, 10.0], split="test"),
        rows("SPF", "FCFS", "none", [20.0, 20.0], split="test"),
        rows("LPF", "SPF", "none", [1.0, 1.0], split="test"),
        rows("SPF", "FCFS", "5h", [8.0, 9.0], split="test"),
    )


def test_learned_pair_is_the_training_minimum_with_lexicographic_tie_break() -> None:
    protocol = train_test_protocol(add_relative_columns(choice_study(), BASE), BASE)
    assert protocol.columns == list(PROTOCOL_COLUMNS)
    picked = list(
        zip(protocol["threshold"], protocol["primary"], protocol["backfill"], strict=True)
    )
    # Sorted by threshold_s: 5h (18000 s) before none (inf).
    assert picked == [("5h", "SPF", "FCFS"), ("none", "SPF", "FCFS")]
    none = protocol.row(1, named=True)
    assert none["train_weeks"] == 3
    assert none["test_weeks"] == 2
    assert none["train_mean_relative_avg_wait"] == pytest.approx(0.5)
    assert none["test_mean_relative_avg_wait"] == 2.0
    assert none["test_ratio_of_means"] == 2.0
    assert none["test_mean_difference_s"] == 10.0
    assert none["baseline_test_mean_avg_wait_s"] == 10.0
    assert none["learned_test_mean_avg_wait_s"] == 20.0
    assert none["train_relative_worst_max_wait"] == pytest.approx(18.0 / 30.0)
    assert none["test_relative_worst_max_wait"] == 2.0
    assert none["test_mean_relative_max_wait"] == 2.0
    five = protocol.row(0, named=True)
    # Test weeks of the learned pair at 5h against the baseline FCFS/FCFS/none.
    assert five["learned_test_mean_avg_wait_s"] == 8.5
    assert five["test_mean_difference_s"] == -1.5


def test_learned_pair_tie_break_does_not_depend_on_row_order() -> None:
    relative = add_relative_columns(choice_study(), BASE)
    expected = train_test_protocol(relative, BASE)
    for seed in range(5):
        shuffled = relative.sample(fraction=1.0, shuffle=True, seed=seed)
        assert train_test_protocol(shuffled, BASE).equals(expected, null_equal=True)


def boot(
    trace: str,
    configs: dict[tuple[str, str, str], Sequence[float]],
    *,
    source_weeks: int = 20,
    max_wait: dict[tuple[str, str, str], Sequence[float]] | None = None,
) -> pl.DataFrame:
    """A bootstrap table: per configuration, the mean AvgWait of each replicate (MaxWait = 3·)."""
    from scheduler.studies.tuning.bootstrap import BOOTSTRAP_COLUMNS

    out = []
    for (primary, backfill, threshold), means in configs.items():
        maxes = (max_wait or {}).get((primary, backfill, threshold), [3.0 * m for m in means])
        out += [
            {"trace": trace, "split": "test", "replicate": b, "primary": primary,
             "backfill": backfill, "threshold": threshold, "threshold_s": THRESHOLD_S[threshold],
             "source_weeks": source_weeks, "weeks": 50, "mean_avg_wait_s": float(m),
             "mean_max_wait_s": float(x), "worst_max_wait_s": 2.0 * float(x)}
            for b, (m, x) in enumerate(zip(means, maxes, strict=True))
        ]  # fmt: skip
    return pl.DataFrame(out, schema=BOOTSTRAP_COLUMNS)


def two_pairs(base_test: Sequence[float], spf_test: Sequence[float], trace: str = "T") -> list:
    return [
        *rows("FCFS", "FCFS", "none", [10.0, 10.0], trace=trace),
        *rows("SPF", "FCFS", "none", [1.0, 1.0], trace=trace),
        *rows("FCFS", "FCFS", "none", base_test, trace=trace, split="test"),
        *rows("SPF", "FCFS", "none", spf_test, trace=trace, split="test"),
    ]


def test_selection_and_report_use_the_ratio_of_means() -> None:
    base_train = np.array([100.0, 120.0, 80.0])
    spf_train = np.array([60.0, 12.0, 160.0])  # ratio of means 0.773, mean of ratios 0.9
    lpf_train = np.array([80.0, 100.0, 70.0])  # ratio of means 0.833, mean of ratios 0.836
    weekly = frame(
        rows("FCFS", "FCFS", "none", base_train),
        rows("SPF", "FCFS", "none", spf_train),
        rows("LPF", "FCFS", "none", lpf_train),
        rows("FCFS", "FCFS", "none", [100.0, 200.0], split="test"),
        rows("SPF", "FCFS", "none", [60.0, 220.0], split="test"),
        rows("LPF", "FCFS", "none", [1.0, 1.0], split="test"),
    )
    assert np.mean(lpf_train / base_train) < np.mean(spf_train / base_train)
    row = train_test_protocol(add_relative_columns(weekly, BASE), BASE).row(0, named=True)
    # the ratio of means orders the pairs as the mean AvgWait does: SPF, not LPF
    assert (row["primary"], row["backfill"]) == ("SPF", "FCFS")
    assert row["train_ratio_of_means"] == pytest.approx(spf_train.mean() / base_train.mean())
    assert row["train_mean_relative_avg_wait"] == pytest.approx(np.mean(spf_train / base_train))
    assert row["test_ratio_of_means"] == pytest.approx(280.0 / 300.0)
    assert row["test_mean_relative_avg_wait"] == pytest.approx((0.6 + 1.1) / 2)


def test_bootstrap_intervals_follow_the_t_formula_on_the_bootstrap_se() -> None:
    base_test, spf_test = [100.0, 200.0, 150.0, 120.0], [60.0, 210.0, 90.0, 100.0]
    base_star = np.array([140.0, 150.0, 130.0, 160.0, 145.0, 135.0])
    spf_star = np.array([110.0, 118.0, 95.0, 125.0, 100.0, 104.0])
    spf_max = 2.5 * spf_star + np.array([1.0, -3.0, 2.0, 0.0, 5.0, -1.0])
    bootstrap = boot("T", {("FCFS", "FCFS", "none"): base_star,
                           ("SPF", "FCFS", "none"): spf_star},
                     source_weeks=12, max_wait={("SPF", "FCFS", "none"): spf_max})  # fmt: skip
    relative = add_relative_columns(frame(two_pairs(base_test, spf_test)), BASE)
    for confidence in (0.95, 0.8):
        row = train_test_protocol(relative, BASE, confidence=confidence, bootstrap=bootstrap).row(
            0, named=True
        )
        q = sps.t.ppf(0.5 + confidence / 2, 11)
        d = np.mean(spf_test) - np.mean(base_test)
        se = np.std(spf_star - base_star, ddof=1)
        assert row["test_mean_difference_s"] == pytest.approx(d)
        assert row["test_difference_ci_low_s"] == pytest.approx(d - q * se, rel=1e-12)
        assert row["test_difference_ci_high_s"] == pytest.approx(d + q * se, rel=1e-12)
        r = np.mean(spf_test) / np.mean(base_test)
        log_se = np.std(np.log(spf_star / base_star), ddof=1)
        assert row["test_ratio_ci_low"] == pytest.approx(r * np.exp(-q * log_se), rel=1e-12)
        assert row["test_ratio_ci_high"] == pytest.approx(r * np.exp(q * log_se), rel=1e-12)
        dmax = np.mean(3 * np.array(spf_test)) - np.mean(3 * np.array(base_test))
        se_max = np.std(spf_max - 3 * base_star, ddof=1)
        assert row["test_max_wait_difference_s"] == pytest.approx(dmax)
        assert row["test_max_wait_difference_ci_high_s"] == pytest.approx(dmax + q * se_max)
        assert row["p_value"] == pytest.approx(2 * sps.t.sf(abs(d) / se, 11), rel=1e-12)
        assert (row["source_weeks"], row["bootstrap_replicates"]) == (12, 6)


def test_weeks_are_paired_and_no_bootstrap_means_no_inference() -> None:
    learned = np.array([5.0, 7.0, 3.0, 9.0, 11.0])
    base = np.array([10.0, 8.0, 9.0, 12.0, 10.0])
    weekly = frame(
        rows("FCFS", "FCFS", "none", [10.0, 10.0]),
        rows("SPF", "FCFS", "none", [1.0, 1.0]),
        # The baseline has an extra test week 9 the learned pair lacks: it is not paired.
        rows("FCFS", "FCFS", "none", [*base, 1000.0], split="test", weeks=[0, 1, 2, 3, 4, 9]),
        rows("SPF", "FCFS", "none", learned[::-1], split="test", weeks=[4, 3, 2, 1, 0]),
    )
    row = train_test_protocol(add_relative_columns(weekly, BASE), BASE).row(0, named=True)
    assert row["test_weeks"] == 5
    assert row["baseline_test_mean_avg_wait_s"] == pytest.approx(np.mean(base))
    assert row["learned_test_mean_avg_wait_s"] == pytest.approx(np.mean(learned))
    assert row["test_mean_difference_s"] == pytest.approx(np.mean(learned - base))
    assert row["test_relative_worst_max_wait"] == pytest.approx(np.max(learned) / np.max(base))
    # t-tests over resampled weeks would treat dependent weeks as independent: none are made
    for name in ("test_ratio_ci_low", "test_difference_ci_high_s", "p_value", "p_holm"):
        assert math.isnan(row[name]), name
    assert row["bootstrap_replicates"] == 0 and row["source_weeks"] is None
    assert row["significant"] is False


def test_no_difference_gives_p_one_and_point_intervals() -> None:
    # Only the baseline pair exists: it is learned and compared with itself.
    weekly = frame(
        rows("FCFS", "FCFS", "none", [3.0, 4.0, 5.0]),
        rows("FCFS", "FCFS", "none", [6.0, 7.0], split="test"),
    )
    bootstrap = boot("T", {("FCFS", "FCFS", "none"): [6.0, 7.5, 5.0]})
    row = train_test_protocol(add_relative_columns(weekly, BASE), BASE, bootstrap=bootstrap).row(
        0, named=True
    )
    assert (row["primary"], row["backfill"]) == ("FCFS", "FCFS")
    assert row["test_mean_difference_s"] == 0.0
    assert (row["p_value"], row["p_holm"], row["significant"]) == (1.0, 1.0, False)
    assert (row["test_ratio_ci_low"], row["test_ratio_ci_high"]) == (1.0, 1.0)
    assert (row["test_difference_ci_low_s"], row["test_difference_ci_high_s"]) == (0.0, 0.0)
    assert row["test_relative_worst_max_wait"] == 1.0


def test_bootstrap_without_the_learned_pair_is_an_error() -> None:
    relative = add_relative_columns(frame(two_pairs([10.0, 20.0], [5.0, 8.0])), BASE)
    bootstrap = boot("T", {("FCFS", "FCFS", "none"): [6.0, 7.5, 5.0],
                           ("LPF", "FCFS", "none"): [6.0, 7.5, 5.0]})  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"trace 'T'.*learned pair SPF/FCFS"):
        train_test_protocol(relative, BASE, bootstrap=bootstrap)


def test_holm_adjusts_across_all_traces_and_thresholds() -> None:
    base_star = np.array([100.0, 110.0, 90.0, 105.0, 95.0, 100.0])
    spread = {"A": 1.0, "B": 30.0, "C": 6.0}  # same difference, different bootstrap spreads
    noise = np.array([1.0, -1.0, 0.5, -0.5, 0.2, -0.2])
    groups, tables = [], []
    for trace, scale in spread.items():
        groups += two_pairs([100.0, 100.0], [90.0, 90.0], trace=trace)
        spf_star = base_star - 10 + scale * noise
        tables.append(
            boot(trace, {("FCFS", "FCFS", "none"): base_star, ("SPF", "FCFS", "none"): spf_star})
        )
    protocol = train_test_protocol(
        add_relative_columns(frame(groups), BASE), BASE, bootstrap=pl.concat(tables)
    )
    assert protocol.get_column("trace").to_list() == ["A", "B", "C"]
    p = np.array([2 * sps.t.sf(10.0 / (s * np.std(noise, ddof=1)), 19) for s in spread.values()])
    assert protocol.get_column("p_value").to_list() == pytest.approx(p, rel=1e-10)
    adjusted = hand_holm(p)
    assert protocol.get_column("p_holm").to_list() == pytest.approx(adjusted, rel=1e-10)
    assert protocol.get_column("significant").to_list() == list(adjusted < 0.05)
    assert protocol.get_column("significant").to_list()[:2] == [True, False]


def test_trace_without_test_weeks_raises() -> None:
    weekly = frame(
        rows("FCFS", "FCFS", "none", [1.0, 2.0], trace="A"),
        rows("FCFS", "FCFS", "none", [1.0, 2.0], trace="A", split="test"),
        rows("FCFS", "FCFS", "none", [1.0, 2.0], trace="B"),
    )
    with pytest.raises(ConfigurationError, match=r"trace 'B': the 'test' split has no weeks"):
        train_test_protocol(add_relative_columns(weekly, BASE), BASE)


def test_bad_confidence_raises() -> None:
    relative = add_relative_columns(choice_study(), BASE)
    for confidence in (0.0, 1.0, 1.5):
        with pytest.raises(ConfigurationError, match="confidence"):
            train_test_protocol(relative, BASE, confidence=confidence)


# --------------------------------------------------------------------------------------------
# markdown_table
# --------------------------------------------------------------------------------------------


def test_markdown_table_exact() -> None:
    df = pl.DataFrame(
        {
            "name": ["a", "b|c", None],
            "n": [1, 22, 3],
            "x": [1.23456, math.inf, math.nan],
            "y": [None, 0.5, -math.inf],
            "ok": [True, False, None],
        }
    )
    assert markdown_table(df) == (
        "| name | n | x | y | ok |\n"
        "|---|---:|---:|---:|---|\n"
        "| a | 1 | 1.235 |  | True |\n"
        "| b\\|c | 22 | inf | 0.500 | False |\n"
        "|  | 3 |  | -inf |  |\n"
    )
    assert markdown_table(df.select("x").head(1), float_digits=1) == "| x |\n|---:|\n| 1.2 |\n"
    assert markdown_table(df.clear()) == "| name | n | x | y | ok |\n|---|---:|---:|---:|---|\n"
    with pytest.raises(ConfigurationError):
        markdown_table(df, float_digits=-1)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

PAIRS = [("FCFS", "FCFS"), ("SPF", "FCFS"), ("FCFS", "SPF"), ("LPF", "SPF")]


@st.composite
def studies(draw: st.DrawFn) -> pl.DataFrame:
    """A random study: the baseline plus 0-3 other pairs, thresholds none and maybe 20h,
    1-4 training and 1-3 test weeks, positive figures."""
    pairs = [PAIRS[0], *draw(st.lists(st.sampled_from(PAIRS[1:]), max_size=3, unique=True))]
    thresholds = ["none", *(["20h"] if draw(st.booleans()) else [])]
    weeks = {"train": draw(st.integers(1, 4)), "test": draw(st.integers(1, 3))}
    value = st.floats(1e-3, 1e6, allow_nan=False, allow_infinity=False)
    groups = []
    for split, n in weeks.items():
        for primary, backfill in pairs:
            for threshold in thresholds:
                figures = {
                    name: draw(st.lists(value, min_size=n, max_size=n))
                    for name in ("avg_wait_s", "max_wait_s", "avg_bsld", "max_bsld")
                }
                groups.append(rows(primary, backfill, threshold, split=split, **figures))
    return frame(*groups)


@settings(max_examples=40, deadline=None)
@given(studies())
def test_properties_of_random_studies(weekly: pl.DataFrame) -> None:
    relative = add_relative_columns(weekly, BASE)
    baseline_rows = config(relative, "FCFS", "FCFS", "none")
    for rel in RELATIVE_COLUMNS.values():
        assert baseline_rows.get_column(rel).to_list() == [1.0] * baseline_rows.height

    summary = summarize_configs(relative, BASE)
    base_summary = config(summary, "FCFS", "FCFS", "none")
    assert base_summary.height == 2
    assert base_summary.get_column("mean_relative_avg_wait").to_list() == [1.0, 1.0]
    assert base_summary.get_column("relative_worst_max_wait").to_list() == [1.0, 1.0]

    protocol = train_test_protocol(relative, BASE)
    train = summary.filter(pl.col("split") == "train")
    assert protocol.height == train.get_column("threshold").n_unique()
    for row in protocol.iter_rows(named=True):
        means = train.filter(pl.col("threshold") == row["threshold"])
        learned = config(means, row["primary"], row["backfill"], row["threshold"])
        learned_mean = learned.item(0, "mean_avg_wait_s")
        for other in means.get_column("mean_avg_wait_s").to_list():
            assert learned_mean <= other or math.isclose(learned_mean, other, rel_tol=1e-12)


@given(st.floats(min_value=1e-6, max_value=1e9, allow_nan=False), st.integers(1, 3))
@settings(max_examples=60, deadline=None)
def test_baseline_ratio_is_exactly_one_for_any_value_and_week_count(value: float, n: int) -> None:
    # polars may divide by a one-row broadcast as a product with its reciprocal
    # (0.9999999999999999 for some values); the baseline's own ratio must be 1.0 exactly
    weekly = frame(
        rows("FCFS", "FCFS", "none", [value] * n), rows("SPF", "FCFS", "none", [value / 3] * n)
    )
    base = add_relative_columns(weekly, BASE).filter(pl.col("primary") == "FCFS")
    for column in RELATIVE_COLUMNS.values():
        assert base[column].to_list() == [1.0] * n


def test_a_learned_pair_that_never_waits_has_training_ratios_of_zero() -> None:
    weekly = frame(
        rows("FCFS", "FCFS", "none", [10.0, 20.0]),
        rows("SPF", "FCFS", "none", [0.0, 0.0]),
        rows("FCFS", "FCFS", "none", [10.0, 10.0], split="test"),
        rows("SPF", "FCFS", "none", [5.0, 5.0], split="test"),
    )
    row = train_test_protocol(add_relative_columns(weekly, BASE), BASE).row(0, named=True)
    assert (row["primary"], row["backfill"]) == ("SPF", "FCFS")
    assert row["train_ratio_of_means"] == 0.0
    assert row["train_mean_relative_avg_wait"] == 0.0  # a mean of 0, not "no value"
    assert row["train_mean_relative_max_wait"] == 0.0
