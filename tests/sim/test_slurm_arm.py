"""Slurm's scheduler as an arm of a shared, resumable simulation (scheduler.sim.slurm_arm):
run period after period alone it is one multifactor run job for job; after EASY ran the machine
its priority plugin's catch-up records what the compiled loop records watching the same starts
and ends; mixed runs keep the machine's invariants and are deterministic."""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import pytest

from scheduler.sim import _kernel as kernel
from scheduler.sim import _multifactor_kernel as mkernel
from scheduler.sim.conservative import simulate_conservative_arrays
from scheduler.sim.engine import Simulation
from scheduler.sim.multifactor import MULTIFACTOR, JobAttributes, MultifactorPriority
from scheduler.sim.slurm_arm import MultifactorArm

M = 64
HOUR = 3600.0
#: Fair-share dominant, age and size too; decay and ticks short enough to act within the runs.
PRIORITY = MultifactorPriority(
    weight_age=1000, weight_fairshare=10000, weight_job_size=500, max_age_s=6 * HOUR,
    decay_half_life_s=4 * HOUR, calc_period_s=300.0,
)  # fmt: skip
LIMITS = {"bf_window_s": 12 * HOUR, "bf_resolution_s": 60.0, "bf_interval_s": 30.0,
          "bf_max_job_test": 50, "default_queue_depth": 20}  # fmt: skip


def workload(seed: int, n: int = 400):
    """A busy machine: ``n`` jobs of five users over about two days (submit, procs, run,
    estimate, job id, attributes)."""
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.uniform(0, 2 * 86400.0, n)).round()
    procs = rng.integers(1, M + 1, n).astype(np.float64)
    run = rng.uniform(60, 6 * HOUR, n).round()
    estimate = np.minimum(run * rng.uniform(1.0, 3.0, n), 12 * HOUR).round()
    users = rng.integers(0, 5, n).astype(str)
    attrs = JobAttributes(users, np.full(n, "a", dtype=object), np.full(n, "p", dtype=object),
                          np.full(n, "normal", dtype=object), submit.copy())  # fmt: skip
    return submit, procs, run, estimate, np.arange(1, n + 1, dtype=np.float64), attrs


def machine(data) -> Simulation:
    submit, procs, run, estimate, ids, _ = data
    return Simulation(submit, procs, run, estimate, M, job_id=ids)


def arm(sim: Simulation, data, priority: MultifactorPriority = PRIORITY) -> MultifactorArm:
    return MultifactorArm(sim, priority, data[5], **LIMITS)


#: The same weights under Fair Tree (Slurm's default algorithm).
FAIR_TREE = dataclasses.replace(PRIORITY, fair_tree=True)


@pytest.mark.parametrize(
    ("period_s", "threshold_s", "priority"),
    [(3600.0, math.inf, PRIORITY), (86400.0 / 3, math.inf, PRIORITY),
     (7 * 86400.0, math.inf, PRIORITY), (3600.0, 8 * HOUR, PRIORITY),
     (86400.0 / 3, 8 * HOUR, PRIORITY), (3600.0, math.inf, FAIR_TREE)],
)  # fmt: skip
def test_alone_period_after_period_is_one_multifactor_run(period_s, threshold_s, priority):
    data = workload(1)
    submit, procs, run, estimate, ids, attrs = data
    whole = simulate_conservative_arrays(
        submit, procs, run, estimate, M, primary=MULTIFACTOR, threshold_s=threshold_s,
        job_id=ids, priority=priority, attributes=attrs, **LIMITS,
    ).start_s  # fmt: skip
    sim = machine(data)
    slurm = arm(sim, data, priority)
    t = period_s
    while not sim.done:
        slurm.run(t, threshold_s=threshold_s)
        t += period_s
    np.testing.assert_array_equal(sim.start_s, whole)
    assert slurm.replayed_ticks == 0  # nobody else ran the machine


@pytest.mark.parametrize(("t0", "t1", "priority"), [
    (0.0, 6 * HOUR, PRIORITY), (10 * HOUR, 30 * HOUR, PRIORITY),
    (20 * HOUR + 17, 20 * HOUR + 900, PRIORITY), (0.0, 6 * HOUR, FAIR_TREE),
    (10 * HOUR, 30 * HOUR, FAIR_TREE),
])  # fmt: skip
def test_catch_up_records_what_the_loop_records(t0, t1, priority):
    """The plugin's state at t0, brought to t1 by the catch-up over the starts and ends the
    loop made in [t0, t1), equals the loop's own state at t1: the usage bit for bit, the decay
    clock, and every waiting job's priority."""
    data = workload(2)
    sim = machine(data)
    slurm = arm(sim, data, priority)
    slurm.run(t0)
    before = copy.deepcopy(slurm.state)
    slurm.run(t1)
    ticks = before.catch_up(t0, t1, sim.istate, sim.iwork, sim.fwork)
    assert ticks == pytest.approx((t1 - t0) / 300.0, abs=1)
    for replayed, recorded in zip(before.usage(), slurm.state.usage(), strict=True):
        np.testing.assert_array_equal(replayed, recorded)
    queue = sim.iwork[kernel.QUEUE, : sim.istate[kernel.QLEN]]
    waiting = queue[sim.iwork[kernel.STATUS, queue] == kernel.WAITING]
    assert waiting.size > 10  # a queue whose order the priorities decide
    np.testing.assert_array_equal(before.keys[kernel.P_BASE, waiting],
                                  slurm.state.keys[kernel.P_BASE, waiting])  # fmt: skip
    assert before.mstate[mkernel.LAST_RAN] <= t1


def run_mixed(data, plan, period_s=4 * HOUR):
    """Periods in turn under the arms of ``plan`` (names: an EASY policy or multifactor)."""
    sim = machine(data)
    slurm = arm(sim, data)
    t, period = period_s, 0
    while not sim.done:
        name = plan[period % len(plan)]
        if name == MULTIFACTOR:
            slurm.run(t)
        else:
            sim.run(t, primary=name, backfill=name)
        t += period_s
        period += 1
    return sim, slurm


def test_mixed_runs_keep_the_machines_invariants_and_are_deterministic():
    data = workload(3)
    submit, procs, run, *_ = data
    sim, slurm = run_mixed(data, ["FCFS", MULTIFACTOR, "SPF", MULTIFACTOR, MULTIFACTOR])
    start = sim.start_s
    assert not np.isnan(start).any() and (start >= submit).all()
    events = np.concatenate([start, start + run])
    order = np.lexsort((np.r_[np.ones_like(start), -np.ones_like(start)], events))
    used = np.cumsum(np.r_[procs, -procs][order])
    assert used.max() <= M  # ends before starts at one instant
    assert slurm.replayed_ticks > 0
    again, _ = run_mixed(data, ["FCFS", MULTIFACTOR, "SPF", MULTIFACTOR, MULTIFACTOR])
    np.testing.assert_array_equal(again.start_s, start)
    # each arm matters: the mixed schedule is neither arm's alone
    fcfs, _ = run_mixed(data, ["FCFS"])
    slurm_alone, _ = run_mixed(data, [MULTIFACTOR])
    assert not np.array_equal(start, fcfs.start_s)
    assert not np.array_equal(start, slurm_alone.start_s)


def test_a_bad_time_is_refused():
    data = workload(4, n=20)
    with pytest.raises(ValueError, match="until_s"):
        arm(machine(data), data).run(float("nan"))
