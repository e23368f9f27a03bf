"""Step hashes derived from the import graph (scheduler.core.code_hash): what each step's hash
covers, on the real package and on a small package written for the test."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import scheduler
from scheduler.core.code_hash import (
    module_closure,
    module_imports,
    module_path,
    modules_hash,
    package_hash,
    step_dependencies,
    step_hash,
)
from scheduler.studies.online import steps as online_steps
from scheduler.studies.tuning import steps as tuning_steps
from scheduler.traces import steps as trace_steps

PACKAGE = Path(scheduler.__file__).resolve().parent


def test_hash_is_short_hex_and_stable():
    first = step_hash(tuning_steps.simulate_batch)
    assert re.fullmatch(r"[0-9a-f]{16}", first)
    assert step_hash(tuning_steps.simulate_batch) == first
    assert step_hash("scheduler.studies.tuning.steps:simulate_batch") == first


def test_steps_of_one_module_hash_differently():
    assert step_hash(tuning_steps.simulate_batch) != step_hash(tuning_steps.trace_figure)


def test_simulation_covers_the_engine_and_not_figures_or_statistics():
    modules, _ = step_dependencies("scheduler.studies.tuning.steps", "simulate_batch")
    assert {"scheduler.sim._kernel", "scheduler.sim.engine", "scheduler.policies.classic",
            "scheduler.policies.published", "scheduler.core.constants"} <= modules  # fmt: skip
    assert "scheduler.studies.tuning.figures" not in modules
    assert "scheduler.studies.tuning.stats" not in modules
    assert not any(m.startswith("scheduler.studies.online") for m in modules)


def test_figure_step_covers_its_figure_module_and_not_the_kernel():
    modules, _ = step_dependencies("scheduler.studies.tuning.steps", "trace_figure")
    assert "scheduler.studies.tuning.figures" in modules  # imported inside the function
    assert "scheduler.sim._kernel" not in modules


def test_resampling_covers_constants():
    # the bug of the hand-written lists: resample uses WEEK_S from constants
    modules, _ = step_dependencies("scheduler.traces.steps", "resample_batch")
    assert {"scheduler.traces.resample", "scheduler.core.constants"} <= modules
    assert "scheduler.traces.download" not in modules


def test_online_tables_cover_statistics_and_not_the_kernel():
    modules, _ = step_dependencies("scheduler.studies.online.steps", "online_tables")
    assert any(m.startswith("scheduler.studies.online.") for m in modules)
    assert "scheduler.sim._kernel" not in modules


def test_type_checking_imports_do_not_count():
    # scheduler/__init__.py names the whole API under `if TYPE_CHECKING:` only
    assert module_imports("scheduler") == frozenset()


def test_closure_includes_packages_on_the_way():
    closure = module_closure(["scheduler.sim.engine"])
    assert {"scheduler", "scheduler.sim", "scheduler.policies"} <= closure


def test_unknown_module_or_function():
    with pytest.raises(ValueError, match="not a module"):
        step_dependencies("scheduler.no_such_module", "f")
    with pytest.raises(ValueError, match="no top-level function"):
        step_dependencies("scheduler.traces.steps", "no_such_step")
    with pytest.raises(ValueError, match="not a module"):
        module_imports("numpy")


def test_every_step_function_hashes():
    for module in (trace_steps, tuning_steps, online_steps):
        for name in module.__all__:
            item = getattr(module, name)
            if callable(item) and getattr(item, "__module__", None) == module.__name__:
                assert re.fullmatch(r"[0-9a-f]{16}", step_hash(item))


def test_modules_hash_covers_exactly_the_given_modules():
    pair = modules_hash(["scheduler.sim._kernel", "scheduler.core.compile"])
    # order, repetition and names outside the package do not count
    assert pair == modules_hash(
        ["scheduler.core.compile", "numpy", "scheduler.sim._kernel", "scheduler.core.compile"]
    )
    assert pair != modules_hash(["scheduler.sim._kernel"])
    assert re.fullmatch(r"[0-9a-f]{16}", pair)
    assert module_path("scheduler.sim._kernel") == PACKAGE / "sim" / "_kernel.py"
    assert module_path("scheduler.sim") == PACKAGE / "sim" / "__init__.py"
    assert module_path("numpy") is None


# -- on a copy of the package: edit a module, see which hashes change -----------------------------

HASHES = textwrap.dedent(
    """
    import json, sys
    from scheduler.core.code_hash import step_hash
    names = sys.argv[1:]
    print(json.dumps({n: step_hash(n) for n in names}))
    """
)
STEPS = [
    "scheduler.traces.steps:download_trace",
    "scheduler.traces.steps:filter_trace",
    "scheduler.traces.steps:resample_batch",
    "scheduler.studies.tuning.steps:simulate_batch",
    "scheduler.studies.tuning.steps:trace_figure",
    "scheduler.studies.tuning.steps:tuning_protocol",
    "scheduler.studies.online.steps:online_run",
    "scheduler.studies.online.steps:online_figure",
]


def _hashes(root: Path) -> dict[str, str]:
    import json

    done = subprocess.run(
        [sys.executable, "-c", HASHES, *STEPS],
        cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pkg")
    shutil.copytree(PACKAGE, root / "scheduler", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.parametrize(
    ("module", "changed"),
    [
        ("core/constants.py", {"filter_trace", "resample_batch", "simulate_batch", "online_run"}),
        ("studies/tuning/figures.py", {"trace_figure"}),
        ("sim/_kernel.py", {"simulate_batch", "online_run"}),
        ("traces/download.py", {"download_trace"}),
    ],
)
def test_editing_a_module_changes_exactly_the_steps_that_use_it(package_copy, module, changed):
    before = _hashes(package_copy)
    path = package_copy / "scheduler" / module
    original = path.read_text()
    try:
        path.write_text(original + "\n# an edit\n")
        after = _hashes(package_copy)
    finally:
        path.write_text(original)
    moved = {step.partition(":")[2] for step in STEPS if before[step] != after[step]}
    assert moved == changed


def test_package_hash_changes_with_any_module(package_copy):
    script = "from scheduler.core.code_hash import package_hash; print(package_hash())"

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=package_copy,
            env={"PYTHONPATH": str(package_copy), "PATH": "/usr/bin:/bin"},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout.strip()

    before = run()
    assert before == package_hash()  # content-addressed: the copy hashes like the package
    extra = package_copy / "scheduler" / "extra_module.py"
    extra.write_text("X = 1\n")
    try:
        assert run() != before
    finally:
        extra.unlink()
    assert run() == before


# -- the module imports kept across processes (code_hash.IMPORTS_CACHE) -------------------------

CLOSURE = textwrap.dedent(
    """
    import json
    from scheduler.core.code_hash import step_dependencies
    modules, _ = step_dependencies("scheduler.traces.steps", "download_trace")
    print(json.dumps(sorted(modules)))
    """
)


def _closure(root: Path) -> list[str]:
    import json

    done = subprocess.run(
        [sys.executable, "-c", CLOSURE],
        cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def test_module_imports_are_kept_across_processes_by_content(tmp_path: Path) -> None:
    """A process writes the imports it parsed; the next reads them for the same bytes only: an
    entry is believed for its file's digest (a planted one shows it is read), ignored for any
    other bytes, and a damaged file is read as empty and written again."""
    import hashlib
    import json

    root = tmp_path / "pkg"
    shutil.copytree(PACKAGE, root / "scheduler", ignore=shutil.ignore_patterns("__pycache__"))
    cache = root / "scheduler" / "__pycache__" / "code_hash-imports.json"
    download = root / "scheduler" / "traces" / "download.py"
    parsed = _closure(root)
    assert "scheduler.traces.download" in parsed and cache.is_file()
    entries = json.loads(cache.read_text())
    digest, names = entries["traces/download.py"]
    assert digest == hashlib.sha256(download.read_bytes()).hexdigest()
    own = [name for name in parsed if name.startswith("scheduler.core.")]
    assert own and set(own) & set(names)  # download.py imports from scheduler.core

    # planted: download.py "imports nothing" under its true digest, so the cache is read
    cache.write_text(json.dumps({**entries, "traces/download.py": [digest, []]}))
    planted = _closure(root)
    assert "scheduler.traces.download" in planted and set(planted) < set(parsed)
    # the same planted entry for other bytes (the file edited: an import added) is not used
    download.write_text(download.read_text() + "\nimport scheduler.studies.tuning.figures\n")
    edited = _closure(root)
    assert "scheduler.studies.tuning.figures" in edited and set(parsed) < set(edited)
    # damaged: read as empty, parsed again, written again
    cache.write_bytes(b"{not json")
    assert _closure(root) == edited
    assert json.loads(cache.read_text())["traces/download.py"][0] != digest
