"""Kernel input arrays: tables of jobs (weeks batches, long traces) checked once and cut into
contiguous float64 arrays, and a per-process cache of them for the workflow steps.

Times in seconds, ``procs`` in processors, ``estimate_s`` the requested time the scheduler sees.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.core.steps import read_table, table_machine_procs
from scheduler.traces.swf import used_procs

__all__ = ["TraceArrays", "WeekArrays", "kernel_arrays", "trace_arrays", "week_arrays"]


@dataclass(frozen=True)
class WeekArrays:
    """Resampled weeks as contiguous arrays, ready for the kernel.

    Week ``k`` occupies ``[bounds[k], bounds[k+1])`` of every array; inside a week jobs are in
    (submit time, job number) order. Submit, run and estimate in seconds, procs in processors;
    ``user_id`` the SWF user number (-1: unknown; a table without the column: all -1), which
    only a fair-share priority reads.
    """

    week_index: np.ndarray
    bounds: np.ndarray
    job_id: np.ndarray
    submit_s: np.ndarray
    run_s: np.ndarray
    procs: np.ndarray
    estimate_s: np.ndarray
    user_id: np.ndarray


def week_arrays(weeks: pl.DataFrame, machine_procs: int, *, source: str = "weeks") -> WeekArrays:
    """Check a weeks table once and cut it into per-week arrays.

    Raises ConfigurationError naming ``source``, the week and the job when a value cannot be
    simulated (processors outside 1..m, non-positive run or requested time), so the per-week
    kernel calls can skip validation.
    """
    if weeks.height == 0:
        raise ConfigurationError(f"{source}: no jobs in this batch of weeks")
    weeks = weeks.sort("week_index", "submit_s", "job_id")
    table = weeks.select(
        pl.col("week_index").cast(pl.Int64),
        pl.col("job_id").cast(pl.Float64),
        pl.col("submit_s").cast(pl.Float64),
        pl.col("run_s").cast(pl.Float64),
        used_procs().cast(pl.Float64).alias("procs"),
        pl.col("req_time_s").cast(pl.Float64).alias("estimate_s"),
        (pl.col("user_id").fill_null(-1) if "user_id" in weeks.columns else pl.lit(-1))
        .cast(pl.Int64).alias("user_id"),
    )
    arrays = {name: table[name].to_numpy() for name in table.columns}
    checks = (
        ("procs", (arrays["procs"] >= 1) & (arrays["procs"] <= machine_procs),
         f"an integer in 1..{machine_procs}"),
        ("run_s", (arrays["run_s"] > 0) & np.isfinite(arrays["run_s"]), "> 0"),
        ("req_time_s", (arrays["estimate_s"] > 0) & np.isfinite(arrays["estimate_s"]), "> 0"),
        ("submit_s", np.isfinite(arrays["submit_s"]), "finite"),
    )  # fmt: skip
    for field, ok, expected in checks:
        if not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            raise ConfigurationError(
                f"{source}: week {int(arrays['week_index'][bad])}, job "
                f"{int(arrays['job_id'][bad])}: field {field} must be {expected}"
            )
    index = arrays["week_index"]
    cut = np.flatnonzero(np.diff(index)) + 1
    bounds = np.concatenate(([0], cut, [index.size])).astype(np.int64)
    return WeekArrays(
        week_index=index[bounds[:-1]],
        bounds=bounds,
        job_id=arrays["job_id"],
        submit_s=arrays["submit_s"],
        run_s=arrays["run_s"],
        procs=arrays["procs"],
        estimate_s=arrays["estimate_s"],
        user_id=arrays["user_id"],
    )


@dataclass(frozen=True)
class TraceArrays:
    """One long trace as kernel arrays, jobs in (submit time, job number) order.

    Times in seconds, ``procs`` in processors, ``estimate_s`` the requested time, ``user_id``
    the SWF user number (-1: unknown; read only by a fair-share priority).
    """

    job_id: np.ndarray
    submit_s: np.ndarray
    run_s: np.ndarray
    procs: np.ndarray
    estimate_s: np.ndarray
    user_id: np.ndarray

    @property
    def jobs(self) -> int:
        return int(self.submit_s.size)


def trace_arrays(table: pl.DataFrame, machine_procs: int, *, source: str = "trace") -> TraceArrays:
    """Check a long-trace table (jobs of resampled weeks laid end to end, as the online study's
    ``long_trace`` returns) and make kernel arrays."""
    weeks: WeekArrays = week_arrays(
        table.with_columns(pl.lit(0, dtype=pl.Int64).alias("week_index")), machine_procs,
        source=source,
    )  # fmt: skip
    return TraceArrays(weeks.job_id, weeks.submit_s, weeks.run_s, weeks.procs, weeks.estimate_s,
                       weeks.user_id)  # fmt: skip


#: How a table file of each kind becomes checked kernel arrays.
_BUILDERS: dict[str, Callable[..., Any]] = {"weeks": week_arrays, "long_trace": trace_arrays}


@functools.lru_cache(maxsize=4)
def _cached(kind: str, path: str, stamp: tuple[int, int]) -> tuple[Any, int]:
    procs = table_machine_procs(path)
    return _BUILDERS[kind](read_table(path), procs, source=path), procs


def kernel_arrays(kind: str, path: str) -> tuple[Any, int]:
    """A weeks batch or a long trace as kernel arrays and the machine size (processors).

    Read and checked once per process and shared by the jobs that run in it (Snakemake's
    thread mode runs the many jobs over one file back to back); the file's (mtime, size)
    stamp invalidates the cache when it is rewritten.
    """
    status = os.stat(path)
    return _cached(kind, os.path.abspath(path), (status.st_mtime_ns, status.st_size))
