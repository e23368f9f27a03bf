"""The memory study's representative week: which estimator variant the report draws against
the baseline, and the two runs of the log it draws.

The variant is the one whose run changes the mean bounded slowdown most at the drawn cell (the
first log and scheduler, the saturation load, the first seed), read from the study's own runs,
so that the chart shows an estimator that changed the schedule (one that never lowers an
allocation fails no job and draws the baseline twice).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim.memory import MemoryResult, memory_jobs, simulate_memory
from scheduler.studies.memory.plan import BASELINE, parse_variant
from scheduler.traces.memory import scale_to_load

__all__ = ["week_estimator", "week_runs"]


def week_estimator(
    runs: pl.DataFrame,
    estimators: Sequence[str],
    *,
    trace: str,
    scheduler: str,
    load: float,
    seed: int,
) -> str:
    """The variant of ``estimators`` whose mean bounded slowdown differs most, in absolute
    value, from the baseline's at one cell of the study's runs (``kind`` "load"; ties: the
    earlier in ``estimators``).

    Parameters
    ----------
    runs
        The study's runs (``runs.parquet``: ``kind, trace, scheduler, variant, load, seed,
        avg_bsld``, …).
    estimators
        Variant labels besides the baseline, in the config's order.
    trace, scheduler, load, seed
        The cell (``load`` the target offered load).

    Raises
    ------
    ConfigurationError
        ``estimators`` is empty, or the cell lacks the baseline's run.
    """
    if not estimators:
        raise ConfigurationError("memory week: no estimator besides the baseline to draw")
    cell = runs.filter(
        (pl.col("kind") == "load") & (pl.col("trace") == trace)
        & (pl.col("scheduler") == scheduler) & (pl.col("load") == load)
    )  # fmt: skip
    base = cell.filter(pl.col("variant") == BASELINE)["avg_bsld"]
    if base.is_empty():
        raise ConfigurationError(
            f"memory week: no baseline run of {trace}, {scheduler}, load {load:g}"
        )
    gaps = {
        label: abs(float(part["avg_bsld"][0]) - float(base[0]))
        for label in estimators
        if not (
            part := cell.filter((pl.col("variant") == label) & (pl.col("seed") == seed))
        ).is_empty()
    }
    if not gaps:
        return str(estimators[0])
    return max(gaps, key=lambda label: (gaps[label], -list(estimators).index(label)))


def week_runs(
    swf: pl.DataFrame,
    estimator: str,
    *,
    load: float,
    class_nodes: Sequence[int],
    class_memory_mb: Sequence[float],
    scheduler: str,
    seed: int,
    memory_limit: str,
    max_failures: int,
) -> tuple[MemoryResult, MemoryResult]:
    """The filtered log ``swf`` (an SWF job table) at offered load ``load`` (eq. 1) on the
    machine of ``class_nodes`` nodes of ``class_memory_mb`` MB, without estimation and with
    the variant ``estimator``: the runs of the study's ``simulate_batch`` for that cell.

    Returns
    -------
    tuple of MemoryResult
        ``(baseline, with the estimator)``.
    """
    jobs = memory_jobs(scale_to_load(swf, int(sum(class_nodes)), load))
    results = []
    for label in (BASELINE, estimator):
        config = parse_variant(label).config(
            class_nodes=class_nodes, class_memory_mb=class_memory_mb, scheduler=scheduler,
            memory_limit=memory_limit, max_failures=max_failures, seed=seed,
        )  # fmt: skip
        results.append(simulate_memory(jobs, config))
    return results[0], results[1]
