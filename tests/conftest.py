"""Shared fixtures: paths of the real workload logs and a builder of small job tables."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from scheduler.core.constants import SWF_COLUMNS, SWF_SCHEMA

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_traces_dir() -> Path:
    """Directory of the real logs: ``$SCHEDLAB_SHARED_TRACES``, else ``../shared/traces``."""
    configured = os.environ.get("SCHEDLAB_SHARED_TRACES")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "shared" / "traces"


@pytest.fixture(scope="session")
def shared_trace(shared_traces_dir: Path) -> Callable[[str], Path]:
    """``shared_trace("CEA-Curie.swf.gz")``: path of a real log; skips the test when absent."""

    def get(name: str) -> Path:
        path = shared_traces_dir / name
        if not path.is_file():
            pytest.skip(
                f"shared trace not found: {path} (set SCHEDLAB_SHARED_TRACES to its directory)"
            )
        return path

    return get


@pytest.fixture(scope="session")
def kth_path() -> Path:
    """The KTH-SP2 log bundled with the repository."""
    return REPO_ROOT / "resources" / "KTH-SP2.swf.gz"


@pytest.fixture
def job_table() -> Callable[..., pl.DataFrame]:
    """Build an SWF jobs table from rows given as dicts; absent fields are -1 (unknown).

    ``job_table({"run_s": 10, "req_procs": 2}, ...)`` numbers the jobs 1, 2, ... unless a row
    gives ``job_id``.
    """

    def build(*rows: dict[str, float]) -> pl.DataFrame:
        unknown = dict.fromkeys(SWF_COLUMNS, -1)
        full = [{**unknown, "job_id": index + 1, **row} for index, row in enumerate(rows)]
        return pl.DataFrame(full, schema=SWF_SCHEMA)

    return build
