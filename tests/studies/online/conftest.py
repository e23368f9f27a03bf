"""Shared tables of the online-statistics tests: hand-made runs and what the study derives."""

from __future__ import annotations

import polars as pl
import pytest
from support.online import REFERENCE, B, Run, curves_from, simulated_runs

from scheduler.studies.online.changes import relative_changes
from scheduler.studies.online.runs import run_totals


@pytest.fixture(scope="module")
def runs() -> dict[Run, list[float]]:
    """3 traces x 5 replicas x 5 strategies; runs of one replica end on different days."""
    return simulated_runs()


@pytest.fixture(scope="module")
def curves(runs: dict[Run, list[float]]) -> pl.DataFrame:
    return curves_from(runs)


@pytest.fixture(scope="module")
def totals(curves: pl.DataFrame) -> pl.DataFrame:
    return run_totals(curves)


@pytest.fixture(scope="module")
def changes(totals: pl.DataFrame) -> pl.DataFrame:
    return relative_changes(totals, reference=REFERENCE, n_boot=B, seed=3)
