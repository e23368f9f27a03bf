"""A full disk for the fault tests: a command run with a small tmpfs mounted on a folder, in a
user and mount namespace of its own (``unshare --user --map-root-user --mount``), so that it
works without root, needs no clean-up (the mount ends with the command) and never touches the
machine's mounts.

When no such file system can be made, the test fails saying why (the project's rule: no test
is skipped silently); it never passes without having filled a disk.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

#: The marker line before the files :func:`run_on_full_disk` prints from the full disk.
SHOW = "--- full disk file: "


def run_on_full_disk(
    folder: Path,
    size_bytes: int,
    command: Sequence[str],
    *,
    cwd: Path,
    make_dirs: Sequence[Path] = (),
    show: Sequence[Path] = (),
    timeout_s: float = 600,
) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """Run ``command`` in ``cwd`` with a tmpfs of ``size_bytes`` bytes mounted on ``folder``.

    ``make_dirs`` are created after the mount (folders on the small file system); ``show``
    are files read after the command, before the file system goes away (file -> text, absent
    ones left out). Returns the finished process and those files.
    """
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.fail("a full disk needs util-linux's unshare (not found on PATH)")
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        "set -u",
        f"mount -t tmpfs -o size={int(size_bytes)} schedlab-full {shlex.quote(str(folder))}"
        " || exit 97",
        *(f"mkdir -p {shlex.quote(str(path))} || exit 98" for path in make_dirs),
        f"cd {shlex.quote(str(cwd))}",
        shlex.join(command),
        "status=$?",
        *(_show(path) for path in show),
        "exit $status",
    ]
    done = subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", "\n".join(lines)],
        capture_output=True, text=True, timeout=timeout_s,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    if done.returncode in (97, 98) or "unshare:" in done.stderr[:500]:
        pytest.fail(
            f"cannot make a small file system for the full-disk test (unshare --user "
            f"--map-root-user --mount, then mount -t tmpfs): exit {done.returncode}, "
            f"{done.stderr.strip()[-1000:]}"
        )
    shown: dict[str, str] = {}
    current = None
    for line in done.stdout.splitlines(keepends=True):
        if line.startswith(SHOW):
            current = line[len(SHOW) :].rstrip("\n")
            shown[current] = ""
        elif current is not None:
            shown[current] += line
    return done, shown


def _show(path: Path) -> str:
    """A shell line printing :data:`SHOW`, the path, then the file, when it exists."""
    quoted = shlex.quote(str(path))
    return f"if [ -f {quoted} ]; then echo {shlex.quote(SHOW + str(path))}; cat {quoted}; fi"
