"""How many trials a tuple's scores need: the spread of independent score vectors.

For each trial count T, :func:`score_convergence` draws ``repetitions`` independent score
vectors of one tuple (:func:`scheduler.sim.trials.trial_scores`, each with its own seed) and
measures how much they disagree, relative to the scores themselves. The published study chose
256,000 trials per tuple, where its normalised standard deviation had fallen to about 0.02.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError
from scheduler.sim.trials import (
    DEFAULT_MACHINE_PROCS,
    DEFAULT_N_STATE,
    MAX_SEED,
    trial_scores,
)

__all__ = ["repetition_seeds", "score_convergence"]


def repetition_seeds(seed: int, trials: int, repetitions: int) -> list[int]:
    """The seeds of the ``repetitions`` score vectors at trial count ``trials``.

    ``numpy.random.SeedSequence(seed, spawn_key=(trials, r))`` for r = 0..repetitions-1, one
    64-bit word each: independent streams for every (T, r), and the same seeds whatever other
    trial counts are asked for.
    """
    return [
        int(np.random.SeedSequence(seed, spawn_key=(trials, r)).generate_state(1, np.uint64)[0])
        for r in range(repetitions)
    ]


def _positive_int(name: str, value: object) -> int:
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < 1:
        raise ConfigurationError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def score_convergence(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    *,
    trial_counts: Sequence[int],
    repetitions: int = 10,
    seed: int,
    n_state: int = DEFAULT_N_STATE,
    machine_procs: int = DEFAULT_MACHINE_PROCS,
    tau_s: float = BSLD_TAU_S,
) -> pl.DataFrame:
    """The normalised standard deviation of a tuple's scores against the number of trials.

    Parameters
    ----------
    submit_s, procs, run_s, n_state, machine_procs, tau_s
        The tuple, as :func:`scheduler.sim.trials.run_trials`.
    trial_counts
        The trial counts T to measure (each >= 1), e.g. 1,000 ... 256,000.
    repetitions
        Independent score vectors per T (>= 2: a standard deviation needs two).
    seed
        Integer in 0..2**64-1; the repetitions' seeds are :func:`repetition_seeds`.

    Returns
    -------
    pl.DataFrame
        One row per T, in the given order:

        - ``trials`` (T) and ``repetitions`` (R);
        - ``normalised_std``: the mean over Q's jobs t of ``std_r(score_t) / mean_r(score_t)``
          (sample standard deviation, ddof = 1, over the R vectors): the coefficient of
          variation of a job's score, averaged over the jobs. Each job's spread is taken
          relative to its own score because the scores' scale is 1/|Q| and the regression that
          follows fits their values job by job; the mean over jobs gives one number per T;
        - ``max_normalised_std``: the largest of the per-job ratios (the worst job);
        - ``unscored_jobs``: jobs left out of both because some repetition never drew them
          first (their score is NaN); 0 except for tiny T.

        The spread of a mean over T trials falls as 1/sqrt(T): quadrupling T halves it.
    """
    counts = [_positive_int("trial_counts", t) for t in trial_counts]
    if not counts:
        raise ConfigurationError("trial_counts must hold at least one trial count")
    reps = _positive_int("repetitions", repetitions)
    if reps < 2:
        raise ConfigurationError(f"repetitions must be >= 2 (a standard deviation), got {reps}")
    if (
        not isinstance(seed, int | np.integer)
        or isinstance(seed, bool)
        or not (0 <= seed <= MAX_SEED)
    ):
        raise ConfigurationError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
    rows = []
    for trials in counts:
        scores = np.vstack(
            [
                trial_scores(
                    submit_s,
                    procs,
                    run_s,
                    n_state=n_state,
                    machine_procs=machine_procs,
                    n_trials=trials,
                    seed=rep_seed,
                    tau_s=tau_s,
                )
                for rep_seed in repetition_seeds(int(seed), trials, reps)
            ]
        )
        scored = ~np.isnan(scores).any(axis=0)
        ratio = scores[:, scored].std(axis=0, ddof=1) / scores[:, scored].mean(axis=0)
        rows.append(
            {
                "trials": trials,
                "repetitions": reps,
                "normalised_std": float(ratio.mean()) if ratio.size else float("nan"),
                "max_normalised_std": float(ratio.max()) if ratio.size else float("nan"),
                "unscored_jobs": int((~scored).sum()),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "trials": pl.Int64,
            "repetitions": pl.Int64,
            "normalised_std": pl.Float64,
            "max_normalised_std": pl.Float64,
            "unscored_jobs": pl.Int64,
        },
    )
