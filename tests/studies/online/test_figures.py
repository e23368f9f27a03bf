"""Figures of the online policy-selection study: data, labels, errors and one saved PNG."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.figures import save_figure
from scheduler.studies.online.curves import choice_shares, improvement_curves
from scheduler.studies.online.figures import (
    POLICY_COLOURS,
    choice_share_plot,
    fixed_improvement_plot,
    selector_improvement_plot,
)
from scheduler.studies.online.runs import CHOICE_COLUMNS, CURVE_COLUMNS, ONLINE_POLICIES

TRACE = "KTH-SP2"
DAYS = 30
REPLICAS = 3
REFERENCE = "fixed:FCFS"
THRESHOLD_S = 40 * 3600.0
REF = {"reference": REFERENCE, "threshold_s": THRESHOLD_S}  # the figures' reference keywords
FIXED = {"FCFS": 1.0, "SPF": 0.6, "LQF": 1.2}  # scale of the daily waits
SELECTORS = {
    "random": 1.05,
    "full": 0.7,
    "noisy": 0.75,
    "bandit(eps=0.1)": 0.8,
    "bandit(eps=0.3)": 0.72,
    "ucb": 0.9,
    "swucb": 0.85,
}


def _flat(text: str | None) -> str:
    """Label text with line breaks as spaces (titles are wrapped)."""
    return " ".join((text or "").split())


def curve_rows() -> pl.DataFrame:
    """Curves table (cumulative waits, s) of the fixed policies and selectors of this module."""
    rng = np.random.default_rng(5)
    rows = []
    for replica in range(REPLICAS):
        base = rng.uniform(1000.0, 9000.0, size=DAYS)
        strategies = [(f"fixed:{p}", "none", s) for p, s in FIXED.items()]
        strategies += [
            (name, period, s) for name, s in SELECTORS.items() for period in ("1d", "1w")
        ]
        for strategy, period, scale in strategies:
            days = DAYS - int(rng.integers(0, 4))
            cumulative = np.cumsum(base[:days] * scale * rng.uniform(0.8, 1.2, size=days))
            rows += [
                (TRACE, replica, strategy, period, day, float(c), day * 5)
                for day, c in enumerate(cumulative)
            ]
    return pl.DataFrame(rows, schema=list(CURVE_COLUMNS), orient="row")


@pytest.fixture(scope="module")
def curves_table() -> pl.DataFrame:
    return improvement_curves(curve_rows(), reference=REFERENCE)


@pytest.fixture(scope="module")
def shares() -> pl.DataFrame:
    rng = np.random.default_rng(9)
    rows = []
    for replica in range(REPLICAS):
        for strategy in ("noisy", "bandit(eps=0.3)"):
            for index in range(8 * 7):
                policy = str(rng.choice(ONLINE_POLICIES[: 4 + index // 14]))
                rows.append((TRACE, replica, strategy, "1d", index, policy))
    return choice_shares(pl.DataFrame(rows, schema=list(CHOICE_COLUMNS), orient="row"))


def test_fixed_improvement_plot(curves_table: pl.DataFrame):
    plot = fixed_improvement_plot(curves_table, TRACE, **REF)
    data = plot.data
    assert len(data) == len(FIXED) * DAYS
    assert [str(x) for x in data["label"].cat.categories] == ["FCFS", "SPF", "LQF"]
    spf = curves_table.filter(pl.col("strategy") == "fixed:SPF").sort("day")
    shown = data[data["label"] == "SPF"].sort_values("day")
    np.testing.assert_allclose(shown["improvement_pct"], 100.0 * spf["improvement"].to_numpy())
    np.testing.assert_allclose(shown["q90_pct"], 100.0 * spf["q90"].to_numpy())
    assert (data[data["label"] == "FCFS"]["improvement_pct"] == 0.0).all()
    assert _flat(plot.labels.y) == ("cumulative waiting-time improvement vs EASY(FCFS, 40 h) (%)")
    assert "(days)" in _flat(plot.labels.x)
    assert TRACE in _flat(plot.labels.title) and "fixed policies" in _flat(plot.labels.title)
    assert "sum over 3 replicas (ends at the table)" in _flat(plot.labels.subtitle)
    dashed = [layer for layer in plot.layers if layer.geom.aes_params.get("linetype") == "dashed"]
    assert len(dashed) == 2  # q10 and q90


def test_selector_improvement_plot(curves_table: pl.DataFrame):
    plot = selector_improvement_plot(
        curves_table, TRACE, period="1d", bandit="bandit(eps=0.3)", best_fixed="fixed:SPF", **REF
    )
    data = plot.data
    expected = [
        "best fixed: SPF",
        "random",
        "full",
        "noisy",
        "bandit (LOTO ε = 0.3)",
        "ucb (addition)",  # #16 (14): schedlab's additions are labelled
        "swucb (addition)",
    ]
    assert [str(x) for x in data["label"].cat.categories] == expected
    assert "(addition): not in the published study" in _flat(plot.labels.subtitle)
    ucb = curves_table.filter((pl.col("strategy") == "ucb") & (pl.col("period") == "1d"))
    np.testing.assert_allclose(
        data[data["label"] == "ucb (addition)"].sort_values("day")["improvement_pct"],
        100.0 * ucb.sort("day")["improvement"].to_numpy(),
    )
    assert len(data) == len(expected) * DAYS
    full = curves_table.filter((pl.col("strategy") == "full") & (pl.col("period") == "1d"))
    shown = data[data["label"] == "full"].sort_values("day")
    np.testing.assert_allclose(shown["q10_pct"], 100.0 * full.sort("day")["q10"].to_numpy())
    assert "1d periods" in _flat(plot.labels.title) and TRACE in _flat(plot.labels.title)
    assert "EASY(FCFS, 40 h) (%)" in _flat(plot.labels.y)
    # Without best_fixed: the fixed policy with the highest final mean improvement (SPF here).
    weekly = selector_improvement_plot(curves_table, TRACE, period="1w", **REF)
    assert "best fixed: SPF" in set(weekly.data["label"].astype(str))
    assert "bandit (LOTO ε = 0.3)" not in set(weekly.data["label"].astype(str))
    assert {"ucb (addition)", "swucb (addition)"} <= set(weekly.data["label"].astype(str))
    assert not {"ucb", "swucb"} & set(weekly.data["label"].astype(str))
    # #16 (10): a single trace runs the configured ε, and the label says so
    configured = selector_improvement_plot(
        curves_table, TRACE, period="1d", bandit="bandit(eps=0.1)", configured_epsilon=True, **REF
    )
    assert "bandit (configured ε = 0.1)" in set(configured.data["label"].astype(str))


def test_selector_improvement_plot_errors_name_the_selection(curves_table: pl.DataFrame):
    with pytest.raises(ConfigurationError, match=r"KTH-SP2.*bandit\(eps=0.7\)"):
        selector_improvement_plot(curves_table, TRACE, bandit="bandit(eps=0.7)", **REF)
    with pytest.raises(ConfigurationError, match="'nowhere'"):
        selector_improvement_plot(curves_table, "nowhere", **REF)
    with pytest.raises(ConfigurationError, match=r"KTH-SP2.*1m"):
        selector_improvement_plot(curves_table, TRACE, period="1m", **REF)
    with pytest.raises(ConfigurationError, match="'nowhere'"):
        fixed_improvement_plot(curves_table, "nowhere", **REF)


def test_choice_share_plot(shares: pl.DataFrame):
    plot = choice_share_plot(shares, TRACE, strategies=("noisy",), bandit="bandit(eps=0.3)")
    data = plot.data
    panels = [str(x) for x in data["panel"].cat.categories]
    assert panels == ["noisy", "bandit(eps=0.3) (LOTO ε)"]
    bins = sorted(set(shares["day"]))
    assert bins == list(range(0, 56, 7))
    assert len(data) == 2 * len(bins) * 7  # 7 policies ever chosen, zeros filled in
    sums = data.groupby(["panel", "day"], observed=True)["share_pct"].sum()
    np.testing.assert_allclose(sums.to_numpy(), 100.0)
    assert [str(x) for x in data["policy"].cat.categories] == list(ONLINE_POLICIES[:7])
    assert _flat(plot.labels.y) == "share of the policy periods (%)"
    assert "(days)" in _flat(plot.labels.x) and TRACE in _flat(plot.labels.title)
    assert len(set(POLICY_COLOURS.values())) == len(ONLINE_POLICIES)
    with pytest.raises(ConfigurationError, match=r"KTH-SP2.*'ucb'"):
        choice_share_plot(shares, TRACE, strategies=("noisy", "ucb"))
    with pytest.raises(ConfigurationError, match="1w"):
        choice_share_plot(shares, TRACE, period="1w")
    configured = choice_share_plot(shares, TRACE, bandit="bandit(eps=0.3)", configured_epsilon=True)
    panels = [str(x) for x in configured.data["panel"].cat.categories]
    assert panels == ["noisy", "bandit(eps=0.3) (configured ε)"]


def test_save_selector_and_share_plots(curves_table: pl.DataFrame, shares: pl.DataFrame, tmp_path):
    plot = selector_improvement_plot(curves_table, TRACE, bandit="bandit(eps=0.3)", **REF)
    save_figure(plot, tmp_path / "selectors.png", tmp_path / "selectors.pdf")
    png = tmp_path / "selectors.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000
    share = choice_share_plot(shares, TRACE, bandit="bandit(eps=0.3)")
    save_figure(share, tmp_path / "shares.png", tmp_path / "shares.pdf", height_in=6.0)
    assert (tmp_path / "shares.png").stat().st_size > 10_000


def test_the_figures_name_the_configured_reference():
    """With online.reference SPF the improvements are against EASY(SPF, 40 h): SPF's own curve
    is 0, FCFS's is not, and every label that names the reference says SPF."""
    table = improvement_curves(curve_rows(), reference="fixed:SPF")
    spf_ref = {"reference": "fixed:SPF", "threshold_s": THRESHOLD_S}
    fixed = fixed_improvement_plot(table, TRACE, **spf_ref)
    data = fixed.data
    spf = data[data["label"] == "SPF"]
    assert (spf[["improvement_pct", "q10_pct", "q90_pct"]] == 0.0).all().all()
    assert not (data[data["label"] == "FCFS"]["improvement_pct"] == 0.0).all()
    assert _flat(fixed.labels.y) == ("cumulative waiting-time improvement vs EASY(SPF, 40 h) (%)")
    assert "vs EASY(SPF, 40 h)" in _flat(fixed.labels.subtitle)
    assert "EASY(P, 40 h) with P fixed" in _flat(fixed.labels.subtitle)
    selectors = selector_improvement_plot(table, TRACE, period="1d", **spf_ref)
    assert "EASY(SPF, 40 h) (%)" in _flat(selectors.labels.y)
    texts = [_flat(getattr(plot.labels, key)) for plot in (fixed, selectors)
             for key in ("x", "y", "title", "subtitle")]  # fmt: skip
    assert not any("FCFS, 40 h" in text for text in texts)
    other = fixed_improvement_plot(table, TRACE, reference="fixed:SPF", threshold_s=3600.0)
    assert "vs EASY(SPF, 1 h)" in _flat(other.labels.y)
