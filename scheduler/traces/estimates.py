"""User run-time estimates (SWF field 9, requested time) from the Tsafrir–Etsion–Feitelson model.

D. Tsafrir, Y. Etsion and D. G. Feitelson, "Modeling user runtime estimates", JSSPP 2005
(LNCS 3834). The reference for the parameter values and the procedures is the authors' C++
implementation (``est_model.cc``/``est_model.hh``, Dan Tsafrir, m_tsafrir05 in the Parallel
Workloads Archive); this module re-implements it with a seeded NumPy generator.

The model is a model of the *distribution of estimates* (a histogram of estimate values and the
number of jobs using each), for ``n`` jobs on a system whose largest allowed estimate is
``max_estimate_s``; estimates are then *paired with the jobs given their run times*.

Histogram (:func:`estimate_distribution`)
-----------------------------------------
- **Number of distinct estimates** ``K``: piecewise linear in ``n`` through (0, 0), (20, 10),
  (200, 20), (1000, 35), (10000, 90), (70000, 340), (250000, 565), then 565
  (:data:`BIN_COUNT_POINTS`; the paper's linear model).
- **Head**: the 20 most popular values (:data:`HEAD_SIZE`) hold 89 % of the jobs
  (:data:`HEAD_SHARE_PERCENT`). Their times: the maximum estimate, the 15 values popular in all
  four logs the model was fitted on (:data:`JOINT_ESTIMATES_S`: 5, 10, 15, 20, 30 min, 1, 2, 3,
  4, 5, 6, 8, 10, 12, 18 h) that lie below the maximum, then "round" values (multiples of 200 h,
  100 h, 50 h, 10 h, 5 h, 2 h, 1 h, 20 min, 10 min, 5 min, :data:`ROUND_STEPS_S`, each walked
  down from the maximum) until there are 20. Their shares by popularity rank ``x``: ``x = 2..20``
  get ``14.0491 * exp(-0.177531 x) + 0.462513`` percent (:data:`HEAD_SHARE_PARAMS`), rank 1 the
  rest of the 89 % (21.7 %). Which time gets which rank: the maximum is rank 1; the others are
  ranked by a random procedure driven by the time-rank to popularity-rank table of the four logs
  (:data:`TIME_RANK_TO_POPULARITY`): for time-rank ``t = 1..19`` (chronological order) the ranks
  seen at ``t`` in the four logs join a pool; a rank that appears in no log later than ``t`` and
  is still free is taken first (smallest such rank), else the smaller of two uniform draws from
  the pool (which favours popular ranks and ranks seen in several logs).
- **Tail**: the other ``K - 20`` values share the remaining 11 %. Their times follow
  ``y = (a - 1) x / (a - x)`` (``x`` the time rank over the tail count, ``y`` the time over the
  maximum, ``a = 1 + 12.1039 K^-0.6026``), rounded to whole minutes and moved by +30, -30, +20,
  -20, +10 or -10 s to avoid a value already taken (a value that finds no free place is
  dropped); their shares follow ``795.6 x^-2.267`` (``x = 21, 22, ...``, normalised to 11 %),
  matched to the times at random.
- **Counts**: the percentages times ``n``, apportioned to whole jobs by largest remainders (sum
  exactly ``n``).

Pairing with run times (:func:`with_estimates`): the estimate is drawn given the run time
-------------------------------------------------------------------------------------------
The run times come from the workload (a log, or :mod:`scheduler.traces.lublin`) and must stay as
they are; the model describes the estimates' *marginal* distribution. So, as in the reference
``est_assign``, jobs are served from the longest run down and each draws its estimate uniformly
from the unused estimates ``>=`` its run time (:mod:`._estimates_kernel`). Every estimate of the
histogram is used exactly once (the marginal is the model's), ``run <= estimate`` always holds,
and the accuracy ``run / estimate`` is an outcome, not an input: short jobs can draw any
estimate, long jobs only the long ones. Drawing run times given estimates would instead replace
the workload's run times, which the workload model already fixed.

Choices where the reference is silent or strict
-----------------------------------------------
- Counts by largest remainders instead of the reference's ``max(1, round(p n / 100))`` followed
  by an iterative correction: exact sum for any ``n`` (also ``n`` < ``K``), and no bin forced to
  hold a job; the two differ by at most one job per bin.
- Fewer than 20 head values (a maximum estimate of a few hours): the ranks drawn for the
  existing time ranks are renumbered 1..N in their order, and only the first N share formulas
  are used. With no tail (``K <= 20``, small ``n``) the head shares are scaled to 100 %.
- Run times above ``max_estimate_s``: the reference truncates the run times; we refuse (the
  error names ``max_estimate_s``), since an estimate must not change a run time. Unknown run times
  (negative) pair as 0 s.
- Default ``max_estimate_s``: the longest run time among the jobs to fill, rounded up to whole
  hours (at least 1 h, the reference's minimum); for the Lublin model at most 46 h (e**12 s).
"""

from __future__ import annotations

import math
import numbers
from typing import TypeVar

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError, quote
from scheduler.traces import _estimates_kernel
from scheduler.traces.swf import Trace

__all__ = [
    "BIN_COUNT_POINTS",
    "HEAD_SHARE_PARAMS",
    "HEAD_SHARE_PERCENT",
    "HEAD_SIZE",
    "JOINT_ESTIMATES_S",
    "MIN_MAX_ESTIMATE_S",
    "ROUND_STEPS_S",
    "TAIL_SHARE_PARAMS",
    "TIME_RANK_TO_POPULARITY",
    "bin_count",
    "estimate_distribution",
    "head_estimates",
    "with_estimates",
]

#: A trace or a jobs table: :func:`with_estimates` returns what it is given.
TraceOrJobs = TypeVar("TraceOrJobs", Trace, pl.DataFrame)

MINUTE_S = 60
HOUR_S = 3600
#: Number of popular ("head") estimate values.
HEAD_SIZE = 20
#: Percent of the jobs using a head value.
HEAD_SHARE_PERCENT = 89.0
#: Share of head popularity rank x = 2..20, percent: a * exp(b * x) + c.
HEAD_SHARE_PARAMS = (14.0491, -0.177531, 0.462513)
#: Share of tail popularity rank x = 21, 22, ...: a * x**b (then normalised to the tail's share).
TAIL_SHARE_PARAMS = (795.6, -2.267)
#: Tail times: y = (a - 1) x / (a - x) with a = 1 + p * K**q.
TAIL_TIME_PARAMS = (12.1039, -0.6026)
#: Offsets tried, in order, when a tail time collides with one already taken, seconds.
TAIL_OFFSETS_S = (0, 30, -30, 20, -20, 10, -10)
#: Smallest maximum estimate the model accepts, seconds.
MIN_MAX_ESTIMATE_S = HOUR_S
#: The popular estimates common to the four logs the model was fitted on, seconds.
JOINT_ESTIMATES_S = tuple(m * MINUTE_S for m in (5, 15, 10, 20, 30)) + tuple(
    h * HOUR_S for h in (1, 2, 3, 4, 5, 6, 8, 10, 12, 18)
)
#: Steps of the "round" estimates completing the head, largest first, seconds.
ROUND_STEPS_S = tuple(h * HOUR_S for h in (200, 100, 50, 10, 5, 2, 1)) + tuple(
    m * MINUTE_S for m in (20, 10, 5)
)
#: (jobs, distinct estimates): the linear model of the number of estimate values.
BIN_COUNT_POINTS = (
    (0, 0), (20, 10), (200, 20), (1000, 35), (10000, 90), (70000, 340), (250000, 565),
)  # fmt: skip
#: Popularity rank (1 = most used) of the head value of each time rank (0 = the maximum,
#: 1..19 chronological) in the four logs of the paper (SDSC SP2, CTC SP2, KTH, SDSC Blue).
TIME_RANK_TO_POPULARITY = np.array(
    [
        [3, 1, 1, 1], [1, 3, 4, 6], [4, 4, 10, 5], [17, 2, 14, 3], [13, 12, 20, 7],
        [7, 9, 2, 2], [8, 8, 3, 18], [18, 18, 7, 19], [2, 6, 12, 4], [6, 7, 6, 11],
        [16, 11, 19, 20], [10, 20, 5, 9], [5, 16, 18, 10], [15, 5, 16, 14], [14, 14, 9, 13],
        [19, 13, 17, 16], [11, 10, 15, 15], [12, 15, 13, 17], [9, 17, 8, 8], [20, 19, 11, 12],
    ]
)  # fmt: skip


# --------------------------------------------------------------------------------------------
# The histogram
# --------------------------------------------------------------------------------------------


def bin_count(n_jobs: int) -> int:
    """Number of distinct estimate values for ``n_jobs`` jobs (the linear model).

    Parameters
    ----------
    n_jobs
        Number of jobs (>= 0).

    Returns
    -------
    int
        Non-decreasing in ``n_jobs``; 90 for 10,000 jobs, 565 from 250,000 on.
    """
    jobs, values = zip(*BIN_COUNT_POINTS, strict=True)
    if n_jobs >= jobs[-1]:
        return values[-1]
    k = int(np.searchsorted(jobs, n_jobs, side="right"))  # jobs[k - 1] <= n_jobs < jobs[k]
    slope = (values[k] - values[k - 1]) / (jobs[k] - jobs[k - 1])
    return values[k - 1] + round((n_jobs - jobs[k - 1]) * slope)


def head_estimates(max_estimate_s: int) -> list[int]:
    """The head estimate values, seconds: the maximum first, then the others ascending.

    Parameters
    ----------
    max_estimate_s
        The largest allowed estimate, seconds (>= 3600).

    Returns
    -------
    list of int
        At most 20 distinct values, all ``<= max_estimate_s``.
    """
    head = [max_estimate_s] + [e for e in JOINT_ESTIMATES_S if e < max_estimate_s]
    for step in ROUND_STEPS_S:
        value = (max_estimate_s // step) * step
        while value > 0 and len(head) < HEAD_SIZE:
            if value not in head:
                head.append(value)
            value -= step
    return [head[0], *sorted(head[1:])]


def _popularity_ranks(rng: np.random.Generator, n_head: int) -> np.ndarray:
    """Popularity rank (1..n_head) of each head time rank (0 = the maximum)."""
    table = TIME_RANK_TO_POPULARITY
    # The last time rank at which each popularity rank appears in some log.
    due = {rank: int(np.max(np.nonzero((table == rank).any(axis=1))[0])) for rank in range(1, 21)}
    chosen: list[int] = []
    pool: list[int] = []
    for time_rank in range(HEAD_SIZE):
        pool += [int(r) for r in table[time_rank] if r not in chosen]
        if time_rank == 0:
            rank = 1  # the maximum estimate is the most popular
        else:
            overdue = [r for r in range(1, 21) if due[r] <= time_rank and r not in chosen]
            if overdue:
                rank = overdue[0]
            else:
                rank = min(pool[int(i)] for i in rng.integers(0, len(pool), size=2))
        chosen.append(rank)
        pool = [r for r in pool if r != rank]
    ranks = np.array(chosen[:n_head])
    # Fewer head values than 20: renumber the ranks drawn 1..n_head, keeping their order.
    return np.argsort(np.argsort(ranks)) + 1


def _tail_times(max_estimate_s: int, head: list[int], n_tail: int, n_bins: int) -> list[int]:
    """Tail estimate values, seconds, ascending (fewer than ``n_tail`` when some collide)."""
    a = 1.0 + TAIL_TIME_PARAMS[0] * n_bins ** TAIL_TIME_PARAMS[1]
    taken = set(head)
    tail: list[int] = []
    for i in range(1, n_tail + 1):
        x = i / n_tail
        y = (a - 1.0) * x / (a - x)
        base = round(y * max_estimate_s / MINUTE_S) * MINUTE_S
        for offset in TAIL_OFFSETS_S:
            value = base + offset
            if 0 < value < max_estimate_s and value not in taken:
                taken.add(value)
                tail.append(value)
                break
    return sorted(tail)


def estimate_distribution(
    n_jobs: int, max_estimate_s: int, *, seed: int | np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The model's histogram of estimates for ``n_jobs`` jobs.

    Parameters
    ----------
    n_jobs
        Number of jobs (estimates) (>= 0).
    max_estimate_s
        Largest allowed estimate, seconds (an integer >= 3600); it is the most popular value.
    seed
        Seed (integer >= 0) or generator of the random choices (rank mapping, tail matching).

    Returns
    -------
    times_s : numpy.ndarray of int64
        Distinct estimate values, seconds, ascending, all in (0, max_estimate_s].
    counts : numpy.ndarray of int64
        Jobs using each value (>= 0), summing to ``n_jobs``.

    Raises
    ------
    ConfigurationError
        An argument is out of range (the message names it).
    """
    n_jobs = _check_int("n_jobs", n_jobs, minimum=0)
    max_estimate_s = _check_int("max_estimate_s", max_estimate_s, minimum=MIN_MAX_ESTIMATE_S)
    rng = _generator(seed)

    head = head_estimates(max_estimate_s)
    n_head = len(head)
    a, b, c = HEAD_SHARE_PARAMS
    by_rank = a * np.exp(b * np.arange(2, n_head + 1)) + c
    head_share = np.concatenate(([HEAD_SHARE_PERCENT - by_rank.sum()], by_rank))
    head_percent = head_share[_popularity_ranks(rng, n_head) - 1]

    n_bins = max(bin_count(n_jobs), n_head)
    tail = _tail_times(max_estimate_s, head, n_bins - n_head, n_bins)
    if tail:
        share = (
            TAIL_SHARE_PARAMS[0]
            * np.arange(21, 21 + len(tail), dtype=float) ** (TAIL_SHARE_PARAMS[1])
        )
        tail_percent = rng.permutation(share / share.sum() * (100.0 - HEAD_SHARE_PERCENT))
    else:
        head_percent = head_percent / head_percent.sum() * 100.0
        tail_percent = np.empty(0)

    times = np.array(head + tail, dtype=np.int64)
    percent = np.concatenate((head_percent, tail_percent))
    counts = _apportion(percent / 100.0 * n_jobs, n_jobs)
    order = np.argsort(times)
    return times[order], counts[order]


def _apportion(quotas: np.ndarray, total: int) -> np.ndarray:
    """Whole numbers summing to ``total``, by largest remainders of ``quotas``."""
    counts = np.floor(quotas).astype(np.int64)
    short = total - int(counts.sum())
    if short > 0:
        # Largest remainders first; ties by position (stable), so the result is deterministic.
        order = np.argsort(-(quotas - counts), kind="stable")
        counts[order[:short]] += 1
    return counts


# --------------------------------------------------------------------------------------------
# Filling a trace
# --------------------------------------------------------------------------------------------


def with_estimates(
    trace_or_jobs: TraceOrJobs, *, seed: int, max_estimate_s: int | None = None
) -> TraceOrJobs:
    """Fill the missing requested times (SWF field 9) with the model's estimates.

    Parameters
    ----------
    trace_or_jobs
        A :class:`~scheduler.traces.swf.Trace`, or a table with the SWF columns ``run_s`` and
        ``req_time_s`` (other columns are kept).
    seed
        Seed of the random choices (an integer >= 0); the same seed gives the same estimates.
    max_estimate_s
        The system's largest estimate, seconds (an integer >= 3600, >= every run time to fill);
        default: the longest such run time rounded up to whole hours (at least 1 h).

    Returns
    -------
    Trace or polars.DataFrame
        The same type, jobs in the same order; ``req_time_s`` of each job whose requested time
        was missing (negative, SWF's -1) is now an estimate in (0, max_estimate_s], ``>= run_s``;
        every other value is unchanged.

    Raises
    ------
    ConfigurationError
        ``seed`` or ``max_estimate_s`` out of range, a column missing, a run time above
        ``max_estimate_s``, or a workload whose run times are too long for the model's
        estimates (too many long jobs for the share of long estimates).
    """
    if isinstance(trace_or_jobs, Trace):
        return trace_or_jobs.with_jobs(
            with_estimates(trace_or_jobs.jobs, seed=seed, max_estimate_s=max_estimate_s)
        )
    jobs = trace_or_jobs
    if not isinstance(jobs, pl.DataFrame):
        raise ConfigurationError(
            f"trace_or_jobs must be a Trace or a polars DataFrame, got {type(jobs).__name__}"
        )
    missing_columns = [name for name in ("run_s", "req_time_s") if name not in jobs.columns]
    if missing_columns:
        raise ConfigurationError(f"the jobs table lacks the SWF column(s) {missing_columns}")
    seed = _check_int("seed", seed, minimum=0)
    requested = jobs.get_column("req_time_s").to_numpy()
    to_fill = np.flatnonzero(requested < 0)
    runs = np.maximum(jobs.get_column("run_s").to_numpy()[to_fill], 0).astype(np.int64)
    longest = int(runs.max()) if runs.size else 0
    if max_estimate_s is None:
        max_estimate_s = max(MIN_MAX_ESTIMATE_S, math.ceil(longest / HOUR_S) * HOUR_S)
    max_estimate_s = _check_int("max_estimate_s", max_estimate_s, minimum=MIN_MAX_ESTIMATE_S)
    if longest > max_estimate_s:
        over = int((runs > max_estimate_s).sum())
        raise ConfigurationError(
            f"max_estimate_s={max_estimate_s} is below the run time of {over} job(s) to fill "
            f"(longest {longest} s); an estimate must be >= the run time"
        )
    rng = np.random.default_rng(seed)
    times, counts = estimate_distribution(to_fill.size, max_estimate_s, seed=rng)
    estimates_desc = np.repeat(times, counts)[::-1].copy()
    by_run = np.argsort(-runs, kind="stable")
    runs_desc = runs[by_run]
    short = np.flatnonzero(estimates_desc < runs_desc)
    if short.size:
        raise ConfigurationError(
            f"the estimate model cannot cover these run times with max_estimate_s="
            f"{max_estimate_s}: the {short[0] + 1} longest jobs need estimates >= "
            f"{runs_desc[short[0]]} s but the model gives only {short[0]} such estimates; "
            "raise max_estimate_s"
        )
    chosen = _estimates_kernel.assign_sorted(runs_desc, estimates_desc, rng.random(runs.size))
    filled = requested.copy()
    filled[to_fill[by_run]] = chosen
    dtype = jobs.schema["req_time_s"]
    return jobs.with_columns(pl.Series("req_time_s", filled).cast(dtype))


def _generator(seed: int | np.random.Generator) -> np.random.Generator:
    """A generator from a seed (checked) or the generator itself."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(_check_int("seed", seed, minimum=0))


def _check_int(name: str, value: object, *, minimum: int) -> int:
    """An integer argument >= minimum, or a ConfigurationError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ConfigurationError(f"{name} must be an integer >= {minimum}, got {quote(value)}")
    return int(value)
