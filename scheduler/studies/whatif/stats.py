"""The what-if study's tables: the alternatives ranked with intervals, and who gains or loses.

What is independent of what (``docs/whatif.md``): the resampled weeks all come from the log's
``K`` complete source weeks, so they are not independent observations; every alternative runs
on the same weeks, so its difference to the baseline is paired. The interval of a relative
change is a bootstrap-t interval over source-week bootstrap replicates, taken on the log of the
ratio and transformed back (the standard error of the replicates' log ratios, Student's t with
``K - 1`` degrees of freedom,
:func:`scheduler.studies.common.statistics.bootstrap_t_interval`: the few source weeks a log
has are the independent units), the p-value that interval's test, and Holm's correction runs
across the alternatives' tests of the mean wait (one family: "does any change move the mean
wait?"). The other columns are descriptive. The per-user table compares the whole log replayed
under each scheduler (one run each: no interval; a user's change is what that replay says).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from scheduler.studies.common.statistics import bootstrap_t_interval, bootstrap_t_p_value
from scheduler.studies.whatif.measures import WEEK_FIGURES, group_table, week_figures

__all__ = [
    "INTERVAL_FIGURES",
    "group_changes",
    "summary_table",
    "user_changes",
]

#: The figures whose relative change gets an interval (mean wait first: the tested one).
INTERVAL_FIGURES = ("avg_wait_s", "p90_wait_s", "avg_bsld")


def _relative(value: float | np.ndarray, base: float | np.ndarray) -> float | np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            np.asarray(base) > 0,
            np.asarray(value) / np.asarray(base) - 1.0,
            np.where(np.asarray(value) > 0, np.inf, 0.0),
        )


def _log_ratio(value: float | np.ndarray, base: float | np.ndarray) -> np.ndarray:
    """log(value / base); NaN where either is not positive (no ratio to take)."""
    value, base = np.asarray(value, dtype=np.float64), np.asarray(base, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((value > 0) & (base > 0), np.log(value / base), np.nan)


def summary_table(
    names: Sequence[str],
    changes: Sequence[str],
    week_tables: Sequence[pl.DataFrame],
    log_tables: Sequence[pl.DataFrame],
    bootstrap_tables: Sequence[pl.DataFrame],
    *,
    machine_procs: int,
    confidence: float,
) -> pl.DataFrame:
    """One row per alternative (the baseline first, then by relative mean wait).

    Columns: ``alternative``, ``change``; the mean over the resampled weeks of every weekly
    figure (:data:`~scheduler.studies.whatif.measures.WEEK_FIGURES`); ``log_avg_wait_s``,
    ``log_utilisation`` (the whole log replayed once); per figure ``f`` of
    :data:`INTERVAL_FIGURES`: ``rel_f`` (alternative / baseline − 1 of the weeks' means) and
    ``rel_f_low``, ``rel_f_high`` (the interval, from the log ratio; NaN without replicates or
    a mean of 0); ``p_value``,
    ``p_holm`` (Holm across the alternatives, baseline excluded), ``significant`` (``p_holm <
    1 − confidence``) for the mean wait; ``source_weeks`` (K) and ``replicates``.
    """
    from statsmodels.stats.multitest import multipletests

    means = []
    for weeks, log in zip(week_tables, log_tables, strict=True):
        figures = week_figures(weeks, machine_procs)
        whole = week_figures(log.with_columns(pl.lit(0).alias("week_index")), machine_procs)
        means.append(
            {name: float(figures[name].mean()) for name in WEEK_FIGURES}
            | {
                "log_avg_wait_s": float(whole["avg_wait_s"][0]),
                "log_utilisation": float(whole["utilisation"][0]),
            }
        )
    base = means[0]
    boot_base = bootstrap_tables[0].sort("replicate")
    rows = []
    for index, (name, change) in enumerate(zip(names, changes, strict=True)):
        row: dict[str, object] = {"alternative": name, "change": change, **means[index]}
        boot = bootstrap_tables[index].sort("replicate")
        units = int(boot["source_weeks"][0]) if boot.height else 0
        for figure in INTERVAL_FIGURES:
            estimate = float(_relative(means[index][figure], base[figure]))
            row[f"rel_{figure}"] = estimate
            low = high = math.nan
            if boot.height >= 2 and index > 0:
                # on the log of the ratio (a change is multiplicative: the interval stays above
                # -100 % and is as wide for halving as for doubling), then back
                samples = _log_ratio(boot[figure].to_numpy(), boot_base[figure].to_numpy())
                centre = float(_log_ratio(means[index][figure], base[figure]))
                low, high = np.expm1(
                    bootstrap_t_interval(centre, samples, units=units, confidence=confidence)
                )
                if figure == INTERVAL_FIGURES[0]:
                    row["p_value"] = bootstrap_t_p_value(centre, samples, units=units)
            row[f"rel_{figure}_low"], row[f"rel_{figure}_high"] = float(low), float(high)
        row.setdefault("p_value", math.nan)
        row["source_weeks"] = units
        row["replicates"] = boot.height
        rows.append(row)
    table = pl.DataFrame(rows)
    p_values = table["p_value"].to_numpy().astype(np.float64)
    p_holm = np.full(p_values.shape, np.nan)
    tested = np.isfinite(p_values)
    if tested.any():
        p_holm[tested] = multipletests(p_values[tested], method="holm")[1]
    table = table.with_columns(
        pl.Series("p_holm", p_holm), pl.Series("significant", p_holm < 1.0 - confidence)
    )
    order = [0, *sorted(range(1, len(names)), key=lambda i: (table["rel_avg_wait_s"][i], names[i]))]
    return table[order]


def group_changes(
    names: Sequence[str],
    week_tables: Sequence[pl.DataFrame],
    *,
    size_edges: Sequence[int],
    shares: Mapping[str, int],
    week_s: float,
) -> pl.DataFrame:
    """Per alternative, :func:`~scheduler.studies.whatif.measures.group_table` of its weeks
    with ``alternative`` first and ``change_mean_wait_s`` (its group's mean wait minus the
    baseline's, s) last."""
    tables = [
        group_table(weeks, size_edges=size_edges, shares=shares, week_s=week_s)
        for weeks in week_tables
    ]
    base = tables[0].select("scope", "group", pl.col("mean_wait_s").alias("_base"))
    out = []
    for name, table in zip(names, tables, strict=True):
        joined = table.join(base, on=["scope", "group"], how="left", maintain_order="left")
        out.append(
            joined.select(
                pl.lit(name).alias("alternative"),
                pl.all().exclude("_base"),
                (pl.col("mean_wait_s") - pl.col("_base")).alias("change_mean_wait_s"),
            )
        )
    return pl.concat(out)


def user_changes(names: Sequence[str], log_tables: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Per alternative (baseline excluded) and user, from the whole-log replays: ``jobs``,
    ``baseline_mean_wait_s``, ``mean_wait_s`` and ``change_mean_wait_s`` (s; negative: the
    user gains), sorted by change."""

    def per_user(log: pl.DataFrame) -> pl.DataFrame:
        return log.group_by("user_id").agg(
            pl.len().cast(pl.Int64).alias("jobs"), pl.col("wait_s").mean().alias("mean_wait_s")
        )

    base = per_user(log_tables[0]).rename({"mean_wait_s": "baseline_mean_wait_s"})
    out = []
    for name, log in zip(names[1:], log_tables[1:], strict=True):
        table = base.join(per_user(log).drop("jobs"), on="user_id").with_columns(
            (pl.col("mean_wait_s") - pl.col("baseline_mean_wait_s")).alias("change_mean_wait_s")
        )
        out.append(
            table.select(pl.lit(name).alias("alternative"), pl.all()).sort(
                "change_mean_wait_s", "user_id"
            )
        )
    schema = {
        "alternative": pl.String,
        "user_id": pl.Int64,
        "jobs": pl.Int64,
        "baseline_mean_wait_s": pl.Float64,
        "mean_wait_s": pl.Float64,
        "change_mean_wait_s": pl.Float64,
    }
    return pl.concat(out).cast(schema) if out else pl.DataFrame(schema=schema)
