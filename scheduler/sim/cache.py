"""The compiled kernel's state as the rest of the package may see it: which specialisations are
compiled in this process and whether they came from numba's on-disk cache.

The kernel module itself (:mod:`scheduler.sim._kernel`) is private to :mod:`scheduler.sim`; the
``scheduler warmup`` command and the tests read these facts here.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from scheduler.core.errors import SchedlabError
from scheduler.sim import _kernel

__all__ = [
    "KernelCacheError",
    "KernelCacheState",
    "call_repairing_cache",
    "kernel_cache_state",
    "kernel_signatures",
    "repair_broken_cache",
]


class KernelCacheError(SchedlabError):
    """numba's on-disk cache of the kernel cannot be read and cannot be repaired."""


@dataclass(frozen=True)
class KernelCacheState:
    """numba's cache statistics of the kernel's entry point in this process.

    Attributes
    ----------
    cache_path
        Directory of the on-disk cache (``scheduler/sim/__pycache__`` unless
        ``NUMBA_CACHE_DIR`` says otherwise); ``""`` when no directory was writable and the
        kernel is compiled in memory.
    hits, misses
        Specialisations loaded from the cache / compiled (and then written to it).
    """

    cache_path: str
    hits: int
    misses: int


def kernel_cache_state() -> KernelCacheState:
    """The cache statistics of the kernel's entry point (``advance``) in this process."""
    stats = _kernel.advance.stats
    return KernelCacheState(
        "" if stats.cache_path is None else str(stats.cache_path),
        int(sum(stats.cache_hits.values())),
        int(sum(stats.cache_misses.values())),
    )


def kernel_signatures() -> tuple[object, ...]:
    """The argument-type signatures the kernel's entry point is compiled for in this process."""
    return tuple(_kernel.advance.signatures)


def call_repairing_cache(entry: Callable[..., Any], *args: Any) -> Any:
    """``entry(*args)`` for a compiled entry point; when numba's on-disk cache turns out to be
    broken (:func:`repair_broken_cache`), the cache is repaired and the call made once more."""
    try:
        return entry(*args)
    except Exception as exc:
        if not repair_broken_cache(exc):
            raise
    return entry(*args)


def repair_broken_cache(exc: BaseException) -> bool:
    """After the kernel's first call raised ``exc``: when numba raised it while loading its
    on-disk cache (a truncated or corrupt ``_kernel.*.nbc`` / ``.nbi`` file), remove the
    kernel's cache files with a warning naming the directory, so that the caller may call the
    kernel again (it is then recompiled and cached afresh). False for any other error.

    Raises
    ------
    KernelCacheError
        The broken files cannot be removed; the message says which directory to delete.
    """
    if not _raised_by_numba_cache(exc.__traceback__):
        return False
    directory = kernel_cache_state().cache_path
    if not directory:
        return False
    files = sorted(Path(directory).glob(f"{Path(_kernel.__file__).stem}.*.nb[ic]"))
    try:
        for path in files:
            path.unlink(missing_ok=True)
    except OSError as error:
        raise KernelCacheError(
            f"numba's cache of the simulator kernel in {directory} cannot be read "
            f"({type(exc).__name__}: {exc}) nor repaired ({error.strerror or error}); delete the "
            f"directory {directory} (or set NUMBA_CACHE_DIR to another one) and run again"
        ) from exc
    warnings.warn(
        f"schedlab: numba's cache of the simulator kernel in {directory} could not be read "
        f"({type(exc).__name__}: {exc}); removed its {len(files)} kernel files, recompiling "
        "(this takes several seconds once)",
        RuntimeWarning,
        stacklevel=3,
    )
    return True


def _raised_by_numba_cache(tb: TracebackType | None) -> bool:
    """True when a frame of ``tb`` is in numba's caching module (loading a cached overload)."""
    suffix = os.path.join("numba", "core", "caching.py")
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(suffix):
            return True
        tb = tb.tb_next
    return False
