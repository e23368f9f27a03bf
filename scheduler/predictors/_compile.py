"""The numba decorator of the predictor kernels (private).

``jit(f)`` is ``njit(cache=True, nogil=True)(f)``; when numba finds no writable cache directory
(it raises ``RuntimeError`` at decoration) the function is compiled in memory instead, with one
warning, as the simulator kernel does (``scheduler/sim/_kernel.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from numba import njit

#: Why the predictor kernels are not cached on disk in this process (``None``: they are).
NOT_CACHED_REASON: str | None = None


def jit(func: Callable[..., Any]) -> Any:
    """Compile ``func`` with numba (nopython, no GIL), on disk when a cache is writable."""
    global NOT_CACHED_REASON
    if NOT_CACHED_REASON is None:
        try:
            return njit(cache=True, nogil=True)(func)
        except RuntimeError as exc:
            if "cannot cache function" not in str(exc):
                raise
            NOT_CACHED_REASON = str(exc)
            warnings.warn(
                f"schedlab: no writable cache directory for the predictor kernels ({exc}); "
                "they are compiled in memory, in every process",
                RuntimeWarning,
                stacklevel=2,
            )
    return njit(nogil=True)(func)
