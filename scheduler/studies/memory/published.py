"""The memory study's source beside schedlab: every quantitative claim of Yom-Tov & Aridor
(JSSPP 2007) that the text states, stored once in ``published.yaml``, with schedlab's value.

:func:`published_table` reads the study's ratios to the baseline and intervals over seeds
(:mod:`scheduler.studies.memory.stats`) and the filter reports, and computes each claim's
quantity (:data:`QUANTITIES`) for every FCFS perceptron variant of the matching feedback. A
claim agrees when the value lies within 5 points (percent quantities), within 10 % (ratios
and counts), below the bound (``bound: max``), inside the range (a ``[low, high]`` value),
or has the published sign (the slopes of Figures 9 and 10). docs/memory.md shows the table and
explains each disagreement by measurement.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml

from scheduler.sim.memory import PAPER_FEEDBACK

__all__ = ["QUANTITIES", "published_claims", "published_table"]

_PATH = Path(__file__).with_name("published.yaml")

#: What each claim's ``quantity`` means (the table's ``quantity`` column).
QUANTITIES: dict[str, str] = {
    "utilisation_gain_pct": "effective utilisation gain at saturation (%)",
    "feedback_gap_pct": "implicit - explicit gain at saturation (points, absolute)",
    "slowdown_ratio_median": "slowdown ratio, median over loads",
    "slowdown_ratio_max": "slowdown ratio, highest over loads",
    "slowdown_ratio_at_half": "slowdown ratio at load 0.5",
    "weight_slope": "final weight against load: slope per unit load",
    "failures_slope": "failed runs against load: slope per unit load",
    "sweep_best_mb": "second class's memory with the largest gain (MB)",
    "sweep_ratio_homogeneous": "utilisation ratio, homogeneous machine (32 MB)",
    "sweep_ratio_small_min": "utilisation ratio, lowest below 15 MB",
    "jobs_removed": "jobs removed by the filter",
}
#: Quantities in percent (agreement within 5 points; others within 10 %).
_PERCENT = ("utilisation_gain_pct", "feedback_gap_pct")
_SMALL_MB = 15.0


@cache
def published_claims() -> tuple[dict[str, Any], ...]:
    """The claims of ``published.yaml``, in file order."""
    with _PATH.open(encoding="utf-8") as handle:
        claims = tuple(yaml.safe_load(handle)["claims"])
    for claim in claims:
        if claim["quantity"] not in QUANTITIES:
            raise ValueError(f"{_PATH}: unknown quantity {claim['quantity']!r}")
    return claims


def _feedback_matches(claim: str, feedback: str) -> bool:
    return claim == "both" or PAPER_FEEDBACK[feedback] == claim


def _metric(frame: pl.DataFrame, metric: str) -> pl.DataFrame:
    """The rows of one metric, by load and second-class memory."""
    return frame.filter(pl.col("metric") == metric).sort("load", "second_memory_mb")


def _point(frame: pl.DataFrame, row: int = 0) -> tuple[float, float, float]:
    """(mean, low, high) of one row."""
    return float(frame["mean"][row]), float(frame["low"][row]), float(frame["high"][row])


def _gain(ratios: pl.DataFrame, variant: str, load: float) -> tuple[float, float, float] | None:
    """A variant's effective utilisation gain at ``load``, % (mean, low, high), or None."""
    at = _metric(
        ratios.filter((pl.col("kind") == "load") & (pl.col("variant") == variant)),
        "utilisation_ratio",
    ).filter((pl.col("load") - load).abs() < 1e-9)
    if at.height == 0:
        return None
    mean, low, high = _point(at)
    return 100.0 * (mean - 1.0), 100.0 * (low - 1.0), 100.0 * (high - 1.0)


def _weight_column(feature: int, memories: Sequence[float]) -> str:
    """Figure 9's feature number -> schedlab's weight column (classes ascending by memory:
    the paper's feature 1 is the largest class's free fraction, feature 2 the next)."""
    k = len(memories)
    if feature <= 2:
        return f"w_free_class{k - feature + 1}"
    return {3: "w_log_request", 4: "w_log_queue"}[feature]


def _slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y on x and its R² (NaN with fewer than 3 points)."""
    if x.size < 3 or np.ptp(x) == 0:
        return math.nan, math.nan
    if np.ptp(y) == 0:
        return 0.0, math.nan
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    total = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float((residual**2).sum()) / total if total > 0 else math.nan
    return float(slope), r2


def _agrees(claim: Mapping[str, Any], value: float) -> bool | None:
    paper = claim["paper"]
    if math.isnan(value):
        return None
    if claim["quantity"] in ("weight_slope", "failures_slope"):
        return bool(np.sign(value) == np.sign(paper))
    if isinstance(paper, list):
        return bool(paper[0] <= value <= paper[1])
    if claim.get("bound") == "max":
        return bool(value <= paper * (1 + 1e-9))
    if claim["quantity"] in _PERCENT:
        return bool(abs(value - paper) <= 5.0)
    return bool(abs(value - paper) <= 0.1 * abs(paper))


def _variant_values(
    claim: Mapping[str, Any], variant: str, ratios: pl.DataFrame, intervals: pl.DataFrame,
    saturation_load: float, memories: Sequence[float], explicit_of: Mapping[str, str],
) -> tuple[float, float, float, str]:  # fmt: skip
    """(value, low, high, detail) of one claim for one variant (FCFS, one log)."""
    nan = math.nan
    quantity = claim["quantity"]
    loads = ratios.filter((pl.col("kind") == "load") & (pl.col("variant") == variant))
    sweep = ratios.filter((pl.col("kind") == "sweep") & (pl.col("variant") == variant))
    stretch = _metric(loads, "avg_stretch_ratio")
    if quantity in ("utilisation_gain_pct", "feedback_gap_pct"):
        gain = _gain(ratios, variant, saturation_load)
        if gain is None:
            return nan, nan, nan, ""
        if quantity == "utilisation_gain_pct":
            return (*gain, f"load {saturation_load:g}")
        other = explicit_of.get(variant)
        if other is None:
            return nan, nan, nan, "no explicit variant of the same reading"
        other_gain = _gain(ratios, other, saturation_load)
        if other_gain is None:
            return nan, nan, nan, ""
        return abs(gain[0] - other_gain[0]), nan, nan, f"vs {other}"
    if quantity == "slowdown_ratio_median":
        return (float(stretch["mean"].median()), nan, nan, f"{stretch.height} loads")
    if quantity == "slowdown_ratio_max":
        if stretch.height == 0:
            return nan, nan, nan, ""
        worst = int(stretch["mean"].arg_max())
        return (*_point(stretch, worst), f"at load {stretch['load'][worst]:g}")
    if quantity == "slowdown_ratio_at_half":
        at = stretch.filter((pl.col("load") - 0.5).abs() < 1e-9)
        if at.height == 0:
            return nan, nan, nan, "load 0.5 not run"
        return (*_point(at), "")
    if quantity in ("weight_slope", "failures_slope"):
        column = ("failed_runs" if quantity == "failures_slope" else
                  _weight_column(int(claim["feature"]), memories))  # fmt: skip
        weights = intervals.filter(
            (pl.col("kind") == "load") & (pl.col("variant") == variant)
            & (pl.col("metric") == column)
        ).sort("load")  # fmt: skip
        slope, r2 = _slope(weights["load"].to_numpy(), weights["mean"].to_numpy())
        return slope, nan, nan, f"{column}, R² {r2:.2f}" if not math.isnan(r2) else column
    utilisation = _metric(sweep, "utilisation_ratio")
    if utilisation.height == 0:
        return nan, nan, nan, "no sweep"
    if quantity == "sweep_best_mb":
        best = int(utilisation["mean"].arg_max())
        return (float(utilisation["second_memory_mb"][best]), nan, nan,
                f"ratio {utilisation['mean'][best]:.3f}")  # fmt: skip
    if quantity == "sweep_ratio_homogeneous":
        at = utilisation.filter(pl.col("second_memory_mb") == max(memories))
        if at.height == 0:
            return nan, nan, nan, f"{max(memories):g} MB not in the sweep"
        return (*_point(at), "")
    small = utilisation.filter(pl.col("second_memory_mb") < _SMALL_MB)
    if small.height == 0:
        return nan, nan, nan, f"no size below {_SMALL_MB:g} MB"
    worst = int(small["mean"].arg_min())
    return (*_point(small, worst), f"at {small['second_memory_mb'][worst]:g} MB")


def published_table(
    ratios: pl.DataFrame,
    intervals: pl.DataFrame,
    reports: Sequence[Mapping[str, Any]],
    *,
    saturation_load: float,
    class_memory_mb: Sequence[float],
) -> pl.DataFrame:
    """One row per (claim, log, FCFS perceptron variant whose feedback the claim covers), and
    one per (filter claim, log): ``trace, variant, source, quantity, paper, bound, schedlab,
    low, high, agrees, detail`` (``low``/``high`` the t interval over seeds where there is
    one; ``paper`` the published value, a range as "low-high"; ``agrees`` per the module
    docstring, null when schedlab has no value). Empty without FCFS perceptron runs."""
    fcfs = ratios.filter(pl.col("scheduler") == "fcfs")
    memories = sorted(float(m) for m in class_memory_mb)
    rows = []
    for trace in sorted(set(fcfs["trace"].to_list())):
        mine = fcfs.filter((pl.col("trace") == trace) & (pl.col("estimator") == "perceptron"))
        own = intervals.filter((pl.col("trace") == trace) & (pl.col("scheduler") == "fcfs"))
        variants = (mine.select("variant", "feedback", "gradient").unique()
                    .sort("gradient", "feedback", "variant"))  # fmt: skip
        explicit_of = {}
        for v in variants.iter_rows(named=True):
            if v["feedback"] != "explicit":
                match = variants.filter((pl.col("gradient") == v["gradient"])
                                        & (pl.col("feedback") == "explicit"))  # fmt: skip
                if match.height:
                    explicit_of[v["variant"]] = match["variant"][0]
        for claim in published_claims():
            if claim["quantity"] == "jobs_removed":
                continue
            for v in variants.iter_rows(named=True):
                if not _feedback_matches(claim["feedback"], v["feedback"]):
                    continue
                if claim["quantity"] == "feedback_gap_pct" and v["feedback"] == "explicit":
                    continue
                value, low, high, detail = _variant_values(
                    claim, v["variant"], mine, own, saturation_load, memories, explicit_of
                )
                rows.append(_row(claim, trace, v["variant"], value, low, high, detail))
    for report in reports:
        removed = sum(v for k, v in report.items() if k.startswith("removed_"))
        for claim in published_claims():
            if claim["quantity"] == "jobs_removed":
                detail = f"missing_memory: {report.get('missing_memory', 'drop')}"
                rows.append(_row(claim, str(report["trace"]), "", float(removed), math.nan,
                                 math.nan, detail))  # fmt: skip
    schema = {"trace": pl.String, "variant": pl.String, "source": pl.String,
              "quantity": pl.String, "paper": pl.String, "bound": pl.String,
              "schedlab": pl.Float64, "low": pl.Float64, "high": pl.Float64,
              "agrees": pl.Boolean, "detail": pl.String}  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


def _row(claim: Mapping[str, Any], trace: str, variant: str, value: float, low: float,
         high: float, detail: str) -> dict[str, Any]:  # fmt: skip
    paper = claim["paper"]
    quantity = QUANTITIES[claim["quantity"]]
    if "feature" in claim:
        quantity += f", feature {claim['feature']}"
    return {
        "trace": trace, "variant": variant, "source": claim["source"], "quantity": quantity,
        "paper": "-".join(f"{p:g}" for p in paper) if isinstance(paper, list) else f"{paper:g}",
        "bound": claim.get("bound", ""), "schedlab": value, "low": low, "high": high,
        "agrees": _agrees(claim, value), "detail": detail,
    }  # fmt: skip
