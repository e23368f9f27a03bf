"""The logs ``scheduler bench`` reads: machine sizes from the trace catalogue, the strong filter,
and the job arrays the simulations are timed on."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from scheduler.traces.catalogue import TRACE_CATALOGUE, catalogue_machine_procs
from scheduler.traces.filters import strong_filter
from scheduler.traces.swf import Trace, read_swf

__all__ = ["JobArrays", "filtered_log", "job_arrays", "present_logs", "read_log"]

#: submit time (s), processors, run time (s), requested time (s), job id; float64, one per job.
JobArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def read_log(path: Path, name: str, catalogue: Path = TRACE_CATALOGUE) -> Trace:
    """``path`` read as the catalogue's log ``name``: the machine size (processors) is the
    catalogue's ``traces.<name>.machine_procs``, else the header's."""
    return read_swf(path, machine_procs=catalogue_machine_procs(name, catalogue))


def filtered_log(path: Path, name: str, catalogue: Path = TRACE_CATALOGUE) -> Trace:
    """:func:`read_log`, then strong-filtered as the workflow's ``filter_trace`` rule does
    (overruns dropped)."""
    return strong_filter(read_log(path, name, catalogue))[0]


def present_logs(
    paths: Mapping[str, Path], catalogue: Path, skipped: list[str]
) -> Iterator[tuple[str, Trace]]:
    """Name and :func:`filtered_log` of each log of ``paths`` (name -> file) that exists, one
    at a time in order; the path of each missing one is appended to ``skipped``."""
    for name, path in paths.items():
        if not path.is_file():
            skipped.append(str(path))
            continue
        yield name, filtered_log(path, name, catalogue)


def job_arrays(trace: Trace) -> JobArrays:
    """submit, procs, run, requested time, job id of a filtered trace (float64)."""
    jobs = trace.jobs
    return tuple(  # type: ignore[return-value]
        jobs[c].to_numpy().astype(np.float64)
        for c in ("submit_s", "alloc_procs", "run_s", "req_time_s", "job_id")
    )
