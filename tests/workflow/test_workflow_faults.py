"""Faults through the workflow, met as a user meets them: an intermediate table damaged on disk
after its step wrote it, a table that makes polars panic, a full disk. The step that meets the
fault stops with the real cause and the file's name, on Snakemake's output and in its log, and
nothing is read as other data."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml
from support.damage import find_flip, flip, footer_start
from support.full_disk import run_on_full_disk
from support.tiny_project import SNAKEMAKE, snakemake, write_config

pytestmark = pytest.mark.workflow

SIMS = "results/tuning/KTH-slice/sims"
WEEKLY = "results/tuning/KTH-slice/weekly.parquet"
COLLECT_LOG = "logs/tuning/KTH-slice/collect.log"
FIGURES = "results/tuning/figures/KTH-slice"
FIGURE = f"{FIGURES}/weekly_avg_wait"
FIGURE_LOGS = "logs/tuning/KTH-slice/figures"


@pytest.fixture
def simulated(tiny_study: Path) -> Path:
    """The session's tiny study, run to its end (its tuning study's 16 simulation files
    gathered by collect_weekly, its figures drawn); the tests damage copies of it."""
    assert len([*(tiny_study / SIMS).glob("t*/*/*/*.parquet")]) == 16  # train, test
    return tiny_study


def copy_of(project: Path, tmp_path: Path) -> Path:
    """A copy of ``project`` (times kept: Snakemake plans on it as on the original) that runs
    its tuning study alone (the other studies' rules stay out of Snakemake's plans)."""
    copy = tmp_path / "copy"
    shutil.copytree(project, copy, symlinks=True)
    config = yaml.safe_load((copy / "tiny.yaml").read_text())
    config["studies"] = ["tuning"]
    write_config(copy, config)
    return copy


def test_a_damaged_intermediate_is_refused_by_name_never_read_as_other_data(
    simulated: Path, tmp_path: Path
) -> None:
    """One flipped bit in a simulation file, one that polars reads without an error as a table
    with other values (parquet has no page checksums): the gathering step refuses the file,
    naming it and the step that wrote it, in its log too, and writes nothing."""
    project = copy_of(simulated, tmp_path)
    damaged = f"{SIMS}/train/SPF/FCFS/batch1.parquet"
    # from the middle of the data pages: a value, not the trace's name
    middle = footer_start(project / damaged) // 2
    position, bit = find_flip(project / damaged, "silent", first=middle)
    flip(project / damaged, position, bit)  # newer than weekly.parquet: collect_weekly reruns
    done = snakemake(project, "--until", "collect_weekly", check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    message = (f"{damaged}: the file changed since step studies.tuning.steps.simulate_batch "
               "wrote it: checksum mismatch")  # fmt: skip
    assert message in output, output
    assert message in (project / COLLECT_LOG).read_text()
    assert not (project / WEEKLY).exists()


def test_a_table_that_makes_polars_panic_is_named_in_the_steps_log(
    simulated: Path, tmp_path: Path
) -> None:
    """A simulation file without checksum (as an older schedlab wrote them) damaged so that
    polars panics (a BaseException, "pyo3_runtime.PanicException"): the gathering step names
    the file among its 16 inputs, on Snakemake's output and in its log."""
    project = copy_of(simulated, tmp_path)
    damaged = project / SIMS / "test/FCFS/SPF/batch0.parquet"
    table, meta = pl.read_parquet(damaged), pl.read_parquet_metadata(damaged)
    table.write_parquet(damaged, metadata={k: v for k, v in meta.items()
                                           if k.startswith("schedlab.provenance")})  # fmt: skip
    position, bit = find_flip(damaged, "panic", first=footer_start(damaged))
    flip(damaged, position, bit)
    done = snakemake(project, "--until", "collect_weekly", check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    name = f"{SIMS}/test/FCFS/SPF/batch0.parquet: not a readable parquet table"
    assert name in output, output
    log = (project / COLLECT_LOG).read_text()
    assert name in log and "panic" in log.lower()
    assert not (project / WEEKLY).exists()


@pytest.mark.parametrize("log_on_full_disk", [False, True], ids=["log-elsewhere", "log-on-it"])
def test_a_full_disk_is_the_cause_the_figure_step_names_in_its_log(
    simulated: Path, tmp_path: Path, log_on_full_disk: bool
) -> None:
    """A figure drawn on a disk with room for its PNG but not its PDF (a tmpfs): the step
    names the full disk and the output, on Snakemake's output and in its log, also when the log
    is on that disk. Before, matplotlib's PDF writer masked the OSError behind "AttributeError:
    'Stream' object has no attribute 'pos'", which the step did not log: its log was empty."""
    project = copy_of(simulated, tmp_path)
    png_bytes = (project / f"{FIGURE}.png").stat().st_size
    log = project / FIGURE_LOGS / "weekly_avg_wait.log"
    for path in (project / f"{FIGURE}.png", project / f"{FIGURE}.pdf", log):
        path.unlink()
    folder = project / FIGURES
    # a folder on the small file system (also keeps Snakemake from removing the mount point,
    # an empty folder once it removed the failed job's outputs)
    make_dirs = [folder / "logs"]
    if log_on_full_disk:  # the figures' logs there
        shutil.rmtree(project / FIGURE_LOGS)
        (project / FIGURE_LOGS).symlink_to(folder / "logs", target_is_directory=True)
    # room for the PNG and the log's first page, not for the PDF (25 kB) as well
    size = (png_bytes // 4096 + 3) * 4096
    command = [*SNAKEMAKE, f"{FIGURE}.png", "--cores", "2", "--configfile", "tiny.yaml"]
    done, shown = run_on_full_disk(
        folder, size, command, cwd=project, make_dirs=make_dirs, show=[log]
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0
    cause = f"No space left on device: '{FIGURE}.pdf'"
    assert cause in output, output
    assert "has no attribute" not in output
    assert cause in shown.get(str(log), ""), (shown, output)
