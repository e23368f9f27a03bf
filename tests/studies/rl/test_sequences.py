"""The rl study's runs: a bandit with one arm is that policy, RLScheduler's scores as a key of
schedlab's EASY, and every mode on the same sequences."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from scheduler import simulate_arrays
from scheduler.sim.rlscheduler import rls_keys, rls_workload, run_rls_sequence
from scheduler.studies.rl.online import bandit_schedule
from scheduler.studies.rl.sequences import score_ranks, sequence_runs
from scheduler.traces.swf import read_swf

LUBLIN = Path(__file__).resolve().parents[3] / "resources" / "Lublin-256.swf.gz"


@pytest.fixture(scope="module")
def lublin():
    return rls_workload(read_swf(LUBLIN), "Lublin-256")


@pytest.mark.parametrize("backfill", [True, False])
def test_a_bandit_with_one_arm_is_that_policy(lublin, backfill: bool) -> None:
    sl = slice(500, 800)
    arrays = (lublin.submit_s[sl], lublin.procs[sl], lublin.run_s[sl],
              lublin.estimate_s[sl], lublin.max_procs)  # fmt: skip
    starts, chosen = bandit_schedule(*arrays, policies=["SPF"], spec="ucb", period_s=3600.0,
                                     backfill=backfill, rng=np.random.default_rng(1))  # fmt: skip
    want = simulate_arrays(*arrays, primary="SPF", backfill="FCFS" if backfill else None)
    assert np.array_equal(starts, want) and set(chosen) == {"SPF"} and len(chosen) > 10


def test_score_ranks_order_as_the_two_row_keys() -> None:
    keys = np.array([[2.0, 1.0, 2.0, 1.0, np.nan], [5.0, 7.0, 3.0, 7.0, 0.0]])
    assert score_ranks(keys).tolist() == [3.0, 1.0, 2.0, 1.0, 4.0]


def test_the_modes_on_the_same_sequences(lublin) -> None:
    runs = sequence_runs(lublin, [300, 2000], 256, heuristics=["FCFS", "SJF"],
                         policies=["FCFS", "SPF"], backfill=[False, True], bandits=["ucb"],
                         ablation=True)  # fmt: skip
    counts = {(row["mode"], row["backfill"]): row["len"]
              for row in runs.group_by("mode", "backfill").len().iter_rows(named=True)}
    assert counts == {
        ("compatible", False): 4, ("compatible", True): 4,
        ("compatible+easy-backfill", True): 4,
        ("easy", False): 6, ("easy", True): 6,
        ("easy+compatible-scores", False): 4, ("easy+compatible-scores", True): 4,
    }  # fmt: skip
    # without backfilling, FCFS is one schedule in every mode; SJF committed (compatible) is
    # not the same as SJF re-chosen at every decision (easy with its scores)
    fcfs = runs.filter((pl.col("policy") == "FCFS") & ~pl.col("backfill"))
    assert fcfs.group_by("sequence").agg(pl.col("avg_bsld").n_unique())["avg_bsld"].max() == 1
    sjf = runs.filter((pl.col("policy") == "SJF") & ~pl.col("backfill")).sort("sequence")
    compat = sjf.filter(pl.col("mode") == "compatible")["avg_bsld"].to_numpy()
    easy = sjf.filter(pl.col("mode") == "easy+compatible-scores")["avg_bsld"].to_numpy()
    assert not np.allclose(compat, easy)
    # the compatible mode is RLScheduler's scheduler itself
    starts = run_rls_sequence(lublin, 2000, 256, "SJF", True)
    assert rls_keys(lublin, 2000, 256, "SJF").shape == (2, 256) and np.isfinite(starts).all()
