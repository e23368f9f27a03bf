"""``scheduler bench`` (scheduler.cli.bench): its arguments (the benchmarks themselves are slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scheduler.cli.bench import format_trial_figures, main_bench, trial_figures, window_tuples
from scheduler.cli.main import build_parser
from scheduler.traces.swf import read_swf

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_bench_defaults_name_the_bundled_log_and_the_shared_traces(kth_path: Path) -> None:
    args = build_parser().parse_args(["bench"])
    assert args.kth == kth_path.resolve()
    assert args.kth.is_file()
    assert args.traces_dir == REPO_ROOT.resolve().parent / "shared" / "traces"
    assert args.json is False


def test_bench_only_trials_is_a_choice() -> None:
    assert build_parser().parse_args(["bench", "--only", "trials"]).only == "trials"
    assert build_parser().parse_args(["bench"]).only is None


def _tiny_lublin(path: Path, jobs: int) -> Path:
    rng = np.random.default_rng(0)
    lines = ["; MaxNodes: 256"]
    submit = 1000
    for j in range(1, jobs + 1):
        submit += int(rng.integers(0, 600))
        procs, run = int(rng.integers(1, 129)), int(rng.integers(1, 5000))
        lines.append(f"{j} {submit} -1 {run} {procs} -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_window_tuples_are_consecutive_and_relative(tmp_path: Path) -> None:
    trace = read_swf(_tiny_lublin(tmp_path / "l.swf", 100), machine_procs=256)
    tuples = window_tuples(trace, 2)
    submit = trace.jobs["submit_s"].to_numpy()
    assert [t[0].shape[0] for t in tuples] == [48, 48]
    np.testing.assert_array_equal(tuples[1][0], submit[48:96] - submit[48])
    np.testing.assert_array_equal(tuples[1][1], trace.jobs["alloc_procs"].to_numpy()[48:96])


def test_trial_figures_on_a_tiny_log(tmp_path: Path) -> None:
    path = _tiny_lublin(tmp_path / "Lublin-256.swf", 96)
    figures = trial_figures(
        path, windows=2, trials=200, repeat=2, trial_counts=(100, 400), repetitions=3
    )
    assert figures["trials_per_min_min"] <= figures["trials_per_min_median"]
    assert figures["trials_per_min_median"] <= figures["trials_per_min_max"]
    assert [row["trials"] for row in figures["convergence"]] == [100, 400]
    lines = format_trial_figures(figures)
    assert "M/min/core median" in lines[0] and len(lines) == 4


def test_bench_only_trials_without_the_log_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main_bench(tmp_path, tmp_path / "none.swf", as_json=False, only="trials") == 0
    assert "trials skipped: not found" in capsys.readouterr().out
