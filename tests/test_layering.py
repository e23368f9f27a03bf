"""The package's layering, checked on the source with :mod:`ast` (nothing is imported).

Every module of ``scheduler/`` is read, with its imports at the top level *and* inside function
bodies (``if TYPE_CHECKING:`` blocks are skipped: they never run). The rules
(``docs/architecture.md``):

(a) layer order: a module imports nothing from a layer above its own::

        core (0) <- traces (1) <- policies, predictors (2) <- sim (3) <- studies (4) <- cli (5)

    Policies sit *below* the engine: they are NumPy functions over job arrays and need nothing
    of it, while the engine resolves policy names to priority keys. The top-level package
    (``scheduler/__init__.py``, the lazy public API) counts as above every layer.
(b) a study imports no other study: ``studies.<name>`` may import ``studies.common`` and itself;
    ``studies.common`` imports no study.
(c) a sub-package ``__init__.py`` holds only a docstring, imports, ``__all__`` and ``del``; the
    top-level ``scheduler/__init__.py`` imports nothing from ``scheduler`` at run time (only
    under ``TYPE_CHECKING``; the names are resolved on first use).
(d) no module imports a private name (``from x import _name``) of another module; a private
    *module* of the importer's own package is fine (``scheduler.sim.engine`` importing
    ``scheduler.sim._kernel``).

Each failure names the importing file, the line and the rule. Known violations that are someone
else's to fix are listed in ``ALLOWED`` with the reason; an entry that no longer matches fails the
test, so the list only shrinks.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "scheduler"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

#: Layer of each top-level sub-package (or module) of ``scheduler``; the top-level package
#: itself is above them all. A new sub-package must be added here.
LAYERS: dict[str, int] = {
    "core": 0,
    "traces": 1,
    "policies": 2,
    "predictors": 2,
    "sim": 3,
    "studies": 4,
    "rl": 4,  # the Gymnasium environment and the agents: beside the studies that use them
    "cli": 5,
    "__main__": 5,  # ``python -m scheduler``: the command line
}
TOP = max(LAYERS.values()) + 1
#: The sub-packages of each layer, by layer (space-separated where a layer has several).
LAYER_NAMES = ("core", "traces", "policies predictors", "sim", "studies rl", "cli")
COMMON = "common"  # studies.common: shared by every study

#: Known violations, as (rule, importing module, imported module or name). Each needs a reason
#: and an owner; remove the entry with the fix (test_allowed_entries_still_apply enforces it).
ALLOWED: frozenset[tuple[str, str, str]] = frozenset()


# -- reading the package ------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One imported name: ``from source import name`` (or ``import source`` with name None)."""

    line: int
    source: str
    name: str | None


@dataclass(frozen=True)
class Violation:
    rule: str
    importer: str
    target: str
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.importer} {self.message} [rule ({self.rule})]"


def module_files() -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file of the package."""
    modules: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = module_files()


def is_package(module: str, modules: dict[str, Path] = MODULES) -> bool:
    path = modules.get(module)
    return path is not None and path.name == "__init__.py"


def package_of(module: str, modules: dict[str, Path] = MODULES) -> str:
    return module if is_package(module, modules) else module.rpartition(".")[0]


def is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without the bodies of ``if TYPE_CHECKING:`` (their ``else`` is kept)."""
    todo = [node]
    while todo:
        current = todo.pop()
        if is_type_checking(current):
            assert isinstance(current, ast.If)
            todo.extend(current.orelse)
            continue
        yield current
        todo.extend(ast.iter_child_nodes(current))


def imports_of(tree: ast.AST, module: str, modules: dict[str, Path] = MODULES) -> list[Import]:
    """Every run-time import in ``tree`` (module ``module``), relative ones resolved."""
    found: list[Import] = []
    for node in walk(tree):
        if isinstance(node, ast.Import):
            found.extend(Import(node.lineno, alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package_of(module, modules).split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, source] if source else base)
            found.extend(Import(node.lineno, source, alias.name) for alias in node.names)
    return sorted(found, key=lambda item: item.line)


def target(item: Import, modules: dict[str, Path] = MODULES) -> str:
    """The module an import reaches: ``from a import b`` reaches ``a.b`` if that is a module."""
    if item.name is not None and f"{item.source}.{item.name}" in modules:
        return f"{item.source}.{item.name}"
    return item.source


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def in_package(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def layer(module: str) -> int | None:
    parts = module.split(".")
    return TOP if len(parts) == 1 else LAYERS.get(parts[1])


def study(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "studies" else None


def relative(path: Path) -> str:
    return path.relative_to(ROOT.parent).as_posix() if path.is_relative_to(ROOT) else str(path)


def package_imports() -> Iterator[tuple[str, Path, Import]]:
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for item in imports_of(tree, module):
            yield module, path, item


# -- the rules ----------------------------------------------------------------------------------


def layer_violations() -> list[Violation]:
    """Rule (a)."""
    found: list[Violation] = []
    for module, path, item in package_imports():
        reached = target(item)
        if not in_package(reached) or module == PACKAGE:  # the top level: rule (c)
            continue

        own = layer(module)
        if own is None:
            message = f"is in no layer: add its sub-package to LAYERS in {Path(__file__).name}"
        elif reached not in MODULES:
            message = f"imports {reached}, which is not a module of the package"
        elif (theirs := layer(reached)) is None:
            message = f"imports {reached}, which is in no layer"
        elif theirs > own:
            above = "the top-level package" if theirs == TOP else f"layer {theirs}"
            message = f"(layer {own}) imports {reached} ({above}): layers import only downwards"
        else:
            continue
        found.append(Violation("a", module, reached, relative(path), item.line, message))
    return found


def study_violations() -> list[Violation]:
    """Rule (b)."""
    found: list[Violation] = []
    for module, path, item in package_imports():
        reached = target(item)
        mine, theirs = study(module), study(reached)
        if mine is None or theirs is None or theirs in (mine, COMMON):
            continue
        message = (
            f"(studies.common) imports the study {reached}: studies.common imports no study"
            if mine == COMMON
            else f"(study {mine}) imports {reached}, another study: share code through "
            "studies.common"
        )
        found.append(Violation("b", module, reached, relative(path), item.line, message))
    return found


def is_init_statement(statement: ast.stmt, index: int) -> bool:
    """Allowed in a sub-package ``__init__``: docstring, imports, ``__all__``, ``del``."""
    if isinstance(statement, ast.Import | ast.ImportFrom | ast.Delete):
        return True
    if index == 0 and isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
        targets = [statement.target]
    else:
        return False
    return all(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def init_violations() -> list[Violation]:
    """Rule (c)."""
    found: list[Violation] = []
    for module, path in MODULES.items():
        if path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        if module == PACKAGE:
            for item in imports_of(tree, module):
                if in_package(target(item)):
                    found.append(
                        Violation(
                            "c",
                            module,
                            target(item),
                            relative(path),
                            item.line,
                            f"imports {target(item)} at run time: the top-level API resolves "
                            "its names lazily (import only under `if TYPE_CHECKING:`)",
                        )
                    )
            continue
        for index, statement in enumerate(tree.body):
            if not is_init_statement(statement, index):
                kind = type(statement).__name__
                found.append(
                    Violation(
                        "c",
                        module,
                        kind,
                        relative(path),
                        statement.lineno,
                        f"holds a {kind} statement: a package __init__ holds only a docstring, "
                        "imports, __all__ and del (put the code in a module)",
                    )
                )
    return found


def private_violations(
    imports: Iterator[tuple[str, Path, Import]] | None = None,
    modules: dict[str, Path] = MODULES,
) -> list[Violation]:
    """Rule (d)."""
    found: list[Violation] = []
    for module, path, item in package_imports() if imports is None else imports:
        own_package = package_of(module, modules)
        if item.name is not None:  # from source import name
            if not is_private(item.name):
                continue
            reached = f"{item.source}.{item.name}"
            if reached in modules and item.source == own_package:
                continue  # a private module of the importer's own package
            what = "private module" if reached in modules else "private name"
            message = f"imports the {what} {item.name} of {item.source}"
        else:  # import a.b._c
            parts = item.source.split(".")
            bad = [
                i
                for i, part in enumerate(parts)
                if is_private(part) and ".".join(parts[:i]) != own_package
            ]
            if not bad:
                continue
            reached = ".".join(parts[: bad[0] + 1])
            message = f"imports the private module {reached}"
        message += ": only a module's own package may use its private names"
        found.append(Violation("d", module, reached, relative(path), item.line, message))
    return found


def failures(violations: list[Violation]) -> list[str]:
    """One line per violation not in ALLOWED (one per statement, not per imported name)."""
    lines = [str(v) for v in violations if (v.rule, v.importer, v.target) not in ALLOWED]
    return list(dict.fromkeys(lines))


# -- tests --------------------------------------------------------------------------------------


def test_every_module_is_read():
    assert {"scheduler", "scheduler.core.errors", "scheduler.sim.engine"} <= set(MODULES)
    assert {layer(m) for m in MODULES} >= set(range(len(LAYER_NAMES)))
    assert all(LAYERS[name] == i for i, names in enumerate(LAYER_NAMES) for name in names.split())


def test_layers_import_only_downwards():
    assert not (bad := failures(layer_violations())), "\n".join(bad)


def test_no_study_imports_another_study():
    assert not (bad := failures(study_violations())), "\n".join(bad)


def test_package_inits_hold_no_logic():
    assert not (bad := failures(init_violations())), "\n".join(bad)


def test_no_private_names_across_modules():
    assert not (bad := failures(private_violations())), "\n".join(bad)


def test_allowed_entries_still_apply():
    current = {
        (v.rule, v.importer, v.target)
        for v in [
            *layer_violations(),
            *study_violations(),
            *init_violations(),
            *private_violations(),
        ]
    }
    assert not (stale := ALLOWED - current), f"fixed, remove from ALLOWED: {sorted(stale)}"


# -- the checker itself, on small sources -------------------------------------------------------

FAKE = {
    name: Path(f"/fake/{name.replace('.', '/')}{suffix}")
    for name, suffix in [
        ("scheduler", "/__init__.py"),
        ("scheduler.sim", "/__init__.py"),
        ("scheduler.sim.engine", ".py"),
        ("scheduler.sim._kernel", ".py"),
        ("scheduler.cli", "/__init__.py"),
        ("scheduler.cli.main", ".py"),
    ]
}


def parse_imports(source: str, module: str) -> list[Import]:
    return imports_of(ast.parse(textwrap.dedent(source)), module, FAKE)


def test_imports_inside_functions_count_and_type_checking_blocks_do_not():
    found = parse_imports(
        """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from scheduler.studies import hidden
        else:
            import scheduler.core.errors
        def f():
            from scheduler.cli import main
        """,
        "scheduler.sim.engine",
    )
    assert [(i.source, i.name) for i in found] == [
        ("typing", "TYPE_CHECKING"),
        ("scheduler.core.errors", None),
        ("scheduler.cli", "main"),
    ]
    assert target(found[-1], FAKE) == "scheduler.cli.main"


def test_relative_imports_are_resolved():
    found = parse_imports("from . import _kernel\nfrom ..cli import main", "scheduler.sim.engine")
    assert [(i.source, i.name) for i in found] == [
        ("scheduler.sim", "_kernel"),
        ("scheduler.cli", "main"),
    ]


@pytest.mark.parametrize(
    ("module", "source", "bad"),
    [
        ("scheduler.sim.engine", "from scheduler.sim import _kernel", False),
        ("scheduler.sim.engine", "import scheduler.sim._kernel", False),
        ("scheduler.sim.engine", "from scheduler.sim import __version__", False),
        ("scheduler.cli.main", "from scheduler.sim import _kernel", True),
        ("scheduler.cli.main", "import scheduler.sim._kernel", True),
        ("scheduler.sim.engine", "from scheduler.sim._kernel import _advance", True),
        ("scheduler.cli.main", "from numpy.core import _internal", True),
    ],
)
def test_private_rule(module, source, bad):
    items = [(module, FAKE[module], item) for item in parse_imports(source, module)]
    assert bool(private_violations(iter(items), FAKE)) == bad
