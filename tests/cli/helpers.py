"""Helpers of the ``scheduler`` command's tests: run it in-process, read what it printed.

Imported as ``cli.helpers`` (``tests/`` is on ``sys.path``, see pyproject.toml); the fixtures
shared by these tests are in ``tests/cli/conftest.py``. Tests call
:func:`scheduler.cli.main.main` in-process and read its output with ``capsys``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scheduler.cli.main import main

SPF_40H = ["--primary", "SPF", "--backfill", "FCFS", "--threshold", "40h"]
#: Every other option: time-dependent primary (lower case), no backfilling, a 2-day threshold.
OTHER_OPTIONS = [
    "--primary",
    "lexp",
    "--backfill",
    "none",
    "--threshold",
    "2d",
    "--reservation",
    "classic",
    "--estimate",
    "clairvoyant",
    "--outlive",
    "double",
]
#: One valid SWF job line (job 1, one processor, 10 s).
JOB_LINE = "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Run ``scheduler *argv`` in-process: exit code, stdout, stderr."""
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> dict:
    """Run ``scheduler *argv --json`` in-process, check it succeeded, parse its output."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def assert_one_line_error(code: int, out: str, err: str, *fragments: str) -> None:
    """Exit code 2, nothing on stdout, one ``scheduler: error:`` line holding ``fragments``."""
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("scheduler: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


def argparse_exit(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    """Run ``scheduler *argv`` expecting argparse to exit; exit code and stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main([str(arg) for arg in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return exit_info.value.code, err


def value_of(label: str, text: str) -> str:
    """The value printed after ``label`` on an aligned ``label  value`` line."""
    match = re.search(rf"^\s+{re.escape(label)}\s+(.+)$", text, re.MULTILINE)
    assert match is not None, f"no line {label!r} in:\n{text}"
    return match.group(1)


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` and return the path."""
    path.write_text(text, encoding="utf-8")
    return path
