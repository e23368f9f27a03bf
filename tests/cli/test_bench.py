"""``scheduler bench`` (scheduler.cli.bench): its arguments, its table of groups and each group
on small inputs (the benchmarks themselves are slow)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from scheduler.cli.bench import BENCH_GROUPS, main_bench
from scheduler.cli.bench.command import format_figures, selected_groups
from scheduler.cli.bench.conservative import (
    CONSERVATIVE_RUNS,
    EASY_LABEL,
    conservative_figures,
    format_conservative_figures,
)
from scheduler.cli.bench.kernel import format_kernel_figures, kernel_figures
from scheduler.cli.bench.memory import MEMORY_RUNS, format_memory_figures, memory_figures
from scheduler.cli.bench.online import format_online_switching_figures, online_switching_figures
from scheduler.cli.bench.redirection import (
    format_redirection_figures,
    most_loaded_week,
    redirection_figures,
)
from scheduler.cli.bench.thresholds import (
    format_threshold_backfill_figures,
    format_threshold_sweep_figures,
    threshold_backfill_figures,
    threshold_sweep_figures,
)
from scheduler.cli.bench.trials import format_trial_figures, trial_figures, window_tuples
from scheduler.cli.main import build_parser
from scheduler.core.errors import ConfigurationError, TraceFormatError
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


def test_bench_only_redirection_is_a_choice() -> None:
    assert build_parser().parse_args(["bench", "--only", "redirection"]).only == "redirection"


def test_bench_only_redirection_without_the_log_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main_bench(tmp_path, tmp_path / "none.swf", as_json=False, only="redirection") == 0
    assert "redirection skipped: not found" in capsys.readouterr().out


def _tiny_log(path: Path) -> Path:
    # header clock: Monday 2011-01-03 00:00 in Paris is 2011-01-02 23:00 UTC (1294009200); the
    # log starts 1 h before it, on Sunday. Jobs: one on Sunday (week of 2010-12-27), three big
    # ones on Monday and Tuesday (week of 2011-01-03), one small one the next Monday.
    lines = ["; UnixStartTime: 1294005600", "; TimeZoneString: Europe/Paris", "; MaxProcs: 8"]
    rows = [(1, 0, 100, 2), (2, 3600, 500, 4), (3, 90000, 500, 4), (4, 100000, 50, 1),
            (5, 3600 + 7 * 86400, 10, 1)]  # fmt: skip
    for job_id, submit, run, procs in rows:
        fields = f"{job_id} {submit} 0 {run} {procs} -1 -1 {procs} {run}"
        lines.append(f"{fields} -1 1 1 1 -1 1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_most_loaded_week_is_a_calendar_week_in_the_log_time_zone(tmp_path: Path) -> None:
    trace = read_swf(_tiny_log(tmp_path / "t.swf"))
    week, figures = most_loaded_week(trace)
    assert week.jobs["job_id"].to_list() == [2, 3, 4]
    assert figures["week_start"].startswith("2011-01-03T00:00:00+01:00")
    assert figures["weeks"] == 3 and figures["jobs"] == 3
    assert figures["offered_load"] == pytest.approx((2000 + 2000 + 50) / (8 * 7 * 86400))


def test_most_loaded_week_names_the_file_and_key_of_a_bad_time_zone(tmp_path: Path) -> None:
    path = _tiny_log(tmp_path / "t.swf")
    path.write_text(path.read_text().replace("Europe/Paris", "Europe/Pariss"))
    with pytest.raises(TraceFormatError, match=r"t\.swf:2: field TimeZoneString: 'Europe/Pariss'"):
        most_loaded_week(read_swf(path))


def test_redirection_figures_on_a_tiny_log(tmp_path: Path) -> None:
    trace = read_swf(_tiny_log(tmp_path / "t.swf"))
    figures = redirection_figures(trace, alpha=0.25, theta=0, repeat=2)
    assert figures["main_procs"] == 6 and figures["dedicated_procs"] == 2
    assert figures["redirection"]["ratio_min"] <= figures["redirection"]["ratio_median"]
    lines = format_redirection_figures(figures)
    assert "redirections" in lines[1] and len(lines) == 4


def test_bench_only_memory_without_the_log_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert build_parser().parse_args(["bench", "--only", "memory"]).only == "memory"
    assert main_bench(tmp_path, tmp_path / "none.swf", as_json=False, only="memory") == 0
    assert "memory skipped: not found" in capsys.readouterr().out


def test_memory_figures_on_the_tiny_lanl_slice() -> None:
    """Every run of MEMORY_RUNS at both loads, timed beside plain EASY: its summary is the
    memory engine's (effective utilisation, failed runs), the ratio's min <= median, and the
    lines name each run with its figures."""
    tiny = Path(__file__).resolve().parents[2] / "resources" / "LANL-CM5-tiny.swf.gz"
    figures = memory_figures(read_swf(tiny), repeat=2)
    assert figures["jobs"] == figures["filter"]["jobs_out"] > 0
    for key in ("native", "load 1.2"):
        part = figures[key]
        assert set(part) == {"plain EASY (base engine)", *(run[0] for run in MEMORY_RUNS)}
        for label, _, estimator, _ in MEMORY_RUNS:
            summary = part[label]["summary"]
            assert 0 < summary["utilisation"] <= summary["utilisation_with_waste"] <= 1
            assert part[label]["ratio_min"] <= part[label]["ratio_median"]
            if estimator == "none":
                assert summary["failed_runs"] == 0
    lines = format_memory_figures(figures)
    assert len(lines) == 1 + 2 * (2 + len(MEMORY_RUNS))
    assert any("perceptron explicit" in line and "failed runs" in line for line in lines)


def test_threshold_backfill_figures_on_the_bundled_slice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both backfill orders per policy on a whole filtered log; FCFS is the same with both
    (overdue jobs first in submit order, then FCFS, is FCFS); a missing log is listed."""
    assert build_parser().parse_args(["bench", "--only", "threshold-backfill"]).only == (
        "threshold-backfill"
    )
    figures = threshold_backfill_figures(
        REPO_ROOT / "resources", logs=("KTH-slice", "NOPE"), policies=("FCFS", "SPF"),
        threshold_s=3600.0, catalogue=REPO_ROOT / "config" / "tiny.yaml",
    )  # fmt: skip
    log = figures["logs"]["KTH-slice"]
    assert log["jobs"] > 1000 and log["machine_procs"] == 100
    assert log["FCFS/plain"]["avg_wait_s"] == log["FCFS/thresholded"]["avg_wait_s"]
    assert log["SPF/plain"]["avg_wait_s"] != log["SPF/thresholded"]["avg_wait_s"]
    assert figures["skipped"] == [str(REPO_ROOT / "resources" / "NOPE.swf.gz")]
    lines = format_threshold_backfill_figures(figures)
    assert sum(line.startswith("| KTH-slice |") for line in lines) == 2
    assert "| KTH-slice | FCFS |" in lines[4] and lines[4].split("|")[5].strip() == "0"
    assert lines[-1].startswith("skipped (not found)")
    assert main_bench(tmp_path, tmp_path / "none.swf", as_json=False,
                      only="threshold-backfill") == 0  # fmt: skip
    out = capsys.readouterr().out
    assert out.count("skipped (not found)") == 7


def test_threshold_sweep_figures_on_bundled_kth(tmp_path: Path) -> None:
    """The three ways of simulating a pair's thresholds are timed (their results are checked
    equal inside, which raises otherwise); a missing CEA-Curie is listed as skipped."""
    assert build_parser().parse_args(["bench", "--only", "threshold-sweep"]).only == (
        "threshold-sweep"
    )
    figures = threshold_sweep_figures(tmp_path, REPO_ROOT / "resources" / "KTH-SP2.swf.gz",
                                      weeks=2)  # fmt: skip
    log = figures["logs"]["KTH-SP2"]
    assert log["jobs_per_week"] > 100
    assert all(log[way] > 0 for way in ("separate", "copy", "sweep"))
    assert figures["skipped"] == [str(tmp_path / "CEA-Curie.swf.gz")]
    lines = format_threshold_sweep_figures(figures)
    assert lines[1].startswith("  KTH-SP2 (") and "shared / copy = " in lines[1]
    assert lines[-1].startswith("  skipped (not found)")


def test_online_switching_figures_on_bundled_kth(tmp_path: Path) -> None:
    assert build_parser().parse_args(["bench", "--only", "online"]).only == "online"
    figures = online_switching_figures(REPO_ROOT / "resources", log="KTH-SP2", repeat=1)
    assert figures["jobs"] > 10_000
    assert set(figures["seconds"]) >= {"fixed:FCFS", "random", "ucb"}
    assert all(value > 0 for value in figures["seconds"].values())
    lines = format_online_switching_figures(figures)
    assert "ratio to fixed FCFS" in lines[0] and lines[1].strip().endswith("1.00x")
    missing = online_switching_figures(tmp_path)
    assert format_online_switching_figures(missing)[0].startswith("online switching runs skipped")


def test_kernel_figures_on_bundled_kth(tmp_path: Path) -> None:
    """The engine and the minimal loop are timed side by side on the whole KTH-SP2 log (their
    start times are checked equal inside, which raises otherwise); a missing CEA-Curie is
    listed as skipped, and with it the 12 policies."""
    assert build_parser().parse_args(["bench", "--only", "kernel"]).only == "kernel"
    figures = kernel_figures(tmp_path, REPO_ROOT / "resources" / "KTH-SP2.swf.gz", repeat=1)
    log = figures["KTH-SP2"]
    assert log["jobs"] > 20_000
    assert set(log["speed_of_light"]) == {"minimal", "engine"}
    assert log["speed_of_light"]["minimal"]["ratio_median"] == 1.0
    assert log["speed_of_light"]["engine"]["median_s"] > 0
    assert "policies" not in log and "CEA-Curie" not in figures
    assert figures["skipped"] == [str(tmp_path / "CEA-Curie.swf.gz")]
    lines = format_kernel_figures(figures)
    assert lines[1].startswith(f"KTH-SP2 ({log['jobs']:,} jobs), EASY-FCFS-FCFS")
    assert lines[2].lstrip().startswith("minimal") and lines[3].lstrip().startswith("engine")
    assert lines[-1].startswith("  skipped (not found)")


# -- the table of groups ------------------------------------------------------------------------

HEADER_KEYS = ("schedlab", "python", "machine")


def test_every_group_is_a_choice_with_its_help_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``--only`` offers exactly the table's names, and ``--help`` shows each group's line (the
    text compared without white space: argparse wraps it, also at hyphens)."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "--help"])
    help_text = "".join(capsys.readouterr().out.split())
    assert "{" + ",".join(BENCH_GROUPS.names()) + "}" in help_text
    for name, group in BENCH_GROUPS.items():
        assert build_parser().parse_args(["bench", "--only", name]).only == name
        assert f"{name}({''.join(group.help.split())})" in help_text
    default = ",".join(g.name for g in BENCH_GROUPS.values() if g.in_default_run)
    assert f"(without--only:{default})" in help_text


def test_a_plain_run_is_issue_2s_groups_and_an_unknown_name_lists_the_groups() -> None:
    assert [g.name for g in selected_groups(None)] == ["core", "redirection", "trials", "memory"]
    assert selected_groups("kernel") == (BENCH_GROUPS["kernel"],)
    with pytest.raises(ConfigurationError, match="--only: unknown benchmark group 'nope'; "
                       "known benchmark groups: core, redirection, trials"):  # fmt: skip
        main_bench(Path("."), Path("."), as_json=True, only="nope")


def _tiny_kth(path: Path) -> Path:
    """A KTH-like log small enough for every group: 60 weeks of 5 jobs (the core group times
    the median of its first 48 weeks, which must hold jobs), 5 users, MaxProcs 64."""
    lines = ["; MaxProcs: 64"]
    rng = np.random.default_rng(3)
    for j in range(300):
        submit, run = j * 7 * 86400 // 5, int(rng.integers(60, 20000))
        procs, user = int(rng.integers(1, 33)), j % 5 + 1
        lines.append(f"{j + 1} {submit} 0 {run} {procs} -1 -1 {procs} {run} -1 1 {user} 1 -1 1"
                     " -1 -1 -1")  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def _bench_output(*args: object, **options: object) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main_bench(*args, **options) == 0  # type: ignore[arg-type]
    return out.getvalue()


@pytest.fixture(scope="module")
def smallest_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    """An empty traces directory (every log but KTH missing), the tiny KTH log, and the JSON
    figures of each group alone (by name) and of a plain run (None)."""
    root = tmp_path_factory.mktemp("bench")
    traces_dir, kth = root / "traces", _tiny_kth(root / "kth.swf")
    traces_dir.mkdir()
    runs = {only: json.loads(_bench_output(traces_dir, kth, as_json=True, only=only))
            for only in (*BENCH_GROUPS.names(), None)}  # fmt: skip
    return traces_dir, kth, runs


def _masked(lines: list[str]) -> list[str]:
    """Lines with every number replaced by ``#`` (timings differ from run to run)."""
    return [re.sub(r"\d+(?:[.,]\d+)*", "#", line) for line in lines]


@pytest.mark.parametrize("name", BENCH_GROUPS.names())
def test_every_group_dispatches_on_the_smallest_inputs(
    name: str, smallest_runs: tuple[Path, Path, dict]
) -> None:
    """``--only <name>`` runs that group: its JSON holds figures beyond the header, and its
    text is the header and that group's format of such figures (numbers aside)."""
    traces_dir, kth, runs = smallest_runs
    figures = runs[name]
    assert tuple(figures)[:3] == HEADER_KEYS and len(figures) > 3
    text = _bench_output(traces_dir, kth, as_json=False, only=name).splitlines()
    expected = format_figures(figures, [BENCH_GROUPS[name]]).splitlines()
    assert len(text) > 1 and text[0] == expected[0]
    assert _masked(text) == _masked(expected)


def test_a_plain_run_is_its_groups_in_table_order(smallest_runs: tuple[Path, Path, dict]) -> None:
    """Without ``--only`` the figures are those of the default groups, one after the other."""
    _, _, runs = smallest_runs
    expected = [*HEADER_KEYS]
    for group in BENCH_GROUPS.values():
        if group.in_default_run:
            expected.extend(key for key in runs[group.name] if key not in HEADER_KEYS)
    assert list(runs[None]) == expected
    assert "curie_skipped" in runs[None] and "redirection_skipped" in runs[None]
    assert "kernel" not in runs[None] and "threshold_sweep" not in runs[None]


# -- machine sizes from the trace catalogue -----------------------------------------------------


def test_the_machine_size_comes_from_the_catalogue(tmp_path: Path) -> None:
    """The bundled slice's header says 100 processors; a catalogue entry overrides it."""
    catalogue = tmp_path / "traces.yaml"
    catalogue.write_text("traces:\n  KTH-slice:\n    url: u\n    machine_procs: 200\n")
    figures = threshold_backfill_figures(
        REPO_ROOT / "resources", logs=("KTH-slice",), policies=("FCFS",), catalogue=catalogue
    )
    assert figures["logs"]["KTH-slice"]["machine_procs"] == 200
    with pytest.raises(ConfigurationError, match=r"key traces\.KTH-slice: .* not in the catalogue"):
        threshold_backfill_figures(REPO_ROOT / "resources", logs=("KTH-slice",))


def test_no_catalogue_machine_size_is_written_in_the_bench_code() -> None:
    """The catalogue is the one home of machine sizes: none of its values (in any spelling:
    80640, 80,640, 80_640) is a literal in ``scheduler/cli/bench/``."""
    entries = yaml.safe_load((REPO_ROOT / "config" / "traces.yaml").read_text())["traces"]
    sizes = {e["machine_procs"] for e in entries.values() if e.get("machine_procs")}
    assert sizes  # CEA-Curie's thin nodes at least
    sources = sorted((REPO_ROOT / "scheduler" / "cli" / "bench").glob("*.py"))
    assert len(sources) > 5
    for path in sources:
        text = path.read_text()
        for size in sizes:
            for spelling in (f"{size}", f"{size:,}", f"{size:_}"):
                found = re.search(rf"(?<![\d.,_]){re.escape(spelling)}(?![\d.,_]\d)", text)
                assert found is None, f"{path.name}: machine size {spelling} written out"


def test_conservative_figures_on_the_kth_slice() -> None:
    """EASY-FCFS and each conservative run are timed side by side (ratios to EASY-FCFS) on a
    whole filtered log, here the bundled KTH slice read as KTH-SP2; printed one line each."""
    figures = conservative_figures(REPO_ROOT / "resources" / "KTH-slice.swf.gz", "KTH-SP2",
                                   repeat=1)  # fmt: skip
    assert figures["log"] == "KTH-SP2" and figures["jobs"] > 100 and figures["repeat"] == 1
    assert figures[EASY_LABEL]["ratio_median"] == 1.0
    span_days = 6 * 7  # the slice: six weeks of submissions, then the drain
    for label in CONSERVATIVE_RUNS:
        assert figures[label]["median_s"] > 0 and figures[label]["ratio_min"] > 0
        simulated = figures[label]["days_per_s"] * figures[label]["median_s"]
        assert span_days - 7 < simulated < span_days + 30, (label, simulated)
    assert "multifactor, Slurm" in CONSERVATIVE_RUNS
    lines = format_conservative_figures(figures)
    assert all(line.endswith("simulated days/s") for line in lines[2:])
    assert lines[0].startswith(f"KTH-SP2 ({figures['jobs']:,} jobs), FCFS")
    assert [line.split()[0] for line in lines[1:]] == [
        label.split()[0] for label in (EASY_LABEL, *CONSERVATIVE_RUNS)
    ]


def test_schedule_figures_on_the_kth_slice() -> None:
    """The assignment and the busiest week's chart are timed beside the simulation; the week is
    the one in which the most runs start, and its runs are those the chart draws."""
    from scheduler.cli.bench.schedules import (
        busiest_week,
        format_schedule_figures,
        schedule_figures,
    )
    from scheduler.sim.api import simulate
    from scheduler.sim.schedule import schedule_of
    from scheduler.traces.filters import strong_filter

    trace = strong_filter(read_swf(REPO_ROOT / "resources" / "KTH-slice.swf.gz"))[0]
    figures = schedule_figures(trace, repeat=1)
    assert figures["jobs"] == trace.jobs.height and 0 < figures["contiguous_share"] <= 1
    assert set(figures["times"]) == {
        "simulate EASY-FCFS", "assign processors", "Gantt chart of the week (PNG)",
        "assign + write Batsim jobs.csv", "write Batsim JSON workload", "read Batsim JSON workload",
    }  # fmt: skip
    schedule = schedule_of(simulate(trace))
    start, end = busiest_week(schedule)
    starts = schedule.runs["start_s"].to_numpy()
    first = schedule.runs["submit_s"].min()
    counts = [((starts >= first + k * 7 * 86400) & (starts < first + (k + 1) * 7 * 86400)).sum()
              for k in range(12)]  # fmt: skip
    assert ((starts >= start) & (starts < end)).sum() == max(counts)
    assert figures["week_runs"] >= max(counts)  # runs started earlier still running count too
    lines = format_schedule_figures(figures)
    assert any("target <= 10 s" in line for line in lines)
    assert any("target <= 5 s" in line for line in lines)
