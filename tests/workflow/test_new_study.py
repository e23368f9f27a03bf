"""A seventh study is its own files: the example study of tests/support/example_study (its
package folder, rules file and caption) copied into a copy of the project, registered, planned
and run by Snakemake, then removed, with no other file of the project edited."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml
from support.tiny_project import ROOT, make_project, snakemake, write_config

from scheduler.core.provenance import read_csv, read_parquet_provenance

pytestmark = pytest.mark.workflow

TEMPLATE = ROOT / "tests" / "support" / "example_study"


def tree_digest(*roots: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file below ``roots`` (caches and results aside)."""
    skip = ("__pycache__", ".snakemake", "results", "logs", "benchmarks", "resources/traces")
    digest = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root).as_posix()
            if path.is_file() and not any(part in relative for part in skip):
                digest[f"{root.name}/{relative}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


def scheduler_command(package: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(package)}
    # run from the package's folder: `python -m` puts the working directory first on sys.path
    return subprocess.run([sys.executable, "-m", "scheduler", *args], capture_output=True,
                          text=True, env=env, check=True, timeout=300, cwd=package)  # fmt: skip


def test_a_new_study_is_only_its_own_files(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    package = tmp_path / "package"
    shutil.copytree(ROOT / "scheduler", package / "scheduler",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    original_config = (project / "tiny.yaml").read_text()
    before = tree_digest(project, package)
    added = [path.relative_to(TEMPLATE) for path in TEMPLATE.rglob("*") if path.is_file()]
    added = [path for path in added if path.name != "README.md"]
    for relative in added:
        home = package if relative.parts[0] == "scheduler" else project
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(TEMPLATE / relative, home / relative)

    # registered: its section is in the generated configuration reference
    reference = scheduler_command(package, "config-reference").stdout
    assert "### Example (`example:`)" in reference and "`example.factor`" in reference

    # planned and run, with a config section of its own
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["studies"] = ["example"]
    config["example"] = {"factor": 3}
    write_config(project, config)
    snakemake(project, pythonpath=package)
    counts = read_csv(project / "results" / "example" / "tables" / "counts.csv")
    filtered = pl.read_parquet(project / "results" / "KTH-slice" / "filtered.parquet")
    assert counts.rows() == [("KTH-slice", filtered.height, 3.0 * filtered.height)]
    example = project / "results" / "example"
    record = read_parquet_provenance(example / "KTH-slice" / "count.parquet")
    assert record["step"] == "studies.example.steps.count_jobs"
    assert record["config"] == {"trace": "KTH-slice", "factor": 3.0}
    assert (project / "logs" / "example" / "KTH-slice" / "count.log").is_file()
    report = snakemake(project, "--report", str(tmp_path / "report.html"), pythonpath=package)
    assert report.returncode == 0 and "counts" in (tmp_path / "report.html").read_text()

    # removed: the project is file for file what it was, and the other studies still plan
    for relative in added:
        home = package if relative.parts[0] == "scheduler" else project
        (home / relative).unlink()
    shutil.rmtree(package / "scheduler" / "studies" / "example")
    shutil.rmtree(project / "workflow" / "report" / "example")
    (project / "tiny.yaml").write_text(original_config)
    assert tree_digest(project, package) == before
    done = snakemake(project, "--dry-run", pythonpath=package)
    assert "example" not in done.stdout and "simulate_batch" in done.stdout
