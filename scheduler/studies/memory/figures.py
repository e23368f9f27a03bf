"""Figures of the memory-aware cluster study (the paper's figures, from the tables of
:mod:`scheduler.studies.memory.stats`): curves against the offered load or the second class's
memory, one colour per estimator variant, one panel per scheduler (and log), the t interval
over seeds as error bars (none with one seed; the baseline's is the point)."""

from __future__ import annotations

import pandas as pd
import polars as pl
from plotnine import (
    aes,
    facet_grid,
    geom_errorbar,
    geom_hline,
    geom_line,
    geom_point,
    ggplot,
    scale_colour_manual,
    scale_x_continuous,
    scale_y_log10,
)

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.figures import figure_theme, require_columns, wrapped_labs

__all__ = [
    "failures_figure",
    "slowdown_figure",
    "sweep_figure",
    "utilisation_figure",
    "weights_figure",
]

#: One colour per estimator variant, the same in every figure (the baseline grey).
_VARIANT_COLOURS = {
    "none": "#7f7f7f",
    "perceptron-implicit": "#1f77b4",
    "perceptron-explicit": "#d62728",
    "perceptron-implicit-raise": "#9467bd",
    "perceptron-implicit-raise-normalised": "#e377c2",
    "perceptron-implicit-normalised": "#17becf",
    "perceptron-explicit-normalised": "#ff7f0e",
    "history": "#2ca02c",
}
_OTHER_COLOURS = ("#8c564b", "#bcbd22", "#aec7e8", "#98df8a")

_COLUMNS = ("kind", "trace", "scheduler", "variant", "load", "second_memory_mb", "metric",
            "mean", "low", "high")  # fmt: skip


def _frame(table: pl.DataFrame, kind: str, metrics: dict[str, str], what: str) -> pd.DataFrame:
    """The rows of ``kind`` and ``metrics`` (name -> label) as pandas, with a ``panel`` label
    (the scheduler, and the log when there are several) and labelled metrics."""
    require_columns(table, _COLUMNS, what)
    part = table.filter((pl.col("kind") == kind) & pl.col("metric").is_in(list(metrics)))
    if part.height == 0:
        raise ConfigurationError(f"{what}: no {kind} run with {', '.join(metrics)}")
    several = part["trace"].n_unique() > 1
    panel = pl.col("scheduler").str.to_uppercase()
    if several:
        panel = pl.col("trace") + pl.lit(" ") + panel
    frame = part.with_columns(
        panel.alias("panel"), pl.col("metric").replace(metrics).alias("quantity")
    ).to_pandas()
    frame["quantity"] = pd.Categorical(frame["quantity"], categories=list(metrics.values()))
    # FCFS (the paper's) before EASY; logs in their order of appearance
    panels = list(dict.fromkeys(frame.sort_values("scheduler", key=_scheduler_rank)["panel"]))
    frame["panel"] = pd.Categorical(frame["panel"], categories=panels)
    return frame


def _scheduler_rank(schedulers: pd.Series) -> pd.Series:
    return schedulers.map(lambda name: (name != "fcfs", name))


def _variant_scale(variants: pd.Series) -> scale_colour_manual:
    """The variants' colours (:data:`_VARIANT_COLOURS`; unknown labels in a fixed order)."""
    levels = sorted(set(variants), key=lambda v: (v not in _VARIANT_COLOURS, v))
    others = iter(_OTHER_COLOURS * (1 + len(levels) // len(_OTHER_COLOURS)))
    values = {v: _VARIANT_COLOURS.get(v) or next(others) for v in levels}
    return scale_colour_manual(values=values, breaks=levels)


def _curves(frame: pd.DataFrame, x: str, colour: str, *, facets: str) -> ggplot:
    bars = frame[frame["low"].notna() & frame["high"].notna() & (frame["high"] > frame["low"])]
    plot = (
        ggplot(frame, aes(x, "mean", colour=colour, group=colour))
        + geom_line()
        + geom_point(size=1.5)
        + facet_grid(facets, scales="free_y")
        + figure_theme()
    )
    if len(bars):
        plot += geom_errorbar(aes(ymin="low", ymax="high"), data=bars, width=0.02)
    if colour == "variant":
        plot += _variant_scale(frame["variant"])
    if x == "load":
        # ticks at the simulated loads: default breaks put labels on the panels' edges, where
        # neighbouring panels' labels overlap ("1.25" over "0.25")
        ticks = sorted(frame["load"].unique())
        plot += scale_x_continuous(breaks=ticks[::2] if len(ticks) > 6 else ticks)
    return plot


def utilisation_figure(intervals: pl.DataFrame) -> ggplot:
    """Effective (successful runs only) and total (failed runs included) utilisation against
    the offered load, per estimator variant; rows: the two utilisations, columns: schedulers."""
    metrics = {"utilisation": "effective", "utilisation_with_waste": "total"}
    frame = _frame(intervals, "load", metrics, "utilisation figure")
    return _curves(frame, "load", "variant", facets="quantity ~ panel") + wrapped_labs(
        title="Utilisation against offered load, with and without memory estimation",
        subtitle="effective: node-seconds of successful runs; total: failed runs included",
        x="offered load (eq. 1)", y="utilisation", colour="estimator",
    )  # fmt: skip


def slowdown_figure(intervals: pl.DataFrame) -> ggplot:
    """Mean slowdown (eq. 2, (W + T)/T) and mean bounded slowdown (τ = 10 s) against the offered
    load (log scale), per estimator variant and scheduler."""
    metrics = {"avg_stretch": "slowdown (eq. 2)", "avg_bsld": "bounded slowdown"}
    frame = _frame(intervals, "load", metrics, "slowdown figure")
    return (
        _curves(frame, "load", "variant", facets="quantity ~ panel")
        + scale_y_log10()
        + wrapped_labs(
            title="Slowdown against offered load",
            subtitle="mean over jobs of (wait + run) / run; bounded: run time at least 10 s",
            x="offered load (eq. 1)",
            y="mean slowdown (log scale)",
            colour="estimator",
        )
    )


def weights_figure(intervals: pl.DataFrame) -> ggplot:
    """The perceptron's final weights against the offered load, one line per feature; rows:
    the feedback, columns: schedulers."""
    require_columns(intervals, (*_COLUMNS, "estimator"), "weights figure")
    part = intervals.filter(
        (pl.col("estimator") == "perceptron") & pl.col("metric").str.starts_with("w_")
    )
    if part.height == 0:
        raise ConfigurationError("weights figure: no perceptron run (memory.estimators)")
    names = {m: m.removeprefix("w_") for m in sorted(set(part["metric"]))}
    frame = _frame(part, "load", names, "weights figure")
    # short row labels: the feedback (and gradient), one word per line
    frame["feedback"] = frame["variant"].map(
        lambda v: v.removeprefix("perceptron-").replace("-", "\n")
    )
    return (
        _curves(frame, "load", "quantity", facets="feedback ~ panel")
        + geom_hline(yintercept=0.0, linetype="dashed", colour="grey")
        + wrapped_labs(
            title="The perceptron's weights at the end of the run, against offered load",
            subtitle="one line per feature (free fraction per class, the job's share of the "
            "free nodes, log request, log queue length, bias)",
            x="offered load (eq. 1)",
            y="final weight",
            colour="feature",
        )
    )


def failures_figure(intervals: pl.DataFrame) -> ggplot:
    """Failed runs (allocated memory below the memory used) against the offered load."""
    frame = _frame(intervals, "load", {"failed_runs": "failed runs"}, "failures figure")
    return _curves(frame, "load", "variant", facets="quantity ~ panel") + wrapped_labs(
        title="Failed submissions against offered load",
        subtitle="runs given less memory than they used; each is resubmitted at once",
        x="offered load (eq. 1)", y="failed runs", colour="estimator",
    )  # fmt: skip


def sweep_figure(ratios: pl.DataFrame) -> ggplot:
    """Effective utilisation with estimation / without, against the memory of the second node
    class (MB), at the sweep's load; the dashed line is 1 (no gain)."""
    metrics = {"utilisation_ratio": "effective utilisation ratio"}
    frame = _frame(ratios, "sweep", metrics, "memory sweep figure")
    load = ", ".join(f"{x:g}" for x in sorted(set(frame["load"])))
    return (
        _curves(frame, "second_memory_mb", "variant", facets="quantity ~ panel")
        + geom_hline(yintercept=1.0, linetype="dashed", colour="grey")
        + wrapped_labs(
            title="Utilisation gain of estimation against the second class's memory",
            subtitle=f"effective utilisation with / without estimation at offered load {load}",
            x="memory per node of the second class (MB)",
            y="ratio to no estimation",
            colour="estimator",
        )
    )
