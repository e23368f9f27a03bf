"""A finished schedule in one shape, whatever engine made it: its runs, its pools and which
processors each run held.

:func:`schedule_of` takes the result of any engine variant (EASY with or without predictions,
conservative and multifactor, redirection, the memory-aware cluster) and returns a
:class:`Schedule`:

- ``runs``: one row per run of a job (a killed run on the main pool and the final run on the
  dedicated pool of a redirected job; every failed run and the successful one of a memory-aware
  job), with the job's attributes a chart can colour by;
- ``pools``: the machine's pools (name, processors), numbered in that order;
- ``assignment``: the processors of each run (:func:`~scheduler.sim.assignment.assign_processors`).

Its :meth:`Schedule.queue_length` and :meth:`Schedule.busy_procs` are the step functions drawn
under a Gantt chart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim.assignment import Assignment, AssignmentRule, assign_processors
from scheduler.sim.results import RunResult

__all__ = ["RUN_COLUMNS", "Schedule", "schedule_of"]

#: Columns every :attr:`Schedule.runs` has (seconds, processors); a variant adds its own
#: (``backfilled``, ``user_id``, ``prediction_s``, ``failures``, ``redirected``).
RUN_COLUMNS = ("job_id", "submit_s", "start_s", "end_s", "procs", "run_s", "pool", "final")


@dataclass(frozen=True)
class Schedule:
    """A finished schedule: its runs, the machine's pools and each run's processors.

    ``runs`` has :data:`RUN_COLUMNS` and the variant's attributes, one row per run, sorted by
    (start, job number); ``pool`` is an index into ``pools`` (``(name, processors)`` pairs);
    ``final`` is true for the run that completed the job, false for a killed or failed one.
    ``assignment`` gives run ``i`` its processor intervals (numbers ``0 .. total_procs-1``,
    pool ``p`` from ``sum`` of the earlier pools' processors).
    """

    runs: pl.DataFrame
    pools: tuple[tuple[str, int], ...]
    assignment: Assignment

    @property
    def total_procs(self) -> int:
        """Processors of all pools together."""
        return sum(size for _, size in self.pools)

    def window(self, start_s: float, end_s: float) -> Schedule:
        """The runs that overlap ``[start_s, end_s)`` (or start there), with their processors.

        Raises
        ------
        ConfigurationError
            ``end_s <= start_s``.
        """
        if not end_s > start_s:
            raise ConfigurationError(
                f"the window must end after it starts, got [{start_s:g}, {end_s:g}) s"
            )
        starts = self.runs["start_s"].to_numpy()
        ends = self.runs["end_s"].to_numpy()
        keep = np.flatnonzero((starts < end_s) & ((ends > start_s) | (starts >= start_s)))
        a = self.assignment
        counts = a.pieces[keep]
        first = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        # the kept runs' intervals, run after run: each run's own offset plus a running count
        index = np.repeat(a.first[keep] - first[:-1], counts) + np.arange(first[-1])
        return Schedule(
            runs=self.runs[keep],
            pools=self.pools,
            assignment=Assignment(first=first, lo=a.lo[index], hi=a.hi[index]),
        )

    def queue_length(self) -> pl.DataFrame:
        """Jobs waiting against time: a step function, ``time_s`` and ``waiting`` (the count
        from that instant on). A job waits from its submission to its first start and from
        each killed or failed run's end to its next start."""
        runs = self.runs
        first = runs.group_by("job_id").agg(pl.col("submit_s").first())
        events = [
            first.select(pl.col("submit_s").alias("time_s"), pl.lit(1).alias("change")),
            runs.select(pl.col("start_s").alias("time_s"), pl.lit(-1).alias("change")),
            runs.filter(~pl.col("final")).select(
                pl.col("end_s").alias("time_s"), pl.lit(1).alias("change")
            ),
        ]
        return _steps(events, "waiting")

    def busy_procs(self) -> pl.DataFrame:
        """Processors in use against time: a step function, ``time_s`` and ``busy`` (all
        pools together; divide by :attr:`total_procs` for the utilisation)."""
        runs = self.runs
        events = [
            runs.select(pl.col("start_s").alias("time_s"), pl.col("procs").alias("change")),
            runs.select(pl.col("end_s").alias("time_s"), (-pl.col("procs")).alias("change")),
        ]
        return _steps(events, "busy")


def _steps(events: list[pl.DataFrame], name: str) -> pl.DataFrame:
    """A step function from ``(time_s, change)`` events: the running sum after each instant."""
    return (
        pl.concat(
            frame.select(pl.col("time_s").cast(pl.Float64), pl.col("change").cast(pl.Int64))
            for frame in events
        )
        .with_columns(pl.col("time_s").cast(pl.Float64), pl.col("change").cast(pl.Int64))
        .group_by("time_s")
        .agg(pl.col("change").sum())
        .sort("time_s")
        .select("time_s", pl.col("change").cum_sum().alias(name))
    )


def schedule_of(result: RunResult, *, rule: AssignmentRule = "best-fit") -> Schedule:
    """The :class:`Schedule` of any engine's result, with its processors assigned.

    Parameters
    ----------
    result
        A :class:`~scheduler.sim.engine.SimulationResult` (and its prediction subclass), a
        :class:`~scheduler.sim.conservative.ConservativeResult`, a
        :class:`~scheduler.sim.redirection.RedirectResult` or a
        :class:`~scheduler.sim.memory.MemoryResult`.
    rule
        The assignment rule (:func:`~scheduler.sim.assignment.assign_processors`).

    Returns
    -------
    Schedule
        Its runs carry, besides :data:`RUN_COLUMNS`, the job's ``backfilled`` (EASY,
        conservative, redirection), ``user_id`` (a result made from an SWF table),
        ``prediction_s`` (predictions), ``redirected`` (redirection) and ``failures`` (memory).
    """
    from scheduler.sim.memory import MemoryResult
    from scheduler.sim.redirection import RedirectResult

    if isinstance(result, MemoryResult):
        return _memory_schedule(result, rule)
    if isinstance(result, RedirectResult):
        config = result.config
        pools = (("main", config.main_procs), ("dedicated", config.dedicated_procs))
        runs = result.runs().join(
            result.jobs.select("job_id", "submit_s", "run_s", "backfilled", "redirected"),
            on="job_id",
            how="left",
        )
        runs = runs.with_columns(
            pl.when(pl.col("pool") == "main").then(0).otherwise(1).alias("pool"),
            (~pl.col("killed")).alias("final"),
        ).drop("killed")
    else:
        pools = (("machine", int(result.config.machine_procs)),)  # type: ignore[attr-defined]
        extra = [c for c in ("backfilled", "prediction_s") if c in result.jobs.columns]
        runs = result.jobs.select(
            "job_id", "submit_s", "start_s", "end_s", "procs", "run_s", *extra
        ).with_columns(pl.lit(0).alias("pool"), pl.lit(True).alias("final"))
    runs = _with_users(runs, getattr(result, "source_jobs", None))
    return _assigned(runs, pools, rule)


def _memory_schedule(result: RunResult, rule: AssignmentRule) -> Schedule:
    """A memory-aware run's schedule: every run (failed ones too) on its node classes; a run
    spread over several classes holds processors (nodes) in each."""
    config = result.config  # type: ignore[attr-defined]
    n_classes = len(config.class_nodes)
    pools = tuple(
        (f"{memory:g} MB", int(nodes))
        for memory, nodes in zip(config.class_memory_mb, config.class_nodes, strict=True)
    )
    class_columns = [f"nodes_class{c + 1}" for c in range(n_classes)]
    runs = (
        result.runs.join(  # type: ignore[attr-defined]
            result.jobs.select("job_id", "submit_s", "run_s", "failures"), on="job_id", how="left"
        )
        .with_columns(
            pl.sum_horizontal(class_columns).alias("procs"), (~pl.col("failed")).alias("final")
        )
        .sort("start_s", "job_id")
    )
    counts = runs.select(class_columns).to_numpy().astype(np.int64)
    # one piece per (run, class with nodes), laid out run by run, classes ascending
    run_index, pool_index = np.nonzero(counts)
    starts = runs["start_s"].to_numpy()[run_index]
    ends = runs["end_s"].to_numpy()[run_index]
    pieces = assign_processors(
        starts, ends, counts[run_index, pool_index], [n for _, n in pools], pool=pool_index,
        rule=rule,
    )  # fmt: skip
    per_run = np.bincount(run_index, weights=pieces.pieces, minlength=runs.height).astype(np.int64)
    assignment = Assignment(
        first=np.concatenate(([0], np.cumsum(per_run))).astype(np.int64),
        lo=pieces.lo,
        hi=pieces.hi,
    )
    main_pool = np.where(counts.any(axis=1), counts.argmax(axis=1), 0)
    runs = runs.with_columns(pl.Series("pool", main_pool, dtype=pl.Int64))
    keep = [*RUN_COLUMNS, "failures", "failed", "alloc_mb", "node_memory_mb"]
    return Schedule(runs=runs.select(keep), pools=pools, assignment=assignment)


def _with_users(runs: pl.DataFrame, source_jobs: pl.DataFrame | None) -> pl.DataFrame:
    """``runs`` with the SWF ``user_id`` of each job when the result kept its SWF table."""
    if source_jobs is None or "user_id" not in source_jobs.columns:
        return runs
    users = source_jobs.select("job_id", "user_id").unique("job_id", keep="first")
    return runs.join(users, on="job_id", how="left")


def _assigned(
    runs: pl.DataFrame, pools: tuple[tuple[str, int], ...], rule: AssignmentRule
) -> Schedule:
    """The schedule of ``runs`` (one pool each) with their processors assigned."""
    runs = runs.with_columns(pl.col("pool").cast(pl.Int64)).sort("start_s", "job_id")
    assignment = assign_processors(
        runs["start_s"].to_numpy(), runs["end_s"].to_numpy(), runs["procs"].to_numpy(),
        [n for _, n in pools], pool=runs["pool"].to_numpy(), rule=rule,
    )  # fmt: skip
    front = list(RUN_COLUMNS)
    return Schedule(
        runs=runs.select(*front, *[c for c in runs.columns if c not in front]),
        pools=pools,
        assignment=assignment,
    )
