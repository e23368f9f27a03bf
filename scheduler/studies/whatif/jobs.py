"""A what-if study's jobs: the site's log, with each job's user and account.

The log comes from one of four sources (config ``whatif``: ``trace``, ``swf``, ``sacct``, or
none of them: the bundled example site). Whatever the source, the result is one table: the SWF
columns the simulations read and :data:`~scheduler.traces.site.ACCOUNT_COLUMN` (text): the
sacct export's account name (or number) where the source is Slurm's accounting, the SWF group
number otherwise, the configured account names for the example site. Logs read from a file
go through the strong filter the other studies use (:func:`scheduler.traces.filters.strong_filter`).
A log without users (every ``user_id`` unknown) is refused: per-user fairness and fair-share
need them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.traces.site import ACCOUNT_COLUMN, synthetic_site

__all__ = ["SOURCE_KINDS", "check_users", "site_jobs"]

#: Where a what-if study's log comes from (the config keys, and the example site).
SOURCE_KINDS = ("example", "trace", "swf", "sacct")


def check_users(jobs: pl.DataFrame, where: str) -> None:
    """Refuse a log whose jobs have no user (SWF ``user_id`` -1 everywhere), naming ``where``."""
    if jobs.height == 0:
        raise ConfigurationError(f"{where}: no job left to simulate")
    if (jobs["user_id"] < 0).all():
        raise ConfigurationError(
            f"{where}: the log has no users (SWF field 12, user_id, is -1 for every job); the "
            "what-if study measures per-user fairness and fair-share and needs them"
        )


def site_jobs(
    source: Mapping[str, Any], path: str | None, machine_procs: int | None
) -> tuple[pl.DataFrame, int]:
    """The site's jobs and its machine size (processors).

    ``source["kind"]`` is one of :data:`SOURCE_KINDS`; ``path`` the filtered table (``trace``),
    the SWF file (``swf``) or the sacct export (``sacct``); ``source`` also holds the example
    site's settings (``jobs``, ``machine_procs``, ``users``, ``accounts``, ``load``,
    ``job_types``, ``seed``) and the export's ``timezone``. ``machine_procs`` overrides the
    log's size.
    """
    kind = source["kind"]
    if kind == "example":
        procs = int(machine_procs or source["machine_procs"])
        jobs = synthetic_site(
            int(source["jobs"]),
            machine_procs=procs,
            users=int(source["users"]),
            accounts=list(source["accounts"]),
            load=float(source["load"]),
            seed=int(source["seed"]),
            job_types=source["job_types"],
        )
        return jobs, procs
    assert path is not None
    if kind == "trace":
        from scheduler.core.steps import read_table, table_machine_procs

        jobs = read_table(path)
        procs = int(machine_procs or table_machine_procs(path))
        jobs = jobs.with_columns(pl.col("group_id").cast(pl.String).alias(ACCOUNT_COLUMN))
    elif kind == "swf":
        from scheduler.traces.filters import strong_filter
        from scheduler.traces.swf import read_swf

        trace = read_swf(path, machine_procs=machine_procs)
        trace, _ = strong_filter(trace, require_jobs=True)
        procs = int(trace.machine_procs)
        jobs = trace.jobs.with_columns(pl.col("group_id").cast(pl.String).alias(ACCOUNT_COLUMN))
    elif kind == "sacct":
        from scheduler.traces.filters import strong_filter
        from scheduler.traces.sacct import read_sacct

        imported = read_sacct(
            path, timezone=source["timezone"], machine_procs=machine_procs, keep_names=True
        )
        trace, _ = strong_filter(imported.trace, require_jobs=True)
        procs = int(trace.machine_procs)
        side = imported.side.select(
            "job_id",
            pl.coalesce(pl.col("account_name"), pl.col("account_id").cast(pl.String)).alias(
                ACCOUNT_COLUMN
            ),
        )
        jobs = trace.jobs.join(side, on="job_id", how="left", maintain_order="left")
        jobs = jobs.with_columns(pl.col(ACCOUNT_COLUMN).fill_null("-1"))
    else:
        raise ConfigurationError(f"unknown source kind {kind!r}; known: {SOURCE_KINDS}")
    check_users(jobs, f"config whatif.{kind}: {path}")
    return jobs, procs
