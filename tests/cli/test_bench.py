"""``scheduler bench`` (scheduler.cli.bench): its arguments (the benchmarks themselves are slow)."""

from __future__ import annotations

from pathlib import Path

from scheduler.cli.main import build_parser

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_bench_defaults_name_the_bundled_log_and_the_shared_traces(kth_path: Path) -> None:
    args = build_parser().parse_args(["bench"])
    assert args.kth == kth_path.resolve()
    assert args.kth.is_file()
    assert args.traces_dir == REPO_ROOT.resolve().parent / "shared" / "traces"
    assert args.json is False
