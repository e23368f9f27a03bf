"""The whole-log table of the queue-tuning study: given policy pairs simulated on a whole
filtered log (no split, no resampling), as the thesis' tables of AvgWait and MaxWait of
EASY-EXP-EXP, EASY-SQF-SQF, EASY-SPF-SPF and EASY-FCFS-FCFS on CTC-SP2 and SDSC-SP2 (its EXP is
the registry's LEXP, largest expansion factor first).

One run gives one row of :data:`WHOLE_LOG_RUN_COLUMNS` (:func:`whole_log_run`, from the figures of
:class:`~scheduler.sim.metrics.RunSummary`, the one definition of AvgWait and MaxWait);
:func:`whole_log_table` puts the runs of every trace together, adds hours and the ratios to the
baseline pair simulated on the same log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim.metrics import RunSummary
from scheduler.sim.results import RunResult
from scheduler.studies.tuning.schema import WEEKLY_COLUMNS, Baseline

__all__ = [
    "WHOLE_LOG_COLUMNS",
    "WHOLE_LOG_RUN_COLUMNS",
    "simulate_whole_log_case",
    "whole_log_run",
    "whole_log_table",
]

_SECONDS_PER_HOUR = 3600.0

#: Columns of one simulated run on a whole log (one row). Times in seconds, ``threshold_s``
#: ``inf`` for no threshold, ``utilisation`` in [0, 1], bounded slowdowns dimensionless.
#: The weekly table's columns without the week's split and index.
WHOLE_LOG_RUN_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    name: dtype for name, dtype in WEEKLY_COLUMNS.items() if name not in ("split", "week_index")
}

#: Columns of :func:`whole_log_table`, in order.
WHOLE_LOG_COLUMNS: tuple[str, ...] = (
    "trace",
    "primary",
    "backfill",
    "threshold",
    "threshold_s",
    "jobs",
    "avg_wait_s",
    "avg_wait_h",
    "relative_avg_wait",
    "max_wait_s",
    "max_wait_h",
    "relative_max_wait",
    "avg_bsld",
    "utilisation",
)


def simulate_whole_log_case(
    jobs: pl.DataFrame,
    machine_procs: int,
    *,
    primary: str,
    backfill: str,
    threshold_s: float,
    threshold_backfill: bool,
    slurm: Mapping[str, Any] | None,
) -> RunResult:
    """One (primary, backfill, Θ) of the study simulated on a whole filtered log.

    :func:`~scheduler.sim.engine.simulate_easy` on the filtered jobs (SWF columns) and machine
    size (``machine_procs``, processors), with the study's reservation rule
    (``reservation="default"``, as every week of the study) and the requested times as
    estimates, Θ = ``threshold_s`` seconds (``inf``: none) and ``threshold_backfill`` as
    ``tuning.threshold_backfill``; with ``backfill`` =
    :data:`~scheduler.studies.common.config.CONSERVATIVE` it is
    :func:`~scheduler.sim.conservative.simulate_conservative` under ``primary`` and Θ with the
    study's Slurm settings ``slurm`` (:mod:`scheduler.studies.common.slurm`), as the weeks
    (fair-share per user under one account).
    """
    from scheduler.sim.conservative import simulate_conservative
    from scheduler.sim.engine import simulate_easy
    from scheduler.studies.common.config import CONSERVATIVE
    from scheduler.studies.common.slurm import SWF_ACCOUNT, conservative_kwargs

    if backfill == CONSERVATIVE:
        return simulate_conservative(
            jobs, primary, threshold_s, machine_procs=machine_procs, swf_account=SWF_ACCOUNT,
            **conservative_kwargs(slurm, primary),
        )  # fmt: skip
    return simulate_easy(
        jobs, primary, backfill, threshold_s, machine_procs=machine_procs, reservation="default",
        threshold_backfill=threshold_backfill,
    )  # fmt: skip


def whole_log_run(
    summary: RunSummary,
    *,
    trace: str,
    primary: str,
    backfill: str,
    threshold: str,
    threshold_s: float,
) -> pl.DataFrame:
    """One row of :data:`WHOLE_LOG_RUN_COLUMNS` from a simulated run's summary."""
    row = {
        "trace": trace,
        "primary": primary,
        "backfill": backfill,
        "threshold": threshold,
        "threshold_s": float(threshold_s),
        "jobs": summary.jobs,
        "avg_wait_s": summary.avg_wait_s,
        "max_wait_s": summary.max_wait_s,
        "avg_bsld": summary.avg_bsld,
        "max_bsld": summary.max_bsld,
        "utilisation": summary.utilisation,
    }
    return pl.DataFrame([row], schema=WHOLE_LOG_RUN_COLUMNS, orient="row")


def _ratio(value: pl.Series, base: pl.Series) -> np.ndarray:
    """``value / base`` with ``0 / 0`` → 1.0 (x / 0 with x > 0 is refused before).

    In NumPy, not polars: after a join that broadcasts one baseline row per trace, polars may
    divide by multiplying with the reciprocal, and the baseline's own ratio comes out as
    0.9999999999999999 instead of exactly 1."""
    numerator = value.to_numpy().astype(np.float64)
    denominator = base.to_numpy().astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator == 0, 1.0, numerator / denominator)


def whole_log_table(runs: pl.DataFrame, baseline: Baseline) -> pl.DataFrame:
    """The whole-log runs of every trace with hours and ratios to the baseline's run.

    Parameters
    ----------
    runs
        Rows of :data:`WHOLE_LOG_RUN_COLUMNS` (one per trace, primary, backfill, threshold).
    baseline
        The pair (and threshold) every row is compared with; it must have a run on every trace.

    Returns
    -------
    polars.DataFrame
        Columns :data:`WHOLE_LOG_COLUMNS`, rows in the order of ``runs`` grouped by trace (in
        order of first appearance): ``avg_wait_h`` and ``max_wait_h`` are the seconds over
        3600; ``relative_avg_wait`` and ``relative_max_wait`` divide by the baseline's value on
        the same trace (1.0 for the baseline; ``0 / 0`` is 1.0).

    Raises
    ------
    ConfigurationError
        When a column is missing, a (trace, primary, backfill, threshold) appears twice, a trace
        has no baseline run, or a ratio would be ``x / 0`` with ``x > 0``.
    """
    missing = [name for name in WHOLE_LOG_RUN_COLUMNS if name not in runs.columns]
    if missing:
        raise ConfigurationError(f"whole-log runs lack columns: {', '.join(missing)}")
    key = ["trace", "primary", "backfill", "threshold"]
    twice = runs.group_by(key).len().filter(pl.col("len") > 1)
    if twice.height:
        row = twice.sort(key).row(0, named=True)
        raise ConfigurationError(
            f"whole-log runs: {row['trace']} {row['primary']}/{row['backfill']}/"
            f"{row['threshold']} appears {row['len']} times"
        )
    base = runs.filter(baseline.expr()).select(
        "trace",
        pl.col("avg_wait_s").alias("__base_avg"),
        pl.col("max_wait_s").alias("__base_max"),
    )
    lacking = sorted(set(runs["trace"].to_list()) - set(base["trace"].to_list()))
    if lacking:
        raise ConfigurationError(
            f"whole-log runs: the baseline {baseline.name} has no run on {', '.join(lacking)}; "
            "every row is relative to it"
        )
    traces = list(dict.fromkeys(runs["trace"].to_list()))
    joined = runs.with_row_index("__order").join(base, on="trace", how="left")
    for value, base_value in (("avg_wait_s", "__base_avg"), ("max_wait_s", "__base_max")):
        bad = joined.filter((pl.col(base_value) == 0) & (pl.col(value) > 0))
        if bad.height:
            row = bad.row(0, named=True)
            raise ConfigurationError(
                f"whole-log runs, {row['trace']}: {value} is 0 under the baseline "
                f"{baseline.name} but {row[value]!r} under {row['primary']}/{row['backfill']}/"
                f"{row['threshold']}; the ratio would be infinite"
            )
    return (
        joined.with_columns(
            (pl.col("avg_wait_s") / _SECONDS_PER_HOUR).alias("avg_wait_h"),
            (pl.col("max_wait_s") / _SECONDS_PER_HOUR).alias("max_wait_h"),
            pl.Series("relative_avg_wait", _ratio(joined["avg_wait_s"], joined["__base_avg"])),
            pl.Series("relative_max_wait", _ratio(joined["max_wait_s"], joined["__base_max"])),
            pl.col("trace").replace_strict(traces, list(range(len(traces)))).alias("__trace"),
        )
        .sort("__trace", "__order")
        .select(WHOLE_LOG_COLUMNS)
    )
