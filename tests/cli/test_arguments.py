"""Argument types of the ``scheduler`` command (scheduler.cli.arguments).

A bad value exits with argparse's code 2 and a usage message naming the option, never a
traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli.helpers import argparse_exit, run_json

import scheduler
from scheduler.core.registry import name_listing

# --------------------------------------------------------------------------------------------
# Policies, durations, processor counts, table suffixes
# --------------------------------------------------------------------------------------------


def test_unknown_policy_lists_the_known_ones(
    capsys: pytest.CaptureFixture[str], kth_path: Path
) -> None:
    code, err = argparse_exit(capsys, "simulate", kth_path, "--primary", "NOPE")
    assert code == 2
    assert "unknown policy 'NOPE'" in err
    assert "known policies: " + name_listing(scheduler.policy_names()) in err
    code, err = argparse_exit(capsys, "simulate", kth_path, "--backfill", "NOPE")
    assert code == 2
    assert "known policies: " in err


@pytest.mark.parametrize("duration", ["4x", "-1h", "h"])
def test_bad_duration(capsys: pytest.CaptureFixture[str], kth_path: Path, duration: str) -> None:
    code, err = argparse_exit(capsys, "simulate", kth_path, f"--threshold={duration}")
    assert code == 2
    assert "--threshold" in err
    assert repr(duration) in err


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_bad_machine_procs(capsys: pytest.CaptureFixture[str], kth_path: Path, value: str) -> None:
    code, err = argparse_exit(capsys, "info", kth_path, f"--machine-procs={value}")
    assert code == 2
    assert "--machine-procs" in err


def test_bad_job_table_suffix(capsys: pytest.CaptureFixture[str], kth_path: Path) -> None:
    code, err = argparse_exit(capsys, "simulate", kth_path, "--jobs-out", "jobs.txt")
    assert code == 2
    assert ".parquet or .csv" in err


def test_threshold_none_is_infinite(capsys: pytest.CaptureFixture[str], kth_path: Path) -> None:
    run_ = run_json(capsys, "simulate", kth_path, "--threshold", "none")
    assert run_["config"]["threshold_s"] is None


# --------------------------------------------------------------------------------------------
# Out-of-range numbers (issue #11, item 6): a one-line argparse error, never an OverflowError
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["simulate", "info"])
@pytest.mark.parametrize("value", ["99999999999999999999", "2147483648", "1" + "0" * 400])
def test_machine_procs_out_of_range(
    capsys: pytest.CaptureFixture[str], kth_path: Path, command: str, value: str
) -> None:
    code, err = argparse_exit(capsys, command, kth_path, "--machine-procs", value)
    assert code == 2
    assert "--machine-procs" in err
    assert "2147483647" in err


def test_largest_machine_procs_is_accepted() -> None:
    from scheduler.cli.arguments import positive_int

    assert positive_int("2147483647") == 2147483647


@pytest.mark.parametrize("value", ["9" * 400, "9" * 400 + "h", "1" + "0" * 310 + "w"])
def test_threshold_out_of_range(
    capsys: pytest.CaptureFixture[str], kth_path: Path, value: str
) -> None:
    code, err = argparse_exit(capsys, "simulate", kth_path, "--threshold", value)
    assert code == 2
    assert "--threshold" in err
    assert "Traceback" not in err
