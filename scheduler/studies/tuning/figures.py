"""Figures of the queue-tuning study of EASY backfilling (plotnine).

The study simulates every combination of a primary queue policy, a backfilling queue policy and a
waiting-time threshold Θ on resampled weeks of a trace (training and test weeks) and compares it
with the baseline EASY-FCFS-FCFS without threshold. The builders here are pure functions: a
:mod:`polars` table in, a :class:`plotnine.ggplot` out (nothing is drawn or written).
:func:`save_figure` then renders a plot to PNG and PDF atomically, with provenance metadata.

Times are stored in seconds in the tables and shown in hours on the axes; relative values are
ratios to the baseline on the same week (1 = as good as EASY-FCFS-FCFS, below 1 = better).

The three input tables are

* the *weekly relative* table (one row per trace, split, week_index, primary, backfill,
  threshold) with ``avg_wait_s`` and ``relative_avg_wait`` among others,
* the *summary* table (one row per trace, split, primary, backfill, threshold) with the weekly
  means, deciles ``relative_avg_wait_d1`` … ``relative_avg_wait_d9`` and worst values,
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
    element_text,
    facet_grid,
    facet_wrap,
    geom_abline,
    geom_errorbar,
    geom_errorbarh,
    geom_line,
    geom_point,
    ggplot,
    position_dodge,
    scale_colour_manual,
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
    """Reject a split that is not ``"train"`` or ``"test"``."""
    if split not in _SPLITS:
        raise ConfigurationError(f"{what}: split must be 'train' or 'test', got {split!r}")


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
        ``"train"`` or ``"test"`` weeks.
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
            x=f"week ({split} weeks, resampled)",
            y=y_title,
            title=f"{trace}: weekly average waiting time per primary policy",
            subtitle=(
                f"EASY-<primary>-{backfill}, Θ = {threshold_text(threshold)}, "
                f"{split} weeks 0–{shown - 1}"
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
    """Every (primary, backfilling) policy pair: relative AvgWait against MaxWait.

    Parameters
    ----------
    summary
        The summary table (one row per trace, split, primary, backfill, threshold).
    trace
        Name of the trace to show.
    split
        ``"train"`` or ``"test"`` weeks.
    threshold
        Waiting-time threshold label of the pairs shown.
    max_wait
        ``"worst"``: y = largest MaxWait over the weeks (``worst_max_wait_s``); ``"mean"``:
        y = mean weekly MaxWait (``mean_max_wait_s``). Shown in hours.

    Returns
    -------
    ggplot
        One point per pair: x = mean weekly AvgWait relative to EASY-FCFS-FCFS with horizontal
        bars from the 1st to the 9th decile, y = MaxWait (h), colour = primary policy, shape =
        backfilling policy; the baseline (EASY-FCFS-FCFS, Θ = none, same split) is circled in
        black; dashed vertical line at 1.

    Raises
    ------
    ConfigurationError
        When no row matches trace, split and threshold, or ``max_wait`` is unknown.
    """
    what = "pair_scatter_plot"
    _check_split(split, what)
    if max_wait not in ("worst", "mean"):
        raise ConfigurationError(f"{what}: max_wait must be 'worst' or 'mean', got {max_wait!r}")
    source = "worst_max_wait_s" if max_wait == "worst" else "mean_max_wait_s"
    selected = select_rows(
        summary, what, [*_SUMMARY_COLUMNS, source], trace=trace, split=split, threshold=threshold
    )
    frame = _summary_frame(selected, [source])
    add_hours(frame, source, "max_wait_h")
    finite_only(frame, ["max_wait_h"])
    primaries = _policy_levels(frame, "primary")
    backfills = _policy_levels(frame, "backfill")

    base_rows = summary.filter(
        (pl.col("trace") == trace)
        & (pl.col("split") == split)
        & (pl.col("primary") == baseline.primary)
        & (pl.col("backfill") == baseline.backfill)
        & (pl.col("threshold") == baseline.threshold)
    )
    y_title = (
        "worst weekly maximum waiting time (h)"
        if max_wait == "worst"
        else "mean weekly maximum waiting time (h)"
    )
    plot = (
        ggplot(frame, aes(x="mean_relative_avg_wait", y="max_wait_h"))
        + reference_line("x")
        + geom_errorbarh(
            aes(xmin="relative_avg_wait_d1", xmax="relative_avg_wait_d9", colour="primary"),
            height=0,
            alpha=0.45,
            size=0.5,
            na_rm=True,
        )
        + geom_point(aes(colour="primary", shape="backfill"), size=2.6, na_rm=True)
        + policy_colour_scale(primaries, "primary policy")
        + policy_shape_scale(backfills, "backfilling policy")
        + wrapped_labs(
            x=f"mean weekly AvgWait {_relative(baseline)} (bars: deciles 1–9)",
            y=y_title,
            title=f"{trace}: all primary × backfilling policy pairs",
            subtitle=(
                f"Θ = {threshold_text(threshold)}, {split} weeks; "
                f"circled: baseline {baseline.name}"
            ),
        )
        + figure_theme()
    )
    if base_rows.height:
        point = base_rows.row(0, named=True)
        x = point["mean_relative_avg_wait"]
        y = point[source] / SECONDS_PER_HOUR if point[source] is not None else math.nan
        if x is not None and math.isfinite(x) and math.isfinite(y):
            plot += annotate(
                "point", x=x, y=y, size=6, shape="o", fill="none", colour="black", stroke=1.0
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
        ``"train"`` or ``"test"`` weeks.
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
                f"Θ = {threshold_text(threshold)}, {split} weeks; points: mean, bars: deciles 1–9"
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
    baseline: Baseline = DEFAULT_BASELINE,
) -> ggplot:
    """Relative AvgWait of each primary policy without threshold beside the same with Θ.

    Parameters
    ----------
    summary
        The summary table.
    trace
        Name of the trace to show.
    split
        ``"train"`` or ``"test"`` weeks.
    backfill
        The backfilling queue policy of every bar.
    threshold
        The threshold label compared with ``"none"`` (must differ from ``"none"``).

    Returns
    -------
    ggplot
        x = primary policy, y = mean weekly AvgWait relative to EASY-FCFS-FCFS with bars from
        the 1st to the 9th decile, dodged by setting (colour ``"Θ = none"`` vs ``"Θ = 20 h"``);
        dashed line at 1. Its data has one row per (primary policy, setting).

    Raises
    ------
    ConfigurationError
        When ``threshold`` is ``"none"`` or either setting has no row for trace, split and
        backfilling policy.
    """
    what = "threshold_comparison_plot"
    _check_split(split, what)
    if threshold == NO_THRESHOLD:
        raise ConfigurationError(
            f"{what}: threshold must differ from {NO_THRESHOLD!r} (it is compared with it)"
        )
    parts = [
        select_rows(
            summary,
            what,
            _SUMMARY_COLUMNS,
            trace=trace,
            split=split,
            backfill=backfill,
            threshold=label,
        )
        for label in (NO_THRESHOLD, threshold)
    ]
    frame = _summary_frame(pl.concat(parts, how="vertical_relaxed"), ["threshold"])
    settings = [f"Θ = {threshold_text(label)}" for label in (NO_THRESHOLD, threshold)]
    frame["setting"] = frame["threshold"].map(lambda label: f"Θ = {threshold_text(label)}")
    make_categorical(frame, "setting", settings)
    _policy_levels(frame, "primary")
    dodge = position_dodge(width=0.6)
    return (
        ggplot(frame, aes(x="primary", y="mean_relative_avg_wait", colour="setting"))
        + reference_line()
        + geom_errorbar(
            aes(ymin="relative_avg_wait_d1", ymax="relative_avg_wait_d9"),
            position=dodge,
            width=0.4,
            na_rm=True,
        )
        + geom_point(position=dodge, size=2.4, na_rm=True)
        + scale_colour_manual(
            values=dict(zip(settings, ("#555555", "#D55E00"), strict=True)),
            limits=settings,
            name="waiting-time\nthreshold",
        )
        + wrapped_labs(
            x="primary policy",
            y=f"mean weekly AvgWait\n{_relative(baseline)}",
            title=(
                f"{trace}: waiting-time threshold Θ = {threshold_text(threshold)} "
                f"vs none, backfilling {backfill}"
            ),
            subtitle=f"EASY-<primary>-{backfill}, {split} weeks; points: mean, bars: deciles 1–9",
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


def train_test_pairs_plot(
    summary: pl.DataFrame, *, threshold: str = "20h", baseline: Baseline = DEFAULT_BASELINE
) -> ggplot:
    """Training against test relative AvgWait of every policy pair, one panel per trace.

    Parameters
    ----------
    summary
        The summary table (both splits).
    threshold
        Waiting-time threshold label of the pairs shown.

    Returns
    -------
    ggplot
        One point per (trace, primary, backfill) present in both splits: x = training, y = test
        mean weekly AvgWait relative to EASY-FCFS-FCFS; colour = primary policy; dashed identity
        line; the baseline (1, 1) circled in black; ``facet_wrap`` by trace with free scales;
        caption from :func:`baseline_caption` (omitted when the table has no baseline rows).

    Raises
    ------
    ConfigurationError
        When no pair at that threshold has both a training and a test row.
    """
    what = "train_test_pairs_plot"
    selected = select_rows(summary, what, _SUMMARY_COLUMNS, threshold=threshold)
    keys = ["trace", "primary", "backfill"]

    def side(split: str) -> pl.DataFrame:
        return selected.filter(pl.col("split") == split).select(
            *keys, pl.col("mean_relative_avg_wait").cast(pl.Float64).alias(split)
        )

    joined = side("train").join(side("test"), on=keys, how="inner")
    if joined.height == 0:
        raise ConfigurationError(
            f"{what}: no policy pair with threshold {threshold!r} has both train and test rows "
            f"(traces: {available_values(selected, 'trace')}; "
            f"splits: {available_values(selected, 'split')})"
        )
    frame = joined.sort(keys).to_pandas()
    finite_only(frame, ["train", "test"])
    traces = level_order(frame["trace"], ())
    make_categorical(frame, "trace", traces)
    primaries = _policy_levels(frame, "primary")
    _policy_levels(frame, "backfill")
    # The baseline scores exactly 1 against itself on both splits.
    base_points = pd.DataFrame({"trace": traces, "train": 1.0, "test": 1.0})
    make_categorical(base_points, "trace", traces)

    caption: str | None = None
    with contextlib.suppress(ConfigurationError):  # the caption is optional
        caption = baseline_caption(summary, baseline.threshold, baseline=baseline)
    labels = wrapped_labs(
        x=f"training: mean weekly AvgWait {_relative(baseline)}",
        y=f"test: mean weekly AvgWait\n{_relative(baseline)}",
        title=(
            f"Training vs test relative AvgWait of every policy pair, "
            f"Θ = {threshold_text(threshold)}: {', '.join(traces)}"
        ),
        subtitle=f"one point per primary × backfilling pair; circled: {baseline.name}",
        caption=caption,
    )
    return (
        ggplot(frame, aes(x="train", y="test"))
        + geom_abline(slope=1.0, intercept=0.0, linetype="dashed", colour="#555555")
        + geom_point(aes(colour="primary"), size=1.8, alpha=0.85, na_rm=True)
        + geom_point(data=base_points, size=5, shape="o", fill="none", colour="black", stroke=1.0)
        + facet_wrap("trace", scales="free")
        + policy_colour_scale(primaries, "primary policy")
        + labels
        + figure_theme()
    )


# Render off-screen unless the user forced a backend: must precede the matplotlib import.
os.environ.setdefault("MPLBACKEND", "Agg")
