"""A step's failures (scheduler.core.steps.rule_log, workflow_step; scheduler.core.atomic): every
failure reaches the log with its real cause, also when a library hides an operating-system
error behind one of its own, and when the log itself cannot be written.
(tests/workflow/test_workflow_faults.py meets the same on a real full disk, through Snakemake.)"""

from __future__ import annotations

import errno
from pathlib import Path

import polars as pl
import pytest

from scheduler.core.atomic import atomic_path
from scheduler.core.errors import os_error_cause
from scheduler.core.steps import StepContext, StepError, rule_log, workflow_step

FULL = "[Errno 28] No space left on device"


def write_like_matplotlib_on_a_full_disk(path: Path) -> None:
    """What matplotlib's PDF writer does on a full disk: the write's OSError, then an
    AttributeError raised while cleaning up (``'Stream' object has no attribute 'pos'``)."""
    with atomic_path(path):
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError:
            raise AttributeError("'Stream' object has no attribute 'pos'") from None


@workflow_step
def draw(out_path: str, *, ctx: StepContext) -> None:
    write_like_matplotlib_on_a_full_disk(Path(out_path))


def test_a_full_disk_hidden_by_a_library_is_the_cause_named_with_the_output(tmp_path):
    out, log = tmp_path / "figure.pdf", tmp_path / "draw.log"
    with pytest.raises(StepError) as info:
        draw(str(out), log_path=str(log))
    assert str(info.value) == f"{FULL}: '{out}' (log: {log})"
    lines = log.read_text().splitlines()
    assert lines[0].endswith(f" {draw.__module__.removeprefix('scheduler.')}.draw: started")
    assert lines[1].endswith(f" error: {FULL}: '{out}'")
    assert not out.exists() and list(tmp_path.iterdir()) == [log]


def test_atomic_path_names_the_target_of_an_os_error_a_library_reports_in_words(tmp_path):
    """polars reports a full disk as a ComputeError ending "(os error 28)"."""
    target = tmp_path / "t.parquet"
    with pytest.raises(OSError) as info, atomic_path(target):
        raise pl.exceptions.ComputeError(
            "parquet: File out of specification: underlying IO error: No space left on device "
            "(os error 28)"
        )
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target)
    assert isinstance(info.value.__cause__, pl.exceptions.ComputeError)


def test_atomic_path_keeps_errors_about_other_files_and_other_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as info, atomic_path(tmp_path / "out"):
        (tmp_path / "missing-input").read_bytes()
    assert info.value.filename == str(tmp_path / "missing-input")
    with pytest.raises(RuntimeError, match="disk on fire"), atomic_path(tmp_path / "out"):
        raise RuntimeError("disk on fire")
    assert list(tmp_path.iterdir()) == []


def test_os_error_cause_walks_the_chain():
    assert os_error_cause(ValueError("x")) is None
    try:
        try:
            raise OSError(errno.EIO, "Input/output error")
        except OSError as inner:
            raise KeyError("k") from inner
    except KeyError as outer:
        assert os_error_cause(outer).errno == errno.EIO


def test_a_log_that_cannot_be_written_goes_to_stderr(capsys):
    """/dev/full: every write fails with ENOSPC, like a log on a full disk. The lines and the
    error reach standard error (Snakemake's output), the error says the log could not be
    written."""
    if not Path("/dev/full").exists():
        pytest.fail("this test needs /dev/full (a Linux device whose writes fail with ENOSPC)")
    with pytest.raises(StepError) as info, rule_log("/dev/full", step="core.test.step") as log:
        log("working")
        raise OSError(errno.EIO, "Input/output error", "results/x.parquet")
    message = str(info.value)
    assert message.startswith("[Errno 5] Input/output error: 'results/x.parquet' (log: /dev/full")
    assert f"it could not be written: {FULL}" in message
    err = capsys.readouterr().err
    assert f"schedlab: cannot write the log /dev/full ({FULL})" in err
    for text in ("core.test.step: started", "working", "error: [Errno 5] Input/output error"):
        assert text in err


def test_a_bug_is_logged_with_its_traceback_and_keeps_its_type(tmp_path):
    @workflow_step
    def buggy(*, ctx: StepContext) -> None:
        return {}["missing"]

    log = tmp_path / "bug.log"
    with pytest.raises(KeyError) as info:
        buggy(log_path=str(log))
    assert info.value.__notes__ == [f"(log: {log})"]
    text = log.read_text()
    assert "error: unexpected KeyError: 'missing'; its traceback:" in text
    assert 'return {}["missing"]' in text


def test_a_panic_outside_a_table_read_is_logged(tmp_path):
    """pyo3_runtime.PanicException is a BaseException: it reaches the log too."""

    @workflow_step
    def panicking(*, ctx: StepContext) -> None:
        raise pl.exceptions.PanicException("index out of bounds")

    log = tmp_path / "panic.log"
    with pytest.raises(pl.exceptions.PanicException):
        panicking(log_path=str(log))
    assert "error: unexpected PanicException: index out of bounds" in log.read_text()
