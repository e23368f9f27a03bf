"""Per-week simulation campaigns (scheduler.studies.tuning.weeks) on resampled KTH-SP2 weeks: every
weekly figure must equal what the public ``scheduler.simulate`` reports for that week alone."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import scheduler
from scheduler.core.errors import ConfigurationError
from scheduler.core.units import parse_duration
from scheduler.sim.arrays import week_arrays
from scheduler.sim.multifactor import MULTIFACTOR, MultifactorPriority
from scheduler.studies.common.config import CONSERVATIVE
from scheduler.studies.common.slurm import study_slurm
from scheduler.studies.tuning.schema import WEEKLY_COLUMNS
from scheduler.studies.tuning.weeks import simulate_weeks
from scheduler.traces.filters import strong_filter
from scheduler.traces.resample import resample_weeks, split_at_midpoint
from scheduler.traces.swf import read_swf

ROOT = Path(__file__).resolve().parents[3]
MACHINE = 100
WEEK_INDICES = [0, 1, 7]
FIGURES = ("avg_wait_s", "max_wait_s", "avg_bsld", "max_bsld", "utilisation")
CONFIGS = [("FCFS", "FCFS", "none"), ("SPF", "LPF", "none"), ("LEXP", "SPF", "5h")]


@pytest.fixture(scope="module")
def weeks(kth_path) -> pl.DataFrame:
    filtered, _ = strong_filter(read_swf(kth_path))
    assert filtered.machine_procs == MACHINE
    train = split_at_midpoint(filtered.jobs, name="KTH-SP2")["train"]
    return resample_weeks(train, WEEK_INDICES, seed=11, trace="KTH-SP2", split="train")


@pytest.fixture(scope="module")
def arrays(weeks):
    return week_arrays(weeks, MACHINE, source="batch.parquet")


def run(arrays, primary, backfill, *thresholds, threshold_backfill=False, slurm=None):
    return simulate_weeks(
        arrays,
        MACHINE,
        primary=primary,
        backfill=backfill,
        thresholds=[(label, parse_duration(label)) for label in thresholds],
        trace="KTH-SP2",
        split="train",
        threshold_backfill=threshold_backfill,
        slurm=slurm,
    )


@pytest.mark.parametrize("config", CONFIGS, ids=["/".join(c) for c in CONFIGS])
def test_weekly_figures_match_simulate(weeks, arrays, config):
    primary, backfill, threshold = config
    table = run(arrays, primary, backfill, threshold)
    assert dict(table.schema) == WEEKLY_COLUMNS
    assert table.columns == list(WEEKLY_COLUMNS)
    assert table["week_index"].to_list() == WEEK_INDICES
    assert (table["trace"] == "KTH-SP2").all() and (table["split"] == "train").all()
    assert (table["primary"] == primary).all() and (table["backfill"] == backfill).all()
    assert (table["threshold"] == threshold).all()
    assert table["threshold_s"].to_list() == [parse_duration(threshold)] * len(WEEK_INDICES)
    for row in table.iter_rows(named=True):
        week = weeks.filter(pl.col("week_index") == row["week_index"])
        summary = scheduler.simulate(
            week, primary, backfill, threshold, machine_procs=MACHINE
        ).summary
        assert row["jobs"] == week.height == summary.jobs
        for name in FIGURES:
            assert row[name] == pytest.approx(getattr(summary, name), rel=1e-12), name


@pytest.mark.parametrize(("primary", "threshold"), [("FCFS", "none"), ("SPF", "5h")])
def test_conservative_weeks_match_simulate_conservative(weeks, arrays, primary, threshold):
    """Backfilling policy CONSERVATIVE: every week is conservative backfilling in the primary
    order under Θ, figure for figure as the public API reports it for that week alone, and not
    the EASY schedule of the same primary order."""
    table = run(arrays, primary, CONSERVATIVE, threshold)
    assert (table["backfill"] == CONSERVATIVE).all()
    easy = run(arrays, primary, primary, threshold)
    assert not table.select(FIGURES).equals(easy.select(FIGURES))
    for row in table.iter_rows(named=True):
        week = weeks.filter(pl.col("week_index") == row["week_index"])
        summary = scheduler.simulate_conservative(
            week, primary, threshold, machine_procs=MACHINE
        ).summary
        assert row["jobs"] == week.height == summary.jobs
        for name in FIGURES:
            assert row[name] == pytest.approx(getattr(summary, name), rel=1e-12), name


@pytest.fixture(scope="module")
def slurm():
    """The example site's Slurm settings (its limits and multifactor priority), as the plan
    hands them to the steps."""
    return study_slurm(str(ROOT / "config" / "slurm" / "multifactor.conf"), "tuning.slurm_conf")


@pytest.mark.parametrize("threshold", ["none", "5h"])
def test_multifactor_weeks_match_simulate_conservative(weeks, arrays, slurm, threshold):
    """Primary multifactor: every week is Slurm's backfill under the slurm.conf's limits and
    multifactor priority, fair-share per user under one account from no usage, figure for
    figure as the public API reports it for that week alone (the week's jobs without group
    or partition: SWF's -1)."""
    table = run(arrays, MULTIFACTOR, CONSERVATIVE, threshold, slurm=slurm)
    assert (table["primary"] == MULTIFACTOR).all()
    fcfs = run(arrays, "FCFS", CONSERVATIVE, threshold, slurm=slurm)
    assert not table.select(FIGURES).equals(fcfs.select(FIGURES))
    for row in table.iter_rows(named=True):
        week = weeks.filter(pl.col("week_index") == row["week_index"]).with_columns(
            group_id=pl.lit(-1), partition_id=pl.lit(-1)
        )
        summary = scheduler.simulate_conservative(
            week, MULTIFACTOR, threshold, machine_procs=MACHINE, swf_account="single",
            priority=MultifactorPriority(**slurm["priority"]), **slurm["limits"],
        ).summary  # fmt: skip
        for name in FIGURES:
            assert row[name] == pytest.approx(getattr(summary, name), rel=1e-12), name


def test_multifactor_weeks_without_weights_are_fcfs(arrays, slurm):
    """Degenerate: every weight 0 gives every job priority 0, ties by submission: Slurm's
    backfill in FCFS order under the same limits, week by week; and the limits act (the
    unlimited conservative weeks differ)."""
    flat = {**slurm, "priority": {**slurm["priority"], "weight_age": 0, "weight_fairshare": 0,
                                  "weight_job_size": 0}}  # fmt: skip
    mf = run(arrays, MULTIFACTOR, CONSERVATIVE, "none", slurm=flat)
    fcfs = run(arrays, "FCFS", CONSERVATIVE, "none", slurm=flat)
    assert mf.select(FIGURES).equals(fcfs.select(FIGURES))
    unlimited = run(arrays, "FCFS", CONSERVATIVE, "none")
    assert not unlimited.select(FIGURES).equals(fcfs.select(FIGURES))


def test_multifactor_needs_slurm_settings_and_conservative(arrays, slurm):
    with pytest.raises(ConfigurationError, match=r"needs a slurm\.conf with PriorityType"):
        run(arrays, MULTIFACTOR, CONSERVATIVE, "none")
    with pytest.raises(ConfigurationError, match="conservative backfilling only"):
        run(arrays, MULTIFACTOR, "FCFS", "none", slurm=slurm)


def test_threshold_is_applied(arrays):
    """The finite threshold changes the schedule, so the comparison above is meaningful."""
    with_threshold = run(arrays, "SPF", "SPF", "5h")
    without = run(arrays, "SPF", "SPF", "none")
    assert not with_threshold.select(FIGURES).equals(without.select(FIGURES))


def test_configurations_differ(arrays):
    fcfs = run(arrays, "FCFS", "FCFS", "none")
    spf = run(arrays, "SPF", "FCFS", "none")
    assert not np.allclose(fcfs["avg_wait_s"].to_numpy(), spf["avg_wait_s"].to_numpy())
    # the same jobs are simulated whatever the policy
    assert fcfs["jobs"].equals(spf["jobs"])
    assert (fcfs["utilisation"] > 0).all() and (fcfs["utilisation"] <= 1).all()


def test_week_arrays_cut_weeks(weeks, arrays):
    heights = weeks.group_by("week_index").len().sort("week_index")["len"].to_list()
    assert arrays.week_index.tolist() == WEEK_INDICES
    assert np.diff(arrays.bounds).tolist() == heights
    assert arrays.bounds[0] == 0 and arrays.bounds[-1] == weeks.height
    # procs: allocated processors, else requested ones
    expected_procs = (
        weeks.select(
            pl.when(pl.col("alloc_procs") > 0)
            .then(pl.col("alloc_procs"))
            .otherwise(pl.col("req_procs"))
        )
        .to_series()
        .cast(pl.Float64)
        .to_numpy()
    )
    np.testing.assert_array_equal(arrays.procs, expected_procs)
    np.testing.assert_array_equal(arrays.estimate_s, weeks["req_time_s"].cast(float).to_numpy())


def test_week_arrays_do_not_depend_on_row_order(weeks, arrays):
    shuffled = weeks.sample(fraction=1.0, shuffle=True, seed=5)
    assert not shuffled["job_id"].equals(weeks["job_id"])
    again = week_arrays(shuffled, MACHINE)
    for name in ("week_index", "bounds", "job_id", "submit_s", "run_s", "procs", "estimate_s"):
        np.testing.assert_array_equal(getattr(again, name), getattr(arrays, name), err_msg=name)


def test_weeks_simulated_independently(weeks):
    """A week's figures do not depend on the other weeks of the batch."""
    alone = run(week_arrays(weeks.filter(pl.col("week_index") == 7), MACHINE), "SPF", "LPF", "none")
    together = run(week_arrays(weeks, MACHINE), "SPF", "LPF", "none")
    assert alone.row(0) == together.filter(pl.col("week_index") == 7).row(0)


def _break(weeks: pl.DataFrame, week: int, job: int, **values) -> pl.DataFrame:
    hit = (pl.col("week_index") == week) & (pl.col("job_id") == job)
    return weeks.with_columns(
        pl.when(hit).then(pl.lit(v)).otherwise(pl.col(c)).cast(weeks.schema[c]).alias(c)
        for c, v in values.items()
    )


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"alloc_procs": MACHINE + 1}, "procs"),
        ({"alloc_procs": -1, "req_procs": -1}, "procs"),
        ({"run_s": 0}, "run_s"),
        ({"run_s": -5}, "run_s"),
        ({"req_time_s": 0}, "req_time_s"),
        ({"req_time_s": -1}, "req_time_s"),
    ],
    ids=["procs>m", "no-procs", "run=0", "run<0", "req=0", "req<0"],
)
def test_week_arrays_errors_name_source_week_and_job(weeks, values, field):
    bad = _break(weeks, 1, 17, **values)
    with pytest.raises(ConfigurationError) as info:
        week_arrays(bad, MACHINE, source="results/KTH-SP2/batch-0.parquet")
    message = str(info.value)
    assert "results/KTH-SP2/batch-0.parquet" in message
    assert "week 1," in message
    assert "job 17:" in message
    assert f"field {field} " in message


def test_week_arrays_empty_table(weeks):
    with pytest.raises(ConfigurationError, match="empty-batch"):
        week_arrays(weeks.clear(), MACHINE, source="empty-batch")


@pytest.mark.parametrize(
    ("primary", "backfill"), [("XYZ", "FCFS"), ("FCFS", "nope"), (CONSERVATIVE, "FCFS")]
)
def test_unknown_policy(arrays, primary, backfill):
    with pytest.raises(ConfigurationError, match="unknown policy"):
        simulate_weeks(
            arrays, MACHINE, primary=primary, backfill=backfill, thresholds=[("none", math.inf)],
            trace="t", split="train",
        )  # fmt: skip


@pytest.mark.parametrize("value", [math.nan, -math.inf, -1.0])
def test_bad_threshold_refused(arrays, value):
    with pytest.raises(ConfigurationError, match="threshold x"):
        simulate_weeks(
            arrays, MACHINE, primary="FCFS", backfill="FCFS",
            thresholds=[("none", math.inf), ("x", value)], trace="t", split="train",
        )  # fmt: skip


def test_no_threshold_refused(arrays):
    with pytest.raises(ConfigurationError, match="no threshold"):
        simulate_weeks(arrays, MACHINE, primary="FCFS", backfill="FCFS", thresholds=[],
                       trace="t", split="train")  # fmt: skip


# -- several thresholds in one call share the run without threshold (scheduler.sim.sweep) ------


@pytest.fixture(scope="module")
def many_arrays(kth_path):
    filtered, _ = strong_filter(read_swf(kth_path))
    train = split_at_midpoint(filtered.jobs, name="KTH-SP2")["train"]
    weeks = resample_weeks(train, range(30), seed=5, trace="KTH-SP2", split="train")
    return week_arrays(weeks, MACHINE)


def plain_waits(arrays, primary, backfill, threshold, threshold_backfill=False):
    """(AvgWait, MaxWait) per week from one plain scheduler.simulate_arrays call per week."""
    figures = []
    for k in range(arrays.week_index.size):
        lo, hi = arrays.bounds[k], arrays.bounds[k + 1]
        start = scheduler.simulate_arrays(
            arrays.submit_s[lo:hi], arrays.procs[lo:hi], arrays.run_s[lo:hi],
            arrays.estimate_s[lo:hi], MACHINE, primary=primary, backfill=backfill,
            threshold_s=parse_duration(threshold), threshold_backfill=threshold_backfill,
            job_id=arrays.job_id[lo:hi],
        )  # fmt: skip
        wait = start - arrays.submit_s[lo:hi]
        figures.append((float(wait.mean()), float(wait.max())))
    return figures


SWEEP = ("5h", "none", "30m", "80h", "20h")


@pytest.mark.parametrize("threshold_backfill", [False, True])
@pytest.mark.parametrize("pair", [("FCFS", "FCFS"), ("LCFS", "SPF"), ("LEXP", "LQF")])
def test_thresholds_in_one_call_equal_separate_runs(many_arrays, pair, threshold_backfill):
    primary, backfill = pair
    table = run(many_arrays, primary, backfill, *SWEEP, threshold_backfill=threshold_backfill)
    n = many_arrays.week_index.size
    assert table.height == len(SWEEP) * n
    assert table["threshold"].to_list() == [label for label in SWEEP for _ in range(n)]
    assert table["week_index"].to_list() == many_arrays.week_index.tolist() * len(SWEEP)
    for i, label in enumerate(SWEEP):
        block = table.slice(i * n, n)
        want = plain_waits(many_arrays, primary, backfill, label, threshold_backfill)
        got = list(zip(block["avg_wait_s"].to_list(), block["max_wait_s"].to_list(), strict=True))
        assert got == want, label
        # and the same as asking for that threshold alone
        assert block.equals(run(many_arrays, primary, backfill, label,
                                threshold_backfill=threshold_backfill))  # fmt: skip


def test_threshold_changes_weeks_whose_max_wait_exceeds_it(many_arrays):
    """The comparison above is meaningful: weeks with MaxWait > Θ do change under Θ, the
    others cannot (no job is ever overdue)."""
    unthresholded = run(many_arrays, "LCFS", "FCFS", "none")
    thresholded = run(many_arrays, "LCFS", "FCFS", "5h")
    over = unthresholded["max_wait_s"].to_numpy() > 5 * 3600
    assert over.any()
    changed = unthresholded["avg_wait_s"].to_numpy() != thresholded["avg_wait_s"].to_numpy()
    assert changed[~over].sum() == 0 and changed[over].any()


def test_thresholded_backfill_order_reaches_the_kernel(many_arrays):
    plain = run(many_arrays, "LCFS", "SPF", "5h", "20h")
    ordered = run(many_arrays, "LCFS", "SPF", "5h", "20h", threshold_backfill=True)
    assert not plain.equals(ordered)
