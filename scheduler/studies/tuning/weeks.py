"""Simulate many resampled weeks under one policy pair and keep weekly figures.

A simulation job of the queue-tuning study takes a batch of resampled weeks (a table with the
:data:`scheduler.traces.resample.WEEK_COLUMNS`) and one policy pair (primary policy, backfilling
policy) under every threshold Θ of the study and simulates every week on its own, from an empty
machine until it drains: EASY(primary, backfill, Θ), or conservative backfilling in the primary
order under Θ when the backfilling policy is
:data:`~scheduler.studies.common.config.CONSERVATIVE` (with the study's Slurm settings, if any:
:mod:`scheduler.studies.common.slurm`; the primary may then be Slurm's multifactor priority).
Per week it keeps the figures of :data:`WEEKLY_COLUMNS`, computed straight from the start times
by :func:`scheduler.sim.metrics.run_figures` (the one definition of each; τ = 10 s), without
building a table per week.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError
from scheduler.policies import get_policy
from scheduler.sim.arrays import WeekArrays
from scheduler.sim.conservative import simulate_conservative_arrays
from scheduler.sim.metrics import run_figures
from scheduler.sim.multifactor import MULTIFACTOR
from scheduler.sim.sweep import simulate_thresholds
from scheduler.studies.common.config import CONSERVATIVE
from scheduler.studies.common.slurm import conservative_kwargs, user_attributes
from scheduler.studies.tuning.schema import WEEKLY_COLUMNS

__all__ = ["WEEK_FIGURES", "run_label", "simulate_weeks"]


#: The figures of :func:`~scheduler.sim.metrics.run_figures` a week keeps (AvgWait, MaxWait,
#: AVEbsld, MaxBsld, utilisation), in the order of :data:`WEEKLY_COLUMNS`.
WEEK_FIGURES = ("avg_wait_s", "max_wait_s", "avg_bsld", "max_bsld", "utilisation")


def run_label(primary: str, backfill: str) -> str:
    """How logs name a pair's runs: ``EASY-SPF-FCFS``, or ``conservative-SPF`` when the
    backfilling policy is :data:`~scheduler.studies.common.config.CONSERVATIVE`."""
    if backfill == CONSERVATIVE:
        return f"conservative-{primary}"
    return f"EASY-{primary}-{backfill}"


def simulate_weeks(
    weeks: WeekArrays,
    machine_procs: int,
    *,
    primary: str,
    backfill: str,
    thresholds: Sequence[tuple[str, float]],
    trace: str,
    split: str,
    threshold_backfill: bool = False,
    slurm: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """Simulate EASY(primary, backfill, Θ) on every week of ``weeks`` independently, for every
    Θ of ``thresholds``; with ``backfill`` = :data:`~scheduler.studies.common.config.CONSERVATIVE`
    conservative backfilling in the thresholded primary order instead
    (:func:`scheduler.sim.conservative.simulate_conservative_arrays`; its walk is always in the
    thresholded order, so ``threshold_backfill`` does not apply), with the limits and the
    multifactor priority of ``slurm`` (:func:`scheduler.studies.common.slurm.study_slurm`; no
    limit without it). ``primary`` may be ``"multifactor"`` only then: fair-share per user of
    the week (:func:`~scheduler.studies.common.slurm.user_attributes`), from no usage.

    Each week starts from an empty machine of ``machine_procs`` processors and runs until its
    last job ends. ``thresholds`` holds (label, seconds) pairs, e.g. ``("20h", 72000.0)``,
    ``("none", inf)``. Returns one row per (threshold, week) with :data:`WEEKLY_COLUMNS`:
    all weeks of the first threshold in week order, then the next threshold's, and so on.
    ``threshold_backfill``: backfill candidates in the thresholded order of ``backfill``
    (overdue jobs first, :func:`scheduler.sim.engine.simulate_arrays`).

    Under EASY the thresholds of a week share their common prefix with the unthresholded run
    (:func:`scheduler.sim.sweep.simulate_thresholds`): a run under Θ is simulated only from the
    first instant at which a job has waited more than Θ, and not at all in a week where that
    never happens (e.g. its MaxWait without threshold is <= Θ). The figures are those of
    separate runs, exactly.
    """
    conservative = backfill == CONSERVATIVE
    if primary == MULTIFACTOR and not conservative:
        raise ConfigurationError(
            f"primary {MULTIFACTOR!r} runs with conservative backfilling only (backfilling "
            f"policy {CONSERVATIVE}), got {backfill!r}"
        )
    if primary != MULTIFACTOR:
        get_policy(primary)
    if not conservative:
        get_policy(backfill)
    options = conservative_kwargs(slurm, primary) if conservative else {}
    if not thresholds:
        raise ConfigurationError("no threshold to simulate")
    labels = [label for label, _ in thresholds]
    values = [float(value) for _, value in thresholds]
    for label, value in zip(labels, values, strict=True):
        if math.isnan(value) or value < 0:
            raise ConfigurationError(f"threshold {label} must be >= 0 seconds, got {value}")
    n_weeks = weeks.week_index.size
    figures = np.empty((len(values), n_weeks, len(WEEK_FIGURES)), dtype=np.float64)
    counts = np.diff(weeks.bounds)
    for k in range(n_weeks):
        lo, hi = weeks.bounds[k], weeks.bounds[k + 1]
        submit, run, procs = weeks.submit_s[lo:hi], weeks.run_s[lo:hi], weeks.procs[lo:hi]
        if conservative:
            if primary == MULTIFACTOR:
                options["attributes"] = user_attributes(weeks.user_id[lo:hi], submit)
            starts = [
                simulate_conservative_arrays(
                    submit, procs, run, weeks.estimate_s[lo:hi], machine_procs,
                    primary=primary, threshold_s=value, job_id=weeks.job_id[lo:hi],
                    validate=False, **options,
                ).start_s
                for value in values
            ]  # fmt: skip
        else:
            starts = simulate_thresholds(
                submit, procs, run, weeks.estimate_s[lo:hi], machine_procs, values,
                primary=primary, backfill=backfill, threshold_backfill=threshold_backfill,
                job_id=weeks.job_id[lo:hi], validate=False,
            )  # fmt: skip
        for t, start in enumerate(starts):
            week = run_figures(submit, start, run, procs, machine_procs, tau_s=BSLD_TAU_S)
            figures[t, k] = [getattr(week, name) for name in WEEK_FIGURES]
    rows = len(values) * n_weeks
    columns = {
        "trace": [trace] * rows,
        "split": [split] * rows,
        "week_index": np.tile(weeks.week_index, len(values)),
        "primary": [primary] * rows,
        "backfill": [backfill] * rows,
        "threshold": np.repeat(labels, n_weeks).tolist(),
        "threshold_s": np.repeat(values, n_weeks),
        "jobs": np.tile(counts.astype(np.int64), len(values)),
        **{name: figures[:, :, i].ravel() for i, name in enumerate(WEEK_FIGURES)},
    }
    return pl.DataFrame(columns, schema=WEEKLY_COLUMNS)
