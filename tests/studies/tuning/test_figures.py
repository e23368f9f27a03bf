"""Figures of the queue-tuning study: content of each plot, then the saved PNG/PDF files."""

from __future__ import annotations

import json
import math
import struct
import threading
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import polars as pl
import pytest
from plotnine import aes, geom_point, ggplot
from support.png import png_chunks, png_texts

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.figures import save_figure
from scheduler.studies.tuning.figures import (
    backfill_facet_plot,
    baseline_caption,
    pair_scatter_plot,
    protocol_threshold_plot,
    threshold_comparison_plot,
    train_test_pairs_plot,
    weekly_avg_wait_plot,
)
from scheduler.studies.tuning.schema import Baseline

#: The seven queue orders of the study, in the policy registry's order (the legends' order).
QUEUE_POLICIES = ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP")
TRACES = ("KTH-SP2", "SDSC-SP2")
SPLITS = ("train", "test")
BACKFILLS = ("FCFS", "SPF", "LQF")
THRESHOLDS = {"none": math.inf, "20h": 20 * 3600.0}
WEEKS = 10
PROVENANCE = {"input": "results/summary.parquet", "sha256": "0123abcd", "commit": "deadbeef"}


# --------------------------------------------------------------------------------------------
# Synthetic study tables
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def weekly() -> pl.DataFrame:
    """Weekly table: 2 traces x 2 splits x 10 weeks x 7 primary x 3 backfill x 2 thresholds."""
    rng = np.random.default_rng(20240601)
    rows = []
    for trace_index, trace in enumerate(TRACES):
        for split in SPLITS:
            for week in range(WEEKS):
                jobs = int(rng.integers(200, 900))
                base_avg = float(rng.gamma(2.0, 3000.0 * (trace_index + 1)))
                base_max = base_avg * float(rng.uniform(8.0, 20.0))
                base_bsld = float(rng.uniform(2.0, 30.0))
                for primary in QUEUE_POLICIES:
                    for backfill in BACKFILLS:
                        for threshold, threshold_s in THRESHOLDS.items():
                            is_base = (primary, backfill, threshold) == ("FCFS", "FCFS", "none")
                            factor = 1.0 if is_base else float(rng.lognormal(0.0, 0.35))
                            max_factor = 1.0 if is_base else float(rng.lognormal(0.1, 0.4))
                            bsld_factor = 1.0 if is_base else float(rng.lognormal(0.0, 0.3))
                            rows.append(
                                {
                                    "trace": trace,
                                    "split": split,
                                    "week_index": week,
                                    "primary": primary,
                                    "backfill": backfill,
                                    "threshold": threshold,
                                    "threshold_s": threshold_s,
                                    "jobs": jobs,
                                    "avg_wait_s": base_avg * factor,
                                    "max_wait_s": base_max * max_factor,
                                    "avg_bsld": base_bsld * bsld_factor,
                                    "max_bsld": base_bsld * 40.0 * bsld_factor,
                                    "utilisation": float(rng.uniform(0.5, 0.9)),
                                }
                            )
    table = pl.DataFrame(rows)
    keys = ["trace", "split", "week_index"]
    base = table.filter(
        (pl.col("primary") == "FCFS")
        & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    ).select(
        *keys,
        pl.col("avg_wait_s").alias("b_avg_wait"),
        pl.col("max_wait_s").alias("b_max_wait"),
        pl.col("avg_bsld").alias("b_avg_bsld"),
        pl.col("max_bsld").alias("b_max_bsld"),
    )
    return (
        table.join(base, on=keys)
        .with_columns(
            relative_avg_wait=pl.col("avg_wait_s") / pl.col("b_avg_wait"),
            relative_max_wait=pl.col("max_wait_s") / pl.col("b_max_wait"),
            relative_avg_bsld=pl.col("avg_bsld") / pl.col("b_avg_bsld"),
            relative_max_bsld=pl.col("max_bsld") / pl.col("b_max_bsld"),
        )
        .drop("b_avg_wait", "b_max_wait", "b_avg_bsld", "b_max_bsld")
    )


@pytest.fixture(scope="module")
def summary(weekly: pl.DataFrame) -> pl.DataFrame:
    """Summary table aggregated from the weekly table as the study does."""
    keys = ["trace", "split", "primary", "backfill", "threshold", "threshold_s"]
    base_worst = (
        weekly.filter(
            (pl.col("primary") == "FCFS")
            & (pl.col("backfill") == "FCFS")
            & (pl.col("threshold") == "none")
        )
        .group_by("trace", "split")
        .agg(pl.col("max_wait_s").max().alias("base_worst"))
    )
    deciles = [
        pl.col(f"relative_{metric}").quantile(d / 10, "linear").alias(f"relative_{metric}_d{d}")
        for metric in ("avg_wait", "max_wait")
        for d in range(1, 10)
    ]
    return (
        weekly.group_by(keys)
        .agg(
            pl.len().alias("weeks"),
            pl.col("avg_wait_s").mean().alias("mean_avg_wait_s"),
            pl.col("relative_avg_wait").mean().alias("mean_relative_avg_wait"),
            *deciles,
            pl.col("max_wait_s").mean().alias("mean_max_wait_s"),
            pl.col("max_wait_s").max().alias("worst_max_wait_s"),
            pl.col("relative_max_wait").mean().alias("mean_relative_max_wait"),
            pl.col("avg_bsld").mean().alias("mean_avg_bsld"),
            pl.col("relative_avg_bsld").mean().alias("mean_relative_avg_bsld"),
            pl.col("utilisation").mean().alias("mean_utilisation"),
            pl.col("jobs").mean().alias("mean_jobs"),
        )
        .join(base_worst, on=["trace", "split"])
        .with_columns(relative_worst_max_wait=pl.col("worst_max_wait_s") / pl.col("base_worst"))
        .drop("base_worst")
        .sort(keys)
    )


@pytest.fixture(scope="module")
def protocol(summary: pl.DataFrame) -> pl.DataFrame:
    """Protocol table: per trace and threshold, the best training pair and its test score."""
    rows = []
    for trace in TRACES:
        for threshold, threshold_s in THRESHOLDS.items():
            at = summary.filter((pl.col("trace") == trace) & (pl.col("threshold") == threshold))
            best = (
                at.filter(pl.col("split") == "train")
                .sort("mean_relative_avg_wait")
                .row(0, named=True)
            )
            pair = (pl.col("primary") == best["primary"]) & (pl.col("backfill") == best["backfill"])
            test = at.filter(pair & (pl.col("split") == "test")).row(0, named=True)
            row = {
                "trace": trace,
                "threshold": threshold,
                "threshold_s": threshold_s,
                "primary": best["primary"],
                "backfill": best["backfill"],
            }
            for split, source in (("train", best), ("test", test)):
                mean = source["mean_relative_avg_wait"]
                row[f"{split}_ratio_of_means"] = mean
                row[f"{split}_relative_worst_max_wait"] = source["relative_worst_max_wait"]
                row[f"{split}_mean_relative_max_wait"] = source["mean_relative_max_wait"]
            row["test_ratio_ci_low"] = row["test_ratio_of_means"] * 0.9
            row["test_ratio_ci_high"] = row["test_ratio_of_means"] * 1.1
            row["p_holm"] = 0.01
            row["significant"] = True
            rows.append(row)
    columns = [
        "trace", "threshold", "threshold_s", "primary", "backfill",
        "train_ratio_of_means", "test_ratio_of_means", "test_ratio_ci_low",
        "test_ratio_ci_high", "train_relative_worst_max_wait", "test_relative_worst_max_wait",
        "train_mean_relative_max_wait", "test_mean_relative_max_wait", "p_holm", "significant",
    ]  # fmt: skip
    return pl.DataFrame(rows).select(columns)


def test_fixture_baseline_is_exactly_one(weekly: pl.DataFrame, summary: pl.DataFrame) -> None:
    base = weekly.filter(
        (pl.col("primary") == "FCFS")
        & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )
    assert base.height == len(TRACES) * len(SPLITS) * WEEKS
    assert base.get_column("relative_avg_wait").to_list() == [1.0] * base.height
    assert summary.height == len(TRACES) * len(SPLITS) * 7 * len(BACKFILLS) * len(THRESHOLDS)


# --------------------------------------------------------------------------------------------
# Plot content
# --------------------------------------------------------------------------------------------


def _flat(text: str | None) -> str:
    """A plot label with its line breaks (from wrapping) turned back into single spaces."""
    assert text is not None
    return " ".join(text.split())


def _hours_column_equals(frame_values: np.ndarray, expected_seconds: np.ndarray) -> bool:
    return bool(np.allclose(frame_values, expected_seconds / 3600.0))


def test_weekly_avg_wait_plot_hours(weekly: pl.DataFrame) -> None:
    plot = weekly_avg_wait_plot(weekly, "KTH-SP2", split="test", backfill="SPF", weeks=6)
    data = plot.data
    assert len(data) == 7 * 6
    assert set(data["primary"].astype(str)) == set(QUEUE_POLICIES)
    assert list(data["primary"].cat.categories) == list(QUEUE_POLICIES)
    assert data["week_index"].max() == 5
    expected = (
        weekly.filter(
            (pl.col("trace") == "KTH-SP2")
            & (pl.col("split") == "test")
            & (pl.col("backfill") == "SPF")
            & (pl.col("threshold") == "none")
            & (pl.col("week_index") < 6)
        )
        .sort("primary", "week_index")
        .get_column("avg_wait_s")
        .to_numpy()
    )
    assert _hours_column_equals(data["avg_wait_h"].to_numpy(), expected)
    assert plot.mapping["y"] == "avg_wait_h"
    assert "(h)" in _flat(plot.labels.y)
    assert "KTH-SP2" in _flat(plot.labels.title)
    assert "SPF" in _flat(plot.labels.subtitle) and "test" in _flat(plot.labels.subtitle)


def test_weekly_avg_wait_plot_relative(weekly: pl.DataFrame) -> None:
    plot = weekly_avg_wait_plot(weekly, "SDSC-SP2", threshold="20h", relative=True)
    assert len(plot.data) == 7 * WEEKS  # fewer weeks than the limit of 150
    assert plot.mapping["y"] == "relative_avg_wait"
    assert "relative to EASY-FCFS-FCFS" in _flat(plot.labels.y)
    assert any(type(layer.geom).__name__ == "geom_hline" for layer in plot.layers)
    assert "SDSC-SP2" in _flat(plot.labels.title) and "20 h" in _flat(plot.labels.subtitle)


def test_weekly_avg_wait_plot_errors(weekly: pl.DataFrame) -> None:
    with pytest.raises(ConfigurationError, match="NO-SUCH-TRACE"):
        weekly_avg_wait_plot(weekly, "NO-SUCH-TRACE")
    with pytest.raises(ConfigurationError, match="'80h'"):
        weekly_avg_wait_plot(weekly, "KTH-SP2", threshold="80h")
    with pytest.raises(ConfigurationError, match="weeks"):
        weekly_avg_wait_plot(weekly, "KTH-SP2", weeks=0)


def _layers(plot: ggplot, geom: str) -> list:
    return [layer for layer in plot.layers if type(layer.geom).__name__ == geom]


def _marked_points(plot: ggplot) -> list[tuple[float, float]]:
    """(x, y) of the annotated points (the circled baseline)."""
    return [
        (float(layer.geom.data["x"].iloc[0]), float(layer.geom.data["y"].iloc[0]))
        for layer in _layers(plot, "geom_point")
        if layer.geom.data is not None and "x" in layer.geom.data
    ]


@pytest.mark.parametrize("max_wait", ["worst", "mean"])
def test_pair_scatter_plot(weekly: pl.DataFrame, summary: pl.DataFrame, max_wait: str) -> None:
    plot = pair_scatter_plot(summary, "KTH-SP2", threshold="20h", max_wait=max_wait)
    data = plot.data
    assert len(data) == 7 * len(BACKFILLS)
    assert set(zip(data["primary"].astype(str), data["backfill"].astype(str), strict=True)) == {
        (p, b) for p in QUEUE_POLICIES for b in BACKFILLS
    }
    rows = summary.filter(
        (pl.col("trace") == "KTH-SP2") & (pl.col("split") == "train")
        & (pl.col("threshold") == "20h")
    ).sort("primary", "backfill")  # fmt: skip
    # both axes are relative to the baseline: y is a ratio of MaxWaits, not hours
    y = "relative_worst_max_wait" if max_wait == "worst" else "mean_relative_max_wait"
    assert plot.mapping["x"] == "mean_relative_avg_wait" and plot.mapping["y"] == y
    assert np.allclose(data[y].to_numpy(), rows[y].to_numpy())
    assert np.allclose(data["mean_relative_avg_wait"], rows["mean_relative_avg_wait"].to_numpy())
    assert "(h)" not in _flat(plot.labels.y)
    assert "relative to EASY-FCFS-FCFS" in _flat(plot.labels.y)
    assert "relative to EASY-FCFS-FCFS" in _flat(plot.labels.x)
    assert max_wait in _flat(plot.labels.y)
    assert "KTH-SP2" in _flat(plot.labels.title) and "20 h" in _flat(plot.labels.subtitle)
    # dashed lines at 1 on both axes
    assert [layer.geom.data["xintercept"].tolist() for layer in _layers(plot, "geom_vline")] == [
        [1.0]
    ]
    assert [layer.geom.data["yintercept"].tolist() for layer in _layers(plot, "geom_hline")] == [
        [1.0]
    ]
    # x deciles always; y deciles (of the weekly relative MaxWait) with the mean MaxWait only
    (bars_x,) = _layers(plot, "geom_errorbarh")
    assert bars_x.mapping["xmin"] == "relative_avg_wait_d1"
    assert bars_x.mapping["xmax"] == "relative_avg_wait_d9"
    bars_y = _layers(plot, "geom_errorbar")
    if max_wait == "mean":
        assert [(b.mapping["ymin"], b.mapping["ymax"]) for b in bars_y] == [
            ("relative_max_wait_d1", "relative_max_wait_d9")
        ]
        sqf = data[(data["primary"] == "SQF") & (data["backfill"] == "LQF")]
        rows = _weekly_rows(weekly, "KTH-SP2", "train", "SQF", "LQF", "20h")
        weeks = rows["relative_max_wait"].to_numpy()
        assert sqf["relative_max_wait_d1"].iloc[0] == pytest.approx(np.quantile(weeks, 0.1))
        assert sqf["relative_max_wait_d9"].iloc[0] == pytest.approx(np.quantile(weeks, 0.9))
        assert (data["relative_max_wait_d1"] <= data["relative_max_wait_d9"]).all()
    else:
        assert bars_y == []
    # The baseline marker sits at (1, 1): the baseline relative to itself.
    assert any(math.isclose(x, 1.0) and math.isclose(y, 1.0) for x, y in _marked_points(plot))


def _weekly_rows(weekly, trace, split, primary, backfill, threshold) -> pl.DataFrame:
    return weekly.filter(
        (pl.col("trace") == trace) & (pl.col("split") == split)
        & (pl.col("primary") == primary) & (pl.col("backfill") == backfill)
        & (pl.col("threshold") == threshold)
    )  # fmt: skip


def test_pair_scatter_plot_errors(summary: pl.DataFrame) -> None:
    with pytest.raises(ConfigurationError, match="NOPE"):
        pair_scatter_plot(summary, "NOPE")
    with pytest.raises(ConfigurationError, match="max_wait"):
        pair_scatter_plot(summary, "KTH-SP2", max_wait="median")
    with pytest.raises(ConfigurationError, match="split"):
        pair_scatter_plot(summary, "KTH-SP2", split="validation")


def test_descriptive_figures_accept_the_whole_log_weeks(
    weekly: pl.DataFrame, summary: pl.DataFrame
) -> None:
    """The descriptive figures draw the split they are given, "whole" included, and say so."""
    as_whole = {
        "weekly": weekly.filter(pl.col("split") == "test").with_columns(split=pl.lit("whole")),
        "summary": summary.filter(pl.col("split") == "test").with_columns(split=pl.lit("whole")),
    }
    plots = [
        weekly_avg_wait_plot(as_whole["weekly"], "KTH-SP2", split="whole"),
        pair_scatter_plot(as_whole["summary"], "KTH-SP2", split="whole"),
        backfill_facet_plot(as_whole["summary"], "KTH-SP2", split="whole"),
        threshold_comparison_plot(as_whole["summary"], "KTH-SP2", split="whole"),
    ]
    for plot in plots:
        assert "whole-log weeks" in _flat(plot.labels.subtitle)
    # the same rows under another split name: the same points
    test_values = pair_scatter_plot(summary, "KTH-SP2", split="test").data
    assert np.allclose(
        test_values["relative_worst_max_wait"], plots[1].data["relative_worst_max_wait"]
    )
    with pytest.raises(ConfigurationError, match=r"KTH-SP2.*'train'"):
        pair_scatter_plot(as_whole["summary"], "KTH-SP2", split="train")


def test_backfill_facet_plot(summary: pl.DataFrame) -> None:
    plot = backfill_facet_plot(summary, "SDSC-SP2", split="test")
    data = plot.data
    assert len(data) == 7 * len(BACKFILLS)
    assert list(data["backfill"].cat.categories) == list(BACKFILLS)
    assert type(plot.facet).__name__ == "facet_wrap"
    base = data[(data["primary"] == "FCFS") & (data["backfill"] == "FCFS")]
    assert base["mean_relative_avg_wait"].tolist() == [1.0]
    assert base["relative_avg_wait_d1"].tolist() == [1.0]
    assert "relative to EASY-FCFS-FCFS" in _flat(plot.labels.y)
    assert "SDSC-SP2" in _flat(plot.labels.title) and "test" in _flat(plot.labels.subtitle)
    with pytest.raises(ConfigurationError, match=r"SDSC-SP2.*'40h'"):
        backfill_facet_plot(summary, "SDSC-SP2", threshold="40h")


@pytest.mark.parametrize("max_wait", ["worst", "mean"])
def test_threshold_comparison_plot(summary: pl.DataFrame, max_wait: str) -> None:
    plot = threshold_comparison_plot(
        summary, "KTH-SP2", backfill="SPF", threshold="20h", max_wait=max_wait
    )
    data = plot.data
    assert len(data) == 2 * 7
    assert list(data["setting"].cat.categories) == ["Θ = none", "Θ = 20\u00a0h"]
    counts = data.groupby("setting", observed=True).size().to_dict()
    assert counts == {"Θ = none": 7, "Θ = 20\u00a0h": 7}
    # AvgWait (relative, with deciles) on x, MaxWait in hours (absolute) on y
    assert plot.mapping["x"] == "mean_relative_avg_wait" and plot.mapping["y"] == "max_wait_h"
    source = f"{max_wait}_max_wait_s"
    for label, setting in (("20h", "Θ = 20\u00a0h"), ("none", "Θ = none")):
        expected = _summary_row(summary, "KTH-SP2", "train", "LQF", "SPF", label)
        got = data[(data["setting"] == setting) & (data["primary"] == "LQF")]
        assert math.isclose(
            got["mean_relative_avg_wait"].iloc[0], expected["mean_relative_avg_wait"]
        )
        assert math.isclose(got["max_wait_h"].iloc[0], expected[source] / 3600.0)
    assert "(h)" in _flat(plot.labels.y) and "relative to EASY-FCFS-FCFS" in _flat(plot.labels.x)
    # Θ is a horizontal line at 20 hours; the dashed line at relative AvgWait 1 is vertical
    (line,) = _layers(plot, "geom_hline")
    assert line.geom.data["yintercept"].tolist() == [20.0]
    assert [layer.geom.data["xintercept"].tolist() for layer in _layers(plot, "geom_vline")] == [
        [1.0]
    ]
    (bars,) = _layers(plot, "geom_errorbarh")
    assert (bars.mapping["xmin"], bars.mapping["xmax"]) == (
        "relative_avg_wait_d1", "relative_avg_wait_d9",
    )  # fmt: skip
    # one arrow per primary policy, from its point without threshold to its point with Θ
    (arrows,) = _layers(plot, "geom_segment")
    ends = arrows.geom.data.set_index(arrows.geom.data["primary"].astype(str))
    assert sorted(ends.index) == sorted(QUEUE_POLICIES)
    none_row = data[(data["setting"] == "Θ = none") & (data["primary"] == "SPF")].iloc[0]
    theta_row = data[(data["setting"] == "Θ = 20\u00a0h") & (data["primary"] == "SPF")].iloc[0]
    assert (ends.loc["SPF", "x"], ends.loc["SPF", "y"]) == pytest.approx(
        (none_row["mean_relative_avg_wait"], none_row["max_wait_h"])
    )
    assert (ends.loc["SPF", "xend"], ends.loc["SPF", "yend"]) == pytest.approx(
        (theta_row["mean_relative_avg_wait"], theta_row["max_wait_h"])
    )
    assert "KTH-SP2" in _flat(plot.labels.title) and "20 h" in _flat(plot.labels.title)
    assert "SPF" in _flat(plot.labels.title)


def test_threshold_comparison_plot_line_follows_the_threshold(summary: pl.DataFrame) -> None:
    relabelled = summary.with_columns(
        threshold=pl.when(pl.col("threshold") == "20h").then(pl.lit("5h"))
        .otherwise(pl.col("threshold")),
        threshold_s=pl.when(pl.col("threshold") == "20h").then(pl.lit(5 * 3600.0))
        .otherwise(pl.col("threshold_s")),
    )  # fmt: skip
    plot = threshold_comparison_plot(relabelled, "KTH-SP2", threshold="5h")
    (line,) = _layers(plot, "geom_hline")
    assert line.geom.data["yintercept"].tolist() == [5.0]


def test_threshold_comparison_plot_errors(summary: pl.DataFrame) -> None:
    with pytest.raises(ConfigurationError, match=r"KTH-SP2.*'5h'"):
        threshold_comparison_plot(summary, "KTH-SP2", threshold="5h")
    with pytest.raises(ConfigurationError, match="differ"):
        threshold_comparison_plot(summary, "KTH-SP2", threshold="none")
    with pytest.raises(ConfigurationError, match="max_wait"):
        threshold_comparison_plot(summary, "KTH-SP2", max_wait="median")


def _summary_row(summary, trace, split, primary, backfill, threshold) -> dict:
    return summary.filter(
        (pl.col("trace") == trace) & (pl.col("split") == split)
        & (pl.col("primary") == primary) & (pl.col("backfill") == backfill)
        & (pl.col("threshold") == threshold)
    ).row(0, named=True)  # fmt: skip


def test_protocol_threshold_plot(protocol: pl.DataFrame) -> None:
    plot = protocol_threshold_plot(protocol)
    data = plot.data
    # trace x threshold x metric x split
    assert len(data) == len(TRACES) * len(THRESHOLDS) * 2 * 2
    assert list(data["threshold"].cat.categories) == ["20h", "none"]  # "none" last
    assert list(data["metric"].cat.categories) == ["AvgWait", "worst MaxWait"]
    assert type(plot.facet).__name__ == "facet_grid"
    row = protocol.filter((pl.col("trace") == "SDSC-SP2") & (pl.col("threshold") == "20h"))
    got = data[
        (data["trace"] == "SDSC-SP2")
        & (data["threshold"] == "20h")
        & (data["metric"] == "AvgWait")
        & (data["split"] == "test")
    ]
    assert math.isclose(got["value"].iloc[0], row["test_ratio_of_means"][0])
    assert math.isclose(got["high"].iloc[0], row["test_ratio_ci_high"][0])
    # the training value is the selection statistic: drawn without an interval
    train = data[(data["metric"] == "AvgWait") & (data["split"] == "train")]
    assert train["low"].isna().all() and train["high"].isna().all()
    assert all(name in _flat(plot.labels.title) for name in TRACES)
    assert "relative to EASY-FCFS-FCFS" in _flat(plot.labels.y)
    with pytest.raises(ConfigurationError, match="no rows"):
        protocol_threshold_plot(protocol.head(0))


def test_baseline_caption(summary: pl.DataFrame) -> None:
    caption = baseline_caption(summary)
    assert caption.startswith("Baseline EASY-FCFS-FCFS mean weekly AvgWait: ")
    for trace in TRACES:
        hours = {}
        for split in SPLITS:
            seconds = summary.filter(
                (pl.col("trace") == trace)
                & (pl.col("split") == split)
                & (pl.col("primary") == "FCFS")
                & (pl.col("backfill") == "FCFS")
                & (pl.col("threshold") == "none")
            )["mean_avg_wait_s"][0]
            hours[split] = f"{seconds / 3600:.2f} h"
        assert f"{trace} train {hours['train']}, test {hours['test']}" in caption
    with pytest.raises(ConfigurationError, match="'80h'"):
        baseline_caption(summary, "80h")


@pytest.mark.parametrize("max_wait", ["mean", "worst"])
def test_train_test_pairs_plot(summary: pl.DataFrame, max_wait: str) -> None:
    plot = train_test_pairs_plot(summary, threshold="20h", max_wait=max_wait)
    data = plot.data
    # trace x pair x (AvgWait, MaxWait)
    assert len(data) == len(TRACES) * 7 * len(BACKFILLS) * 2
    assert list(data["metric"].cat.categories) == ["AvgWait", "MaxWait"]
    assert (
        data.groupby(["trace", "metric"], observed=True).size().tolist() == [7 * len(BACKFILLS)] * 4
    )
    # the differences with the baseline (its own threshold, same trace and split), by hand
    max_source = f"{max_wait}_max_wait_s"
    for trace in TRACES:
        point = data[
            (data["trace"] == trace) & (data["primary"] == "SQF") & (data["backfill"] == "LQF")
        ]
        for split in SPLITS:
            pair = _summary_row(summary, trace, split, "SQF", "LQF", "20h")
            base = _summary_row(summary, trace, split, "FCFS", "FCFS", "none")
            avg = point[point["metric"] == "AvgWait"][split].iloc[0]
            assert avg == pytest.approx(
                (pair["mean_avg_wait_s"] - base["mean_avg_wait_s"]) / 3600.0
            )
            most = point[point["metric"] == "MaxWait"][split].iloc[0]
            assert most == pytest.approx((pair[max_source] - base[max_source]) / 3600.0)
    assert plot.mapping["x"] == "train" and plot.mapping["y"] == "test"
    # the baseline at (0, 0) in every panel, lines at 0 and the identity line
    circles = [
        layer.geom.data
        for layer in _layers(plot, "geom_point")
        if isinstance(layer.geom.data, pd.DataFrame)
    ]
    assert any(len(c) == 4 and (c["train"] == 0).all() and (c["test"] == 0).all() for c in circles)
    assert [layer.geom.data["yintercept"].tolist() for layer in _layers(plot, "geom_hline")] == [
        [0.0]
    ]
    assert _layers(plot, "geom_abline")
    assert type(plot.facet).__name__ == "facet_wrap"
    assert _flat(plot.labels.caption) == baseline_caption(summary)
    # Long texts are wrapped so that they fit a 7-inch-wide figure.
    assert max(len(line) for line in plot.labels.title.splitlines()) <= 72
    assert max(len(line) for line in plot.labels.caption.splitlines()) <= 115
    assert "20 h" in _flat(plot.labels.title) and all(
        name in _flat(plot.labels.title) for name in TRACES
    )
    assert "training" in _flat(plot.labels.x) and "test" in _flat(plot.labels.y)
    assert "(h)" in _flat(plot.labels.y) and "EASY-FCFS-FCFS" in _flat(plot.labels.y)
    with pytest.raises(ConfigurationError, match="'10h'"):
        train_test_pairs_plot(summary, threshold="10h")
    only_train = summary.filter(pl.col("split") == "train")
    with pytest.raises(ConfigurationError, match="both train and test"):
        train_test_pairs_plot(only_train, threshold="20h")
    with pytest.raises(ConfigurationError, match="max_wait"):
        train_test_pairs_plot(summary, max_wait="median")


def test_train_test_pairs_plot_marks_the_learned_pair(
    summary: pl.DataFrame, protocol: pl.DataFrame
) -> None:
    plot = train_test_pairs_plot(summary, threshold="20h", learned=protocol)
    diamonds = [
        layer.geom.data
        for layer in _layers(plot, "geom_point")
        if isinstance(layer.geom.data, pd.DataFrame) and "primary" in layer.geom.data
    ]
    (marked,) = diamonds
    for row in protocol.filter(pl.col("threshold") == "20h").iter_rows(named=True):
        got = marked[marked["trace"] == row["trace"]]
        assert set(got["primary"].astype(str)) == {row["primary"]}
        assert set(got["backfill"].astype(str)) == {row["backfill"]}
        pair = _summary_row(summary, row["trace"], "test", row["primary"], row["backfill"], "20h")
        base = _summary_row(summary, row["trace"], "test", "FCFS", "FCFS", "none")
        assert got[got["metric"] == "AvgWait"]["test"].iloc[0] == pytest.approx(
            (pair["mean_avg_wait_s"] - base["mean_avg_wait_s"]) / 3600.0
        )
    assert "learned" in _flat(plot.labels.subtitle)


def test_train_test_pairs_plot_needs_the_baseline(summary: pl.DataFrame) -> None:
    no_base = summary.filter(
        ~((pl.col("primary") == "FCFS") & (pl.col("backfill") == "FCFS")
          & (pl.col("threshold") == "none") & (pl.col("trace") == "SDSC-SP2"))
    )  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"EASY-FCFS-FCFS.*SDSC-SP2"):
        train_test_pairs_plot(no_base, threshold="20h")


# --------------------------------------------------------------------------------------------
# Saved files
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def all_plots(
    weekly: pl.DataFrame, summary: pl.DataFrame, protocol: pl.DataFrame
) -> dict[str, ggplot]:
    return {
        "weekly": weekly_avg_wait_plot(weekly, "KTH-SP2", relative=True),
        "pairs": pair_scatter_plot(summary, "KTH-SP2"),
        "backfill": backfill_facet_plot(summary, "KTH-SP2"),
        "threshold": threshold_comparison_plot(summary, "KTH-SP2"),
        "protocol": protocol_threshold_plot(protocol),
        "train_test": train_test_pairs_plot(summary),
    }


@pytest.mark.parametrize(
    "name", ["weekly", "pairs", "backfill", "threshold", "protocol", "train_test"]
)
def test_save_figure(all_plots: dict[str, ggplot], tmp_path: Path, name: str) -> None:
    figures_before = set(plt.get_fignums())
    png, pdf = tmp_path / "fig" / f"{name}.png", tmp_path / "fig" / f"{name}.pdf"
    save_figure(all_plots[name], png, pdf, provenance={**PROVENANCE, "figure": name}, dpi=100)
    assert set(plt.get_fignums()) == figures_before  # no leaked matplotlib figure
    assert sorted(path.name for path in png.parent.iterdir()) == [f"{name}.pdf", f"{name}.png"]

    data = png.read_bytes()
    assert len(data) > 10_000
    chunks = png_chunks(data)
    assert chunks[0][0] == b"IHDR"
    width, height = struct.unpack(">II", chunks[0][1][:8])
    assert (width, height) == (700, 450)
    texts = png_texts(chunks)
    assert texts["Software"] == "schedlab"
    assert json.loads(texts["Description"]) == {**PROVENANCE, "figure": name}
    assert texts["Description"] == json.dumps({**PROVENANCE, "figure": name}, sort_keys=True)

    document = pdf.read_bytes()
    assert document.startswith(b"%PDF")
    assert len(document) > 1_000
    subject = json.dumps({**PROVENANCE, "figure": name}, sort_keys=True)
    assert b"/Subject (" + subject.encode("ascii") + b")" in document
    assert b"/Creator (schedlab)" in document


def test_save_figure_default_size(all_plots: dict[str, ggplot], tmp_path: Path) -> None:
    png, pdf = tmp_path / "default.png", tmp_path / "default.pdf"
    save_figure(all_plots["pairs"], png, pdf)
    width, height = struct.unpack(">II", png_chunks(png.read_bytes())[0][1][:8])
    assert (width, height) == (round(7.0 * 150), round(4.5 * 150))
    assert json.loads(png_texts(png_chunks(png.read_bytes()))["Description"]) == {}


def test_save_figure_failed_draw_leaves_nothing(tmp_path: Path) -> None:
    frame = pl.DataFrame({"x": [1.0, 2.0], "y": [3.0, 4.0]}).to_pandas()
    broken = ggplot(frame, aes("x", "no_such_column")) + geom_point()
    figures_before = set(plt.get_fignums())
    with pytest.raises(Exception, match="no_such_column"):
        save_figure(broken, tmp_path / "broken.png", tmp_path / "broken.pdf")
    assert list(tmp_path.iterdir()) == []
    assert set(plt.get_fignums()) == figures_before


def test_save_figure_keeps_old_files_on_failure(
    all_plots: dict[str, ggplot], tmp_path: Path
) -> None:
    png, pdf = tmp_path / "keep.png", tmp_path / "keep.pdf"
    png.write_bytes(b"old png")
    pdf.write_bytes(b"old pdf")
    broken = ggplot(pl.DataFrame({"x": [1.0]}).to_pandas(), aes("x", "missing")) + geom_point()
    with pytest.raises(Exception, match="missing"):
        save_figure(broken, png, pdf)
    assert png.read_bytes() == b"old png" and pdf.read_bytes() == b"old pdf"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["keep.pdf", "keep.png"]


def test_save_figure_rejects_bad_arguments(all_plots: dict[str, ggplot], tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="positive"):
        save_figure(all_plots["pairs"], tmp_path / "a.png", tmp_path / "a.pdf", dpi=0)
    with pytest.raises(ConfigurationError, match="same"):
        save_figure(all_plots["pairs"], tmp_path / "a.png", tmp_path / "a.png")
    assert list(tmp_path.iterdir()) == []


def test_save_figure_is_byte_identical_across_runs(
    all_plots: dict[str, ggplot], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No time stamp in either file: a rerun (or a cluster run) reproduces the same bytes."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    save_figure(all_plots["pairs"], first / "a.png", first / "a.pdf", provenance=PROVENANCE)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")  # would be written if a date were written
    save_figure(all_plots["pairs"], second / "a.png", second / "a.pdf", provenance=PROVENANCE)
    assert b"/CreationDate" not in (first / "a.pdf").read_bytes()
    for name in ("a.png", "a.pdf"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_save_figure_draws_one_figure_at_a_time_across_threads(
    all_plots: dict[str, ggplot], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Snakemake's thread mode runs figure jobs in parallel threads; matplotlib's rcParams and
    figure list are global, so drawing must be serialised (overlapping themes once produced a
    PDF whose grid was drawn over the reference line)."""
    active, overlaps, lock = [0], [], threading.Lock()
    original = ggplot.save

    def tracking_save(self: ggplot, *args: object, **kwargs: object) -> None:
        with lock:
            active[0] += 1
            overlaps.append(active[0])
        time.sleep(0.05)  # widen the window a race would need
        try:
            original(self, *args, **kwargs)
        finally:
            with lock:
                active[0] -= 1

    monkeypatch.setattr(ggplot, "save", tracking_save)
    names = ["pairs", "protocol", "weekly", "pairs"]
    threads = [
        threading.Thread(
            target=save_figure,
            args=(all_plots[name], tmp_path / f"{i}.png", tmp_path / f"{i}.pdf"),
        )
        for i, name in enumerate(names)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(overlaps) == 2 * len(names) and max(overlaps) == 1
    assert all((tmp_path / f"{i}.pdf").read_bytes().startswith(b"%PDF") for i in range(4))


# -- the baseline comes from the config ------------------------------------------------------------

SPF_BASE = Baseline(primary="SPF", backfill="FCFS", threshold="none")


def test_pair_scatter_circles_and_names_the_configured_baseline(summary: pl.DataFrame) -> None:
    plot = pair_scatter_plot(summary, "KTH-SP2", threshold="none", baseline=SPF_BASE)
    assert "relative to EASY-SPF-FCFS" in _flat(plot.labels.x)
    assert "relative to EASY-SPF-FCFS" in _flat(plot.labels.y)
    assert "EASY-SPF-FCFS" in _flat(plot.labels.subtitle)
    assert "EASY-FCFS-FCFS" not in _flat(plot.labels.x) + _flat(plot.labels.subtitle)
    spf = summary.filter(
        (pl.col("trace") == "KTH-SP2") & (pl.col("split") == "train")
        & (pl.col("primary") == "SPF") & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    ).row(0, named=True)  # fmt: skip
    markers = [layer for layer in plot.layers if type(layer.geom).__name__ == "geom_point"]
    marked = [layer.geom.data for layer in markers if layer.geom.data is not None]
    # the circle sits on the SPF/FCFS pair (its x is that pair's value in the fixture's data)
    assert any(
        math.isclose(float(d["x"].iloc[0]), spf["mean_relative_avg_wait"])
        and math.isclose(float(d["y"].iloc[0]), spf["relative_worst_max_wait"])
        for d in marked
    )


@pytest.mark.parametrize(
    "build",
    [
        lambda weekly, summary, protocol, b: weekly_avg_wait_plot(
            weekly, "KTH-SP2", relative=True, baseline=b
        ),
        lambda weekly, summary, protocol, b: backfill_facet_plot(summary, "KTH-SP2", baseline=b),
        lambda weekly, summary, protocol, b: protocol_threshold_plot(protocol, baseline=b),
        lambda weekly, summary, protocol, b: train_test_pairs_plot(summary, baseline=b),
    ],
)
def test_relative_axes_name_the_configured_baseline(weekly, summary, protocol, build) -> None:
    plot = build(weekly, summary, protocol, SPF_BASE)
    text = " ".join(_flat(getattr(plot.labels, name, None)) for name in ("x", "y", "subtitle"))
    assert "EASY-SPF-FCFS" in text and "EASY-FCFS-FCFS" not in text


def test_baseline_caption_names_the_configured_baseline(summary: pl.DataFrame) -> None:
    caption = baseline_caption(summary, "none", baseline=SPF_BASE)
    assert caption.startswith("Baseline EASY-SPF-FCFS mean weekly AvgWait")
    spf_hours = summary.filter(
        (pl.col("trace") == "KTH-SP2") & (pl.col("split") == "train")
        & (pl.col("primary") == "SPF") & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )["mean_avg_wait_s"][0] / 3600.0  # fmt: skip
    assert f"{spf_hours:.1f}" in caption or f"{spf_hours:.2f}" in caption
