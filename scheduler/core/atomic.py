"""Atomic file replacement: a reader never sees a half-written output.

Every writer of schedlab (SWF traces, JSON reports, parquet tables) writes to a temporary file in
the directory of the target, flushes it to disk and then renames it over the target with
:func:`os.replace`, which is atomic on POSIX and Windows when both paths are on one file system.
On any failure the temporary file is removed and the target is left exactly as it was.

A writer that is killed (SIGKILL, a cluster's time limit, a power cut) cannot remove its
temporary file. The next write of the same target removes such stale temporaries
(:func:`remove_stale_temporaries`): a temporary is named ``.<name>.<pid>@<host>.<random>.tmp``
after the process that writes it, and it is stale when that process, on this host, no longer
runs. A temporary from another host (a shared file system) or from an earlier schedlab
(``.<name>.<random>.tmp``) is stale once it was last written before the current process started
and over :data:`STALE_AFTER_S` ago. Only the target's own temporaries are considered, so two
writers of different files never touch each other's; two concurrent writers of the same file on
one host keep each other's (the last rename wins, each one whole).
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from scheduler.core.errors import SchedlabError, os_error_cause

__all__ = [
    "STALE_AFTER_S",
    "atomic_path",
    "atomic_write_bytes",
    "remove_stale_temporaries",
    "temporary_prefix",
]

#: A temporary whose writer cannot be checked (another host, an older name) is stale when it was
#: last written this long ago (seconds) and before the current process started.
STALE_AFTER_S = 3600.0
#: When this process started, near enough (the module is imported before any write).
_STARTED = time.time()
#: This host in temporary names: characters of a host name only, at most 40.
_HOST = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:40] or "localhost"
#: The random part ``tempfile.mkstemp`` adds: eight of ``[a-z0-9_]``.
_RANDOM = r"[a-z0-9_]{8}"
_OWNED = re.compile(rf"(\d+)@([A-Za-z0-9.-]+)\.{_RANDOM}")
_LEGACY = re.compile(_RANDOM)


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
        system), named ``.<name>.<pid>@<host>.<random>.tmp``. Stale temporaries of ``path``
        left by killed writers are removed first (:func:`remove_stale_temporaries`).

    Raises
    ------
    OSError
        Writing failed for an operating-system error that names no file or the temporary
        (``[Errno 28] No space left on device``), also when a library hid it behind an error of
        its own (:func:`~scheduler.core.errors.os_error_cause`: matplotlib's PDF writer raises
        ``AttributeError`` on a full disk, polars a ``ComputeError`` naming ``os error 28``):
        raised again naming ``path``, from the original error. Any other exception propagates
        as it is.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    fd, tmp_name = tempfile.mkstemp(
        dir=target.parent, prefix=temporary_prefix(target), suffix=".tmp"
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        _fsync_file(tmp)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            tmp.unlink()
        cause = _write_error(error, tmp)
        if cause is not None:
            raise OSError(cause.errno, cause.strerror, os.fspath(path)) from error
        raise
    _fsync_directory(target.parent)


def _write_error(error: BaseException, tmp: Path) -> OSError | None:
    """The operating-system error that made writing ``tmp`` fail (a full disk, a quota, an I/O
    error), when it names no file or the temporary: to be raised again naming the target. None
    for any other failure (a schedlab error, an error about another file, an interrupt)."""
    if not isinstance(error, Exception) or isinstance(error, SchedlabError):
        return None
    cause = os_error_cause(error)
    if cause is None or cause.filename not in (None, str(tmp)):
        return None
    return cause


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


def temporary_prefix(path: str | os.PathLike[str]) -> str:
    """The start of the names of this process's temporaries of ``path``:
    ``.<name>.<pid>@<host>.``."""
    return f".{Path(path).name}.{os.getpid()}@{_HOST}."


def remove_stale_temporaries(path: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporaries of ``path`` that killed writers left (see the module docstring).

    Never raises: a temporary that cannot be removed (or checked) stays.

    Parameters
    ----------
    path
        The output file whose temporaries (``.<name>.*.tmp`` next to it) are checked.

    Returns
    -------
    list of Path
        The temporaries removed.
    """
    target = Path(path)
    prefix, removed = f".{target.name}.", []
    try:
        candidates = [
            entry for entry in target.parent.iterdir()
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp")
        ]  # fmt: skip
    except OSError:
        return removed
    for entry in candidates:
        middle = entry.name[len(prefix) : -len(".tmp")]
        with contextlib.suppress(OSError):
            if _is_stale(entry, middle):
                entry.unlink()
                removed.append(entry)
    return removed


def _is_stale(entry: Path, middle: str) -> bool:
    """Whether the temporary ``entry`` (``middle``: its name between target name and .tmp) is
    stale; ``False`` for a name schedlab does not give."""
    owned = _OWNED.fullmatch(middle)
    if owned is not None and owned.group(2) == _HOST and os.name == "posix":
        return not _process_runs(int(owned.group(1)))
    if owned is None and _LEGACY.fullmatch(middle) is None:
        return False
    modified = entry.stat().st_mtime
    return modified < _STARTED and modified < time.time() - STALE_AFTER_S


def _process_runs(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (POSIX; signal 0 checks without signalling)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it runs, as another user
        return True
    return True


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
