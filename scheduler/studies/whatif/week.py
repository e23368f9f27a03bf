"""The what-if study's representative week: the site's whole log under the baseline and one
alternative as engine results (which :func:`scheduler.sim.schedule.schedule_of` draws), the same
schedules as the study's whole-log replay (:func:`scheduler.studies.whatif.runs.simulate_log`).
"""

from __future__ import annotations

import math

import polars as pl

from scheduler.sim.conservative import ConservativeResult, simulate_conservative
from scheduler.sim.engine import SimulationResult, simulate_easy
from scheduler.studies.whatif.runs import conservative_options
from scheduler.studies.whatif.schedulers import Scheduler
from scheduler.traces.site import ACCOUNT_COLUMN

__all__ = ["scheduler_result"]


def scheduler_result(
    scheduler: Scheduler, jobs: pl.DataFrame, machine_procs: int
) -> SimulationResult | ConservativeResult:
    """The whole log ``jobs`` (the site's SWF job table with its ``account`` column) replayed
    once by ``scheduler`` on ``machine_procs`` processors, from an empty machine.

    As :func:`~scheduler.studies.whatif.runs.start_times`: EASY through
    :func:`scheduler.simulate_easy`, conservative backfilling through
    :func:`scheduler.simulate_conservative` with the Slurm limits and, for the multifactor
    priority, each job's user and account (one partition and QOS for all, eligible when
    submitted); the estimate is the requested time.
    """
    threshold = None if math.isinf(scheduler.threshold_s) else scheduler.threshold_s
    if scheduler.backfilling == "easy":
        return simulate_easy(jobs, scheduler.primary, scheduler.backfill, threshold,
                             machine_procs=machine_procs)  # fmt: skip
    options = conservative_options(scheduler)
    table = jobs
    if "priority" in options:
        # the account by name (the shares are by name), one partition for all
        table = jobs.with_columns(
            pl.col(ACCOUNT_COLUMN).cast(pl.String).alias("group_id"),
            pl.lit(-1, pl.Int64).alias("partition_id"),
        )
    return simulate_conservative(table, scheduler.primary, threshold,
                                 machine_procs=machine_procs, **options)  # fmt: skip
