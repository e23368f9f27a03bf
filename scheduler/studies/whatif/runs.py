"""Simulating a what-if study's schedulers: resampled weeks, the whole log, bootstrap replicates.

Every alternative runs on the *same* jobs as the baseline: the resampled weeks come from the
study's seed and the site's name only (:func:`resampled_weeks`), never from the alternative, so
differences between two alternatives are paired week by week. A week starts from an empty
machine and runs until its last job ends (as in the tuning study); the whole log is replayed
once as one run, and week by week (:func:`simulate_source_weeks`: the online choice's costs).

The bootstrap (:func:`bootstrap_figures`) repeats the measurement on bootstrap logs, as the
tuning study does (:mod:`scheduler.studies.tuning.bootstrap` explains why the resampled weeks
are not independent observations): replicate ``b`` draws the log's ``K`` complete source weeks
with replacement, resamples weeks from that bootstrap log, simulates them and keeps the mean of
each weekly figure. Replicate ``b`` is the same draw for every alternative, so the replicates
pair too; the unit treated as independent is the source week.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.constants import WEEK_S
from scheduler.core.errors import ConfigurationError
from scheduler.sim.arrays import WeekArrays, week_arrays
from scheduler.studies.whatif.measures import JOB_COLUMNS, WEEK_FIGURES, week_figures
from scheduler.studies.whatif.schedulers import Scheduler
from scheduler.traces.resample import (
    bootstrap_week_map,
    complete_weeks,
    resample_weeks,
)
from scheduler.traces.site import ACCOUNT_COLUMN

__all__ = [
    "BOOTSTRAP_COLUMNS",
    "WHOLE",
    "bootstrap_figures",
    "conservative_options",
    "resampled_weeks",
    "simulate_log",
    "simulate_source_weeks",
    "simulate_weeks",
    "start_times",
]

#: The part of the log the study resamples (the whole filtered log: no train/test split, the
#: alternatives are given, not selected).
WHOLE = "whole"

#: Columns of :func:`bootstrap_figures`: the replicate, K, its weeks and the mean of each
#: weekly figure over them.
BOOTSTRAP_COLUMNS: dict[str, pl.DataType] = {
    "replicate": pl.Int64(),
    "source_weeks": pl.Int64(),
    "weeks": pl.Int64(),
} | {name: pl.Float64() for name in WEEK_FIGURES}


def resampled_weeks(
    jobs: pl.DataFrame,
    weeks: int,
    *,
    seed: int,
    site: str,
    split: str = WHOLE,
    week_map: np.ndarray | None = None,
) -> pl.DataFrame:
    """``weeks`` weeks resampled from the site's log (per-user weekly resampling,
    :func:`scheduler.traces.resample.resample_weeks`, weeks every 604,800 s from the first
    submission), each job with its source job's account."""
    table = resample_weeks(
        jobs, range(weeks), seed=seed, trace=site, split=split, week_map=week_map
    )
    accounts = jobs.select(pl.col("job_id").alias("source_job_id"), ACCOUNT_COLUMN)
    return table.join(accounts, on="source_job_id", how="left", maintain_order="left")


def start_times(
    scheduler: Scheduler,
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    estimate_s: np.ndarray,
    machine_procs: int,
    *,
    user: np.ndarray,
    account: np.ndarray,
    job_id: np.ndarray,
) -> np.ndarray:
    """Start times (s) of ``scheduler`` on the jobs (arrays in submit order, checked by the
    caller): EASY through :func:`scheduler.sim.engine.simulate_arrays`, conservative through
    :func:`scheduler.sim.conservative.simulate_conservative_arrays` with the Slurm limits and,
    for the multifactor priority, each job's user and account (partition and QOS one for all,
    eligible when submitted)."""
    jobs = (submit_s, procs, run_s, estimate_s, machine_procs)
    common = {"primary": scheduler.primary, "threshold_s": scheduler.threshold_s,
              "job_id": job_id, "validate": False}  # fmt: skip
    if scheduler.backfilling == "easy":
        from scheduler.sim.engine import simulate_arrays

        return simulate_arrays(*jobs, backfill=scheduler.backfill, **common)
    from scheduler.sim.conservative import simulate_conservative_arrays
    from scheduler.sim.multifactor import JobAttributes

    common.update(conservative_options(scheduler))
    if "priority" in common:
        n = submit_s.size
        common["attributes"] = JobAttributes(
            user=np.asarray(user).astype(str).astype(object),
            account=np.asarray(account, dtype=object),
            partition=np.full(n, "-1", dtype=object),
            qos=np.full(n, "normal", dtype=object),
            eligible_s=np.asarray(submit_s, dtype=np.float64),
        )
    return simulate_conservative_arrays(*jobs, **common).start_s


def conservative_options(scheduler: Scheduler) -> dict[str, Any]:
    """The keyword arguments of conservative backfilling that a scheduler's Slurm settings
    give: its limits and, for the multifactor priority, ``priority`` (a
    :class:`~scheduler.sim.multifactor.MultifactorPriority`; the jobs' attributes are the
    caller's); none without Slurm settings."""
    if scheduler.slurm is None:
        return {}
    from scheduler.sim.multifactor import MultifactorPriority

    options: dict[str, Any] = dict(scheduler.slurm["limits"])
    if scheduler.slurm["priority"] is not None:
        options["priority"] = MultifactorPriority(**scheduler.slurm["priority"])
    return options


def simulate_weeks(
    scheduler: Scheduler, weeks: pl.DataFrame, machine_procs: int, *, source: str = "weeks"
) -> pl.DataFrame:
    """Every week of a resampled-weeks table (:func:`resampled_weeks`) simulated on its own,
    from an empty machine: the per-job table :data:`JOB_COLUMNS`, in (week, submit, job) order.
    """
    table = weeks.sort("week_index", "submit_s", "job_id")
    arrays = week_arrays(table, machine_procs, source=source)
    account = table[ACCOUNT_COLUMN].to_numpy().astype(object)
    wait = np.empty(arrays.submit_s.size, dtype=np.float64)
    for k in range(arrays.week_index.size):
        lo, hi = arrays.bounds[k], arrays.bounds[k + 1]
        start = start_times(
            scheduler,
            arrays.submit_s[lo:hi],
            arrays.procs[lo:hi],
            arrays.run_s[lo:hi],
            arrays.estimate_s[lo:hi],
            machine_procs,
            user=arrays.user_id[lo:hi],
            account=account[lo:hi],
            job_id=arrays.job_id[lo:hi],
        )
        wait[lo:hi] = start - arrays.submit_s[lo:hi]
    return _job_table(table["week_index"].to_numpy(), arrays, account, wait)


def simulate_log(scheduler: Scheduler, jobs: pl.DataFrame, machine_procs: int) -> pl.DataFrame:
    """The whole log replayed once (one run, from an empty machine): :data:`JOB_COLUMNS`, with
    ``week_index`` the week of the submission (every 604,800 s from the first one) and
    ``submit_s`` seconds from the first submission."""
    first = float(jobs["submit_s"].min())
    table = jobs.with_columns(
        (pl.col("submit_s") - first).alias("submit_s"), pl.lit(0, pl.Int64).alias("week_index")
    )
    arrays = week_arrays(table, machine_procs, source="the whole log")
    table = table.sort("week_index", "submit_s", "job_id")
    account = table[ACCOUNT_COLUMN].to_numpy().astype(object)
    start = start_times(
        scheduler,
        arrays.submit_s,
        arrays.procs,
        arrays.run_s,
        arrays.estimate_s,
        machine_procs,
        user=arrays.user_id,
        account=account,
        job_id=arrays.job_id,
    )
    week = np.floor(arrays.submit_s / WEEK_S).astype(np.int64)
    return _job_table(week, arrays, account, start - arrays.submit_s)


def simulate_source_weeks(
    scheduler: Scheduler, jobs: pl.DataFrame, machine_procs: int
) -> pl.DataFrame:
    """Each week of the log (every 604,800 s from the first submission) simulated on its own,
    from an empty machine until its jobs are done: :data:`JOB_COLUMNS` with ``week_index`` the
    log's week and ``submit_s`` the offset in it. The per-period costs of the online choice
    (:mod:`scheduler.studies.whatif.online`): a week's cost does not depend on the scheduler
    of the week before."""
    first = float(jobs["submit_s"].min())
    offset = pl.col("submit_s") - first
    table = jobs.with_columns(
        (offset // WEEK_S).cast(pl.Int64).alias("week_index"),
        (offset - (offset // WEEK_S) * WEEK_S).alias("submit_s"),
    )
    return simulate_weeks(scheduler, table, machine_procs, source="the log's weeks")


def _job_table(
    week: np.ndarray, arrays: WeekArrays, account: np.ndarray, wait: np.ndarray
) -> pl.DataFrame:
    """:data:`JOB_COLUMNS` of simulated jobs (``arrays``' order)."""
    columns = (week, arrays.job_id, arrays.user_id, account, arrays.procs, arrays.submit_s,
               arrays.run_s, wait)  # fmt: skip
    return pl.DataFrame(
        {name: pl.Series(name, values) for name, values in zip(JOB_COLUMNS, columns, strict=True)}
    ).cast(JOB_COLUMNS)


def bootstrap_figures(
    scheduler: Scheduler,
    jobs: pl.DataFrame,
    machine_procs: int,
    *,
    replicates: Sequence[int],
    weeks: int,
    seed: int,
    site: str,
) -> pl.DataFrame:
    """:data:`BOOTSTRAP_COLUMNS`, one row per replicate of ``replicates`` (numbers >= 0; a
    replicate is the same draw whatever others are drawn): ``weeks`` weeks resampled from a
    bootstrap log of the ``K`` complete source weeks, simulated under ``scheduler``, and the
    mean of each weekly figure over them."""
    if weeks < 1:
        raise ConfigurationError(f"weeks per bootstrap replicate must be >= 1, got {weeks}")
    source_weeks = complete_weeks(jobs, name=site)
    rows = []
    for replicate in replicates:
        week_map = bootstrap_week_map(
            source_weeks, seed=seed, trace=site, split=WHOLE, replicate=int(replicate)
        )
        table = resampled_weeks(
            jobs,
            weeks,
            seed=seed,
            site=site,
            split=f"{WHOLE}/bootstrap{replicate}",
            week_map=week_map,
        )
        schedule = simulate_weeks(scheduler, table, machine_procs, source=f"{site} bootstrap")
        figures = week_figures(schedule, machine_procs)
        rows.append(
            {"replicate": int(replicate), "source_weeks": source_weeks, "weeks": figures.height}
            | {name: float(figures[name].mean()) for name in WEEK_FIGURES}
        )
    return pl.DataFrame(rows, schema=BOOTSTRAP_COLUMNS)
