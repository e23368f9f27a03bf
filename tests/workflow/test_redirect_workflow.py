"""The redirection study through Snakemake for real, on the tiny config's KTH slice."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml
from support.png import png_text
from support.tiny_project import (
    plan_in_process,
    planned_jobs,
    snakemake,
    study_project,
    write_config,
)

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import read_csv

pytestmark = pytest.mark.workflow


@pytest.fixture
def study(tiny_study: Path) -> Path:
    """The session's tiny study (every study; the redirect study's files are those of a run of
    it alone)."""
    return tiny_study


def test_weeks_are_loaded_and_split(study: Path) -> None:
    weeks = read_csv(study / "results/redirect/tables/KTH-slice_weeks.csv")
    assert weeks.height == 2 and (weeks["load"] >= 0.3).all()
    assert weeks["split"].to_list() == ["train", "test"]
    assert (weeks["start_s"].diff().drop_nulls() >= 7 * 86400).all()


def test_grid_ratios_and_tuning(study: Path) -> None:
    grid = pl.read_parquet(study / "results/redirect/grid.parquet")
    # 2 weeks x (baseline + 2 alphas x 2 thetas x 2 balance options)
    assert grid.height == 2 * (1 + 2 * 2 * 2)
    runs = grid.filter(pl.col("alpha") > 0)
    assert (runs["redirections"] >= 0).all() and (runs["redirections"] > 0).any()
    # useful work never exceeds the work including the killed runs
    assert (runs["utilisation"] <= runs["utilisation_with_waste"] + 1e-12).all()
    # a smaller theta redirects at least as often, week by week, without load balancing
    free = runs.filter(~pl.col("balance")).sort("week", "alpha", "theta")
    for (_, _), part in free.group_by("week", "alpha"):
        counts = part.sort("theta")["redirections"].to_list()
        assert counts == sorted(counts, reverse=True)
    heat = read_csv(study / "results/redirect/tables/heatmap.csv")
    assert heat.height == 2 * 2 * 2 and (heat["weeks"] == 2).all()
    best = read_csv(study / "results/redirect/tables/best.csv")
    assert best.height == 2 and (best["test_weeks"] == 1).all()


def test_online_theta(study: Path) -> None:
    online = pl.read_parquet(study / "results/redirect/online.parquet")
    # 2 weeks x 2 alphas x 2 selectors (the defaults) x 2 balance options
    assert online.height == 2 * 2 * 2 * 2 and online["theta"].is_nan().all()
    assert set(online["selector"]) == {"bandit(eps=0.1)", "ucb"}
    # one theta per day from the week's start until the week drains, each from redirect.thetas
    assert (online["periods"] >= 7).all()
    for path, periods in online.select("theta_path", "periods").iter_rows():
        thetas = path.split(",")
        assert len(thetas) == periods and set(thetas) <= {"5", "20"}
    grid = pl.read_parquet(study / "results/redirect/grid.parquet")
    # the same jobs as the fixed-theta runs of the week
    jobs = grid.select("week", pl.col("jobs").alias("grid_jobs")).unique()
    assert jobs.height == 2
    joined = online.join(jobs, on="week")
    assert (joined["jobs"] == joined["grid_jobs"]).all()
    table = read_csv(study / "results/redirect/tables/online.csv")
    assert table.height == 2 * 2 * 2 and (table["test_weeks"] == 1).all()
    assert set(table["trained_theta"]) <= {5.0, 20.0}
    assert set(table["hindsight_theta"]) <= {5.0, 20.0}
    assert (study / "results/redirect/tables/online.md").read_text().startswith("# θ chosen")


def test_figures(study: Path) -> None:
    for name in ("heatmap_avg_bsld", "heatmap_max_bsld", "best_boxplot"):
        png = study / f"results/redirect/figures/{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        step = '"step": "studies.redirect.steps.redirect_figure"'
        assert step in png_text(png)["Description"], name


def test_a_new_alpha_runs_one_job(study: Path, tmp_path: Path) -> None:
    # (the finished study plans nothing: test_workflow.py's test_rerun_does_nothing)
    copy = tmp_path / "copy"
    shutil.copytree(study, copy, symlinks=True)
    config = yaml.safe_load((copy / "tiny.yaml").read_text())
    config["redirect"]["alphas"] = [0.1, 0.15, 0.2]
    write_config(copy, config)
    jobs = planned_jobs(copy)
    # only the new share is simulated (the largest share, which sets the jobs left out of
    # every run, is unchanged), then the tables and figures
    assert jobs["redirect_simulate"] == 1 and jobs["redirect_online"] == 1
    assert jobs["redirect_tables"] == 1 and "redirect_weeks" not in jobs


def test_new_online_selectors_rerun_only_the_online_runs(study: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(study, copy, symlinks=True)
    config = yaml.safe_load((copy / "tiny.yaml").read_text())
    config["redirect"]["online"] = {"selectors": ["thompson"], "period": "12h"}
    write_config(copy, config)
    jobs = planned_jobs(copy)
    assert jobs["redirect_online"] == 2 and jobs["redirect_tables"] == 1
    assert "redirect_simulate" not in jobs and "redirect_weeks" not in jobs


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"alphas": [0.0, 0.1]}, "alphas"),
        ({"thetas": [2.5]}, "thetas"),
        ({"traces": ["NOPE"]}, "unknown trace 'NOPE'"),
        ({"online": {"selectors": ["full"]}}, "unknown bandit spec 'full'"),
    ],
)
def test_bad_config_is_refused(tmp_path: Path, kth_path: Path, change: dict, message: str) -> None:
    """Planned in this process as the Snakefile plans (test_workflow_config.py runs Snakemake on
    refused configs: the same error stops it before any job)."""
    project = study_project(tmp_path, kth_path, "redirect", **change)
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        plan_in_process(project)


def test_too_high_a_minimum_load_stops_the_choice_of_weeks(tmp_path: Path, kth_path: Path) -> None:
    """No week reaches redirect.min_load: known only once the log is read, so the step that
    chooses the weeks stops, naming the key."""
    project = study_project(tmp_path, kth_path, "redirect", min_load=5.0)
    done = snakemake(project, check=False)
    assert done.returncode != 0 and "week(s) with offered load" in done.stdout + done.stderr
