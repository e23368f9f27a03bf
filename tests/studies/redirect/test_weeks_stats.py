"""The redirection study's weeks (load, choice, split) and statistics, by hand."""

from __future__ import annotations

import itertools
import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.errors import ConfigurationError
from scheduler.studies.redirect.stats import GRID_COLUMNS, best_cells, heatmap_table, week_ratios
from scheduler.studies.redirect.weeks import (
    DAY_S,
    WEEK_S,
    chosen_weeks,
    split_weeks,
    week_jobs,
    window_loads,
)


def _jobs(submit_days: list[float], procs: list[int], run_s: list[float]) -> pl.DataFrame:
    n = len(submit_days)
    return pl.DataFrame({
        "job_id": list(range(1, n + 1)), "submit_s": [d * DAY_S for d in submit_days],
        "alloc_procs": procs, "req_procs": procs, "run_s": run_s, "req_time_s": run_s,
    })  # fmt: skip


def test_window_load_by_hand() -> None:
    # m = 10; a job of 10 processors running a whole week on day 0, one of 5 for half a week
    # on day 8: window 0 (days 0-6) has load 1.0, window 8 (days 8-14) 0.25
    jobs = _jobs([0.0, 8.0], [10, 5], [WEEK_S, WEEK_S / 2])
    loads = window_loads(jobs, 10)
    assert loads.filter(pl.col("window") == 0)["load"][0] == pytest.approx(1.0)
    assert loads.filter(pl.col("window") == 8)["load"][0] == pytest.approx(0.25)
    # day 2's window holds day 8? no (days 2..8 exclusive of 9: yes, day 8 is inside)
    assert loads.filter(pl.col("window") == 2)["load"][0] == pytest.approx(0.25)
    calendar = window_loads(jobs, 10, step_days=7)
    assert calendar["load"].to_list() == pytest.approx([1.0, 0.25])


def test_choice_maximises_the_number_of_weeks_then_the_load() -> None:
    loads = pl.DataFrame({
        "window": [0, 1, 2, 7, 8, 14],
        "start_s": [0.0, DAY_S, 2 * DAY_S, 7 * DAY_S, 8 * DAY_S, 14 * DAY_S],
        "jobs": [1] * 6, "load": [0.8, 0.99, 0.5, 0.75, 0.9, 0.71],
    })  # fmt: skip
    # the most loaded window (day 1) would block day 0 and day 7: the earliest-start greedy
    # takes days 0, 7, 14 (three weeks); the two most loaded of them are days 0 and 7
    three = chosen_weeks(loads, count=5, min_load=0.7)
    assert three["start_s"].to_list() == [0.0, 7 * DAY_S, 14 * DAY_S]
    assert three["week"].to_list() == [0, 1, 2]
    two = chosen_weeks(loads, count=2, min_load=0.7)
    assert two["start_s"].to_list() == [0.0, 7 * DAY_S]
    assert chosen_weeks(loads, count=5, min_load=0.95)["start_s"].to_list() == [DAY_S]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1.5), min_size=1, max_size=60), st.integers(1, 10), st.floats(0, 1))
def test_chosen_weeks_never_overlap(loads_list, count, min_load) -> None:
    loads = pl.DataFrame({
        "window": list(range(len(loads_list))),
        "start_s": [k * DAY_S for k in range(len(loads_list))],
        "jobs": [1] * len(loads_list), "load": loads_list,
    })  # fmt: skip
    chosen = chosen_weeks(loads, count=count, min_load=min_load)
    starts = chosen["start_s"].to_list()
    assert chosen.height <= count and all((chosen["load"] >= min_load).to_list())
    assert all(b - a >= WEEK_S for a, b in itertools.pairwise(starts))


def test_split_and_week_jobs() -> None:
    weeks = pl.DataFrame({"week": [0, 1, 2, 3], "start_s": [0.0, 1.0, 2.0, 3.0]})
    assert split_weeks(weeks)["split"].to_list() == ["train", "train", "test", "test"]
    assert split_weeks(weeks, how="alternate")["split"].to_list() == [
        "train", "test", "train", "test"
    ]  # fmt: skip
    with pytest.raises(ConfigurationError, match="chronological"):
        split_weeks(weeks, how="random")
    jobs = _jobs([0.0, 6.9, 7.0], [1, 1, 1], [1.0, 1.0, 1.0])
    assert week_jobs(jobs, 0.0)["job_id"].to_list() == [1, 2]


def _grid() -> pl.DataFrame:
    rows = []
    for week, split in enumerate(["train", "train", "test", "test"]):
        baseline = {
            "trace": "L",
            "week": week,
            "split": split,
            "alpha": 0.0,
            "theta": math.inf,
            "balance": False,
            "jobs": 10,
            "avg_bsld": 10.0,
            "max_bsld": 100.0,
            "avg_wait_s": 1.0,
            "utilisation": 0.5,
            "utilisation_with_waste": 0.5,
            "redirections": 0,
            "wasted_proc_s": 0.0,
        }
        rows.append(baseline)
        for alpha, theta, value in ((0.1, 5.0, 8.0 + week), (0.1, 20.0, 9.0), (0.2, 5.0, 12.0)):
            rows.append(
                {
                    **baseline,
                    "alpha": alpha,
                    "theta": theta,
                    "avg_bsld": value,
                    "max_bsld": 50.0,
                    "redirections": int(100 / theta),
                }
            )
    return pl.DataFrame(rows, schema=GRID_COLUMNS)


def test_ratios_medians_and_the_honest_tuning() -> None:
    ratios = week_ratios(_grid())
    assert ratios.height == 4 * 3 and (ratios["ratio_max_bsld"] == 0.5).all()
    heat = heatmap_table(ratios)
    cell = heat.filter((pl.col("alpha") == 0.1) & (pl.col("theta") == 5.0)).row(0, named=True)
    # (α, θ) = (0.1, 5): AVEbsld 8, 9, 10, 11 over a baseline of 10: median ratio 0.95
    assert cell["median_ratio_avg_bsld"] == pytest.approx(0.95) and cell["weeks"] == 4
    best = best_cells(ratios).row(0, named=True)
    # on the training weeks (0, 1) (0.1, 5) has ratios 0.8, 0.9 (median 0.85) < (0.1, 20)'s 0.9
    assert (best["alpha"], best["theta"]) == (0.1, 5.0)
    assert best["train_median_ratio_avg_bsld"] == pytest.approx(0.85)
    # reported on the test weeks (2, 3): 1.0 and 1.1
    assert best["test_median_ratio_avg_bsld"] == pytest.approx(1.05) and best["test_weeks"] == 2


def test_a_run_without_its_baseline_is_refused() -> None:
    grid = _grid().filter(~((pl.col("alpha") == 0.0) & (pl.col("week") == 3)))
    with pytest.raises(ConfigurationError, match="no baseline run for 1"):
        week_ratios(grid)


def test_loads_refuse_bad_input() -> None:
    with pytest.raises(ConfigurationError, match="machine_procs"):
        window_loads(_jobs([0.0], [1], [1.0]), 0)
    with pytest.raises(ConfigurationError, match="no job"):
        window_loads(_jobs([], [], []), 10)
    assert window_loads(_jobs([0.0], [1], [1.0]), 1)["load"].is_finite().all()


def test_clipping_overruns_keeps_anl_intrepids_loaded_weeks(shared_trace) -> None:
    """On the real log: ANL-Intrepid's 12,241 overrunning jobs (18 %) carry the load its weeks
    are chosen by; dropped, no 7-day window reaches 0.7; clipped, 14 disjoint ones do."""
    from scheduler import read_swf, strong_filter
    from scheduler.studies.redirect.weeks import window_loads

    trace = read_swf(shared_trace("ANL-Intrepid.swf.gz"), lenient=True)
    counts = {}
    for overrun in ("drop", "clip"):
        filtered, report = strong_filter(trace, overrun=overrun)
        loads = window_loads(filtered.jobs, filtered.machine_procs, step_days=1)
        counts[overrun] = chosen_weeks(loads, count=20, min_load=0.7).height
    assert report.clipped_overrun == 12_241
    assert counts == {"drop": 0, "clip": 14}


def test_a_week_no_job_of_which_fits_the_main_pool_is_refused_naming_the_share() -> None:
    from scheduler.studies.redirect.steps import _week_arrays

    jobs = _jobs([0.5, 1.0, 2.0], [8, 16, 8], [60.0, 60.0, 60.0])
    arrays = _week_arrays(jobs, {"start_s": 0.0, "week": 0}, 8, "T", 0.5)
    assert arrays[0].size == 2 and arrays[-1] == 1  # the 16-processor job left out
    with pytest.raises(ConfigurationError, match=r"redirect\.alphas: on T, every job of week 0"):
        _week_arrays(jobs, {"start_s": 0.0, "week": 0}, 4, "T", 0.9)
