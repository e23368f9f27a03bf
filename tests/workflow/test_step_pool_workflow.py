"""How jobs run does not change what they write: with the config key ``step_processes`` (local
runs) the steps run in a pool of worker processes or in Snakemake's threads, and the files are
the same byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from support.tiny_project import make_project, result_files, snakemake, write_config

pytestmark = pytest.mark.workflow


def test_steps_in_worker_processes_write_the_same_files_as_in_threads(
    tmp_path_factory: pytest.TempPathFactory, kth_path: Path
) -> None:
    """The tiny queue-tuning and online studies with the step pool (the default) and with every
    step in Snakemake's threads; of their figures, the two study figures (the per-trace ones
    are drawn by the same function, save_figure, and take most of a tiny run's time)."""
    pool = make_project(tmp_path_factory.mktemp("pool"), kth_path)
    config = yaml.safe_load((pool / "tiny.yaml").read_text())
    config["studies"] = ["tuning", "online"]
    write_config(pool, config)
    threads = tmp_path_factory.mktemp("threads") / "project"
    shutil.copytree(pool, threads, symlinks=True)
    write_config(threads, {**config, "step_processes": False})
    omit = ("--omit-from", "trace_figure", "online_figure")
    output = {
        name: snakemake(project, *omit) for name, project in (("pool", pool), ("threads", threads))
    }
    pool_line = "Steps run in a pool of 2 worker processes (config key step_processes)."
    assert pool_line in output["pool"].stdout + output["pool"].stderr
    assert "worker processes" not in output["threads"].stdout + output["threads"].stderr
    pool_files, thread_files = result_files(pool), result_files(threads)
    assert sorted(pool_files) == sorted(thread_files)
    assert len(pool_files) > 100
    assert len([name for name in pool_files if name.endswith(".png")]) == 2
    assert [name for name in pool_files if pool_files[name] != thread_files[name]] == []
