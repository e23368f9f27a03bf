"""Synthetic workloads from the Lublin–Feitelson model of rigid parallel jobs.

U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", JPDC 63(11):1105-1122, 2003. The reference for the parameter
values and for the mechanics of the arrival process is the model's original C program
(``m_lublin99.c``, Uri Lublin, distributed with the Parallel Workloads Archive); this module is
a vectorised re-implementation of it with a seeded NumPy :class:`~numpy.random.Generator`
(every random choice comes from ``seed``). ``docs/workloads.md`` has the same description with
the measured comparison against a log written by the C program.

The model, for one class of jobs
--------------------------------
**Size** (processors, "nodes" in the paper). A job is serial (1 processor) with probability
``serial_prob``. Otherwise ``u = log2(size)`` is drawn from a *two-stage uniform*: with
probability ``uprob`` uniform on ``[ulow, umed]``, else uniform on ``[umed, uhi]``. With
probability ``pow2_prob`` (of all jobs; the draw that decides "serial" decides this too: the job
is a power-of-two job when that uniform lies in ``(serial_prob, serial_prob + pow2_prob]``) ``u``
is rounded to an integer. The size is ``round(2**u)``.

**Run time** (seconds). ``log(run)`` (natural logarithm) follows a *hyper-gamma*: with
probability ``p = pa * size + pb`` (clipped to [0, 1]) a gamma(shape ``a1``, scale ``b1``), else
a gamma(``a2``, ``b2``). ``pa < 0``: larger jobs run longer. A draw above 12 (e**12 = 162,754 s,
about 45 h) is drawn again; the run time is ``floor(exp(draw))`` (the C program converts to an
unsigned integer), so at least 1 s.

**Arrivals** (seconds from time 0, midnight). ``log`` of the inter-arrival time at the *rush
hours* follows a gamma(``aarr * arar``, ``barr``) (``arar``, "arrive-rush-all-ratio", turns the
rush-hour fit into an all-day one); a draw above 13 (e**13 s, about 5 days) is drawn again. The
daily cycle stretches these times: the day has 48 buckets of 30 min; bucket ``k`` (0 = 00:00 to
00:30) gets the weight ``F(i + 0.5) - F(i - 0.5)`` with ``F`` the gamma(``anum``, ``bnum``)
distribution function and ``i`` the integer in 11..58 with ``i - 1 ≡ k (mod 48)``; weights are
normalised to mean 1. An inter-arrival draw ``x`` seconds buys ``x / 1800`` *points*; crossing a
bucket costs its weight in points, so time runs slowly (many arrivals) through heavy buckets and
quickly through light ones, and a day costs 48 points on average. The C program walks the buckets
one job at a time, carrying the remainder; that walk is the inverse of the piecewise-linear
cumulative cost ``C(t)`` (slope ``w_k / 1800`` points per second in bucket ``k``), so here the
``k``-th arrival is ``C^{-1}((x_1 + ... + x_k) / 1800)``, computed for all jobs at once, and
written in whole seconds (floor).

One deliberate difference: the C program adds each inter-arrival time to an unsigned integer
clock, truncating it, while its bucket walk keeps the exact position. Its clock therefore falls
behind its own daily cycle by about 0.5 s per job: 1.4 h after 10,000 jobs, a whole day after
about 170,000, after which arrivals no longer follow the cycle at all (in a 200,000-job sample
generated that way the 24 busiest half hours got 52 % of the arrivals instead of the cycle's
75 %). We floor the arrival times instead of the gaps: each gap differs from the C program's by
less than 1 s, and the cycle holds however many jobs are generated.

(The C program evaluates ``F`` at half-hour bucket indices although ``anum``/``bnum`` read like
hours in the paper; we keep the C program's mechanics, which are what its published logs, and the
shared ``Lublin-256.swf.gz``, were made with.)

Job classes and the ``job_types`` argument
------------------------------------------
The model has two classes, **interactive** and **batch**, each with its own parameters and its
own arrival stream; the C program (``INCLUDE_JOBS_TYPE 1``, its default) merges the two streams
by time, the next job being the one whose stream's next arrival comes first (interactive on a
tie). The share of each class is therefore not a parameter: it follows from the two arrival
rates (0.85 of the jobs are interactive, measured over 20 seeds of 10,000 jobs: 0.82 to
0.87). ``job_types`` selects:

``"mixed"`` (default)
    both classes, merged as above; SWF field 15 (``queue_id``) holds the class, 0 interactive,
    1 batch, as the C program writes it.
``"combined"``
    the model fitted to all jobs regardless of class (the C program with ``INCLUDE_JOBS_TYPE
    0``): one stream, ``queue_id`` -1. This is how the shared ``Lublin-256.swf.gz`` (and the
    ``lublin_256.swf`` of the gen-sched-policies repository) was made: every job of it has
    queue number 0, which the C program writes only in this mode.
``"batch"``, ``"interactive"``
    one class only.

Published parameter values (:data:`BATCH`, :data:`INTERACTIVE`, :data:`COMBINED`)
---------------------------------------------------------------------------------
============  ========  ===========  ========  ======================================
parameter     batch     interactive  combined  meaning
============  ========  ===========  ========  ======================================
serial_prob   0.2927    0.1541       0.244     share of serial jobs
pow2_prob     0.6686    0.625        0.576     share of power-of-two parallel jobs
ulow          1.2       1            0.8       lower end of log2(size), parallel jobs
umed          uhi - 2   uhi - 2.5    uhi - 2.5 break point of the two-stage uniform
uhi           log2 P    log2 P - 1.5 log2 P    upper end of log2(size)
uprob         0.875     0.705        0.86      weight of the lower uniform [ulow, umed]
a1, b1        6.57,     3.8351,      4.2,      first gamma of log(run): shape, scale
              0.823     0.6605       0.94
a2, b2        639.1,    7.073,       312,      second gamma of log(run): shape, scale
              0.0156    0.6856       0.03
pa, pb        -0.003,   -0.0118,     -0.0054,  p = pa * size + pb: weight of the first
              0.6986    0.9156       0.78      gamma
aarr, barr    6.0415,   6.5510,      10.2303,  gamma of log(inter-arrival) at the rush
              0.8531    0.6621       0.4871    hours: shape (times arar), scale
arar          1.0519    0.9797       1.0225    arrive-rush-all ratio (multiplies aarr)
anum, bnum    6.1271,   8.9186,      8.1737,   gamma of the daily cycle: shape, scale
              5.2740    3.6680       3.9631    (half-hour buckets, see above)
============  ========  ===========  ========  ======================================

**Machine size** ``P`` (``machine_procs``). The C program's values are for a 128-node machine
(``uhi = 7``; interactive ``uhi = 5.5``, "the biggest interactive job has 45 nodes") and its
comments say to set ``uhi = log2 P`` and ``umed = uhi - 2.5`` (1.5 to 3.5) for another machine.
We keep each class's offsets from ``log2 P`` (table above): for ``P = 128`` the values are the
published ones, and for ``P = 256`` the combined class gets ``uhi = 8``, ``umed = 5.5``, which is
what ``Lublin-256.swf.gz`` shows (its sizes above 2**4.5 are 0.39 of the non-power-of-two
parallel jobs: 0.32 expected with ``umed = 5.5``, 0.14 with ``umed = 4.5`` before the rounding
bias). ``ulow`` stays (the smallest parallel job has 2 processors). A machine too small for the
ranges to be ordered (``ulow < umed < uhi``) is refused: at least 10 processors for
``"combined"`` and ``"batch"``, 33 when interactive jobs are generated. When ``P`` is not a power
of two, a power-of-two job whose rounded size would exceed ``P`` gets the next smaller power of
two (the C program assumes a power-of-two machine).

SWF fields written
------------------
job number (1, 2, ...), submit time, run time, allocated *and* requested processors (the C
program writes -1 as requested processors; a rigid job requests what it is given, and schedlab's
filters then need no repair), status 1, queue number as above; every other field -1 (unknown),
in particular the requested time (field 9): :func:`scheduler.traces.estimates.with_estimates`
fills it with the Tsafrir–Etsion–Feitelson estimate model.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import polars as pl
from scipy.special import gammainc

from scheduler.core.constants import SWF_SCHEMA, SWF_UNKNOWN
from scheduler.core.errors import ConfigurationError, quote
from scheduler.core.version import __version__
from scheduler.traces.swf import SwfHeader, Trace

__all__ = [
    "BATCH",
    "BUCKETS_PER_DAY",
    "BUCKET_S",
    "COMBINED",
    "INTERACTIVE",
    "JOB_TYPES",
    "MAX_LOG_INTERARRIVAL",
    "MAX_LOG_RUN",
    "JobTypes",
    "LublinClass",
    "arrival_times",
    "daily_weights",
    "job_run_times",
    "job_sizes",
    "lublin_jobs",
    "lublin_trace",
    "size_range",
]

#: Buckets of the daily cycle (half hours) and their length, seconds.
BUCKETS_PER_DAY = 48
BUCKET_S = 24 * 3600 // BUCKETS_PER_DAY
#: First index ``i`` of the gamma daily-cycle density (the C program's CYCLIC_DAY_START).
CYCLIC_DAY_START = 11
#: Largest natural log of a run time (e**12 s, about 45 h): larger draws are drawn again.
MAX_LOG_RUN = 12.0
#: Largest natural log of an inter-arrival time (e**13 s, about 5 days): larger draws are
#: drawn again.
MAX_LOG_INTERARRIVAL = 13.0

#: ``job_types`` of :func:`lublin_jobs`.
JobTypes = Literal["mixed", "combined", "batch", "interactive"]
JOB_TYPES: tuple[str, ...] = get_args(JobTypes)

#: SWF queue number of each class (field 15), as the C program writes it.
INTERACTIVE_QUEUE = 0
BATCH_QUEUE = 1


@dataclass(frozen=True)
class LublinClass:
    """The parameters of one class of jobs (see the module docstring for their meaning).

    Sizes are for a machine of ``P`` processors: ``uhi = log2(P) - uhi_below``,
    ``umed = uhi - umed_below``.
    """

    name: str
    queue_id: int
    serial_prob: float
    pow2_prob: float
    ulow: float
    umed_below: float
    uhi_below: float
    uprob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float


#: Batch jobs (the C program's ``*_BATCH`` values).
BATCH = LublinClass(
    "batch", BATCH_QUEUE,
    serial_prob=0.2927, pow2_prob=0.6686, ulow=1.2, umed_below=2.0, uhi_below=0.0, uprob=0.875,
    a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
    aarr=6.0415, barr=0.8531, anum=6.1271, bnum=5.2740, arar=1.0519,
)  # fmt: skip
#: Interactive jobs (the C program's ``*_ACTIVE`` values).
INTERACTIVE = LublinClass(
    "interactive", INTERACTIVE_QUEUE,
    serial_prob=0.1541, pow2_prob=0.625, ulow=1.0, umed_below=2.5, uhi_below=1.5, uprob=0.705,
    a1=3.8351, b1=0.6605, a2=7.073, b2=0.6856, pa=-0.0118, pb=0.9156,
    aarr=6.5510, barr=0.6621, anum=8.9186, bnum=3.6680, arar=0.9797,
)  # fmt: skip
#: All jobs, classes not told apart (the C program's typeless values).
COMBINED = LublinClass(
    "combined", SWF_UNKNOWN,
    serial_prob=0.244, pow2_prob=0.576, ulow=0.8, umed_below=2.5, uhi_below=0.0, uprob=0.86,
    a1=4.2, b1=0.94, a2=312.0, b2=0.03, pa=-0.0054, pb=0.78,
    aarr=10.2303, barr=0.4871, anum=8.1737, bnum=3.9631, arar=1.0225,
)  # fmt: skip

_CLASSES_OF = {
    "mixed": (INTERACTIVE, BATCH),
    "combined": (COMBINED,),
    "batch": (BATCH,),
    "interactive": (INTERACTIVE,),
}
#: Seed-stream key of each class: a class's draws do not depend on the other class's.
_STREAM_KEY = {"interactive": 0, "batch": 1, "combined": 2}


# --------------------------------------------------------------------------------------------
# The three distributions (public, for tests and for other generators)
# --------------------------------------------------------------------------------------------


def size_range(job_class: LublinClass, machine_procs: int) -> tuple[float, float, float]:
    """``(ulow, umed, uhi)``: the log2-size ranges of a class on a machine.

    Parameters
    ----------
    job_class
        The class (:data:`BATCH`, :data:`INTERACTIVE` or :data:`COMBINED`).
    machine_procs
        Machine size, processors (>= 2).

    Returns
    -------
    tuple of float
        ``ulow < umed < uhi <= log2(machine_procs)``.

    Raises
    ------
    ConfigurationError
        The machine is too small for ordered ranges (names ``machine_procs`` and the smallest
        size that works).
    """
    uhi = math.log2(machine_procs) - job_class.uhi_below
    umed = uhi - job_class.umed_below
    if not job_class.ulow < umed < uhi:
        smallest = math.floor(2 ** (job_class.ulow + job_class.umed_below + job_class.uhi_below))
        raise ConfigurationError(
            f"machine_procs={machine_procs} is too small for the Lublin model's "
            f"{job_class.name} jobs (log2-size range [{job_class.ulow}, {umed:g}, {uhi:g}] not "
            f"ordered); use at least {smallest + 1} processors"
        )
    return job_class.ulow, umed, uhi


def job_sizes(
    rng: np.random.Generator, n_jobs: int, job_class: LublinClass, machine_procs: int
) -> np.ndarray:
    """Draw job sizes (processors) of one class.

    Parameters
    ----------
    rng
        The random generator (advanced).
    n_jobs
        Number of sizes.
    job_class
        The class's parameters.
    machine_procs
        Machine size, processors.

    Returns
    -------
    numpy.ndarray of int64
        ``1 <= size <= machine_procs``.
    """
    ulow, umed, uhi = size_range(job_class, machine_procs)
    kind = rng.random(n_jobs)
    serial = kind <= job_class.serial_prob
    pow2 = ~serial & (kind <= job_class.serial_prob + job_class.pow2_prob)
    lower = rng.random(n_jobs) <= job_class.uprob
    position = rng.random(n_jobs)
    log2_size = np.where(lower, ulow + position * (umed - ulow), umed + position * (uhi - umed))
    rounded = np.floor(log2_size + 0.5)
    # A power-of-two job rounded above a machine that is not a power of two: next power below.
    rounded = np.where(2.0**rounded > machine_procs, np.floor(log2_size), rounded)
    log2_size = np.where(pow2, rounded, log2_size)
    sizes = np.floor(2.0**log2_size + 0.5).astype(np.int64)
    sizes[serial] = 1
    return np.minimum(sizes, machine_procs)


def job_run_times(
    rng: np.random.Generator, sizes: np.ndarray, job_class: LublinClass
) -> np.ndarray:
    """Draw run times (seconds) of jobs of one class, given their sizes.

    Parameters
    ----------
    rng
        The random generator (advanced).
    sizes
        The jobs' sizes, processors.
    job_class
        The class's parameters.

    Returns
    -------
    numpy.ndarray of int64
        ``1 <= run <= floor(e**MAX_LOG_RUN)`` seconds.
    """
    n_jobs = sizes.size
    p_first = np.clip(job_class.pa * sizes + job_class.pb, 0.0, 1.0)
    log_run = np.empty(n_jobs)
    todo = np.arange(n_jobs)
    # Rejection as in the C program (the mixture choice is drawn again too); in practice one or
    # two rounds, each over the few rejected jobs only.
    while todo.size:
        first = rng.random(todo.size) <= p_first[todo]
        shape = np.where(first, job_class.a1, job_class.a2)
        scale = np.where(first, job_class.b1, job_class.b2)
        draw = rng.gamma(shape, scale)
        log_run[todo] = draw
        todo = todo[draw > MAX_LOG_RUN]
    return np.floor(np.exp(log_run)).astype(np.int64)


def daily_weights(job_class: LublinClass) -> np.ndarray:
    """The weights of the 48 half-hour buckets of a day (bucket 0 starts at midnight).

    Parameters
    ----------
    job_class
        The class (its ``anum``, ``bnum``).

    Returns
    -------
    numpy.ndarray of float64, shape (48,)
        Positive, mean 1: a bucket of weight ``w`` receives ``w`` times the day's mean arrival
        rate.
    """
    index = np.arange(CYCLIC_DAY_START, CYCLIC_DAY_START + BUCKETS_PER_DAY, dtype=np.float64)
    shape, scale = job_class.anum, job_class.bnum
    mass = gammainc(shape, (index + 0.5) / scale) - gammainc(shape, (index - 0.5) / scale)
    weights = np.empty(BUCKETS_PER_DAY)
    weights[(index.astype(np.int64) - 1) % BUCKETS_PER_DAY] = mass
    return weights / weights.mean()


def arrival_times(rng: np.random.Generator, n_jobs: int, job_class: LublinClass) -> np.ndarray:
    """Draw the submit times (seconds from midnight of day 0) of one class's arrival stream.

    Parameters
    ----------
    rng
        The random generator (advanced).
    n_jobs
        Number of arrivals.
    job_class
        The class's parameters.

    Returns
    -------
    numpy.ndarray of int64
        Non-decreasing: the floor of each continuous arrival time (the first arrival is one
        inter-arrival time after 0).
    """
    log_gap = np.empty(n_jobs)
    todo = np.arange(n_jobs)
    while todo.size:
        draw = rng.gamma(job_class.aarr * job_class.arar, job_class.barr, size=todo.size)
        log_gap[todo] = draw
        todo = todo[draw > MAX_LOG_INTERARRIVAL]
    points = np.cumsum(np.exp(log_gap)) / BUCKET_S
    weights = daily_weights(job_class)
    cost = np.concatenate(([0.0], np.cumsum(weights)))  # points to reach each bucket's start
    day_cost = cost[-1]
    days = np.floor(points / day_cost)
    rest = points - days * day_cost
    bucket = np.clip(np.searchsorted(cost, rest, side="right") - 1, 0, BUCKETS_PER_DAY - 1)
    within = (rest - cost[bucket]) / weights[bucket]  # fraction of the bucket, in [0, 1]
    times = (days * BUCKETS_PER_DAY + bucket + within) * BUCKET_S
    # Whole seconds by flooring each time, not each gap as the C program does: its clock then
    # falls behind the cycle by about 0.5 s per job (module docstring).
    return np.floor(times).astype(np.int64)


# --------------------------------------------------------------------------------------------
# The public generators
# --------------------------------------------------------------------------------------------


def lublin_jobs(
    n_jobs: int,
    *,
    machine_procs: int = 256,
    seed: int,
    job_types: JobTypes = "mixed",
) -> pl.DataFrame:
    """Generate ``n_jobs`` jobs of the Lublin–Feitelson model as an SWF job table.

    Parameters
    ----------
    n_jobs
        Number of jobs (>= 0).
    machine_procs
        Machine size, processors (the model's ``2**uhi``); 256 and 1,024 are the sizes of the
        learned-priority study. At least 10 (33 when interactive jobs are generated).
    seed
        Seed of the random generator (an integer >= 0); the same seed gives the same table.
    job_types
        ``"mixed"`` (interactive and batch streams merged, the C program's default),
        ``"combined"`` (the class-blind fit; how ``Lublin-256.swf.gz`` was made), ``"batch"``
        or ``"interactive"``.

    Returns
    -------
    polars.DataFrame
        The 18 columns of :data:`scheduler.core.constants.SWF_SCHEMA`, jobs in submit order
        (numbered 1..n_jobs): submit times non-decreasing from > 0, run times in
        [1, e**12] s, ``alloc_procs == req_procs`` in [1, machine_procs], status 1,
        ``queue_id`` the class (0 interactive, 1 batch; -1 for "combined"), other fields -1.

    Raises
    ------
    ConfigurationError
        An argument is out of range (the message names it).
    """
    n_jobs = _check_int("n_jobs", n_jobs, minimum=0)
    machine_procs = _check_int("machine_procs", machine_procs, minimum=2)
    seed = _check_int("seed", seed, minimum=0)
    if job_types not in JOB_TYPES:
        raise ConfigurationError(
            f"job_types must be one of {', '.join(JOB_TYPES)}; got {quote(job_types)}"
        )
    classes = _CLASSES_OF[job_types]
    for job_class in classes:
        size_range(job_class, machine_procs)  # refuse a too small machine before drawing

    rngs = [np.random.default_rng([seed, _STREAM_KEY[c.name]]) for c in classes]
    # Each stream supplies at most n_jobs of the first n_jobs merged arrivals.
    submits = [arrival_times(rng, n_jobs, c) for rng, c in zip(rngs, classes, strict=True)]
    submit = np.concatenate(submits)
    which = np.repeat(np.arange(len(classes)), n_jobs)
    position = np.concatenate([np.arange(n_jobs)] * len(classes))
    # By time; on a tie the interactive stream first (the C program's rule), then stream order.
    order = np.lexsort((position, which, submit))[:n_jobs]
    submit, which = submit[order], which[order]

    sizes = np.empty(n_jobs, dtype=np.int64)
    runs = np.empty(n_jobs, dtype=np.int64)
    queue = np.empty(n_jobs, dtype=np.int64)
    for index, (rng, job_class) in enumerate(zip(rngs, classes, strict=True)):
        mine = which == index
        count = int(mine.sum())
        sizes[mine] = job_sizes(rng, count, job_class, machine_procs)
        runs[mine] = job_run_times(rng, sizes[mine], job_class)
        queue[mine] = job_class.queue_id
    return _swf_table(submit, runs, sizes, queue)


def lublin_trace(
    n_jobs: int,
    *,
    machine_procs: int = 256,
    seed: int,
    job_types: JobTypes = "mixed",
) -> Trace:
    """:func:`lublin_jobs` as a :class:`~scheduler.traces.swf.Trace` with a header.

    The header gives the machine size (``MaxProcs``, ``MaxNodes``), the job count, and a
    ``Note`` naming the model, the job types, the seed and schedlab's version, so that a written
    file says how to make it again.

    Parameters
    ----------
    n_jobs, machine_procs, seed, job_types
        As for :func:`lublin_jobs`.

    Returns
    -------
    Trace
        ``machine_procs`` set; ``path`` None.
    """
    jobs = lublin_jobs(n_jobs, machine_procs=machine_procs, seed=seed, job_types=job_types)
    lines = [
        "; Version: 2.2",
        "; Computer: synthetic (Lublin-Feitelson workload model)",
        f"; MaxJobs: {jobs.height}",
        f"; MaxRecords: {jobs.height}",
        f"; MaxProcs: {machine_procs}",
        f"; MaxNodes: {machine_procs}",
        "; Note: Lublin & Feitelson, JPDC 63(11), 2003 (parameters of m_lublin99.c)",
        f"; Note: generated by schedlab {__version__}: lublin_jobs(n_jobs={jobs.height}, "
        f"machine_procs={machine_procs}, seed={seed}, job_types={job_types})",
    ]
    return Trace(jobs=jobs, header=SwfHeader.from_lines(lines), machine_procs=machine_procs)


def _swf_table(
    submit: np.ndarray, runs: np.ndarray, sizes: np.ndarray, queue: np.ndarray
) -> pl.DataFrame:
    """The SWF job table of generated jobs (unknown fields -1)."""
    n_jobs = submit.size
    columns = {name: np.full(n_jobs, SWF_UNKNOWN) for name in SWF_SCHEMA}
    columns.update(
        job_id=np.arange(1, n_jobs + 1),
        submit_s=submit,
        run_s=runs,
        alloc_procs=sizes,
        req_procs=sizes,
        status=np.ones(n_jobs, dtype=np.int64),
        queue_id=queue,
    )
    return pl.DataFrame(
        {name: pl.Series(name, columns[name]).cast(dtype) for name, dtype in SWF_SCHEMA.items()}
    )


def _check_int(name: str, value: object, *, minimum: int) -> int:
    """An integer argument >= minimum, or a ConfigurationError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ConfigurationError(f"{name} must be an integer >= {minimum}, got {quote(value)}")
    return int(value)
