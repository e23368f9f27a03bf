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
    facet_wrap,
    geom_errorbar,
    geom_hline,
    geom_line,
    geom_point,
    geom_segment,
    ggplot,
    scale_colour_manual,
    scale_linetype_manual,
    scale_x_continuous,
    scale_y_log10,
)

from scheduler.core.errors import ConfigurationError
from scheduler.sim.memory import PAPER_FEEDBACK
from scheduler.studies.common.figures import figure_theme, require_columns, wrapped_labs

__all__ = [
    "failures_figure",
    "paper_slowdown_figure",
    "paper_utilisation_figure",
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


# -- the paper's figures, drawn as the paper draws them -----------------------------------------

#: The paper's line styles: without estimation solid, with estimation dotted, total utilisation
#: (Figure 6) dashed; the published claim as a dash-dot segment.
_STYLES = {"without estimation": "solid", "with estimation": "dotted",
           "total utilisation": "dashed", "the paper's claim": "dashdot"}  # fmt: skip


def _paper_rows(
    intervals: pl.DataFrame,
    panels: dict[str, tuple[tuple[str, str, str], ...]],
    claims: dict[str, tuple[float, bool]],
    what: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The FCFS load curves of each panel (label -> its curves, each (metric, feedback, style);
    the baseline drawn once per panel, from the first curve's metric) and, per panel with a
    claim (label -> (factor, along)), where the paper's claim would put the estimator's curve:
    ``factor`` times the baseline at every load (``along``) or at the highest load, as a level
    over the loads. Feedback "implicit" covers implicit-raise."""
    require_columns(intervals, (*_COLUMNS, "estimator", "feedback"), what)
    fcfs = intervals.filter((pl.col("kind") == "load") & (pl.col("scheduler") == "fcfs"))
    if fcfs.filter(pl.col("estimator") == "perceptron").height == 0:
        raise ConfigurationError(f"{what}: no FCFS perceptron run (memory.schedulers, "
                                 "memory.estimators)")  # fmt: skip
    paper_feedback = pl.col("feedback").replace_strict(PAPER_FEEDBACK, default="")
    frames, segments = [], []
    for label, curves in panels.items():
        panel = []
        for index, (metric, feedback, style) in enumerate(curves):
            learners = (pl.col("estimator") == "perceptron") & (paper_feedback == feedback)
            chosen = learners | (pl.col("variant") == "none") if index == 0 else learners
            panel.append(fcfs.filter((pl.col("metric") == metric) & chosen).with_columns(
                pl.lit(label).alias("figure"),
                pl.when(pl.col("variant") == "none").then(pl.lit("without estimation"))
                .otherwise(pl.lit(style)).alias("style"),
            ).to_pandas())  # fmt: skip
        frames += panel
        if label in claims:
            factor, along = claims[label]
            base = panel[0][panel[0]["variant"] == "none"].sort_values("load")
            x, y = base["load"].to_numpy(), factor * base["mean"].to_numpy()
            if not along and len(x):
                x, y = x[[0, -1]], y[[-1, -1]]
            segments += [{"figure": label, "x": x[i], "xend": x[i + 1], "y": y[i],
                          "yend": y[i + 1], "style": "the paper's claim"}
                         for i in range(len(x) - 1)]  # fmt: skip
    frame = pd.concat(frames, ignore_index=True)
    order = list(panels)
    frame["figure"] = pd.Categorical(frame["figure"], categories=order)
    frame["series"] = frame["variant"] + " " + frame["style"]
    segment = pd.DataFrame(segments, columns=["figure", "x", "xend", "y", "yend", "style"])
    segment["figure"] = pd.Categorical(segment["figure"], categories=order)
    return frame, segment


def _paper_plot(frame: pd.DataFrame, segment: pd.DataFrame) -> ggplot:
    plot = (
        ggplot(frame, aes("load", "mean", colour="variant", linetype="style", group="series"))
        + geom_line()
        + geom_point(size=1.2)
        + facet_wrap("figure", scales="free_y", ncol=2)
        + _variant_scale(frame["variant"])
        + scale_linetype_manual(values=_STYLES)
        + figure_theme()
    )
    bars = frame[frame["low"].notna() & (frame["high"] > frame["low"])]
    if len(bars):
        plot += geom_errorbar(aes(ymin="low", ymax="high"), data=bars, width=0.02)
    if len(segment):
        plot += geom_segment(aes(x="x", xend="xend", y="y", yend="yend", linetype="style"),
                             data=segment, colour="black", inherit_aes=False)  # fmt: skip
    return plot


def paper_utilisation_figure(intervals: pl.DataFrame) -> ggplot:
    """Figures 4, 5, 6 and 10 of the paper as it draws them (FCFS, against the offered load):
    effective utilisation with (dotted) and without (solid) estimation, implicit and explicit
    feedback; effective against total (dashed) utilisation, implicit; failed runs, implicit.
    The dash-dot segment is the baseline's utilisation at the highest load times the paper's
    claimed gain (1.33 implicit, 1.31 explicit): where the paper's result would put the
    estimator's curve at saturation."""
    effective = ("utilisation", "implicit", "with estimation")
    panels = {
        "Fig. 4: effective utilisation, implicit": (effective,),
        "Fig. 5: effective utilisation, explicit": (("utilisation", "explicit",
                                                     "with estimation"),),
        "Fig. 6: effective and total, implicit": (
            effective, ("utilisation_with_waste", "implicit", "total utilisation")),
        "Fig. 10: failed runs, implicit": (("failed_runs", "implicit", "with estimation"),),
    }  # fmt: skip
    claims = {"Fig. 4: effective utilisation, implicit": (1.33, False),
              "Fig. 5: effective utilisation, explicit": (1.31, False)}  # fmt: skip
    frame, segment = _paper_rows(intervals, panels, claims, "paper utilisation figure")
    return _paper_plot(frame, segment) + wrapped_labs(
        title="The paper's Figures 4, 5, 6 and 10 redrawn (FCFS)",
        subtitle="solid: without estimation; dotted: with; dashed: total utilisation (failed "
        "runs included); dash-dot: the paper's claimed gain applied to the baseline at "
        "the highest load",
        x="offered load (eq. 1)", y="value", colour="estimator", linetype="",
    )  # fmt: skip


def paper_slowdown_figure(intervals: pl.DataFrame) -> ggplot:
    """Figures 7 and 8 of the paper as it draws them (FCFS): mean slowdown (eq. 2) against the
    offered load with (dotted) and without (solid) estimation, log scale. The dash-dot
    line is half the baseline's slowdown at every load (the paper: halved over most loads)."""
    panels = {
        "Fig. 7: slowdown, implicit": (("avg_stretch", "implicit", "with estimation"),),
        "Fig. 8: slowdown, explicit": (("avg_stretch", "explicit", "with estimation"),),
    }
    claims = dict.fromkeys(panels, (0.5, True))
    frame, segment = _paper_rows(intervals, panels, claims, "paper slowdown figure")
    return (
        _paper_plot(frame, segment)
        + scale_y_log10()
        + wrapped_labs(
            title="The paper's Figures 7 and 8 redrawn (FCFS)",
            subtitle="mean slowdown (W + T)/T; solid: without estimation; dotted: with; "
            "dash-dot: half the baseline's slowdown (the paper: halved over most loads)",
            x="offered load (eq. 1)", y="mean slowdown (log scale)", colour="estimator",
            linetype="",
        )
    )
