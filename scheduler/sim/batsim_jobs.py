"""A finished schedule as Batsim's ``jobs.csv``: the table evalys and Batsim's users read.

:func:`batsim_jobs` turns a :class:`~scheduler.sim.schedule.Schedule` (any engine's result,
:func:`~scheduler.sim.schedule.schedule_of`) into the columns Batsim writes after a run
(:data:`scheduler.traces.batsim.BATSIM_JOB_COLUMNS`), with the processors of each run as an
interval set; :func:`write_schedule_batsim` writes it (:func:`scheduler.traces.batsim.
write_batsim_jobs`). ``docs/formats.md`` shows how evalys reads it.

Rows are *runs*, as Batsim's are: Batsim runs a job once, and a job that must run again (a
redirected job killed on the main pool, a memory-aware job that failed for lack of memory) is
a new job there. So a job of one run is one row, ``job_id`` its SWF job number; a job of
several runs has one row per run, the last (the run that completed it) with the plain job
number and the earlier ones ``"<job>#<k>"`` (job 12: ``"12#1"``, ``"12#2"``, ...), in start
order.
"""

from __future__ import annotations

import os

import polars as pl

from scheduler.sim.assignment import AssignmentRule
from scheduler.sim.results import RunResult
from scheduler.sim.schedule import Schedule, schedule_of
from scheduler.traces.batsim import BATSIM_JOB_COLUMNS, write_batsim_jobs

__all__ = ["batsim_jobs", "write_schedule_batsim"]


def batsim_jobs(
    schedule: Schedule,
    *,
    workload: str = "w0",
    requested: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The ``jobs.csv`` table of a schedule: one row per run, Batsim's columns.

    Parameters
    ----------
    schedule
        The schedule (its runs and their processors).
    workload
        ``workload_name`` of every row (Batsim names its first workload ``w0``).
    requested
        ``job_id`` and ``req_time_s`` (the SWF requested time, s) of the jobs, e.g. the
        result's ``source_jobs``; without it, or for a time <= 0, ``requested_time`` is -1
        (Batsim's "no walltime").

    Returns
    -------
    polars.DataFrame
        :data:`~scheduler.traces.batsim.BATSIM_JOB_COLUMNS`, in the schedule's run order
        (start, job number); Batsim writes its rows as jobs finish, so a reader must not rely
        on the order. Per run, with ``s`` its start, ``e`` its end and ``r`` the job's submit
        time (seconds):

        - ``job_id``: the job number (a completing run) or ``"<job>#<k>"`` (the ``k``-th earlier
          run); ``profile``: the job's run time in seconds, as text (the delay profile of
          :func:`~scheduler.traces.batsim.write_batsim_workload`);
        - ``submission_time`` ``r``, ``starting_time`` ``s``, ``finish_time`` ``e``,
          ``execution_time`` ``e - s``, ``waiting_time`` ``s - r``, ``turnaround_time``
          ``e - r``, ``stretch`` ``(e - r) / (e - s)`` (null for a run of zero length):
          Batsim's definitions, so a run after a kill waits from the job's submission;
        - ``requested_number_of_resources``: the run's processors; ``allocated_resources``
          its processor numbers (``"0-3 8"``, all pools numbered in a row);
        - ``success`` 1 and ``final_state`` ``COMPLETED_SUCCESSFULLY`` for a completing run;
          0 and ``COMPLETED_FAILED`` for a run that failed (memory-aware cluster), 0 and
          ``COMPLETED_KILLED`` for one the scheduler killed (redirection);
        - ``consumed_energy`` -1 (not measured), ``metadata`` ``""``.
    """
    runs = schedule.runs
    attempt = pl.col("start_s").rank("ordinal").over("job_id") - 1
    failed = pl.col("failed") if "failed" in runs.columns else pl.lit(False)
    job_text = pl.col("job_id").cast(pl.String)
    run_s = pl.col("run_s").cast(pl.Float64)
    execution = pl.col("end_s") - pl.col("start_s")
    turnaround = pl.col("end_s") - pl.col("submit_s")
    if requested is None:
        walltime = pl.lit(-1.0)
    else:
        times = requested.select("job_id", pl.col("req_time_s").alias("_req_s")).unique(
            "job_id", keep="first"
        )
        runs = runs.join(times, on="job_id", how="left", maintain_order="left")
        walltime = (
            pl.when(pl.col("_req_s") > 0).then(pl.col("_req_s")).otherwise(-1).cast(pl.Float64)
        )
    table = runs.with_columns(
        allocated_resources=schedule.assignment.procset_text(),
    ).select(
        pl.when(pl.col("final"))
        .then(job_text)
        .otherwise(pl.concat_str(job_text, pl.lit("#"), (attempt + 1).cast(pl.String)))
        .alias("job_id"),
        pl.lit(workload, pl.String).alias("workload_name"),
        pl.when(run_s == run_s.floor())
        .then(run_s.cast(pl.Int64).cast(pl.String))
        .otherwise(run_s.cast(pl.String))
        .alias("profile"),
        pl.col("submit_s").cast(pl.Float64).alias("submission_time"),
        pl.col("procs").cast(pl.Int64).alias("requested_number_of_resources"),
        walltime.alias("requested_time"),
        pl.col("final").cast(pl.Int64).alias("success"),
        pl.when(pl.col("final"))
        .then(pl.lit("COMPLETED_SUCCESSFULLY"))
        .when(failed)
        .then(pl.lit("COMPLETED_FAILED"))
        .otherwise(pl.lit("COMPLETED_KILLED"))
        .alias("final_state"),
        pl.col("start_s").cast(pl.Float64).alias("starting_time"),
        execution.cast(pl.Float64).alias("execution_time"),
        pl.col("end_s").cast(pl.Float64).alias("finish_time"),
        (pl.col("start_s") - pl.col("submit_s")).cast(pl.Float64).alias("waiting_time"),
        turnaround.cast(pl.Float64).alias("turnaround_time"),
        pl.when(execution > 0).then(turnaround / execution).cast(pl.Float64).alias("stretch"),
        "allocated_resources",
        pl.lit(-1.0).alias("consumed_energy"),
        pl.lit("").alias("metadata"),
    )
    return table.select(BATSIM_JOB_COLUMNS)


def write_schedule_batsim(
    result_or_schedule: RunResult | Schedule,
    path: str | os.PathLike[str],
    *,
    workload: str = "w0",
    rule: AssignmentRule = "best-fit",
) -> None:
    """Write a result's (or a schedule's) runs as Batsim's ``jobs.csv``, atomically.

    Parameters
    ----------
    result_or_schedule
        Any engine's result (its processors are assigned with ``rule``,
        :func:`~scheduler.sim.schedule.schedule_of`, and its SWF table gives the requested
        times), or a :class:`~scheduler.sim.schedule.Schedule` (requested times -1).
    path
        Output file (``jobs.csv``), replaced atomically.
    workload
        ``workload_name`` of every row.
    rule
        The processor-assignment rule, for a result.
    """
    if isinstance(result_or_schedule, Schedule):
        schedule, requested = result_or_schedule, None
    else:
        schedule = schedule_of(result_or_schedule, rule=rule)
        requested = getattr(result_or_schedule, "source_jobs", None)
    table = batsim_jobs(schedule, workload=workload, requested=requested)
    write_batsim_jobs(table, path)
