"""The evaluation protocol of the learned-priority-function study: 15-day sequences of a log
and the policies simulated on them in three modes.

Sequences (the authors' published evaluation code, ``sched-performance-tester``): the log's
jobs with positive processors, run time and requested time, in submission order; a sequence
starts at a job ``i``, takes the 16 jobs ``i … i+15`` that set the initial state (the paper's
S; scheduled like every other job, excluded from the metric) and then every following job
submitted within 15 days (≤ 15 · 86,400 s) of job ``i``'s submission; the next sequence starts
right after. Sequences are consecutive from the start of the log and never overlap; the last,
incomplete one (the log ends before its 15 days) is dropped. As an option, a seeded random
subset of these sequences is used instead of the first ones.

Modes (each simulates a sequence alone, from an empty machine):

``runtime``
    list scheduling with the actual run times as the policies' estimates: the policy orders the
    queue, the first job waits until it fits, no backfilling.
``estimate``
    the same with the requested times as estimates (what a real scheduler knows).
``backfilling``
    EASY with the requested times, the policy ordering both the queue and the backfilling
    candidates ("aggressive" backfilling with a reservation for the first job).

Metric: AVEbsld (τ = 10 s) over the jobs after the first 16 of the sequence.

The authors' simulator (``sched-simulator-*.c``) differs from schedlab's engine: its policy and
its backfilling see only the 32 earliest-submitted waiting jobs, and it starts the 16 state jobs
in submission order. :func:`sequence_bsld` reproduces it with ``queue_window=32`` and
``state_in_order=True`` (the windowed scheduler :func:`scheduler.sim.window.simulate_window`);
the defaults (``None``, ``False``) simulate the whole queue with schedlab's EASY engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim.engine import SimulationResult, simulate_arrays, simulate_easy
from scheduler.sim.metrics import run_figures
from scheduler.sim.window import simulate_window
from scheduler.traces.swf import used_procs

__all__ = [
    "DAY_S",
    "MODES",
    "EvaluationSequence",
    "evaluation_jobs",
    "evaluation_sequences",
    "sequence_bsld",
    "simulate_workload",
]

DAY_S = 86400.0
#: The evaluation modes: (estimate source, backfilling on).
MODES: dict[str, tuple[str, bool]] = {
    "runtime": ("clairvoyant", False),
    "estimate": ("requested", False),
    "backfilling": ("requested", True),
}


@dataclass(frozen=True)
class EvaluationSequence:
    """One sequence: ``first`` and ``stop`` are row positions in the evaluation jobs (the
    sequence is rows ``first … stop − 1``); ``n_state`` rows set the initial state."""

    index: int
    first: int
    stop: int
    n_state: int

    @property
    def jobs(self) -> int:
        return self.stop - self.first


def evaluation_jobs(jobs: pl.DataFrame, *, allocated_only: bool = False) -> pl.DataFrame:
    """The jobs the protocol keeps, in (submit time, job number) order: positive processors
    (allocated, else requested; with ``allocated_only`` the allocated count alone, as the
    authors' scripts read SWF field 5, so a job without it is dropped), run time and requested
    time. Columns ``job_id, submit_s, procs, run_s, req_time_s`` (seconds)."""
    missing = [c for c in ("job_id", "submit_s", "run_s", "req_time_s") if c not in jobs.columns]
    if missing:
        raise ConfigurationError(f"evaluation jobs: the table lacks {', '.join(missing)}")
    procs = pl.col("alloc_procs") if allocated_only else used_procs()
    table = jobs.select(
        "job_id",
        pl.col("submit_s").cast(pl.Float64),
        procs.cast(pl.Float64).alias("procs"),
        pl.col("run_s").cast(pl.Float64),
        pl.col("req_time_s").cast(pl.Float64),
    )
    return table.filter(
        (pl.col("procs") > 0) & (pl.col("run_s") > 0) & (pl.col("req_time_s") > 0)
    ).sort("submit_s", "job_id")


def evaluation_sequences(
    submit_s: np.ndarray,
    *,
    n_state: int = 16,
    days: float = 15.0,
    count: int | None = None,
    seed: int | None = None,
    skip: Sequence[int] = (),
) -> list[EvaluationSequence]:
    """The non-overlapping sequences of a log whose submit times (s, sorted) are ``submit_s``.

    ``skip``: indices (0-based, in log order) of sequences left out before choosing (the
    authors' scripts leave out CEA-Curie's 0 and 7 as "abnormal"); the others keep their index.
    ``count``: how many; ``None`` for all. Without ``seed`` the first ``count`` sequences are
    used (the published protocol); with ``seed`` a seeded random choice of ``count`` of them,
    returned in log order.
    """
    submit = np.asarray(submit_s, dtype=np.float64)
    if n_state < 0:
        raise ConfigurationError(f"n_state must be >= 0, got {n_state}")
    if not days > 0:
        raise ConfigurationError(f"days must be > 0, got {days}")
    if submit.size > 1 and np.any(np.diff(submit) < 0):
        raise ConfigurationError("evaluation sequences: submit times must be sorted")
    horizon = days * DAY_S
    sequences: list[EvaluationSequence] = []
    first = 0
    n = submit.size
    while first + n_state < n:
        # jobs after the state ones submitted within the horizon of the sequence's first job
        stop = int(np.searchsorted(submit, submit[first] + horizon, side="right"))
        stop = max(stop, first + n_state)
        if stop >= n:  # the log ends inside the horizon: an incomplete sequence
            break
        if stop > first + n_state:
            sequences.append(EvaluationSequence(len(sequences), first, stop, n_state))
        first = stop
    if any(k < 0 for k in skip):
        raise ConfigurationError(f"skip: sequence indices are >= 0, got {sorted(skip)}")
    skipped = set(skip)
    sequences = [seq for seq in sequences if seq.index not in skipped]
    if count is not None:
        if count < 1:
            raise ConfigurationError(f"count must be >= 1, got {count}")
        if count > len(sequences):
            raise ConfigurationError(
                f"{count} sequences asked, the log yields {len(sequences)} of {days:g} days"
            )
        if seed is None:
            sequences = sequences[:count]
        else:
            rng = np.random.default_rng(seed)
            chosen = np.sort(rng.choice(len(sequences), size=count, replace=False))
            sequences = [sequences[int(k)] for k in chosen]
    return sequences


def sequence_bsld(
    jobs: pl.DataFrame,
    sequence: EvaluationSequence,
    policy: str,
    mode: str,
    machine_procs: int,
    *,
    tau_s: float = 10.0,
    queue_window: int | None = None,
    state_in_order: bool = False,
    exchange_sort: bool = False,
) -> float:
    """AVEbsld (τ = ``tau_s``) of ``policy`` in ``mode`` on one sequence of
    :func:`evaluation_jobs` ``jobs``, over the jobs after the state ones.

    ``queue_window``: the policy and the backfilling see only that many earliest-submitted
    waiting jobs (``None``: all); ``state_in_order``: the state jobs start in submission order,
    unsorted. Either one selects the windowed scheduler (the authors'); with neither, schedlab's
    EASY engine. ``exchange_sort``: the windowed scheduler sorts with the authors' exchange sort
    (their SPF's); an error with the EASY engine.
    """
    if mode not in MODES:
        raise ConfigurationError(f"unknown evaluation mode {mode!r}; modes: {', '.join(MODES)}")
    estimate, backfilling = MODES[mode]
    part = jobs.slice(sequence.first, sequence.jobs)
    submit = part["submit_s"].to_numpy() - float(part["submit_s"][0])
    run = part["run_s"].to_numpy()
    requested = part["req_time_s"].to_numpy()
    procs = part["procs"].to_numpy()
    estimate_s = run if estimate == "clairvoyant" else requested
    if exchange_sort and queue_window is None and not state_in_order:
        raise ConfigurationError("the exchange sort needs the windowed scheduler")
    if queue_window is not None or state_in_order:
        start = simulate_window(
            submit, procs, run, estimate_s, machine_procs, policy=policy,
            backfilling=backfilling, queue_window=queue_window,
            n_in_order=sequence.n_state if state_in_order else 0, exchange_sort=exchange_sort,
        )  # fmt: skip
    else:
        start = simulate_arrays(
            submit, procs, run, estimate_s, machine_procs, primary=policy,
            backfill=policy if backfilling else None,
            job_id=part["job_id"].to_numpy().astype(np.float64),
        )  # fmt: skip
    k = sequence.n_state
    after = slice(k, None)
    figures = run_figures(submit[after], start[after], run[after], procs[after], machine_procs,
                          tau_s=tau_s)  # fmt: skip
    return figures.avg_bsld


def simulate_workload(jobs: pl.DataFrame, policy: str, machine_procs: int) -> SimulationResult:
    """A whole workload in the ``backfilling`` mode: EASY with the requested times, ``policy``
    ordering both the queue and the backfilling candidates, schedlab's engine (no queue
    window), from an empty machine at the first submission.

    Parameters
    ----------
    jobs
        :func:`evaluation_jobs` (every job at most ``machine_procs`` processors).
    policy
        A registered policy name (a learned function: LF1 … once registered).
    machine_procs
        Processors of the machine.
    """
    table = jobs.select(
        "job_id", "submit_s", "run_s", pl.col("procs").alias("alloc_procs"),
        pl.col("procs").alias("req_procs"), "req_time_s",
    )  # fmt: skip
    return simulate_easy(table, policy, policy, machine_procs=machine_procs)
