"""Summing the steps' timing lines per rule family (``scheduler timings``), and the timing a
step writes to its log."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import pool_steps

from scheduler.cli.main import main
from scheduler.cli.timings import job_timings, rule_timings
from scheduler.core.errors import ConfigurationError
from scheduler.core.step_pool import StepPool
from scheduler.core.steps import StepContext, StepTiming, workflow_step


def _write(path: Path, seconds: float, rss: float | None, *, extra: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    timing = StepTiming(seconds, seconds / 2, rss)
    path.write_text(f"2026-11-28 10:00:00 a.step: started\n{extra}"
                    f"2026-11-28 10:00:01 {timing.line()}\n")  # fmt: skip


def test_rule_timings_sums_by_family_slowest_first(tmp_path: Path) -> None:
    _write(tmp_path / "tuning/A/sims/train/FCFS/FCFS/none/batch0.log", 1.5, 100)
    _write(tmp_path / "tuning/A/sims/test/SPF/FCFS/20h/batch0.log", 2.5, None)
    _write(tmp_path / "tuning/A/collect.log", 0.5, 50)
    _write(tmp_path / "tuning/A/bootstrap/batch0.log", 0.1, 5)
    _write(tmp_path / "tuning/A/bootstrap/batch1.log", 0.1, 5)
    _write(tmp_path / "filter/A.log", 0.25, 10)
    (tmp_path / "download").mkdir()
    (tmp_path / "download/A.log").write_text("2026-11-28 10:00:00 a.step: started\n")  # failed
    jobs = job_timings(tmp_path)
    assert jobs.height == 6
    table = rule_timings(tmp_path)
    assert table["family"].to_list() == [
        "simulate_batch A", "collect A", "filter A", "bootstrap A",
    ]  # fmt: skip
    first = table.row(0, named=True)
    assert first["jobs"] == 2 and first["total_s"] == 4.0 and first["max_s"] == 2.5
    assert first["cpu_s"] == 2.0 and first["max_rss_mb"] == 100


def test_a_rerun_counts_its_last_timing(tmp_path: Path) -> None:
    log = tmp_path / "filter/A.log"
    _write(log, 9.0, 1)
    with log.open("a") as handle:
        handle.write(f"2026-11-28 11:00:00 {StepTiming(2.0, 1.0, None).line()}\n")
    assert job_timings(tmp_path)["seconds"].to_list() == [2.0]


def test_rule_timings_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no step log with a timing line"):
        rule_timings(tmp_path)
    (tmp_path / "x.log").write_text("2026-11-28 10:00:00 timing: wall_s=abc cpu_s=1\n")
    with pytest.raises(ConfigurationError, match=r"x\.log: a malformed timing line"):
        rule_timings(tmp_path)


def test_timings_command_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _write(tmp_path / "tuning/B/sims/train/FCFS/FCFS/none/batch0.log", 3.0, 1)
    assert main(["timings", str(tmp_path)]) == 0
    assert "simulate_batch B" in capsys.readouterr().out


def test_a_step_logs_its_timing_in_a_thread_and_in_a_worker(tmp_path: Path) -> None:
    """The timing line a step ends its log with: wall >= CPU >= the work done; the memory is
    measured in a worker of the step pool (a process of its own), not in a shared process."""
    pool_steps.busy_step(0.2, log_path=tmp_path / "thread.log")
    pool = StepPool(1)
    try:
        pool.run(pool_steps.busy_step, 0.2, log_path=str(tmp_path / "worker.log"))
    finally:
        pool.shutdown()
    shared = StepTiming.parse((tmp_path / "thread.log").read_text().splitlines()[-1])
    own = StepTiming.parse((tmp_path / "worker.log").read_text().splitlines()[-1])
    for timing in (shared, own):
        assert timing.wall_s >= timing.cpu_s * 0.95 and timing.cpu_s >= 0.19
    assert shared.max_rss_mb is None
    assert own.max_rss_mb is not None and own.max_rss_mb >= 64


def test_a_failed_step_logs_no_timing(tmp_path: Path) -> None:
    @workflow_step
    def failing(*, ctx: StepContext) -> None:
        raise ConfigurationError("bad key")

    with pytest.raises(Exception, match="bad key"):
        failing(log_path=tmp_path / "f.log")
    assert "timing:" not in (tmp_path / "f.log").read_text()
