"""The online study's representative week: the best run chosen from the changes table
(runs.best_run), the live runs replayed from their choices (live.replay_online) and the step
that draws them (steps.draw_week) on three resampled weeks of the bundled KTH slice."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.png import png_text

from scheduler.core.errors import ConfigurationError
from scheduler.sim.arrays import kernel_arrays
from scheduler.studies.common.gantt import WEEK_S
from scheduler.studies.online import steps as online_steps
from scheduler.studies.online.live import DAY_S, online_result, replay_online, run_online
from scheduler.studies.online.plan import OnlinePlan
from scheduler.studies.online.runs import BEST_FIXED, LOTO_BANDIT, best_run
from scheduler.studies.online.selectors import make_selector
from scheduler.traces import steps as trace_steps

REPO = Path(__file__).resolve().parents[3]
TRACE = "KTH-slice"
POLICIES = ["FCFS", "SPF", "LQF"]
THRESHOLD_S = 20 * 3600.0
REFERENCE = "fixed:FCFS"


def changes(*rows: tuple[str, str, str, float]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["trace", "strategy", "period", "relative_change"],
                        orient="row")  # fmt: skip


def test_best_run_prefers_selectors_and_skips_the_pseudo_rows() -> None:
    table = changes(
        (TRACE, REFERENCE, "none", 0.0), (TRACE, "fixed:SPF", "none", -0.5),
        (TRACE, BEST_FIXED, "none", -0.5), (TRACE, LOTO_BANDIT, "1d", -0.4),
        (TRACE, "random", "1d", 0.1), (TRACE, "bandit(eps=0.1)", "1d", -0.4),
        (TRACE, "bandit(eps=0.1)", "1w", -0.4), ("other", "noisy", "1d", -0.9),
    )  # fmt: skip
    # a selector, the earlier of two equals, the pseudo rows left out
    assert best_run(table, TRACE, REFERENCE) == ("bandit(eps=0.1)", "1d")
    # no selector: the best fixed policy but the reference
    fixed = table.filter(pl.col("strategy").str.starts_with("fixed:"))
    assert best_run(fixed, TRACE, REFERENCE) == ("fixed:SPF", "none")
    with pytest.raises(ConfigurationError, match="no run to compare with the reference"):
        best_run(fixed.filter(pl.col("strategy") == REFERENCE), TRACE, REFERENCE)
    with pytest.raises(ConfigurationError, match="lacks the column"):
        best_run(table.drop("period"), TRACE, REFERENCE)


@pytest.fixture(scope="module")
def long_trace_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Three resampled weeks of the bundled KTH slice, as the long_trace rule makes them."""
    folder = tmp_path_factory.mktemp("online-week")
    filtered = str(folder / "filtered.parquet")
    trace_steps.filter_trace(
        str(REPO / "resources" / "KTH-slice.swf.gz"), filtered, str(folder / "report.json"),
        trace=TRACE, machine_procs=None, overrun="drop",
    )  # fmt: skip
    out = str(folder / "replica0.parquet")
    online_steps.make_long_trace(filtered, out, trace=TRACE, replica=0, weeks=3, seed=1,
                                 method="uniform", alignment="calendar")  # fmt: skip
    return out


def test_a_replay_of_the_choices_is_the_live_run(long_trace_path: str) -> None:
    arrays, procs = kernel_arrays("long_trace", long_trace_path)
    selector = make_selector("random", tuple(POLICIES), rng=np.random.default_rng(5))
    common = {"period_s": DAY_S, "threshold_s": THRESHOLD_S, "period_origin_s": 0.0}
    live = run_online(arrays, procs, selector, **common)
    assert len(set(live.choices)) > 1  # the run switches
    replay = replay_online(arrays, procs, live.choices, name="random", **common)
    assert np.array_equal(replay.start_s, live.start_s)
    assert np.array_equal(replay.backfilled, live.backfilled) and live.backfilled.any()
    result = online_result(arrays, procs, replay)
    assert result.jobs["job_id"].to_list() == arrays.job_id.tolist()
    assert np.array_equal(result.jobs["start_s"].to_numpy(), live.start_s)
    assert result.summary.total_wait_s == pytest.approx(live.total_wait_s)
    with pytest.raises(ConfigurationError, match="recorded choices cover 2 periods"):
        replay_online(arrays, procs, live.choices[:2], name="random", **common)


def test_draw_week_draws_the_two_runs_over_the_week_they_differ_most(
    tmp_path: Path, long_trace_path: str
) -> None:
    runs = [(REFERENCE, "none"), ("fixed:LQF", "none"), ("random", "1d")]
    period_seconds = {"none": OnlinePlan.NO_PERIOD_S, "1d": DAY_S}
    choice_paths = []
    for k, (strategy, period) in enumerate(runs):
        choices = str(tmp_path / f"choices{k}.parquet")
        online_steps.online_run(
            [long_trace_path], str(tmp_path / f"curve{k}.parquet"), choices, trace=TRACE,
            replicas=[0], strategy=strategy, period=period, period_s=period_seconds[period],
            policies=POLICIES, threshold_s=THRESHOLD_S, seed=0, threshold_backfill=True,
            options={}, period_alignment="calendar", slurm=None,
        )  # fmt: skip
        choice_paths.append(choices)
    table = changes((TRACE, REFERENCE, "none", 0.0), (TRACE, "fixed:LQF", "none", -0.3),
                    (TRACE, "random", "1d", -0.1))  # fmt: skip
    changes_path = tmp_path / "changes.parquet"
    table.write_parquet(changes_path)
    png, pdf, log = tmp_path / "week.png", tmp_path / "week.pdf", tmp_path / "week.log"
    online_steps.draw_week(
        long_trace_path, str(changes_path), choice_paths, str(png), str(pdf), trace=TRACE,
        replica=0, reference=REFERENCE, period_seconds=period_seconds,
        threshold_s=THRESHOLD_S, threshold_backfill=True, period_alignment="calendar",
        slurm=None, log_path=str(log),
    )  # fmt: skip
    assert png.stat().st_size > 10_000 and pdf.read_bytes()[:5] == b"%PDF-"
    record = json.loads(png_text(png)["Description"])
    assert record["step"] == "studies.online.steps.draw_week"
    assert (record["strategy"], record["period"]) == ("random", "1d")  # the selector
    # the week logged: the largest gap in mean bsld between the replayed runs (NumPy)
    arrays, procs = kernel_arrays("long_trace", long_trace_path)
    results = []
    for path in (choice_paths[0], choice_paths[2]):
        chosen = pl.read_parquet(path).sort("period_index")["policy"].to_list()
        period = pl.read_parquet(path)["period"][0]
        run = replay_online(arrays, procs, chosen, name="x", period_s=period_seconds[period],
                            threshold_s=THRESHOLD_S, period_origin_s=0.0)  # fmt: skip
        results.append(online_result(arrays, procs, run).jobs)
    submit = results[0]["submit_s"].to_numpy()
    week = ((submit - submit.min()) // WEEK_S).astype(np.int64)
    bsld = [jobs["bsld"].to_numpy() for jobs in results]
    gaps = [
        abs(bsld[0][week == k].mean() - bsld[1][week == k].mean()) for k in range(week.max() + 1)
    ]
    start = submit.min() + int(np.argmax(gaps)) * WEEK_S
    found = re.search(r"week \[(\d+), (\d+)\) s", log.read_text())
    assert found is not None and (float(found[1]), float(found[2])) == (start, start + WEEK_S)
