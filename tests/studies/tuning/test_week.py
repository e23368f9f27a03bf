"""The tuning study's representative week (steps.draw_week) on the bundled six-week KTH slice:
the baseline and the tuned configuration of a hand-made protocol, drawn over the week where
their mean bounded slowdowns differ most."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.png import png_text

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.gantt import WEEK_S
from scheduler.studies.tuning import steps as tuning_steps
from scheduler.studies.tuning.stats import tuned_configuration
from scheduler.studies.tuning.whole_log import simulate_whole_log_case
from scheduler.traces import steps as trace_steps

ROOT = Path(__file__).resolve().parents[3]
TRACE = "KTH-slice"
BASELINE = {"primary": "FCFS", "backfill": "FCFS", "threshold": "none"}


def protocol(*rows: tuple[str, float, str, str, float]) -> pl.DataFrame:
    """A protocol table's columns the week needs: (threshold, seconds, primary, backfill,
    training ratio of means) on TRACE, and one row of another trace."""
    table = [{"trace": TRACE, "threshold": t, "threshold_s": s, "primary": p, "backfill": b,
              "train_ratio_of_means": r} for t, s, p, b, r in rows]  # fmt: skip
    table.append({"trace": "other", "threshold": "none", "threshold_s": math.inf,
                  "primary": "LQF", "backfill": "LQF", "train_ratio_of_means": 0.01})  # fmt: skip
    return pl.DataFrame(table)


def test_tuned_configuration_is_the_lowest_training_ratio_of_the_trace() -> None:
    table = protocol(("none", math.inf, "SPF", "FCFS", 0.8), ("20h", 72000.0, "SPF", "SPF", 0.7),
                     ("40h", 144000.0, "LQF", "SPF", 0.7))  # fmt: skip
    assert tuned_configuration(table, TRACE) == {
        "threshold": "20h", "threshold_s": 72000.0, "primary": "SPF", "backfill": "SPF",
        "train_ratio_of_means": 0.7,
    }  # fmt: skip
    with pytest.raises(ConfigurationError, match="no row for 'absent'"):
        tuned_configuration(table, "absent")
    with pytest.raises(ConfigurationError, match="lacks train_ratio_of_means"):
        tuned_configuration(table.drop("train_ratio_of_means"), TRACE)


def week_gaps(base: pl.DataFrame, other: pl.DataFrame) -> np.ndarray:
    """|mean bsld(base) − mean bsld(other)| of the jobs submitted in each week from the first
    submission (NumPy, independently of representative_week)."""
    submit = base["submit_s"].to_numpy()
    week = ((submit - submit.min()) // WEEK_S).astype(np.int64)
    other_bsld = dict(zip(other["job_id"].to_list(), other["bsld"].to_list(), strict=True))
    mine = base["bsld"].to_numpy()
    theirs = np.array([other_bsld[j] for j in base["job_id"].to_list()])
    return np.array([abs(mine[week == k].mean() - theirs[week == k].mean())
                     if (week == k).any() else -1.0 for k in range(week.max() + 1)])  # fmt: skip


def test_draw_week_draws_the_week_of_the_largest_difference(tmp_path: Path) -> None:
    filtered = tmp_path / "filtered.parquet"
    trace_steps.filter_trace(
        str(ROOT / "resources" / "KTH-slice.swf.gz"), str(filtered), str(tmp_path / "f.json"),
        trace=TRACE, machine_procs=None, overrun="drop",
    )  # fmt: skip
    path = tmp_path / "protocol.parquet"
    table = protocol(("none", math.inf, "SPF", "SPF", 0.6), ("20h", 72000.0, "LQF", "FCFS", 0.9))
    table.write_parquet(path)
    png, pdf, log = tmp_path / "week.png", tmp_path / "week.pdf", tmp_path / "week.log"
    tuning_steps.draw_week(
        str(filtered), str(path), str(png), str(pdf), trace=TRACE, baseline=BASELINE,
        baseline_threshold_s=math.inf, threshold_backfill=False, slurm=None, log_path=str(log),
    )  # fmt: skip
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert pdf.read_bytes()[:5] == b"%PDF-"
    record = png_text(png)
    assert record["Software"] == "schedlab"
    record = json.loads(record["Description"])
    assert record["step"] == "studies.tuning.steps.draw_week"
    assert record["tuned"] == "EASY-SPF-SPF" and json.loads(record["config"])["trace"] == TRACE
    # the window logged is the week where the two whole-log runs differ most
    jobs = pl.read_parquet(filtered)
    runs = [simulate_whole_log_case(jobs, 100, primary=p, backfill=p, threshold_s=math.inf,
                                    threshold_backfill=False, slurm=None).jobs
            for p in ("FCFS", "SPF")]  # fmt: skip
    gaps = week_gaps(*runs)
    assert gaps.max() > 0
    start = float(jobs["submit_s"].min()) + int(np.argmax(gaps)) * WEEK_S
    found = re.search(r"week \[(\d+), (\d+)\) s", log.read_text())
    assert found is not None
    assert (float(found[1]), float(found[2])) == (start, start + WEEK_S)
