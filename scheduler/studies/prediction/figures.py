"""Figures of the run-time prediction study of EASY backfilling (plotnine).

Pure functions: a :mod:`polars` table in, a :class:`plotnine.ggplot` out (nothing is drawn or
written; render with :func:`scheduler.studies.common.figures.save_figure`).

Two input tables:

* the *runs* table, one row per simulation: ``trace``, ``technique`` (a predictor name of
  :data:`scheduler.predictors.PREDICTORS`, learned ones as ``"nag-<loss>"``), ``correction``
  (``"none"`` for techniques never corrected, else a name of
  :data:`scheduler.predictors.CORRECTIONS`), ``backfill`` (``"easy"`` or ``"sjbf"``), ``triple``
  (``"technique/correction/backfill"``) and ``avg_bsld`` (AVEbsld, the mean bounded slowdown,
  dimensionless, >= 1);
* the *predictions* table of one trace, one row per job and technique: ``technique``,
  ``run_s`` (actual run time, s), ``prediction_s`` (prediction at submission, s, in
  [1, requested]) and ``req_time_s`` (requested time, s).

The figures:

* :func:`prediction_ecdf_plot`: ECDF of the prediction error or of the predicted values, one line
  per technique;
* :func:`pair_correlation_plot`: relative AVEbsld of every triple on one trace against another,
  with the Pearson correlation of each pair of traces (:func:`pearson_table`);
* :func:`correlation_matrix_plot`: those correlations as a matrix;
* :func:`bsld_heatmap_plot`: AVEbsld of every triple on one trace.

*Relative* AVEbsld is the triple's AVEbsld divided by the AVEbsld of the baseline triple
``<baseline>/none/easy`` (plain EASY with requested times by default) on the same trace:
1 = as good as the baseline, below 1 = better. When the table holds several simulations of one
triple on one trace, their AVEbsld values are averaged first.
"""

from __future__ import annotations

import os

# Render off-screen unless the user forced a backend: must precede the matplotlib import.
os.environ.setdefault("MPLBACKEND", "Agg")

import math
import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import polars as pl
from mizani.transforms import pseudo_log_trans
from plotnine import (
    aes,
    element_text,
    facet_wrap,
    geom_abline,
    geom_point,
    geom_step,
    geom_text,
    geom_tile,
    geom_vline,
    ggplot,
    scale_colour_manual,
    scale_fill_gradient,
    scale_fill_gradient2,
    scale_shape_manual,
    scale_x_continuous,
    scale_x_log10,
    scale_y_continuous,
    theme,
)
from scipy.stats import pearsonr

from scheduler.core.errors import ConfigurationError
from scheduler.predictors import CORRECTIONS, PREDICTORS
from scheduler.studies.common.figures import (
    SPARE_COLOURS,
    available_values,
    figure_theme,
    level_order,
    make_categorical,
    manual_values,
    require_columns,
    select_rows,
    wrapped_labs,
)

__all__ = [
    "BASELINE_BACKFILL",
    "BASELINE_CORRECTION",
    "ECDF_KINDS",
    "ERROR_LINEAR_S",
    "TECHNIQUE_COLOURS",
    "bsld_heatmap_plot",
    "correlation_matrix_plot",
    "pair_correlation_plot",
    "pearson_table",
    "prediction_ecdf_plot",
    "technique_levels",
]

#: Correction and backfilling of the baseline triple (``<baseline technique>/none/easy``).
BASELINE_CORRECTION = "none"
BASELINE_BACKFILL = "easy"
#: The ``kind`` values of :func:`prediction_ecdf_plot`.
ECDF_KINDS: tuple[str, ...] = ("error", "value")
#: Prediction errors within about ± this many seconds are drawn on a linear scale, larger ones on
#: a logarithmic one (the ``sigma`` of the pseudo-log transform is half of it).
ERROR_LINEAR_S = 60.0
#: Fixed colours of the techniques that are not learned (Okabe-Ito): the requested time black,
#: the clairvoyant prediction grey; learned techniques get the others in turn.
TECHNIQUE_COLOURS: dict[str, str] = {
    "requested": "#000000",
    "clairvoyant": "#999999",
    "ave2": "#E69F00",
}
_LEARNED_COLOURS: tuple[str, ...] = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    *SPARE_COLOURS[1:],
)
#: Backfilling variants in the order of the axes; others follow sorted.
_BACKFILLS: tuple[str, ...] = ("easy", "sjbf")
_BACKFILL_SHAPES: dict[str, str] = {"easy": "o", "sjbf": "^"}
_CORRECTION_COLOURS: tuple[str, ...] = ("#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7")

_RUN_COLUMNS = ("trace", "technique", "correction", "backfill", "triple", "avg_bsld")
_PREDICTION_COLUMNS = ("technique", "run_s", "prediction_s", "req_time_s")

#: Axis breaks of durations (s) and their labels.
_DURATIONS: tuple[tuple[float, str], ...] = (
    (1.0, "1 s"),
    (10.0, "10 s"),
    (60.0, "1 min"),
    (600.0, "10 min"),
    (3600.0, "1 h"),
    (36000.0, "10 h"),
    (360000.0, "100 h"),
)


# --------------------------------------------------------------------------------------------
# Level orders
# --------------------------------------------------------------------------------------------


def _natural_key(text: str) -> tuple[object, ...]:
    """Sort key putting ``"L2"`` before ``"L10"``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def technique_levels(values: Iterable[str]) -> list[str]:
    """Distinct techniques in display order: the predictor registry's order, then by variant.

    ``"nag-L2"`` sorts under ``"nag"`` (its family, the name before the first ``-``) and before
    ``"nag-L10"``; families the registry does not know come last, sorted.

    Parameters
    ----------
    values
        Technique names (repeats allowed).

    Returns
    -------
    list[str]
        Each distinct technique once.
    """
    families = PREDICTORS.names()

    def key(name: str) -> tuple[int, tuple[object, ...]]:
        family = PREDICTORS.canonical(name.split("-", 1)[0])
        rank = families.index(family) if family in families else len(families)
        return (rank, _natural_key(name))

    return sorted({str(value) for value in values}, key=key)


def _correction_levels(values: Iterable[str]) -> list[str]:
    """``"none"`` first, then the correction registry's order, then the rest sorted."""
    return level_order(values, (BASELINE_CORRECTION, *CORRECTIONS.names()))


def _technique_colours(levels: Sequence[str]) -> dict[str, str]:
    """One colour per technique: fixed for the registry's fixed ones, in turn for the others."""
    return manual_values(levels, TECHNIQUE_COLOURS, _LEARNED_COLOURS)


def _baseline_name(baseline_technique: str) -> str:
    return f"{baseline_technique}/{BASELINE_CORRECTION}/{BASELINE_BACKFILL}"


# --------------------------------------------------------------------------------------------
# ECDF of the predictions
# --------------------------------------------------------------------------------------------


def _ecdf_points(values: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Corners of the step function of the ECDF of ``values`` (finite, at least one).

    The first point is ``(min, 0)``, the last ``(max, 1)``; with more than ``max_points`` values
    the points at about ``max_points`` evenly spaced ranks are kept (the line stays exact to
    1 / ``max_points`` in probability, finer than a pixel at 7 inches and 150 dpi).
    """
    ordered = np.sort(values)
    n = ordered.size
    if n > max_points:
        index = np.unique(np.rint(np.linspace(0, n - 1, max_points)).astype(np.int64))
    else:
        index = np.arange(n)
    x = np.concatenate(([ordered[0]], ordered[index]))
    ecdf = np.concatenate(([0.0], (index + 1) / n))
    return x, ecdf


def _duration_labels(breaks: Iterable[float], *, signed: bool) -> list[str]:
    """Labels of duration breaks (s): ``"1 min"``, ``"−1 h"``, ``"+10 h"``, ``"0"``."""
    labels = []
    for value in breaks:
        magnitude = abs(float(value))
        if magnitude < 1e-9:
            labels.append("0")
            continue
        # breaks come back through the scale's inverse transform: compare with a tolerance
        text = next(
            (
                name
                for seconds, name in _DURATIONS
                if math.isclose(magnitude, seconds, rel_tol=1e-6)
            ),
            f"{magnitude:g} s",
        )
        if signed:
            text = ("−" if value < 0 else "+") + text
        labels.append(text)
    return labels


def prediction_ecdf_plot(
    predictions: pl.DataFrame, trace: str, *, kind: str = "error", max_points: int = 2000
) -> ggplot:
    """ECDF of the prediction error or of the predicted run time, one line per technique.

    ``kind="error"``: the error ``prediction_s − run_s`` (s; positive = over-prediction) on a
    pseudo-logarithmic axis (``asinh(x / 60 s)``): linear within about ±1 min, logarithmic
    beyond, symmetric around 0. Errors are signed, contain exact zeros (the clairvoyant
    technique, jobs killed at their requested time) and span from seconds to days: a log axis
    cannot show zero or negative errors, and a linear axis in hours squeezes the bulk of the
    errors (minutes) into one pixel column or, clipped, hides the tail the requested times make.

    ``kind="value"``: the predicted run time ``prediction_s`` (s, >= 1) on a log10 axis.

    The requested time is always a line: the ``"requested"`` technique when the table has it,
    else a line named ``"requested"`` built from ``req_time_s`` (at least 1 s) of the jobs of the
    first technique.

    Parameters
    ----------
    predictions
        The predictions table of one trace (``technique``, ``run_s``, ``prediction_s``,
        ``req_time_s``; times in seconds). Non-finite values are left out.
    trace
        Name of the trace (for the title).
    kind
        ``"error"`` or ``"value"``.
    max_points
        At most this many points (plus one) per line (see the data below).

    Returns
    -------
    ggplot
        Step lines, x = ``x`` (error or prediction, s), y = ``ecdf`` (0 to 1, non-decreasing),
        colour = technique (registry order). Its data has one row per corner of each line: the
        first ``(minimum, 0)``, the last ``(maximum, 1)``.

    Raises
    ------
    ConfigurationError
        When ``kind`` or ``max_points`` is invalid, a column is missing or no finite value is
        left.
    """
    what = "prediction_ecdf_plot"
    if kind not in ECDF_KINDS:
        raise ConfigurationError(f"{what}: kind must be one of {', '.join(ECDF_KINDS)}: {kind!r}")
    if max_points < 2:
        raise ConfigurationError(f"{what}: max_points must be at least 2, got {max_points}")
    require_columns(predictions, _PREDICTION_COLUMNS, what)
    table = predictions.select(
        pl.col("technique").cast(pl.String),
        *(pl.col(name).cast(pl.Float64) for name in _PREDICTION_COLUMNS[1:]),
    )
    techniques = technique_levels(table.get_column("technique").to_list())
    if not techniques:
        raise ConfigurationError(f"{what}: the predictions table of {trace} has no rows")
    value = pl.col("prediction_s") - pl.col("run_s") if kind == "error" else pl.col("prediction_s")
    series = {
        name: table.filter(pl.col("technique") == name).select(value.alias("x"))
        for name in techniques
    }
    if "requested" not in series:
        first = table.filter(pl.col("technique") == techniques[0])
        requested = pl.col("req_time_s").clip(lower_bound=1.0)
        shown = requested - pl.col("run_s") if kind == "error" else requested
        series["requested"] = first.select(shown.alias("x"))
    parts = []
    jobs = 0
    for name, frame in series.items():
        values = frame.get_column("x").to_numpy()
        values = values[np.isfinite(values)]
        if kind == "value":
            values = values[values > 0]
        if values.size == 0:
            continue
        jobs = max(jobs, values.size)
        x, ecdf = _ecdf_points(values, max_points)
        parts.append(pd.DataFrame({"technique": name, "x": x, "ecdf": ecdf}))
    if not parts:
        raise ConfigurationError(f"{what}: no finite {kind} in the predictions table of {trace}")
    data = pd.concat(parts, ignore_index=True)
    levels = technique_levels(data["technique"])
    make_categorical(data, "technique", levels)

    # ±1 min would crowd the label of 0 (the linear part of the axis is narrow)
    breaks = [seconds for seconds, _ in _DURATIONS[3:]]
    if kind == "error":
        error_breaks = [-b for b in reversed(breaks)] + [0.0] + breaks
        x_scale = scale_x_continuous(
            trans=pseudo_log_trans(sigma=ERROR_LINEAR_S / 2, base=10),
            breaks=error_breaks,
            labels=lambda values: _duration_labels(values, signed=True),
            minor_breaks=[],
        )
        # light and under the lines: the clairvoyant technique's line is the step at 0
        extra = [geom_vline(xintercept=0.0, linetype="dotted", colour="#BBBBBB")]
        x_title = "prediction − actual run time (s, pseudo-log scale; positive: over-prediction)"
        title = f"{trace}: ECDF of the run-time prediction error"
    else:
        x_scale = scale_x_log10(
            breaks=[seconds for seconds, _ in _DURATIONS],
            labels=lambda values: _duration_labels(values, signed=False),
        )
        extra = []
        x_title = "predicted run time at submission (s, log scale)"
        title = f"{trace}: ECDF of the predicted run times"
    return (
        ggplot(data, aes(x="x", y="ecdf", colour="technique"))
        + extra
        + geom_step(size=0.6)
        + x_scale
        + scale_y_continuous(limits=(0.0, 1.0), breaks=[0.0, 0.25, 0.5, 0.75, 1.0])
        + scale_colour_manual(values=_technique_colours(levels), limits=levels, name="technique")
        + wrapped_labs(
            x=x_title,
            y="fraction of jobs",
            title=title,
            subtitle=f"{jobs:,} jobs; predictions made at submission; {len(levels)} techniques",
        )
        + figure_theme()
        + theme(axis_text_x=element_text(size=7))
    )


# --------------------------------------------------------------------------------------------
# Correlations between traces
# --------------------------------------------------------------------------------------------


def _triple_means(runs: pl.DataFrame) -> pl.DataFrame:
    """Mean AVEbsld per (trace, triple) with the triple's parts."""
    return (
        runs.with_columns(pl.col(name).cast(pl.String) for name in _RUN_COLUMNS[:5])
        .group_by("trace", "triple", "technique", "correction", "backfill")
        .agg(pl.col("avg_bsld").cast(pl.Float64).mean())
        .sort("trace", "triple")
    )


def _relative_bsld(runs: pl.DataFrame, baseline_technique: str, what: str) -> pl.DataFrame:
    """Per trace and triple, ``relative`` = mean AVEbsld / the baseline triple's (finite only)."""
    require_columns(runs, _RUN_COLUMNS, what)
    means = _triple_means(runs)
    baseline = means.filter(
        (pl.col("technique") == baseline_technique)
        & (pl.col("correction") == BASELINE_CORRECTION)
        & (pl.col("backfill") == BASELINE_BACKFILL)
    ).select("trace", pl.col("avg_bsld").alias("baseline_bsld"))
    traces = sorted(set(means.get_column("trace").to_list()))
    have = set(baseline.get_column("trace").to_list())
    missing = [name for name in traces if name not in have]
    if missing:
        raise ConfigurationError(
            f"{what}: no baseline triple {_baseline_name(baseline_technique)} on "
            f"{', '.join(missing)} (triples: {available_values(runs, 'triple')})"
        )
    bad = baseline.filter(~(pl.col("baseline_bsld") > 0) | pl.col("baseline_bsld").is_infinite())
    if bad.height:
        raise ConfigurationError(
            f"{what}: the AVEbsld of the baseline {_baseline_name(baseline_technique)} is not a "
            f"positive number on {', '.join(bad.get_column('trace').to_list())}"
        )
    return (
        means.join(baseline, on="trace")
        .with_columns(relative=pl.col("avg_bsld") / pl.col("baseline_bsld"))
        .filter(pl.col("relative").is_finite())
    )


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r of two samples, ``None`` below 3 points or when one sample is constant."""
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(pearsonr(x, y).statistic)


def _pairs(
    relative: pl.DataFrame, what: str
) -> tuple[list[str], list[tuple[str, str, pl.DataFrame]]]:
    """The traces (sorted) and, per pair a < b, the triples on both with ``x`` (a), ``y`` (b)."""
    traces = sorted(set(relative.get_column("trace").to_list()))
    if len(traces) < 2:
        raise ConfigurationError(
            f"{what}: correlations between traces need at least 2 traces, "
            f"got {len(traces)} ({', '.join(traces) or 'none'})"
        )
    keys = ["triple", "technique", "correction", "backfill"]
    pairs = []
    for i, first in enumerate(traces):
        for second in traces[i + 1 :]:
            x = relative.filter(pl.col("trace") == first).select(
                *keys, pl.col("relative").alias("x")
            )
            y = relative.filter(pl.col("trace") == second).select(
                "triple", pl.col("relative").alias("y")
            )
            pairs.append((first, second, x.join(y, on="triple", how="inner").sort("triple")))
    return traces, pairs


def pearson_table(runs: pl.DataFrame, baseline_technique: str = "requested") -> pl.DataFrame:
    """Pearson correlation of the triples' relative AVEbsld between each pair of traces.

    Parameters
    ----------
    runs
        The runs table (``trace``, ``technique``, ``correction``, ``backfill``, ``triple``,
        ``avg_bsld``), with the baseline triple ``<baseline_technique>/none/easy`` on every
        trace.
    baseline_technique
        Technique of the baseline triple.

    Returns
    -------
    pl.DataFrame
        One row per pair of traces ``trace_a < trace_b`` (names sorted): ``r`` (Pearson's
        correlation of the relative AVEbsld on ``trace_a`` and on ``trace_b`` over the triples
        present on both, in [-1, 1]; null with fewer than 3 such triples or when one side is
        constant) and ``n`` (the number of those triples).

    Raises
    ------
    ConfigurationError
        When a column is missing, a trace lacks the baseline triple or fewer than 2 traces are
        present.
    """
    what = "pearson_table"
    return _pearson_rows(_pairs(_relative_bsld(runs, baseline_technique, what), what)[1])


def _pearson_rows(pairs: list[tuple[str, str, pl.DataFrame]]) -> pl.DataFrame:
    """The table of :func:`pearson_table` from the pairs of :func:`_pairs`."""
    rows = [
        {
            "trace_a": first,
            "trace_b": second,
            "r": _pearson(both.get_column("x").to_numpy(), both.get_column("y").to_numpy()),
            "n": both.height,
        }
        for first, second, both in pairs
    ]
    schema = {"trace_a": pl.String, "trace_b": pl.String, "r": pl.Float64, "n": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


def _r_text(r: float | None) -> str:
    return "n/a" if r is None or not math.isfinite(r) else f"{r:.2f}"


def pair_correlation_plot(runs: pl.DataFrame, baseline_technique: str = "requested") -> ggplot:
    """Relative AVEbsld of every triple on one trace against another, per pair of traces.

    Parameters
    ----------
    runs
        The runs table (see :func:`pearson_table`).
    baseline_technique
        Technique of the baseline triple ``<baseline_technique>/none/easy``.

    Returns
    -------
    ggplot
        One panel per pair of traces A < B (``facet_wrap`` by ``pair``, free scales; the panel
        label names A (x) and B (y) and gives Pearson's r and n of :func:`pearson_table`); one
        point per triple present on both: x = relative AVEbsld on A, y = on B (dimensionless,
        1 = the baseline); colour = correction, shape = backfilling; dashed identity line. Its
        data has one row per (pair, triple).

    Raises
    ------
    ConfigurationError
        As :func:`pearson_table`, or when no pair of traces shares a triple.
    """
    what = "pair_correlation_plot"
    traces, pairs = _pairs(_relative_bsld(runs, baseline_technique, what), what)
    parts = []
    labels = []
    for first, second, both in pairs:
        r = _pearson(both.get_column("x").to_numpy(), both.get_column("y").to_numpy())
        label = f"x: {first}, y: {second}\nr = {_r_text(r)} (n = {both.height})"
        labels.append(label)
        if both.height:
            parts.append(both.with_columns(pair=pl.lit(label)))
    if not parts:
        raise ConfigurationError(f"{what}: no triple is present on two traces")
    data = pl.concat(parts).to_pandas()
    make_categorical(data, "pair", [label for label in labels if label in set(data["pair"])])
    corrections = _correction_levels(data["correction"])
    make_categorical(data, "correction", corrections)
    backfills = level_order(data["backfill"], _BACKFILLS)
    make_categorical(data, "backfill", backfills)
    return (
        ggplot(data, aes(x="x", y="y"))
        + geom_abline(slope=1.0, intercept=0.0, linetype="dashed", colour="#555555")
        + geom_point(aes(colour="correction", shape="backfill"), size=1.8, alpha=0.8)
        + facet_wrap("pair", scales="free")
        + scale_colour_manual(
            values=manual_values(corrections, {}, _CORRECTION_COLOURS),
            limits=corrections,
            name="correction",
        )
        + scale_shape_manual(
            values=manual_values(backfills, _BACKFILL_SHAPES, ("s", "D", "v")),
            limits=backfills,
            name="backfilling",
        )
        + wrapped_labs(
            x="relative AVEbsld on the first trace (x)",
            y="relative AVEbsld on the\nsecond trace (y)",
            title=f"Relative AVEbsld of every triple, trace against trace: {', '.join(traces)}",
            subtitle=(
                f"AVEbsld / AVEbsld of {_baseline_name(baseline_technique)} on the same trace; "
                "one point per triple on both traces; r: Pearson correlation"
            ),
        )
        + figure_theme()
        + theme(strip_text=element_text(size=7))
    )


def correlation_matrix_plot(runs: pl.DataFrame, baseline_technique: str = "requested") -> ggplot:
    """Pearson correlation of the triples' relative AVEbsld between traces, as a heat map.

    Parameters
    ----------
    runs
        The runs table (see :func:`pearson_table`).
    baseline_technique
        Technique of the baseline triple ``<baseline_technique>/none/easy``.

    Returns
    -------
    ggplot
        Tiles x = ``trace_x``, y = ``trace_y`` (the first trace at the top left), fill = ``r``
        (diverging, -1 blue, 0 white, 1 red; grey when undefined), the value as text; the
        matrix is symmetric with 1 on the diagonal. Its data has one row per ordered pair of
        traces (including a trace with itself, whose ``n`` is its number of triples).

    Raises
    ------
    ConfigurationError
        As :func:`pearson_table`.
    """
    what = "correlation_matrix_plot"
    relative = _relative_bsld(runs, baseline_technique, what)
    traces, pairs = _pairs(relative, what)
    table = _pearson_rows(pairs)
    counts = relative.group_by("trace").len().to_dicts()
    rows = [{"trace_x": c["trace"], "trace_y": c["trace"], "r": 1.0, "n": c["len"]} for c in counts]
    for row in table.iter_rows(named=True):
        for x, y in ((row["trace_a"], row["trace_b"]), (row["trace_b"], row["trace_a"])):
            rows.append({"trace_x": x, "trace_y": y, "r": row["r"], "n": row["n"]})
    data = pd.DataFrame(rows)
    data["r"] = pd.to_numeric(data["r"], errors="coerce").astype(float)
    data["label"] = [_r_text(value) for value in data["r"]]
    data = data.sort_values(["trace_x", "trace_y"], ignore_index=True)
    make_categorical(data, "trace_x", traces)
    make_categorical(data, "trace_y", list(reversed(traces)))
    return (
        ggplot(data, aes(x="trace_x", y="trace_y", fill="r"))
        + geom_tile(colour="white", size=0.5)
        + geom_text(aes(label="label"), size=9)
        + scale_fill_gradient2(
            low="#4393C3",
            mid="#F7F7F7",
            high="#D6604D",
            midpoint=0.0,
            limits=(-1.0, 1.0),
            na_value="#DDDDDD",
            name="Pearson r",
        )
        + wrapped_labs(
            x="trace",
            y="trace",
            title=f"Correlation of relative AVEbsld between traces: {', '.join(traces)}",
            subtitle=(
                f"Pearson r over the triples on both traces; AVEbsld relative to "
                f"{_baseline_name(baseline_technique)}"
            ),
        )
        + figure_theme()
        + theme(axis_text_x=element_text(angle=30, ha="right"))
    )


# --------------------------------------------------------------------------------------------
# AVEbsld per triple
# --------------------------------------------------------------------------------------------


def _bsld_text(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def bsld_heatmap_plot(runs: pl.DataFrame, trace: str) -> ggplot:
    """AVEbsld of every triple on one trace as a heat map.

    The fill is the AVEbsld itself on a log10 colour scale (not relative to a baseline): the
    values of one trace span orders of magnitude (a bad correction can multiply AVEbsld
    tenfold), the text shows the number the thesis tables report, and the baseline is one of the
    cells.

    Parameters
    ----------
    runs
        The runs table (see the module docstring); AVEbsld is dimensionless (>= 1).
    trace
        Name of the trace shown.

    Returns
    -------
    ggplot
        Tiles y = ``technique`` (registry order, the first at the top), x = ``setting``
        (``"<correction>/<backfill>"``, ``"none"`` first, then the correction registry's order,
        easy before sjbf), fill = ``avg_bsld`` (log10 scale), the value as text; a combination
        without a run is left blank; the lowest AVEbsld is framed in black. Its data has one row
        per triple run on the trace (the mean AVEbsld when it was run several times).

    Raises
    ------
    ConfigurationError
        When a column is missing or the trace has no run.
    """
    what = "bsld_heatmap_plot"
    selected = select_rows(runs, what, _RUN_COLUMNS, trace=trace)
    means = _triple_means(selected).with_columns(
        setting=pl.col("correction") + pl.lit("/") + pl.col("backfill")
    )
    data = means.to_pandas()
    data["avg_bsld"] = data["avg_bsld"].where(data["avg_bsld"] > 0)
    data["label"] = [_bsld_text(v) if math.isfinite(v) else "n/a" for v in data["avg_bsld"]]
    corrections = _correction_levels(data["correction"])
    backfills = level_order(data["backfill"], _BACKFILLS)
    present = set(data["setting"])
    settings = [f"{c}/{b}" for c in corrections for b in backfills if f"{c}/{b}" in present]
    techniques = technique_levels(data["technique"])
    make_categorical(data, "setting", settings)
    make_categorical(data, "technique", list(reversed(techniques)))
    best = data.loc[[data["avg_bsld"].idxmin()]] if data["avg_bsld"].notna().any() else data[:0]
    best_text = (
        f"framed: lowest AVEbsld ({best['triple'].iloc[0]}, {best['label'].iloc[0]})"
        if len(best)
        else "no finite AVEbsld"
    )
    text_size = 7 if len(techniques) <= 12 else 5.5
    return (
        ggplot(data, aes(x="setting", y="technique"))
        + geom_tile(aes(fill="avg_bsld"), colour="white", size=0.4)
        + geom_tile(data=best, fill="none", colour="black", size=0.9)
        + geom_text(aes(label="label"), size=text_size)
        + scale_fill_gradient(
            low="#FFF5EB", high="#E6550D", trans="log10", na_value="#DDDDDD", name="AVEbsld"
        )
        + wrapped_labs(
            x="correction / backfilling",
            y="technique",
            title=f"{trace}: AVEbsld per technique, correction and backfilling",
            subtitle=f"log colour scale; blank: not run; {best_text}",
        )
        + figure_theme()
        + theme(axis_text_x=element_text(angle=30, ha="right"), axis_text_y=element_text(size=7))
    )
