"""The one numba decorator of the package's compiled kernels (simulator, predictors).

``jit(f)`` is ``njit(cache=True, nogil=True)(f)``: compiled once per machine into numba's
on-disk cache and run without the GIL. When numba finds no writable cache directory (it raises
``RuntimeError`` "cannot cache function" at decoration), every kernel is compiled in memory
instead, in every process, with one warning; :mod:`scheduler.sim.cache` repairs a cache whose
files cannot be read.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from numba import njit

__all__ = ["NOT_CACHED_REASON", "jit"]

#: Why the kernels are not cached on disk in this process (``None``: they are).
NOT_CACHED_REASON: str | None = None


def jit(func: Callable[..., Any]) -> Any:
    """``njit(cache=True, nogil=True)(func)``, or ``njit(nogil=True)(func)`` with one warning
    when numba has no writable cache directory."""
    global NOT_CACHED_REASON
    if NOT_CACHED_REASON is None:
        try:
            return njit(cache=True, nogil=True)(func)
        except RuntimeError as exc:
            if "cannot cache function" not in str(exc):
                raise
            NOT_CACHED_REASON = str(exc)
            warnings.warn(
                f"schedlab: no writable cache directory for the compiled kernels ({exc}); they "
                "are compiled in memory, in every process (several seconds). Set "
                "NUMBA_CACHE_DIR to a writable directory to cache them",
                RuntimeWarning,
                stacklevel=2,
            )
    return njit(nogil=True)(func)
