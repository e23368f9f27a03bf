"""Hashes of the code a workflow step runs, derived from the import graph (never listed by hand).

Snakemake cannot see inside an imported package (``--rerun-triggers code`` looks at the rule's
own text), so every rule puts :func:`step_hash` of the function it calls into its ``params``: a
change to any module that function can import reruns the step, and a change elsewhere does not.

What counts for a step ``f`` defined in module ``M``:

- the source of ``f`` and, recursively, of the top-level functions, classes and assignments of
  ``M`` that it names (not the rest of ``M``, so one module can hold several steps);
- every ``scheduler`` module that ``f`` (or those helpers) imports, at the top of ``M`` or inside
  a function body, and transitively every module those import anywhere in their source
  (including imports inside functions: a module is taken whole), with the ``__init__`` of each
  package on the way (Python executes them on import).

The graph is read from the source with :mod:`ast` (nothing is imported), so the hash is the same
whether or not a module was already imported, and it is stable across machines: it depends only
on file contents and their paths inside the package.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from scheduler.core.atomic import atomic_write_bytes
from scheduler.core.errors import SchedlabError

__all__ = [
    "module_closure",
    "module_imports",
    "module_path",
    "modules_hash",
    "package_hash",
    "step_dependencies",
    "step_hash",
]

PACKAGE = "scheduler"
_ROOT = Path(__file__).resolve().parents[1]  # the scheduler/ folder


@functools.cache
def _path(module: str) -> Path | None:
    """File of a ``scheduler`` module (``x.py`` or ``x/__init__.py``), None if there is none.
    Cached until :func:`_stamps` sees a file added or removed."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    parts = module.split(".")[1:]
    base = _ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py") if parts else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def module_path(module: str) -> Path | None:
    """File of a module of this ``scheduler`` package (``x.py`` or ``x/__init__.py``), None for
    any other name."""
    return _path(module)


@functools.cache
def _tree(path: Path, stamp: tuple[int, int]) -> ast.Module:
    return ast.parse(path.read_bytes(), filename=str(path))


def _parse(path: Path) -> ast.Module:
    stat = path.stat()
    return _tree(path, (stat.st_mtime_ns, stat.st_size))


def _package_of(module: str) -> str:
    path = _path(module)
    return module if path is not None and path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve(node: ast.ImportFrom, module: str) -> str:
    if not node.level:
        return node.module or ""
    base = _package_of(module).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): imports for type checkers only."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _import_statements(statements: Iterable[ast.AST]) -> Iterable[ast.Import | ast.ImportFrom]:
    """The import statements among ``statements`` and inside their blocks (function and class
    bodies, branches, handlers, cases), skipping ``if TYPE_CHECKING:`` blocks (never executed).
    Imports are statements, so expressions are never entered."""
    todo = list(statements)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif _is_type_checking(node):
            todo.extend(node.orelse)  # type: ignore[attr-defined]
        else:
            for field in _BLOCKS:
                todo.extend(getattr(node, field, ()))


def _imported_names(nodes: Iterable[ast.AST], module: str) -> set[str]:
    """Every module name the import statements among ``nodes`` and in their blocks may import
    (resolved; ``from m import x`` gives ``m`` and ``m.x``), whether or not a file has it."""
    found: set[str] = set()
    for node in _import_statements(nodes):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        else:
            source = _resolve(node, module)
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names)
    return found


def _imports_in(nodes: Iterable[ast.AST], module: str) -> set[str]:
    """``scheduler`` modules imported by the import statements among ``nodes`` and in their
    blocks."""
    return {name for name in _imported_names(nodes, module) if _path(name) is not None}


class _Statement(NamedTuple):
    """What one top-level statement of a module contributes to a step's hash."""

    node: ast.stmt
    imports: frozenset[str]  # scheduler modules imported anywhere inside it
    names: frozenset[str]  # every name it uses
    source: str  # its text (ast.get_source_segment)


class _ModuleFacts(NamedTuple):
    statements: tuple[_Statement, ...]
    bindings: dict[str, int | frozenset[str]]  # name -> statement index, or imported modules


def _segment(lines: list[str], node: ast.AST) -> str:
    """``ast.get_source_segment(source, node)`` from the source's lines, split once."""
    first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
    start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    if first == last:
        return lines[first].encode()[start:end].decode()
    head = lines[first].encode()[start:].decode()
    tail = lines[last].encode()[:end].decode()
    return "".join([head, *lines[first + 1 : last], tail])


def _stamped_path(module: str) -> tuple[Path, tuple[int, int]]:
    """The file of ``module`` and its version stamp (mtime in ns, size): the caches' key."""
    path = _path(module)
    if path is None:
        raise ValueError(f"{module!r} is not a module of the {PACKAGE} package")
    stat = path.stat()
    return path, (stat.st_mtime_ns, stat.st_size)


def _facts(module: str) -> _ModuleFacts:
    return _module_facts(module, *_stamped_path(module))


@functools.cache
def _module_facts(module: str, path: Path, stamp: tuple[int, int]) -> _ModuleFacts:
    # once per file version of a module that holds steps
    tree = _tree(path, stamp)
    # the lines as ast.get_source_segment splits them (\r\n, \r or \n; not form feeds)
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", path.read_text(encoding="utf-8"))
    statements = tuple(
        _Statement(
            node,
            frozenset(_imports_in([node], module)),
            frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name)),
            _segment(lines, node),
        )
        for node in tree.body
    )
    return _ModuleFacts(statements, _bindings(tree, module))


def module_imports(module: str) -> frozenset[str]:
    """Every ``scheduler`` module imported anywhere in ``module`` (top level or in functions)."""
    imports = _module_imports(module, *_stamped_path(module))
    _save_imports()
    return imports


@functools.cache
def _module_imports(module: str, path: Path, stamp: tuple[int, int]) -> frozenset[str]:
    # cached per file version: every Snakemake start hashes every rule's step
    return frozenset(name for name in _cached_imported_names(module, path) if _path(name))


#: The module names each module's source imports (:func:`_imported_names` of its whole source),
#: kept across processes: every Snakemake start (and step-pool worker) hashes every rule's step,
#: and parsing the ~130 modules of their closures cost about 0.3 s of CPU each time. One JSON
#: object, path inside the package -> [SHA-256 of the source it was read from, names]: an
#: edited file is parsed again, a file that disappeared is never asked for. Written atomically
#: where it can be (a missing, unreadable or damaged file is the same as an empty one; an
#: unwritable folder only means parsing in every process), never read as the hash itself: the
#: hash is of the files' bytes.
IMPORTS_CACHE = _ROOT / "__pycache__" / "code_hash-imports.json"
_IMPORTS: dict[str, Any] = {}  # "entries": the cache's object; "dirty": entries not yet written
_IMPORTS_LOCK = threading.Lock()  # Snakemake runs jobs as threads of one process


def _import_entries() -> dict[str, Any]:
    if "entries" not in _IMPORTS:
        try:
            entries = json.loads(IMPORTS_CACHE.read_bytes())
        except (OSError, ValueError):
            entries = {}
        _IMPORTS["entries"] = entries if isinstance(entries, dict) else {}
    return _IMPORTS["entries"]


def _cached_imported_names(module: str, path: Path) -> list[str]:
    """:func:`_imported_names` of the whole source of ``module`` (at ``path``), from
    :data:`IMPORTS_CACHE` when it holds them for these very bytes."""
    source = path.read_bytes()
    digest = hashlib.sha256(source).hexdigest()
    key = path.relative_to(_ROOT).as_posix()
    entries = _import_entries()
    entry = entries.get(key)
    if (
        isinstance(entry, list) and len(entry) == 2 and entry[0] == digest
        and isinstance(entry[1], list) and all(isinstance(name, str) for name in entry[1])
    ):  # fmt: skip
        return entry[1]
    names = sorted(_imported_names(ast.parse(source, filename=str(path)).body, module))
    with _IMPORTS_LOCK:
        entries[key] = [digest, names]
        _IMPORTS["dirty"] = True
    return names


def _save_imports() -> None:
    """Write :data:`IMPORTS_CACHE` when entries were added; give up silently when it cannot."""
    with _IMPORTS_LOCK:
        if not _IMPORTS.pop("dirty", False):
            return
        data = json.dumps(_import_entries(), sort_keys=True).encode()
    # a read-only install: every process parses, as without the cache
    with contextlib.suppress(OSError, SchedlabError):
        atomic_write_bytes(IMPORTS_CACHE, data)


def _with_packages(module: str) -> set[str]:
    """``module`` and the packages Python initialises to import it (``a.b.c`` → a, a.b)."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def module_closure(modules: Iterable[str]) -> frozenset[str]:
    """``modules`` and every ``scheduler`` module they can import, transitively."""
    seen: set[str] = set()
    todo = [name for module in modules for name in _with_packages(module)]
    while todo:
        module = todo.pop()
        if module in seen or _path(module) is None:
            continue
        seen.add(module)
        for imported in _module_imports(module, *_stamped_path(module)):
            todo.extend(_with_packages(imported))
    _save_imports()
    return frozenset(seen)


def _bindings(tree: ast.Module, module: str) -> dict[str, int | frozenset[str]]:
    """Top-level name → the index of the statement that binds it (def, class, assignment), or
    for an import the ``scheduler`` modules that this one name brings in."""
    bound: dict[str, int | frozenset[str]] = {}
    for index, statement in enumerate(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                name = alias.asname or alias.name.split(".")[0]
                target = alias.name if alias.asname else alias.name.split(".")[0]
                bound.setdefault(
                    name, frozenset(_imports_in([ast.Import([ast.alias(target)])], module))
                )
        elif isinstance(statement, ast.ImportFrom):
            source = _resolve(statement, module)
            for alias in statement.names:
                modules = {source, f"{source}.{alias.name}"}
                bound.setdefault(
                    alias.asname or alias.name,
                    frozenset(m for m in modules if _path(m) is not None),
                )
        else:
            names: list[str] = []
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names = [statement.name]
            elif isinstance(statement, ast.Assign):
                names = [
                    n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)
                ]
            elif isinstance(statement, ast.AnnAssign | ast.AugAssign) and isinstance(
                statement.target, ast.Name
            ):
                names = [statement.target.id]
            for name in names:
                bound.setdefault(name, index)
    return bound


def step_dependencies(module: str, name: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """What :func:`step_hash` covers for the function ``name`` of ``module``.

    Returns
    -------
    tuple
        The closure of ``scheduler`` modules the function can import, and the source segments
        of ``module`` it uses (its own definition first, then helpers in file order).
    """
    facts = _facts(module)
    start = facts.bindings.get(name)
    if not isinstance(start, int) or not isinstance(
        facts.statements[start].node, ast.FunctionDef | ast.ClassDef
    ):
        raise ValueError(f"{module} defines no top-level function or class {name!r}")
    used: list[int] = []
    imports: set[str] = set()
    todo = [start]
    while todo:
        index = todo.pop()
        if index in used:
            continue
        used.append(index)
        statement = facts.statements[index]
        imports |= statement.imports  # imports inside function bodies
        for used_name in statement.names:
            binding = facts.bindings.get(used_name)
            if isinstance(binding, frozenset):
                imports |= binding
            elif binding is not None:
                todo.append(binding)
    helpers = sorted(used[1:], key=lambda index: facts.statements[index].node.lineno)
    segments = tuple(facts.statements[index].source for index in [start, *helpers])
    return module_closure(imports | {PACKAGE}), segments


@functools.cache
def _hash(module: str, name: str, stamps: tuple[Any, ...]) -> str:
    modules, segments = step_dependencies(module, name)
    digest = hashlib.sha256()
    for dependency in sorted(modules):
        path = _path(dependency)
        assert path is not None
        digest.update(path.relative_to(_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    for segment in segments:
        digest.update(segment.encode() + b"\0")
    return digest.hexdigest()[:16]


def step_hash(step: Callable[..., Any] | str) -> str:
    """SHA-256 (first 16 hex digits) of the code a workflow step can run.

    Parameters
    ----------
    step
        The step function itself, or ``"module:function"``
        (``"scheduler.studies.tuning.steps:simulate_batch"``).
    """
    if isinstance(step, str):
        module, _, name = step.partition(":")
    else:
        module, name = step.__module__, step.__qualname__
    return _hash(module, name, _stamps())


def modules_hash(modules: Iterable[str]) -> str:
    """SHA-256 (first 16 hex digits) of the files of the given ``scheduler`` modules (their
    contents and paths inside the package; modules without a file are ignored).

    Cached per file version, so that hashing the same closure for every compiled kernel of a
    module costs one ``stat`` per file.
    """
    paths = sorted({path for path in map(_path, modules) if path is not None})
    return _files_hash(tuple((p, p.stat().st_mtime_ns, p.stat().st_size) for p in paths))


@functools.cache
def _files_hash(stamps: tuple[tuple[Path, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for path, _, _ in stamps:
        digest.update(path.relative_to(_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


_FILES: dict[str, tuple[str, ...]] = {}  # the package's .py files when last listed


def _stamps() -> tuple[tuple[str, int, int], ...]:
    """(path, mtime in ns, size) of every ``.py`` file of the package, in ``Path`` order."""
    files: list[str] = []
    for folder, _, names in os.walk(_ROOT):
        files.extend(os.path.join(folder, name) for name in names if name.endswith(".py"))
    files.sort(key=lambda name: name.split(os.sep))  # as sorted() orders Path objects
    if _FILES.get("listing") != (listing := tuple(files)):
        _path.cache_clear()  # a module appeared or vanished
        _FILES["listing"] = listing
    stats = [os.stat(name) for name in files]
    return tuple(
        (Path(name).as_posix(), stat.st_mtime_ns, stat.st_size)
        for name, stat in zip(files, stats, strict=True)
    )


@functools.cache
def _package_hash(stamps: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _, _ in stamps:
        path = Path(name)
        digest.update(path.relative_to(_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def package_hash() -> str:
    """SHA-256 (first 16 hex digits) of every ``.py`` file of the package: the code version an
    output's provenance record names (any edit anywhere changes it)."""
    return _package_hash(_stamps())
