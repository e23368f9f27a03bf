"""Figures of the redirection study: heat maps of the median ratios over (α, θ), and box plots
over weeks of the (α, θ) chosen on the training weeks."""

from __future__ import annotations

import polars as pl
from plotnine import (
    aes,
    facet_grid,
    geom_boxplot,
    geom_hline,
    geom_text,
    geom_tile,
    ggplot,
    scale_fill_gradient2,
    scale_y_log10,
)

from scheduler.studies.common.figures import figure_theme, require_columns, wrapped_labs

__all__ = ["best_boxplot", "ratio_heatmap"]


def ratio_heatmap(heatmap: pl.DataFrame, metric: str = "avg_bsld") -> ggplot:
    """Median over weeks of the ratio redirection / baseline of ``metric`` (``avg_bsld`` or
    ``max_bsld``) over α (x) and θ (y), one panel per log (columns) and balance option (rows);
    blue below 1 (redirection helps), red above, the value and the median number of
    redirections per week as text."""
    column = f"median_ratio_{metric}"
    require_columns(heatmap, ("trace", "balance", "alpha", "theta", column,
                              "median_redirections"), "redirection heat map")  # fmt: skip
    frame = heatmap.with_columns(
        pl.col("alpha").map_elements(lambda a: f"{a:g}", return_dtype=pl.String).alias("α"),
        pl.col("theta").cast(pl.Int64).cast(pl.String).alias("θ"),
        pl.when(pl.col("balance")).then(pl.lit("balance on")).otherwise(pl.lit("balance off"))
        .alias("option"),
        (pl.col(column).round(2).cast(pl.String) + pl.lit("\n(")
         + pl.col("median_redirections").round(0).cast(pl.Int64).cast(pl.String) + pl.lit(")"))
        .alias("label"),
    ).to_pandas()  # fmt: skip
    thetas = sorted(heatmap["theta"].unique().to_list())
    frame["θ"] = frame["θ"].astype("category").cat.set_categories([str(int(t)) for t in thetas])
    name = "AVEbsld" if metric == "avg_bsld" else "MaxBsld"
    return (
        ggplot(frame, aes("α", "θ", fill=column))
        + geom_tile(colour="white")
        + geom_text(aes(label="label"), size=6)
        + facet_grid("option ~ trace")
        + scale_fill_gradient2(
            low="#2166ac", mid="#f7f7f7", high="#b2182b", midpoint=1.0, name=f"{name} ratio"
        )
        + wrapped_labs(
            title=f"Redirection / EASY on the whole machine: median {name} ratio over weeks",
            subtitle="dedicated share α (x), threshold θ in submissions (y); in brackets the "
            "median number of redirections per week",
            x="α (dedicated share of the processors)",
            y="θ",
        )
        + figure_theme()
    )


def best_boxplot(ratios: pl.DataFrame, best: pl.DataFrame) -> ggplot:
    """Per log: the ratios (AVEbsld and MaxBsld) over the test weeks of the (α, θ) chosen on
    the training weeks, one box per balance option; the dashed line is 1 (the baseline)."""
    require_columns(best, ("trace", "balance", "alpha", "theta"), "best cells")
    chosen = ratios.join(best.select("trace", "balance", "alpha", "theta"),
                         on=["trace", "balance", "alpha", "theta"])  # fmt: skip
    long = chosen.filter(pl.col("split") == "test").unpivot(
        index=["trace", "balance", "week"], on=["ratio_avg_bsld", "ratio_max_bsld"],
        variable_name="metric", value_name="ratio",
    ).with_columns(
        pl.col("metric").replace({"ratio_avg_bsld": "AVEbsld", "ratio_max_bsld": "MaxBsld"}),
        pl.when(pl.col("balance")).then(pl.lit("on")).otherwise(pl.lit("off")).alias("balance"),
    )  # fmt: skip
    return (
        ggplot(long.to_pandas(), aes("balance", "ratio"))
        + geom_boxplot()
        + geom_hline(yintercept=1.0, linetype="dashed", colour="grey")
        + facet_grid("metric ~ trace", scales="free_y")
        + scale_y_log10()
        + wrapped_labs(
            title="The (α, θ) chosen on the training weeks, on the test weeks",
            subtitle="ratio redirection / EASY per test week (log scale); below 1: redirection "
            "helps",
            x="load balancing (no redirection while the dedicated queue waits)",
            y="ratio to the baseline",
        )
        + figure_theme()
    )
