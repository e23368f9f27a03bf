"""The studies' per-run figures are scheduler.sim.metrics.run_figures of each run's own start
times: the queue-tuning study's weekly rows and the redirection study's grid and online rows,
recomputed here from separate simulations of the same jobs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.steps import read_table
from scheduler.sim.arrays import week_arrays
from scheduler.sim.engine import simulate_arrays
from scheduler.sim.metrics import run_figures
from scheduler.sim.redirection import simulate_redirect_arrays
from scheduler.studies.redirect import steps as redirect_steps
from scheduler.studies.redirect.online import online_rng, online_theta_run
from scheduler.studies.redirect.stats import RUN_FIGURES
from scheduler.studies.redirect.weeks import week_jobs
from scheduler.studies.tuning.weeks import WEEK_FIGURES, simulate_weeks
from scheduler.traces import steps as trace_steps
from scheduler.traces.filters import strong_filter
from scheduler.traces.swf import read_swf, used_procs

KTH_SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"
TAU_S = 60.0


def test_tuning_weeks_are_run_figures_of_each_week() -> None:
    trace = strong_filter(read_swf(KTH_SLICE))[0]
    # three "weeks": the slice cut at two submit times, each simulated alone
    first = float(trace.jobs["submit_s"].min())
    table = trace.jobs.with_columns(
        ((pl.col("submit_s") - first) // (14 * 86400)).cast(pl.Int64).alias("week_index")
    )
    weeks = week_arrays(table, 100)
    thresholds = [("2h", 7200.0), ("none", math.inf)]
    rows = simulate_weeks(weeks, 100, primary="SPF", backfill="FCFS", thresholds=thresholds,
                          trace="KTH-slice", split="train")  # fmt: skip
    assert rows.height == len(thresholds) * weeks.week_index.size >= 6
    for row in rows.iter_rows(named=True):
        k = int(np.flatnonzero(weeks.week_index == row["week_index"])[0])
        part = slice(weeks.bounds[k], weeks.bounds[k + 1])
        submit, run, procs = weeks.submit_s[part], weeks.run_s[part], weeks.procs[part]
        start = simulate_arrays(submit, procs, run, weeks.estimate_s[part], 100, primary="SPF",
                                backfill="FCFS", threshold_s=row["threshold_s"],
                                job_id=weeks.job_id[part])  # fmt: skip
        figures = run_figures(submit, start, run, procs, 100, tau_s=BSLD_TAU_S)
        assert {name: row[name] for name in WEEK_FIGURES} == {
            name: getattr(figures, name) for name in WEEK_FIGURES
        }
        assert row["jobs"] == figures.jobs


@pytest.fixture(scope="module")
def redirect_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The KTH slice filtered and its two most loaded weeks (the redirection study's steps)."""
    folder = tmp_path_factory.mktemp("redirect")
    paths = {name: folder / f"{name}.parquet" for name in ("filtered", "weeks", "grid", "online",
                                                           "baseline")}  # fmt: skip
    trace_steps.filter_trace(str(KTH_SLICE), str(paths["filtered"]), str(folder / "report.json"),
                             trace="KTH-slice", machine_procs=None, overrun="drop")  # fmt: skip
    redirect_steps.choose_weeks(str(paths["filtered"]), str(paths["weeks"]),
                                str(folder / "weeks.csv"), trace="KTH-slice", count=2,
                                min_load=0.3, step_days=1, split="alternate")  # fmt: skip
    common = {
        "trace": "KTH-slice",
        "thetas": [2, 20],
        "balance": [False, True],
        "primary": "FCFS",
        "backfill": "FCFS",
        "tau_s": TAU_S,
        "max_alpha": 0.2,
    }
    for alpha, key in ((0.2, "grid"), (None, "baseline")):
        redirect_steps.simulate_alpha(str(paths["filtered"]), str(paths["weeks"]),
                                      str(paths[key]), alpha=alpha, **common)  # fmt: skip
    redirect_steps.simulate_online(str(paths["filtered"]), str(paths["weeks"]),
                                   str(paths["online"]), alpha=0.2, selectors=["ucb"],
                                   period_s=86400.0, seed=1, **common)  # fmt: skip
    return paths


def week_inputs(paths: dict[str, Path], week: int) -> tuple[np.ndarray, ...]:
    """The jobs of a chosen week the steps simulate (no wider than the main pool at α = 0.2)."""
    jobs = read_table(str(paths["filtered"]))
    start = read_table(str(paths["weeks"])).filter(pl.col("week") == week)["start_s"][0]
    part = week_jobs(jobs, start).sort("submit_s", "job_id").filter(used_procs() <= 80)
    return (part["submit_s"].cast(pl.Float64).to_numpy(),
            part.select(used_procs()).to_series().cast(pl.Float64).to_numpy(),
            part["run_s"].cast(pl.Float64).to_numpy(),
            part["req_time_s"].cast(pl.Float64).to_numpy(),
            part["job_id"].cast(pl.Float64).to_numpy())  # fmt: skip


def test_redirection_grid_rows_are_run_figures(redirect_files: dict[str, Path]) -> None:
    grid = read_table(str(redirect_files["grid"]))
    assert grid.height == 2 * 2 * 2 and (grid["redirections"] > 0).any()
    for row in grid.iter_rows(named=True):
        submit, procs, run, requested, ids = week_inputs(redirect_files, row["week"])
        out = simulate_redirect_arrays(
            submit, procs, run, requested, 100, alpha=0.2, theta=row["theta"],
            balance=row["balance"], job_id=ids,
        )  # fmt: skip
        figures = run_figures(submit, out.start_s, run, procs, 100, tau_s=TAU_S,
                              wasted_proc_s=out.wasted_proc_s)  # fmt: skip
        assert {name: row[name] for name in RUN_FIGURES} == {
            name: getattr(figures, name) for name in RUN_FIGURES
        }
        assert row["redirections"] == out.redirections


def test_redirection_baseline_rows_are_run_figures(redirect_files: dict[str, Path]) -> None:
    baseline = read_table(str(redirect_files["baseline"]))
    for row in baseline.iter_rows(named=True):
        submit, procs, run, requested, ids = week_inputs(redirect_files, row["week"])
        start = simulate_arrays(submit, procs, run, requested, 100, job_id=ids)
        figures = run_figures(submit, start, run, procs, 100, tau_s=TAU_S)
        assert {name: row[name] for name in RUN_FIGURES} == {
            name: getattr(figures, name) for name in RUN_FIGURES
        }
        assert row["wasted_proc_s"] == 0.0 and row["utilisation"] == row["utilisation_with_waste"]


def test_redirection_online_rows_are_run_figures(redirect_files: dict[str, Path]) -> None:
    online = read_table(str(redirect_files["online"]))
    assert online.height == 2 * 2
    for row in online.iter_rows(named=True):
        submit, procs, run, requested, ids = week_inputs(redirect_files, row["week"])
        weeks = read_table(str(redirect_files["weeks"]))
        start_s = weeks.filter(pl.col("week") == row["week"])["start_s"][0]
        result = online_theta_run(
            submit, procs, run, requested, 100, alpha=0.2, thetas=[2.0, 20.0], selector="ucb",
            rng=online_rng(1, "KTH-slice", row["week"], 0.2), start_s=start_s,
            period_s=86400.0, tau_s=TAU_S, balance=row["balance"], job_id=ids,
        )  # fmt: skip
        sim = result.simulation
        figures = run_figures(submit, sim.start_s, run, procs, 100, tau_s=TAU_S,
                              wasted_proc_s=sim.wasted_proc_s)  # fmt: skip
        assert {name: row[name] for name in RUN_FIGURES} == {
            name: getattr(figures, name) for name in RUN_FIGURES
        }
