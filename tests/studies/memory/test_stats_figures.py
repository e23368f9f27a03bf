"""The memory study's statistics (intervals over seeds, ratios to the baseline, the summary and
paper tables) and figures (content of the plots, the saved PNG)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
from scipy import stats as scipy_stats
from support.png import png_text

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.figures import save_figure
from scheduler.studies.memory import figures
from scheduler.studies.memory.stats import (
    CELL,
    baseline_ratios,
    paper_table,
    seed_intervals,
    summary_table,
)

LOADS = (0.5, 1.1)
SEEDS = (0, 1, 2, 3)
VARIANTS = (
    ("none", "none", ""),
    ("perceptron-implicit", "perceptron", "implicit"),
    ("perceptron-explicit", "perceptron", "explicit"),
    ("history", "history", ""),
)
FEATURES = ("free_class1", "free_class2", "need", "log_request", "log_queue", "bias")


def _row(kind, scheduler, variant, estimator, feedback, load, memory, seed) -> dict:
    rng = np.random.default_rng([hash(variant) % 1000, seed, int(load * 10), int(memory)])
    gain = 1.0 if variant == "none" else 1.3 + 0.05 * rng.standard_normal()
    base = 0.6 * load / 1.1
    return {
        "kind": kind, "trace": "LANL", "scheduler": scheduler, "variant": variant,
        "estimator": estimator, "feedback": feedback,
        "gradient": "literal" if estimator == "perceptron" else "", "load": load,
        "second_memory_mb": memory, "seed": seed, "offered_load": load, "scale_factor": 1.0,
        "jobs": 100, "nodes": 1024, "makespan_s": 1e5, "utilisation": base * gain,
        "utilisation_with_waste": base * gain * 1.05, "avg_stretch": 10.0 / gain,
        "avg_bsld": 5.0 / gain, "avg_wait_s": 100.0 / gain,
        "failed_runs": 0 if variant == "none" else int(rng.integers(5, 50)), "forced": 0,
        "success_fraction": 1.0 if variant == "none" else 0.8,
        **{f"w_{name}": (0.0 if estimator != "perceptron" else rng.normal() + i)
           for i, name in enumerate(FEATURES)},
    }  # fmt: skip


@pytest.fixture(scope="module")
def runs() -> pl.DataFrame:
    rows = []
    for scheduler in ("fcfs", "easy"):
        for variant, estimator, feedback in VARIANTS:
            seeds = SEEDS[:1] if variant == "none" else SEEDS
            for seed in seeds:
                for load in LOADS:
                    rows.append(_row("load", scheduler, variant, estimator, feedback, load,
                                     24.0, seed))  # fmt: skip
                for memory in (4.0, 16.0, 32.0):
                    rows.append(_row("sweep", scheduler, variant, estimator, feedback, 1.1,
                                     memory, seed))  # fmt: skip
    return pl.DataFrame(rows)


def test_intervals_are_t_intervals_over_seeds(runs: pl.DataFrame) -> None:
    intervals = seed_intervals(runs, 0.9)
    cell = intervals.filter(
        (pl.col("kind") == "load") & (pl.col("scheduler") == "easy")
        & (pl.col("variant") == "history") & (pl.col("load") == 1.1)
        & (pl.col("metric") == "utilisation")
    )  # fmt: skip
    values = runs.filter(
        (pl.col("kind") == "load") & (pl.col("scheduler") == "easy")
        & (pl.col("variant") == "history") & (pl.col("load") == 1.1)
    )["utilisation"].to_numpy()  # fmt: skip
    low, high = scipy_stats.t.interval(0.9, len(values) - 1, loc=values.mean(),
                                       scale=scipy_stats.sem(values))  # fmt: skip
    assert cell.height == 1 and cell["seeds"][0] == len(SEEDS)
    assert cell["mean"][0] == pytest.approx(values.mean())
    assert (cell["low"][0], cell["high"][0]) == pytest.approx((low, high))
    # the baseline is one deterministic run: its interval is the point
    base = intervals.filter((pl.col("variant") == "none") & (pl.col("metric") == "avg_bsld"))
    assert (base["seeds"] == 1).all() and (base["low"] == base["mean"]).all()
    assert (base["high"] == base["mean"]).all()
    # every cell has every metric and weight
    metrics = set(intervals["metric"])
    assert {"utilisation", "failed_runs", "w_bias", "w_free_class2"} <= metrics
    assert intervals.group_by(list(CELL)).len()["len"].n_unique() == 1


def test_a_random_variant_with_one_seed_has_no_interval(runs: pl.DataFrame) -> None:
    one = seed_intervals(runs.filter(pl.col("seed") == 0))
    random = one.filter(pl.col("variant") != "none")
    assert random["low"].is_nan().all() and random["high"].is_nan().all()
    assert not random["mean"].is_nan().any()


def test_ratios_are_taken_seed_by_seed(runs: pl.DataFrame) -> None:
    ratios = baseline_ratios(runs)
    assert "none" not in set(ratios["variant"])
    row = ratios.filter(
        (pl.col("kind") == "sweep") & (pl.col("scheduler") == "fcfs")
        & (pl.col("variant") == "perceptron-explicit") & (pl.col("second_memory_mb") == 16.0)
        & (pl.col("metric") == "avg_stretch_ratio")
    )  # fmt: skip
    cell = runs.filter((pl.col("kind") == "sweep") & (pl.col("scheduler") == "fcfs")
                       & (pl.col("second_memory_mb") == 16.0))  # fmt: skip
    base = cell.filter(pl.col("variant") == "none")["avg_stretch"][0]
    values = cell.filter(pl.col("variant") == "perceptron-explicit")["avg_stretch"] / base
    assert row.height == 1 and row["mean"][0] == pytest.approx(values.mean())
    assert row["low"][0] < row["mean"][0] < row["high"][0]


def test_summary_and_paper_tables(runs: pl.DataFrame) -> None:
    summary = summary_table(seed_intervals(runs))
    assert summary.height == 2 * len(VARIANTS) * len(LOADS)  # load runs only
    assert {"utilisation", "utilisation_low", "avg_stretch_high",
            "failed_runs"} <= set(summary.columns)  # fmt: skip
    paper = paper_table(baseline_ratios(runs), 1.1)
    # per scheduler and non-baseline variant: gain and slowdown at saturation, median slowdown
    assert paper.height == 2 * 3 * 3
    implicit = paper.filter((pl.col("scheduler") == "fcfs")
                            & (pl.col("variant") == "perceptron-implicit"))  # fmt: skip
    gain = implicit.filter(pl.col("quantity") == "utilisation gain at saturation (%)")
    assert gain["paper"][0] == 33.0
    ratios = runs.filter((pl.col("kind") == "load") & (pl.col("scheduler") == "fcfs")
                         & (pl.col("load") == 1.1))  # fmt: skip
    base = ratios.filter(pl.col("variant") == "none")["utilisation"][0]
    measured = ratios.filter(pl.col("variant") == "perceptron-implicit")["utilisation"]
    assert gain["schedlab"][0] == pytest.approx(100 * (measured.mean() / base - 1))
    explicit = paper.filter((pl.col("scheduler") == "fcfs")
                            & (pl.col("variant") == "perceptron-explicit"))  # fmt: skip
    assert 31.0 in explicit["paper"].to_list() and 0.5 in explicit["paper"].to_list()
    # nothing to compare with for EASY or the history estimator
    assert paper.filter(pl.col("scheduler") == "easy")["paper"].is_nan().all()
    assert paper.filter(pl.col("variant") == "history")["paper"].is_nan().all()


def test_utilisation_and_slowdown_figures(runs: pl.DataFrame) -> None:
    intervals = seed_intervals(runs)
    plot = figures.utilisation_figure(intervals)
    data = plot.data
    assert set(data["quantity"]) == {"effective", "total"}
    assert list(data["panel"].cat.categories) == ["FCFS", "EASY"]
    assert set(data["variant"]) == {v for v, _, _ in VARIANTS}
    assert set(data["load"]) == set(LOADS) and (data["kind"] == "load").all()
    assert "utilisation" in plot.labels.title.lower()
    slowdown = figures.slowdown_figure(intervals)
    assert set(slowdown.data["metric"]) == {"avg_stretch", "avg_bsld"}
    assert "log" in slowdown.labels.y
    failures = figures.failures_figure(intervals)
    assert set(failures.data["metric"]) == {"failed_runs"}


def test_weights_and_sweep_figures(runs: pl.DataFrame) -> None:
    plot = figures.weights_figure(seed_intervals(runs))
    assert set(plot.data["quantity"]) == set(FEATURES)
    assert set(plot.data["variant"]) == {"perceptron-implicit", "perceptron-explicit"}
    sweep = figures.sweep_figure(baseline_ratios(runs))
    assert set(sweep.data["second_memory_mb"]) == {4.0, 16.0, 32.0}
    assert "none" not in set(sweep.data["variant"]) and "1.1" in sweep.labels.subtitle
    without = seed_intervals(runs.filter(pl.col("estimator") != "perceptron"))
    with pytest.raises(ConfigurationError, match="no perceptron run"):
        figures.weights_figure(without)
    with pytest.raises(ConfigurationError, match="no sweep run"):
        figures.sweep_figure(baseline_ratios(runs.filter(pl.col("kind") == "load")))


def _segments(plot) -> pd.DataFrame:
    return next(layer.geom.data for layer in plot.layers
                if type(layer.geom).__name__ == "geom_segment")  # fmt: skip


def test_paper_figures_are_drawn_as_the_paper_draws_them(runs: pl.DataFrame) -> None:
    intervals = seed_intervals(runs)
    plot = figures.paper_utilisation_figure(intervals)
    data = plot.data
    assert list(data["figure"].cat.categories) == [
        "Fig. 4: effective utilisation, implicit", "Fig. 5: effective utilisation, explicit",
        "Fig. 6: effective and total, implicit", "Fig. 10: failed runs, implicit"]  # fmt: skip
    assert set(data["scheduler"]) == {"fcfs"} and "history" not in set(data["variant"])
    fig4 = data[data["figure"] == "Fig. 4: effective utilisation, implicit"]
    assert set(fig4["variant"]) == {"none", "perceptron-implicit"}
    assert set(fig4["style"]) == {"without estimation", "with estimation"}
    fig6 = data[data["figure"] == "Fig. 6: effective and total, implicit"]
    assert set(fig6["metric"]) == {"utilisation", "utilisation_with_waste"}
    assert set(fig6[fig6["variant"] == "none"]["metric"]) == {"utilisation"}
    # the claim: 1.33 x the baseline's utilisation at the highest load, over the loads
    base = intervals.filter((pl.col("variant") == "none") & (pl.col("kind") == "load")
                            & (pl.col("scheduler") == "fcfs") & (pl.col("load") == max(LOADS))
                            & (pl.col("metric") == "utilisation"))["mean"][0]  # fmt: skip
    segment = _segments(plot)
    level = segment[segment["figure"] == "Fig. 4: effective utilisation, implicit"]
    assert level[["y", "yend"]].to_numpy().ravel() == pytest.approx([1.33 * base] * 2)
    assert level[["x", "xend"]].to_numpy().ravel().tolist() == [min(LOADS), max(LOADS)]
    slowdown = figures.paper_slowdown_figure(intervals)
    assert "log" in slowdown.labels.y and set(slowdown.data["metric"]) == {"avg_stretch"}
    halved = _segments(slowdown)
    halved = halved[halved["figure"] == "Fig. 7: slowdown, implicit"]
    want = intervals.filter((pl.col("variant") == "none") & (pl.col("kind") == "load")
                            & (pl.col("scheduler") == "fcfs")
                            & (pl.col("metric") == "avg_stretch")).sort("load")["mean"]  # fmt: skip
    assert halved["y"].iloc[0] == pytest.approx(0.5 * want[0])
    assert halved["yend"].iloc[-1] == pytest.approx(0.5 * want[-1])
    with pytest.raises(ConfigurationError, match="no FCFS perceptron run"):
        figures.paper_slowdown_figure(seed_intervals(runs.filter(pl.col("scheduler") == "easy")))


def test_several_logs_get_their_own_panels(runs: pl.DataFrame) -> None:
    other = runs.with_columns(pl.lit("CM5-b").alias("trace"))
    plot = figures.utilisation_figure(seed_intervals(pl.concat([runs, other])))
    assert set(plot.data["panel"]) == {"LANL FCFS", "LANL EASY", "CM5-b FCFS", "CM5-b EASY"}


def test_a_figure_is_saved_with_its_provenance(runs: pl.DataFrame, tmp_path: Path) -> None:
    png, pdf = tmp_path / "utilisation.png", tmp_path / "utilisation.pdf"
    plot = figures.utilisation_figure(seed_intervals(runs))
    save_figure(plot, png, pdf, provenance={"figure": "utilisation"}, dpi=60)
    assert png.stat().st_size > 10_000 and pdf.read_bytes().startswith(b"%PDF")
    assert png_text(png)["Description"] == '{"figure": "utilisation"}'
