"""A tiny project for the workflow tests: a copy of the workflow (Snakefile, rules, config,
profiles) in a temporary directory, a local mirror holding a six-week slice of the real KTH-SP2
log and the bundled LANL-CM5 slice, and Snakemake run on it for real (``--cores 2``).

The tests never touch the repository's results; each project is its own folder.
"""

from __future__ import annotations

import fcntl
import gzip
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import scheduler

ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
SLICE_WEEKS = 6


def _rl_extra_missing() -> str | None:
    import importlib.util

    for module in ("torch", "stable_baselines3", "sb3_contrib"):
        if importlib.util.find_spec(module) is None:
            return (f"the PPO agent needs the rl extra ({module} is not installed: pip install "
                    "schedlab[rl], which python3 dev.py does)")  # fmt: skip
    return None


#: Why the rl study's agent cannot run here (None: it can).
RL_EXTRA_MISSING = _rl_extra_missing()


def tiny_config(mirror: Path, **tuning: object) -> dict:
    """The tiny study's config: config/tiny.yaml with its mirror replaced by ``mirror`` (which
    holds the slice written by :func:`write_slice`) and the ``tuning`` keys updated (the result is
    overlaid on config/config.yaml by Snakemake)."""
    config = yaml.safe_load((ROOT / "config" / "tiny.yaml").read_text())
    config["archive"]["mirror_dirs"] = [str(mirror)]
    config["tuning"].update(tuning)
    # the rl study's agent needs the rl extra; without it the tiny study runs without the agent
    # and the agent's tests skip, saying why (RL_EXTRA_MISSING)
    config["rl"]["ppo"]["enabled"] = RL_EXTRA_MISSING is None
    return config


def write_slice(source: Path, target: Path, weeks: int = SLICE_WEEKS) -> None:
    """The header and the jobs of the first ``weeks`` weeks of an SWF log, gzipped."""
    lines, first = [], None
    with gzip.open(source, "rt") as handle:
        for line in handle:
            if line.startswith(";") or not line.strip():
                lines.append(line)
                continue
            submit = int(line.split()[1])
            first = submit if first is None else first
            if submit - first >= weeks * 7 * 86400:
                break
            lines.append(line)
    target.write_bytes(gzip.compress("".join(lines).encode(), mtime=0))


def make_project(tmp: Path, kth_path: Path) -> Path:
    """A copy of the workflow (Snakefile, rules, config, profile) and a mirror with the slice."""
    project = tmp / "project"
    project.mkdir()
    shutil.copy(ROOT / "Snakefile", project)
    for directory in ("workflow", "config", "profiles"):
        shutil.copytree(ROOT / directory, project / directory)
    mirror = tmp / "mirror"
    mirror.mkdir()
    write_slice(kth_path, mirror / "KTH-slice.swf.gz")
    # the memory study's bundled LANL-CM5 slice (header and first 1,500 jobs) and the rl
    # study's Lublin-256 log
    shutil.copy(ROOT / "resources" / "LANL-CM5-tiny.swf.gz", mirror)
    shutil.copy(ROOT / "resources" / "Lublin-256.swf.gz", mirror)
    write_config(project, tiny_config(mirror))
    return project


def study_project(tmp: Path, kth_path: Path, study: str, **section: object) -> Path:
    """A tiny project running ``study`` alone, its config section updated with ``section``."""
    project = make_project(tmp, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["studies"] = [study]
    config[study].update(section)
    write_config(project, config)
    return project


def write_config(project: Path, config: dict) -> None:
    (project / "tiny.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def snakemake(
    project: Path, *args: str, check: bool = True, pythonpath: Path | None = None
) -> subprocess.CompletedProcess:
    """Run Snakemake for real in ``project`` with the tiny config; return the finished process.
    ``pythonpath``: where to import ``scheduler`` from (a modified copy of the package)."""
    command = [*SNAKEMAKE, "--cores", "2", "--configfile", "tiny.yaml", *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    done = subprocess.run(
        command, cwd=project, capture_output=True, text=True, timeout=600, env=env
    )
    if check and done.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def result_files(project: Path) -> dict[str, bytes]:
    """Every file under ``project``'s results/ (relative path -> bytes)."""
    return {
        str(path.relative_to(project)): path.read_bytes()
        for path in sorted((project / "results").rglob("*"))
        if path.is_file()
    }


def planned_jobs(project: Path, pythonpath: Path | None = None) -> dict[str, int]:
    """Rule -> number of jobs Snakemake would run now (from a dry run's job stats)."""
    done = snakemake(project, "--dry-run", "--quiet", "rules", pythonpath=pythonpath)
    text = done.stdout + done.stderr
    if "Nothing to be done" in text:
        return {}
    return job_stats(text)


def run_jobs(project: Path, *args: str) -> dict[str, int]:
    """Run Snakemake for real in ``project`` (:func:`snakemake`, failing on an error) and return
    rule -> number of jobs it ran, from the "Job stats" table it prints before running (``{}``
    when nothing was to be done): the plan of a dry run with the same arguments, without a
    Snakemake start of its own (5.6-6.3 s of CPU)."""
    done = snakemake(project, *args)
    text = done.stdout + done.stderr
    if "Nothing to be done" in text:
        return {}
    return job_stats(text)


def job_stats(output: str) -> dict[str, int]:
    """Rule -> number of jobs, from the "Job stats" table Snakemake prints before it runs."""
    table = output[output.index("Job stats:") :].split("\ntotal", 1)[0]
    counts = {}
    for match in re.finditer(r"^(\w+)\s+(\d+)$", table, flags=re.MULTILINE):
        counts[match.group(1)] = int(match.group(2))
    assert counts, output
    return counts


def copy_with(study: Path, tmp_path: Path, section: str = "tuning", **keys: object) -> Path:
    """A copy of the finished study whose config has the given keys of ``section`` changed."""
    project = tmp_path / "copy"
    shutil.copytree(study, project, symlinks=True)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config[section].update(keys)
    write_config(project, config)
    return project


def edited_package(tmp_path: Path, module: str) -> Path:
    """A copy of the scheduler package with one line appended to ``module`` (a path inside it);
    put the returned folder on PYTHONPATH to make Snakemake use it."""
    root = tmp_path / "edited"
    package = Path(scheduler.__file__).resolve().parent
    shutil.copytree(package, root / "scheduler", ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "scheduler" / module
    path.write_text(path.read_text() + "\n# an edit that changes nothing but the file\n")
    return root


def online_only(tmp_path: Path, kth_path: Path, **online: object) -> Path:
    """A tiny online-only project (one period, two policies) with ``online`` keys updated."""
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["studies"] = ["online"]
    config["online"].update({"policies": ["FCFS", "SPF"], "periods": ["1d"], **online})
    write_config(project, config)
    return project


def damaged_project(tmp_path: Path, kth_path: Path, change) -> tuple[Path, list[str]]:
    """A tiny project whose mirror slice has its decompressed lines edited by ``change`` (a
    function of the list of lines, returning the new list); no checksum is required."""
    project = make_project(tmp_path, kth_path)
    mirror = tmp_path / "mirror" / "KTH-slice.swf.gz"
    lines = change(gzip.decompress(mirror.read_bytes()).decode().splitlines(keepends=True))
    mirror.write_bytes(gzip.compress("".join(lines).encode(), mtime=0))
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["traces"]["KTH-slice"]["sha256"] = None  # the damaged copy must reach the filter
    config["studies"] = ["tuning"]  # the common filter reads the log first (see above)
    write_config(project, config)
    return project, lines


def shared_project(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], Path]
) -> Path:
    """A project made and run once per test session, shared by every test file that asks for
    ``name``, also across pytest-xdist's workers: the first to ask calls ``make(folder)`` (it
    makes the project in ``folder`` and returns it), then runs Snakemake on it, under a file
    lock; the others wait for it. Tests read it and plan on it (dry runs); whatever changes it
    runs on a copy (:func:`copy_with`, ``shutil.copytree``)."""
    base = tmp_path_factory.getbasetemp()
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    # the workers' base folders share a parent for one session only (without xdist: this one)
    root = base.parent / f"shared-{run_id}" if run_id else base / "shared"
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder.with_suffix(".done")
        if not done.exists():
            shutil.rmtree(folder)  # a worker failed half-way: start again
            folder.mkdir()
            project = make(folder)
            snakemake(project)
            done.write_text(str(project))
    return Path(done.read_text())


def shared_study(tmp_path_factory: pytest.TempPathFactory, kth_path: Path) -> Path:
    """The tiny study (every study of config/tiny.yaml), run once per session
    (:func:`shared_project`)."""
    return shared_project(tmp_path_factory, "tiny", lambda folder: make_project(folder, kth_path))


def plan_in_process(project: Path) -> dict:
    """The studies' plans of ``project``'s config, made in this process as
    workflow/rules/common.smk makes them (config/traces.yaml, config/config.yaml and the
    project's tiny.yaml merged key by key, validated, planned): a config the workflow refuses
    raises the same :class:`~scheduler.core.errors.ConfigurationError` here, without the
    seconds of a Snakemake start."""
    from scheduler.studies.common.study import plan_studies, validated_config
    from support.configs import overlay

    config: dict = {}
    for path in (ROOT / "config/traces.yaml", ROOT / "config/config.yaml", project / "tiny.yaml"):
        config = overlay(config, yaml.safe_load(path.read_text()))
    return plan_studies(validated_config(config))
