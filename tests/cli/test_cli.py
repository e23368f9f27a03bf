"""The ``scheduler`` command line (scheduler.cli.main) on the bundled KTH-SP2 log.

Most tests call :func:`scheduler.cli.main.main` in-process and read its output with ``capsys``; one
runs ``python -m scheduler`` in a subprocess to prove the entry point works.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from support.expected import KTH_FILTER_COUNTS, KTH_JOBS, KTH_KEPT

import scheduler
from scheduler.cli.main import main
from scheduler.sim import _kernel
from scheduler.sim.engine import SimulationResult, simulate
from scheduler.traces.filters import FilterReport, strong_filter
from scheduler.traces.summary import trace_summary
from scheduler.traces.swf import Trace, read_swf

REPO_ROOT = Path(__file__).resolve().parents[2]
KTH_REPORT = KTH_FILTER_COUNTS
SPF_40H = ["--primary", "SPF", "--backfill", "FCFS", "--threshold", "40h"]
#: Every other option: time-dependent primary (lower case), no backfilling, a 2-day threshold.
OTHER_OPTIONS = [
    "--primary",
    "lexp",
    "--backfill",
    "none",
    "--threshold",
    "2d",
    "--reservation",
    "classic",
    "--estimate",
    "clairvoyant",
    "--outlive",
    "double",
]


@pytest.fixture(scope="module")
def kth_raw(kth_path: Path) -> Trace:
    """The KTH-SP2 log as read (28476 jobs)."""
    return read_swf(kth_path)


@pytest.fixture(scope="module")
def kth_filtered(kth_raw: Trace) -> tuple[Trace, FilterReport]:
    """The strongly filtered KTH-SP2 log and its report."""
    return strong_filter(kth_raw)


@pytest.fixture(scope="module")
def spf_40h(kth_filtered: tuple[Trace, FilterReport]) -> SimulationResult:
    """EASY(SPF, FCFS, 40 h) on the filtered log, through the Python API."""
    return simulate(kth_filtered[0], "SPF", "FCFS", "40h")


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Run ``scheduler *argv`` in-process: exit code, stdout, stderr."""
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> dict:
    """Run ``scheduler *argv --json`` in-process, check it succeeded, parse its output."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def assert_one_line_error(code: int, out: str, err: str, *fragments: str) -> None:
    """Exit code 2, nothing on stdout, one ``scheduler: error:`` line holding ``fragments``."""
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("scheduler: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


def argparse_exit(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    """Run ``scheduler *argv`` expecting argparse to exit; exit code and stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main([str(arg) for arg in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return exit_info.value.code, err


def value_of(label: str, text: str) -> str:
    """The value printed after ``label`` on an aligned ``label  value`` line."""
    match = re.search(rf"^\s+{re.escape(label)}\s+(.+)$", text, re.MULTILINE)
    assert match is not None, f"no line {label!r} in:\n{text}"
    return match.group(1)


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` and return the path."""
    path.write_text(text, encoding="utf-8")
    return path


JOB_LINE = "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"


# --------------------------------------------------------------------------------------------
# scheduler --version, policies, warmup
# --------------------------------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"scheduler {scheduler.__version__}"


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = argparse_exit(capsys)
    assert code == 2
    assert "usage: scheduler" in err


def test_policies_lists_every_registered_policy(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "policies")
    assert code == 0
    for name, policy in scheduler.POLICIES.items():
        assert value_of(name, out) == policy.description
    listed = run_json(capsys, "policies")
    assert [entry["name"] for entry in listed] == scheduler.policy_names()


def test_warmup_covers_every_kernel_specialisation(
    capsys: pytest.CaptureFixture[str], kth_path: Path
) -> None:
    code, out, _ = run(capsys, "warmup")
    assert code == 0
    assert re.search(r"simulator kernel ready in \d+ ms", out)
    signatures = list(_kernel.advance.signatures)
    assert signatures
    # Real runs with other policies and options need no further specialisation.
    for options in (SPF_40H, OTHER_OPTIONS):
        assert run(capsys, "simulate", kth_path, *options)[0] == 0
    assert list(_kernel.advance.signatures) == signatures


# --------------------------------------------------------------------------------------------
# scheduler info
# --------------------------------------------------------------------------------------------


def test_info_text(capsys: pytest.CaptureFixture[str], kth_path: Path, kth_raw: Trace) -> None:
    code, out, err = run(capsys, "info", kth_path)
    assert code == 0, err
    assert value_of("machine size", out) == "100 processors"
    assert value_of("jobs", out) == str(KTH_JOBS)
    assert value_of("users", out) == str(trace_summary(kth_raw)["users"])
    assert value_of("time span", out).startswith(f"{trace_summary(kth_raw)['span_s']} s (")
    assert value_of("offered load", out) == f"{trace_summary(kth_raw)['offered_load']:.4f}"
    assert value_of("jobs in", out) == str(KTH_JOBS)
    assert value_of("jobs out (kept)", out) == str(KTH_KEPT)
    assert value_of("removed: no proc count", out) == "1"
    assert value_of("removed: run time <= 0 or submit < 0", out) == "8"
    assert value_of("removed: requested time <= 0 or < run", out) == "475"


def test_info_json(
    capsys: pytest.CaptureFixture[str],
    kth_path: Path,
    kth_raw: Trace,
    kth_filtered: tuple[Trace, FilterReport],
) -> None:
    info = run_json(capsys, "info", kth_path)
    raw = trace_summary(kth_raw)
    assert info["raw"] == {**raw, "span_days": raw["span_s"] / 86400}
    assert info["raw"]["machine_procs"] == 100
    assert info["raw"]["jobs"] == KTH_JOBS
    assert info["filter"] == {**kth_filtered[1].to_dict(), "removed": KTH_JOBS - KTH_KEPT}
    assert KTH_REPORT.items() <= info["filter"].items()
    assert info["filtered"] == trace_summary(kth_filtered[0])
    assert info["filtered"]["offered_load"] < raw["offered_load"]
    assert info["skipped_lines"] == {}


def test_info_machine_procs_override(capsys: pytest.CaptureFixture[str], kth_path: Path) -> None:
    info = run_json(capsys, "info", kth_path, "--machine-procs", "64")
    assert info["raw"]["machine_procs"] == 64
    assert info["filter"]["machine_procs"] == 64
    assert info["filter"]["removed_procs_exceed_machine"] > 0


def test_info_lenient_reports_skipped_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = write_text(tmp_path / "bad.swf", "; MaxProcs: 4\n" + JOB_LINE + "2 0 0 10 1 -1\n")
    code, out, err = run(capsys, "info", bad, "--lenient")
    assert code == 0
    assert value_of("jobs", out) == "1"
    assert value_of("skipped: wrong field count", out) == "1"
    assert err.startswith("scheduler: warning: ") and len(err.splitlines()) == 1


def test_info_infer_machine_procs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    headerless = write_text(
        tmp_path / "headerless.swf", JOB_LINE.replace(" 1 -1 -1 1 ", " 3 -1 -1 3 ", 1)
    )
    code, out, err = run(capsys, "info", headerless)
    assert_one_line_error(
        code, out, err, str(headerless), "--machine-procs", "--infer-machine-procs"
    )
    info = run_json(capsys, "info", headerless, "--infer-machine-procs")
    assert info["raw"]["machine_procs"] == 3


# --------------------------------------------------------------------------------------------
# scheduler filter
# --------------------------------------------------------------------------------------------


def test_filter_writes_trace_and_report(
    capsys: pytest.CaptureFixture[str],
    kth_path: Path,
    kth_filtered: tuple[Trace, FilterReport],
    tmp_path: Path,
) -> None:
    out_path, report_path = tmp_path / "out" / "kth.swf.gz", tmp_path / "report.json"
    code, out, err = run(capsys, "filter", kth_path, "--out", out_path, "--report", report_path)
    assert code == 0, err
    assert value_of("jobs out (kept)", out) == str(KTH_KEPT)
    assert value_of("filtered trace", out) == str(out_path)

    written = read_swf(out_path)
    assert written.jobs.height == KTH_KEPT
    assert written.machine_procs == 100
    assert_frame_equal(written.jobs, kth_filtered[0].jobs)
    assert written.header.lines[: len(kth_filtered[0].header.lines)] == (
        kth_filtered[0].header.lines
    )
    assert any(
        f"schedlab {scheduler.__version__} strong filter" in line for line in written.header.lines
    )

    report = json.loads(report_path.read_text())
    assert report == kth_filtered[1].to_dict()
    assert KTH_REPORT.items() <= report.items()
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave no temporary files


def test_filter_json_and_machine_size_for_headerless_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    headerless = write_text(tmp_path / "headerless.swf", JOB_LINE + JOB_LINE.replace("1", "2", 1))
    out_path = tmp_path / "filtered.swf"
    result = run_json(capsys, "filter", headerless, "--machine-procs", "8", "--out", out_path)
    assert result["filter"]["jobs_out"] == 2
    assert result["out"] == str(out_path)
    assert read_swf(out_path).machine_procs == 8  # a MaxProcs line was added


def test_filter_requires_out(capsys: pytest.CaptureFixture[str], kth_path: Path) -> None:
    code, err = argparse_exit(capsys, "filter", kth_path)
    assert code == 2
    assert "--out" in err


# --------------------------------------------------------------------------------------------
# scheduler simulate
# --------------------------------------------------------------------------------------------


def test_simulate_json_equals_the_api(
    capsys: pytest.CaptureFixture[str], kth_path: Path, spf_40h: SimulationResult
) -> None:
    run_ = run_json(capsys, "simulate", kth_path, *SPF_40H)
    assert run_["summary"] == spf_40h.summary.to_dict()
    assert run_["summary"]["avg_wait_s"] == spf_40h.summary.avg_wait_s
    assert run_["summary"]["jobs"] == KTH_KEPT
    assert run_["config"] == spf_40h.config.to_dict()
    assert run_["config"]["threshold_s"] == 144000
    assert run_["filter"]["jobs_out"] == KTH_KEPT
    assert run_["version"] == scheduler.__version__
    assert run_["wall_time_ms"] > 0


def test_simulate_text(
    capsys: pytest.CaptureFixture[str], kth_path: Path, spf_40h: SimulationResult
) -> None:
    code, out, err = run(capsys, "simulate", kth_path, *SPF_40H)
    assert code == 0, err
    summary = spf_40h.summary
    avg_wait = value_of("AvgWait", out)
    assert avg_wait == f"{summary.avg_wait_s:.1f} s ({summary.avg_wait_s / 3600:.2f} h)"
    assert value_of("jobs", out) == str(KTH_KEPT)
    assert value_of("AVEbsld", out) == f"{summary.avg_bsld:.2f}"
    assert value_of("backfilled jobs", out) == str(summary.backfilled_jobs)
    assert re.fullmatch(r"\d+\.\d ms", value_of("simulation wall time", out))
    assert value_of("primary", out) == "SPF"
    assert value_of("threshold", out) == "40h (144000 s)"


def test_simulate_options_equal_the_api(
    capsys: pytest.CaptureFixture[str],
    kth_path: Path,
    kth_filtered: tuple[Trace, FilterReport],
) -> None:
    run_ = run_json(capsys, "simulate", kth_path, *OTHER_OPTIONS)
    expected = simulate(
        kth_filtered[0], "LEXP", None, 2 * 86400,
        estimate="clairvoyant", reservation="classic", outlive="double",
    )  # fmt: skip
    assert run_["summary"] == expected.summary.to_dict()
    assert run_["config"] == expected.config.to_dict()
    assert run_["config"]["backfill"] is None
    assert run_["summary"]["backfilled_jobs"] == 0


def test_simulate_default_has_no_threshold(
    capsys: pytest.CaptureFixture[str], kth_path: Path
) -> None:
    run_ = run_json(capsys, "simulate", kth_path)
    assert run_["config"]["threshold_s"] is None
    assert (run_["config"]["primary"], run_["config"]["backfill"]) == ("FCFS", "FCFS")


def test_simulate_writes_schedule_and_job_table(
    capsys: pytest.CaptureFixture[str],
    kth_path: Path,
    spf_40h: SimulationResult,
    tmp_path: Path,
) -> None:
    schedule_path, jobs_path = tmp_path / "schedule.swf.gz", tmp_path / "jobs.parquet"
    code, _, err = run(
        capsys, "simulate", kth_path, *SPF_40H, "--out", schedule_path, "--jobs-out", jobs_path
    )
    assert code == 0, err

    schedule = read_swf(schedule_path)
    assert schedule.jobs.height == KTH_KEPT
    assert_frame_equal(schedule.jobs, spf_40h.to_swf_jobs())
    simulated = spf_40h.jobs.select("job_id", pl.col("wait_s").round(0).cast(pl.Int64))
    waits = schedule.jobs.select("job_id", "wait_s").join(simulated, on="job_id", suffix="_sim")
    assert waits.height == KTH_KEPT
    assert (waits["wait_s"] == waits["wait_s_sim"]).all()
    assert schedule.jobs["wait_s"].sum() == round(spf_40h.summary.total_wait_s)

    header = "\n".join(schedule.header.lines)
    assert f"schedlab {scheduler.__version__} simulate" in header
    assert f"schedlab {scheduler.__version__} strong filter: kept {KTH_KEPT}" in header
    config_lines = [
        line for line in schedule.header.lines if line.startswith("; schedlab config: ")
    ]
    assert len(config_lines) == 1
    config = json.loads(config_lines[0].removeprefix("; schedlab config: "))
    assert config == spf_40h.config.to_dict()
    assert config["threshold_s"] == 144000

    assert_frame_equal(pl.read_parquet(jobs_path), spf_40h.jobs)


def test_simulate_job_table_as_csv(
    capsys: pytest.CaptureFixture[str], kth_path: Path, spf_40h: SimulationResult, tmp_path: Path
) -> None:
    jobs_path = tmp_path / "jobs.csv"
    assert run(capsys, "simulate", kth_path, *SPF_40H, "--jobs-out", jobs_path)[0] == 0
    table = pl.read_csv(jobs_path)
    assert table.columns == spf_40h.jobs.columns
    assert table["wait_s"].to_list() == spf_40h.jobs["wait_s"].to_list()


def test_simulate_no_filter_on_raw_log_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], kth_path: Path
) -> None:
    code, out, err = run(capsys, "simulate", kth_path, "--no-filter")
    assert_one_line_error(code, out, err, "strong_filter")


def test_simulate_no_filter_on_filtered_log(
    capsys: pytest.CaptureFixture[str], kth_path: Path, spf_40h: SimulationResult, tmp_path: Path
) -> None:
    filtered = tmp_path / "filtered.swf"
    assert run(capsys, "filter", kth_path, "--out", filtered)[0] == 0
    run_ = run_json(capsys, "simulate", filtered, "--no-filter", *SPF_40H)
    assert run_["filter"] is None
    assert run_["summary"] == spf_40h.summary.to_dict()


# --------------------------------------------------------------------------------------------
# Errors: one line, exit code 2, never a traceback
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["info", "simulate"])
def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str) -> None:
    missing = tmp_path / "missing.swf"
    code, out, err = run(capsys, command, missing)
    assert_one_line_error(code, out, err, str(missing), "not found")


@pytest.mark.parametrize("command", ["info", "simulate"])
def test_bad_swf_names_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    bad = write_text(tmp_path / "bad.swf", "; MaxProcs: 4\n;\n" + JOB_LINE + "2 0 0 10 1 -1\n")
    code, out, err = run(capsys, command, bad)
    assert_one_line_error(code, out, err, f"{bad}:4", "expected 18 fields, found 6")


def test_unknown_policy_lists_the_known_ones(
    capsys: pytest.CaptureFixture[str], kth_path: Path
) -> None:
    code, err = argparse_exit(capsys, "simulate", kth_path, "--primary", "NOPE")
    assert code == 2
    assert "unknown policy 'NOPE'" in err
    assert "known policies: " + ", ".join(scheduler.policy_names()) in err
    code, err = argparse_exit(capsys, "simulate", kth_path, "--backfill", "NOPE")
    assert code == 2
    assert "known policies: " in err


@pytest.mark.parametrize("duration", ["4x", "-1h", "h"])
def test_bad_duration(capsys: pytest.CaptureFixture[str], kth_path: Path, duration: str) -> None:
    code, err = argparse_exit(capsys, "simulate", kth_path, f"--threshold={duration}")
    assert code == 2
    assert "--threshold" in err
    assert repr(duration) in err


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_bad_machine_procs(capsys: pytest.CaptureFixture[str], kth_path: Path, value: str) -> None:
    code, err = argparse_exit(capsys, "info", kth_path, f"--machine-procs={value}")
    assert code == 2
    assert "--machine-procs" in err


def test_bad_job_table_suffix(capsys: pytest.CaptureFixture[str], kth_path: Path) -> None:
    code, err = argparse_exit(capsys, "simulate", kth_path, "--jobs-out", "jobs.txt")
    assert code == 2
    assert ".parquet or .csv" in err


def test_unwritable_output(
    capsys: pytest.CaptureFixture[str], kth_path: Path, tmp_path: Path
) -> None:
    not_a_directory = write_text(tmp_path / "file", "")
    target = not_a_directory / "out.swf"
    code, out, err = run(capsys, "filter", kth_path, "--out", target)
    assert_one_line_error(code, out, err, str(target), "cannot write")
    assert not_a_directory.read_text() == ""


def test_threshold_none_is_infinite(capsys: pytest.CaptureFixture[str], kth_path: Path) -> None:
    run_ = run_json(capsys, "simulate", kth_path, "--threshold", "none")
    assert run_["config"]["threshold_s"] is None


# --------------------------------------------------------------------------------------------
# The entry point, in a real subprocess
# --------------------------------------------------------------------------------------------


def test_python_dash_m_scheduler_simulate(kth_path: Path, spf_40h: SimulationResult) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    completed = subprocess.run(
        [sys.executable, "-m", "scheduler", "simulate", str(kth_path), *SPF_40H, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr
    result = json.loads(completed.stdout)
    assert result["summary"] == spf_40h.summary.to_dict()
    assert result["config"]["threshold_s"] == 144000
