"""How jobs run does not change what they write: with the config key ``step_processes`` (local
runs) the steps run in a pool of worker processes or in Snakemake's threads, and the files are
the same byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from support.tiny_project import result_files, snakemake, write_config

pytestmark = pytest.mark.workflow

#: What the session's tiny study holds beyond the threads run's files, in the folders of the
#: two studies run again and of their shared trace: the per-trace figures left out of that run
#: (``--omit-from``) and the prediction study's clipped filter.
NOT_RUN_AGAIN = (
    "results/tuning/figures/KTH-slice/",
    "results/online/figures/KTH-slice/",
    "results/KTH-slice/filtered-clip.",
    "results/KTH-slice/filter_report-clip.",
)


def test_steps_in_worker_processes_write_the_same_files_as_in_threads(
    tiny_study: Path, tmp_path: Path
) -> None:
    """The session's tiny study ran its steps in the pool (the default; its Snakemake log says
    so); its queue-tuning and online studies run again with every step in Snakemake's threads
    write the same files. Of their figures, the two study figures and the two representative
    weeks (Gantt charts drawn under the same lock, built and saved, PNG and PDF byte for byte);
    the per-trace ones are drawn by the same function, save_figure, and take most of a tiny
    run's time."""
    pool_line = "Steps run in a pool of 2 worker processes (config key step_processes)."
    logs = [log.read_text() for log in (tiny_study / ".snakemake" / "log").glob("*.log")]
    assert any(pool_line in log for log in logs)
    threads = tmp_path / "threads"
    threads.mkdir()
    for name in ("Snakefile", "workflow", "config", "profiles", "tiny.yaml"):
        source = tiny_study / name
        copy = shutil.copytree if source.is_dir() else shutil.copy2
        copy(source, threads / name)
    config = yaml.safe_load((threads / "tiny.yaml").read_text())  # the same mirror
    write_config(threads, {**config, "studies": ["tuning", "online"], "step_processes": False})
    done = snakemake(threads, "--omit-from", "trace_figure", "online_figure")
    assert "worker processes" not in done.stdout + done.stderr
    pool_files, thread_files = result_files(tiny_study), result_files(threads)
    assert len(thread_files) > 100
    assert len([name for name in thread_files if name.endswith(".png")]) == 4
    assert [name for name in thread_files if pool_files.get(name) != thread_files[name]] == []
    studies = ("results/tuning/", "results/online/", "results/KTH-slice/")
    left = [name for name in pool_files if name.startswith(studies) and name not in thread_files]
    assert left and all(name.startswith(NOT_RUN_AGAIN) for name in left), left
