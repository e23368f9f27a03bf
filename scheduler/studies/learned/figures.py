"""Figures of the learned-priority-function study: the evaluation's box plots, the score
convergence curve, and a learned function's surface."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import polars as pl
from plotnine import (
    aes,
    element_text,
    facet_grid,
    facet_wrap,
    geom_boxplot,
    geom_hline,
    geom_line,
    geom_point,
    geom_tile,
    ggplot,
    scale_fill_gradient,
    scale_x_log10,
    scale_y_log10,
    theme,
)

from scheduler.studies.common.figures import (
    figure_theme,
    make_categorical,
    require_columns,
    wrapped_labs,
)

__all__ = ["convergence_plot", "evaluation_boxplot", "function_surface_plot"]


def evaluation_boxplot(
    evaluation: pl.DataFrame, policies: Sequence[str], modes: Sequence[str]
) -> ggplot:
    """AVEbsld of every sequence per policy (box plots, log10 axis), one panel per workload
    (rows, in the table's order) and mode (columns); ``policies`` and ``modes`` give the
    order."""
    require_columns(evaluation, ("workload", "mode", "policy", "avg_bsld"), "evaluation")
    frame = evaluation.select("workload", "mode", "policy", "avg_bsld").to_pandas()
    make_categorical(frame, "policy", list(policies))
    make_categorical(frame, "mode", list(modes))
    # workloads in the order of the table (the config's order)
    workloads = evaluation["workload"].unique(maintain_order=True).to_list()
    make_categorical(frame, "workload", workloads)
    counts = evaluation.group_by("workload").agg(pl.len().alias("count"))
    runs = max(int(counts["count"].max()), 1)
    sequences = runs // max(evaluation.select("mode", "policy").n_unique(), 1)
    return (
        ggplot(frame, aes("policy", "avg_bsld"))
        + geom_boxplot(outlier_size=0.8)
        + facet_grid("workload ~ mode", scales="free_y")
        + scale_y_log10()
        + wrapped_labs(
            title="AVEbsld of each 15-day sequence per policy",
            subtitle=f"up to {sequences} sequences per workload; log scale; LF<k>: the "
            "rank-k learned function",
            x="policy",
            y="AVEbsld (τ = 10 s)",
        )
        + figure_theme()
        + theme(axis_text_x=_rotated())
    )


def _rotated():

    return element_text(rotation=45, ha="right")


def convergence_plot(convergence: pl.DataFrame, published: float | None = 0.02) -> ggplot:
    """The scores' normalised standard deviation against the number of trials (log-log), with
    the published study's value at 256,000 trials as a dashed line."""
    require_columns(convergence, ("trials", "normalised_std"), "convergence")
    frame = convergence.to_pandas()
    plot = (
        ggplot(frame, aes("trials", "normalised_std"))
        + geom_line()
        + geom_point()
        + scale_x_log10()
        + scale_y_log10()
        + wrapped_labs(
            title="Convergence of the trial scores",
            subtitle="normalised standard deviation of a tuple's scores over repeated runs",
            x="trials per tuple",
            y="normalised std of the scores",
        )
        + figure_theme()
    )
    if published is not None:
        plot = plot + geom_hline(yintercept=published, linetype="dashed", colour="grey")
    return plot


def function_surface_plot(
    evaluate: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    label: str,
    *,
    r_range: tuple[float, float] = (1.0, 86400.0 * 2),
    n_range: tuple[float, float] = (1.0, 256.0),
    s_range: tuple[float, float] = (1.0, 86400.0),
    points: int = 60,
) -> ggplot:
    """A learned function over (r, n) at the median s and over (r, s) at n = 16: two panels of
    tiles coloured by the function's rank-preserving value (its order within the panel:
    0 = scheduled first)."""
    r = np.geomspace(*r_range, points)
    n = np.geomspace(*n_range, points)
    s = np.geomspace(*s_range, points)
    rows = []
    for panel, (x, y, fixed) in {
        "over (r, n), s = 1 h": (r, n, ("s", 3600.0)),
        "over (r, s), n = 16": (r, s, ("n", 16.0)),
    }.items():
        gx, gy = np.meshgrid(x, y, indexing="ij")
        if fixed[0] == "s":
            value = evaluate(gx.ravel(), gy.ravel(), np.full(gx.size, fixed[1]))
        else:
            value = evaluate(gx.ravel(), np.full(gx.size, fixed[1]), gy.ravel())
        order = pd.Series(value).rank(pct=True).to_numpy()
        rows.append(
            pd.DataFrame({"x": gx.ravel(), "y": gy.ravel(), "order": order, "panel": panel})
        )
    frame = pd.concat(rows, ignore_index=True)
    return (
        ggplot(frame, aes("x", "y", fill="order"))
        + geom_tile()
        + facet_wrap("~panel", scales="free")
        + scale_x_log10()
        + scale_y_log10()
        + scale_fill_gradient(low="#fff7ec", high="#7f0000", name="priority\n(0 = first)")
        + wrapped_labs(
            title=f"Learned function {label}",
            subtitle="x: processing time r (s); y: processors n (left) or submit time s (right)",
            x="r (s)",
            y="n or s",
        )
        + figure_theme()
    )
