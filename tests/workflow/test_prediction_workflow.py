"""The run-time prediction study through Snakemake for real, on the tiny config's KTH slice and
a second copy of it (two logs, so the leave-one-log-out table and correlation figures exist)."""

from __future__ import annotations

import hashlib
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
    shared_project,
    snakemake,
    write_config,
)

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import read_csv, read_parquet_provenance
from scheduler.studies.prediction.steps import STUDY_FIGURES

pytestmark = pytest.mark.workflow


def prediction_project(tmp: Path, kth_path: Path, **section: object) -> Path:
    """The tiny project running the prediction study alone on KTH-slice and KTH-slice2 (the
    same jobs, under another name and URL)."""
    project = make_project(tmp, kth_path)
    mirror = tmp / "mirror"
    shutil.copy(mirror / "KTH-slice.swf.gz", mirror / "KTH-slice2.swf.gz")
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    digest = hashlib.sha256((mirror / "KTH-slice2.swf.gz").read_bytes()).hexdigest()
    config["traces"]["KTH-slice2"] = {
        "url": "https://archive.invalid/l_kth/KTH-slice2.swf.gz", "sha256": digest,
    }  # fmt: skip
    config["studies"] = ["prediction"]
    config["prediction"].update(traces=["KTH-slice", "KTH-slice2"], **section)
    write_config(project, config)
    return project


@pytest.fixture(scope="session")
def study(tmp_path_factory: pytest.TempPathFactory, kth_path: Path) -> Path:
    """The prediction study on its two logs, run once per session."""

    return shared_project(
        tmp_path_factory, "prediction", lambda folder: prediction_project(folder, kth_path)
    )


def test_runs_hold_every_triple_of_both_logs(study: Path) -> None:
    runs = pl.read_parquet(study / "results/prediction/runs.parquet")
    # tiny: requested, clairvoyant (never corrected) and ave2, nag-eloss (incremental) x
    # easy / sjbf, on two logs
    assert runs.height == 2 * 4 * 2
    assert set(runs["triple"]) == {
        f"{t}/{c}/{b}" for t, c in (("requested", "none"), ("clairvoyant", "none"),
                                     ("ave2", "incremental"), ("nag-eloss", "incremental"))
        for b in ("easy", "sjbf")
    }  # fmt: skip
    # the two logs are the same jobs: the same schedules
    by_trace = runs.sort("triple").partition_by("trace", as_dict=True)
    first, second = by_trace[("KTH-slice",)], by_trace[("KTH-slice2",)]
    assert first["avg_bsld"].to_list() == second["avg_bsld"].to_list()
    assert (runs.filter(pl.col("technique") == "clairvoyant")["mae_s"] == 0).all()
    assert (runs.filter(pl.col("technique") == "requested")["corrections"] == 0).all()
    assert (runs.filter(pl.col("technique") == "nag-eloss")["corrections"] > 0).all()
    record = read_parquet_provenance(study / "results/prediction/KTH-slice/runs/nag-eloss.parquet")
    assert record["config"]["learner"]["eta"] > 0 and "versions" in record


def test_the_filter_clips_overruns(study: Path) -> None:
    import json

    report = json.loads((study / "results/KTH-slice/filter_report-clip.json").read_text())
    assert report["overrun"] == "clip" and report["clipped_overrun"] > 0
    jobs = pl.read_parquet(study / "results/KTH-slice/filtered-clip.parquet")
    assert (jobs["run_s"] <= jobs["req_time_s"]).all()


def test_tables(study: Path) -> None:
    tables = study / "results/prediction/tables"
    best = read_csv(tables / "best_worst.csv")
    assert best.height == 2 and {"easy", "easy_pp", "best_sjbf_triple"} <= set(best.columns)
    assert (best["best_easy"] <= best["worst_easy"]).all()
    lolo = read_csv(tables / "lolo.csv")
    assert lolo.height == 2 and not lolo["triple"].str.starts_with("clairvoyant").any()
    errors = read_csv(tables / "errors.csv")
    assert set(errors["technique"]) == {"ave2", "nag-eloss"}
    assert "AVEbsld per log" in (tables / "best_worst.md").read_text()


def test_figures_are_real_images_with_provenance(study: Path) -> None:
    figures = study / "results/prediction/figures"
    names = [f"KTH-slice/{n}" for n in ("ecdf_error", "ecdf_value", "bsld_heatmap")]
    names += ["pair_correlation", "correlation_matrix"]
    for name in names:
        png = figures / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert (figures / f"{name}.pdf").read_bytes()[:5] == b"%PDF-", name
        assert '"step": "studies.prediction.steps.' in png_text(png)["Description"], name


def test_rerun_does_nothing_and_report_builds(study: Path) -> None:
    assert planned_jobs(study) == {}
    snakemake(study, "--report", "report.html")
    html = (study / "report.html").read_text(errors="replace")
    for name in ("best_worst.csv", "lolo.csv", "ecdf_error", "pair_correlation"):
        assert name in html


def test_adding_a_loss_reruns_only_its_simulations(study: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(study, copy, symlinks=True)
    config = yaml.safe_load((copy / "tiny.yaml").read_text())
    config["prediction"]["losses"] = ["eloss", "squared"]
    write_config(copy, config)
    jobs = planned_jobs(copy)
    assert jobs["simulate_technique"] == 2  # nag-squared on each log, nothing else simulated
    assert "filter_trace_overrun" not in jobs


def test_one_log_has_no_lolo_and_no_correlations(tmp_path: Path, kth_path: Path) -> None:
    """The study's targets planned in this process as the Snakefile plans them, with two logs
    and with one (Snakemake's dry run of one log plans every rule of the study but the
    correlation figures: test_workflow_config.py::test_dry_run_plans_the_whole_study)."""
    project = prediction_project(tmp_path, kth_path)
    two = set(plan_in_process(project)["prediction"].targets())
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["prediction"]["traces"] = ["KTH-slice"]
    write_config(project, config)
    one = set(plan_in_process(project)["prediction"].targets())
    several = {f"{figure}.{ext}" for figure in STUDY_FIGURES for ext in ("png", "pdf")}
    several |= {"lolo.csv", "lolo.md"}
    assert several <= {Path(path).name for path in two}, two
    assert not several & {Path(path).name for path in one}, one
    # the tables and KTH-slice's figures are kept
    assert one == {path for path in two if "KTH-slice2" not in path and Path(path).name
                   not in several}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"predictors": ["requested", "oracle"]}, "oracle"),
        ({"corrections": ["halving"]}, "halving"),
        ({"losses": ["over=squared,under=cubic,gamma=1"]}, "cubic"),
        ({"losses": ["elos"]}, "not key=value"),
    ],
)
def test_bad_names_are_refused_before_anything_runs(
    tmp_path: Path, kth_path: Path, change: dict, message: str
) -> None:
    """Planned in this process as the Snakefile plans (test_workflow_config.py runs Snakemake on
    refused configs: the same error stops it before any job)."""
    project = prediction_project(tmp_path, kth_path, **change)
    with pytest.raises(ConfigurationError, match=re.escape(message)) as refused:
        plan_in_process(project)
    assert "prediction." in str(refused.value)


def test_a_truncated_runs_file_stops_the_collect_step(study: Path, tmp_path: Path) -> None:
    """A damaged simulation output is refused by name; no half-written table is left (Snakemake
    removes the old output before the job; the step writes atomically)."""
    copy = tmp_path / "copy"
    shutil.copytree(study, copy, symlinks=True)
    target = copy / "results/prediction/KTH-slice/runs/ave2.parquet"
    target.write_bytes(target.read_bytes()[:50])
    before = (copy / "results/prediction/runs.parquet").read_bytes()
    done = snakemake(copy, "--forcerun", "prediction_runs", "results/prediction/runs.parquet",
                     check=False)  # fmt: skip
    assert done.returncode != 0
    assert "ave2.parquet" in done.stdout + done.stderr
    gathered = copy / "results/prediction/runs.parquet"
    assert not gathered.exists() or gathered.read_bytes() == before
    assert not list(gathered.parent.glob("*.tmp*")) and not list(gathered.parent.glob(".*runs*"))
