"""The processor assignment pass (scheduler.sim.assignment) and the Schedule of every engine
(scheduler.sim.schedule).

Hand-worked assignments for each rule; then the property: on schedules of the base engine, the
redirection and the memory-aware cluster drawn by hypothesis, no processor serves two runs at
once and every run gets exactly its processors, checked pair by pair by a deliberately plain
checker.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.adapters import fast_simulation
from support.workloads import workloads

from scheduler.core.errors import ConfigurationError
from scheduler.sim.assignment import ASSIGNMENT_RULES, Assignment, assign_processors
from scheduler.sim.memory import MemoryConfig, simulate_memory
from scheduler.sim.redirection import simulate_redirect
from scheduler.sim.schedule import Schedule, schedule_of

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_valid(start, end, procs, pool, sizes, assignment: Assignment) -> None:
    """Every run holds exactly its processors, inside its pool, and no two runs whose
    [start, end) overlap share one (all pairs compared, processor by processor)."""
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    held = []
    for i in range(len(start)):
        numbers = [p for a, b in assignment.intervals(i) for p in range(a, b)]
        assert len(numbers) == len(set(numbers)) == procs[i], (i, assignment.intervals(i))
        assert all(offsets[pool[i]] <= p < offsets[pool[i] + 1] for p in numbers), i
        held.append(set(numbers))
    for i in range(len(start)):
        for j in range(i + 1, len(start)):
            if max(start[i], start[j]) < min(end[i], end[j]):
                assert not held[i] & held[j], (i, j, held[i] & held[j])


# -- hand-worked ---------------------------------------------------------------------------------


def test_hand_worked_best_fit():
    """Four processors: A [0,2) 2p, B [0,1) 1p, C [1,3) 2p, D [2,4) 2p, E at 2 of zero length.
    At 0: A 0-1, B 2. At 1: B gives 2 back; free {2, 3}: C 2-3. At 2: A gives 0-1 back; E (zero
    length, served first at its instant) sees 0-1 free and takes 0; D takes 0-1."""
    a = assign_processors([0, 0, 1, 2, 2], [2, 1, 3, 4, 2], [2, 1, 2, 2, 1], 4)
    assert [a.intervals(i) for i in range(5)] == [
        [(0, 2)], [(2, 3)], [(2, 4)], [(0, 2)], [(0, 1)]
    ]  # fmt: skip
    assert a.procset_text().to_list() == ["0-1", "2", "2-3", "0-1", "0"]
    assert a.pieces.tolist() == [1, 1, 1, 1, 1]


def test_best_fit_and_first_fit_differ():
    """Free blocks {0} and {2, 3, 4} (1 and 3 wide) after the runs holding 1 and 5..7 end... a
    one-processor run takes the 1-wide block under best fit and also under first fit (it is
    lowest); a two-wide one takes 2-3 under both; a one-wide run when the free blocks are
    {0..2} and {4}: best fit takes 4, first fit 0."""
    # t=0: X 0-2 (3p) ends at 1, Y 3 (1p) to 9, Z 4 (1p) ends at 1: free at 1 {0..2} and {4}
    start = [0, 0, 0, 1]
    end = [1, 9, 1, 5]
    procs = [3, 1, 1, 1]
    best = assign_processors(start, end, procs, 5, rule="best-fit")
    first = assign_processors(start, end, procs, 5, rule="first-fit")
    assert best.intervals(3) == [(4, 5)]
    assert first.intervals(3) == [(0, 1)]


def test_scattered_free_processors_give_several_intervals():
    """Free {0} and {2} when a two-processor run starts: it takes both, two intervals."""
    a = assign_processors([0, 0, 0, 1], [1, 9, 1, 3], [1, 1, 1, 2], 3)
    assert a.intervals(0) == [(0, 1)] and a.intervals(1) == [(1, 2)]
    assert a.intervals(3) == [(0, 1), (2, 3)]
    assert a.procset_text()[3] == "0 2"
    assert a.pieces[3] == 2


def test_pools_number_their_own_processors():
    a = assign_processors([0, 0, 0], [5, 5, 5], [2, 3, 1], [2, 4], pool=[0, 1, 1])
    assert [a.intervals(i) for i in range(3)] == [[(0, 2)], [(2, 5)], [(5, 6)]]
    with pytest.raises(ConfigurationError, match="over-commit pool 0"):
        assign_processors([0, 0, 0], [5, 5, 5], [2, 3, 1], [2, 4], pool=[0, 1, 0])


def test_overcommit_is_refused_naming_the_run():
    with pytest.raises(ConfigurationError, match=r"run 1 starts at 0 s needing 2 processors"):
        assign_processors([0, 0], [1, 1], [2, 2], 3)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"start_s": [0, 1], "end_s": [1], "procs": [1]}, "one length"),
        ({"start_s": [0], "end_s": [np.nan], "procs": [1]}, "not finite: run 0"),
        ({"start_s": [2], "end_s": [1], "procs": [1]}, "ends before it starts: run 0"),
        ({"start_s": [0], "end_s": [1], "procs": [-1]}, "negative: run 0"),
        ({"start_s": [0], "end_s": [1], "procs": [9]}, "needs 9 processors, more than"),
        ({"start_s": [0], "end_s": [1], "procs": [1], "pool": [3]}, "pool index"),
        ({"start_s": [0], "end_s": [1], "procs": [1], "rule": "worst-fit"}, "rule must be"),
    ],
)
def test_bad_input_is_named(kwargs, match):
    with pytest.raises(ConfigurationError, match=match):
        assign_processors(pool_procs=4, **kwargs)


def test_no_runs():
    a = assign_processors([], [], [], 4)
    assert len(a) == 0 and a.procset_text().to_list() == []


# -- the property, on every engine ----------------------------------------------------------


@SETTINGS
@given(
    workload=workloads(max_jobs=20),
    backfill=st.sampled_from(["FCFS", "SPF", None]),
    rule=st.sampled_from(list(ASSIGNMENT_RULES)),
)
def test_base_engine_schedules_are_assigned_validly(workload, backfill, rule):
    jobs, m = workload
    simulation = fast_simulation(jobs, m, backfill=backfill)
    start = simulation.start_s
    run = np.array([j.run_s for j in jobs])
    procs = np.array([j.procs for j in jobs])
    a = assign_processors(start, start + run, procs, m, rule=rule)
    check_valid(start, start + run, procs, np.zeros(len(jobs), int), [m], a)


@SETTINGS
@given(workload=workloads(max_jobs=16), theta=st.sampled_from([0, 1, 3]))
def test_redirection_schedules_are_assigned_validly(workload, theta):
    jobs, m = workload
    table = pl.DataFrame(
        {
            "job_id": [j.job_id for j in jobs],
            "submit_s": [j.submit_s for j in jobs],
            "run_s": [j.run_s for j in jobs],
            "alloc_procs": [j.procs for j in jobs],
            "req_procs": [j.procs for j in jobs],
            "req_time_s": [j.requested_s for j in jobs],
        }
    )
    machine = 2 * m  # the main pool (half) holds every job
    result = simulate_redirect(table, machine_procs=machine, alpha=0.5, theta=theta)
    schedule = schedule_of(result)
    runs = schedule.runs
    sizes = [size for _, size in schedule.pools]
    check_valid(runs["start_s"].to_numpy(), runs["end_s"].to_numpy(), runs["procs"].to_numpy(),
                runs["pool"].to_numpy(), sizes, schedule.assignment)  # fmt: skip
    # a redirected job's killed run is on the main pool, its final run on the dedicated one
    assert (
        runs.filter(~pl.col("final"))["pool"].to_list()
        == [0] * runs.filter(~pl.col("final")).height
    )
    assert runs.height == result.jobs.height + result.redirections


@st.composite
def memory_tables(draw):
    nodes = tuple(draw(st.lists(st.integers(1, 3), min_size=2, max_size=3)))
    memories = tuple(float(8 * (c + 1)) for c in range(len(nodes)))
    rows = []
    for job_id in range(1, draw(st.integers(1, 14)) + 1):
        c = draw(st.integers(0, len(nodes) - 1))
        req = memories[c] * draw(st.sampled_from((1.0, 0.5)))
        room = sum(n for n, mem in zip(nodes, memories, strict=True) if mem >= req)
        rows.append({
            "job_id": job_id, "submit_s": float(draw(st.integers(0, 40))),
            "procs": draw(st.integers(1, room)), "run_s": float(draw(st.integers(1, 30))),
            "req_time_s": 60.0, "req_mem_mb": req,
            "used_mem_mb": req * draw(st.sampled_from((1.0, 0.5, 0.1))), "user_id": 1,
        })  # fmt: skip
    return pl.DataFrame(rows), nodes, memories


@SETTINGS
@given(
    case=memory_tables(),
    estimator=st.sampled_from(["none", "perceptron"]),
    seed=st.integers(0, 2**32),
)
def test_memory_schedules_are_assigned_validly(case, estimator, seed):
    """Runs spread over several node classes hold nodes in each; failed runs too."""
    table, nodes, memories = case
    config = MemoryConfig(class_nodes=nodes, class_memory_mb=memories, estimator=estimator,
                          seed=seed)  # fmt: skip
    result = simulate_memory(table, config)
    schedule = schedule_of(result)
    runs = schedule.runs
    assert runs.height == result.runs.height
    offsets = np.concatenate(([0], np.cumsum(nodes)))
    counts = (
        result.runs.sort("start_s", "job_id")
        .select([f"nodes_class{c + 1}" for c in range(len(nodes))])
        .to_numpy()
    )
    for i in range(runs.height):
        held = [p for a, b in schedule.assignment.intervals(i) for p in range(a, b)]
        per_class = np.histogram(held, bins=offsets)[0]
        assert per_class.tolist() == counts[i].tolist()
    # the pairwise check with each run's pool widened to the whole machine
    check_valid(runs["start_s"].to_numpy(), runs["end_s"].to_numpy(), runs["procs"].to_numpy(),
                np.zeros(runs.height, int), [sum(nodes)], schedule.assignment)  # fmt: skip


# -- the Schedule's step functions ----------------------------------------------------------------


def test_queue_length_and_busy_processors_of_a_redirection(job_table):
    """Two jobs on 2 + 2 processors, θ = 0: the hand-worked run of tests/sim/test_redirection
    (jobs A, B, C) gives each job's waiting periods, killed runs included."""
    table = job_table(*[
        {"job_id": j, "submit_s": s, "run_s": r, "alloc_procs": 2, "req_procs": 2, "req_time_s": r}
        for j, s, r in ((1, 0, 30), (2, 1, 20), (3, 5, 5))
    ])  # fmt: skip
    result = simulate_redirect(table, machine_procs=4, alpha=0.5, theta=0)
    schedule = schedule_of(result)
    runs = schedule.runs.select("job_id", "start_s", "end_s", "pool", "final").rows()
    # A: killed on main [0, 1), dedicated [1, 31); B: killed on main [1, 5), dedicated [31, 51);
    # C: main [5, 10)
    assert sorted(runs) == [(1, 0.0, 1.0, 0, False), (1, 1.0, 31.0, 1, True),
                            (2, 1.0, 5.0, 0, False), (2, 31.0, 51.0, 1, True),
                            (3, 5.0, 10.0, 0, True)]  # fmt: skip
    queue = dict(schedule.queue_length().rows())
    # 0: A submitted and started; 1: A killed and restarted, B submitted and started;
    # 5: B killed (waits), C submitted and started; 31: B restarts
    assert queue == {0.0: 0, 1.0: 0, 5.0: 1, 31.0: 0}
    busy = dict(schedule.busy_procs().rows())
    assert busy == {0.0: 2, 1.0: 4, 5.0: 4, 10.0: 2, 31.0: 2, 51.0: 0}


def test_window_keeps_the_runs_that_overlap_it():
    a = assign_processors([0, 5, 10], [5, 10, 15], [1, 2, 1], 2)
    runs = pl.DataFrame({"job_id": [1, 2, 3], "start_s": [0.0, 5.0, 10.0],
                         "end_s": [5.0, 10.0, 15.0], "procs": [1, 2, 1]})  # fmt: skip
    schedule = Schedule(runs=runs, pools=(("machine", 2),), assignment=a)
    window = schedule.window(5.0, 10.0)
    assert window.runs["job_id"].to_list() == [2]
    assert window.assignment.intervals(0) == [(0, 2)]
    with pytest.raises(ConfigurationError, match="end after it starts"):
        schedule.window(3.0, 3.0)
