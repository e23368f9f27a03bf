"""θ chosen online (scheduler.studies.redirect.online): a single arm is the fixed-θ run, the
runs are deterministic, the period cost is the mean bounded slowdown of the jobs that finished
in the period, and the comparison table (stats.online_table) by hand."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from scheduler.sim.redirection import simulate_redirect_arrays
from scheduler.studies.redirect.online import online_rng, online_theta_run
from scheduler.studies.redirect.stats import GRID_COLUMNS, ONLINE_COLUMNS, online_table

DAY_S = 86400.0
M = 64


def _jobs(seed: int = 3, n: int = 400) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.uniform(0, 5 * DAY_S, n)).round()
    procs = rng.integers(1, 40, n).astype(np.float64)
    run = rng.uniform(60, 8 * 3600, n).round()
    estimate = run * rng.uniform(1, 3, n).round(1)
    return submit, procs, run, estimate


def _run(selector: str, thetas=(5.0, 20.0, 80.0), seed: int = 1, balance: bool = False):
    submit, procs, run, estimate = _jobs()
    return online_theta_run(
        submit, procs, run, estimate, M, alpha=0.2, thetas=thetas, selector=selector,
        rng=online_rng(seed, "L", 0, 0.2), start_s=0.0, period_s=DAY_S, tau_s=60.0,
        balance=balance,
    )  # fmt: skip


@pytest.mark.parametrize("selector", ["bandit(eps=0.1)", "ucb", "thompson"])
@pytest.mark.parametrize("balance", [False, True])
def test_a_single_arm_is_the_fixed_theta_run(selector: str, balance: bool) -> None:
    submit, procs, run, estimate = _jobs()
    online = _run(selector, thetas=(20.0,), balance=balance)
    fixed = simulate_redirect_arrays(submit, procs, run, estimate, M, alpha=0.2, theta=20.0,
                                     balance=balance)  # fmt: skip
    assert online.thetas == [20.0] * len(online.history) and len(online.history) >= 5
    assert fixed.redirections > 0
    np.testing.assert_array_equal(online.simulation.start_s, fixed.start_s)
    np.testing.assert_array_equal(online.simulation.wasted_proc_s, fixed.wasted_proc_s)
    assert online.simulation.redirections == fixed.redirections


def test_runs_are_deterministic_and_the_seed_matters() -> None:
    first, again = _run("bandit(eps=0.5)"), _run("bandit(eps=0.5)")
    assert first.thetas == again.thetas
    np.testing.assert_array_equal(first.simulation.start_s, again.simulation.start_s)
    others = [_run("bandit(eps=0.5)", seed=seed).thetas for seed in range(2, 8)]
    assert any(path != first.thetas for path in others)
    assert online_rng(1, "L", 0, 0.2).random() == online_rng(1, "L", 0, 0.2).random()
    assert online_rng(1, "L", 0, 0.2).random() != online_rng(1, "L", 1, 0.2).random()


def test_period_costs_are_the_mean_bsld_of_the_jobs_finished_in_the_period() -> None:
    online = _run("ucb")
    submit, _, run, _ = _jobs()
    start = online.simulation.start_s
    end = start + run
    bsld = np.maximum((start - submit + run) / np.maximum(run, 60.0), 1.0)
    # untried arms first, in arm order
    assert online.thetas[:3] == [5.0, 20.0, 80.0]
    for entry in online.history:
        low = entry["period"] * DAY_S
        finished = (end >= low) & (end < low + DAY_S)
        assert entry["jobs"] == int(finished.sum())
        if entry["jobs"]:
            assert entry["cost"] == pytest.approx(bsld[finished].mean())
        else:
            assert math.isnan(entry["cost"])
    # every job is counted once, and the run goes on until the last one finished
    assert sum(entry["jobs"] for entry in online.history) == submit.size
    assert len(online.history) == int(end.max() // DAY_S) + 1


def _row(week: int, split: str, alpha: float, theta: float, avg: float) -> dict:
    return {"trace": "L", "week": week, "split": split, "alpha": alpha, "theta": theta,
            "balance": False, "jobs": 10, "avg_bsld": avg, "max_bsld": 2 * avg,
            "avg_wait_s": 1.0, "utilisation": 0.5, "utilisation_with_waste": 0.5,
            "redirections": 3, "wasted_proc_s": 0.0}  # fmt: skip


def test_online_table_by_hand() -> None:
    splits = ["train", "train", "test", "test"]
    # baseline 10; θ = 5 is best on the training weeks (8 < 9), θ = 20 on the test weeks
    # (9 < 10, 11)
    grid = [_row(w, s, 0.0, math.inf, 10.0) for w, s in enumerate(splits)]
    grid += [_row(w, s, 0.1, 5.0, 8.0 + w) for w, s in enumerate(splits)]
    grid += [_row(w, s, 0.1, 20.0, 9.0) for w, s in enumerate(splits)]
    online = [{**_row(w, s, 0.1, math.nan, 7.0 + w), "selector": "ucb", "periods": 8,
               "theta_path": "5,20"} for w, s in enumerate(splits)]  # fmt: skip
    table = online_table(pl.DataFrame(grid, schema=GRID_COLUMNS),
                         pl.DataFrame(online, schema=ONLINE_COLUMNS))  # fmt: skip
    row = table.row(0, named=True)
    assert table.height == 1 and row["selector"] == "ucb" and row["test_weeks"] == 2
    assert row["online_median_ratio_avg_bsld"] == pytest.approx((0.9 + 1.0) / 2)
    assert row["trained_theta"] == 5.0
    assert row["trained_median_ratio_avg_bsld"] == pytest.approx((1.0 + 1.1) / 2)
    assert row["hindsight_theta"] == 20.0
    assert row["hindsight_median_ratio_avg_bsld"] == pytest.approx(0.9)
