#!/usr/bin/env python3
"""schedlab's two entry commands, needing only Python >= 3.11 and pip.

    python3 dev.py run            # the main job: every study at a small scale, bundled logs
    python3 dev.py test           # lint + the whole test suite (but the cluster and compile tests)
    python3 dev.py test-compile   # the tests that compile kernels in fresh processes (CI runs them)
    python3 dev.py test-cluster   # a live single-node Slurm cluster + the cluster tests
                                  # (root on Debian: tests/cluster/slurm-up installs Slurm)

Both build ``.venv`` with ``python3 -m venv`` and ``uv pip install -e .[test,rl]`` (uv installed
by pip; pip alone when uv fails) the first time, and reuse it while ``pyproject.toml`` is
unchanged (a hash of it is kept in ``.venv``). PyTorch, which the rl extra pins, is installed
first by pip (``torch==<the pin>``): pip takes the CPU build this project's machines hold on
disk, where uv would download the default (CUDA) build of several GB.
Anything after the command is passed on (``python3 dev.py test -k swf``,
``python3 dev.py run --configfile config/full.yaml``).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".schedlab-stamp"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def _wanted_stamp() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def _torch_requirement() -> str:
    """The rl extra's requirement of torch, as pyproject.toml pins it (its one home)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return next(r for r in extras["rl"] if r.replace(" ", "").startswith("torch=="))


def ensure_environment() -> None:
    """Create or refresh ``.venv`` so that it matches ``pyproject.toml``."""
    if STAMP.is_file() and STAMP.read_text().strip() == _wanted_stamp():
        return
    if not (BIN / "python").exists():
        print(f"dev.py: creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    print("dev.py: installing schedlab and its dependencies (.[test,rl], with uv)", flush=True)
    python = str(BIN / "python")
    pip = [python, "-m", "pip", "--disable-pip-version-check", "install", "-q"]
    # uv installs the same requirements as pip in a quarter of its time (25 s against 96 s on 2
    # cores, docs/getting-started.md); pip does it when uv cannot be installed or fails. Byte
    # code is compiled at install, as pip does: the tests' many Python processes do not write
    # it, and without it each one recompiles Snakemake's and polars' sources (a fresh clone's
    # tests took 714 s instead of about 460 s)
    uv = [python, "-m", "uv", "pip", "install", "--python", python, "-q", "--compile-bytecode"]
    subprocess.run([*pip, _torch_requirement()], check=True)
    try:
        subprocess.run([*pip, "uv"], check=True)
        subprocess.run([*uv, "-e", f"{ROOT}[test,rl]"], check=True)
    except subprocess.CalledProcessError:
        print("dev.py: uv failed; installing with pip", flush=True)
        subprocess.run([*pip, "-e", f"{ROOT}[test,rl]"], check=True)
    # compile the simulator kernel once into numba's on-disk cache
    subprocess.run([str(BIN / "scheduler"), "warmup"], check=True, cwd=ROOT)
    STAMP.write_text(_wanted_stamp() + "\n")


def compile_package() -> None:
    """Write the byte code of the ``scheduler`` package (only of its files changed since the
    last time: a fraction of a second when nothing changed).

    Every Snakemake process, its step-pool workers and the tests' ``scheduler`` commands import
    the package; when ``PYTHONDONTWRITEBYTECODE`` is set (as on the project's machine) none of
    them writes the byte code and each compiled the package's ~160 modules from source again:
    0.5 s of CPU of a Snakemake dry run's 6 s (2026-11-27, 2 cores). The installer compiles the
    dependencies' byte code, not this editable package's."""
    command = [str(BIN / "python"), "-m", "compileall", "-q", str(ROOT / "scheduler")]
    subprocess.run(command, check=False, cwd=ROOT)  # a file that does not compile: the tests say so


def run(*extra: str) -> int:
    """The main job: run the default workflow (config/config.yaml) with Snakemake, locally."""
    cores = str(os.cpu_count() or 1)
    command = [str(BIN / "snakemake"), "--cores", cores, *extra]
    print("dev.py:", " ".join(command), flush=True)
    done = subprocess.run(command, cwd=ROOT)
    if done.returncode == 0 and not extra:
        for table in (
            "tuning/tables/protocol.md",
            "prediction/tables/best_worst.md",
            "memory/tables/paper.md",
        ):
            path = ROOT / "results" / table
            if path.is_file():
                print(path.read_text(encoding="utf-8").split("<!--")[0], flush=True)
        print("dev.py: tables in results/<study>/tables, figures in results/<study>/figures;")
        print("dev.py: build the report with: .venv/bin/snakemake --report report.html")
    return done.returncode


def test(*extra: str) -> int:
    """Lint, then every test."""
    python = str(BIN / "python")
    lints = (
        [python, "-m", "ruff", "check", "scheduler", "tests", "dev.py"],
        [str(BIN / "snakefmt"), "--check", "Snakefile", "workflow"],
    )
    for lint in lints:
        done = subprocess.run(lint, cwd=ROOT)
        if done.returncode != 0:
            return done.returncode
    # one pytest worker per core (pytest-xdist); an idle worker takes tests from the other's
    # queue (worksteal); the tiny studies the workflow tests read are run once per session and
    # shared by the workers (tests/support/tiny_project.py: shared_project)
    parallel = ["-n", "auto", "--dist", "worksteal"]
    return subprocess.run([python, "-m", "pytest", *parallel, *extra], cwd=ROOT).returncode


def test_cluster(*extra: str) -> int:
    """Start a single-node Slurm cluster (tests/cluster/slurm-up), run the tests marked
    ``cluster`` against it, and stop it again (tests/cluster/slurm-down), also on failure."""
    scripts = ROOT / "tests" / "cluster"
    state = Path(os.environ.get("SCHEDLAB_SLURM_DIR", "/tmp/schedlab-slurm"))
    up = subprocess.run([str(scripts / "slurm-up")], cwd=ROOT)
    try:
        if up.returncode != 0:
            return up.returncode
        env = dict(os.environ)
        for line in (state / "env").read_text().splitlines():  # "export NAME=value" lines
            name, _, value = line.removeprefix("export ").partition("=")
            env[name] = value
        command = [str(BIN / "python"), "-m", "pytest", "-m", "cluster", *extra]
        return subprocess.run(command, cwd=ROOT, env=env).returncode
    finally:
        subprocess.run([str(scripts / "slurm-down")], cwd=ROOT)


def test_compile(*extra: str) -> int:
    """The tests marked ``compile`` (kernels compiled from scratch in fresh processes: numba's
    cache faults and stale entries), which ``test`` leaves out for its 10-minute budget; CI runs
    them after ``test``."""
    command = [str(BIN / "python"), "-m", "pytest", "-m", "compile", "-n", "auto", *extra]
    return subprocess.run(command, cwd=ROOT).returncode


COMMANDS = {"run": run, "test": test, "test-compile": test_compile, "test-cluster": test_cluster}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    ensure_environment()
    compile_package()
    return COMMANDS[argv[0]](*argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
