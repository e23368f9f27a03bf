"""The rl study's representative sequence: the test sequence of a log where the study's best
EASY policy and the reference differ most, simulated again by schedlab's EASY as engine results
(which :func:`scheduler.sim.schedule.schedule_of` draws).

A test sequence is short (``rl.sequences.length`` jobs, 1,024 in RLScheduler's protocol: hours
to weeks of the log), so the chart draws a whole sequence, from its first submission until
its last job ends, instead of a week.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim.engine import SimulationResult, simulate_easy
from scheduler.sim.rlscheduler import RlsWorkload
from scheduler.studies.rl.plan import EASY

__all__ = ["DrawnSequence", "drawn_sequence", "sequence_result"]


@dataclass(frozen=True)
class DrawnSequence:
    """The sequence drawn: ``policy`` (drawn against the reference), the sequence's number
    ``sequence`` and first job ``start`` (an index into the log as RLScheduler reads it), and
    the mean bounded slowdowns of the study's runs (``reference_avg_bsld``, ``avg_bsld``)."""

    policy: str
    sequence: int
    start: int
    reference_avg_bsld: float
    avg_bsld: float


def drawn_sequence(
    runs: pl.DataFrame,
    *,
    trace: str,
    reference: str,
    policies: Sequence[str],
    backfill: bool,
) -> DrawnSequence:
    """The policy and test sequence of ``trace`` the report draws, from the study's runs
    (``runs.parquet``: schedlab's EASY, ``backfill`` as given).

    The policy is the one of ``policies`` other than ``reference`` with the lowest mean
    AVEbsld over the test sequences (ties: the earlier in ``policies``); the sequence the one
    where its AVEbsld differs most, in absolute value, from the reference's (ties: the
    earliest).

    Raises
    ------
    ConfigurationError
        No policy besides the reference, or no sequence with both runs.
    """
    easy = runs.filter(
        (pl.col("trace") == trace) & (pl.col("mode") == EASY) & (pl.col("backfill") == backfill)
    )
    others = [p for p in policies if p.upper() != reference.upper()]
    means = {
        policy: float(part["avg_bsld"].mean())  # type: ignore[arg-type]
        for policy in others
        if not (part := easy.filter(pl.col("policy") == policy)).is_empty()
    }
    if not means:
        raise ConfigurationError(f"rl sequence: {trace} has no policy besides {reference}")
    policy = min(means, key=lambda p: (means[p], others.index(p)))
    base = easy.filter(pl.col("policy").str.to_uppercase() == reference.upper()).select(
        "sequence", "start", pl.col("avg_bsld").alias("reference_avg_bsld")
    )
    pairs = (
        base.join(easy.filter(pl.col("policy") == policy).select("sequence", "avg_bsld"),
                  on="sequence")
        .with_columns((pl.col("avg_bsld") - pl.col("reference_avg_bsld")).abs().alias("gap"))
        .sort(["gap", "sequence"], descending=[True, False])
    )  # fmt: skip
    if pairs.is_empty():
        raise ConfigurationError(f"rl sequence: {trace} has no sequence run by {reference}")
    row = pairs.row(0, named=True)
    return DrawnSequence(policy, int(row["sequence"]), int(row["start"]),
                         float(row["reference_avg_bsld"]), float(row["avg_bsld"]))  # fmt: skip


def sequence_result(
    workload: RlsWorkload, start: int, length: int, *, policy: str, backfill: bool
) -> SimulationResult:
    """The sequence of ``length`` jobs from job ``start`` of ``workload`` under schedlab's
    EASY with primary ``policy`` (FCFS backfilling, or none): the easy mode's run of the study
    (:func:`~scheduler.studies.rl.sequences.sequence_runs`), job for job. The jobs see
    :attr:`~scheduler.sim.rlscheduler.RlsWorkload.estimate_s` as their requested time."""
    sl = slice(start, start + length)
    procs = workload.procs[sl]
    table = pl.DataFrame({
        "job_id": workload.job_id[sl], "submit_s": workload.submit_s[sl],
        "run_s": workload.run_s[sl], "alloc_procs": procs, "req_procs": procs,
        "req_time_s": workload.estimate_s[sl],
    })  # fmt: skip
    return simulate_easy(table, policy, "FCFS" if backfill else None,
                         machine_procs=workload.max_procs)  # fmt: skip
