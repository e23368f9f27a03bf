"""Statistics of the memory-aware cluster study: means and t intervals over seeds, ratios to the
baseline without estimation, the summary and the "paper vs schedlab" tables.

**What is independent of what.** A run is one simulation of one (log, scheduler, offered load,
machine, estimator variant, seed). The workload is the same in every run of a (log, load): the
seed changes only the estimator's random draws (the exploration choice of the perceptron and the
failure instants of failing runs, docs/simulator.md), so the runs of one cell over seeds are
independent replicas of the *estimator's* randomness, not of the workload; the intervals say
how much a result depends on these draws, not how it would change on another log or period. The
baseline (``none``, every job allocated its request) never fails and draws nothing: it is run
once (the first seed) and its interval is the point itself. A ratio to the baseline is taken
seed by seed (the baseline being a constant), then averaged with a t interval over seeds.
Intervals are NaN with a single seed of a random variant.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl

from scheduler.studies.common.statistics import t_interval

__all__ = [
    "CELL",
    "METRICS",
    "PAPER",
    "RATIO_METRICS",
    "baseline_ratios",
    "paper_table",
    "seed_intervals",
    "summary_table",
    "weight_columns",
]

#: The columns that name a cell (a point of a curve); the seed varies within a cell.
CELL = ("kind", "trace", "scheduler", "variant", "estimator", "feedback", "gradient", "load",
        "second_memory_mb")  # fmt: skip
#: The per-run quantities averaged over seeds (besides the perceptron weights ``w_*``); the
#: names of :class:`~scheduler.sim.memory.MemorySummary` (docs/glossary.md).
METRICS = (
    "utilisation",  # the paper's effective utilisation: Σ q·p / (N · makespan), dimensionless
    "utilisation_with_waste",  # its total utilisation: the failed runs' node-seconds added
    "avg_stretch",  # mean of (wait + run) / run, the paper's slowdown (eq. 2)
    "avg_bsld",  # mean bounded slowdown, τ = 10 s
    "avg_wait_s",  # mean wait from submission to the successful start, s
    "failed_runs",  # runs that failed (memory allocated below the memory used)
    "forced",  # decisions forced to the request after max_failures failures
    "success_fraction",  # successful runs / finished runs
)
#: The quantities divided by the baseline's in :func:`baseline_ratios`.
RATIO_METRICS = ("utilisation", "utilisation_with_waste", "avg_stretch", "avg_bsld")
#: What the paper reports (FCFS, LANL-CM5, 512 x 32 MB + 512 x 24 MB): the effective utilisation
#: gain at saturation, percent, per feedback, and the slowdown ratio "halved over most loads".
PAPER = {
    "perceptron-implicit": {"utilisation_gain_pct": 33.0, "slowdown_ratio": 0.5},
    "perceptron-explicit": {"utilisation_gain_pct": 31.0, "slowdown_ratio": 0.5},
}


def weight_columns(runs: pl.DataFrame) -> list[str]:
    """The perceptron weight columns ``w_<feature>`` present in ``runs``."""
    return [name for name in runs.columns if name.startswith("w_")]


def _interval(values: np.ndarray, confidence: float, exact: bool) -> tuple[float, float, float]:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    if exact:
        return mean, mean, mean
    low, high = t_interval(values, confidence)
    return mean, low, high


def _long(table: pl.DataFrame, metrics: Sequence[str], confidence: float) -> pl.DataFrame:
    rows = []
    for keys, part in table.group_by(list(CELL), maintain_order=True):
        cell = dict(zip(CELL, keys, strict=True))
        exact = cell["variant"] == "none"
        for metric in metrics:
            values = part[metric].cast(pl.Float64).to_numpy()
            mean, low, high = _interval(values, confidence, exact)
            rows.append({**cell, "metric": metric, "mean": mean, "low": low, "high": high,
                         "seeds": int(part.height)})  # fmt: skip
    schema = {name: table.schema[name] for name in CELL} | {
        "metric": pl.String, "mean": pl.Float64, "low": pl.Float64, "high": pl.Float64,
        "seeds": pl.Int64,
    }  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


def seed_intervals(runs: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """One row per (cell, metric): ``mean``, ``low``, ``high`` (t interval of the mean over
    seeds at ``confidence``; the baseline's is the point, see the module docstring) and the
    number of ``seeds``. Metrics: :data:`METRICS` and the weight columns."""
    metrics = [m for m in METRICS if m in runs.columns] + weight_columns(runs)
    return _long(runs, metrics, confidence).sort([*CELL, "metric"])


def baseline_ratios(runs: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """Per cell of a variant other than the baseline and per metric of :data:`RATIO_METRICS`:
    the ratio variant / baseline (the baseline of the same log, scheduler, load and machine),
    seed by seed, then its mean and t interval over seeds (columns as
    :func:`seed_intervals`, metric names ``<metric>_ratio``)."""
    keys = ["kind", "trace", "scheduler", "load", "second_memory_mb"]
    base = (
        runs.filter(pl.col("variant") == "none")
        .group_by(keys)
        .agg([pl.col(m).cast(pl.Float64).mean().alias(f"base_{m}") for m in RATIO_METRICS])
    )
    others = runs.filter(pl.col("variant") != "none").join(base, on=keys, how="inner")
    ratios = others.with_columns(
        [(pl.col(m).cast(pl.Float64) / pl.col(f"base_{m}")).alias(f"{m}_ratio")
         for m in RATIO_METRICS]
    )  # fmt: skip
    return _long(ratios, [f"{m}_ratio" for m in RATIO_METRICS], confidence).sort([*CELL, "metric"])


def summary_table(intervals: pl.DataFrame) -> pl.DataFrame:
    """The load runs, one row per (log, scheduler, variant, load): each metric of
    :data:`METRICS` as ``<metric>`` (mean over seeds), ``<metric>_low``, ``<metric>_high``."""
    cell = ["trace", "scheduler", "variant", "load", "seeds"]
    part = intervals.filter((pl.col("kind") == "load") & pl.col("metric").is_in(METRICS))
    wide = part.pivot(on="metric", index=cell, values=["mean", "low", "high"])
    columns = []
    for metric in METRICS:
        if f"mean_{metric}" in wide.columns:
            columns += [pl.col(f"mean_{metric}").alias(metric),
                        pl.col(f"low_{metric}").alias(f"{metric}_low"),
                        pl.col(f"high_{metric}").alias(f"{metric}_high")]  # fmt: skip
    return wide.select(*cell, *columns).sort("trace", "scheduler", "variant", "load")


def paper_table(ratios: pl.DataFrame, saturation_load: float) -> pl.DataFrame:
    """The paper's numbers next to schedlab's, per (log, scheduler, variant):

    - ``utilisation gain at saturation (%)``: 100·(ratio − 1) of the effective utilisation at
      ``saturation_load`` (paper: +33 % implicit, +31 % explicit, FCFS);
    - ``slowdown ratio at saturation``: the ratio of the paper's mean slowdown (eq. 2,
      ``avg_stretch``) at that load;
    - ``slowdown ratio, median over loads``: the median over the loads of the mean ratios (the
      paper: about 0.5, "halved over most loads").

    ``paper`` is NaN where the paper reports nothing (EASY, the history estimator)."""
    loads = ratios.filter(pl.col("kind") == "load")
    rows = []
    for (trace, scheduler, variant), part in loads.group_by(["trace", "scheduler", "variant"],
                                                             maintain_order=True):  # fmt: skip
        paper = PAPER.get(variant, {}) if scheduler == "fcfs" else {}
        at = part.filter((pl.col("load") - saturation_load).abs() < 1e-9)
        base = {"trace": trace, "scheduler": scheduler, "variant": variant}
        utilisation = at.filter(pl.col("metric") == "utilisation_ratio")
        slowdown_at = at.filter(pl.col("metric") == "avg_stretch_ratio")
        slowdowns = part.filter(pl.col("metric") == "avg_stretch_ratio")["mean"]
        for quantity, frame, scale, offset, key in (
            ("utilisation gain at saturation (%)", utilisation, 100.0, -1.0,
             "utilisation_gain_pct"),
            ("slowdown ratio at saturation", slowdown_at, 1.0, 0.0, None),
        ):  # fmt: skip
            mean, low, high = (
                (math.nan,) * 3 if frame.height == 0 else
                tuple(scale * (float(frame[c][0]) + offset) for c in ("mean", "low", "high"))
            )  # fmt: skip
            rows.append({**base, "quantity": quantity, "load": saturation_load,
                         "paper": paper.get(key, math.nan) if key else math.nan,
                         "schedlab": mean, "low": low, "high": high})  # fmt: skip
        rows.append({**base, "quantity": "slowdown ratio, median over loads", "load": math.nan,
                     "paper": paper.get("slowdown_ratio", math.nan),
                     "schedlab": float(slowdowns.median()) if slowdowns.len() else math.nan,
                     "low": math.nan, "high": math.nan})  # fmt: skip
    schema = {"trace": pl.String, "scheduler": pl.String, "variant": pl.String,
              "quantity": pl.String, "load": pl.Float64, "paper": pl.Float64,
              "schedlab": pl.Float64, "low": pl.Float64, "high": pl.Float64}  # fmt: skip
    return pl.DataFrame(rows, schema=schema).sort("trace", "scheduler", "variant", "quantity")
