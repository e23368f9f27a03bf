"""The learned-priority-function study through Snakemake for real, on the tiny config: the
chain model -> tuples -> trials -> scores -> fit -> learned policies -> evaluation."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml
from support.png import png_text
from support.tiny_project import (
    make_project,
    plan_in_process,
    planned_jobs,
    snakemake,
    study_project,
    write_config,
)

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import read_csv, read_parquet_provenance

pytestmark = pytest.mark.workflow


@pytest.fixture
def study(tiny_study: Path) -> Path:
    """The session's tiny study (every study; the learned study's files are those of a run of
    it alone)."""
    return tiny_study


def test_scores_and_fit(study: Path) -> None:
    results = study / "results/learned"
    scores = pl.concat([pl.read_parquet(p) for p in sorted(results.glob("scores/*.parquet"))])
    # tiny: 4 tuples of 32 queue jobs, each job's score a share of the trials' summed AVEbsld
    assert scores.height == 4 * 32 and scores["tuple"].n_unique() == 4
    sums = scores.group_by("tuple").agg(pl.col("score").sum())["score"]
    assert ((sums - 1.0).abs() < 1e-9).all()  # eq. 3: the scores of a tuple add up to 1
    forms = read_csv(results / "tables/forms.csv")
    assert forms.height == 576 and forms["rank"].min() == 1
    functions = pl.read_parquet(results / "functions.parquet")
    assert functions["rank"].to_list() == [1, 2]
    record = read_parquet_provenance(results / "scores/batch0.parquet")
    assert record["config"]["trials"] == 500 and "versions" in record


def test_evaluation_runs_every_policy_and_learned_function(study: Path) -> None:
    table = read_csv(study / "results/learned/tables/evaluation.csv")
    assert set(table["policy"]) == {"FCFS", "SPF", "F1", "LF1", "LF2"}
    assert set(table["workload"]) == {"model-256", "KTH-slice"}
    assert set(table["mode"]) == {"runtime", "estimate", "backfilling"}
    assert (table["sequences"] == 2).all() and (table["median_avg_bsld"] >= 1).all()
    # FCFS ignores the estimates: its runtime and estimate modes are the same schedule
    fcfs = table.filter(pl.col("policy") == "FCFS").sort("workload", "mode")
    by_mode = {(r["workload"], r["mode"]): r["median_avg_bsld"] for r in fcfs.iter_rows(named=True)}
    assert by_mode[("KTH-slice", "runtime")] == by_mode[("KTH-slice", "estimate")]


def test_figures_are_real_images(study: Path) -> None:
    figures = study / "results/learned/figures"
    for name in ("convergence", "evaluation", "function_1", "function_2", "week"):
        png = figures / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert '"step":' in png_text(png)["Description"], name


def test_more_tuples_simulate_only_the_new_ones_and_refit(study: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(study, copy, symlinks=True)
    config = yaml.safe_load((copy / "tiny.yaml").read_text())
    config["learned"]["tuples"] = 6  # a third batch of 2 tuples
    write_config(copy, config)
    jobs = planned_jobs(copy)
    assert jobs["learned_scores"] == 1 and jobs["learned_tuples"] == 1
    assert jobs["learned_fit"] == 1 and jobs["learned_evaluate"] == 2
    assert "learned_model" not in jobs and "learned_convergence" not in jobs


def test_learned_functions_are_policies_of_the_tuning_study(tmp_path: Path, kth_path: Path) -> None:
    """LF1 in the tuning study's policies: its simulations wait for the fit (a dry run plans
    the learned chain before them)."""
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["studies"] = ["tuning", "learned"]
    config["tuning"]["primary_policies"] = ["FCFS", "LF1"]
    write_config(project, config)
    jobs = planned_jobs(project)
    # train/test: 2 splits x 4 pairs x 2 batches; the whole-log weeks of the figures: 4 pairs
    # x 2 batches
    assert jobs["learned_fit"] == 1 and jobs["simulate_batch"] == 2 * 4 * 2 + 4 * 2
    # without the learned study, LF1 is an unknown policy, named with its key
    config["studies"] = ["tuning"]
    write_config(project, config)
    done = snakemake(project, "--dry-run", check=False)
    assert done.returncode != 0 and "unknown policy 'LF1'" in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"trials": 0}, "config learned.trials: must be >= 1"),  # the schema names the key
        ({"evaluation": {"workloads": ["NOPE"]}}, "unknown trace 'NOPE'"),
        ({"evaluation": {"policies": ["FCFS", "XYZ"]}}, "unknown policy 'XYZ'"),
    ],
)
def test_bad_config_is_refused_before_anything_runs(
    tmp_path: Path, kth_path: Path, change: dict, message: str
) -> None:
    """Planned in this process as the Snakefile plans (test_workflow_config.py runs Snakemake on
    refused configs: the same error stops it before any job)."""
    project = study_project(tmp_path, kth_path, "learned", **change)
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        plan_in_process(project)
