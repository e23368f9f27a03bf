"""Slurm's multifactor priority as the order of conservative backfilling (docs/simulator.md,
"Slurm's multifactor priority with fair-share").

Hand-worked schedules (expected priorities derived on paper from the doc's formulas, in the
comments) run on the compiled variant and on the literal reference
``support.naive_multifactor``; a hypothesis differential test compares the two job by job;
degenerate settings equal FCFS conservative backfilling, and with ``depth=1`` EASY.

Notation: "J1 u1 r0 q4 p100" = job 1 of user 1, submitted at 0, 4 processors, runs (and is
estimated) 100 s. Every job is in account "a" unless said.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.adapters import fast_simulation
from support.naive import NaiveJob
from support.naive_multifactor import Attrs, naive_multifactor
from support.workloads import workloads

from scheduler import ConfigurationError
from scheduler.sim import _multifactor_kernel as mkernel
from scheduler.sim._jobs import job_matrix
from scheduler.sim.conservative import simulate_conservative, simulate_conservative_arrays
from scheduler.sim.multifactor import (
    JobAttributes,
    MultifactorPriority,
    job_attributes,
    run_multifactor,
)

FIELDS = set(MultifactorPriority.__dataclass_fields__)


def job(job_id, submit, procs, run, est=None) -> NaiveJob:
    est = run if est is None else est
    return NaiveJob(job_id, float(submit), procs, float(run), float(est), float(est))


def attributes(jobs, attrs) -> JobAttributes:
    a = [attrs[j.job_id] for j in jobs]

    def texts(name):
        return np.array([getattr(x, name) for x in a], dtype=object)

    return JobAttributes(
        texts("user"), texts("account"), texts("partition"), texts("qos"),
        np.array([j.submit_s if x.eligible_s is None else x.eligible_s
                  for j, x in zip(jobs, a, strict=True)]),
    )  # fmt: skip


def run_fast(jobs, attrs, m, **kwargs):
    """(job_id -> start, job_id -> priority at start) of the compiled variant."""
    prio = MultifactorPriority(**{k: v for k, v in kwargs.items() if k in FIELDS})
    limits = {k: v for k, v in kwargs.items() if k not in FIELDS}
    if limits.get("threshold_s") is None:
        limits["threshold_s"] = math.inf
    out = simulate_conservative_arrays(
        np.array([j.submit_s for j in jobs]), np.array([j.procs for j in jobs]),
        np.array([j.run_s for j in jobs]), np.array([j.estimate_s for j in jobs]), m,
        requested_s=np.array([j.requested_s for j in jobs]),
        job_id=np.array([j.job_id for j in jobs]), primary="multifactor", priority=prio,
        attributes=attributes(jobs, attrs), **limits,
    )  # fmt: skip
    ids = [j.job_id for j in jobs]
    return (dict(zip(ids, out.start_s.tolist(), strict=True)),
            dict(zip(ids, out.priority.tolist(), strict=True)),
            dict(zip(ids, out.backfilled.tolist(), strict=True)))  # fmt: skip


def run_naive(jobs, attrs, m, **kwargs):
    results, prio = naive_multifactor(jobs, attrs, m, **kwargs)
    return ({i: r.start_s for i, r in results.items()}, prio,
            {i: r.backfilled for i, r in results.items()})  # fmt: skip


@pytest.fixture(params=["naive", "fast"])
def sim(request):
    return {"naive": run_naive, "fast": run_fast}[request.param]


def users(mapping) -> dict[int, Attrs]:
    return {i: Attrs(str(u), "a") for i, u in mapping.items()}


# -- hand-worked schedules ----------------------------------------------------------------------

# m=4, no decay, calc period 100 s, fair-share weight 1000. J1 u1 r0 q4 p100; J2 u1 r10 q4 p100;
# J3 u2 r20 q4 p100. Shares: account a alone (1/1), users 1 and 2 half each: shares_norm 0.5.
FS_JOBS = [job(1, 0, 4, 100), job(2, 10, 4, 100), job(3, 20, 4, 100)]


def test_fair_share_without_decay_reorders_two_users(sim):
    # t=0 first tick (records the time only). J1: no usage anywhere, UE 0, 2^0 -> 1000; starts.
    # J2 (t=10), J3 (t=20): 1000 each (ties: submit order, J2 first).
    # t=100: J1 ends: user 1 gets 100 s x 4 = 400 (decay factor 1). Tick: account a's UE =
    #   400/400 = 1. User 1: UA 1, UE = 1 + (1 - 1)/2 = 1 -> 2^-(1/0.5) = 0.25 -> 250.
    #   User 2: UA 0, UE = 0 + (1 - 0)/2 = 0.5 -> 2^-(0.5/0.5) = 0.5 -> 500. J3 starts (FCFS: J2).
    # t=200: J3 ends: user 2 gets 400. Tick: a's UE 1; user 1: UA 400/800 = 0.5,
    #   UE = 0.5 + 0.5/2 = 0.75 -> 2^-1.5 = 0.3536 -> 353. J2 starts.
    starts, prio, _ = sim(FS_JOBS, users({1: 1, 2: 1, 3: 2}), 4, weight_fairshare=1000,
                          decay_half_life_s=0, calc_period_s=100)  # fmt: skip
    assert starts == {1: 0, 2: 200, 3: 100}
    assert prio == {1: 1000, 2: math.floor(1000 * 2**-1.5), 3: 500}


def test_fair_share_decays_between_ticks(sim):
    # m=2, half-life 69.3 s: Slurm's per-second factor d = 1 - 0.693/69.3 (0.99); period 10 s.
    # J1 u1 r0 q2 p25; J2 u1 r1 q2 p10; J3 u2 r2 q2 p10.
    jobs = [job(1, 0, 2, 25), job(2, 1, 2, 10), job(3, 2, 2, 10)]
    d = 1 - 0.693 / 69.3
    # t=0: first tick. J1 1000, starts. J2, J3: 1000 (no usage yet).
    # t=10 tick: a's UE from the usage before this tick: 0. Decay (of zeros), then J1's new
    #   usage 10 x d^10 x 2. User 1: UA 1, UE = 1 + (0 - 1)/2 = 0.5 -> 500; user 2: UE 0 -> 1000.
    # t=20 tick: a's UE 1. User 1: UA 1, UE 1 -> 250; user 2: UE 0.5 -> 500.
    # t=25: J1 ends (usage 5 x d^5 x 2 since the tick at 20); J3 (500) starts before J2 (250).
    # t=30 tick: a's UE 1; decay d^10 of user 1's usage; J3's new usage since 25: 5 x d^5 x 2.
    u1 = (20 * d**10 * d**10 + 20 * d**10 + 10 * d**5) * d**10
    u2 = 10 * d**5
    ua = u1 / (u1 + u2)
    ue = ua + (1 - ua) / 2
    expected_j2 = math.floor(1000 * 2 ** -(ue / 0.5))
    assert 250 < expected_j2 < 500  # the decay and J3's usage moved user 1 up from 250
    # t=35: J3 ends; J2 starts with the priority of the tick at 30.
    starts, prio, _ = sim(jobs, users({1: 1, 2: 1, 3: 2}), 2, weight_fairshare=1000,
                          decay_half_life_s=69.3, calc_period_s=10)  # fmt: skip
    assert starts == {1: 0, 2: 35, 3: 25}
    assert prio == {1: 1000, 2: expected_j2, 3: 500}


def test_the_age_factor_is_capped_at_max_age(sim):
    # m=4, age weight 1000 with max age 100 s, job size weight 40 (favor large, a node per
    # processor: factor q/4), period 10. J1 r0 q4 p500; J2 r10 q2 p10; J3 r20 q3 p10.
    # t=500 (J1 ends, tick): both ages are past 100 s: factor 1 -> 1000 each. Size: J2 2/4 x 40
    # = 20, J3 30: J3 1030 first, starts (q3); J2 (q2) does not fit: reserved at 510.
    # Uncapped the older J2 would lead (age 490 vs 480 of 1000 s -> 510 vs 510, or more).
    jobs = [job(1, 0, 4, 500), job(2, 10, 2, 10), job(3, 20, 3, 10)]
    starts, prio, _ = sim(jobs, users({1: 1, 2: 1, 3: 1}), 4, weight_age=1000, max_age_s=100,
                          weight_job_size=40, calc_period_s=10)  # fmt: skip
    assert starts == {1: 0, 2: 510, 3: 500}
    # J1 at submission: age 0, size 4/4 x 40 = 40. J2 at the tick of 510: 1000 + 20.
    assert prio == {1: 40, 2: 1020, 3: 1030}


@pytest.mark.parametrize(("favor_small", "procs_per_node", "expected"), [
    # favor small, a node per processor: factor 1 - q/4. J2 q4 -> 0 -> priority 1 (Slurm's
    # floor); J3 q1 -> 75: J3 starts at 100, J2 waits for it (110).
    (True, None, ({1: 0, 2: 110, 3: 100}, {1: 1, 2: 1, 3: 75})),
    # two processors per node (2 nodes): J3: ((2 - 1)/2 + (4 - 1)/4)/2 = 0.625 -> 62.
    (True, 2, ({1: 0, 2: 110, 3: 100}, {1: 1, 2: 1, 3: 62})),
    # favor large: J2 q4 -> 100 starts at 100; J3 (q1) -> 25 after it, at 110.
    (False, None, ({1: 0, 2: 100, 3: 110}, {1: 100, 2: 100, 3: 25})),
])  # fmt: skip
def test_job_size_with_favor_small(sim, favor_small, procs_per_node, expected):
    # m=4, size weight 100 only. J1 r0 q4 p100; J2 r1 q4 p10; J3 r2 q1 p10.
    jobs = [job(1, 0, 4, 100), job(2, 1, 4, 10), job(3, 2, 1, 10)]
    starts, prio, _ = sim(jobs, users({1: 1, 2: 1, 3: 1}), 4, weight_job_size=100,
                          favor_small=favor_small, procs_per_node=procs_per_node)  # fmt: skip
    assert (starts, prio) == expected


def test_partition_and_qos_factors(sim):
    # m=1, partition weight 100, QOS weight 1000. Partition "hi" PriorityJobFactor 4, "lo" 1
    # (normalised by the largest: 1 and 0.25); QOS "high" priority 10, "normal" 0.
    # J1 r0 q1 p100 (lo, normal) -> 25; J2 r1 (lo, high) -> 25 + 1000; J3 r2 (hi, normal) -> 100.
    jobs = [job(1, 0, 1, 100), job(2, 1, 1, 10), job(3, 2, 1, 10)]
    attrs = {1: Attrs("1", "a", "lo"), 2: Attrs("1", "a", "lo", "high"), 3: Attrs("1", "a", "hi")}
    starts, prio, _ = sim(jobs, attrs, 1, weight_partition=100, weight_qos=1000,
                          partition_job_factor={"hi": 4, "lo": 1},
                          qos_priority={"high": 10})  # fmt: skip
    assert starts == {1: 0, 2: 100, 3: 110}
    assert prio == {1: 25, 2: 1025, 3: 100}


def test_fair_tree_ranks_users_by_level_fair_share(sim):
    """Fair Tree on FS_JOBS (m=4, no decay, ticks every 100 s, fair-share weight 1000, one
    account, users 1 and 2 with equal shares). t=0: nobody has usage, both users tied at rank
    2 of 2: factor 1.0, J1 (user 1) starts at 1000. t=100: J1 ends (400 processor-seconds for
    user 1), then the tick ranks user 2 (level fair-share 0.5 / 0 = inf) first, factor 2/2,
    user 1 (0.5 / 1) second, 1/2: J3 (1000) passes J2 (500). t=200: J3's 400 ties them again
    (both 0.5 / 0.5): J2 starts at 1000."""
    starts, prio, _ = sim(FS_JOBS, users({1: 1, 2: 1, 3: 2}), 4, weight_fairshare=1000,
                          decay_half_life_s=0.0, calc_period_s=100.0, fair_tree=True)  # fmt: skip
    assert starts == {1: 0, 2: 200, 3: 100}
    assert prio == {1: 1000, 2: 1000, 3: 1000}


@pytest.mark.parametrize(
    ("user_raw", "expected"),
    [
        # accounts x (level fair-share 0.5 / 0.25 = 2) before y (0.5 / 0.75); in y, user 3
        # (0.5 / 0 = inf) before user 2 (0.5 / 1): ranks 3, 2, 1 of 3
        ([100.0, 300.0, 0.0], [3 / 3, 1 / 3, 2 / 3]),
        # x and y tied (0.5 / 0.5): y's first user (3, inf) is tied with x's user and keeps
        # its rank 3; user 2 (0.5 / 1) gets rank 1 (two users counted before it)
        ([100.0, 100.0, 0.0], [3 / 3, 1 / 3, 3 / 3]),
    ],
)
def test_fair_tree_ranking_by_hand(user_raw, expected):
    """The compiled ranking alone: user associations x/1, y/2, y/3 (accounts x, y, equal
    shares at both levels)."""
    user_acct = np.array([0, 1, 1])
    raw = np.array(user_raw)
    acct_raw = np.array([raw[0], raw[1] + raw[2]])
    fs = np.zeros(3)
    mkernel.fair_tree(user_acct, np.array([1.0, 0.5, 0.5]), np.array([0.5, 0.5]), raw, acct_raw,
                      np.array([acct_raw.sum()]), fs)  # fmt: skip
    np.testing.assert_allclose(fs, expected, rtol=0, atol=1e-15)


# -- the compiled variant against the reference -------------------------------------------------

SETTINGS = st.fixed_dictionaries({
    "weight_age": st.sampled_from([0, 1000, 100_000]),
    "weight_fairshare": st.sampled_from([0, 1000, 100_000]),
    "weight_job_size": st.sampled_from([0, 1000]),
    "weight_partition": st.sampled_from([0, 500]),
    "weight_qos": st.sampled_from([0, 700]),
    "max_age_s": st.sampled_from([0.0, 30.0, 7 * 86400.0]),
    "decay_half_life_s": st.sampled_from([0.0, 20.0, 300.0]),
    "calc_period_s": st.sampled_from([1.0, 7.0, 30.0, 300.0]),
    "favor_small": st.booleans(),
    "dampening": st.sampled_from([1, 3]),
    "fair_tree": st.booleans(),
    "account_shares": st.sampled_from([{}, {"x": 3}, {"y": 0}]),
    "user_shares": st.sampled_from([{}, {"x/1": 5}, {"y/2": 0, "y/3": 2}]),
    "partition_job_factor": st.sampled_from([{}, {"p0": 3}]),
    "qos_priority": st.sampled_from([{}, {"q1": 5}]),
    "threshold_s": st.sampled_from([None, 40.0]),
    "depth": st.sampled_from([None, 1]),
    "bf_interval_s": st.sampled_from([None, 7.0]),
    "bf_max_job_test": st.sampled_from([None, 3]),
    "default_queue_depth": st.sampled_from([None, 2]),
})  # fmt: skip


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(max_jobs=12), setting=SETTINGS, data=st.data())
def test_the_kernel_equals_the_reference(workload, setting, data):
    jobs, m = workload
    attrs = draw_attrs(data, jobs)
    assert run_fast(jobs, attrs, m, **setting) == run_naive(jobs, attrs, m, **setting)


def draw_attrs(data, jobs) -> dict[int, Attrs]:
    """Each job's user (1-3), account, partition, QOS and eligible time (0 or 15 s late)."""
    return {
        j.job_id: Attrs(
            str(data.draw(st.integers(1, 3))), data.draw(st.sampled_from(["x", "y"])),
            data.draw(st.sampled_from(["p0", "p1"])), data.draw(st.sampled_from(["normal", "q1"])),
            j.submit_s + data.draw(st.sampled_from([0.0, 0.0, 15.0])),
        )
        for j in jobs
    }  # fmt: skip


# -- degenerate settings ------------------------------------------------------------------------


def fcfs(jobs, m, **kwargs):
    out = simulate_conservative_arrays(
        np.array([j.submit_s for j in jobs]), np.array([j.procs for j in jobs]),
        np.array([j.run_s for j in jobs]), np.array([j.estimate_s for j in jobs]), m,
        requested_s=np.array([j.requested_s for j in jobs]),
        job_id=np.array([j.job_id for j in jobs]), primary="FCFS", **kwargs,
    )  # fmt: skip
    ids = [j.job_id for j in jobs]
    return (dict(zip(ids, out.start_s.tolist(), strict=True)),
            dict(zip(ids, out.backfilled.tolist(), strict=True)))  # fmt: skip


def not_outliving(jobs):
    """The jobs with estimates of at least their run time: the ticks' extra pass instants then
    change nothing (an outlived estimate would be revised at a tick, earlier than in FCFS)."""
    return [NaiveJob(j.job_id, j.submit_s, j.procs, j.run_s, max(j.estimate_s, j.run_s),
                     max(j.requested_s, j.estimate_s, j.run_s)) for j in jobs]  # fmt: skip


DEGENERATE = [
    {},  # every weight 0: every priority 1
    {"weight_age": 1000, "max_age_s": 1e9},  # age alone: older jobs never rank lower
    {"weight_fairshare": 1000, "decay_half_life_s": 50.0, "calc_period_s": 7.0},  # one user
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(), setting=st.sampled_from(DEGENERATE),
       depth=st.sampled_from([None, 2]))  # fmt: skip
def test_degenerate_settings_are_fcfs_conservative(workload, setting, depth):
    jobs, m = workload
    jobs = not_outliving(jobs)
    attrs = {j.job_id: Attrs("7", "a") for j in jobs}
    starts, _, backfilled = run_fast(jobs, attrs, m, depth=depth, **setting)
    assert (starts, backfilled) == fcfs(jobs, m, depth=depth)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(), setting=st.sampled_from(DEGENERATE))
def test_depth_one_with_an_fcfs_priority_is_easy(workload, setting):
    jobs, m = workload
    jobs = not_outliving(jobs)
    attrs = {j.job_id: Attrs("7", "a") for j in jobs}
    starts, _, backfilled = run_fast(jobs, attrs, m, depth=1, **setting)
    easy = fast_simulation(jobs, m, primary="FCFS", backfill="FCFS", reservation="classic",
                           threshold_backfill=True)  # fmt: skip
    ids = [j.job_id for j in jobs]
    assert list(starts.values()) == easy.start_s.tolist()
    assert [backfilled[i] for i in ids] == easy.backfilled.tolist()


# -- the trace entry point, settings, errors ----------------------------------------------------


def swf_table(rows) -> pl.DataFrame:
    """A tiny SWF table: (job_id, submit, run, procs, requested, user, group, partition)."""
    cols = ["job_id", "submit_s", "run_s", "alloc_procs", "req_time_s", "user_id", "group_id",
            "partition_id"]  # fmt: skip
    table = pl.DataFrame([dict(zip(cols, r, strict=True)) for r in rows])
    return table.with_columns(
        wait_s=pl.lit(-1), avg_cpu_s=pl.lit(-1.0), used_mem_kb=pl.lit(-1.0),
        req_procs=pl.col("alloc_procs"), req_mem_kb=pl.lit(-1.0), status=pl.lit(1),
        executable_id=pl.lit(-1), queue_id=pl.lit(1), preceding_job_id=pl.lit(-1),
        think_time_s=pl.lit(-1),
    )  # fmt: skip


TABLE = swf_table([(1, 0, 100, 4, 100, 1, 10, 1), (2, 10, 100, 4, 100, 1, 10, 1),
                   (3, 20, 100, 4, 100, 2, 20, 1)])  # fmt: skip


def test_the_trace_entry_point_records_the_settings_and_priorities():
    prio = MultifactorPriority(weight_fairshare=1000, decay_half_life_s=0, calc_period_s=100)
    # one account for all: the schedule of the first hand-worked test
    result = simulate_conservative(TABLE, "multifactor", priority=prio, machine_procs=4,
                                   swf_account="single")  # fmt: skip
    assert result.jobs["start_s"].to_list() == [0, 200, 100]
    assert result.jobs["priority"].to_list() == [1000, 353, 500]
    config = result.config.to_dict()
    assert config["primary"] == "multifactor"
    assert config["priority"]["weight_fairshare"] == 1000
    # the SWF groups as accounts (each user alone in his own): user 2's account has no usage
    # at t=100 (UE 0 -> 1000) and user 1's all of it: J3 still first, J2 then at 200
    by_group = simulate_conservative(TABLE, "multifactor", priority=prio, machine_procs=4)
    assert by_group.jobs["start_s"].to_list() == [0, 200, 100]
    assert by_group.jobs["priority"].to_list()[2] == 1000


def test_the_side_table_gives_account_qos_and_eligible_time():
    side = pl.DataFrame({"job_id": [1, 2, 3], "account_id": [5, None, 5],
                         "qos": [None, "high", None], "partition": ["a", None, "b"],
                         "eligible_s": [None, 30, None]},
                        schema_overrides={"account_id": pl.Int64,
                                          "eligible_s": pl.Int64})  # fmt: skip
    attrs = job_attributes(TABLE, side)
    assert attrs.account.tolist() == ["5", "10", "5"]
    assert attrs.qos.tolist() == ["normal", "high", "normal"]
    assert attrs.partition.tolist() == ["a", "1", "b"]
    assert attrs.eligible_s.tolist() == [0.0, 30.0, 20.0]
    # the QOS raises J2 above J3 at t=100
    prio = MultifactorPriority(weight_qos=1000, qos_priority={"high": 1})
    result = simulate_conservative(TABLE, "multifactor", priority=prio, machine_procs=4,
                                   side=side)  # fmt: skip
    assert result.jobs["start_s"].to_list() == [0, 100, 200]


def test_same_input_same_result():
    jobs = [job(i, i * 3 % 17, 1 + i % 3, 5 + i * 7 % 23) for i in range(1, 30)]
    attrs = {j.job_id: Attrs(str(j.job_id % 4), "a" if j.job_id % 2 else "b") for j in jobs}
    kwargs = {"weight_age": 1000, "weight_fairshare": 5000, "weight_job_size": 100,
              "decay_half_life_s": 60.0, "calc_period_s": 5.0}  # fmt: skip
    assert run_fast(jobs, attrs, 4, **kwargs) == run_fast(jobs, attrs, 4, **kwargs)


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"weight_age": -1}, "weight_age"),
    ({"weight_qos": 2**32}, "weight_qos"),
    ({"weight_fairshare": 1.5}, "weight_fairshare"),
    ({"calc_period_s": 0}, "calc_period_s"),
    ({"max_age_s": -1}, "max_age_s"),
    ({"decay_half_life_s": math.inf}, "decay_half_life_s"),
    ({"dampening": 0}, "dampening"),
    ({"fair_tree": 1}, "fair_tree"),
    ({"favor_small": "yes"}, "favor_small"),
    ({"procs_per_node": 0}, "procs_per_node"),
    ({"account_shares": {"a": -2}}, "account_shares"),
    ({"user_shares": {"nouser": 1}}, "user_shares"),
    ({"partition_job_factor": {"p": 70000}}, "partition_job_factor"),
    ({"qos_priority": [1]}, "qos_priority"),
])  # fmt: skip
def test_bad_settings_are_refused_by_name(kwargs, named):
    with pytest.raises(ConfigurationError, match=named):
        MultifactorPriority(**kwargs)


def test_bad_combinations_are_refused():
    with pytest.raises(ConfigurationError, match="primary='multifactor'"):
        simulate_conservative(TABLE, "FCFS", priority=MultifactorPriority(), machine_procs=4)
    with pytest.raises(ConfigurationError, match="procs_per_node"):
        simulate_conservative(TABLE, "multifactor", machine_procs=4,
                              priority=MultifactorPriority(procs_per_node=3))  # fmt: skip
    with pytest.raises(ConfigurationError, match="attributes"):
        simulate_conservative_arrays(np.zeros(1), np.ones(1), np.ones(1), np.ones(1), 1,
                                     primary="multifactor")  # fmt: skip
    with pytest.raises(ConfigurationError, match="swf_account"):
        simulate_conservative(TABLE, "multifactor", machine_procs=4, swf_account="user")


# -- resumed backfill passes (docs/simulator.md, conservative backfilling's "Speed") -------------


def resumed_and_afresh(jobs, attrs, m, priority, **limits):
    """The multifactor schedules with the backfill passes resuming and from scratch, and the
    number of resumed passes."""
    matrix = job_matrix(
        np.array([j.submit_s for j in jobs]), np.array([j.procs for j in jobs]),
        np.array([j.run_s for j in jobs]), np.array([j.estimate_s for j in jobs]), m,
        requested_s=np.array([j.requested_s for j in jobs]),
        job_id=np.array([j.job_id for j in jobs]), validate=True,
    )  # fmt: skip
    kwargs = {"threshold_s": math.inf, "depth": -1, "window_s": math.inf, "resolution": 0.0,
              "interval": 0.0, "max_test": -1, "queue_depth": -1, "outlive_code": 0} | limits
    runs = [run_multifactor(matrix, m, priority, attributes(jobs, attrs), resume=resume,
                            **kwargs) for resume in (True, False)]  # fmt: skip
    return runs[0][0], runs[1][0], runs[0][1]


def test_a_completion_stops_a_pass_from_resuming():
    # Found by the differential test: m=3, every priority 1 (FCFS), a tick every second. t=1:
    # J3 (q2, 2 s) starts, J4 (q1, 3 s) is reserved at 3 (J1 holds 1 until 9, J2 all 3 from 9).
    # t=3: J3 ends; a pass that resumed the walk of t=2 (a tick) would keep J4's reservation
    # instead of starting it: the multifactor loop's completions must invalidate the memory.
    submit = [0, 0, 1, 1, 3, 3, 4, 5, 5, 5]
    procs = [1, 3, 2, 1, 1, 3, 2, 2, 1, 1]
    run = [9, 3, 2, 3, 1, 9, 6, 6, 3, 5]
    jobs = [job(i + 1, *values) for i, values in enumerate(zip(submit, procs, run, strict=True))]
    priority = MultifactorPriority(calc_period_s=1.0, decay_half_life_s=0.0, max_age_s=0.0)
    resumed, afresh, count = resumed_and_afresh(jobs, users(dict.fromkeys(range(1, 11), 0)), 3,
                                                priority)  # fmt: skip
    assert afresh.start_s.tolist() == [0, 9, 1, 3, 3, 12, 21, 27, 5, 21]
    assert resumed.start_s.tolist() == afresh.start_s.tolist()
    assert count > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(max_jobs=16), setting=SETTINGS, data=st.data())
def test_resumed_passes_equal_passes_from_scratch(workload, setting, data):
    jobs, m = workload
    priority = MultifactorPriority(**{k: v for k, v in setting.items() if k in FIELDS})
    limits = {
        name: default if setting[key] is None else setting[key]
        for key, name, default in (
            ("threshold_s", "threshold_s", math.inf), ("depth", "depth", -1),
            ("bf_interval_s", "interval", 0.0), ("bf_max_job_test", "max_test", -1),
            ("default_queue_depth", "queue_depth", -1),
        )
    }  # fmt: skip
    resumed, afresh, _ = resumed_and_afresh(jobs, draw_attrs(data, jobs), m, priority, **limits)
    assert resumed.start_s.tolist() == afresh.start_s.tolist()
    assert resumed.priority.tolist() == afresh.priority.tolist()
