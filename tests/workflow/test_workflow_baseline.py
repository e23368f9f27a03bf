"""The configured baseline and reference: a tiny study whose tuning baseline is EASY-SPF-FCFS and
whose online reference is EASY(SPF, 40 h) names them in its tables and figures."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from support.png import png_text
from support.tiny_project import (
    make_project,
    shared_project,
    tiny_config,
    write_config,
)

from scheduler.core.provenance import read_csv

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="session")
def spf_study(tmp_path_factory: pytest.TempPathFactory, kth_path: Path) -> Path:
    """A tiny study whose tuning baseline is EASY-SPF-FCFS and online reference EASY(SPF, 40 h),
    run once per session."""

    def make(folder: Path) -> Path:
        project = make_project(folder, kth_path)
        config = tiny_config(
            folder / "mirror",
            baseline={"primary": "SPF", "backfill": "FCFS", "threshold": "none"},
            weeks_per_split=2,
        )
        config["online"].update(reference="SPF", periods=["1d"], selectors=["full", "bandit"])
        config["online"]["epsilons"] = [0.1]
        config["studies"] = ["tuning", "online"]  # the two studies with a baseline or reference
        write_config(project, config)
        return project

    return shared_project(tmp_path_factory, "spf-baseline", make)


def test_the_configured_baseline_names_tables_and_figures(spf_study: Path) -> None:
    summary = read_csv(spf_study / "results/tuning/tables/KTH-slice_summary.csv")
    base = summary.filter(
        (pl.col("primary") == "SPF")
        & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )
    assert base.height == 2 and base["mean_relative_avg_wait"].to_list() == [1.0, 1.0]
    fcfs = summary.filter(
        (pl.col("primary") == "FCFS")
        & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )
    assert fcfs["mean_relative_avg_wait"].to_list() != [1.0, 1.0]
    for table in ("KTH-slice_summary.md", "protocol.md", "whole_log.md"):
        text = (spf_study / "results/tuning/tables" / table).read_text()
        assert "EASY-SPF-FCFS" in text and "EASY-FCFS-FCFS" not in text.split("<!--")[0]
    weekly = pl.read_parquet(spf_study / "results/tuning/KTH-slice/weekly.parquet")
    rows = weekly.filter((pl.col("primary") == "SPF") & (pl.col("backfill") == "FCFS"))
    assert rows.filter(pl.col("threshold") == "none")["relative_avg_wait"].unique().to_list() == [
        1.0
    ]
    # the figures' text is drawn, not stored: their provenance metadata names the baseline
    for figure in ("train_test_pairs.png", "KTH-slice/pairs_worst_max_wait.png"):
        record = json.loads(png_text(spf_study / "results/tuning/figures" / figure)["Description"])
        config = json.loads(record["config"])
        baseline = config["baseline"]
        assert baseline["primary"] == "SPF" and baseline["backfill"] == "FCFS", record


def test_the_configured_reference_names_online_tables_and_figures(spf_study: Path) -> None:
    changes = read_csv(spf_study / "results/online/tables/changes.csv")
    reference = changes.filter(pl.col("strategy") == "fixed:SPF")
    assert reference.height == 1 and reference["relative_change"].to_list() == [0.0]
    fcfs = changes.filter(pl.col("strategy") == "fixed:FCFS")
    assert fcfs["relative_change"].to_list() != [0.0]
    for table in ("strategies.md", "fixed_policies.md"):
        text = (spf_study / "results/online/tables" / table).read_text().split("<!--")[0]
        assert "EASY(SPF, 40 h)" in text and "EASY(FCFS" not in text
    record = json.loads(
        png_text(spf_study / "results/online/figures/KTH-slice/fixed_improvement.png")[
            "Description"
        ]
    )
    assert "SPF" in record["config"], record
