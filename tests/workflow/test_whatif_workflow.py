"""The what-if study through Snakemake for real (the session's tiny study: the example site,
two resampled weeks, three replicates, a Slurm change and a research policy)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.png import png_text
from support.tiny_project import copy_with, planned_jobs

from scheduler.core.provenance import read_csv
from scheduler.studies.whatif.figures import queue_series, week_figure

pytestmark = pytest.mark.workflow

NAMES = ["baseline", "bf_window=1h", "policy=EASY-FCFS-FCFS"]


def test_summary_ranks_every_alternative_with_intervals(tiny_study: Path) -> None:
    summary = read_csv(tiny_study / "results/whatif/tables/summary.csv")
    assert summary["alternative"][0] == "baseline" and sorted(summary["alternative"]) == sorted(
        NAMES
    )
    rest = summary[1:]
    assert rest["rel_avg_wait_s"].to_list() == sorted(rest["rel_avg_wait_s"].to_list())
    assert (rest["replicates"] == 2).all() and (rest["source_weeks"] >= 2).all()
    assert (rest["rel_avg_wait_s_low"] <= rest["rel_avg_wait_s_high"]).all()
    assert rest["p_holm"].is_finite().all() and (rest["p_holm"] >= rest["p_value"]).all()
    assert (summary["jain_users"] > 0).all() and (summary["jain_users"] <= 1).all()
    assert (summary["median_wait_s"] <= summary["p90_wait_s"]).all()
    assert (summary["p90_wait_s"] <= summary["p99_wait_s"]).all()
    assert (summary["p99_wait_s"] <= summary["max_wait_s"] + 1e-9).all()
    text = (tiny_study / "results/whatif/tables/summary.md").read_text()
    assert text.startswith("# What each change would do") and "bf_window=1h" in text


def test_every_alternative_runs_on_the_same_jobs(tiny_study: Path) -> None:
    tables = [pl.read_parquet(tiny_study / f"results/whatif/sims/{n}/weeks.parquet") for n in NAMES]
    keys = [
        t.select("week_index", "job_id", "user_id", "procs", "submit_s", "run_s") for t in tables
    ]
    assert all(k.equals(keys[0]) for k in keys)
    assert not tables[0]["wait_s"].equals(tables[2]["wait_s"])  # the schedulers differ


def test_groups_and_users(tiny_study: Path) -> None:
    groups = read_csv(tiny_study / "results/whatif/tables/groups.csv")
    assert set(groups["scope"]) == {"size", "account", "user"}
    accounts = groups.filter(pl.col("scope") == "account")
    for _, part in accounts.group_by("alternative"):
        assert part["usage_share"].sum() == pytest.approx(1.0)
        assert part["configured_share"].sum() == pytest.approx(1.0)
    base = groups.filter(pl.col("alternative") == "baseline")
    assert (base["change_mean_wait_s"] == 0).all()
    users = read_csv(tiny_study / "results/whatif/tables/users.csv")
    assert set(users["alternative"]) == set(NAMES[1:])
    assert (
        users["change_mean_wait_s"] == users["mean_wait_s"] - users["baseline_mean_wait_s"]
    ).all()


def test_figures_exist_with_their_provenance(tiny_study: Path) -> None:
    for name in NAMES[1:]:
        for figure in ("sizes", "users", "week"):
            png = tiny_study / f"results/whatif/figures/{name}/{figure}.png"
            record = json.loads(png_text(png)["Description"])
            assert record["step"] == "studies.whatif.steps.alternative_figures"
            assert json.loads(record["config"])["alternative"] == name
    assert (tiny_study / "results/whatif/figures/ranking.png").stat().st_size > 10_000


def test_week_figure_draws_the_queue_it_is_given(tiny_study: Path) -> None:
    """The week figure's data: waiting jobs and busy fraction after each instant, as counted
    by hand from the per-job table (never above the machine, never negative)."""
    weeks = pl.read_parquet(tiny_study / "results/whatif/sims/baseline/weeks.parquet")
    week = weeks.filter(pl.col("week_index") == 1)
    series = queue_series(week, 64)
    submit = week["submit_s"].to_numpy()
    start = submit + week["wait_s"].to_numpy()
    end = start + week["run_s"].to_numpy()
    for row in series.sample(20, seed=1).iter_rows(named=True):
        t = row["time_s"]
        assert row["waiting"] == np.sum((submit <= t) & (start > t))
        busy = np.sum(week["procs"].to_numpy() * ((start <= t) & (end > t)))
        assert row["utilisation"] == pytest.approx(busy / 64)
    assert (series["utilisation"] <= 1 + 1e-12).all() and (series["waiting"] >= 0).all()
    plot = week_figure(week, week, alternative="x", week=1, machine_procs=64)
    assert set(plot.data["measure"]) == {"waiting jobs", "busy fraction of the machine"}


def test_a_new_value_simulates_only_its_alternative(tiny_study: Path, tmp_path: Path) -> None:
    """Adding a value to `try` plans the new alternative's simulations and nothing of the
    others' (the tables, the online choice and the figures are drawn again)."""
    tries = {"bf_window": ["1h", "2h"], "policy": ["EASY-FCFS-FCFS"]}
    project = copy_with(tiny_study, tmp_path, "whatif", **{"try": tries})
    jobs = planned_jobs(project)
    assert jobs["whatif_simulate"] == 1 and jobs["whatif_bootstrap"] == 1
    assert "whatif_jobs" not in jobs and "whatif_weeks" not in jobs
    assert jobs["whatif_tables"] == 1 and jobs["whatif_online"] == 1
