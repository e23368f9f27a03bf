"""Opening a page in a real browser: headless Chromium (Debian's, /usr/bin/chromium), with the
flags that keep it off this machine's closed network, for the report's rendered content."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

#: The flags of a headless run without network chatter (each start would otherwise try
#: Google's hosts, refused here) and without a profile of its own.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=8000",
)


def chromium() -> str:
    """The browser's path; the test is skipped, saying why, on a machine without it."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("no Chromium on this machine (Debian package chromium)")
    return path


def _run(page: Path, *args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=180,
            check=True,
        )


def rendered_dom(page: Path) -> str:
    """The page's DOM once its scripts have run."""
    return _run(page, "--dump-dom").stdout


def screenshot(page: Path, png: Path, *, width: int = 1400, height: int = 1000) -> None:
    """A PNG of the page as the browser draws it."""
    _run(page, f"--screenshot={png.resolve()}", f"--window-size={width},{height}")
