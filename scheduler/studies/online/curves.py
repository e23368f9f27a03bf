"""The online study over time: the cumulative waiting-time improvement over the reference
(:func:`improvement_curves`, a ratio of sums over replicas that ends at the tables' value) and
the share of the periods choosing each policy (:func:`choice_shares`), day by day, for the
figures of :mod:`scheduler.studies.online.figures`.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.studies.online.runs import (
    CHOICE_COLUMNS,
    CURVE_COLUMNS,
    GROUP_KEY,
    IMPROVEMENT_COLUMNS,
    RUN_KEY,
    SHARE_COLUMNS,
    check_unique,
    require_columns,
    sort_study_order,
)

__all__ = ["choice_shares", "improvement_curves"]

_DAY_S = 86_400.0
_DEFAULT_PERIODS: dict[str, float] = {"1d": 86_400.0, "1w": 604_800.0}


def improvement_curves(curves: pl.DataFrame, *, reference: str) -> pl.DataFrame:
    """Cumulative waiting-time improvement over the reference, day by day, ending at the table.

    Every run is put on the days 0..D of its trace (D = last day of the longest run of the
    trace): a day without a row keeps the run's previous cumulative wait (a run that ended
    earlier keeps its last value; before its first row it is 0). For a strategy S, over its
    replicas K and day d::

        improvement(d) = (Σ_K C_ref,k(d) − Σ_K C_S,k(d)) / Σ_K C_ref,k(d)

    (0 when Σ_K C_ref,k(d) = 0), where C is the cumulative wait (s): a ratio of sums over the
    replicas, the statistic of the tables, not a mean of per-replica ratios. On day D every C is
    the run's total wait W, so the curve ends exactly at ``−relative_change`` of
    :func:`~scheduler.studies.online.changes.relative_changes` (same replicas, same sums; up to
    the rounding of the summation order). Positive = less waiting than the reference so far.

    Parameters
    ----------
    curves
        The curves table (:data:`CURVE_COLUMNS`; ``day`` >= 0 in days).
    reference
        Strategy name of the reference, ``"fixed:P"`` (``OnlinePlan.reference``; one run per
        trace and replica). Its own curve is exactly 0.

    Returns
    -------
    pl.DataFrame
        Columns :data:`IMPROVEMENT_COLUMNS`: per (trace, strategy, period, day) the ratio of
        sums ``improvement``, and the spread of the replicas: the 10 % and 90 % quantiles
        (``q10``, ``q90``; linear interpolation as :func:`numpy.quantile`) of the per-replica
        ratios (C_ref,k(d) − C_S,k(d)) / C_ref,k(d) (0 when C_ref,k(d) = 0), all as fractions
        (0.1 = 10 % less cumulative wait), and the number of ``replicas``. The reference's own
        rows are 0. (The ratio of sums is a weighted mean of the per-replica ratios, weights
        C_ref,k(d), so it lies between their extremes, not always between q10 and q90.)

    Raises
    ------
    ConfigurationError
        When a column is missing, a row is duplicated, a day is negative or a replica has
        runs but no reference run.
    """
    what = "improvement_curves"
    require_columns(curves, CURVE_COLUMNS, what)
    check_unique(curves, [*RUN_KEY, "day"], what)
    if curves.height and curves["day"].min() < 0:  # type: ignore[operator]
        raise ConfigurationError(f"{what}: days must be >= 0, got {curves['day'].min()}")
    data = curves.select(
        *RUN_KEY, pl.col("day").cast(pl.Int64), pl.col("cumulative_wait_s").cast(pl.Float64)
    )
    last = data.group_by("trace").agg(pl.col("day").max().alias("_last"))
    grid = (
        data.select(RUN_KEY)
        .unique()
        .join(last, on="trace")
        .with_columns(pl.int_ranges(0, pl.col("_last") + 1, dtype=pl.Int64).alias("day"))
        .drop("_last")
        .explode("day")
    )
    dense = (
        grid.join(data, on=[*RUN_KEY, "day"], how="left")
        .sort(*RUN_KEY, "day")
        .with_columns(
            pl.col("cumulative_wait_s").forward_fill().over(RUN_KEY).fill_null(0.0).alias("c")
        )
    )
    ref = dense.filter(pl.col("strategy") == reference).select(
        "trace", "replica", "day", pl.col("c").alias("c_ref")
    )
    check_unique(ref, ("trace", "replica", "day"), f"{what}: reference {reference!r}")
    orphans = (
        dense.select("trace", "replica")
        .unique()
        .join(ref.select("trace", "replica").unique(), on=["trace", "replica"], how="anti")
    )
    if orphans.height:
        first = orphans.sort("trace", "replica").row(0)
        raise ConfigurationError(
            f"{what}: {orphans.height} (trace, replica) pair(s) have runs but no reference "
            f"{reference!r} run, e.g. trace {first[0]!r}, replica {first[1]}"
        )
    per_replica = (
        pl.when(pl.col("c_ref") == 0.0)
        .then(0.0)
        .otherwise((pl.col("c_ref") - pl.col("c")) / pl.col("c_ref"))
    )
    # replicas in a fixed order, so that the sums add up as the tables' sums do
    table = (
        dense.join(ref, on=["trace", "replica", "day"], how="left")
        .sort(*GROUP_KEY, "day", "replica")
        .with_columns(per_replica.alias("ratio"))
        .group_by(*GROUP_KEY, "day", maintain_order=True)
        .agg(
            pl.col("c_ref").sum().alias("_ref_sum"),
            pl.col("c").sum().alias("_sum"),
            pl.col("ratio").quantile(0.1, interpolation="linear").alias("q10"),
            pl.col("ratio").quantile(0.9, interpolation="linear").alias("q90"),
            pl.col("replica").n_unique().cast(pl.Int64).alias("replicas"),
        )
        .with_columns(
            pl.when(pl.col("_ref_sum") == 0.0)
            .then(0.0)
            .otherwise((pl.col("_ref_sum") - pl.col("_sum")) / pl.col("_ref_sum"))
            .alias("improvement")
        )
        .select(IMPROVEMENT_COLUMNS)
    )
    return sort_study_order(table, (*GROUP_KEY, "day"))


def choice_shares(
    choices: pl.DataFrame,
    *,
    period_s_by_label: Mapping[str, float] | None = None,
    bin_days: int = 7,
) -> pl.DataFrame:
    """Share of the policy periods choosing each policy, per time bin, mean over replicas.

    Period t of a run starts ``t · period_s`` seconds after the replica's first submission and
    belongs to the bin of ``bin_days`` days holding its start. Per replica and bin, the share of
    policy P is the fraction of the bin's periods that chose P (0 when none did, for every
    policy the strategy chose somewhere on the trace); the shares are then averaged over the
    replicas whose run has a period in that bin, so they sum to 1 within a bin.

    Parameters
    ----------
    choices
        The choices table (:data:`CHOICE_COLUMNS`).
    period_s_by_label
        Length in seconds of each period label; default ``{"1d": 86400, "1w": 604800}``.
    bin_days
        Width of the time bins in days (>= 1).

    Returns
    -------
    pl.DataFrame
        Columns :data:`SHARE_COLUMNS`: ``trace``, ``strategy``, ``period``, ``day`` (bin start,
        days since the first submission), ``policy`` and ``share`` in [0, 1]; sorted by trace,
        strategy, period, day and policy (:data:`ONLINE_POLICIES` order).

    Raises
    ------
    ConfigurationError
        When a column is missing, a row is duplicated, ``bin_days`` < 1, a period label has no
        (positive) length, or a period index is negative.
    """
    what = "choice_shares"
    require_columns(choices, CHOICE_COLUMNS, what)
    if bin_days < 1:
        raise ConfigurationError(f"{what}: bin_days must be >= 1, got {bin_days!r}")
    lengths = dict(_DEFAULT_PERIODS if period_s_by_label is None else period_s_by_label)
    labels = sorted(set(choices["period"]))
    unknown = [label for label in labels if label not in lengths]
    if unknown:
        raise ConfigurationError(
            f"{what}: no length for period label(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(lengths))})"
        )
    if any(not float(lengths[label]) > 0.0 for label in labels):
        raise ConfigurationError(f"{what}: period lengths must be > 0 s, got {lengths}")
    check_unique(choices, [*RUN_KEY, "period_index"], what)
    if choices.height and choices["period_index"].min() < 0:  # type: ignore[operator]
        raise ConfigurationError(f"{what}: period_index must be >= 0")
    period_s = pl.col("period").replace_strict(
        {label: float(lengths[label]) for label in labels}, return_dtype=pl.Float64
    )
    start_day = pl.col("period_index").cast(pl.Float64) * period_s / _DAY_S
    binned = choices.select(
        *RUN_KEY,
        ((start_day / bin_days).floor().cast(pl.Int64) * bin_days).alias("day"),
        "policy",
    )
    counts = binned.group_by(*RUN_KEY, "day", "policy").agg(pl.len().alias("n"))
    per_replica = counts.with_columns(
        (pl.col("n") / pl.col("n").sum().over(*RUN_KEY, "day")).alias("share")
    )
    grid = (
        binned.select(*RUN_KEY, "day")
        .unique()
        .join(binned.select(*GROUP_KEY, "policy").unique(), on=list(GROUP_KEY))
    )
    table = (
        grid.join(per_replica, on=[*RUN_KEY, "day", "policy"], how="left")
        .with_columns(pl.col("share").fill_null(0.0))
        .group_by(*GROUP_KEY, "day", "policy")
        .agg(pl.col("share").mean())
    )
    return sort_study_order(table.select(SHARE_COLUMNS), (*GROUP_KEY, "day", "policy"))
