"""The weeks of the redirection study: 7-day windows of a log, their offered load, and the
deterministic choice of the most loaded non-overlapping ones.

A window starts at a day boundary of the log (``t0 + d·86,400 s``, ``t0`` the first submission)
and holds the jobs submitted in the following 7 days. Its offered load is the work its jobs bring
over what the machine can do in a week:

    load = Σ_{j submitted in the window} q_j · p_j / (m · 604,800 s)

(q_j the processors, p_j the run time; work running past the window's end still counts: the
load is *offered*, not the utilisation). The study takes the largest set of non-overlapping
windows with load ≥ ``min_load`` and, when it holds more than ``count``, the ``count`` most
loaded of them (:func:`chosen_weeks`); the chosen weeks are returned in time order. Calendar
weeks (``step_days=7``) are the special case of a 7-day grid. Each chosen week is simulated
alone, from an empty machine, until it drains.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.traces.swf import used_procs

__all__ = [
    "DAY_S",
    "WEEK_S",
    "WEEK_SPLITS",
    "chosen_weeks",
    "split_weeks",
    "week_jobs",
    "window_loads",
]

DAY_S = 86400.0
WEEK_S = 7 * DAY_S
#: How the chosen weeks are split into training and test weeks (:func:`split_weeks`).
WEEK_SPLITS = ("chronological", "alternate")


def window_loads(jobs: pl.DataFrame, machine_procs: int, *, step_days: int = 1) -> pl.DataFrame:
    """Every 7-day window starting on the grid ``t0 + k·step_days`` days: ``window`` (k),
    ``start_s``, ``jobs``, ``load``."""
    if machine_procs < 1:
        raise ConfigurationError(f"machine_procs must be >= 1, got {machine_procs}")
    if not 1 <= step_days <= 7:
        raise ConfigurationError(f"step_days must be in 1..7, got {step_days}")
    if jobs.height == 0:
        raise ConfigurationError("no job: a log without jobs has no weeks")
    submit = jobs["submit_s"].cast(pl.Float64).to_numpy()
    work = jobs.select(used_procs().cast(pl.Float64) * pl.col("run_s").cast(pl.Float64))
    work = work.to_series().to_numpy()
    t0 = float(submit.min())
    day = ((submit - t0) // DAY_S).astype(np.int64)
    days = int(day.max()) + 1
    work_day = np.bincount(day, weights=work, minlength=days)
    jobs_day = np.bincount(day, minlength=days)
    cw = np.concatenate(([0.0], np.cumsum(work_day)))
    cj = np.concatenate(([0], np.cumsum(jobs_day)))
    starts = np.arange(0, days, step_days)
    ends = np.minimum(starts + 7, days)
    return pl.DataFrame(
        {
            "window": np.arange(starts.size, dtype=np.int64),
            "start_s": t0 + starts * DAY_S,
            "jobs": (cj[ends] - cj[starts]).astype(np.int64),
            "load": (cw[ends] - cw[starts]) / (machine_procs * WEEK_S),
        }
    )


def chosen_weeks(loads: pl.DataFrame, *, count: int, min_load: float) -> pl.DataFrame:
    """At most ``count`` non-overlapping windows with load ≥ ``min_load``, in time order,
    numbered ``week`` 0.. in that order.

    First the largest set of non-overlapping qualifying windows (the earliest-start greedy of
    interval scheduling, which is optimal for the number of windows), then, when it holds more
    than ``count``, its ``count`` most loaded windows (ties: the earlier window).
    """
    if count < 1:
        raise ConfigurationError(f"count must be >= 1, got {count}")
    qualifying = loads.filter(pl.col("load") >= min_load).sort("start_s")
    keep: list[int] = []
    last = -np.inf
    for index, start in enumerate(qualifying["start_s"].to_list()):
        if start - last >= WEEK_S:
            keep.append(index)
            last = start
    chosen = qualifying[keep]
    if chosen.height > count:
        chosen = chosen.sort(["load", "start_s"], descending=[True, False]).head(count)
    chosen = chosen.sort("start_s")
    return chosen.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("week"))


def week_jobs(jobs: pl.DataFrame, start_s: float) -> pl.DataFrame:
    """The jobs submitted in the week starting at ``start_s``."""
    return jobs.filter((pl.col("submit_s") >= start_s) & (pl.col("submit_s") < start_s + WEEK_S))


def split_weeks(weeks: pl.DataFrame, *, how: str = "chronological") -> pl.DataFrame:
    """``weeks`` with a ``split`` column: ``train`` for the first half and ``test`` for the
    second (``chronological``: the earlier weeks train, as a deployment would), or alternating
    in time order (``alternate``: train, test, train, ...)."""
    n = weeks.height
    if how == "chronological":
        labels = ["train"] * (n // 2) + ["test"] * (n - n // 2)
    elif how == "alternate":
        labels = ["train" if k % 2 == 0 else "test" for k in range(n)]
    else:
        raise ConfigurationError(f"week split {how!r} must be one of {', '.join(WEEK_SPLITS)}")
    return weeks.sort("start_s").with_columns(pl.Series("split", labels))
