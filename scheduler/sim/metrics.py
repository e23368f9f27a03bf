"""Per-job and per-run metrics of a simulated schedule: one definition of each.

Every engine variant (the base engine, run-time prediction, redirection, memory-aware clusters)
and every study computes its run figures with :func:`run_figures`, over NumPy arrays of the run's
own jobs; a variant's summary *adds* fields to :class:`RunFigures` (redirections, failed runs,
...) and never computes one of its fields another way. The names and formulas are listed in
``docs/glossary.md``.

Units: seconds for times, processors for sizes, processor-seconds for work. Bounded slowdown
uses a threshold τ (``tau_s``, seconds) that every caller names: 10 s in the base simulator
(``constants.BSLD_TAU_S``), 60 s in the redirection study. Per job:

- ``wait = start − submit``; ``end = start + p``;
- ``bsld = max((wait + p) / max(p, τ), 1)`` (bounded slowdown);
- ``stretch = (wait + p) / p`` (the memory paper's "slowdown", its eq. 2).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Self

import numpy as np
import polars as pl

__all__ = [
    "RunFigures",
    "RunSummary",
    "bounded_slowdown",
    "cumulative_wait",
    "jain_index",
    "run_figures",
    "stretch",
    "summarize",
    "table_arrays",
    "with_job_metrics",
]


def bounded_slowdown(wait_s: np.ndarray, run_s: np.ndarray, *, tau_s: float) -> np.ndarray:
    """Bounded slowdown of each job, ``max((wait + p) / max(p, τ), 1)`` (dimensionless).

    Parameters
    ----------
    wait_s, run_s
        Wait (start − submit) and actual run time p of each job, seconds.
    tau_s
        τ, seconds (> 0): run times below it count as τ, so that very short jobs do not
        dominate the mean.
    """
    return np.maximum((wait_s + run_s) / np.maximum(run_s, tau_s), 1.0)


def stretch(wait_s: np.ndarray, run_s: np.ndarray) -> np.ndarray:
    """Stretch of each job, ``(wait + p) / p`` (dimensionless, >= 1; p > 0 seconds)."""
    return (wait_s + run_s) / run_s


def jain_index(values: np.ndarray) -> float:
    """Jain's fairness index of non-negative ``values`` (one per user, account…):
    ``(Σx)² / (n Σx²)``, in ``[1/n, 1]``; 1 when every value is equal (all 0 included), ``1/n``
    when one holds everything. NaN for no value.

    R. Jain, D.-M. Chiu and W. Hawe, DEC-TR-301 (1984), eq. 1.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return math.nan
    if (x < 0).any() or not np.isfinite(x).all():
        raise ValueError("jain_index: values must be finite and >= 0")
    square = float((x * x).sum())
    if square == 0.0:
        return 1.0
    return float(x.sum()) ** 2 / (x.size * square)


def with_job_metrics(jobs: pl.DataFrame, *, tau_s: float) -> pl.DataFrame:
    """``jobs`` with the per-job columns ``wait_s``, ``end_s``, ``bsld`` (threshold ``tau_s``,
    s) and ``stretch``, computed from its ``submit_s``, ``start_s`` and ``run_s`` (seconds) by
    :func:`bounded_slowdown` and :func:`stretch`."""
    submit, start, run = (jobs[name].cast(pl.Float64).to_numpy() for name in
                          ("submit_s", "start_s", "run_s"))  # fmt: skip
    wait = start - submit
    return jobs.with_columns(
        pl.Series("wait_s", wait),
        pl.Series("end_s", start + run),
        pl.Series("bsld", bounded_slowdown(wait, run, tau_s=tau_s)),
        pl.Series("stretch", stretch(wait, run)),
    )


@dataclass(frozen=True)
class RunFigures:
    """The figures of one simulated run: the fields every engine variant's summary shares.

    Attributes
    ----------
    jobs
        Number of jobs.
    avg_wait_s, max_wait_s, total_wait_s
        Mean, largest and summed wait (start − submit), seconds (AvgWait, MaxWait).
    avg_bsld, max_bsld
        Mean and largest bounded slowdown with the caller's τ (AVEbsld, MaxBsld).
    avg_stretch
        Mean stretch ``(wait + p) / p``.
    makespan_s
        ``max end − min submit``, seconds.
    utilisation
        Useful work over capacity, ``Σ q_j p_j / (m · makespan)`` (dimensionless).
    utilisation_with_waste
        ``(Σ q_j p_j + wasted_proc_s) / (m · makespan)``: the work of killed or failed runs
        counted too; equals ``utilisation`` when no work was lost.
    wasted_proc_s
        Processor-seconds of the runs that did not complete (killed by a redirection, failed
        for lack of memory); 0 in the base engine.
    """

    jobs: int
    avg_wait_s: float
    max_wait_s: float
    total_wait_s: float
    avg_bsld: float
    max_bsld: float
    avg_stretch: float
    makespan_s: float
    utilisation: float
    utilisation_with_waste: float
    wasted_proc_s: float

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)

    def figures(self) -> RunFigures:
        """The :class:`RunFigures` part of a variant's summary (the shared fields alone)."""
        return RunFigures(**{field.name: getattr(self, field.name) for field in fields(RunFigures)})

    @classmethod
    def from_figures(cls, figures: RunFigures, **extra: Any) -> Self:
        """A variant's summary: the shared ``figures`` and the variant's ``extra`` fields."""
        return cls(**figures.figures().to_dict(), **extra)


def run_figures(
    submit_s: np.ndarray,
    start_s: np.ndarray,
    run_s: np.ndarray,
    procs: np.ndarray,
    machine_procs: int,
    *,
    tau_s: float,
    wasted_proc_s: np.ndarray | None = None,
) -> RunFigures:
    """The figures of one run, from its jobs' arrays (the one definition of each).

    Parameters
    ----------
    submit_s, start_s, run_s, procs
        One entry per job, any order: submit time (s), start of the run that completed (s,
        finite: every job has started), actual run time p (s, > 0) and processors q.
    machine_procs
        m, processors (or nodes) of the whole machine.
    tau_s
        τ of the bounded slowdown, seconds (> 0).
    wasted_proc_s
        Processor-seconds of work lost, one entry per lost run or per job, summed (default:
        none).

    Returns
    -------
    RunFigures
        With the makespan ``max(start + p) − min(submit)``; utilisations 0 when the makespan is
        0. No job: every figure 0.

    Raises
    ------
    ValueError
        Arrays of different lengths, or a job without a start time.
    """
    submit, start, run, q = (np.asarray(values, dtype=np.float64)
                             for values in (submit_s, start_s, run_s, procs))  # fmt: skip
    n = submit.shape[0]
    if not (submit.shape == start.shape == run.shape == q.shape == (n,)):
        raise ValueError(
            "run_figures: submit_s, start_s, run_s and procs must be 1-D arrays of one length, "
            f"got shapes {submit.shape}, {start.shape}, {run.shape}, {q.shape}"
        )
    waste = 0.0 if wasted_proc_s is None else float(np.asarray(wasted_proc_s, np.float64).sum())
    if n == 0:
        return RunFigures(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, waste)
    if not np.isfinite(start).all():
        raise ValueError("run_figures: every job needs a finite start time (a finished run)")
    wait = start - submit
    bsld = bounded_slowdown(wait, run, tau_s=tau_s)
    makespan = float((start + run).max() - submit.min())
    area = float((q * run).sum())  # not np.dot: BLAS threads would spin beside the kernel
    scale = machine_procs * makespan
    return RunFigures(
        jobs=n,
        avg_wait_s=float(wait.mean()),
        max_wait_s=float(wait.max()),
        total_wait_s=float(wait.sum()),
        avg_bsld=float(bsld.mean()),
        max_bsld=float(bsld.max()),
        avg_stretch=float(stretch(wait, run).mean()),
        makespan_s=makespan,
        utilisation=area / scale if makespan > 0 else 0.0,
        utilisation_with_waste=(area + waste) / scale if makespan > 0 else 0.0,
        wasted_proc_s=waste,
    )


def table_arrays(jobs: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(submit_s, start_s, run_s, procs)`` of a schedule table, float64, in its row order:
    the first arguments of :func:`run_figures`."""
    return tuple(  # type: ignore[return-value]
        jobs[name].cast(pl.Float64).to_numpy() for name in ("submit_s", "start_s", "run_s", "procs")
    )


@dataclass(frozen=True)
class RunSummary(RunFigures):
    """Figures of one run of the base engine (and of the prediction variant): the shared
    :class:`RunFigures` (τ = 10 s, no wasted work) and ``backfilled_jobs``, the jobs started by
    backfilling."""

    backfilled_jobs: int


def summarize(jobs: pl.DataFrame, machine_procs: int, *, tau_s: float) -> RunSummary:
    """Summary of a schedule table with ``submit_s, start_s, run_s, procs, backfilled``
    columns: :func:`run_figures` with threshold ``tau_s`` (s) on machine size
    ``machine_procs`` (processors), and the backfilled jobs."""
    figures = run_figures(*table_arrays(jobs), machine_procs, tau_s=tau_s)
    return RunSummary.from_figures(figures, backfilled_jobs=int(jobs["backfilled"].sum()))


def cumulative_wait(jobs: pl.DataFrame) -> pl.DataFrame:
    """Cumulative waiting time as a function of time, counting a job when it finishes.

    Returns one row per completion instant: ``time_s`` (s), ``finished_jobs`` (count so far)
    and ``cumulative_wait_s`` (sum of the waits of the jobs finished so far, s).
    """
    return (
        jobs.group_by("end_s")
        .agg(pl.len().alias("finished"), pl.col("wait_s").sum().alias("wait"))
        .sort("end_s")
        .select(
            pl.col("end_s").alias("time_s"),
            pl.col("finished").cum_sum().alias("finished_jobs"),
            pl.col("wait").cum_sum().cast(pl.Float64).alias("cumulative_wait_s"),
        )
    )
