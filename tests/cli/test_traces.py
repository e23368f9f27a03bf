"""``scheduler info`` and ``scheduler filter`` (scheduler.cli.traces) on the bundled KTH-SP2 log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.helpers import (
    JOB_LINE,
    argparse_exit,
    assert_one_line_error,
    run,
    run_json,
    value_of,
    write_text,
)
from polars.testing import assert_frame_equal
from support.expected import KTH_CLIPPED, KTH_FILTER_COUNTS, KTH_JOBS, KTH_KEPT

import scheduler
from scheduler.traces.filters import FilterReport
from scheduler.traces.summary import trace_summary
from scheduler.traces.swf import Trace, read_swf

KTH_REPORT = KTH_FILTER_COUNTS


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
    # the log's header, but for the job counts: those of the file written (SWF 2.2)
    counts = {"; MaxJobs: 28490": f"; MaxJobs: {KTH_KEPT}",
              "; MaxRecords: 28476": f"; MaxRecords: {KTH_KEPT}"}  # fmt: skip
    assert set(counts) <= set(kth_filtered[0].header.lines)
    assert written.header.lines[: len(kth_filtered[0].header.lines)] == tuple(
        counts.get(line, line) for line in kth_filtered[0].header.lines
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
# bad input (issue #11)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["info", "filter", "simulate"])
def test_huge_malformed_line_is_quoted_short(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    huge = JOB_LINE.replace(" 10 ", " " + "7" * 5_000_000 + "q ", 1)
    bad = write_text(tmp_path / "huge.swf", "; MaxProcs: 4\n" + JOB_LINE + huge)
    extra = ["--out", tmp_path / "out.swf"] if command == "filter" else []
    code, out, err = run(capsys, command, bad, *extra)
    assert_one_line_error(code, out, err, f"{bad}:3", "(5,000,001 characters)")
    assert len(err) < 500
    assert not (tmp_path / "out.swf").exists()


def test_huge_bad_argument_is_quoted_short(capsys: pytest.CaptureFixture[str], kth_path: Path):
    for option, value in (("--primary", "Q" * 5_000_000), ("--threshold", "9" * 5_000_000 + "q")):
        with pytest.raises(SystemExit):
            run(capsys, "simulate", kth_path, option, value)
        err = capsys.readouterr().err
        assert len(err) < 2000 and "(5,000,00" in err


#: Two jobs the strong filter removes (run time 0 s; 9 processors on a 4-processor machine).
JOBLESS = (
    "; MaxProcs: 4\n"
    + JOB_LINE.replace(" 10 1 ", " 0 1 ", 1)
    + JOB_LINE.replace("1 0 0 10 1 -1 -1 1 ", "2 0 0 10 9 -1 -1 9 ", 1)
)
NO_JOB_LEFT = (
    "no job left after filtering (2 jobs in; removed by rule: procs > machine 1, "
    "no proc count 0, run time <= 0 or submit < 0 1, requested time <= 0 or < run 0)"
)


@pytest.mark.parametrize("command", ["filter", "simulate"])
def test_no_job_left_after_filtering_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    jobless = write_text(tmp_path / "jobless.swf", JOBLESS)
    outputs = ["--out", tmp_path / "out.swf", "--report" if command == "filter" else "--jobs-out"]
    outputs.append(tmp_path / ("report.json" if command == "filter" else "jobs.csv"))
    code, out, err = run(capsys, command, jobless, *outputs)
    assert_one_line_error(code, out, err, f"{jobless}: {NO_JOB_LEFT}")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["jobless.swf"]


def test_info_warns_when_no_job_is_left(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    jobless = write_text(tmp_path / "jobless.swf", JOBLESS)
    code, out, err = run(capsys, "info", jobless)
    assert code == 0 and value_of("jobs out (kept)", out) == "0"
    assert err == f"scheduler: warning: {jobless}: {NO_JOB_LEFT}\n"


# -- --overrun clip (issue #12) ----------------------------------------------------------------


def test_filter_overrun_clip_end_to_end(
    capsys: pytest.CaptureFixture[str],
    kth_path: Path,
    kth_filtered: tuple[Trace, FilterReport],
    tmp_path: Path,
) -> None:
    out_path, report_path = tmp_path / "kth-clip.swf", tmp_path / "report.json"
    code, out, err = run(
        capsys, "filter", kth_path, "--overrun", "clip", "--out", out_path, "--report", report_path
    )
    assert code == 0, err
    assert value_of("jobs out (kept)", out) == str(KTH_KEPT + KTH_CLIPPED)
    assert value_of("clipped: run time > requested (kept)", out) == str(KTH_CLIPPED)
    assert value_of("overrun jobs (run > requested)", out) == "clip"
    assert value_of("removed: requested time <= 0", out) == "0"
    report = json.loads(report_path.read_text())
    assert (report["overrun"], report["clipped_overrun"]) == ("clip", KTH_CLIPPED)
    written = read_swf(out_path)
    assert written.jobs.height == KTH_KEPT + KTH_CLIPPED
    assert (written.jobs.get_column("run_s") <= written.jobs.get_column("req_time_s")).all()
    assert any(f"overrun=clip, clipped={KTH_CLIPPED}" in line for line in written.header.lines)
    dropped_ids = kth_filtered[0].jobs.get_column("job_id")
    assert written.jobs.get_column("job_id").is_in(dropped_ids.implode()).sum() == KTH_KEPT


def test_filter_default_is_drop(capsys: pytest.CaptureFixture[str], kth_path: Path, tmp_path):
    result = run_json(capsys, "filter", kth_path, "--out", tmp_path / "kth.swf")
    assert (result["filter"]["overrun"], result["filter"]["clipped_overrun"]) == ("drop", 0)
    assert result["filter"]["jobs_out"] == KTH_KEPT
    assert not any("overrun" in line for line in read_swf(tmp_path / "kth.swf").header.lines)


def test_info_overrun_clip(capsys: pytest.CaptureFixture[str], kth_path: Path) -> None:
    result = run_json(capsys, "info", kth_path, "--overrun", "clip")
    assert result["filter"]["clipped_overrun"] == KTH_CLIPPED
    assert result["filter"]["jobs_out"] == KTH_KEPT + KTH_CLIPPED
    assert result["filter"]["removed"] == KTH_JOBS - KTH_KEPT - KTH_CLIPPED


def test_simulate_overrun_clip(capsys: pytest.CaptureFixture[str], kth_path: Path) -> None:
    result = run_json(capsys, "simulate", kth_path, "--overrun", "clip")
    assert result["filter"]["overrun"] == "clip"
    assert result["summary"]["jobs"] == KTH_KEPT + KTH_CLIPPED
    code, out, err = run(capsys, "simulate", kth_path, "--overrun", "clip")
    assert code == 0, err
    assert value_of("strong filter", out) == (
        f"kept {KTH_KEPT + KTH_CLIPPED} of {KTH_JOBS} jobs "
        f"({KTH_CLIPPED} run times clipped to the requested time)"
    )


def test_simulate_overrun_clip_without_filter_is_refused(
    capsys: pytest.CaptureFixture[str], kth_path: Path
) -> None:
    code, out, err = run(capsys, "simulate", kth_path, "--no-filter", "--overrun", "clip")
    assert_one_line_error(code, out, err, "--overrun clip", "--no-filter")


@pytest.mark.parametrize("command", ["info", "filter", "simulate"])
def test_bad_overrun_value_is_named(
    capsys: pytest.CaptureFixture[str], kth_path: Path, tmp_path: Path, command: str
) -> None:
    extra = ["--out", tmp_path / "out.swf"] if command == "filter" else []
    code, err = argparse_exit(capsys, command, kth_path, *extra, "--overrun", "cut")
    assert code == 2
    assert "--overrun" in err and "'cut'" in err and "'drop'" in err and "'clip'" in err
