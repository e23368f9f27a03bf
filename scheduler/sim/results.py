"""What every engine variant's run is made of: the shared bases of their configurations and
results.

- :class:`RunConfig`: the machine size and a JSON-ready ``to_dict`` (the base engine's
  :class:`~scheduler.sim.engine.SimulationConfig` and the redirection's
  :class:`~scheduler.sim.redirection.RedirectConfig` add their settings; the memory-aware
  cluster describes its machine by node classes instead and shares :func:`json_ready` only);
- :class:`RunResult`: the per-job table and the run's figures (a
  :class:`~scheduler.sim.metrics.RunFigures` or a variant's summary that extends it), with the
  job arrays :func:`~scheduler.sim.metrics.run_figures` takes and the cumulative wait.

The summaries' base is :class:`~scheduler.sim.metrics.RunFigures`, next to the function that
computes it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim.metrics import RunFigures, cumulative_wait

__all__ = ["RunConfig", "RunResult", "json_ready", "swf_with_simulated_waits"]


def json_ready(record: object) -> dict[str, Any]:
    """A dataclass instance as a plain dict for JSON: an infinite number becomes ``None``
    (no threshold), a tuple a list."""
    out = asdict(record)  # type: ignore[call-overload]
    for key, value in out.items():
        if isinstance(value, float) and math.isinf(value):
            out[key] = None
        elif isinstance(value, tuple):
            out[key] = list(value)
    return out


@dataclass(frozen=True)
class RunConfig:
    """The settings of a run besides the jobs: ``machine_procs`` is m, processors of the whole
    machine; the variants add their own fields."""

    machine_procs: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready: :func:`json_ready`)."""
        return json_ready(self)


@dataclass(frozen=True)
class RunResult:
    """A simulated schedule: ``jobs`` has one row per job in (submit time, job number) order,
    with at least ``job_id, submit_s, procs, run_s, start_s, wait_s, end_s, bsld`` (seconds,
    processors; ``start_s`` the start of the run that completed); ``summary`` the run's
    figures (:func:`~scheduler.sim.metrics.run_figures` of these jobs, and the variant's own).
    """

    jobs: pl.DataFrame
    summary: RunFigures

    def _array(self, name: str) -> np.ndarray:
        return self.jobs[name].cast(pl.Float64).to_numpy()

    @property
    def submit_s(self) -> np.ndarray:
        """Submit time of each job (s), in the table's order."""
        return self._array("submit_s")

    @property
    def start_s(self) -> np.ndarray:
        """Start of each job's completed run (s), in the table's order."""
        return self._array("start_s")

    @property
    def run_s(self) -> np.ndarray:
        """Actual run time of each job (s), in the table's order."""
        return self._array("run_s")

    @property
    def procs(self) -> np.ndarray:
        """Processors (nodes) of each job, in the table's order."""
        return self._array("procs")

    @property
    def wait_s(self) -> np.ndarray:
        """Wait of each job, ``start_s − submit_s`` (s), in the table's order."""
        return self._array("wait_s")

    def cumulative_wait(self) -> pl.DataFrame:
        """Cumulative waiting time (s) against time (s), counting jobs as they finish
        (:func:`~scheduler.sim.metrics.cumulative_wait`)."""
        return cumulative_wait(self.jobs)


def swf_with_simulated_waits(source_jobs: pl.DataFrame | None, jobs: pl.DataFrame) -> pl.DataFrame:
    """The input's SWF job table ``source_jobs`` with the simulated wait (``jobs``'s
    ``wait_s``, rounded to whole seconds) in field 3, ready for :func:`scheduler.write_swf`:
    the ``to_swf_jobs`` of every result made from an SWF job table.

    Raises
    ------
    ConfigurationError
        ``source_jobs`` is None: the result was not made from an SWF job table.
    """
    if source_jobs is None:
        raise ConfigurationError("this result was not made from an SWF job table")
    waits = jobs.select(
        "job_id", pl.col("wait_s").round(0).cast(pl.Int64).alias("_simulated_wait_s")
    )
    return (
        source_jobs.join(waits, on="job_id", how="left", maintain_order="left")
        .with_columns(pl.col("_simulated_wait_s").alias("wait_s"))
        .drop("_simulated_wait_s")
    )
