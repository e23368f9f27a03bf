"""The convergence of trial scores (scheduler.studies.learned.convergence)."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.sim.trials import trial_scores
from scheduler.studies.learned.convergence import repetition_seeds, score_convergence

# |S| = 1, |Q| = 3 on 4 processors (the hand-worked tuple of tests/sim/test_trials.py)
TUPLE = {
    "submit_s": [0.0, 10.0, 20.0, 30.0], "procs": [3, 2, 1, 4], "run_s": [100.0, 50, 5, 20],
    "n_state": 1, "machine_procs": 4,
}  # fmt: skip


def test_the_normalised_std_is_the_mean_coefficient_of_variation() -> None:
    table = score_convergence(**TUPLE, trial_counts=[200], repetitions=4, seed=9)
    scores = np.vstack(
        [trial_scores(**TUPLE, n_trials=200, seed=s) for s in repetition_seeds(9, 200, 4)]
    )
    cv = scores.std(axis=0, ddof=1) / scores.mean(axis=0)
    row = table.row(0, named=True)
    assert row == {
        "trials": 200, "repetitions": 4, "normalised_std": pytest.approx(cv.mean()),
        "max_normalised_std": pytest.approx(cv.max()), "unscored_jobs": 0,
    }  # fmt: skip


def test_sixteen_times_the_trials_quarter_the_spread() -> None:
    table = score_convergence(**TUPLE, trial_counts=[250, 4000], repetitions=10, seed=1)
    few, many = table["normalised_std"].to_list()
    assert 2.0 < few / many < 8.0  # 1/sqrt(16) = 1/4, with the noise of 10 repetitions


def test_a_job_missing_from_a_repetition_is_left_out() -> None:
    # one trial per repetition scores one job only: every job is NaN in some repetition
    row = score_convergence(**TUPLE, trial_counts=[1], repetitions=5, seed=3).row(0, named=True)
    assert row["unscored_jobs"] == 3
    assert np.isnan(row["normalised_std"])


def test_seeds_are_distinct_and_reproducible() -> None:
    seeds = repetition_seeds(5, 1000, 10)
    assert len(set(seeds)) == 10
    assert seeds == repetition_seeds(5, 1000, 10)
    assert set(seeds).isdisjoint(repetition_seeds(5, 4000, 10))
    again = score_convergence(**TUPLE, trial_counts=[50], repetitions=3, seed=5)
    assert again.equals(score_convergence(**TUPLE, trial_counts=[50], repetitions=3, seed=5))


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"repetitions": 1}, "repetitions must be >= 2"),
        ({"trial_counts": []}, "at least one trial count"),
        ({"trial_counts": [100, 0]}, "trial_counts must be an integer >= 1"),
        ({"seed": -2}, "seed must be an integer"),
    ],
)
def test_bad_input_is_named(change: dict, match: str) -> None:
    options = {**TUPLE, "trial_counts": [10], "repetitions": 3, "seed": 1, **change}
    with pytest.raises(ConfigurationError, match=match):
        score_convergence(**options)
