"""Shared fixtures: paths of the real workload logs and a builder of small job tables."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from scheduler.core.constants import SWF_COLUMNS, SWF_SCHEMA

REPO_ROOT = Path(__file__).resolve().parents[1]


def _origin_checkout() -> Path | None:
    """The local repository this one was cloned from (``git clone . /tmp/x``: CI's clean
    clone), or None when the origin is not a folder of this machine."""
    try:
        url = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "remote", "get-url", "origin"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(url.removeprefix("file://"))
    return path.resolve() if path.is_dir() else None


def find_shared_traces() -> Path:
    """Directory of the real logs: ``$SCHEDLAB_SHARED_TRACES``, else ``../shared/traces`` next
    to this repository, else next to the local repository it was cloned from (so that a clean
    clone anywhere runs the tests on the real logs as well); the first candidate when none
    exists."""
    configured = os.environ.get("SCHEDLAB_SHARED_TRACES")
    if configured:
        return Path(configured)
    candidates = [REPO_ROOT.parent / "shared" / "traces"]
    origin = _origin_checkout()
    if origin is not None:
        candidates.append(origin.parent / "shared" / "traces")
    return next((path for path in candidates if path.is_dir()), candidates[0])


@pytest.fixture(scope="session")
def shared_traces_dir() -> Path:
    """Directory of the real logs (:func:`find_shared_traces`)."""
    return find_shared_traces()


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


@pytest.fixture(scope="session")
def tiny_study(tmp_path_factory: pytest.TempPathFactory, kth_path: Path) -> Path:
    """The tiny study, every study, run once per session for the workflow tests
    (:func:`support.tiny_project.shared_study`); read it, plan on it, change only copies."""
    from support.tiny_project import shared_study

    return shared_study(tmp_path_factory, kth_path)


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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files of long tests first (Snakemake runs, then the real logs' tests), each file's
    tests together: ``dev.py test`` hands whole files to its two workers in this order, so the
    long ones start first and the short ones fill in behind them instead of leaving one worker
    idle at the end."""

    def weight(item: pytest.Item) -> int:
        return (
            0
            if item.get_closest_marker("workflow")
            else 1
            if item.get_closest_marker("slow")
            else 2
        )

    files: dict[str, int] = {}
    for item in items:
        path = str(item.path)
        files[path] = min(files.get(path, 2), weight(item))
    order = {path: rank for rank, path in enumerate(sorted(files, key=lambda p: files[p]))}
    items.sort(key=lambda item: order[str(item.path)])
