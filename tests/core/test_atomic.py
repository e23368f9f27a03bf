"""Stale temporary files of killed writers (scheduler.core.atomic): removed by the next write of
the same output, never while their writer may still run, never those of another output."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scheduler.core import atomic
from scheduler.core.atomic import atomic_write_bytes, temporary_prefix
from scheduler.traces import steps as trace_steps

HOUR_AGO = time.time() - 3600.0


@pytest.fixture(scope="module")
def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


@pytest.fixture
def live_pid():
    """The id of a process that runs during the test (another writer)."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield sleeper.pid
    sleeper.kill()
    sleeper.wait()


def temp_of(
    target: Path, pid: int, host: str | None = None, age_s: float = 0.0, random: str = "ab1_cd2e"
) -> Path:
    """A temporary file as the writer ``pid`` on ``host`` would name it, ``age_s`` old."""
    host = socket.gethostname() if host is None else host
    path = target.parent / f".{target.name}.{pid}@{host}.{random}.tmp"
    path.write_bytes(b"half a table")
    if age_s:
        os.utime(path, (time.time() - age_s, time.time() - age_s))
    return path


def test_temporary_names_carry_pid_and_host(tmp_path: Path) -> None:
    prefix = temporary_prefix(tmp_path / "out.parquet")
    assert prefix == f".out.parquet.{os.getpid()}@{socket.gethostname()}."


def test_filter_step_removes_stale_temporaries_of_its_outputs(
    kth_path: Path, tmp_path: Path, dead_pid: int, live_pid: int
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    jobs, report = out / "filtered.parquet", out / "report.json"
    stale = [temp_of(jobs, dead_pid), temp_of(report, dead_pid)]
    legacy = out / ".filtered.parquet.x1y2z3w4.tmp"  # named by an earlier schedlab, old
    legacy.write_bytes(b"")
    os.utime(legacy, (HOUR_AGO, HOUR_AGO))
    kept = [
        temp_of(out / "split.parquet", dead_pid),  # another output: not this step's business
        temp_of(out / "filtered.parquet.json", dead_pid),  # a name that merely starts alike
        temp_of(jobs, live_pid),  # a concurrent writer of the same output, still running
        temp_of(jobs, dead_pid, host="othernode", age_s=60.0),  # another host, fresh
    ]
    foreign_old = temp_of(jobs, dead_pid, host="othernode", age_s=7200.0, random="zz99zz99")
    trace_steps.filter_trace(
        str(kth_path), str(jobs), str(report), trace="KTH-SP2", machine_procs=None, overrun="drop"
    )
    assert jobs.exists() and report.exists()
    for path in [*stale, legacy, foreign_old]:
        assert not path.exists(), path
    for path in kept:
        assert path.exists(), path


def test_fresh_legacy_temporary_is_kept(tmp_path: Path) -> None:
    legacy = tmp_path / ".out.bin.x1y2z3w4.tmp"
    legacy.write_bytes(b"")
    atomic_write_bytes(tmp_path / "out.bin", b"data")
    assert legacy.exists()


def test_cleaning_never_fails_the_write(tmp_path: Path, monkeypatch, dead_pid: int) -> None:
    stale = temp_of(tmp_path / "out.bin", dead_pid)

    def refuse(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(atomic.Path, "unlink", refuse)
    atomic_write_bytes(tmp_path / "out.bin", b"data")
    assert (tmp_path / "out.bin").read_bytes() == b"data" and stale.exists()
