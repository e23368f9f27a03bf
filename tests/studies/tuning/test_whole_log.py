"""The whole-log table (scheduler.studies.tuning.whole_log) on hand-made runs."""

from __future__ import annotations

import math

import polars as pl
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.sim.metrics import RunSummary
from scheduler.studies.tuning.schema import Baseline
from scheduler.studies.tuning.whole_log import (
    WHOLE_LOG_COLUMNS,
    WHOLE_LOG_RUN_COLUMNS,
    whole_log_run,
    whole_log_table,
)

BASE = Baseline()


def run(trace: str, primary: str, backfill: str, avg: float, most: float, threshold="none"):
    summary = RunSummary(
        jobs=1000, avg_wait_s=avg, max_wait_s=most, total_wait_s=avg * 1000, avg_bsld=2.0,
        max_bsld=9.0, avg_stretch=3.0, makespan_s=1e6, utilisation=0.7,
        utilisation_with_waste=0.7, wasted_proc_s=0.0, backfilled_jobs=10,
    )  # fmt: skip
    seconds = math.inf if threshold == "none" else 72000.0
    return whole_log_run(
        summary, trace=trace, primary=primary, backfill=backfill, threshold=threshold,
        threshold_s=seconds,
    )  # fmt: skip


def test_run_row_has_the_run_columns() -> None:
    row = run("CTC-SP2", "LEXP", "LEXP", 3600.0, 7200.0, threshold="20h")
    assert dict(row.schema) == WHOLE_LOG_RUN_COLUMNS
    assert row.row(0, named=True) == {
        "trace": "CTC-SP2", "primary": "LEXP", "backfill": "LEXP", "threshold": "20h",
        "threshold_s": 72000.0, "jobs": 1000, "avg_wait_s": 3600.0, "max_wait_s": 7200.0,
        "avg_bsld": 2.0, "max_bsld": 9.0, "utilisation": 0.7,
    }  # fmt: skip


#: A baseline AvgWait (s) whose ratio to itself polars once gave as 0.9999999999999999 (it
#: multiplied by the reciprocal of a broadcast column).
AWKWARD_S = 6556.336524721349


def test_table_hours_and_ratios_to_the_baseline_of_the_same_log() -> None:
    runs = pl.concat([
        run("CTC-SP2", "SPF", "SPF", AWKWARD_S / 4, 90000.0),
        run("CTC-SP2", "FCFS", "FCFS", AWKWARD_S, 36000.0),
        run("SDSC-SP2", "SPF", "SPF", 5000.0, 10.0),
        run("SDSC-SP2", "FCFS", "FCFS", 10000.0, 40.0),
        run("CTC-SP2", "LEXP", "LEXP", 1800.0, 36000.0),
    ])  # fmt: skip
    table = whole_log_table(runs, BASE)
    assert table.columns == list(WHOLE_LOG_COLUMNS)
    # grouped by log in order of first appearance, the runs' order inside a log
    assert list(zip(table["trace"], table["primary"], strict=True)) == [
        ("CTC-SP2", "SPF"), ("CTC-SP2", "FCFS"), ("CTC-SP2", "LEXP"),
        ("SDSC-SP2", "SPF"), ("SDSC-SP2", "FCFS"),
    ]  # fmt: skip
    spf = table.row(0, named=True)
    assert spf["avg_wait_h"] == pytest.approx(AWKWARD_S / 4 / 3600) and spf["max_wait_h"] == 25.0
    assert spf["relative_avg_wait"] == 0.25 and spf["relative_max_wait"] == 2.5
    sdsc = table.row(3, named=True)
    assert sdsc["relative_avg_wait"] == 0.5 and sdsc["relative_max_wait"] == 0.25
    # the baseline relative to itself is exactly 1 (correctly rounded division)
    base_rows = table.filter(pl.col("primary") == "FCFS")
    assert base_rows["relative_avg_wait"].to_list() == [1.0, 1.0]
    assert base_rows["relative_max_wait"].to_list() == [1.0, 1.0]
    lexp = table.row(2, named=True)
    assert lexp["relative_avg_wait"] == 1800.0 / AWKWARD_S
    # one log alone (its baseline broadcast over every row): still exactly 1
    alone = whole_log_table(runs.filter(pl.col("trace") == "CTC-SP2"), BASE)
    assert alone.filter(pl.col("primary") == "FCFS")["relative_avg_wait"].to_list() == [1.0]


def test_zero_over_zero_is_one_and_x_over_zero_is_refused() -> None:
    quiet = pl.concat([run("T", "FCFS", "FCFS", 0.0, 0.0), run("T", "SPF", "SPF", 0.0, 0.0)])
    assert whole_log_table(quiet, BASE)["relative_avg_wait"].to_list() == [1.0, 1.0]
    busy = pl.concat([run("T", "FCFS", "FCFS", 0.0, 0.0), run("T", "SPF", "SPF", 5.0, 9.0)])
    with pytest.raises(ConfigurationError, match=r"T: avg_wait_s is 0 under the baseline"):
        whole_log_table(busy, BASE)


def test_errors_name_what_is_missing() -> None:
    runs = pl.concat([run("T", "FCFS", "FCFS", 1.0, 2.0), run("U", "SPF", "SPF", 1.0, 2.0)])
    with pytest.raises(ConfigurationError, match=r"EASY-FCFS-FCFS has no run on U"):
        whole_log_table(runs, BASE)
    twice = pl.concat([run("T", "FCFS", "FCFS", 1.0, 2.0)] * 2)
    with pytest.raises(ConfigurationError, match="appears 2 times"):
        whole_log_table(twice, BASE)
    with pytest.raises(ConfigurationError, match="lack columns: max_wait_s"):
        whole_log_table(runs.drop("max_wait_s"), BASE)
    # another baseline: the ratios follow it
    spf = Baseline("SPF", "SPF", "none")
    table = whole_log_table(
        pl.concat([run("T", "FCFS", "FCFS", 8.0, 2.0), run("T", "SPF", "SPF", 4.0, 4.0)]), spf
    )
    assert table["relative_avg_wait"].to_list() == [2.0, 1.0]
