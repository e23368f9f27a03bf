"""Inference for the queue-tuning study that respects how its weeks are made.

The resampled weeks of a split are not independent observations. Every one of them is built from
the same ``K`` source weeks of the split (each user contributes its jobs of one of them:
:mod:`scheduler.traces.resample`), and ``K`` is a few dozen for a log of one or two years while a
study draws 100 or 250 weeks. Given the log, the weeks are independent draws; but the question a
study asks (does the learned pair wait less than EASY on this system's workload?) is about the
workload the log is one sample of, and the log holds only ``K`` independent weeks of it. A
t-interval over the resampled weeks measures only the resampling noise and shrinks to zero as
more weeks are drawn; it says nothing about the variation between logs.

The source-week bootstrap repeats the whole measurement on bootstrap logs. Replicate ``b`` draws
``K`` source weeks with replacement (:func:`~scheduler.traces.resample.bootstrap_week_map`: each
week kept whole, all users' jobs of it together), resamples ``weeks`` weeks from that bootstrap
log exactly as the study resamples the real split (fresh draws per replicate), simulates every
configuration on them and keeps the same summary figures the study reports. The spread of a
statistic over replicates estimates its spread over logs of ``K`` weeks *and* over resampling
draws; the percentile interval and the bootstrap p-value of
:mod:`scheduler.studies.common.statistics` come from it. The unit that is treated as independent
is the source week. ``tests/studies/tuning/test_bootstrap.py`` checks on synthetic logs with a
known mean that these intervals keep their nominal coverage where t-intervals over resampled weeks
do not.

Selection is not repeated inside replicates: the configurations (the pairs learned on the
training half, and the baseline) are fixed, and the bootstrap runs on the test half only, which
shares no source week with the training half.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim.arrays import week_arrays
from scheduler.studies.tuning.schema import BOOTSTRAP_COLUMNS
from scheduler.studies.tuning.weeks import simulate_weeks
from scheduler.traces.calendar import TraceCalendar
from scheduler.traces.resample import (
    ResamplingMethod,
    bootstrap_week_map,
    complete_weeks,
    resample_weeks,
)

__all__ = ["BOOTSTRAP_COLUMNS", "Configuration", "bootstrap_replicates"]


@dataclass(frozen=True)
class Configuration:
    """EASY(primary, backfill, Θ): the threshold's label and its value in seconds (inf: none)."""

    primary: str
    backfill: str
    threshold: str
    threshold_s: float


def bootstrap_replicates(
    jobs: pl.DataFrame,
    machine_procs: int,
    configurations: Sequence[Configuration],
    *,
    replicates: Sequence[int],
    weeks: int,
    seed: int,
    trace: str,
    split: str = "test",
    method: ResamplingMethod = "uniform",
    threshold_backfill: bool = False,
    calendar: TraceCalendar | None = None,
    slurm: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """Simulate every configuration on the resampled weeks of source-week bootstrap replicates.

    Parameters
    ----------
    jobs
        The split the study resampled (SWF columns, as for
        :func:`~scheduler.traces.resample.resample_weeks`).
    machine_procs
        Processors of the machine.
    configurations
        What to simulate on every replicate (duplicates are simulated once).
    replicates
        Replicate numbers (>= 0); replicate ``b`` is the same on every machine and in every
        batch, whatever other replicates are drawn.
    weeks
        Resampled weeks per replicate (the study's weeks per split, so that a replicate's
        statistic has the resampling noise of the real one).
    seed, trace, split, method
        As for the study's resampling. Replicate ``b`` draws its source weeks from
        ``(seed, trace, split + "/bootstrap", b)`` and its resampled weeks from the split name
        ``f"{split}/bootstrap{b}"``.
    calendar
        The study's week alignment (:func:`~scheduler.traces.resample.resample_weeks`): the
        source weeks the bootstrap draws are the weeks the study cuts.
    threshold_backfill, slurm
        The study's backfill order and Slurm settings
        (:func:`~scheduler.studies.tuning.weeks.simulate_weeks`).

    Returns
    -------
    polars.DataFrame
        :data:`BOOTSTRAP_COLUMNS`, one row per (replicate, configuration), sorted by replicate
        (unthresholded configurations first within one): K (``source_weeks``, the split's
        complete weeks), and the mean AvgWait, mean MaxWait and worst MaxWait (s) over the
        replicate's weeks.
    """
    if weeks < 1:
        raise ConfigurationError(f"weeks per bootstrap replicate must be >= 1, got {weeks}")
    if any(b < 0 for b in replicates):
        raise ConfigurationError(f"bootstrap replicate numbers must be >= 0, got {replicates}")
    unique = list(dict.fromkeys(configurations))
    # rows: the unthresholded configurations first within a replicate
    unique.sort(key=lambda c: not math.isinf(c.threshold_s))
    # one simulation per pair covers its thresholds (they share the unthresholded prefix)
    pairs: dict[tuple[str, str], list[Configuration]] = {}
    for config in unique:
        pairs.setdefault((config.primary, config.backfill), []).append(config)
    source_weeks = complete_weeks(jobs, name=f"{trace} {split}", calendar=calendar)
    rows: list[dict[str, object]] = []
    for replicate in replicates:
        week_map = bootstrap_week_map(
            source_weeks, seed=seed, trace=trace, split=split, replicate=int(replicate)
        )
        table = resample_weeks(
            jobs, range(weeks), seed=seed, trace=trace, split=f"{split}/bootstrap{replicate}",
            method=method, week_map=week_map, calendar=calendar,
        )  # fmt: skip
        arrays = week_arrays(table, machine_procs, source=f"{trace} {split} bootstrap")
        results: dict[Configuration, pl.DataFrame] = {}
        for (primary, backfill), members in pairs.items():
            result = simulate_weeks(
                arrays, machine_procs, primary=primary, backfill=backfill,
                thresholds=[(c.threshold, c.threshold_s) for c in members], trace=trace,
                split=split, threshold_backfill=threshold_backfill, slurm=slurm,
            )  # fmt: skip
            n_weeks = result.height // len(members)  # threshold-major: one block per member
            for i, config in enumerate(members):
                results[config] = result.slice(i * n_weeks, n_weeks)
        for config in unique:
            result = results[config]
            max_wait = result["max_wait_s"].to_numpy()
            rows.append({
                "trace": trace, "split": split, "replicate": int(replicate),
                "primary": config.primary, "backfill": config.backfill,
                "threshold": config.threshold, "threshold_s": float(config.threshold_s),
                "source_weeks": source_weeks, "weeks": result.height,
                "mean_avg_wait_s": float(np.mean(result["avg_wait_s"].to_numpy())),
                "mean_max_wait_s": float(np.mean(max_wait)),
                "worst_max_wait_s": float(np.max(max_wait)),
            })  # fmt: skip
    return pl.DataFrame(rows, schema=BOOTSTRAP_COLUMNS)
