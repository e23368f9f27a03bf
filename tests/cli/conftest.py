"""Fixtures of the ``scheduler`` command's tests: the bundled KTH-SP2 log, filtered and simulated.

Computed once per test session and shared by the test modules (treat them as read-only); the
helpers that run the command are in ``tests/cli/helpers.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.sim.api import simulate
from scheduler.sim.engine import SimulationResult
from scheduler.traces.filters import FilterReport, strong_filter
from scheduler.traces.swf import Trace, read_swf


@pytest.fixture(scope="session")
def kth_raw(kth_path: Path) -> Trace:
    """The KTH-SP2 log as read (28476 jobs)."""
    return read_swf(kth_path)


@pytest.fixture(scope="session")
def kth_filtered(kth_raw: Trace) -> tuple[Trace, FilterReport]:
    """The strongly filtered KTH-SP2 log and its report."""
    return strong_filter(kth_raw)


@pytest.fixture(scope="session")
def spf_40h(kth_filtered: tuple[Trace, FilterReport]) -> SimulationResult:
    """EASY(SPF, FCFS, 40 h) on the filtered log, through the Python API."""
    return simulate(kth_filtered[0], "SPF", "FCFS", "40h")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run ``test_warmup.py`` first in the session.

    Its test checks that, after ``scheduler warmup``, real simulations need no further kernel
    specialisation; that only means something before any other test has simulated.
    """
    here = Path(__file__).parent
    first = [item for item in items if item.path == here / "test_warmup.py"]
    if first:
        items[:] = first + [item for item in items if item not in first]
