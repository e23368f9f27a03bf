"""Figures of the RL benchmark: every policy's mean bounded slowdown on each test sequence (one
panel per log and backfilling, the two modes side by side), and the agent's learning curve."""

from __future__ import annotations

import polars as pl
from plotnine import (
    aes,
    facet_grid,
    facet_wrap,
    geom_boxplot,
    geom_line,
    geom_point,
    ggplot,
    position_dodge,
    scale_y_log10,
)

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.figures import figure_theme, require_columns, wrapped_labs

__all__ = ["learning_curve_figure", "sequences_figure"]


def sequences_figure(runs: pl.DataFrame) -> ggplot:
    """Per-sequence mean bounded slowdown (log scale) of every policy: a box and the points of
    the sequences, the compatible mode beside schedlab's EASY."""
    require_columns(runs, ("trace", "mode", "backfill", "policy", "avg_bsld"), "rl sequences")
    if runs.height == 0:
        raise ConfigurationError("rl sequences figure: no run")
    frame = runs.with_columns(
        pl.when(pl.col("backfill")).then(pl.lit("with backfilling"))
        .otherwise(pl.lit("without backfilling")).alias("backfilling"),
        pl.col("policy").str.to_uppercase().alias("policy"),
    ).to_pandas()  # fmt: skip
    dodge = position_dodge(width=0.8)
    return (
        ggplot(frame, aes("policy", "avg_bsld", colour="mode"))
        + geom_boxplot(position=dodge, outlier_shape="", width=0.7)
        + geom_point(position=dodge, size=0.8, alpha=0.6)
        + scale_y_log10()
        + facet_grid("trace ~ backfilling", scales="free_y")
        + figure_theme()
        + wrapped_labs(
            title="Mean bounded slowdown of each test sequence",
            subtitle="RLScheduler's scheduler and scores (compatible) beside schedlab's EASY",
            x="policy", y="mean bounded slowdown (τ = 10 s, log scale)", colour="mode",
        )
    )  # fmt: skip


def learning_curve_figure(curves: pl.DataFrame) -> ggplot:
    """The agent's mean bounded slowdown of the training episodes against the decisions of
    training, one panel per log."""
    require_columns(curves, ("trace", "timesteps", "episode_bsld"), "rl learning curve")
    if curves.height == 0:
        raise ConfigurationError("rl learning curve: no training episode")
    return (
        ggplot(curves.to_pandas(), aes("timesteps", "episode_bsld"))
        + geom_point(size=0.6, alpha=0.3)
        + geom_line(aes(y="smoothed_bsld"), colour="#d62728")
        + scale_y_log10()
        + facet_wrap("~trace", scales="free_y")
        + figure_theme()
        + wrapped_labs(
            title="PPO learning curve",
            subtitle="mean bounded slowdown of each training sequence; red: running median",
            x="decisions of training", y="mean bounded slowdown (log scale)",
        )
    )  # fmt: skip
