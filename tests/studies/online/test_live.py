"""The live system of the online study (scheduler.studies.online.live) on real KTH-SP2 long
traces."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import scheduler
from scheduler.core.constants import WEEK_S
from scheduler.core.errors import ConfigurationError
from scheduler.sim.arrays import trace_arrays
from scheduler.sim.engine import Simulation
from scheduler.sim.multifactor import MULTIFACTOR
from scheduler.sim.slurm_arm import MultifactorArm
from scheduler.studies.common.slurm import conservative_kwargs, study_slurm, user_attributes
from scheduler.studies.online.live import (
    DAY_S,
    run_online,
    simulated_period_costs,
)
from scheduler.studies.online.long_traces import long_trace
from scheduler.studies.online.selectors import PeriodFeedback, Selector, make_selector
from scheduler.traces.filters import strong_filter
from scheduler.traces.resample import resample_weeks
from scheduler.traces.swf import read_swf

ROOT = Path(__file__).resolve().parents[3]
MACHINE = 100
THETA = 40 * 3600.0
POLICIES = ("FCFS", "SPF", "LEXP", "LQF")


class Scripted(Selector):
    """Plays a fixed list of policies (the last one forever) and records every feedback."""

    def __init__(self, script: list[str]) -> None:
        self.name = "scripted"
        self.needs_simulation = False
        self.policies = tuple(dict.fromkeys(script))
        self.history = []
        self.script = script
        self.feedback: list[PeriodFeedback] = []

    def choose(self, period: int) -> str:
        policy = self.script[min(period, len(self.script) - 1)]
        self.history.append({"period": period, "policy": policy})
        return policy

    def observe(self, period: int, feedback: PeriodFeedback) -> None:
        self.feedback.append(feedback)


@pytest.fixture(scope="module")
def filtered(kth_path) -> pl.DataFrame:
    return strong_filter(read_swf(kth_path))[0].jobs


@pytest.fixture(scope="module")
def table(filtered) -> pl.DataFrame:
    return long_trace(filtered, 0, weeks=6, seed=3, trace="KTH-SP2")


@pytest.fixture(scope="module")
def arrays(table):
    return trace_arrays(table, MACHINE)


def test_long_trace_lays_resampled_weeks_end_to_end(filtered, table) -> None:
    weeks = resample_weeks(filtered, range(6), seed=3, trace="KTH-SP2", split="long")
    assert table.height == weeks.height
    assert table["week_index"].unique().sort().to_list() == list(range(6))
    expected = weeks.select(
        "week_index",
        "source_job_id",
        (pl.col("submit_s") + pl.col("week_index") * WEEK_S).alias("expected"),
    )
    # a user-week may be drawn for two weeks: a job is (week, source job)
    joined = table.join(expected, on=["week_index", "source_job_id"])
    assert joined.height == table.height
    assert (joined["submit_s"] == joined["expected"]).all()
    assert table["job_id"].to_list() == list(range(1, table.height + 1))
    assert table["submit_s"].is_sorted()
    other = long_trace(filtered, 1, weeks=6, seed=3, trace="KTH-SP2")
    assert not other.equals(table)
    assert long_trace(filtered, 0, weeks=6, seed=3, trace="KTH-SP2").equals(table)


@pytest.mark.parametrize("threshold_backfill", [True, False])
def test_fixed_policy_run_equals_one_simulation(table, arrays, threshold_backfill) -> None:
    """The live system is EASY(P, P, Θ), backfilling in the thresholded order by default
    (Algorithm 2) or in P's order with ``threshold_backfill=False``."""
    selector = make_selector("fixed:SPF", POLICIES, rng=np.random.default_rng(0))
    options = {} if threshold_backfill else {"threshold_backfill": False}
    run = run_online(arrays, MACHINE, selector, period_s=DAY_S, threshold_s=THETA, **options)
    direct = scheduler.simulate(
        table, "SPF", "SPF", THETA, threshold_backfill=threshold_backfill, machine_procs=MACHINE
    )
    by_id = direct.jobs.sort("job_id")["start_s"].to_numpy()
    assert np.array_equal(run.start_s, by_id)
    assert run.total_wait_s == pytest.approx(float(direct.jobs["wait_s"].sum()), rel=1e-12)
    assert set(run.choices) == {"SPF"}


def test_thresholded_backfill_order_matters_on_a_loaded_long_trace(table, arrays) -> None:
    """At Θ = 2 h many jobs are overdue: the two backfill orders give different schedules."""
    runs = [
        run_online(arrays, MACHINE, Scripted(["SPF"]), period_s=DAY_S, threshold_s=7200.0,
                   threshold_backfill=flag).start_s
        for flag in (True, False)
    ]  # fmt: skip
    assert not np.array_equal(*runs)


def test_switching_mid_run_equals_the_two_halves_by_hand(arrays) -> None:
    """Policy LQF for 3 days, then SPF: the same as running the resumable simulation by hand."""
    selector = Scripted(["LQF", "LQF", "LQF", "SPF"])
    run = run_online(arrays, MACHINE, selector, period_s=DAY_S, threshold_s=THETA)
    by_hand = Simulation(
        arrays.submit_s, arrays.procs, arrays.run_s, arrays.estimate_s, MACHINE,
        job_id=arrays.job_id,
    )  # fmt: skip
    switch = arrays.submit_s[0] + 3 * DAY_S
    by_hand.run(switch, primary="LQF", backfill="LQF", threshold_s=THETA)
    by_hand.run(primary="SPF", backfill="SPF", threshold_s=THETA)
    assert np.array_equal(run.start_s, by_hand.start_s)
    only_lqf = run_online(arrays, MACHINE, Scripted(["LQF"]), period_s=DAY_S, threshold_s=THETA)
    assert not np.array_equal(run.start_s, only_lqf.start_s)  # the switch mattered


@pytest.fixture(scope="module")
def slurm():
    """The example site's slurm.conf: Slurm's limits and multifactor priority."""
    return study_slurm(str(ROOT / "config/slurm/multifactor.conf"), "online.slurm_conf")


def multifactor_direct(table, slurm, threshold_s=THETA):
    """Slurm's scheduler on the whole long trace in one run (its jobs have no group or
    partition: SWF's -1; one account)."""
    jobs = table.with_columns(group_id=pl.lit(-1), partition_id=pl.lit(-1))
    return scheduler.simulate_conservative(
        jobs, MULTIFACTOR, threshold_s, machine_procs=MACHINE, swf_account="single",
        **conservative_kwargs(slurm, MULTIFACTOR),
    )  # fmt: skip


def test_a_fixed_multifactor_arm_is_one_slurm_run(table, arrays, slurm) -> None:
    """The multifactor arm alone, period after period, is Slurm's scheduler over the whole
    long trace in one run, job for job."""
    run = run_online(arrays, MACHINE, Scripted([MULTIFACTOR]), period_s=DAY_S,
                     threshold_s=THETA, slurm=slurm)  # fmt: skip
    direct = multifactor_direct(table, slurm)
    assert np.array_equal(run.start_s, direct.jobs.sort("job_id")["start_s"].to_numpy())
    assert set(run.choices) == {MULTIFACTOR}


def test_switching_to_the_multifactor_arm_and_back(table, arrays, slurm) -> None:
    """LQF for 3 days, Slurm's scheduler for 10, then SPF: the same as the shared simulation
    driven by hand (the arm's fair-share counting the LQF days' jobs), and each switch
    matters."""
    script = ["LQF"] * 3 + [MULTIFACTOR] * 10 + ["SPF"]
    run = run_online(arrays, MACHINE, Scripted(script), period_s=DAY_S, threshold_s=THETA,
                     slurm=slurm)  # fmt: skip
    by_hand = Simulation(
        arrays.submit_s, arrays.procs, arrays.run_s, arrays.estimate_s, MACHINE,
        job_id=arrays.job_id,
    )  # fmt: skip
    arm = MultifactorArm(by_hand, attributes=user_attributes(arrays.user_id, arrays.submit_s),
                         **conservative_kwargs(slurm, MULTIFACTOR))  # fmt: skip
    t0 = arrays.submit_s[0]
    by_hand.run(t0 + 3 * DAY_S, primary="LQF", backfill="LQF", threshold_s=THETA,
                threshold_backfill=True)  # fmt: skip
    arm.run(t0 + 13 * DAY_S, threshold_s=THETA)
    by_hand.run(primary="SPF", backfill="SPF", threshold_s=THETA, threshold_backfill=True)
    assert np.array_equal(run.start_s, by_hand.start_s)
    assert arm.replayed_ticks > 0
    alone = run_online(arrays, MACHINE, Scripted(["LQF"] * 3 + ["SPF"]), period_s=DAY_S,
                       threshold_s=THETA)  # fmt: skip
    assert not np.array_equal(run.start_s, alone.start_s)


def test_multifactor_costs_simulate_each_period_alone(table, arrays, slurm) -> None:
    costs = simulated_period_costs(
        arrays, MACHINE, ("FCFS", MULTIFACTOR), period_s=DAY_S, threshold_s=THETA, slurm=slurm,
    )  # fmt: skip
    t0 = arrays.submit_s[0]
    for t in (0, 9):
        jobs = table.filter(
            (pl.col("submit_s") >= t0 + t * DAY_S) & (pl.col("submit_s") < t0 + (t + 1) * DAY_S)
        )
        expected = float(multifactor_direct(jobs, slurm).jobs["wait_s"].sum())
        assert costs[t, 1] == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert not np.allclose(costs[:, 0], costs[:, 1])
    with pytest.raises(ConfigurationError, match=r"needs a slurm\.conf"):
        simulated_period_costs(arrays, MACHINE, (MULTIFACTOR,), period_s=DAY_S, threshold_s=THETA)


def test_live_feedback_accounts_for_every_job_once(arrays) -> None:
    selector = Scripted(["FCFS", "LEXP", "SPF", "FCFS"])
    run = run_online(arrays, MACHINE, selector, period_s=DAY_S, threshold_s=THETA)
    waits = run.start_s - arrays.submit_s
    assert sum(f.live_jobs for f in selector.feedback) == arrays.jobs
    assert sum(f.live_wait_s for f in selector.feedback) == pytest.approx(waits.sum(), rel=1e-12)
    # period t reports exactly the jobs whose end falls in [t0 + t·Δ, t0 + (t+1)·Δ)
    ends = run.start_s + arrays.run_s
    t0 = arrays.submit_s[0]
    for t in (0, 5, 17):
        inside = (ends >= t0 + t * DAY_S) & (ends < t0 + (t + 1) * DAY_S)
        assert selector.feedback[t].live_jobs == int(inside.sum())
        assert selector.feedback[t].live_wait_s == pytest.approx(waits[inside].sum(), abs=1e-6)
    assert run.daily_finished_jobs[-1] == arrays.jobs
    assert run.daily_cumulative_wait_s[-1] == pytest.approx(waits.sum(), rel=1e-12)
    assert len(run.choices) == len(selector.feedback)


@pytest.mark.parametrize("threshold_backfill", [True, False])
def test_simulated_period_costs_simulate_each_period_alone(
    table, arrays, threshold_backfill
) -> None:
    costs = simulated_period_costs(
        arrays, MACHINE, POLICIES, period_s=DAY_S, threshold_s=THETA,
        threshold_backfill=threshold_backfill,
    )  # fmt: skip
    t0 = arrays.submit_s[0]
    assert costs.shape == (math.floor((arrays.submit_s[-1] - t0) / DAY_S) + 1, len(POLICIES))
    for t in (0, 9, costs.shape[0] - 1):
        jobs = table.filter(
            (pl.col("submit_s") >= t0 + t * DAY_S) & (pl.col("submit_s") < t0 + (t + 1) * DAY_S)
        )
        for k, policy in enumerate(POLICIES):
            expected = 0.0
            if jobs.height:
                result = scheduler.simulate(
                    jobs, policy, policy, THETA, threshold_backfill=threshold_backfill,
                    machine_procs=MACHINE,
                )  # fmt: skip
                expected = float(result.jobs["wait_s"].sum())
            assert costs[t, k] == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert (costs >= 0).all() and costs.sum() > 0


def test_full_selector_follows_the_cumulative_costs(arrays) -> None:
    costs = simulated_period_costs(arrays, MACHINE, POLICIES, period_s=DAY_S, threshold_s=THETA)
    selector = make_selector("full", POLICIES, rng=np.random.default_rng(1))
    run = run_online(arrays, MACHINE, selector, period_s=DAY_S, threshold_s=THETA, costs=costs)
    cumulative = np.cumsum(costs, axis=0)
    for t in range(1, min(len(run.choices), costs.shape[0])):
        assert run.choices[t] == POLICIES[int(np.argmin(cumulative[t - 1]))]


def test_bad_calls_are_refused(arrays) -> None:
    full = make_selector("full", POLICIES, rng=np.random.default_rng(1))
    with pytest.raises(ConfigurationError, match="needs the simulated period costs"):
        run_online(arrays, MACHINE, full, period_s=DAY_S)
    with pytest.raises(ConfigurationError, match="period_s"):
        run_online(arrays, MACHINE, Scripted(["FCFS"]), period_s=0.0)
