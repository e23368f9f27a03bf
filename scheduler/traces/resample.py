"""Train/test split and per-user weekly resampling of a filtered trace.

The queue-tuning studies never simulate a log as it was recorded: they cut it at its temporal
midpoint into a *train* and a *test* part, and from each part draw many synthetic weeks that keep
the habits of every user while breaking the unique sequence of the log.

A resampled week (method ``"uniform"``) is built like this. Week ``k`` of a source part is the
interval ``[t0 + k·W, t0 + (k+1)·W)`` of a clock, ``W`` one week (604,800 s), with two alignments:

- ``first_submit`` (no calendar given; the queue-tuning study's default): the clock is the trace
  time and ``t0`` the part's first submit time, so a week starts at an arbitrary instant;
- ``calendar`` (a :class:`~scheduler.traces.calendar.TraceCalendar` given; the online study's
  default): the clock is the log's local wall clock (:meth:`TraceCalendar.wall_clock_s
  <scheduler.traces.calendar.TraceCalendar.wall_clock_s>`) and ``t0`` the first local Monday
  00:00 at or after the part's first submission, so source weeks run Monday 00:00 to Monday
  00:00 in the log's time zone and a job's offset in its week is its local weekday and time of
  day (daylight-saving time: see :mod:`scheduler.traces.calendar`).

Only the ``K = floor((last − t0) / W)`` complete weeks are used (``last`` = the part's last
submission on that clock): the trailing partial week is never drawn, nor, on the calendar, the
leading one before the first Monday. Every user who submitted at least one job in the part draws
one source week uniformly in ``0..K-1``; the user's jobs of that week enter the new week with
their offset inside the week unchanged (submit time in ``[0, W)`` seconds from the week's start;
on the calendar, offset 0 is a Monday 00:00). Users with SWF user id -1 (unknown) count as one
user.

Method ``"permutation"``: each user's K weeks are shuffled without replacement, once per cycle
of K resampled weeks, and resampled week ``i`` takes the user's week ``π_u[i mod K]``; within a
cycle no user-week is used twice.

Seeds: resampled week ``i`` of (trace, split) uses ``SeedSequence([seed, h(trace), h(split),
i])`` for ``"uniform"`` and ``SeedSequence([seed, h(trace), h(split), i // K])`` for the shared
permutation of its cycle, where ``h`` is the first 8 bytes of SHA-256 of the UTF-8 name. A week is
therefore the same on every machine and in every rerun, whatever other weeks are drawn.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import numpy as np
import polars as pl

from scheduler.core.constants import WEEK_S
from scheduler.core.errors import ConfigurationError
from scheduler.traces.calendar import TraceCalendar

__all__ = [
    "RESAMPLING_METHODS",
    "SPLITS",
    "WEEK_COLUMNS",
    "bootstrap_week_map",
    "complete_weeks",
    "name_hash",
    "resample_weeks",
    "split_at_midpoint",
    "week_seed",
]

SPLITS = ("train", "test")
RESAMPLING_METHODS = ("uniform", "permutation")
ResamplingMethod = Literal["uniform", "permutation"]

#: Columns of a resampled-weeks table, in order. ``job_id`` is 1..n inside each week, in
#: (submit time, source job number) order; ``submit_s`` is the offset in the week (s, [0, W)).
WEEK_COLUMNS = (
    "week_index",
    "job_id",
    "submit_s",
    "run_s",
    "alloc_procs",
    "req_procs",
    "req_time_s",
    "user_id",
    "source_week",
    "source_job_id",
)


def split_at_midpoint(jobs: pl.DataFrame, *, name: str = "trace") -> dict[str, pl.DataFrame]:
    """Cut a job table at the midpoint of its first and last submit times.

    ``train`` holds the jobs submitted strictly before ``(first + last) / 2`` (s), ``test`` the
    others; both keep the table's columns and row order. Raises ConfigurationError naming
    ``name`` when the table is empty or a part would be empty.
    """
    if jobs.height == 0:
        raise ConfigurationError(f"{name}: no jobs to split (the filtered trace is empty)")
    first, last = jobs["submit_s"].min(), jobs["submit_s"].max()
    midpoint = (float(first) + float(last)) / 2.0  # type: ignore[arg-type]
    parts = {
        "train": jobs.filter(pl.col("submit_s") < midpoint),
        "test": jobs.filter(pl.col("submit_s") >= midpoint),
    }
    for split, part in parts.items():
        if part.height == 0:
            raise ConfigurationError(
                f"{name}: the {split} split is empty (all jobs submitted at {first} s)"
            )
    return parts


def name_hash(name: str) -> int:
    """A stable 64-bit integer of a name (first 8 bytes of its SHA-256), for seed sequences."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")


def week_seed(seed: int, trace: str, split: str, index: int) -> np.random.SeedSequence:
    """The seed sequence of draw ``index`` of (trace, split) under the global ``seed``."""
    if seed < 0 or index < 0:
        raise ConfigurationError(f"seed and index must be >= 0, got {seed}, {index}")
    return np.random.SeedSequence([seed, name_hash(trace), name_hash(split), index])


class _UserWeeks:
    """The source part indexed by (user, source week): rows of each group are contiguous."""

    def __init__(
        self, jobs: pl.DataFrame, name: str, calendar: TraceCalendar | None = None
    ) -> None:
        if jobs.height == 0:
            raise ConfigurationError(f"{name}: the source part has no jobs")
        submit = jobs["submit_s"].to_numpy().astype(np.float64)
        if calendar is None:  # weeks from the first submission, on the trace's clock
            t0 = float(submit.min())
            what = "one complete week"
        else:  # Monday-to-Monday weeks of the log's local wall clock
            submit = calendar.wall_clock_s(submit)
            t0 = TraceCalendar.next_monday_s(float(submit.min()))
            what = f"one complete calendar week (Monday to Monday, {calendar.time_zone})"
        self.weeks = int((float(submit.max()) - t0) // WEEK_S)
        if self.weeks < 1:
            days = (float(submit.max()) - float(submit.min())) / 86400
            raise ConfigurationError(
                f"{name}: spans less than {what} ({days:.1f} days); cannot resample weeks"
            )
        week = np.floor((submit - t0) / WEEK_S).astype(np.int64)
        users, user_index = np.unique(jobs["user_id"].to_numpy(), return_inverse=True)
        self.users = len(users)
        # the trailing partial week (and on the calendar the leading one) is never drawn
        keep = (week >= 0) & (week < self.weeks)
        group = user_index.astype(np.int64) * self.weeks + week
        order = np.lexsort((jobs["job_id"].to_numpy(), submit, np.where(keep, group, -1)))
        order = order[keep[order]]
        self.rows = order
        self.offset_s = (submit - t0 - week * WEEK_S)[order]
        self.week_of_row = week[order]
        counts = np.bincount(group[order], minlength=self.users * self.weeks)
        self.count = counts
        self.start = np.concatenate(([0], np.cumsum(counts)[:-1]))
        self.table = jobs

    def rows_for(self, chosen_week: np.ndarray) -> np.ndarray:
        """Positions (into ``self.rows``) of every user's jobs in its chosen source week."""
        group = np.arange(self.users, dtype=np.int64) * self.weeks + chosen_week
        count = self.count[group]
        start = self.start[group]
        total = int(count.sum())
        # expand each (start, count) run into consecutive positions without a Python loop
        run_start = np.repeat(start - np.concatenate(([0], np.cumsum(count)[:-1])), count)
        return run_start + np.arange(total, dtype=np.int64)


def complete_weeks(
    jobs: pl.DataFrame, *, name: str = "trace", calendar: TraceCalendar | None = None
) -> int:
    """K: the number of complete source weeks of a part (the weeks resampling draws from, cut
    as :func:`resample_weeks` cuts them with the same ``calendar``)."""
    return _UserWeeks(jobs, name, calendar).weeks


def bootstrap_week_map(
    weeks: int, *, seed: int, trace: str, split: str, replicate: int
) -> np.ndarray:
    """Source weeks of bootstrap replicate ``replicate`` of a part with ``weeks`` complete weeks.

    ``weeks`` source-week numbers drawn uniformly with replacement in ``0..weeks-1`` (a bootstrap
    of the part's weeks, each week kept whole: every user's jobs of that week together), from
    ``SeedSequence([seed, h(trace), h(split + "/bootstrap"), replicate])``. Pass it as
    ``week_map`` to :func:`resample_weeks` to resample weeks of the bootstrap part.
    """
    if weeks < 1 or replicate < 0:
        raise ConfigurationError(f"weeks must be >= 1 and replicate >= 0, got {weeks}, {replicate}")
    rng = np.random.default_rng(week_seed(seed, trace, f"{split}/bootstrap", replicate))
    return rng.integers(0, weeks, size=weeks)


def _choose_weeks(
    source: _UserWeeks, method: str, seed: int, trace: str, split: str, index: int
) -> np.ndarray:
    if method == "uniform":
        rng = np.random.default_rng(week_seed(seed, trace, split, index))
        return rng.integers(0, source.weeks, size=source.users)
    cycle, position = divmod(index, source.weeks)
    rng = np.random.default_rng(week_seed(seed, trace, split, cycle))
    permutations = rng.permuted(
        np.tile(np.arange(source.weeks, dtype=np.int64), (source.users, 1)), axis=1
    )
    return permutations[:, position]


def resample_weeks(
    jobs: pl.DataFrame,
    indices: range | list[int],
    *,
    seed: int,
    trace: str,
    split: str,
    method: ResamplingMethod = "uniform",
    week_map: np.ndarray | None = None,
    calendar: TraceCalendar | None = None,
) -> pl.DataFrame:
    """Resampled weeks ``indices`` of one source part, stacked in one table.

    Parameters
    ----------
    jobs
        The source part (train or test) with the SWF columns ``job_id, submit_s, run_s,
        alloc_procs, req_procs, req_time_s, user_id``.
    indices
        Which resampled weeks to build (week numbers >= 0); week ``i`` does not depend on the
        others, so any batch of weeks can be built on its own.
    seed, trace, split
        Where the randomness comes from (see the module docstring).
    method
        ``"uniform"`` (a source week drawn independently per user and week) or
        ``"permutation"`` (each user's weeks shuffled without replacement).
    week_map
        Optional: resample a bootstrap part whose week ``i`` is the source part's week
        ``week_map[i]`` (:func:`bootstrap_week_map`; ``K`` entries in ``0..K-1`` for a part of
        ``K`` complete weeks). A user's draw ``i`` then brings its jobs of source week
        ``week_map[i]``; ``source_week`` holds that original week.
    calendar
        The log's calendar (:func:`scheduler.traces.calendar.table_calendar`): source weeks
        run Monday 00:00 to Monday 00:00 local time and ``submit_s`` is the local wall-clock
        offset from Monday 00:00. ``None`` (the ``first_submit`` alignment): weeks start every
        W seconds from the part's first submission.

    Returns
    -------
    pl.DataFrame
        Columns :data:`WEEK_COLUMNS`, sorted by (``week_index``, ``submit_s``, ``job_id``).

    Raises
    ------
    ConfigurationError
        Unknown method, a part shorter than a (calendar) week, a ``week_map`` that is not
        ``K`` week numbers in ``0..K-1``, or a resampled week with no jobs (every user drew a
        week in which it submitted nothing).
    """
    if method not in RESAMPLING_METHODS:
        raise ConfigurationError(
            f"unknown resampling method {method!r}; choose one of {list(RESAMPLING_METHODS)}"
        )
    name = f"{trace} {split}"
    source = _UserWeeks(jobs, name, calendar)
    if week_map is not None:
        week_map = np.asarray(week_map)
        if (
            week_map.shape != (source.weeks,)
            or not np.issubdtype(week_map.dtype, np.integer)
            or (week_map < 0).any()
            or (week_map >= source.weeks).any()
        ):
            raise ConfigurationError(
                f"{name}: week_map must hold {source.weeks} week numbers in 0..{source.weeks - 1}"
            )
    picked = source.table.select("run_s", "alloc_procs", "req_procs", "req_time_s", "user_id")
    ordered = sorted(int(i) for i in indices)
    if len(set(ordered)) != len(ordered):
        raise ConfigurationError(f"{name}: a resampled week index is listed twice")
    weeks = []
    for index in ordered:
        chosen = _choose_weeks(source, method, seed, trace, split, int(index))
        if week_map is not None:
            chosen = week_map[chosen]
        positions = source.rows_for(chosen)
        if positions.size == 0:
            raise ConfigurationError(
                f"{name}: resampled week {index} has no jobs (each of the {source.users} users "
                f"drew a week in which it submitted nothing); use a longer trace or another seed"
            )
        rows = source.rows[positions]
        week = picked[rows].with_columns(
            pl.lit(int(index), dtype=pl.Int64).alias("week_index"),
            pl.Series("submit_s", source.offset_s[positions], dtype=pl.Float64),
            pl.Series("source_week", source.week_of_row[positions], dtype=pl.Int64),
            pl.Series("source_job_id", source.table["job_id"].to_numpy()[rows], dtype=pl.Int64),
        )
        week = week.sort("submit_s", "source_job_id").with_columns(
            pl.int_range(1, week.height + 1, dtype=pl.Int64).alias("job_id")
        )
        weeks.append(week.select(WEEK_COLUMNS))
    if not weeks:
        return pl.DataFrame(schema={c: _week_dtype(c, jobs) for c in WEEK_COLUMNS})
    return pl.concat(weeks, how="vertical_relaxed")


def _week_dtype(column: str, jobs: pl.DataFrame) -> pl.DataType:
    if column in ("week_index", "job_id", "source_week", "source_job_id"):
        return pl.Int64()
    if column == "submit_s":
        return pl.Float64()
    return jobs.schema[column]
