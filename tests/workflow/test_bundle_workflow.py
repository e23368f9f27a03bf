"""How jobs run does not change what they write. The config key ``bundle`` (for clusters, where
every job pays Snakemake's start-up): bundled jobs write the same files, byte for byte, as one
job each, and rerun as bundles. The config key ``step_processes`` (local runs): the steps run in
a pool of worker processes or in Snakemake's threads, same files byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from workflow.test_workflow import (
    make_project,
    planned_jobs,
    result_files,
    snakemake,
    write_config,
)

pytestmark = pytest.mark.workflow


RUNS: dict[str, str] = {}


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory, kth_path: Path) -> tuple[Path, Path]:
    """The tiny queue-tuning and online studies run with one job each (bundle 1) and with
    bundles of 3 (4 pairs per split: bundles of 3 and 1 pair), both with the step pool (the
    default); and with one job each and every step in Snakemake's threads (RUNS: their
    Snakemake output)."""
    fine = make_project(tmp_path_factory.mktemp("fine"), kth_path)
    config = yaml.safe_load((fine / "tiny.yaml").read_text())
    config["studies"] = ["tuning", "online"]
    write_config(fine, config)
    bundled = tmp_path_factory.mktemp("bundled") / "project"
    shutil.copytree(fine, bundled, symlinks=True)
    write_config(bundled, {**config, "bundle": 3})
    threads = tmp_path_factory.mktemp("threads") / "project"
    shutil.copytree(fine, threads, symlinks=True)
    write_config(threads, {**config, "step_processes": False})
    for name, project in (("fine", fine), ("bundled", bundled), ("threads", threads)):
        done = snakemake(project)
        RUNS[name] = done.stdout + done.stderr
    RUNS["threads_project"] = str(threads)
    return fine, bundled


def test_steps_in_worker_processes_write_the_same_files_as_in_threads(
    projects: tuple[Path, Path],
) -> None:
    fine, _ = projects
    pool_line = "Steps run in a pool of 2 worker processes (config key step_processes)."
    assert pool_line in RUNS["fine"] and pool_line in RUNS["bundled"]
    assert "worker processes" not in RUNS["threads"]
    fine_files = result_files(fine)
    thread_files = result_files(Path(RUNS["threads_project"]))
    assert sorted(fine_files) == sorted(thread_files)
    assert len(fine_files) > 100
    different = [name for name in fine_files if fine_files[name] != thread_files[name]]
    assert not different


def test_bundles_write_the_same_files_as_single_jobs(projects: tuple[Path, Path]) -> None:
    fine, bundled = projects
    fine_files, bundled_files = result_files(fine), result_files(bundled)
    assert sorted(fine_files) == sorted(bundled_files)
    assert sum("/sims/" in name for name in fine_files) == 2 * 4 * 2 + 4 * 2
    assert any(name.endswith("protocol.csv") for name in fine_files)
    assert any("/online/" in name and "/choices/" in name for name in fine_files)
    different = [name for name in fine_files if fine_files[name] != bundled_files[name]]
    assert not different
    # the bundled run ran bundles (its benchmarks are per bundle and per replica), and wrote
    # every bundled job's own log
    assert sorted((bundled / "benchmarks/online/KTH-slice").glob("replica*.tsv"))
    bundles = sorted((bundled / "benchmarks/tuning/KTH-slice/sims").rglob("bundle*/batch*.tsv"))
    # (train, test, whole) x 2 bundles (3 + 1 pairs; whole: the figures' 4 pairs) x 2 batches
    assert len(bundles) == 3 * 2 * 2
    logs = sorted((bundled / "logs/tuning/KTH-slice/sims").rglob("batch*.log"))
    assert len(logs) == (2 * 4 + 4) * 2
    assert all("weeks" in log.read_text() for log in logs)


def test_bundles_rerun_as_wholes(projects: tuple[Path, Path], tmp_path: Path) -> None:
    _, bundled = projects
    assert planned_jobs(bundled) == {}
    project = tmp_path / "copy"
    shutil.copytree(bundled, project, symlinks=True)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    # a new threshold: every pair of train and test runs again, in its bundle (2 per split
    # and batch), not the whole-log weeks' bundles nor the online replicas
    config["tuning"]["thresholds"] = ["none", "20h", "40h"]
    write_config(project, config)
    jobs = planned_jobs(project)
    bundles = {rule: n for rule, n in jobs.items() if rule.startswith("simulate_")}
    assert bundles == {
        f"simulate_bundle_{split}_{k}": 2 for split in ("train", "test") for k in (0, 1)
    }, jobs
    assert "online_replica" not in jobs and "resample_weeks" not in jobs
    # one job per replica when only the online study changes
    config["tuning"]["thresholds"] = ["none", "20h"]
    config["online"]["threshold_backfill"] = False
    write_config(project, config)
    assert planned_jobs(project)["online_replica"] == 2


def test_switching_bundle_on_a_finished_study(projects: tuple[Path, Path], tmp_path: Path) -> None:
    """Other rules with other params make the simulations: Snakemake plans them again unless
    told to look at modification times only (config/README.md)."""
    fine, _ = projects
    project = tmp_path / "copy"
    shutil.copytree(fine, project, symlinks=True)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    write_config(project, {**config, "bundle": 3})
    jobs = planned_jobs(project)
    assert jobs["online_replica"] == 2 and "simulate_bundle_train_0" in jobs, jobs
    done = snakemake(project, "--dry-run", "--rerun-triggers", "mtime")
    assert "Nothing to be done" in done.stdout + done.stderr


@pytest.mark.parametrize("value", [0, "25"])
def test_a_bad_bundle_is_refused_naming_the_key(tmp_path: Path, kth_path: Path, value) -> None:
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    write_config(project, {**config, "bundle": value})
    done = snakemake(project, "--dry-run", check=False)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "bundle" in output and "ValidationError" in output, output
    assert not (project / "results").exists()
