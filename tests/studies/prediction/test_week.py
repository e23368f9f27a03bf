"""The prediction study's representative week: the triple drawn beside EASY
(stats.week_triple) and the step that draws them (steps.draw_week) on the bundled KTH slice."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from support.png import png_text

from scheduler.core.errors import ConfigurationError
from scheduler.sim.prediction import simulate_predicted
from scheduler.studies.common.gantt import WEEK_S
from scheduler.studies.prediction import steps as prediction_steps
from scheduler.studies.prediction.plan import Triple, prediction_plan
from scheduler.studies.prediction.stats import week_triple
from scheduler.traces import steps as trace_steps

REPO = Path(__file__).resolve().parents[3]
TRACE = "KTH-slice"
LEARNER = {"eta": 1.0, "lam": 0.0, "squares": True, "gamma_floor": 1.0}


def runs(*rows: tuple[str, str, str, float]) -> pl.DataFrame:
    return pl.DataFrame(
        [{"trace": TRACE, "technique": t, "correction": c, "backfill": b,
          "triple": f"{t}/{c}/{b}", "avg_bsld": v} for t, c, b, v in rows],
    )  # fmt: skip


def test_week_triple_is_the_best_real_prediction() -> None:
    table = runs(("requested", "none", "easy", 5.0), ("requested", "none", "sjbf", 2.0),
                 ("clairvoyant", "none", "sjbf", 1.0), ("ave2", "incremental", "sjbf", 3.0),
                 ("nag-eloss", "incremental", "easy", 3.0))  # fmt: skip
    # neither requested times nor clairvoyance; ties to the first label
    assert week_triple(table, TRACE) == Triple("ave2", "incremental", "sjbf")
    plain = table.filter(pl.col("technique").is_in(["requested", "clairvoyant"]))
    assert week_triple(plain, TRACE) == Triple("clairvoyant", "none", "sjbf")
    with pytest.raises(ConfigurationError, match="no simulated triple besides EASY"):
        week_triple(table.head(1), TRACE)
    with pytest.raises(ConfigurationError, match="week triple"):
        week_triple(table.drop("backfill"), TRACE)


def test_the_plan_draws_a_week_when_there_is_something_to_compare() -> None:
    catalogue = yaml.safe_load((REPO / "config" / "traces.yaml").read_text())
    plan = prediction_plan(catalogue | {"prediction": {"traces": ["KTH-SP2"]}})
    assert plan.draws_week and "results/prediction/figures/week.png" in plan.targets()
    assert plan.week_inputs()["filtered_path"] == "results/KTH-SP2/filtered-clip.parquet"
    alone = prediction_plan(catalogue | {"prediction": {
        "traces": ["KTH-SP2"], "predictors": ["requested"], "backfill": ["easy"]}})  # fmt: skip
    assert not alone.draws_week
    assert not [path for path in alone.targets() if "week" in path]


def test_draw_week_draws_easy_and_the_triple_over_the_week_they_differ_most(
    tmp_path: Path,
) -> None:
    filtered = tmp_path / "filtered.parquet"
    trace_steps.filter_trace(
        str(REPO / "resources" / "KTH-slice.swf.gz"), str(filtered), str(tmp_path / "f.json"),
        trace=TRACE, machine_procs=None, overrun="clip",
    )  # fmt: skip
    common = {"trace": TRACE, "processors": "allocated", "reservation": "default",
              "whole_seconds": False, "learner": LEARNER}  # fmt: skip
    run_paths = []
    for technique, corrections in (("requested", ["none"]), ("ave2", ["incremental"])):
        out = tmp_path / f"{technique}.parquet"
        prediction_steps.simulate_technique(
            str(filtered), str(out), str(tmp_path / f"{technique}-pred.parquet"),
            technique=technique, predictor=technique, loss=None, corrections=corrections,
            backfills=["easy", "sjbf"], **common,
        )  # fmt: skip
        run_paths.append(str(out))
    runs_path = tmp_path / "runs.parquet"
    prediction_steps.collect_runs(run_paths, str(runs_path), str(tmp_path / "runs.csv"))
    png, pdf, log = tmp_path / "week.png", tmp_path / "week.pdf", tmp_path / "week.log"
    prediction_steps.draw_week(str(filtered), str(runs_path), str(png), str(pdf), **common,
                               log_path=str(log))  # fmt: skip
    assert png.stat().st_size > 10_000 and pdf.read_bytes()[:5] == b"%PDF-"
    record = json.loads(png_text(png)["Description"])
    assert record["step"] == "studies.prediction.steps.draw_week"
    table = pl.read_parquet(runs_path)
    best = table.filter(pl.col("technique") == "ave2").sort("avg_bsld")["triple"][0]
    assert record["triple"] == best
    # the week logged: the largest gap in mean bsld between the two runs (NumPy)
    jobs = pl.read_parquet(filtered)
    easy = simulate_predicted(jobs, machine_procs=100).jobs
    other = simulate_predicted(
        jobs, predictor="ave2", correction="incremental", backfill_order=best.split("/")[2],
        machine_procs=100,
    ).jobs  # fmt: skip
    assert easy["job_id"].to_list() == other["job_id"].to_list()
    submit = easy["submit_s"].to_numpy()
    week = ((submit - submit.min()) // WEEK_S).astype(np.int64)
    a, b = easy["bsld"].to_numpy(), other["bsld"].to_numpy()
    gaps = [abs(a[week == k].mean() - b[week == k].mean()) for k in range(week.max() + 1)]
    start = submit.min() + int(np.argmax(gaps)) * WEEK_S
    found = re.search(r"week \[(\d+), (\d+)\) s", log.read_text())
    assert found is not None and (float(found[1]), float(found[2])) == (start, start + WEEK_S)
