"""The learned study's representative week (steps.draw_week): EASY with FCFS and with the
rank-1 learned function on a whole workload, here the raw KTH slice and a fit file whose rank 1
is the paper's F1."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.png import png_text

from scheduler.policies.learned import FIT_COLUMNS, unregister_learned
from scheduler.studies.common.gantt import WEEK_S
from scheduler.studies.learned import steps as learned_steps
from scheduler.studies.learned.evaluation import evaluation_jobs, simulate_workload
from scheduler.studies.learned.plan import learned_plan
from scheduler.traces.swf import read_swf

REPO = Path(__file__).resolve().parents[3]
KTH_SLICE = REPO / "resources" / "KTH-slice.swf.gz"
#: F1 of the paper as a fit-file row: log10(r) * n + 870 * log10(s).
F1_ROW = {"alpha": "log10", "beta": "x", "gamma": "log10", "op1": "*", "op2": "+", "c1": 1.0,
          "c2": 1.0, "c3": 870.0}  # fmt: skip


@pytest.fixture
def functions_path(tmp_path: Path) -> Iterator[Path]:
    """A fit file whose rank-1 function is F1; LF1 is unregistered after the test."""
    schema = {name: {"int": pl.Int64, "str": pl.String, "float": pl.Float64}[kind]
              for name, kind in FIT_COLUMNS}  # fmt: skip
    path = tmp_path / "functions.parquet"
    pl.DataFrame([{"rank": 1, **F1_ROW, "mae": 0.0, "duplicate_of": None}],
                 schema=schema).write_parquet(path)  # fmt: skip
    yield path
    unregister_learned("LF1")


def test_the_plan_draws_fcfs_against_lf1_on_the_first_workload() -> None:
    plan = learned_plan({"learned": {}})
    assert plan.week_inputs() == {
        "workload_path": "results/learned/model/model-256.parquet",
        "functions_path": "results/learned/functions.parquet",
    }
    settings = plan.week_settings()
    assert (settings["baseline"], settings["learned"]) == ("FCFS", {"LF1": 1})
    assert "results/learned/figures/week.png" in plan.targets()


def test_draw_week_draws_fcfs_and_the_learned_function(
    tmp_path: Path, functions_path: Path
) -> None:
    png, pdf, log = tmp_path / "week.png", tmp_path / "week.pdf", tmp_path / "week.log"
    learned_steps.draw_week(
        str(KTH_SLICE), str(functions_path), str(png), str(pdf), workload="KTH-slice",
        machine_procs=None, allocated_only=False, baseline="FCFS", learned={"LF1": 1},
        log_path=str(log),
    )  # fmt: skip
    assert png.stat().st_size > 10_000 and pdf.read_bytes()[:5] == b"%PDF-"
    record = json.loads(png_text(png)["Description"])
    assert record["step"] == "studies.learned.steps.draw_week"
    assert json.loads(record["resolved_machine_procs"]) == 100
    # LF1 is F1 here: the week logged is the largest gap in mean bsld of FCFS and F1 (NumPy)
    jobs = evaluation_jobs(read_swf(KTH_SLICE).jobs)
    fcfs, f1 = (simulate_workload(jobs, policy, 100).jobs for policy in ("FCFS", "F1"))
    assert fcfs["job_id"].to_list() == f1["job_id"].to_list()
    submit = fcfs["submit_s"].to_numpy()
    week = ((submit - submit.min()) // WEEK_S).astype(np.int64)
    a, b = fcfs["bsld"].to_numpy(), f1["bsld"].to_numpy()
    gaps = [abs(a[week == k].mean() - b[week == k].mean()) for k in range(week.max() + 1)]
    assert max(gaps) > 0
    start = submit.min() + int(np.argmax(gaps)) * WEEK_S
    found = re.search(r"week \[(\d+), (\d+)\) s", log.read_text())
    assert found is not None and (float(found[1]), float(found[2])) == (start, start + WEEK_S)
