"""The compiled kernel's state as the rest of the package may see it: which specialisations are
compiled in this process and whether they came from numba's on-disk cache.

The kernel module itself (:mod:`scheduler.sim._kernel`) is private to :mod:`scheduler.sim`; the
``scheduler warmup`` command and the tests read these facts here.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.sim import _kernel

__all__ = ["KernelCacheState", "kernel_cache_state", "kernel_signatures"]


@dataclass(frozen=True)
class KernelCacheState:
    """numba's cache statistics of the kernel's entry point in this process.

    Attributes
    ----------
    cache_path
        Directory of the on-disk cache (``scheduler/sim/__pycache__`` unless
        ``NUMBA_CACHE_DIR`` says otherwise).
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
        str(stats.cache_path),
        int(sum(stats.cache_hits.values())),
        int(sum(stats.cache_misses.values())),
    )


def kernel_signatures() -> tuple[object, ...]:
    """The argument-type signatures the kernel's entry point is compiled for in this process."""
    return tuple(_kernel.advance.signatures)
