"""Figures of the run-time prediction study: content of each plot, then the saved PNG/PDF files."""

from __future__ import annotations

import itertools
import json
import math
import struct
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from plotnine import ggplot
from support.png import png_chunks, png_texts

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.figures import save_figure
from scheduler.studies.prediction.figures import (
    bsld_heatmap_plot,
    correlation_matrix_plot,
    pair_correlation_plot,
    pearson_table,
    prediction_ecdf_plot,
    technique_levels,
)

TRACES = ("CTC-SP2", "KTH-SP2", "SDSC-BLUE")
LEARNED = ("nag-eloss", "nag-squared", "nag-L2", "nag-L10")
CORRECTIONS = ("requested", "incremental", "doubling")
BACKFILLS = ("easy", "sjbf")
JOBS = 3000
PROVENANCE = {"input": "results/prediction/runs.parquet", "sha256": "0123abcd", "commit": "beef"}


def _triples() -> list[tuple[str, str, str]]:
    """requested and clairvoyant uncorrected, ave2 and the learned ones with every correction."""
    triples = [(t, "none", b) for t in ("requested", "clairvoyant") for b in BACKFILLS]
    triples += [(t, c, b) for t in ("ave2", *LEARNED) for c in CORRECTIONS for b in BACKFILLS]
    return triples


@pytest.fixture(scope="module")
def runs() -> pl.DataFrame:
    """One row per trace and triple; the traces share a per-triple effect (so r > 0)."""
    rng = np.random.default_rng(20150915)
    triples = _triples()
    effect = {triple: float(rng.lognormal(0.0, 0.4)) for triple in triples}
    rows = []
    for trace in TRACES:
        base = float(rng.uniform(5.0, 60.0))
        for triple in triples:
            technique, correction, backfill = triple
            if trace == "SDSC-BLUE" and triple == ("nag-L10", "doubling", "sjbf"):
                continue  # a triple missing on one trace (and a blank heat-map cell)
            is_base = triple == ("requested", "none", "easy")
            factor = 1.0 if is_base else effect[triple] * float(rng.lognormal(0.0, 0.15))
            rows.append(
                {
                    "trace": trace,
                    "technique": technique,
                    "correction": correction,
                    "backfill": backfill,
                    "triple": "/".join(triple),
                    "avg_bsld": base * factor,
                    "utilisation": float(rng.uniform(0.5, 0.9)),
                }
            )
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def predictions() -> pl.DataFrame:
    """Job-level predictions of one trace: the same jobs for every technique."""
    rng = np.random.default_rng(7)
    req = np.exp(rng.uniform(np.log(60.0), np.log(36 * 3600.0), JOBS)).round()
    run = np.clip(req * rng.beta(0.6, 1.5, JOBS), 1.0, req).round()
    parts = []
    for technique in ("requested", "ave2", "clairvoyant", "nag-eloss"):
        if technique == "requested":
            prediction = req
        elif technique == "clairvoyant":
            prediction = run
        else:
            prediction = np.clip(run * rng.lognormal(0.0, 1.0, JOBS), 1.0, req)
        parts.append(
            pl.DataFrame(
                {
                    "technique": technique,
                    "run_s": run,
                    "prediction_s": prediction,
                    "req_time_s": req,
                }
            )
        )
    return pl.concat(parts)


def _flat(text: str | None) -> str:
    """A plot label with its line breaks (from wrapping) turned back into single spaces."""
    assert text is not None
    return " ".join(text.split())


def _geoms(plot: ggplot) -> list[str]:
    return [type(layer.geom).__name__ for layer in plot.layers]


def _trans(plot: ggplot, aesthetic: str) -> str:
    """Name of the transform of a plot's scale (``"log10"``, ``"pseudo_log"``)."""
    trans = plot.scales.get_scales(aesthetic).trans
    return trans if isinstance(trans, str) else type(trans).__name__.removesuffix("_trans")


def _relative(runs: pl.DataFrame, trace: str) -> dict[str, float]:
    rows = runs.filter(pl.col("trace") == trace)
    base = rows.filter(pl.col("triple") == "requested/none/easy")["avg_bsld"][0]
    return {row["triple"]: row["avg_bsld"] / base for row in rows.iter_rows(named=True)}


# --------------------------------------------------------------------------------------------
# Orders
# --------------------------------------------------------------------------------------------


def test_technique_levels_follow_the_registry_then_natural_order() -> None:
    names = ["nag-L10", "zzz", "clairvoyant", "nag-L2", "ave2", "requested", "nag-eloss", "ave2"]
    assert technique_levels(names) == [
        "requested",
        "ave2",
        "clairvoyant",
        "nag-L2",
        "nag-L10",
        "nag-eloss",
        "zzz",
    ]


# --------------------------------------------------------------------------------------------
# Pearson table
# --------------------------------------------------------------------------------------------


def test_pearson_table_matches_numpy(runs: pl.DataFrame) -> None:
    table = pearson_table(runs)
    assert table.columns == ["trace_a", "trace_b", "r", "n"]
    assert list(zip(table["trace_a"], table["trace_b"], strict=True)) == list(
        itertools.combinations(TRACES, 2)
    )
    for row in table.iter_rows(named=True):
        a, b = _relative(runs, row["trace_a"]), _relative(runs, row["trace_b"])
        common = sorted(set(a) & set(b))
        x = np.array([a[t] for t in common])
        y = np.array([b[t] for t in common])
        assert row["n"] == len(common)
        assert math.isclose(row["r"], np.corrcoef(x, y)[0, 1], rel_tol=1e-12)
        assert 0.3 < row["r"] <= 1.0  # the shared effect shows
    full = len(_triples())
    assert dict(zip(table["trace_b"], table["n"], strict=False)) == {
        "KTH-SP2": full,
        "SDSC-BLUE": full - 1,
    }


def test_pearson_table_is_invariant_to_the_baseline_scale(runs: pl.DataFrame) -> None:
    """Relative values are a per-trace rescaling: r is the same with another baseline, and
    averaging duplicated simulations of a triple changes nothing when they agree."""
    doubled = pl.concat([runs, runs])
    assert pearson_table(doubled).equals(pearson_table(runs))
    other = pearson_table(runs, baseline_technique="clairvoyant")
    assert np.allclose(other["r"].to_numpy(), pearson_table(runs)["r"].to_numpy())


def test_pearson_table_undefined_r(runs: pl.DataFrame) -> None:
    few = runs.filter(pl.col("triple").is_in(["requested/none/easy", "requested/none/sjbf"]))
    table = pearson_table(few)
    assert table["n"].to_list() == [2, 2, 2] and table["r"].null_count() == 3


def test_pearson_table_errors(runs: pl.DataFrame) -> None:
    one = runs.filter(pl.col("trace") == "KTH-SP2")
    with pytest.raises(ConfigurationError, match=r"at least 2 traces.*KTH-SP2"):
        pearson_table(one)
    with pytest.raises(ConfigurationError, match="avg_bsld"):
        pearson_table(runs.drop("avg_bsld"))
    no_base = runs.filter(
        ~((pl.col("trace") == "CTC-SP2") & (pl.col("triple") == "requested/none/easy"))
    )
    with pytest.raises(ConfigurationError, match=r"requested/none/easy on CTC-SP2"):
        pearson_table(no_base)
    with pytest.raises(ConfigurationError, match="ave2/none/easy"):
        pearson_table(runs, baseline_technique="ave2")


# --------------------------------------------------------------------------------------------
# Plot content
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["error", "value"])
def test_prediction_ecdf_plot(predictions: pl.DataFrame, kind: str) -> None:
    plot = prediction_ecdf_plot(predictions, "KTH-SP2", kind=kind, max_points=500)
    data = plot.data
    assert list(data["technique"].cat.categories) == [
        "requested",
        "ave2",
        "clairvoyant",
        "nag-eloss",
    ]
    for technique, line in data.groupby("technique", observed=True):
        ecdf = line["ecdf"].to_numpy()
        x = line["x"].to_numpy()
        assert ecdf[0] == 0.0 and ecdf[-1] == 1.0
        assert np.all(np.diff(ecdf) >= 0) and np.all(np.diff(x) >= 0)
        assert len(line) <= 501
        source = predictions.filter(pl.col("technique") == technique)
        values = (
            source["prediction_s"] - source["run_s"] if kind == "error" else source["prediction_s"]
        ).to_numpy()
        assert x[0] == values.min() and x[-1] == values.max()
        # each corner lies on the exact ECDF's vertical step at its x (ties make steps taller)
        for corner in (1, len(line) // 3, len(line) // 2, len(line) - 2):
            below, upto = np.mean(values < x[corner]), np.mean(values <= x[corner])
            assert below < ecdf[corner] <= upto + 1e-12
    clairvoyant = data[data["technique"] == "clairvoyant"]
    if kind == "error":
        assert set(clairvoyant["x"]) == {0.0}  # the actual run time exactly
        assert "geom_vline" in _geoms(plot)
        assert "over-prediction" in _flat(plot.labels.x)
        assert _trans(plot, "x") == "pseudo_log"
        # breaks come back from the inverse transform slightly off: still named durations
        labels = plot.scales.get_scales("x").labels([-3600.0000001, 0.0, 599.9999999, 1e5])
        assert list(labels) == ["−1 h", "0", "+10 min", "+100000 s"]
    else:
        assert "log" in _flat(plot.labels.x) and "(s" in _flat(plot.labels.x)
        assert _trans(plot, "x") == "log10"
        assert list(plot.scales.get_scales("x").labels([1.0, 60.0, 36000.0])) == [
            "1 s",
            "1 min",
            "10 h",
        ]
    assert "geom_step" in _geoms(plot)
    assert "KTH-SP2" in _flat(plot.labels.title)
    assert f"{JOBS:,} jobs" in _flat(plot.labels.subtitle)


def test_prediction_ecdf_plot_adds_the_requested_time(predictions: pl.DataFrame) -> None:
    without = predictions.filter(pl.col("technique") != "requested")
    for kind in ("value", "error"):
        plot = prediction_ecdf_plot(without, "KTH-SP2", kind=kind, max_points=JOBS)
        full = prediction_ecdf_plot(predictions, "KTH-SP2", kind=kind, max_points=JOBS)
        requested = plot.data[plot.data["technique"] == "requested"]
        assert len(requested) == JOBS + 1  # every job
        # the same line as the "requested" technique's (its predictions are the requested times)
        expected = full.data[full.data["technique"] == "requested"]
        assert np.array_equal(requested["x"].to_numpy(), expected["x"].to_numpy())
        assert np.array_equal(requested["ecdf"].to_numpy(), expected["ecdf"].to_numpy())
        assert plot.data["technique"].cat.categories[0] == "requested"


def test_prediction_ecdf_plot_errors(predictions: pl.DataFrame) -> None:
    with pytest.raises(ConfigurationError, match="kind"):
        prediction_ecdf_plot(predictions, "KTH-SP2", kind="histogram")
    with pytest.raises(ConfigurationError, match="req_time_s"):
        prediction_ecdf_plot(predictions.drop("req_time_s"), "KTH-SP2")
    with pytest.raises(ConfigurationError, match="no rows"):
        prediction_ecdf_plot(predictions.clear(), "KTH-SP2")


def test_pair_correlation_plot(runs: pl.DataFrame) -> None:
    plot = pair_correlation_plot(runs)
    data = plot.data
    table = pearson_table(runs)
    assert len(data) == int(table["n"].sum())
    assert type(plot.facet).__name__ == "facet_wrap"
    pairs = list(data["pair"].cat.categories)
    assert len(pairs) == 3
    for label, row in zip(pairs, table.iter_rows(named=True), strict=True):
        assert f"x: {row['trace_a']}, y: {row['trace_b']}" in label
        assert f"r = {row['r']:.2f} (n = {row['n']})" in label
    first = data[data["pair"] == pairs[0]].set_index("triple")
    a, b = _relative(runs, "CTC-SP2"), _relative(runs, "KTH-SP2")
    assert math.isclose(first.loc["ave2/doubling/sjbf", "x"], a["ave2/doubling/sjbf"])
    assert math.isclose(first.loc["ave2/doubling/sjbf", "y"], b["ave2/doubling/sjbf"])
    assert first.loc["requested/none/easy", ["x", "y"]].tolist() == [1.0, 1.0]
    assert list(data["correction"].cat.categories) == ["none", *CORRECTIONS]
    assert "geom_abline" in _geoms(plot)
    assert all(name in _flat(plot.labels.title) for name in TRACES)
    assert "requested/none/easy" in _flat(plot.labels.subtitle)
    with pytest.raises(ConfigurationError, match=r"pair_correlation_plot: .*at least 2 traces"):
        pair_correlation_plot(runs.filter(pl.col("trace") == "CTC-SP2"))


def test_correlation_matrix_plot(runs: pl.DataFrame) -> None:
    plot = correlation_matrix_plot(runs)
    data = plot.data
    assert len(data) == len(TRACES) ** 2
    assert list(data["trace_x"].cat.categories) == list(TRACES)
    assert list(data["trace_y"].cat.categories) == list(reversed(TRACES))
    matrix = data.pivot(index="trace_x", columns="trace_y", values="r")
    values = matrix.loc[list(TRACES), list(TRACES)].to_numpy()
    assert np.allclose(np.diag(values), 1.0) and np.allclose(values, values.T)
    for row in pearson_table(runs).iter_rows(named=True):
        assert math.isclose(matrix.loc[row["trace_a"], row["trace_b"]], row["r"])
        cell = data[(data["trace_x"] == row["trace_a"]) & (data["trace_y"] == row["trace_b"])]
        assert cell["label"].iloc[0] == f"{row['r']:.2f}"
    assert {"geom_tile", "geom_text"} <= set(_geoms(plot))
    assert all(name in _flat(plot.labels.title) for name in TRACES)
    with pytest.raises(ConfigurationError, match=r"correlation_matrix_plot: .*at least 2 traces"):
        correlation_matrix_plot(runs.filter(pl.col("trace") == "SDSC-BLUE"))


def test_bsld_heatmap_plot(runs: pl.DataFrame) -> None:
    plot = bsld_heatmap_plot(runs, "SDSC-BLUE")
    data = plot.data
    on_trace = runs.filter(pl.col("trace") == "SDSC-BLUE")
    assert len(data) == on_trace.height == len(_triples()) - 1  # the missing cell stays blank
    assert list(data["setting"].cat.categories) == [
        "none/easy",
        "none/sjbf",
        *(f"{c}/{b}" for c in CORRECTIONS for b in BACKFILLS),
    ]
    # first technique at the top: the y levels run bottom-up
    assert list(data["technique"].cat.categories)[::-1] == technique_levels(
        on_trace["technique"].to_list()
    )
    cell = data[data["triple"] == "ave2/incremental/easy"]
    expected = on_trace.filter(pl.col("triple") == "ave2/incremental/easy")["avg_bsld"][0]
    assert math.isclose(cell["avg_bsld"].iloc[0], expected)
    assert cell["label"].iloc[0] == f"{expected:.1f}" or expected >= 100
    assert _trans(plot, "fill") == "log10"
    framed = [layer.geom.data for layer in plot.layers if type(layer.geom).__name__ == "geom_tile"]
    best = [frame for frame in framed if frame is not None and len(frame) == 1]
    assert best and math.isclose(best[0]["avg_bsld"].iloc[0], on_trace["avg_bsld"].min())
    assert "SDSC-BLUE" in _flat(plot.labels.title) and "log" in _flat(plot.labels.subtitle)
    with pytest.raises(ConfigurationError, match=r"NOPE.*CTC-SP2"):
        bsld_heatmap_plot(runs, "NOPE")
    with pytest.raises(ConfigurationError, match="triple"):
        bsld_heatmap_plot(runs.drop("triple"), "KTH-SP2")


# --------------------------------------------------------------------------------------------
# Saved files
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def all_plots(runs: pl.DataFrame, predictions: pl.DataFrame) -> dict[str, ggplot]:
    return {
        "ecdf_error": prediction_ecdf_plot(predictions, "KTH-SP2", kind="error"),
        "ecdf_value": prediction_ecdf_plot(predictions, "KTH-SP2", kind="value"),
        "pairs": pair_correlation_plot(runs),
        "matrix": correlation_matrix_plot(runs),
        "heatmap": bsld_heatmap_plot(runs, "KTH-SP2"),
    }


@pytest.mark.parametrize("name", ["ecdf_error", "ecdf_value", "pairs", "matrix", "heatmap"])
def test_save_figure(all_plots: dict[str, ggplot], tmp_path: Path, name: str) -> None:
    figures_before = set(plt.get_fignums())
    png, pdf = tmp_path / "fig" / f"{name}.png", tmp_path / "fig" / f"{name}.pdf"
    save_figure(all_plots[name], png, pdf, provenance={**PROVENANCE, "figure": name}, dpi=80)
    assert set(plt.get_fignums()) == figures_before  # no leaked matplotlib figure
    assert sorted(path.name for path in png.parent.iterdir()) == [f"{name}.pdf", f"{name}.png"]

    data = png.read_bytes()
    assert len(data) > 10_000
    chunks = png_chunks(data)
    assert chunks[0][0] == b"IHDR"
    assert struct.unpack(">II", chunks[0][1][:8]) == (560, 360)
    texts = png_texts(chunks)
    assert texts["Software"] == "schedlab"
    assert texts["Description"] == json.dumps({**PROVENANCE, "figure": name}, sort_keys=True)

    document = pdf.read_bytes()
    assert document.startswith(b"%PDF") and len(document) > 1_000
    subject = json.dumps({**PROVENANCE, "figure": name}, sort_keys=True)
    assert b"/Subject (" + subject.encode("ascii") + b")" in document
    assert b"/Creator (schedlab)" in document
