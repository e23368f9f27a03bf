"""Trials of the learned-priority study: scores of queue jobs from random orders.

Carastan-Santos & de Camargo (SC'17) score each job of a queue Q by simulating many *trials*:
the jobs of a state set S, then Q in a random order, placed by strict list scheduling with their
actual run times (no backfilling). ``score(t)`` is the share of the summed AVEbsld that falls on
the trials whose first Q job is ``t`` (their eq. 3); a low score means ``t`` is a good job to
start first.

- :func:`run_trials` returns the AVEbsld and the first Q job of each trial
  (:class:`TrialResult`), on given permutations or on ``n_trials`` permutations drawn from a
  seed;
- :func:`trial_scores` returns the scores of Q's jobs;
- :func:`trial_permutations` returns the permutations a seed draws.

The exact semantics (strict order, submit times, what the AVEbsld covers, the generator) are in
``docs/simulator.md``, "Trials of the learned-priority study"; the compiled loop is
:mod:`scheduler.sim._trials_kernel`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError
from scheduler.sim import _trials_kernel as kernel
from scheduler.sim._jobs import first_invalid, job_column, machine_procs_value

__all__ = [
    "DEFAULT_MACHINE_PROCS",
    "DEFAULT_N_STATE",
    "MAX_SEED",
    "TrialResult",
    "run_trials",
    "scores_from_trials",
    "trial_permutations",
    "trial_scores",
]

#: |S| of the published study: the 16 jobs submitted first, which occupy the machine.
DEFAULT_N_STATE = 16
#: Processors of the published study's machine (the Lublin-Feitelson model's 256).
DEFAULT_MACHINE_PROCS = 256
#: Largest seed: seeds are the 64-bit initial states of the SplitMix64 generator.
MAX_SEED = 2**64 - 1


@dataclass(frozen=True)
class TrialResult:
    """The outcome of :func:`run_trials`, one entry per trial.

    Attributes
    ----------
    avebsld
        float64 (T,): the AVEbsld of Q's jobs in each trial (>= 1, dimensionless).
    first_job
        int64 (T,): the index in Q (0-based, in Q's given order) of the first Q job of each
        trial.
    n_queue
        |Q|, the number of jobs scored.
    """

    avebsld: np.ndarray
    first_job: np.ndarray
    n_queue: int

    @property
    def n_trials(self) -> int:
        """T, the number of trials."""
        return int(self.avebsld.shape[0])

    def scores(self) -> np.ndarray:
        """The score of each job of Q (eq. 3): :func:`scores_from_trials` of this result."""
        return scores_from_trials(self.avebsld, self.first_job, self.n_queue)


def scores_from_trials(avebsld: np.ndarray, first_job: np.ndarray, n_queue: int) -> np.ndarray:
    """``score(t) = Σ AVEbsld over the trials whose first Q job is t / Σ AVEbsld over all``.

    Parameters
    ----------
    avebsld
        float64 (T,), the AVEbsld of each trial (> 0).
    first_job
        int (T,), the Q index of each trial's first Q job, in ``0..n_queue-1``.
    n_queue
        |Q|.

    Returns
    -------
    np.ndarray
        float64 (n_queue,) in Q's order. The scores of the jobs drawn first at least once sum
        to 1; a job never drawn first has no score: NaN (not 0, which would read as "the best
        job to start first"). With uniform permutations, a job is never first in T trials with
        probability (1 − 1/|Q|)^T: 1.6e-14 for |Q| = 32 and T = 1,000.
    """
    totals = np.bincount(first_job, weights=avebsld, minlength=n_queue)
    drawn = np.bincount(first_job, minlength=n_queue) > 0
    scores = totals / avebsld.sum()
    scores[~drawn] = np.nan
    return scores


def _jobs(
    submit_s: object, procs: object, run_s: object, n_state: object, machine_procs: object
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Validated kernel arrays and sizes; a ConfigurationError naming the bad argument."""
    submit = job_column("submit_s", submit_s, None)
    n = submit.shape[0]
    procs_f = job_column("procs", procs, n)
    run = job_column("run_s", run_s, n)
    m = machine_procs_value(machine_procs)
    if not isinstance(n_state, int | np.integer) or isinstance(n_state, bool):
        raise ConfigurationError(f"n_state must be an integer, got {n_state!r}")
    n_state = int(n_state)
    if not 0 <= n_state < n:
        raise ConfigurationError(
            f"n_state must be in 0..{n - 1} (the tuple has {n} jobs and Q must keep at least "
            f"one), got {n_state}"
        )
    columns = {"submit_s": submit, "procs": procs_f, "run_s": run}
    bad = first_invalid(columns, m)
    if bad is not None:
        raise ConfigurationError(
            f"{bad.name} must be {bad.expected}, got {columns[bad.name][bad.index]:g} for job "
            f"{bad.index} of the tuple"
        )
    return submit, procs_f.astype(np.int64), run, n_state, m


def _tau(tau_s: object) -> float:
    ok = (
        isinstance(tau_s, int | float | np.integer | np.floating)
        and not isinstance(tau_s, bool)
        and math.isfinite(tau_s)
        and tau_s > 0
    )
    if not ok:
        raise ConfigurationError(f"tau_s must be a finite number of seconds > 0, got {tau_s!r}")
    return float(tau_s)  # type: ignore[arg-type]


def _seed(seed: object) -> np.uint64:
    ok = isinstance(seed, int | np.integer) and not isinstance(seed, bool)
    if not ok or not 0 <= int(seed) <= MAX_SEED:  # type: ignore[call-overload]
        raise ConfigurationError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
    return np.uint64(int(seed))  # type: ignore[call-overload]


def _count(name: str, value: object) -> int:
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < 1:
        raise ConfigurationError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _permutations(permutations: object, n_queue: int) -> np.ndarray:
    """``permutations`` as an int64 (T, |Q|) array whose rows are permutations of 0..|Q|-1."""
    try:
        perms = np.asarray(permutations)
    except (TypeError, ValueError):
        perms = np.empty(0)
    if perms.dtype.kind not in "iu" or perms.ndim != 2 or perms.shape[1] != n_queue:
        raise ConfigurationError(
            f"permutations must be an integer array of shape (trials, {n_queue}) (|Q| = "
            f"{n_queue}), got {perms.dtype} with shape {perms.shape}"
        )
    if perms.shape[0] == 0:
        raise ConfigurationError("permutations must hold at least one trial (row), got 0")
    ok = (np.sort(perms, axis=1) == np.arange(n_queue)).all(axis=1)
    if not ok.all():
        bad = int(np.flatnonzero(~ok)[0])
        raise ConfigurationError(
            f"permutations: row {bad} is not a permutation of 0..{n_queue - 1} (indices into Q)"
        )
    return np.ascontiguousarray(perms, dtype=np.int64)


def trial_permutations(n_queue: int, n_trials: int, seed: int) -> np.ndarray:
    """The permutations :func:`run_trials` draws for ``n_trials`` and ``seed``.

    Parameters
    ----------
    n_queue
        |Q| (>= 1).
    n_trials
        T (>= 1).
    seed
        Integer in 0..2**64-1, the generator's initial state.

    Returns
    -------
    np.ndarray
        int64 (T, |Q|): row k is trial k's order of Q (indices into Q). Each row is Fisher-Yates
        from the identity, drawn with SplitMix64 from one stream per call: the same on every
        machine and numba version for a seed (``docs/simulator.md``).
    """
    nq = _count("n_queue", n_queue)
    count = _count("n_trials", n_trials)
    perms = np.empty((count, nq), dtype=np.int64)
    kernel.draw_permutations(nq, count, _seed(seed), perms)
    return perms


def run_trials(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    *,
    n_state: int = DEFAULT_N_STATE,
    machine_procs: int = DEFAULT_MACHINE_PROCS,
    n_trials: int | None = None,
    permutations: np.ndarray | None = None,
    seed: int | None = None,
    tau_s: float = BSLD_TAU_S,
) -> TrialResult:
    """Simulate trials of the tuple (S, Q): S in its order, then Q in each trial's order.

    Each trial places the jobs one after the other by strict list scheduling with their actual
    run times: a job starts at the first instant at which it has been submitted, the previous
    job of the list has started and enough processors are free. No job ever passes another.

    Parameters
    ----------
    submit_s, procs, run_s
        One value per job of the tuple: submit time (s, finite; only differences matter, the
        study takes them relative to the tuple's first job), processors (integers in
        1..machine_procs), actual run time (s, > 0). The first ``n_state`` jobs are S, in their
        list order; the others are Q, whose order here is the one of the indices.
    n_state
        |S|, in 0..n-1 (default 16).
    machine_procs
        Processors of the machine (default 256).
    n_trials, seed
        Draw ``n_trials`` permutations of Q from ``seed`` (:func:`trial_permutations`).
    permutations
        Or give them: an integer array (T, |Q|) whose rows are permutations of 0..|Q|-1. Exactly
        one of ``n_trials`` and ``permutations``; ``seed`` goes with ``n_trials`` only.
    tau_s
        τ of the bounded slowdown (s, > 0; default 10 s, the authors' ``TAO``).

    Returns
    -------
    TrialResult
        Per trial: the AVEbsld over Q's jobs only,
        ``mean_t max((start_t − submit_t + run_t) / max(run_t, τ), 1)``, and the first Q job.
        The same for the same inputs and seed, on any machine.

    Raises
    ------
    ConfigurationError
        A bad argument, named: a job that does not fit the machine, ``n_state`` leaving Q
        empty, a run time <= 0, rows that are not permutations, a missing seed ...
    """
    submit, procs_i, run, ns, m = _jobs(submit_s, procs, run_s, n_state, machine_procs)
    tau = _tau(tau_s)
    nq = submit.shape[0] - ns
    if (n_trials is None) == (permutations is None):
        raise ConfigurationError(
            "give exactly one of n_trials (with seed) and permutations, got "
            + ("both" if n_trials is not None else "neither")
        )
    first = None
    if permutations is not None:
        if seed is not None:
            raise ConfigurationError("seed goes with n_trials; permutations were given instead")
        perms = _permutations(permutations, nq)
        avebsld = np.empty(perms.shape[0])
        first = np.empty(perms.shape[0], dtype=np.int64)
        kernel.trials_given(submit, procs_i, run, ns, m, tau, perms, avebsld, first)
    else:
        count = _count("n_trials", n_trials)
        if seed is None:
            raise ConfigurationError("seed is required with n_trials (trials are reproducible)")
        avebsld = np.empty(count)
        first = np.empty(count, dtype=np.int64)
        kernel.trials_drawn(submit, procs_i, run, ns, m, tau, _seed(seed), avebsld, first)
    return TrialResult(avebsld=avebsld, first_job=first, n_queue=nq)


def trial_scores(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    *,
    n_state: int = DEFAULT_N_STATE,
    machine_procs: int = DEFAULT_MACHINE_PROCS,
    n_trials: int,
    seed: int,
    tau_s: float = BSLD_TAU_S,
) -> np.ndarray:
    """The score of each job of Q from ``n_trials`` random trials (eq. 3).

    Parameters
    ----------
    submit_s, procs, run_s, n_state, machine_procs, tau_s
        As :func:`run_trials`.
    n_trials
        T, the number of trials (>= 1); the published study used 256,000 per tuple.
    seed
        Integer in 0..2**64-1.

    Returns
    -------
    np.ndarray
        float64 (|Q|,) in Q's given order: ``score(t)`` = Σ AVEbsld of the trials whose first Q
        job is t / Σ AVEbsld of all trials. The scores sum to 1; low is good (t started first
        leads to low slowdowns). NaN for a job never drawn first (:func:`scores_from_trials`).
        With uniform permutations each score is (1/|Q|)·E[AVEbsld | t first] / E[AVEbsld] in
        the limit.
    """
    result = run_trials(
        submit_s, procs, run_s, n_state=n_state, machine_procs=machine_procs,
        n_trials=n_trials, seed=seed, tau_s=tau_s,
    )  # fmt: skip
    return result.scores()
