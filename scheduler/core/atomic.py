"""Atomic file replacement: a reader never sees a half-written output.

Every writer of schedlab (SWF traces, JSON reports, parquet tables) writes to a temporary file in
the directory of the target, flushes it to disk and then renames it over the target with
:func:`os.replace`, which is atomic on POSIX and Windows when both paths are on one file system.
On any failure the temporary file is removed and the target is left exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_bytes"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path that replaces ``path`` atomically when the block succeeds.

    The caller writes the whole output to the yielded path (any writer that takes a path works,
    e.g. ``DataFrame.write_parquet``). When the ``with`` block ends without an exception the
    temporary file is flushed to disk (``fsync``), given the permissions a new file would get
    (or those of the file it replaces) and renamed over ``path``. When the block raises, the
    temporary file is removed, ``path`` is untouched and the exception propagates.

    Parameters
    ----------
    path
        The final output file. Its parent directory is created when missing.

    Yields
    ------
    Path
        A fresh, empty temporary file next to ``path`` (same directory, hence same file
        system), named ``.<name>.<random>.tmp``.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        _fsync_file(tmp)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_directory(target.parent)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (all or nothing).

    Parameters
    ----------
    path
        The output file; replaced atomically, parent directory created when missing.
    data
        The complete file content.
    """
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        handle.write(data)


def _fsync_file(path: Path) -> None:
    """Flush the content of ``path`` to stable storage."""
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _fsync_directory(directory: Path) -> None:
    """Flush a directory entry (the rename) to stable storage where the platform allows it."""
    # Opening a directory is not possible on Windows; the rename is then as durable as it gets.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _mode_for(target: Path) -> int:
    """Permission bits for the new file: those of the replaced file, else ``0o666 & ~umask``."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~_current_umask()


def _current_umask() -> int:
    """The process umask, read without changing it where the platform allows (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    # Fallback: os.umask can only be read by setting it; set it straight back.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
