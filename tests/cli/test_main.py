"""The ``scheduler`` entry point (scheduler.cli.main): version, usage, handled errors.

Every handled error is one ``scheduler: error:`` line on stderr with exit code 2, never a
traceback; one test runs ``python -m scheduler`` in a subprocess to prove the entry point works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli.helpers import JOB_LINE, SPF_40H, argparse_exit, assert_one_line_error, run, write_text

import scheduler
from scheduler.cli.main import main
from scheduler.sim.engine import SimulationResult

REPO_ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------------------------
# scheduler --version, usage
# --------------------------------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"scheduler {scheduler.__version__}"


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = argparse_exit(capsys)
    assert code == 2
    assert "usage: scheduler" in err


# --------------------------------------------------------------------------------------------
# Errors: one line, exit code 2, never a traceback
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["info", "simulate"])
def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str) -> None:
    missing = tmp_path / "missing.swf"
    code, out, err = run(capsys, command, missing)
    assert_one_line_error(code, out, err, str(missing), "not found")


@pytest.mark.parametrize("command", ["info", "simulate"])
def test_bad_swf_names_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    bad = write_text(tmp_path / "bad.swf", "; MaxProcs: 4\n;\n" + JOB_LINE + "2 0 0 10 1 -1\n")
    code, out, err = run(capsys, command, bad)
    assert_one_line_error(code, out, err, f"{bad}:4", "expected 18 fields, found 6")


def test_unwritable_output(
    capsys: pytest.CaptureFixture[str], kth_path: Path, tmp_path: Path
) -> None:
    not_a_directory = write_text(tmp_path / "file", "")
    target = not_a_directory / "out.swf"
    code, out, err = run(capsys, "filter", kth_path, "--out", target)
    assert_one_line_error(code, out, err, str(target), "cannot write")
    assert not_a_directory.read_text() == ""


# --------------------------------------------------------------------------------------------
# The entry point, in a real subprocess
# --------------------------------------------------------------------------------------------


def test_python_dash_m_scheduler_simulate(kth_path: Path, spf_40h: SimulationResult) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    completed = subprocess.run(
        [sys.executable, "-m", "scheduler", "simulate", str(kth_path), *SPF_40H, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr
    result = json.loads(completed.stdout)
    assert result["summary"] == spf_40h.summary.to_dict()
    assert result["config"]["threshold_s"] == 144000
