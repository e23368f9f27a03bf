"""numba's on-disk cache of the package's kernels follows edits to the modules a kernel calls into
(``scheduler.core.compile``: the import-closure stamp).

numba stamps a cached function with its own source file only; a caller that links in a jitted
callee of another module keeps the old callee after an edit of the callee's module alone. The
subprocess tests put a caller/callee pair of tiny modules into a *copy* of the package (cached in
a temporary directory, so the real caches are never touched) and edit only the callee's module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler.core.code_hash import module_closure

PACKAGE = Path(__file__).resolve().parents[2] / "scheduler"

CALLEE = """
from scheduler.core.compile import jit

OFFSET = 1.0


@jit
def callee(x):
    return x + OFFSET
"""

CALLER = """
from scheduler.core.compile import jit
from scheduler.sim._probe_callee import callee


@jit
def caller(x):
    return 2.0 * callee(x)
"""

# the same pair with numba's own decorator, outside the package: numba's stamp alone
PLAIN_CALLEE = CALLEE.replace("from scheduler.core.compile import jit", "from numba import njit")
PLAIN_CALLEE = PLAIN_CALLEE.replace("@jit", "@njit(cache=True)")
PLAIN_CALLER = """
from numba import njit
from probe._probe_callee import callee


@njit(cache=True)
def caller(x):
    return 2.0 * callee(x)
"""

SCRIPT = """
import importlib, sys
module = importlib.import_module(sys.argv[1])
print("VALUE", module.caller(1.0))
stats = module.caller.stats
print("CACHE", stats.cache_path, sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
"""


def _tree(tmp_path: Path) -> Path:
    """A copy of the package with the probe pair in ``scheduler.sim``, and the plain pair in a
    package ``probe`` beside it."""
    root = tmp_path / "pkg"
    shutil.copytree(PACKAGE, root / "scheduler", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "scheduler" / "sim" / "_probe_callee.py").write_text(CALLEE)
    (root / "scheduler" / "sim" / "_probe_caller.py").write_text(CALLER)
    (root / "probe").mkdir()
    (root / "probe" / "__init__.py").write_text("")
    (root / "probe" / "_probe_callee.py").write_text(PLAIN_CALLEE)
    (root / "probe" / "_probe_caller.py").write_text(PLAIN_CALLER)
    return root


def _run(root: Path, module: str, env_extra: dict[str, str]) -> tuple[float, str, int, int]:
    """(caller(1.0), cache directory, cache hits, cache misses) of the caller in a new process."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env.update({"PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1", **env_extra})
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, module],
        env=env,
        cwd=root,  # not the repository: "-c" puts the working directory first on sys.path
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    path, hits, misses = lines["CACHE"].rsplit(" ", 2)
    return float(lines["VALUE"]), path, int(hits), int(misses)


def _values(run: tuple[float, str, int, int]) -> tuple[float, int, int]:
    return run[0], run[2], run[3]


def _edit_callee(path: Path) -> None:
    path.write_text(path.read_text().replace("OFFSET = 1.0", "OFFSET = 5.0"))


@pytest.mark.slow
@pytest.mark.compile
@pytest.mark.parametrize("cache_dir", [True, False], ids=["NUMBA_CACHE_DIR", "in-tree"])
def test_an_edit_of_the_callee_module_alone_recompiles_the_cached_caller(
    tmp_path: Path, cache_dir: bool
) -> None:
    root = _tree(tmp_path)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")} if cache_dir else {}
    expected_dir = str(tmp_path / "numba-cache") if cache_dir else str(root / "scheduler" / "sim")
    module = "scheduler.sim._probe_caller"

    value, path, hits, misses = _run(root, module, env)
    assert (value, hits, misses) == (4.0, 0, 1)  # 2 * (1 + 1), compiled and written
    assert path.startswith(expected_dir)

    # no source change: loaded from the cache
    assert _values(_run(root, module, env)) == (4.0, 1, 0)

    # an edit outside the caller's import closure keeps the cache
    unrelated = root / "scheduler" / "traces" / "swf.py"
    unrelated.write_text(unrelated.read_text() + "\n# an edit\n")
    assert _values(_run(root, module, env)) == (4.0, 1, 0)

    # an edit of the callee's module only: recompiled, the new constant is used
    _edit_callee(root / "scheduler" / "sim" / "_probe_callee.py")
    value, _, hits, misses = _run(root, module, env)
    assert (value, hits, misses) == (12.0, 0, 1)  # 2 * (1 + 5)
    assert _values(_run(root, module, env)) == (12.0, 1, 0)  # and cached again


@pytest.mark.slow
def test_numba_alone_keeps_the_stale_callee(tmp_path: Path) -> None:
    """Why the locators exist: with plain ``njit(cache=True)`` the same edit is not seen. If this
    fails after a numba upgrade, numba now invalidates across modules itself."""
    root = _tree(tmp_path)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    assert _run(root, "probe._probe_caller", env)[0] == 4.0
    _edit_callee(root / "probe" / "_probe_callee.py")
    value, _, hits, _ = _run(root, "probe._probe_caller", env)
    assert (value, hits) == (4.0, 1)  # stale: the old OFFSET, from the cache


def test_the_package_kernels_use_the_closure_stamp_and_others_do_not() -> None:
    from numba import njit

    from scheduler.core import compile as compile_module
    from scheduler.sim import _kernel

    if compile_module.NOT_CACHED_REASON is not None:
        pytest.skip("no writable cache directory: the kernels are not cached")
    cache = _kernel.advance._cache
    stamp = cache._cache_file._source_stamp
    assert isinstance(cache._impl.locator, compile_module._ClosureStamp)
    assert stamp[1:] == (
        "schedlab-import-closure",
        compile_module.kernel_source_hash("scheduler.sim._kernel"),
    )

    @njit(cache=True)
    def outsider(x: float) -> float:  # a function of this test module, not of the package
        return x

    assert not isinstance(outsider._cache._impl.locator, compile_module._ClosureStamp)


def test_the_prediction_kernel_stamp_covers_the_modules_it_calls() -> None:
    closure = module_closure(["scheduler.sim._predict_kernel"])
    assert {
        "scheduler.sim._kernel",
        "scheduler.predictors._nag",
        "scheduler.predictors.losses",
    } <= closure
    assert "scheduler.traces.swf" not in closure
    assert "scheduler.sim.engine" not in closure


STAMPS = """
from scheduler.core.compile import kernel_source_hash
for module in ("sim._kernel", "sim._predict_kernel", "predictors._nag"):
    print(module, kernel_source_hash("scheduler." + module))
"""


@pytest.mark.parametrize(
    ("module", "changed"),
    [
        ("predictors/_nag.py", {"sim._predict_kernel", "predictors._nag"}),
        ("predictors/losses.py", {"sim._predict_kernel", "predictors._nag"}),
        ("sim/_kernel.py", {"sim._kernel", "sim._predict_kernel"}),
        ("traces/swf.py", set()),
    ],
)
def test_which_edits_move_the_stamps_of_the_real_kernels(
    tmp_path: Path, module: str, changed: set[str]
) -> None:
    """The case that was seen stale: an edit of ``_nag.py`` alone must reach the prediction
    kernel (``sim._predict_kernel``), and an edit elsewhere must not recompile anything."""
    root = tmp_path / "pkg"
    shutil.copytree(PACKAGE, root / "scheduler", ignore=shutil.ignore_patterns("__pycache__"))

    def stamps() -> dict[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", STAMPS], cwd=root,
            env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return dict(line.split() for line in done.stdout.splitlines())

    before = stamps()
    path = root / "scheduler" / module
    path.write_text(path.read_text() + "\n# an edit\n")
    after = stamps()
    assert {name for name in before if before[name] != after[name]} == changed
