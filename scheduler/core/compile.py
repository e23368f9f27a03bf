"""The one numba decorator of the package's compiled kernels (simulator, predictors).

``jit(f)`` is ``njit(cache=True, nogil=True)(f)``: compiled once per machine into numba's
on-disk cache and run without the GIL. ``jit(reassociate=True)(f)`` also lets LLVM reorder
floating-point sums and products and contract them into fused multiply-adds (the fast-math flags
``reassoc``, ``contract``, ``nsz``, ``arcp``; not ``nnan``/``ninf``: NaN and infinity keep their
IEEE meaning), so that reductions vectorise. Results then differ from a strictly sequential
evaluation by rounding only, and stay identical from run to run on one machine.

When numba finds no writable cache directory (it raises ``RuntimeError`` "cannot cache
function" at decoration), every kernel is compiled in memory instead, in every process, with
one warning; :mod:`scheduler.sim.cache` repairs a cache whose files cannot be read.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from numba import njit

__all__ = ["NOT_CACHED_REASON", "REASSOCIATE_FLAGS", "jit"]

#: Why the kernels are not cached on disk in this process (``None``: they are).
NOT_CACHED_REASON: str | None = None


#: The fast-math flags of ``jit(reassociate=True)``.
REASSOCIATE_FLAGS = frozenset({"reassoc", "contract", "nsz", "arcp"})


def jit(func: Callable[..., Any] | None = None, *, reassociate: bool = False) -> Any:
    """``njit(cache=True, nogil=True)(func)``, or ``njit(nogil=True)(func)`` with one warning
    when numba has no writable cache directory. ``@jit`` or ``@jit(reassociate=True)``."""
    if func is None:
        return lambda f: jit(f, reassociate=reassociate)
    global NOT_CACHED_REASON
    options: dict[str, Any] = {"nogil": True}
    if reassociate:
        options["fastmath"] = set(REASSOCIATE_FLAGS)
    if NOT_CACHED_REASON is None:
        try:
            return njit(cache=True, **options)(func)
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
    return njit(**options)(func)
