"""Faults of numba's on-disk cache of the kernel (issue #11, item 6): a corrupt cache file or no
writable cache directory gives a warning and an in-process compilation, never a traceback.

Each test runs simulations in a subprocess over a *copy* of the package with its own cache
directory, so the real cache (``scheduler/sim/__pycache__``) is never touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler.sim.cache import kernel_cache_state

PACKAGE = Path(__file__).resolve().parents[2] / "scheduler"

SCRIPT = """
import warnings
import numpy as np
import scheduler
from scheduler.sim.cache import kernel_cache_state
warnings.simplefilter("always")
start = scheduler.simulate_arrays(
    np.array([0.0, 1.0, 2.0]), np.array([2.0, 1.0, 1.0]), np.array([10.0, 5.0, 5.0]),
    np.array([10.0, 5.0, 5.0]), 2, primary="SPF",
)
print("START", start.tolist())
state = kernel_cache_state()
print("CACHE", state.cache_path, state.hits, state.misses)
"""
EXPECTED_STARTS = "START [0.0, 10.0, 10.0]"

pytestmark = pytest.mark.slow


def _package_copy(tmp_path: Path, *, with_cache: bool = False) -> Path:
    """A copy of the package (files' times kept, as numba's cache stamps need); with
    ``with_cache``, the kernel's files of the real in-tree cache come along (a copy of a warm
    cache: the copy's first run loads instead of compiling, when the real cache is warm)."""
    root = tmp_path / "pkg"
    shutil.copytree(PACKAGE, root / "scheduler", ignore=shutil.ignore_patterns("__pycache__"))
    cache = PACKAGE / "sim" / "__pycache__"
    if with_cache and cache.is_dir():
        target = root / "scheduler" / "sim" / "__pycache__"
        target.mkdir()
        for path in cache.glob("_kernel.*.nb[ic]"):
            shutil.copy2(path, target)
    return root


def _run(root: Path, env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env.update({"PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1", **env_extra})
    return subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        cwd=root,  # not the repository: "-c" puts the working directory first on sys.path
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.compile
def test_truncated_cache_files_are_recompiled_with_a_warning(tmp_path: Path) -> None:
    root = _package_copy(tmp_path, with_cache=True)
    cache = root / "scheduler" / "sim" / "__pycache__"  # the copy's own in-tree cache
    first = _run(root, {})
    assert first.returncode == 0, first.stderr
    assert EXPECTED_STARTS in first.stdout
    assert f"CACHE {cache}" in first.stdout  # the copy's kernel, cached in the copy
    data_files = sorted(cache.glob("_kernel.*.nbc"))
    assert data_files
    for path in data_files:
        with open(path, "r+b") as handle:
            handle.truncate(10)

    second = _run(root, {})

    assert second.returncode == 0, second.stderr
    assert "Traceback" not in second.stderr
    assert EXPECTED_STARTS in second.stdout
    assert "could not be read" in second.stderr
    assert str(cache) in second.stderr
    # the cache was rewritten: a third run loads it without a warning
    third = _run(root, {})
    assert third.returncode == 0, third.stderr
    assert third.stderr == ""
    assert EXPECTED_STARTS in third.stdout
    hits = int(third.stdout.split("CACHE ")[1].split()[1])
    assert hits >= 1


@pytest.mark.compile
def test_no_writable_cache_directory_compiles_in_memory(tmp_path: Path) -> None:
    root = _package_copy(tmp_path)
    # Nowhere to write (works as root too, where permissions are not enforced): the in-tree
    # cache directory, NUMBA_CACHE_DIR and the user-wide cache all lie under a regular file.
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    (root / "scheduler" / "sim" / "__pycache__").write_text("")
    for path in sorted(root.rglob("*"), reverse=True):
        path.chmod(path.stat().st_mode & ~0o222)
    try:
        result = _run(
            root,
            {
                "NUMBA_CACHE_DIR": str(blocker / "cache"),
                "XDG_CACHE_HOME": str(blocker / "home"),
                "HOME": str(blocker / "home"),
            },
        )
    finally:
        for path in root.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert EXPECTED_STARTS in result.stdout
    assert "no writable cache directory" in result.stderr
    assert "compiled in memory" in result.stderr


def test_cache_state_of_this_process_names_a_directory() -> None:
    assert kernel_cache_state().cache_path
