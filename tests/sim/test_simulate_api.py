"""The public simulation API: result tables, metrics, SWF output, estimates and clear errors."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from scheduler import (
    POLICIES,
    ConfigurationError,
    cumulative_wait,
    parse_duration,
    read_swf,
    simulate,
    simulate_arrays,
    strong_filter,
    write_swf,
)
from scheduler.policies import PolicyInputs, PriorityKey, get_policy, priority_key, register


@pytest.fixture(scope="module")
def kth(kth_path):
    return strong_filter(read_swf(kth_path))[0]


@pytest.fixture(scope="module")
def kth_fcfs(kth):
    return simulate(kth)


def test_metrics_match_their_definitions(kth, kth_fcfs):
    jobs = kth_fcfs.jobs
    wait = jobs["start_s"].to_numpy() - jobs["submit_s"].to_numpy()
    run = jobs["run_s"].to_numpy()
    bsld = np.maximum((wait + run) / np.maximum(run, 10.0), 1.0)
    summary = kth_fcfs.summary
    assert summary.avg_wait_s == pytest.approx(wait.mean())
    assert summary.max_wait_s == wait.max()
    assert summary.avg_bsld == pytest.approx(bsld.mean())
    assert summary.max_bsld == pytest.approx(bsld.max())
    end = jobs["start_s"].to_numpy() + run
    makespan = end.max() - jobs["submit_s"].min()
    area = (jobs["procs"].to_numpy() * run).sum()
    assert summary.makespan_s == makespan
    assert summary.utilisation == pytest.approx(area / (100 * makespan))
    assert 0 < summary.utilisation <= 1
    assert summary.backfilled_jobs == int(jobs["backfilled"].sum()) > 0
    np.testing.assert_allclose(jobs["stretch"].to_numpy(), (wait + run) / run)


def test_cumulative_wait_ends_at_the_total_wait(kth_fcfs):
    curve = kth_fcfs.cumulative_wait()
    assert curve["time_s"].is_sorted()
    assert curve["cumulative_wait_s"].is_sorted()
    assert curve["finished_jobs"][-1] == kth_fcfs.summary.jobs
    assert curve["cumulative_wait_s"][-1] == pytest.approx(kth_fcfs.summary.total_wait_s)
    assert cumulative_wait(kth_fcfs.jobs).equals(curve)


def test_schedule_written_as_swf_reads_back_with_simulated_waits(kth_fcfs, tmp_path):
    path = tmp_path / "schedule.swf.gz"
    write_swf(kth_fcfs.to_swf_jobs(), path)
    back = read_swf(path, machine_procs=100).jobs
    simulated = kth_fcfs.jobs.select("job_id", "wait_s").sort("job_id")
    got = back.select("job_id", "wait_s").sort("job_id")
    assert got["job_id"].equals(simulated["job_id"])
    np.testing.assert_array_equal(got["wait_s"].to_numpy(), simulated["wait_s"].to_numpy())


def test_policies_and_thresholds_change_the_schedule(kth, kth_fcfs):
    spf = simulate(kth, primary="SPF", backfill="FCFS")
    assert spf.summary.avg_wait_s != kth_fcfs.summary.avg_wait_s
    # a threshold of 0 s sends every job that waited at all to the head in submit order, so
    # it brings SPF's worst wait down towards FCFS's
    guarded = simulate(kth, primary="SPF", backfill="FCFS", threshold="0s")
    assert guarded.summary.max_wait_s < spf.summary.max_wait_s
    assert guarded.config.threshold_s == 0.0 and spf.config.threshold_s == math.inf


def test_thresholded_backfill_order_on_the_real_log(kth):
    # EASY(SPF, SPF, 2 h): many jobs wait longer than Θ, so trying them first changes things
    plain = simulate(kth, "SPF", "SPF", "2h")
    thresholded = simulate(kth, "SPF", "SPF", "2h", threshold_backfill=True)
    assert not thresholded.jobs["start_s"].equals(plain.jobs["start_s"])
    assert (thresholded.config.threshold_backfill, plain.config.threshold_backfill) == (True, False)
    assert thresholded.config.to_dict()["threshold_backfill"] is True
    # no effect without a threshold, nor with FCFS backfilling (overdue first = FCFS)
    spf = simulate(kth, "SPF", "SPF")
    assert simulate(kth, "SPF", "SPF", threshold_backfill=True).jobs.equals(spf.jobs)
    fcfs_40h = simulate(kth, "SPF", "FCFS", "40h")
    assert simulate(kth, "SPF", "FCFS", "40h", threshold_backfill=True).jobs.equals(fcfs_40h.jobs)
    assert simulate(kth, threshold="40h", threshold_backfill=True).jobs.equals(
        simulate(kth, threshold="40h").jobs
    )


def test_no_backfilling_waits_longer(kth, kth_fcfs):
    plain = simulate(kth, backfill=None)
    assert plain.summary.backfilled_jobs == 0
    assert plain.summary.avg_wait_s > kth_fcfs.summary.avg_wait_s


def test_estimates(kth, kth_fcfs):
    clairvoyant = simulate(kth, estimate="clairvoyant")
    assert clairvoyant.summary.avg_wait_s != kth_fcfs.summary.avg_wait_s
    # an explicit array equal to the requested times reproduces the default
    requested = kth.jobs["req_time_s"].to_numpy().astype(float)
    assert simulate(kth, estimate=requested).jobs.equals(kth_fcfs.jobs)
    assert clairvoyant.config.estimate == "clairvoyant"


def test_classic_reservation_differs_slightly(kth, kth_fcfs):
    classic = simulate(kth, reservation="classic")
    ratio = classic.summary.avg_wait_s / kth_fcfs.summary.avg_wait_s
    assert ratio != 1.0 and abs(ratio - 1.0) < 0.1


def test_input_order_does_not_matter():
    rng = np.random.default_rng(3)
    n = 200
    submit = np.sort(rng.integers(0, 2000, n)).astype(float)
    procs = rng.integers(1, 9, n).astype(float)
    run = rng.integers(1, 300, n).astype(float)
    ids = np.arange(1, n + 1)
    starts = simulate_arrays(submit, procs, run, run * 2, 8, job_id=ids, primary="SAF")
    perm = rng.permutation(n)
    shuffled = simulate_arrays(
        submit[perm], procs[perm], run[perm], run[perm] * 2, 8, job_id=ids[perm], primary="SAF"
    )
    np.testing.assert_array_equal(shuffled, starts[perm])


def test_registering_a_policy_is_one_function():
    name = "TEST_LARGEST_FIRST"

    @register(name, "largest processor count first, by another name")
    def _largest(jobs: PolicyInputs) -> PriorityKey:
        return PriorityKey.static(-jobs.procs)

    try:
        procs = np.array([1.0, 3.0, 2.0])
        starts = simulate_arrays(np.zeros(3), procs, np.ones(3), np.ones(3), 3, primary=name)
    finally:
        POLICIES.remove(name)
    # m = 3: the 3-processor job fills the machine at 0; at 1 the 2- and 1-processor jobs
    # start together (FCFS would have started the 1-processor job at 0 instead)
    np.testing.assert_array_equal(starts, [1.0, 0.0, 1.0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"primary": "NOPE"}, "unknown policy 'NOPE'; known policies: FCFS"),
        ({"backfill": "XYZ"}, "unknown policy 'XYZ'"),
        ({"threshold": "4x"}, "not a duration: '4x'"),
        ({"threshold": -5}, "must be >= 0"),
        ({"machine_procs": 0}, "machine_procs must be a positive integer"),
        ({"machine_procs": 50}, "procs must be an integer in 1..50"),
        ({"reservation": "eager"}, "reservation must be one of"),
        ({"outlive": "kill"}, "outlive must be one of"),
        ({"estimate": "oracle"}, "estimate must be one of"),
        ({"estimate": np.ones(3)}, "estimate array has shape (3,)"),
    ],
)
def test_bad_arguments_give_clear_errors(kth, kwargs, message):
    with pytest.raises(ConfigurationError) as info:
        simulate(kth, **kwargs)
    assert message in str(info.value)


def test_unfiltered_trace_is_refused_with_the_job_and_field(kth_path):
    raw = read_swf(kth_path)
    pattern = r"job \d+ \(index \d+\): .* \(apply scheduler.strong_filter"
    with pytest.raises(ConfigurationError, match=pattern):
        simulate(raw)


def test_duplicate_job_numbers_are_refused():
    with pytest.raises(ConfigurationError, match="unique"):
        simulate_arrays(np.zeros(2), np.ones(2), np.ones(2), np.ones(2), 2, job_id=np.ones(2))


def test_bare_table_needs_machine_size(kth):
    with pytest.raises(ConfigurationError, match="machine_procs"):
        simulate(kth.jobs)
    assert simulate(kth.jobs, machine_procs=100).jobs.height == kth.jobs.height


def test_durations():
    assert parse_duration("40h") == 144000.0
    assert parse_duration("90m") == 5400.0
    assert parse_duration("2d") == 172800.0
    assert parse_duration(30) == 30.0
    assert math.isinf(parse_duration("none")) and math.isinf(parse_duration(None))


def test_priority_keys_are_validated():
    jobs = PolicyInputs(np.zeros(2), np.ones(2), np.array([1.0, 0.0]), 0.0)
    with pytest.raises(ConfigurationError, match="non-finite"):
        priority_key("F1", jobs)
    assert get_policy("spf").name == "SPF"


def test_result_table_columns(kth_fcfs):
    assert kth_fcfs.jobs.columns == [
        "job_id", "submit_s", "procs", "run_s", "estimate_s", "start_s", "backfilled",
        "wait_s", "end_s", "bsld", "stretch",
    ]  # fmt: skip
    assert kth_fcfs.jobs.schema["backfilled"] == pl.Boolean


# --- API misuse (issue #11, item 6): a ConfigurationError or TypeError naming the argument -------


def _arrays(n=3):
    return np.arange(n, dtype=float), np.ones(n), np.full(n, 10.0), np.full(n, 20.0)


@pytest.mark.parametrize("trace", [None, 42, ["jobs"], {"submit_s": [0]}])
def test_simulate_refuses_what_is_not_a_trace(trace):
    with pytest.raises(TypeError, match=r"trace must be a scheduler\.Trace or a polars DataFrame"):
        simulate(trace)


def test_simulate_given_a_path_says_to_read_it(kth_path):
    for path in (str(kth_path), kth_path):
        with pytest.raises(TypeError, match=r"read it with scheduler\.read_swf"):
            simulate(path)


def test_simulate_bare_table_missing_columns(kth):
    with pytest.raises(ConfigurationError, match=r"lacks the column.*req_time_s"):
        simulate(kth.jobs.drop("req_time_s"), machine_procs=100)


@pytest.mark.parametrize(
    "machine_procs", [math.inf, -math.inf, math.nan, 2.5, "8", None, 2**31, 10**30, True]
)
def test_bad_machine_procs_is_a_configuration_error(kth, machine_procs):
    with pytest.raises(ConfigurationError, match="machine_procs must be a positive integer"):
        simulate_arrays(*_arrays(), machine_procs)
    if machine_procs is not None:  # None means "the trace's own" for simulate()
        with pytest.raises(ConfigurationError, match="machine_procs must be a positive integer"):
            simulate(kth, machine_procs=machine_procs)


def test_integral_machine_procs_of_other_types_are_accepted():
    expected = simulate_arrays(*_arrays(), 4)
    for m in (4.0, np.int32(4), np.int64(4), np.float64(4.0)):
        np.testing.assert_array_equal(simulate_arrays(*_arrays(), m), expected)


@pytest.mark.parametrize("name", ["procs", "run_s", "estimate_s", "requested_s", "job_id"])
@pytest.mark.parametrize("length", [1, 2, 5])
def test_array_lengths_must_match(name, length):
    submit, procs, run, estimate = _arrays(3)
    arguments = {"procs": procs, "run_s": run, "estimate_s": estimate}
    keywords = {}
    values = np.ones(length) if name != "job_id" else np.arange(length, dtype=float)
    if name in arguments:
        arguments[name] = values
    else:
        keywords[name] = values
    with pytest.raises(ConfigurationError, match=rf"{name} has {length} values?, expected 3"):
        simulate_arrays(submit, arguments["procs"], arguments["run_s"], arguments["estimate_s"],
                        4, **keywords)  # fmt: skip
    with pytest.raises(ConfigurationError, match=rf"{name} has {length} values?, expected 3"):
        simulate_arrays(submit, arguments["procs"], arguments["run_s"], arguments["estimate_s"],
                        4, validate=False, **keywords)  # fmt: skip


def test_arrays_must_be_one_dimensional():
    submit, procs, run, estimate = _arrays(3)
    with pytest.raises(ConfigurationError, match="procs must be a 1-D array"):
        simulate_arrays(submit, procs.reshape(3, 1), run, estimate, 4)
    with pytest.raises(ConfigurationError, match="submit_s must be a 1-D array"):
        simulate_arrays(5.0, procs, run, estimate, 4)
    with pytest.raises(ConfigurationError, match="run_s must be a 1-D array"):
        simulate_arrays(submit, procs, 10.0, estimate, 4)


def test_non_numeric_arrays_name_the_argument():
    submit, procs, _, estimate = _arrays(3)
    with pytest.raises(ConfigurationError, match="run_s must hold numbers"):
        simulate_arrays(submit, procs, np.array(["a", "b", "c"]), estimate, 4)


@pytest.mark.parametrize("threshold_s", [math.nan, -1.0])
def test_bad_threshold_s_is_refused(threshold_s):
    with pytest.raises(ConfigurationError, match="threshold_s must be >= 0"):
        simulate_arrays(*_arrays(), 4, threshold_s=threshold_s)


@pytest.mark.parametrize("value", [1, "yes", None])
def test_threshold_backfill_must_be_a_bool(value):
    with pytest.raises(ConfigurationError, match="threshold_backfill must be True or False"):
        simulate_arrays(*_arrays(), 4, threshold_backfill=value)


def test_nan_until_s_is_refused():
    from scheduler import Simulation

    simulation = Simulation(*_arrays(), 4)
    with pytest.raises(ConfigurationError, match="until_s must be a time"):
        simulation.run(math.nan)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_job_number_is_refused(bad):
    with pytest.raises(ConfigurationError, match="job_id must be finite"):
        simulate_arrays(*_arrays(), 4, job_id=np.array([1.0, bad, 3.0]))


@pytest.mark.parametrize(("key", "value"), [("primary", None), ("primary", 3), ("backfill", 1.5)])
def test_policy_names_must_be_strings(key, value):
    with pytest.raises(TypeError, match=rf"{key} must be a policy name"):
        simulate_arrays(*_arrays(), 4, **{key: value})


def test_no_job_to_simulate(kth):
    from scheduler import Simulation

    empty = np.zeros(0)
    with pytest.raises(ConfigurationError, match="no job to simulate"):
        simulate_arrays(empty, empty, empty, empty, 4)
    with pytest.raises(ConfigurationError, match="no job to simulate"):
        Simulation(empty, empty, empty, empty, 4)
    with pytest.raises(ConfigurationError, match="no job to simulate"):
        simulate(kth.jobs.clear(), machine_procs=4)
    with pytest.raises(ConfigurationError, match="no job to simulate"):
        simulate(type(kth)(jobs=kth.jobs.clear(), header=kth.header, machine_procs=4))
