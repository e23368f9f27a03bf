"""The memory-aware cluster study through Snakemake for real, on the tiny config's LANL-CM5
slice (resources/LANL-CM5-tiny.swf.gz: the header and the first 1,500 jobs)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml
from support.png import png_text
from support.tiny_project import (
    ROOT,
    plan_in_process,
    planned_jobs,
    study_project,
    write_config,
)

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import read_csv

pytestmark = pytest.mark.workflow

MEMORY = "results/memory"
VARIANTS = {"none", "perceptron-implicit", "perceptron-explicit", "history"}


@pytest.fixture
def study(tiny_study: Path) -> Path:
    """The session's tiny study (every study; the memory study's files are those of a run of
    it alone)."""
    return tiny_study


def test_bundled_slices_match_their_checksums() -> None:
    tiny = yaml.safe_load((ROOT / "config" / "tiny.yaml").read_text())["traces"]
    catalogue = yaml.safe_load((ROOT / "config" / "traces.yaml").read_text())["traces"]
    for name, entries in (("LANL-CM5-tiny", tiny), ("LANL-CM5-slice", catalogue)):
        data = (ROOT / "resources" / f"{name}.swf.gz").read_bytes()
        assert entries[name]["sha256"] == hashlib.sha256(data).hexdigest(), name


def test_filter_report(study: Path) -> None:
    report = json.loads((study / f"{MEMORY}/LANL-CM5-tiny/filter_report.json").read_text())
    # missing_memory: fill (the default): the jobs without memory fields are kept, filled
    assert report["jobs_in"] == 1500 and report["removed_no_used_memory"] == 0
    assert report["filled_used_memory"] == 446 and report["filled_requested_memory"] == 99
    assert report["removed_no_requested_memory"] == 0 and report["raised_under_request"] == 221
    assert report["jobs_out"] == report["jobs_simulated"] == 1500
    assert report["provenance"]["step"] == "studies.memory.steps.filter_memory_jobs"
    table = read_csv(study / f"{MEMORY}/tables/filter.csv")
    assert table["jobs_out"].to_list() == [1500]


def test_runs(study: Path) -> None:
    runs = pl.read_parquet(study / f"{MEMORY}/runs.parquet")
    # per (kind, scheduler, load or size): the baseline once and 3 variants x 2 seeds
    assert runs.height == 2 * 2 * 2 * (1 + 3 * 2)
    assert set(runs["variant"]) == VARIANTS and set(runs["scheduler"]) == {"fcfs", "easy"}
    loads = runs.filter(pl.col("kind") == "load")
    assert set(loads["load"]) == {0.6, 1.0}
    assert ((loads["offered_load"] - loads["load"]).abs() < 1e-9).all()
    assert set(runs.filter(pl.col("kind") == "sweep")["second_memory_mb"]) == {8.0, 32.0}
    assert (runs["jobs"] == 1500).all() and (runs["nodes"] == 1024).all()
    # failed runs count in the total utilisation only; the baseline never fails
    assert (runs["utilisation"] <= runs["utilisation_with_waste"] + 1e-12).all()
    base = runs.filter(pl.col("variant") == "none")
    assert (base["failed_runs"] == 0).all() and (base["seed"] == 0).all()
    assert runs.filter(pl.col("variant") != "none")["failed_runs"].sum() > 0
    # the perceptron learns on the two-class machine: its final weights are not all zero (on
    # one class of 32 MB nothing can fail, so implicit feedback never corrects it)
    perceptron = loads.filter(pl.col("estimator") == "perceptron")
    assert (perceptron.select(pl.sum_horizontal(pl.col("^w_.*$").abs())).to_series() > 0).all()


def test_tables_and_figures(study: Path) -> None:
    summary = read_csv(study / f"{MEMORY}/tables/summary.csv")
    assert summary.height == 2 * len(VARIANTS) * 2
    paper = read_csv(study / f"{MEMORY}/tables/paper.csv")
    assert set(paper["paper"].fill_nan(None).drop_nulls().to_list()) == {33.0, 31.0, 0.5}
    assert (paper.filter(pl.col("quantity").str.starts_with("utilisation"))["load"] == 1.0).all()
    assert (study / f"{MEMORY}/tables/paper.md").read_text().startswith("# The paper vs")
    published = read_csv(study / f"{MEMORY}/tables/published.csv")
    # the FCFS literal variants: every claim but the filter's once per matching variant
    assert set(published["variant"].to_list()) == {"perceptron-implicit", "perceptron-explicit", ""}
    assert published.filter(pl.col("variant") == "")["schedlab"].to_list() == [0.0]
    gain = published.filter(pl.col("quantity").str.starts_with("effective utilisation gain"))
    assert sorted(gain["paper"].to_list()) == ["31", "33"] and gain["schedlab"].is_finite().all()
    assert (study / f"{MEMORY}/tables/published.md").read_text().startswith("# Yom-Tov")
    for name in ("utilisation", "slowdown", "weights", "failures", "memory_sweep",
                 "paper_utilisation", "paper_slowdown"):  # fmt: skip
        png = study / f"{MEMORY}/figures/{name}.png"
        assert png.stat().st_size > 10_000, name
        step = '"step": "studies.memory.steps.memory_figure"'
        assert step in png_text(png)["Description"], name
    log = (study / "logs/memory/LANL-CM5-tiny/runs/fcfs/load-1.log").read_text()
    assert "7 runs of 1,500 jobs" in log


def test_a_new_load_runs_two_jobs(study: Path, tmp_path: Path) -> None:
    # (the finished study plans nothing: test_workflow.py's test_rerun_does_nothing)
    copy = tmp_path / "copy"
    shutil.copytree(study, copy, symlinks=True)
    config = yaml.safe_load((copy / "tiny.yaml").read_text())
    config["memory"]["loads"] = [0.6, 0.8, 1.0]
    write_config(copy, config)
    jobs = planned_jobs(copy)
    assert jobs["memory_simulate"] == 2 and jobs["memory_tables"] == 1
    assert "memory_sweep" not in jobs and "memory_filter" not in jobs


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"estimators": ["none", "perceptron"]}, "memory.estimators: 'perceptron' needs"),
        ({"loads": [0.5], "saturation_load": 0.9}, "memory.saturation_load"),
        ({"traces": ["NOPE"]}, "unknown trace 'NOPE'"),
    ],
)
def test_bad_config_is_refused(tmp_path: Path, kth_path: Path, change: dict, message: str) -> None:
    """Planned in this process as the Snakefile plans (test_workflow_config.py runs Snakemake on
    refused configs: the same error stops it before any job)."""
    project = study_project(tmp_path, kth_path, "memory", **change)
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        plan_in_process(project)
