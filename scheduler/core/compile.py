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

**When a cached kernel is recompiled.** numba stamps a function's cache entry with its *own*
source file only, but a kernel links in the code of the jitted helpers it calls in other modules
(``sim._predict_kernel`` calls ``sim._kernel``, ``predictors._nag`` and ``predictors.losses``)
and freezes the module-level constants it reads. With numba's stamp alone, an edit to
``_nag.py`` would leave the cached prediction kernel running the old ``nag_update``. So every
function of this package compiled with :func:`jit` is stamped with numba's stamp *and*
:func:`~scheduler.core.code_hash.modules_hash` of the import closure of its module
(:func:`~scheduler.core.code_hash.module_closure`: every ``scheduler`` module the kernel's module
can import, transitively, read from the source, with the packages' ``__init__``; the rule of the
Snakemake rerun hashes). An edit to any of those files (its contents, not its mtime: a fresh
clone of identical code keeps the cache) makes numba treat the cache entry as stale and
recompile; an edit elsewhere does not. This covers everything a kernel can reach: a jitted
function sees other modules only through the names its module imports.

This is done by cache locators (``_SchedlabUserProvided``/``_SchedlabInTree``/
``_SchedlabUserWide``: numba's three file-backed locators, in numba's order, so
``NUMBA_CACHE_DIR``, the in-tree ``__pycache__`` and the user-wide fallback keep their meaning)
registered at the front of numba's list when this module is imported. They accept only functions
whose module is a file of this ``scheduler`` package and leave every other function to numba's
own locators. ``NUMBA_CACHE_LOCATOR_CLASSES``, when set, replaces numba's list and so switches
this off.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

from numba import njit
from numba.core import caching

from scheduler.core.code_hash import module_closure, module_path, modules_hash

__all__ = ["NOT_CACHED_REASON", "REASSOCIATE_FLAGS", "jit", "kernel_source_hash"]

#: Why the kernels are not cached on disk in this process (``None``: they are).
NOT_CACHED_REASON: str | None = None


#: The fast-math flags of ``jit(reassociate=True)``.
REASSOCIATE_FLAGS = frozenset({"reassoc", "contract", "nsz", "arcp"})


def jit(
    func: Callable[..., Any] | None = None,
    *,
    reassociate: bool = False,
    inline: bool = False,
    refcounts: bool = True,
) -> Any:
    """``njit(cache=True, nogil=True)(func)``, or ``njit(nogil=True)(func)`` with one warning
    when numba has no writable cache directory. ``@jit``, ``@jit(reassociate=True)`` or
    ``@jit(inline=True)``: numba inlines the function into every jitted caller (``inline=
    "always"``), saving the call (its array arguments, several words each) where it is called
    per event. ``@jit(refcounts=False)``: compiled without numba's runtime (``_nrt=False``),
    so without the atomic reference count updates numba otherwise wraps around every array
    argument of a call and of an inlined helper (a locked increment and decrement each, which
    pruning removes only in simple control flow); such a function may not allocate or return
    an array, and may only be called while its caller holds the arrays."""
    if func is None:
        return lambda f: jit(f, reassociate=reassociate, inline=inline, refcounts=refcounts)
    global NOT_CACHED_REASON
    options: dict[str, Any] = {"nogil": True}
    if inline:
        options["inline"] = "always"
    if reassociate:
        options["fastmath"] = set(REASSOCIATE_FLAGS)
    if not refcounts:
        options["_nrt"] = False
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


def kernel_source_hash(module: str) -> str:
    """:func:`~scheduler.core.code_hash.modules_hash` of the import closure of ``module``: the
    part of the on-disk cache stamp of the compiled kernels of ``module`` that numba's own stamp
    (the module's file) lacks."""
    return modules_hash(module_closure([module]))


def _package_module(py_func: Callable[..., Any], py_file: str) -> str | None:
    """``py_func``'s module when it is a file of this ``scheduler`` package, else None."""
    module = getattr(py_func, "__module__", None) or ""
    path = module_path(module)
    if path is None:
        return None
    try:
        return module if os.path.samefile(path, py_file) else None
    except OSError:
        return None


class _ClosureStamp:
    """Mixin over a numba file-backed locator: for functions of this package only, the source
    stamp also holds :func:`kernel_source_hash` of the function's module."""

    _schedlab_locator = True
    _schedlab_module: str

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> Any:
        module = _package_module(py_func, py_file)
        if module is None:
            return None  # not ours: numba's own locators, further down the list, take it
        self = super().from_function(py_func, py_file)  # type: ignore[misc]
        if self is not None:
            self._schedlab_module = module
        return self

    def get_source_stamp(self) -> Any:
        own = super().get_source_stamp()  # type: ignore[misc]
        return (own, "schedlab-import-closure", kernel_source_hash(self._schedlab_module))


def _numba_class(name: str) -> Any:
    # recent numba (0.68 here) names its locator and cache classes without the leading
    # underscore that older releases (0.59) used
    return getattr(caching, name, None) or getattr(caching, "_" + name)


class _SchedlabUserProvided(_ClosureStamp, _numba_class("UserProvidedCacheLocator")):  # type: ignore[misc]
    """``NUMBA_CACHE_DIR``, with the import-closure stamp."""


class _SchedlabInTree(_ClosureStamp, _numba_class("InTreeCacheLocator")):  # type: ignore[misc]
    """The module's ``__pycache__``, with the import-closure stamp."""


class _SchedlabUserWide(_ClosureStamp, _numba_class("UserWideCacheLocator")):  # type: ignore[misc]
    """The user-wide numba cache directory, with the import-closure stamp."""


def _register_locators() -> None:
    """Put the three locators at the front of numba's list (once: a reload replaces them)."""
    classes = _numba_class("CacheImpl")._locator_classes
    classes[:] = [c for c in classes if not getattr(c, "_schedlab_locator", False)]
    classes[:0] = [_SchedlabUserProvided, _SchedlabInTree, _SchedlabUserWide]


_register_locators()
