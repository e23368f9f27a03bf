"""The memory study's representative week (scheduler.studies.memory.week and the step
memory_week): the estimator drawn is the one that changes the mean bounded slowdown most, the
week the one where the two runs differ most, the figure carries its provenance."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.png import png_text

from scheduler.core.errors import ConfigurationError
from scheduler.core.steps import read_table
from scheduler.studies.common.gantt import WEEK_S
from scheduler.studies.memory import steps as memory_steps
from scheduler.studies.memory.week import week_estimator, week_runs

LANL_TINY = Path(__file__).resolve().parents[3] / "resources" / "LANL-CM5-tiny.swf.gz"
CELL = {"trace": "T", "scheduler": "easy", "load": 1.0, "seed": 0}


def runs_table(rows: list[tuple[str, int, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        [{"kind": "load", "trace": "T", "scheduler": "easy", "load": 1.0, "variant": variant,
          "seed": seed, "avg_bsld": bsld} for variant, seed, bsld in rows]
    )  # fmt: skip


def test_the_estimator_that_changes_the_slowdown_most() -> None:
    runs = runs_table([("none", 0, 10.0), ("a", 0, 12.0), ("b", 0, 5.0), ("b", 1, 10.0),
                       ("c", 0, 15.0)])  # fmt: skip
    assert week_estimator(runs, ["a", "b", "c"], **CELL) == "b"  # |5 - 10| first, then c
    assert week_estimator(runs, ["a", "c"], **CELL) == "c"
    assert week_estimator(runs, ["c", "b"], **CELL) == "c"  # a tie: the config's order
    assert week_estimator(runs, ["x"], **CELL) == "x"  # no run of it: the first
    with pytest.raises(ConfigurationError, match="no baseline run"):
        week_estimator(runs, ["a"], **{**CELL, "scheduler": "fcfs"})
    with pytest.raises(ConfigurationError, match="no estimator"):
        week_estimator(runs, [], **CELL)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The tiny LANL-CM5 log filtered, its runs at one load, the week of one small machine
    (two classes of 64 nodes: the log at load 0.3 spans weeks there)."""
    folder = tmp_path_factory.mktemp("memory-week")
    paths = {name: str(folder / name) for name in ("jobs.parquet", "runs.parquet", "week.png",
                                                   "week.pdf", "week.log")}  # fmt: skip
    memory_steps.filter_memory_jobs(str(LANL_TINY), paths["jobs.parquet"],
                                    str(folder / "report.json"), trace="T", machine_nodes=128,
                                    largest_node_kb=32 * 1024.0, under_request="raise",
                                    missing_memory="fill", slice_jobs=None)  # fmt: skip
    machine = {"class_nodes": [64, 64], "class_memory_mb": [32.0, 8.0], "memory_limit": "node",
               "max_failures": 50, "load": 0.3, "scheduler": "easy"}  # fmt: skip
    memory_steps.simulate_batch(paths["jobs.parquet"], paths["runs.parquet"], kind="load",
                                trace="T", variants=["none", "history"], seeds=[0],
                                **machine)  # fmt: skip
    memory_steps.memory_week(paths["jobs.parquet"], paths["runs.parquet"], paths["week.png"],
                             paths["week.pdf"], trace="T", estimators=["history"], seed=0,
                             log_path=paths["week.log"], **machine)  # fmt: skip
    return paths | {"machine": json.dumps(machine)}


def test_the_week_is_the_one_that_differs_most(study: dict[str, str]) -> None:
    machine = json.loads(study["machine"])
    machine.pop("load"), machine.pop("scheduler")
    baseline, other = week_runs(read_table(study["jobs.parquet"]), "history", load=0.3,
                                scheduler="easy", seed=0, **machine)  # fmt: skip
    assert other.summary.failed_runs > 0  # the estimator changed the schedule
    # the week by hand: weeks from the first submission, |mean bsld - mean bsld| per week
    first = float(baseline.jobs["submit_s"].min())
    pair = baseline.jobs.join(other.jobs, on="job_id", suffix="_other")
    week = np.floor((pair["submit_s"].to_numpy() - first) / WEEK_S).astype(int)
    gaps = [abs(pair["bsld"].to_numpy()[week == k].mean()
                - pair["bsld_other"].to_numpy()[week == k].mean())
            for k in range(week.max() + 1) if (week == k).any()]  # fmt: skip
    assert week.max() >= 1  # several weeks to choose from
    best = int(np.argmax(gaps))
    start = first + best * WEEK_S
    assert f"week [{start:.0f}, {start + WEEK_S:.0f}) s" in Path(study["week.log"]).read_text()


def test_the_figures_carry_their_provenance(study: dict[str, str]) -> None:
    record = json.loads(png_text(Path(study["week.png"]))["Description"])
    assert record["step"] == "studies.memory.steps.memory_week"
    assert json.loads(record["config"])["estimators"] == ["history"]
    assert Path(study["week.pdf"]).read_bytes()[:5] == b"%PDF-"
