"""Statistics of the redirection study: per week, the ratio of each (α, θ) run to the baseline
EASY run on the whole machine; medians over weeks; the (α, θ) chosen on the training weeks and
its ratios on the test weeks.

What is independent of what: each week is simulated alone from an empty machine; the weeks of a
log are different periods of one machine (not independent samples of a population, and the
chosen weeks are the loaded ones). A median over ten weeks describes those weeks.
"""

from __future__ import annotations

import polars as pl

from scheduler.core.errors import ConfigurationError

__all__ = [
    "GRID_COLUMNS",
    "ONLINE_COLUMNS",
    "RUN_FIGURES",
    "best_cells",
    "heatmap_table",
    "online_table",
    "week_ratios",
]

#: The figures of :func:`~scheduler.sim.metrics.run_figures` kept per run (τ = the study's
#: ``tau_s``; ``utilisation`` the useful work, ``utilisation_with_waste`` with the killed runs'
#: ``wasted_proc_s`` added; ``docs/glossary.md``).
RUN_FIGURES = (
    "avg_bsld", "max_bsld", "avg_wait_s", "utilisation", "utilisation_with_waste",
    "wasted_proc_s",
)  # fmt: skip

#: One row per (log, week, α, θ, balance) run; the baseline has alpha 0 and theta inf.
GRID_COLUMNS: dict[str, pl.DataType] = {
    "trace": pl.String(),
    "week": pl.Int64(),
    "split": pl.String(),
    "alpha": pl.Float64(),
    "theta": pl.Float64(),
    "balance": pl.Boolean(),
    "jobs": pl.Int64(),
    **{name: pl.Float64() for name in RUN_FIGURES},
    "redirections": pl.Int64(),
}


#: One row per online-θ run (log, week, α, balance, selector): the grid's columns with theta
#: NaN, the selector spec, the number of periods and the θ of each period (comma-separated).
ONLINE_COLUMNS: dict[str, pl.DataType] = {
    **GRID_COLUMNS,
    "selector": pl.String(),
    "periods": pl.Int64(),
    "theta_path": pl.String(),
}


def week_ratios(grid: pl.DataFrame, runs: pl.DataFrame | None = None) -> pl.DataFrame:
    """The redirection runs with ``ratio_avg_bsld`` and ``ratio_max_bsld``: their AVEbsld and
    MaxBsld over the baseline's on the same log and week (below 1: redirection helps). The runs
    are the grid's (α > 0) unless ``runs`` is given (the online-θ runs); the baseline is the
    grid's."""
    baseline = grid.filter(pl.col("alpha") == 0.0).select(
        "trace", "week", pl.col("avg_bsld").alias("base_avg"), pl.col("max_bsld").alias("base_max")
    )
    runs = grid.filter(pl.col("alpha") > 0.0) if runs is None else runs
    missing = runs.join(baseline, on=["trace", "week"], how="anti")
    if missing.height:
        pairs = missing.select("trace", "week").unique().height
        raise ConfigurationError(f"redirection ratios: no baseline run for {pairs} (log, week)")
    return (
        runs.join(baseline, on=["trace", "week"])
        .with_columns(
            (pl.col("avg_bsld") / pl.col("base_avg")).alias("ratio_avg_bsld"),
            (pl.col("max_bsld") / pl.col("base_max")).alias("ratio_max_bsld"),
        )
        .drop("base_avg", "base_max")
    )


def heatmap_table(ratios: pl.DataFrame) -> pl.DataFrame:
    """Per log, balance, α, θ: median over weeks of both ratios, and of the redirections."""
    return (
        ratios.group_by("trace", "balance", "alpha", "theta")
        .agg(
            pl.len().alias("weeks"),
            pl.col("ratio_avg_bsld").median().alias("median_ratio_avg_bsld"),
            pl.col("ratio_max_bsld").median().alias("median_ratio_max_bsld"),
            pl.col("redirections").median().alias("median_redirections"),
            pl.col("redirections").min().alias("min_redirections"),
            pl.col("redirections").max().alias("max_redirections"),
        )
        .sort("trace", "balance", "alpha", "theta")
    )


def best_cells(ratios: pl.DataFrame) -> pl.DataFrame:
    """The honest tuning: per log and balance, the (α, θ) with the lowest median AVEbsld ratio
    on the training weeks (ties: smaller α, then larger θ — fewer redirections), and its median
    ratios on the test weeks, which played no part in the choice."""
    train = heatmap_table(ratios.filter(pl.col("split") == "train"))
    chosen = (
        train.sort(
            ["trace", "balance", "median_ratio_avg_bsld", "alpha", "theta"],
            descending=[False, False, False, False, True],
        )
        .group_by("trace", "balance", maintain_order=True)
        .first()
        .select(
            "trace", "balance", "alpha", "theta",
            pl.col("median_ratio_avg_bsld").alias("train_median_ratio_avg_bsld"),
            pl.col("median_ratio_max_bsld").alias("train_median_ratio_max_bsld"),
        )
    )  # fmt: skip
    test = heatmap_table(ratios.filter(pl.col("split") == "test")).select(
        "trace", "balance", "alpha", "theta", pl.col("weeks").alias("test_weeks"),
        pl.col("median_ratio_avg_bsld").alias("test_median_ratio_avg_bsld"),
        pl.col("median_ratio_max_bsld").alias("test_median_ratio_max_bsld"),
        pl.col("median_redirections").alias("test_median_redirections"),
    )  # fmt: skip
    return chosen.join(test, on=["trace", "balance", "alpha", "theta"], how="left")


def online_table(grid: pl.DataFrame, online: pl.DataFrame) -> pl.DataFrame:
    """θ chosen online against the fixed θ, per log, balance option, α and selector, all on the
    test weeks (the online runs need no training; the test weeks are where the trained θ can be
    judged):

    - ``online_median_ratio_{avg,max}_bsld``, ``online_median_redirections``: the online runs;
    - ``trained_theta`` and ``trained_median_ratio_avg_bsld``: the θ with the lowest median
      AVEbsld ratio on the training weeks at this α and balance (ties: larger θ), on the test
      weeks (the honest tuning of :func:`best_cells`, α held fixed);
    - ``hindsight_theta`` and ``hindsight_median_ratio_avg_bsld``: the fixed θ with the lowest
      median AVEbsld ratio on the test weeks themselves (ties: larger θ), the best fixed θ in
      hindsight, which no deployment could know.
    """
    fixed = heatmap_table(week_ratios(grid).filter(pl.col("split") == "test"))
    train = heatmap_table(week_ratios(grid).filter(pl.col("split") == "train"))
    keys = ["trace", "balance", "alpha"]

    def lowest(table: pl.DataFrame, name: str) -> pl.DataFrame:
        return (
            table.sort([*keys, "median_ratio_avg_bsld", "theta"],
                       descending=[False, False, False, False, True])
            .group_by(keys, maintain_order=True)
            .first()
            .select(*keys, pl.col("theta").alias(f"{name}_theta"))
        )

    trained = lowest(train, "trained").join(
        fixed.select(*keys, pl.col("theta").alias("trained_theta"),
                     pl.col("median_ratio_avg_bsld").alias("trained_median_ratio_avg_bsld")),
        on=[*keys, "trained_theta"], how="left",
    )  # fmt: skip
    hindsight = lowest(fixed, "hindsight").join(
        fixed.select(*keys, pl.col("theta").alias("hindsight_theta"),
                     pl.col("median_ratio_avg_bsld").alias("hindsight_median_ratio_avg_bsld")),
        on=[*keys, "hindsight_theta"],
    )  # fmt: skip
    runs = week_ratios(grid, online).filter(pl.col("split") == "test")
    chosen = (
        runs.group_by(*keys, "selector")
        .agg(
            pl.len().alias("test_weeks"),
            pl.col("ratio_avg_bsld").median().alias("online_median_ratio_avg_bsld"),
            pl.col("ratio_max_bsld").median().alias("online_median_ratio_max_bsld"),
            pl.col("redirections").median().alias("online_median_redirections"),
        )
    )
    order = {spec: k for k, spec in enumerate(online["selector"].unique(maintain_order=True))}
    return (
        chosen.join(trained, on=keys, how="left")
        .join(hindsight, on=keys, how="left")
        .with_columns(pl.col("selector").replace_strict(order, return_dtype=pl.Int64).alias("_k"))
        .sort(*keys, "_k")
        .drop("_k")
    )
