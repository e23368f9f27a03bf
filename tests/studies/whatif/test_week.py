"""The what-if study's representative week (scheduler.studies.whatif.week and the step
week_gantt): the engine results drawn are the study's whole-log replay, job by job, for every
kind of scheduler; the week is the one where the two differ most."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.png import png_text

from scheduler.core.provenance import write_parquet
from scheduler.core.steps import procs_metadata
from scheduler.studies.common.gantt import representative_week
from scheduler.studies.whatif import steps as whatif_steps
from scheduler.studies.whatif.runs import simulate_log
from scheduler.studies.whatif.schedulers import policy_scheduler, slurm_scheduler
from scheduler.studies.whatif.week import scheduler_result
from scheduler.traces.site import synthetic_site

ROOT = Path(__file__).resolve().parents[3]
M = 64
SHARES = {"a": 3, "b": 1}


@pytest.fixture(scope="module")
def site() -> pl.DataFrame:
    return synthetic_site(1500, machine_procs=M, users=5, accounts=["a", "b"], load=0.6, seed=3)


def schedulers() -> dict:
    conf = str(ROOT / "config" / "slurm" / "example-site.conf")
    return {
        "slurm": slurm_scheduler(conf, {}, SHARES, "t"),
        "slurm-no-fairshare": slurm_scheduler(conf, {"PriorityWeightFairshare": 0}, SHARES, "t"),
        "easy": policy_scheduler("EASY-SPF-FCFS@20h", "t"),
        "conservative": policy_scheduler("conservative-LQF", "t"),
    }


@pytest.mark.parametrize("name", list(schedulers()))
def test_the_results_are_the_whole_log_replay(site: pl.DataFrame, name: str) -> None:
    scheduler = schedulers()[name]
    result = scheduler_result(scheduler, site, M)
    log = simulate_log(scheduler, site, M)
    waits = result.jobs.join(log.select("job_id", pl.col("wait_s").alias("log_wait_s")),
                             on="job_id")  # fmt: skip
    assert waits.height == site.height
    assert np.array_equal(waits["wait_s"].to_numpy(), waits["log_wait_s"].to_numpy())


def test_the_step_draws_the_week_that_differs_most(site: pl.DataFrame, tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.parquet"
    write_parquet(site, jobs, {"step": "test"}, procs_metadata(M))
    chosen = schedulers()
    png, pdf, log = tmp_path / "week.png", tmp_path / "week.pdf", tmp_path / "week.log"
    whatif_steps.week_gantt(str(jobs), str(png), str(pdf), log_path=str(log),
                            baseline=chosen["slurm"].to_dict(),
                            alternative="PriorityWeightFairshare=0",
                            change="PriorityWeightFairshare=0",
                            scheduler=chosen["slurm-no-fairshare"].to_dict())  # fmt: skip
    base = scheduler_result(chosen["slurm"], site, M)
    other = scheduler_result(chosen["slurm-no-fairshare"], site, M)
    start, end = representative_week(base.jobs, other.jobs)
    assert f"week [{start:.0f}, {end:.0f}) s" in log.read_text()
    record = json.loads(png_text(png)["Description"])
    assert record["step"] == "studies.whatif.steps.week_gantt"
    assert json.loads(record["config"])["alternative"] == "PriorityWeightFairshare=0"
    assert pdf.read_bytes()[:5] == b"%PDF-"
