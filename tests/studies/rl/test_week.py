"""The rl study's representative sequence (scheduler.studies.rl.week and the step rl_week): the
policy and sequence drawn, the engine result equal to the easy mode's run, the figure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.png import png_text

from scheduler import simulate_arrays
from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import write_parquet
from scheduler.rl.episodes import EpisodeSource
from scheduler.sim.rlscheduler import rls_workload
from scheduler.studies.rl import steps as rl_steps
from scheduler.studies.rl.sequences import sequence_runs
from scheduler.studies.rl.week import drawn_sequence, sequence_result
from scheduler.traces.swf import read_swf

LUBLIN = Path(__file__).resolve().parents[3] / "resources" / "Lublin-256.swf.gz"
SEQUENCES = {"job_slice": None, "count": 3, "length": 128, "seed": 1}


def runs(rows: list[tuple[str, int, float]], backfill: bool = True) -> pl.DataFrame:
    return pl.DataFrame([{"trace": "T", "mode": "easy", "backfill": backfill, "policy": policy,
                          "sequence": sequence, "start": 100 * sequence, "avg_bsld": bsld}
                         for policy, sequence, bsld in rows])  # fmt: skip


def test_the_best_policy_and_the_sequence_that_differs_most() -> None:
    table = runs([("F1", 0, 10.0), ("F1", 1, 10.0), ("SPF", 0, 9.0), ("SPF", 1, 5.0),
                  ("FCFS", 0, 20.0), ("FCFS", 1, 30.0)])  # fmt: skip
    chosen = drawn_sequence(table, trace="T", reference="F1", policies=["FCFS", "SPF", "F1"],
                            backfill=True)  # fmt: skip
    assert (chosen.policy, chosen.sequence, chosen.start) == ("SPF", 1, 100)
    assert (chosen.reference_avg_bsld, chosen.avg_bsld) == (10.0, 5.0)
    with pytest.raises(ConfigurationError, match="no policy besides"):
        drawn_sequence(table, trace="T", reference="F1", policies=["F1"], backfill=True)
    with pytest.raises(ConfigurationError, match="no policy besides"):
        drawn_sequence(table, trace="T", reference="F1", policies=["SPF"], backfill=False)


@pytest.fixture(scope="module")
def lublin():
    return rls_workload(read_swf(LUBLIN), "Lublin-256")


@pytest.mark.parametrize("backfill", [True, False])
def test_the_result_is_the_easy_modes_run(lublin, backfill: bool) -> None:
    result = sequence_result(lublin, 300, 128, policy="SPF", backfill=backfill)
    sl = slice(300, 428)
    want = simulate_arrays(lublin.submit_s[sl], lublin.procs[sl], lublin.run_s[sl],
                           lublin.estimate_s[sl], lublin.max_procs, primary="SPF",
                           backfill="FCFS" if backfill else None,
                           job_id=lublin.job_id[sl])  # fmt: skip
    order = np.argsort(lublin.job_id[sl], kind="stable")
    got = result.jobs.sort("job_id")["start_s"].to_numpy()
    assert np.array_equal(got, want[order])


def test_the_step_draws_the_whole_sequence(lublin, tmp_path: Path) -> None:
    starts = EpisodeSource(lublin, 128, None).test_starts(3, 1).tolist()
    table = sequence_runs(lublin, starts, 128, heuristics=[], policies=["FCFS", "F1", "SPF"],
                          backfill=[True])  # fmt: skip
    runs_path = tmp_path / "runs.parquet"
    write_parquet(table.with_columns(pl.lit("Lublin-256").alias("trace")), runs_path,
                  {"step": "test"})  # fmt: skip
    png, pdf, log = tmp_path / "week.png", tmp_path / "week.pdf", tmp_path / "week.log"
    rl_steps.rl_week(str(LUBLIN), str(runs_path), str(png), str(pdf), log_path=str(log),
                     trace="Lublin-256", reference="F1", policies=["FCFS", "F1", "SPF"],
                     backfill=True, **SEQUENCES)  # fmt: skip
    chosen = drawn_sequence(table.with_columns(pl.lit("Lublin-256").alias("trace")),
                            trace="Lublin-256", reference="F1", policies=["FCFS", "F1", "SPF"],
                            backfill=True)  # fmt: skip
    assert chosen.start in starts
    ends = [sequence_result(lublin, chosen.start, 128, policy=p, backfill=True).jobs["end_s"].max()
            for p in ("F1", chosen.policy)]  # fmt: skip
    window = f"[{lublin.submit_s[chosen.start]:.0f}, {max(ends):.0f}) s"
    assert f"sequence {chosen.sequence} (start {chosen.start})" in log.read_text()
    assert window in log.read_text()
    record = json.loads(png_text(png)["Description"])
    assert record["step"] == "studies.rl.steps.rl_week"
    assert pdf.read_bytes()[:5] == b"%PDF-"
