"""Summing Snakemake benchmark files per rule family."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.cli.main import main
from scheduler.cli.timings import job_timings, rule_timings
from scheduler.core.errors import ConfigurationError

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _write(path: Path, seconds: float, rss: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:00\t{rss}\t1\t1\t1\t0\t0\t0\t{seconds}\n")


def test_rule_timings_sums_by_family_slowest_first(tmp_path: Path) -> None:
    _write(tmp_path / "tuning/A/sims/train/FCFS/FCFS/none/batch0.tsv", 1.5, 100)
    _write(tmp_path / "tuning/A/sims/test/SPF/FCFS/20h/batch0.tsv", 2.5, 300)
    _write(tmp_path / "tuning/A/collect.tsv", 0.5, 50)
    _write(tmp_path / "filter/A.tsv", 0.25, 10)
    jobs = job_timings(tmp_path)
    assert jobs.height == 4
    table = rule_timings(tmp_path)
    assert table["family"].to_list() == [
        "simulate_batch A", "collect A", "filter A",
    ]  # fmt: skip
    first = table.row(0, named=True)
    assert first["jobs"] == 2 and first["total_s"] == 4.0 and first["max_s"] == 2.5
    assert first["max_rss_mb"] == 300


def test_rule_timings_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no Snakemake benchmark files"):
        rule_timings(tmp_path)
    (tmp_path / "x.tsv").write_text("a\tb\n1\t2\n")
    with pytest.raises(ConfigurationError, match="not a Snakemake benchmark file"):
        rule_timings(tmp_path)


def test_timings_command_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _write(tmp_path / "tuning/B/sims/train/FCFS/FCFS/none/batch0.tsv", 3.0, 1)
    assert main(["timings", str(tmp_path)]) == 0
    assert "simulate_batch B" in capsys.readouterr().out
