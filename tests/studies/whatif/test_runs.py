"""The what-if study's measures and simulations (scheduler.studies.whatif.measures, runs):
hand-worked figures, and every scheduler kind equal to the engine it names, job by job."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from scheduler.sim.conservative import simulate_conservative_arrays
from scheduler.sim.engine import simulate_arrays
from scheduler.sim.metrics import jain_index
from scheduler.studies.whatif.measures import (
    group_table,
    size_class_labels,
    size_classes,
    week_figures,
)
from scheduler.studies.whatif.runs import (
    bootstrap_figures,
    resampled_weeks,
    simulate_log,
    simulate_weeks,
)
from scheduler.studies.whatif.schedulers import Scheduler, policy_scheduler
from scheduler.traces.site import synthetic_site

M = 64


@pytest.fixture(scope="module")
def site() -> pl.DataFrame:
    return synthetic_site(4000, machine_procs=M, users=5, accounts=["a", "b"], load=0.4, seed=3)


def test_jain_index() -> None:
    assert jain_index(np.array([2.0, 2.0, 2.0])) == 1.0
    assert jain_index(np.array([0.0, 0.0])) == 1.0
    assert jain_index(np.array([1.0, 0.0, 0.0, 0.0])) == pytest.approx(0.25)
    assert jain_index(np.array([1.0, 3.0])) == pytest.approx(16 / 20)
    assert math.isnan(jain_index(np.array([])))
    with pytest.raises(ValueError, match=">= 0"):
        jain_index(np.array([-1.0]))


def test_size_classes() -> None:
    assert size_class_labels([1, 8, 32]) == ["1", "2-8", "9-32", ">32"]
    assert size_classes(np.array([1, 2, 8, 9, 32, 33]), [1, 8, 32]).tolist() == [0, 1, 1, 2, 2, 3]


def hand_jobs() -> pl.DataFrame:
    # week 0: three jobs of users 1, 1, 2 (accounts x, x, y); week 1: one job of user 2
    return pl.DataFrame(
        {
            "week_index": [0, 0, 0, 1],
            "job_id": [1, 2, 3, 1],
            "user_id": [1, 1, 2, 2],
            "account": ["x", "x", "y", "y"],
            "procs": [1, 4, 2, 2],
            "submit_s": [0.0, 0.0, 100.0, 50.0],
            "run_s": [100.0, 200.0, 5.0, 10.0],
            "wait_s": [0.0, 100.0, 200.0, 0.0],
        }
    )


def test_week_figures_by_hand() -> None:
    weeks = week_figures(hand_jobs(), machine_procs=4)
    first = weeks.row(0, named=True)
    assert first["jobs"] == 3 and first["avg_wait_s"] == pytest.approx(100.0)
    assert first["median_wait_s"] == 100.0 and first["max_wait_s"] == 200.0
    assert first["p90_wait_s"] == pytest.approx(180.0)  # linear: 100 + 0.8 * 100
    # users' mean waits 50 and 200: Jain (250)^2 / (2 * (2500 + 40000))
    assert first["jain_users"] == pytest.approx(250**2 / (2 * 42500))
    # busy 1*100 + 4*200 + 2*5 processor-seconds over 4 processors x makespan 305 s
    assert first["utilisation"] == pytest.approx(910 / (4 * 305))
    assert weeks.row(1, named=True)["avg_wait_s"] == 0.0


def test_group_table_by_hand() -> None:
    table = group_table(hand_jobs(), size_edges=[1, 2], shares={"x": 3}, week_s=250.0)
    accounts = {
        r["group"]: r for r in table.filter(pl.col("scope") == "account").iter_rows(named=True)
    }
    # delivered inside [0, 250): x: 1*100 + 4*(250-100) = 700; y: job 3 starts at 300, after
    # the window, so only week 1's 2*10 = 20
    assert accounts["x"]["usage_share"] == pytest.approx(700 / 720)
    assert accounts["y"]["usage_share"] == pytest.approx(20 / 720)
    assert accounts["x"]["configured_share"] == pytest.approx(0.75)  # y has the default 1
    sizes = table.filter(pl.col("scope") == "size")
    assert sizes["group"].to_list() == ["1", "2", ">2"]
    assert sizes["jobs"].to_list() == [1, 2, 1] and sizes["mean_wait_s"][1] == 100.0
    users = table.filter(pl.col("scope") == "user")
    assert users["group"].to_list() == ["1", "2"] and users["mean_wait_s"].to_list() == [
        50.0,
        100.0,
    ]


def test_site_has_users_accounts_estimates_and_its_load(site: pl.DataFrame) -> None:
    assert set(site["account"]) == {"a", "b"} and site["user_id"].n_unique() == 5
    assert (site["req_time_s"] >= site["run_s"]).all()
    span = site["submit_s"].max() - site["submit_s"].min()
    offered = (site["run_s"] * site["alloc_procs"]).sum() / (span * M)
    assert offered == pytest.approx(0.4, rel=0.01)
    again = synthetic_site(4000, machine_procs=M, users=5, accounts=["a", "b"], load=0.4, seed=3)
    assert again.equals(site)


@pytest.mark.parametrize("label", ["EASY-FCFS-FCFS", "EASY-SPF-LQF@2h", "conservative-SPF"])
def test_weeks_equal_the_engine_job_by_job(site: pl.DataFrame, label: str) -> None:
    """The degenerate settings: a policy scheduler is the engine it names, week by week."""
    scheduler = policy_scheduler(label, "k")
    weeks = resampled_weeks(site, 2, seed=1, site="s")
    schedule = simulate_weeks(scheduler, weeks, M)
    for week in (0, 1):
        jobs = weeks.filter(pl.col("week_index") == week).sort("submit_s", "job_id")
        args = (
            jobs["submit_s"].to_numpy().astype(float),
            jobs["alloc_procs"].to_numpy().astype(float),
            jobs["run_s"].to_numpy().astype(float),
            jobs["req_time_s"].to_numpy().astype(float),
            M,
        )
        if scheduler.backfilling == "easy":
            start = simulate_arrays(
                *args,
                primary=scheduler.primary,
                backfill=scheduler.backfill,
                threshold_s=scheduler.threshold_s,
                job_id=jobs["job_id"].to_numpy().astype(float),
            )
        else:
            start = simulate_conservative_arrays(
                *args, primary=scheduler.primary, job_id=jobs["job_id"].to_numpy().astype(float)
            ).start_s
        got = schedule.filter(pl.col("week_index") == week)
        np.testing.assert_array_equal(got["wait_s"].to_numpy(), start - args[0])


def test_multifactor_without_weights_is_fcfs_conservative(site: pl.DataFrame) -> None:
    """Slurm's multifactor priority with every weight 0 orders by submission: conservative
    FCFS under the same limits, job by job."""
    limits = {
        "depth": None,
        "bf_window_s": 86400.0,
        "bf_resolution_s": 60.0,
        "bf_interval_s": 30.0,
        "bf_max_job_test": 500,
        "default_queue_depth": 100,
        "node_procs": None,
    }
    flat = Scheduler(
        "conservative",
        "multifactor",
        None,
        math.inf,
        {"limits": limits, "priority": {"account_shares": {"a": 5}}},
    )
    fcfs = Scheduler("conservative", "FCFS", None, math.inf, {"limits": limits, "priority": None})
    weeks = resampled_weeks(site, 1, seed=2, site="s")
    a, b = simulate_weeks(flat, weeks, M), simulate_weeks(fcfs, weeks, M)
    np.testing.assert_array_equal(a["wait_s"].to_numpy(), b["wait_s"].to_numpy())


def test_log_replay_and_bootstrap_are_seeded(site: pl.DataFrame) -> None:
    scheduler = policy_scheduler("EASY-FCFS-FCFS", "k")
    log = simulate_log(scheduler, site, M)
    assert log.height == site.height and (log["wait_s"] >= 0).all()
    assert log["submit_s"].min() == 0.0 and log["week_index"].max() >= 2
    first = bootstrap_figures(scheduler, site, M, replicates=[0, 1], weeks=2, seed=5, site="s")
    alone = bootstrap_figures(scheduler, site, M, replicates=[1], weeks=2, seed=5, site="s")
    assert first.height == 2 and first.row(1) == alone.row(0)
    assert first["source_weeks"][0] >= 2
