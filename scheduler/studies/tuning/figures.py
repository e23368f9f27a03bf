"""Figures of the queue-tuning study of EASY backfilling (plotnine).

The study simulates every combination of a primary queue policy, a backfilling queue policy and a
waiting-time threshold Θ on resampled weeks of a trace (training and test weeks) and compares it
with the baseline EASY-FCFS-FCFS without threshold. The builders here are pure functions: a
:mod:`polars` table in, a :class:`plotnine.ggplot` out (nothing is drawn or written).
:func:`save_figure` then renders a plot to PNG and PDF atomically, with provenance metadata.

Times are stored in seconds in the tables and shown in hours on the axes; relative values are
ratios to the baseline on the same week (1 = as good as EASY-FCFS-FCFS, below 1 = better).

Splits: the descriptive per-trace figures accept ``"train"``, ``"test"`` or ``"whole"`` (weeks
resampled over the whole filtered log, the thesis' source for them); the training → test
figures use ``"train"`` and ``"test"`` only.

The three input tables are

* the *weekly relative* table (one row per trace, split, week_index, primary, backfill,
  threshold) with ``avg_wait_s`` and ``relative_avg_wait`` among others,
* the *summary* table (one row per trace, split, primary, backfill, threshold) with the weekly
  means, deciles ``relative_avg_wait_d1`` … ``relative_avg_wait_d9`` and
  ``relative_max_wait_d1`` … ``relative_max_wait_d9`` and worst values,
* the *protocol* table (one row per trace and threshold) with the pair learned on the training
  weeks and its training and test scores.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Sequence

import pandas as pd
import polars as pl
from plotnine import (
    aes,
    annotate,
    arrow,
    element_text,
    facet_grid,
    facet_wrap,
    geom_abline,
    geom_errorbar,
    geom_errorbarh,
    geom_hline,
    geom_line,
    geom_point,
    geom_segment,
    geom_vline,
    ggplot,
    position_dodge,
    scale_colour_manual,
    scale_shape_manual,
    scale_x_continuous,
    scale_x_discrete,
    theme,
)

from scheduler.core.errors import ConfigurationError
from scheduler.policies import policy_names
from scheduler.studies.common.figures import (
    SECONDS_PER_HOUR,
    add_hours,
    available_values,
    figure_theme,
    finite_only,
    integer_breaks,
    level_order,
    make_categorical,
    policy_colour_scale,
    policy_shape_scale,
    reference_line,
    require_columns,
    select_rows,
    threshold_text,
    wrapped_labs,
)
from scheduler.studies.tuning.schema import Baseline

__all__ = [
    "DEFAULT_BASELINE",
    "NO_THRESHOLD",
    "backfill_facet_plot",
    "baseline_caption",
    "pair_scatter_plot",
    "protocol_threshold_plot",
    "threshold_comparison_plot",
    "train_test_pairs_plot",
    "weekly_avg_wait_plot",
]


#: The threshold label of runs without threshold.
NO_THRESHOLD = "none"
#: The baseline when a caller names none (the config's ``tuning.baseline`` defaults).
DEFAULT_BASELINE = Baseline()


def _relative(baseline: Baseline) -> str:
    """Axis wording of values divided by the baseline's."""
    return f"relative to {baseline.name}"


_SPLITS: tuple[str, ...] = ("train", "test")


#: The week sources of the descriptive figures and how a label names them.
_SPLIT_TEXT: dict[str, str] = {
    "train": "training weeks",
    "test": "test weeks",
    "whole": "whole-log weeks",
}


_SPLIT_COLOURS: dict[str, str] = {"train": "#0072B2", "test": "#D55E00"}


_WEEKLY_COLUMNS = (
    "trace",
    "split",
    "week_index",
    "primary",
    "backfill",
    "threshold",
    "avg_wait_s",
    "relative_avg_wait",
)


_SUMMARY_COLUMNS = (
    "trace",
    "split",
    "primary",
    "backfill",
    "threshold",
    "mean_relative_avg_wait",
    "relative_avg_wait_d1",
    "relative_avg_wait_d9",
)


_PROTOCOL_COLUMNS = (
    "trace",
    "threshold",
    "threshold_s",
    "train_ratio_of_means",
    "test_ratio_of_means",
    "test_ratio_ci_low",
    "test_ratio_ci_high",
    "train_relative_worst_max_wait",
    "test_relative_worst_max_wait",
)


def _policy_levels(frame: pd.DataFrame, column: str) -> list[str]:
    """Policy names of ``frame[column]`` in the study's order; sets the column categorical."""
    # legends and axes in the policy registry's order (FCFS, LCFS, SPF, ...)
    levels = level_order(frame[column].astype(str), policy_names())
    make_categorical(frame, column, levels)
    return levels


def _check_split(split: str, what: str) -> None:
    """Reject a week source that is not ``"train"``, ``"test"`` or ``"whole"``."""
    if split not in _SPLIT_TEXT:
        raise ConfigurationError(f"{what}: split must be 'train', 'test' or 'whole', got {split!r}")


def weekly_avg_wait_plot(
    weekly: pl.DataFrame,
    trace: str,
    *,
    split: str = "train",
    backfill: str = "FCFS",
    threshold: str = "none",
    weeks: int = 150,
    relative: bool = False,
    baseline: Baseline = DEFAULT_BASELINE,
) -> ggplot:
    """Weekly average waiting time of every primary policy (one line per policy).

    Parameters
    ----------
    weekly
        The weekly relative table (columns ``trace``, ``split``, ``week_index``, ``primary``,
        ``backfill``, ``threshold``, ``avg_wait_s`` in seconds, ``relative_avg_wait``).
    trace
        Name of the trace to show.
    split
        ``"train"``, ``"test"`` or ``"whole"`` (weeks resampled over the whole log) weeks.
    backfill
        The backfilling queue policy shared by all lines.
    threshold
        Waiting-time threshold label (``"none"``, ``"20h"``...).
    weeks
        Show the weeks with ``week_index < weeks`` (at least 1).
    relative
        Show AvgWait relative to EASY-FCFS-FCFS on the same week (dimensionless, dashed line at
        1) instead of the AvgWait in hours.

    Returns
    -------
    ggplot
        x = week index, y = AvgWait (h) or relative AvgWait, colour = primary policy. Its data
        has one row per (primary policy, shown week).

    Raises
    ------
    ConfigurationError
        When no row matches trace, split, backfill policy and threshold within the first
        ``weeks`` weeks, or ``weeks < 1``.
    """
    what = "weekly_avg_wait_plot"
    _check_split(split, what)
    if weeks < 1:
        raise ConfigurationError(f"{what}: weeks must be at least 1, got {weeks}")
    selected = select_rows(
        weekly.filter(pl.col("week_index") < weeks) if "week_index" in weekly.columns else weekly,
        what,
        _WEEKLY_COLUMNS,
        trace=trace,
        split=split,
        backfill=backfill,
        threshold=threshold,
    )
    frame = (
        selected.select("week_index", "primary", "avg_wait_s", "relative_avg_wait")
        .sort("primary", "week_index")
        .to_pandas()
    )
    add_hours(frame, "avg_wait_s", "avg_wait_h")
    finite_only(frame, ["relative_avg_wait", "avg_wait_h"])
    levels = _policy_levels(frame, "primary")
    y = "relative_avg_wait" if relative else "avg_wait_h"
    y_title = (
        f"average waiting time {_relative(baseline)}" if relative else "average waiting time (h)"
    )
    shown = int(frame["week_index"].max()) + 1

    plot = (
        ggplot(frame, aes(x="week_index", y=y, colour="primary", group="primary"))
        + geom_line(size=0.6, alpha=0.9, na_rm=True)
        + scale_x_continuous(breaks=integer_breaks)
        + policy_colour_scale(levels, "primary policy")
        + wrapped_labs(
            x=f"resampled week ({_SPLIT_TEXT[split]})",
            y=y_title,
            title=f"{trace}: weekly average waiting time per primary policy",
            subtitle=(
                f"EASY-<primary>-{backfill}, Θ = {threshold_text(threshold)}, "
                f"{_SPLIT_TEXT[split]} 0–{shown - 1}"
            ),
        )
        + figure_theme()
    )
    if relative:
        plot += reference_line()
    return plot


def _summary_frame(selected: pl.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Pandas copy of the summary rows with the columns the pair plots need."""
    columns = [
        "primary",
        "backfill",
        "mean_relative_avg_wait",
        "relative_avg_wait_d1",
        "relative_avg_wait_d9",
        *extra,
    ]
    frame = selected.select(columns).sort("primary", "backfill").to_pandas()
    finite_only(frame, ["mean_relative_avg_wait", "relative_avg_wait_d1", "relative_avg_wait_d9"])
    return frame


def pair_scatter_plot(
    summary: pl.DataFrame,
    trace: str,
    *,
    split: str = "train",
    threshold: str = "none",
    max_wait: str = "worst",
    baseline: Baseline = DEFAULT_BASELINE,
) -> ggplot:
    """Every (primary, backfilling) policy pair: AvgWait against MaxWait, both relative to the
    baseline (the thesis' "all values relative to EASY" figures).

    Parameters
    ----------
    summary
        The summary table (one row per trace, split, primary, backfill, threshold).
    trace
        Name of the trace to show.
    split
        ``"train"``, ``"test"`` or ``"whole"`` (weeks resampled over the whole log) weeks.
    threshold
        Waiting-time threshold label of the pairs shown.
    max_wait
        ``"mean"``: y = mean of the weekly MaxWait ratios to the baseline
        (``mean_relative_max_wait``) with vertical bars from their 1st to 9th decile
        (``relative_max_wait_d1``, ``relative_max_wait_d9``): the thesis' figure. ``"worst"``:
        y = the largest weekly MaxWait over the baseline's largest on the same weeks
        (``relative_worst_max_wait``), without vertical bars (one extreme week per pair has no
        spread to show).

    Returns
    -------
    ggplot
        One point per pair: x = mean weekly AvgWait relative to the baseline with horizontal
        bars from the 1st to the 9th decile, y = the relative MaxWait above; colour = primary
        policy, shape = backfilling policy; the baseline (same split, its own threshold) is
        circled in black; dashed lines at 1 on both axes. Its data has one row per pair, with
        the summary's columns.

    Raises
    ------
    ConfigurationError
        When no row matches trace, split and threshold, or ``max_wait`` is unknown.
    """
    what = "pair_scatter_plot"
    _check_split(split, what)
    if max_wait not in ("worst", "mean"):
        raise ConfigurationError(f"{what}: max_wait must be 'worst' or 'mean', got {max_wait!r}")
    y = "relative_worst_max_wait" if max_wait == "worst" else "mean_relative_max_wait"
    y_bars = ["relative_max_wait_d1", "relative_max_wait_d9"] if max_wait == "mean" else []
    selected = select_rows(
        summary, what, [*_SUMMARY_COLUMNS, y, *y_bars], trace=trace, split=split,
        threshold=threshold,
    )  # fmt: skip
    frame = _summary_frame(selected, [y, *y_bars])
    finite_only(frame, [y, *y_bars])
    primaries = _policy_levels(frame, "primary")
    backfills = _policy_levels(frame, "backfill")

    base_rows = summary.filter(
        (pl.col("trace") == trace) & (pl.col("split") == split) & baseline.expr()
    )
    y_title = (
        f"worst weekly MaxWait\n{_relative(baseline)}"
        if max_wait == "worst"
        else f"mean weekly MaxWait\n{_relative(baseline)}\n(bars: deciles 1–9)"
    )
    plot = (
        ggplot(frame, aes(x="mean_relative_avg_wait", y=y))
        + reference_line("x")
        + reference_line("y")
        + geom_errorbarh(
            aes(xmin="relative_avg_wait_d1", xmax="relative_avg_wait_d9", colour="primary"),
            height=0,
            alpha=0.45,
            size=0.5,
            na_rm=True,
        )
    )
    if y_bars:
        plot += geom_errorbar(
            aes(ymin=y_bars[0], ymax=y_bars[1], colour="primary"),
            width=0,
            alpha=0.45,
            size=0.5,
            na_rm=True,
        )
    plot = (
        plot
        + geom_point(aes(colour="primary", shape="backfill"), size=2.6, na_rm=True)
        + policy_colour_scale(primaries, "primary policy")
        + policy_shape_scale(backfills, "backfilling policy")
        + wrapped_labs(
            x=f"mean weekly AvgWait {_relative(baseline)} (bars: deciles 1–9)",
            y=y_title,
            title=f"{trace}: all primary × backfilling policy pairs",
            subtitle=(
                f"Θ = {threshold_text(threshold)}, {_SPLIT_TEXT[split]}; "
                f"circled: baseline {baseline.name}"
            ),
        )
        + figure_theme()
    )
    if base_rows.height and y in base_rows.columns:
        point = base_rows.row(0, named=True)
        x0, y0 = point["mean_relative_avg_wait"], point[y]
        if x0 is not None and y0 is not None and math.isfinite(x0) and math.isfinite(y0):
            plot += annotate(
                "point", x=x0, y=y0, size=6, shape="o", fill="none", colour="black", stroke=1.0
            )
    return plot


def backfill_facet_plot(
    summary: pl.DataFrame,
    trace: str,
    *,
    split: str = "train",
    threshold: str = "none",
    baseline: Baseline = DEFAULT_BASELINE,
) -> ggplot:
    """Relative AvgWait of every backfilling policy, one panel per primary policy.

    Parameters
    ----------
    summary
        The summary table.
    trace
        Name of the trace to show.
    split
        ``"train"``, ``"test"`` or ``"whole"`` weeks.
    threshold
        Waiting-time threshold label.

    Returns
    -------
    ggplot
        x = backfilling policy, y = mean weekly AvgWait relative to EASY-FCFS-FCFS with bars
        from the 1st to the 9th decile; ``facet_wrap`` by primary policy; dashed line at 1.

    Raises
    ------
    ConfigurationError
        When no row matches trace, split and threshold.
    """
    what = "backfill_facet_plot"
    _check_split(split, what)
    selected = select_rows(
        summary, what, _SUMMARY_COLUMNS, trace=trace, split=split, threshold=threshold
    )
    frame = _summary_frame(selected)
    _policy_levels(frame, "primary")
    backfills = _policy_levels(frame, "backfill")
    return (
        ggplot(frame, aes(x="backfill", y="mean_relative_avg_wait"))
        + reference_line()
        + geom_errorbar(
            aes(ymin="relative_avg_wait_d1", ymax="relative_avg_wait_d9", colour="backfill"),
            width=0.3,
            na_rm=True,
        )
        + geom_point(aes(colour="backfill"), size=2.0, na_rm=True)
        + facet_wrap("primary", ncol=4, labeller=lambda value: f"primary {value}")
        + policy_colour_scale(backfills, "backfilling policy")
        + wrapped_labs(
            x="backfilling policy",
            y=f"mean weekly AvgWait\n{_relative(baseline)}",
            title=f"{trace}: relative AvgWait per backfilling policy and primary policy",
            subtitle=(
                f"Θ = {threshold_text(threshold)}, {_SPLIT_TEXT[split]}; points: mean, "
                "bars: deciles 1–9"
            ),
        )
        + figure_theme()
        + theme(
            axis_text_x=element_text(angle=90, size=7, va="top"),
            legend_position="none",
        )
    )


def threshold_comparison_plot(
    summary: pl.DataFrame,
    trace: str,
    *,
    split: str = "train",
    backfill: str = "SPF",
    threshold: str = "20h",
    max_wait: str = "worst",
    baseline: Baseline = DEFAULT_BASELINE,
) -> ggplot:
    """AvgWait against MaxWait of each primary policy without threshold and with Θ, the
    threshold drawn as a horizontal line (the thesis' threshold figure: it shows the MaxWait
    that Θ removes and the AvgWait it costs).

    Parameters
    ----------
    summary
        The summary table.
    trace
        Name of the trace to show.
    split
        ``"train"``, ``"test"`` or ``"whole"`` weeks.
    backfill
        The backfilling queue policy of every point.
    threshold
        The threshold label compared with ``"none"`` (must differ from ``"none"``).
    max_wait
        ``"worst"`` (default): y = the largest weekly MaxWait (``worst_max_wait_s``);
        ``"mean"``: y = the mean weekly MaxWait (``mean_max_wait_s``). Hours, absolute: Θ is
        an absolute duration, so it is a horizontal line at Θ hours.

    Returns
    -------
    ggplot
        x = mean weekly AvgWait relative to the baseline with horizontal bars from the 1st to
        the 9th decile (relative, as the other figures, so that weeks of different load
        compare), y = MaxWait (h); colour = primary policy, shape = setting (``"Θ = none"`` vs
        ``"Θ = 20 h"``); an arrow per primary policy from its point without threshold to its
        point with Θ; a horizontal line at Θ (hours) and a dashed vertical line at 1. Its data
        has one row per (primary policy, setting) with ``max_wait_h``.

    Raises
    ------
    ConfigurationError
        When ``threshold`` is ``"none"``, ``max_wait`` is unknown, or either setting has no row
        for trace, split and backfilling policy.
    """
    what = "threshold_comparison_plot"
    _check_split(split, what)
    if threshold == NO_THRESHOLD:
        raise ConfigurationError(
            f"{what}: threshold must differ from {NO_THRESHOLD!r} (it is compared with it)"
        )
    if max_wait not in ("worst", "mean"):
        raise ConfigurationError(f"{what}: max_wait must be 'worst' or 'mean', got {max_wait!r}")
    source = f"{max_wait}_max_wait_s"
    parts = [
        select_rows(
            summary,
            what,
            [*_SUMMARY_COLUMNS, "threshold_s", source],
            trace=trace,
            split=split,
            backfill=backfill,
            threshold=label,
        )
        for label in (NO_THRESHOLD, threshold)
    ]
    theta_s = float(parts[1]["threshold_s"][0])
    if not math.isfinite(theta_s):
        raise ConfigurationError(f"{what}: threshold {threshold!r} has no finite duration")
    frame = _summary_frame(pl.concat(parts, how="vertical_relaxed"), ["threshold", source])
    add_hours(frame, source, "max_wait_h")
    finite_only(frame, ["max_wait_h"])
    settings = [f"Θ = {threshold_text(label)}" for label in (NO_THRESHOLD, threshold)]
    frame["setting"] = frame["threshold"].map(lambda label: f"Θ = {threshold_text(label)}")
    make_categorical(frame, "setting", settings)
    primaries = _policy_levels(frame, "primary")
    # one arrow per primary policy: from its point without threshold to its point with Θ
    ends = frame.pivot_table(
        index="primary", columns="threshold", values=["mean_relative_avg_wait", "max_wait_h"],
        observed=True,
    ).dropna()  # fmt: skip
    arrows = pd.DataFrame(
        {
            "primary": pd.Categorical(ends.index.astype(str), categories=primaries),
            "x": ends[("mean_relative_avg_wait", NO_THRESHOLD)].to_numpy(),
            "y": ends[("max_wait_h", NO_THRESHOLD)].to_numpy(),
            "xend": ends[("mean_relative_avg_wait", threshold)].to_numpy(),
            "yend": ends[("max_wait_h", threshold)].to_numpy(),
        }
    )
    theta_h = theta_s / SECONDS_PER_HOUR
    y_title = (
        "worst weekly maximum waiting time (h)"
        if max_wait == "worst"
        else "mean weekly maximum waiting time (h)"
    )
    return (
        ggplot(frame, aes(x="mean_relative_avg_wait", y="max_wait_h"))
        + reference_line("x")
        + geom_hline(yintercept=theta_h, colour="#D55E00", linetype="solid", size=0.6)
        + annotate(
            "text",
            x=float(frame["relative_avg_wait_d1"].min()),
            y=theta_h,
            label=f"Θ = {threshold_text(threshold)}",
            ha="left",
            va="bottom",
            size=8,
            colour="#D55E00",
        )
        + geom_segment(
            aes(x="x", y="y", xend="xend", yend="yend", colour="primary"),
            data=arrows,
            arrow=arrow(length=0.08, type="closed"),
            alpha=0.6,
            size=0.4,
        )
        + geom_errorbarh(
            aes(xmin="relative_avg_wait_d1", xmax="relative_avg_wait_d9", colour="primary"),
            height=0,
            alpha=0.35,
            size=0.5,
            na_rm=True,
        )
        + geom_point(aes(colour="primary", shape="setting"), size=2.6, na_rm=True)
        + policy_colour_scale(primaries, "primary policy")
        + scale_shape_manual(
            values=dict(zip(settings, ("o", "^"), strict=True)),
            limits=settings,
            name="waiting-time\nthreshold",
        )
        + wrapped_labs(
            x=f"mean weekly AvgWait {_relative(baseline)} (bars: deciles 1–9)",
            y=y_title,
            title=(
                f"{trace}: waiting-time threshold Θ = {threshold_text(threshold)} "
                f"vs none, backfilling {backfill}"
            ),
            subtitle=(
                f"EASY-<primary>-{backfill}, {_SPLIT_TEXT[split]}; arrows: Θ = none → "
                f"Θ = {threshold_text(threshold)}"
            ),
        )
        + figure_theme()
    )


def _threshold_levels(table: pl.DataFrame) -> list[str]:
    """Threshold labels ordered by ``threshold_s`` (infinite, i.e. ``"none"``, last)."""
    pairs = table.select("threshold", "threshold_s").unique().to_dicts()

    def key(row: dict[str, object]) -> tuple[int, float, str]:
        seconds = row["threshold_s"]
        value = float(seconds) if isinstance(seconds, int | float) else math.inf
        last = row["threshold"] == NO_THRESHOLD or not math.isfinite(value)
        return (1 if last else 0, value if math.isfinite(value) else 0.0, str(row["threshold"]))

    ordered: list[str] = []
    for row in sorted(pairs, key=key):
        label = str(row["threshold"])
        if label not in ordered:
            ordered.append(label)
    return ordered


def protocol_threshold_plot(
    protocol: pl.DataFrame, *, baseline: Baseline = DEFAULT_BASELINE
) -> ggplot:
    """Scores of the pair learned per threshold, on the training and the test weeks.

    Parameters
    ----------
    protocol
        The protocol table (one row per trace and threshold, with ``threshold_s`` in seconds,
        ``inf`` for ``"none"``).

    Returns
    -------
    ggplot
        Facet rows = trace, facet columns = metric (``"AvgWait"``: ratio of the mean AvgWaits
        to EASY-FCFS-FCFS's, the selection statistic, with the test value's source-week
        bootstrap interval; ``"worst MaxWait"``: worst weekly
        MaxWait relative to that of EASY-FCFS-FCFS); x = threshold (ordered by length,
        ``"none"`` last), colour = split; dashed line at 1; free y scales. Its data has one row
        per (trace, threshold, metric, split).

    Raises
    ------
    ConfigurationError
        When the table is empty or lacks a column.
    """
    what = "protocol_threshold_plot"
    require_columns(protocol, _PROTOCOL_COLUMNS, what)
    if protocol.height == 0:
        raise ConfigurationError(f"{what}: the protocol table has no rows")
    levels = _threshold_levels(protocol)
    long_parts: list[pl.DataFrame] = []
    for split in _SPLITS:
        long_parts.append(
            protocol.select(
                "trace",
                "threshold",
                pl.lit("AvgWait").alias("metric"),
                pl.lit(split).alias("split"),
                pl.col(f"{split}_ratio_of_means").cast(pl.Float64).alias("value"),
                # test only: the training value is what the selection minimised
                (pl.col("test_ratio_ci_low") if split == "test" else pl.lit(None))
                .cast(pl.Float64).alias("low"),
                (pl.col("test_ratio_ci_high") if split == "test" else pl.lit(None))
                .cast(pl.Float64).alias("high"),
            )
        )
        long_parts.append(
            protocol.select(
                "trace",
                "threshold",
                pl.lit("worst MaxWait").alias("metric"),
                pl.lit(split).alias("split"),
                pl.col(f"{split}_relative_worst_max_wait").cast(pl.Float64).alias("value"),
                pl.lit(None, dtype=pl.Float64).alias("low"),
                pl.lit(None, dtype=pl.Float64).alias("high"),
            )
        )
    frame = pl.concat(long_parts).to_pandas()
    finite_only(frame, ["value", "low", "high"])
    traces = level_order(frame["trace"], ())
    make_categorical(frame, "trace", traces)
    make_categorical(frame, "threshold", levels)
    make_categorical(frame, "metric", ["AvgWait", "worst MaxWait"])
    make_categorical(frame, "split", list(_SPLITS))
    bars = frame[frame["low"].notna() & frame["high"].notna()]
    dodge = position_dodge(width=0.5)
    return (
        ggplot(frame, aes(x="threshold", y="value", colour="split", group="split"))
        + reference_line()
        + geom_errorbar(
            aes(ymin="low", ymax="high"), data=bars, position=dodge, width=0.35, na_rm=True
        )
        + geom_point(position=dodge, size=2.2, na_rm=True)
        + facet_grid("trace ~ metric", scales="free_y")
        + scale_x_discrete(labels=lambda labels: [threshold_text(str(x)) for x in labels])
        + scale_colour_manual(values=_SPLIT_COLOURS, limits=list(_SPLITS), name="weeks")
        + wrapped_labs(
            x="waiting-time threshold Θ",
            y=f"value {_relative(baseline)}",
            title=f"Pair learned per threshold, training vs test: {', '.join(traces)}",
            subtitle=(
                "AvgWait: ratio of mean AvgWaits (the selection statistic), bars: source-week "
                "bootstrap interval (test); worst MaxWait: worst weekly MaxWait relative to the "
                "baseline's"
            ),
        )
        + figure_theme()
    )


def _baseline_hours(
    summary: pl.DataFrame, threshold_label: str, *, baseline: Baseline = DEFAULT_BASELINE
) -> dict[str, dict[str, float]]:
    """Per trace and split, the baseline pair's mean weekly AvgWait in hours."""
    rows = summary.filter(
        (pl.col("primary") == baseline.primary)
        & (pl.col("backfill") == baseline.backfill)
        & (pl.col("threshold") == threshold_label)
    )
    result: dict[str, dict[str, float]] = {}
    for row in rows.iter_rows(named=True):
        seconds = row["mean_avg_wait_s"]
        if seconds is None:
            continue
        result.setdefault(str(row["trace"]), {})[str(row["split"])] = (
            float(seconds) / SECONDS_PER_HOUR
        )
    return result


def baseline_caption(
    summary: pl.DataFrame, threshold_label: str = "none", *, baseline: Baseline = DEFAULT_BASELINE
) -> str:
    """Sentence giving the baseline's mean weekly AvgWait (hours) per trace and split.

    Parameters
    ----------
    summary
        The summary table (needs ``trace``, ``split``, ``primary``, ``backfill``,
        ``threshold``, ``mean_avg_wait_s`` in seconds).
    threshold_label
        Threshold label of the baseline rows (``"none"`` for the study's baseline).

    Returns
    -------
    str
        E.g. ``"Baseline EASY-FCFS-FCFS mean weekly AvgWait: KTH-SP2 train 1.23 h, test
        2.34 h; SDSC-SP2 train 0.50 h, test 0.61 h."`` with traces sorted by name, values
        rounded to 2 decimals and ``n/a`` for a missing split.

    Raises
    ------
    ConfigurationError
        When the table has no row for the baseline pair at that threshold.
    """
    what = "baseline_caption"
    require_columns(
        summary, ("trace", "split", "primary", "backfill", "threshold", "mean_avg_wait_s"), what
    )
    hours = _baseline_hours(summary, threshold_label, baseline=baseline)
    if not hours:
        raise ConfigurationError(
            f"{what}: no {baseline.name} rows with threshold {threshold_label!r} "
            f"(available thresholds: {available_values(summary, 'threshold')})"
        )
    setting = "" if threshold_label == NO_THRESHOLD else f" (Θ = {threshold_text(threshold_label)})"
    parts = []
    for trace in sorted(hours):
        values = [
            f"{split} {hours[trace][split]:.2f} h" if split in hours[trace] else f"{split} n/a"
            for split in _SPLITS
        ]
        parts.append(f"{trace} {', '.join(values)}")
    return f"Baseline {baseline.name}{setting} mean weekly AvgWait: {'; '.join(parts)}."


#: The two panels of :func:`train_test_pairs_plot`: name -> summary column of the mean weekly
#: value per max_wait choice ("mean", "worst").
_DIFFERENCE_METRICS: dict[str, dict[str, str]] = {
    "AvgWait": {"mean": "mean_avg_wait_s", "worst": "mean_avg_wait_s"},
    "MaxWait": {"mean": "mean_max_wait_s", "worst": "worst_max_wait_s"},
}


def _difference_table(
    summary: pl.DataFrame, threshold: str, baseline: Baseline, max_wait: str, what: str
) -> pl.DataFrame:
    """Per (trace, primary, backfill, metric): train and test difference with the baseline of
    the same trace and split, hours (rows of pairs present in both splits only)."""
    columns = {metric: sources[max_wait] for metric, sources in _DIFFERENCE_METRICS.items()}
    needed = ["trace", "split", "primary", "backfill", "threshold", *set(columns.values())]
    selected = select_rows(summary, what, needed, threshold=threshold)
    keys = ["trace", "primary", "backfill"]
    base = summary.filter(baseline.expr() & pl.col("split").is_in(list(_SPLITS)))
    parts = []
    for split in _SPLITS:
        pairs = selected.filter(pl.col("split") == split)
        base_split = base.filter(pl.col("split") == split)
        missing = sorted(set(pairs["trace"].to_list()) - set(base_split["trace"].to_list()))
        if missing:
            raise ConfigurationError(
                f"{what}: the baseline {baseline.name} has no {split} row for "
                f"{', '.join(missing)}; the differences need it"
            )
        for metric, column in columns.items():
            value = pl.col(column).cast(pl.Float64)
            base_value = pl.col("__base").cast(pl.Float64)
            parts.append(
                pairs.join(
                    base_split.select("trace", pl.col(column).alias("__base")), on="trace"
                ).select(
                    *keys,
                    pl.lit(metric).alias("metric"),
                    pl.lit(split).alias("split"),
                    ((value - base_value) / SECONDS_PER_HOUR).alias("difference_h"),
                )
            )
    long = pl.concat(parts)
    return (
        long.filter(pl.col("split") == "train")
        .select(*keys, "metric", pl.col("difference_h").alias("train"))
        .join(
            long.filter(pl.col("split") == "test").select(
                *keys, "metric", pl.col("difference_h").alias("test")
            ),
            on=[*keys, "metric"],
            how="inner",
        )
        .sort("trace", "metric", "primary", "backfill")
    )


def train_test_pairs_plot(
    summary: pl.DataFrame,
    *,
    threshold: str = "20h",
    baseline: Baseline = DEFAULT_BASELINE,
    max_wait: str = "mean",
    learned: pl.DataFrame | None = None,
) -> ggplot:
    """Training against test cost of every policy pair as the difference with the baseline:
    mean AvgWait and MaxWait (the thesis reports the learned pair's test cost this way).

    Parameters
    ----------
    summary
        The summary table (both splits; the baseline's rows at its own threshold too).
    threshold
        Waiting-time threshold label of the pairs shown.
    max_wait
        ``"mean"`` (default): the MaxWait panel shows the mean weekly MaxWait
        (``mean_max_wait_s``), so both panels are means over the same weeks and a difference of
        means is the mean of the weekly paired differences (the protocol's
        ``test_mean_difference_s`` for AvgWait); ``"worst"``: the largest weekly MaxWait
        (``worst_max_wait_s``).
    learned
        Optional protocol table (``trace``, ``threshold``, ``primary``, ``backfill``): the pair
        learned at ``threshold`` is marked by a black diamond in each trace's panels.

    Returns
    -------
    ggplot
        One point per (trace, primary, backfill, metric) present in both splits: x = training,
        y = test value of ``pair − baseline`` (hours) on the same trace and split, where the
        value is the mean weekly AvgWait (panel ``"AvgWait"``) or the MaxWait above (panel
        ``"MaxWait"``); colour = primary policy; dashed identity line; lines at 0 (the
        baseline, circled at (0, 0)); ``facet_wrap`` by trace and metric (one row per trace)
        with free scales in every panel; caption
        from :func:`baseline_caption` (omitted when the table has no baseline rows). Its data
        has columns ``trace, primary, backfill, metric, train, test``.

    Raises
    ------
    ConfigurationError
        When ``max_wait`` is unknown, no pair at that threshold has both a training and a test
        row, or the baseline has no row for a trace and split shown.
    """
    what = "train_test_pairs_plot"
    if max_wait not in ("worst", "mean"):
        raise ConfigurationError(f"{what}: max_wait must be 'worst' or 'mean', got {max_wait!r}")
    selected = select_rows(summary, what, _SUMMARY_COLUMNS, threshold=threshold)
    joined = _difference_table(summary, threshold, baseline, max_wait, what)
    if joined.height == 0:
        raise ConfigurationError(
            f"{what}: no policy pair with threshold {threshold!r} has both train and test rows "
            f"(traces: {available_values(selected, 'trace')}; "
            f"splits: {available_values(selected, 'split')})"
        )
    frame = joined.to_pandas()
    finite_only(frame, ["train", "test"])
    traces = level_order(frame["trace"], ())
    metrics = list(_DIFFERENCE_METRICS)
    make_categorical(frame, "trace", traces)
    make_categorical(frame, "metric", metrics)
    primaries = _policy_levels(frame, "primary")
    _policy_levels(frame, "backfill")
    # the baseline differs from itself by 0 on both splits
    base_points = pd.DataFrame(
        [(trace, metric) for trace in traces for metric in metrics], columns=["trace", "metric"]
    ).assign(train=0.0, test=0.0)
    make_categorical(base_points, "trace", traces)
    make_categorical(base_points, "metric", metrics)

    caption: str | None = None
    with contextlib.suppress(ConfigurationError):  # the caption is optional
        caption = baseline_caption(summary, baseline.threshold, baseline=baseline)
    max_text = "mean weekly MaxWait" if max_wait == "mean" else "worst weekly MaxWait"
    labels = wrapped_labs(
        x=f"training: pair − {baseline.name} (h)",
        y=f"test: pair − {baseline.name} (h)",
        title=(
            f"Training vs test difference with {baseline.name} of every policy pair, "
            f"Θ = {threshold_text(threshold)}: {', '.join(traces)}"
        ),
        subtitle=(
            f"AvgWait: mean weekly AvgWait; MaxWait: {max_text}; one point per primary × "
            "backfilling pair; circled: the baseline (0, 0)"
            + ("; diamond: the learned pair" if learned is not None else "")
        ),
        caption=caption,
    )
    plot = (
        ggplot(frame, aes(x="train", y="test"))
        + geom_hline(yintercept=0.0, colour="#999999", size=0.3)
        + geom_vline(xintercept=0.0, colour="#999999", size=0.3)
        + geom_abline(slope=1.0, intercept=0.0, linetype="dashed", colour="#555555")
        + geom_point(aes(colour="primary"), size=1.8, alpha=0.85, na_rm=True)
        + geom_point(data=base_points, size=5, shape="o", fill="none", colour="black", stroke=1.0)
        + facet_wrap(["trace", "metric"], scales="free", ncol=len(metrics))
        + policy_colour_scale(primaries, "primary policy")
        + labels
        + figure_theme()
    )
    if learned is not None:
        require_columns(learned, ("trace", "threshold", "primary", "backfill"), what)
        chosen = learned.filter(pl.col("threshold") == threshold).select(
            "trace", "primary", "backfill"
        )
        marked = joined.join(chosen, on=["trace", "primary", "backfill"], how="inner")
        if marked.height:
            points = marked.to_pandas()
            make_categorical(points, "trace", traces)
            make_categorical(points, "metric", metrics)
            plot += geom_point(
                data=points, size=3.4, shape="D", fill="none", colour="black", stroke=0.9
            )
    return plot


# Render off-screen unless the user forced a backend: must precede the matplotlib import.
os.environ.setdefault("MPLBACKEND", "Agg")
