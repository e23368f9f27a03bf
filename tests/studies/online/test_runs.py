"""Runs of the online study (scheduler.studies.online.runs): totals, strategy order, labels."""

from __future__ import annotations

import polars as pl
import pytest
from support.online import (
    Run,
    row,
)

from scheduler.core.errors import ConfigurationError
from scheduler.studies.online.runs import (
    run_totals,
)

# --------------------------------------------------------------------------------------------
# run_totals
# --------------------------------------------------------------------------------------------


def test_run_totals_takes_the_last_day(runs: dict[Run, list[float]], curves: pl.DataFrame):
    shuffled = curves.sample(fraction=1.0, shuffle=True, seed=1)
    totals = run_totals(shuffled)
    assert totals.columns == ["trace", "replica", "strategy", "period", "total_wait_s", "jobs"]
    assert totals.height == len(runs)
    for run, values in runs.items():
        got = row(
            totals,
            trace=run[0],
            replica=run[1],  # type: ignore[arg-type]
            strategy=run[2],
            period=run[3],
        )
        assert got["total_wait_s"] == pytest.approx(values[-1])
        assert got["jobs"] == 10 * len(values)


def test_run_totals_rejects_duplicates_and_missing_columns(curves: pl.DataFrame):
    with pytest.raises(ConfigurationError, match="duplicated"):
        run_totals(pl.concat([curves, curves.head(1)]))
    with pytest.raises(ConfigurationError, match="finished_jobs"):
        run_totals(curves.drop("finished_jobs"))
