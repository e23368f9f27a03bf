"""SWF that schedlab writes is valid SWF 2.2 (the Parallel Workloads Archive's format, checked
by the independent ``support.pwa_swf``), and evalys reads it; ``scheduler convert`` between SWF
and Batsim JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from cli.helpers import SPF_40H, run, run_json
from polars.testing import assert_frame_equal
from support.pwa_swf import pwa_swf_problems

from scheduler.traces.filters import strong_filter
from scheduler.traces.swf import read_swf

#: Jobs of the filtered KTH-SP2 log.
KTH_KEPT = 27992


def test_checker_finds_problems(tmp_path: Path) -> None:
    """The checker can fail: each rule, on a small file."""
    good = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1"
    cases = {
        "; MaxJobs: 2\n" + good: "MaxJobs is 2, but the file holds 1",
        "; Version: 3\n" + good: "Version 3",
        "; Colour: blue\n" + good: "unknown header label Colour",
        good + "\n; late\n": "a comment after the first job line",
        good.replace(" 1 1 1 -1", " 7 1 1 -1"): "status 7",
        good.replace("1 0 5", "1 0 -5"): "field 3 is -5",
        good.replace("1 0 5 10 2", "1 0 5 10 2.5"): "field 5 is not an integer",
        good + "\n" + good: "a job number repeats",
        good + "\n2" + good[1:]: "",  # two jobs, valid
        "; MaxProcs: 1\n" + good: "more processors than the machine's 1",
        good.rsplit(" ", 1)[0]: "17 fields",
    }
    for text, expected in cases.items():
        path = tmp_path / "t.swf"
        path.write_text(text + "\n")
        problems = pwa_swf_problems(path)
        if expected:
            assert any(expected in problem for problem in problems), (text, problems)
        else:
            assert problems == [], problems
    unsorted = tmp_path / "u.swf"
    unsorted.write_text(good.replace("1 0 5", "1 9 5") + "\n2" + good[1:] + "\n")
    assert "job lines are not sorted by submit time" in pwa_swf_problems(unsorted)


def test_archive_log_is_valid_but_for_its_cleaning(kth_path: Path) -> None:
    """The archive's cleaned KTH-SP2 log keeps the original log's MaxJobs (14 jobs removed):
    the one thing the checker finds in it; schedlab's outputs must not repeat it."""
    assert pwa_swf_problems(kth_path) == ["MaxJobs is 28490, but the file holds 28476"]


def test_simulate_out_is_valid_swf(kth_path: Path, capsys, tmp_path: Path) -> None:
    out = tmp_path / "schedule.swf"
    code, _, err = run(capsys, "simulate", kth_path, *SPF_40H, "--out", out)
    assert code == 0, err
    assert pwa_swf_problems(out) == []


def test_filter_and_convert_out_are_valid_swf(kth_path: Path, capsys, tmp_path: Path) -> None:
    filtered = tmp_path / "filtered.swf.gz"
    code, _, err = run(capsys, "filter", kth_path, "--out", filtered)
    assert code == 0, err
    assert pwa_swf_problems(filtered) == []
    workload, back = tmp_path / "kth.json", tmp_path / "back.swf"
    summary = run_json(capsys, "convert", filtered, workload)
    assert (summary["format"], summary["jobs"], summary["machine_procs"]) == (
        "batsim",
        KTH_KEPT,
        100,
    )
    assert run_json(capsys, "convert", workload, back)["format"] == "swf"
    assert pwa_swf_problems(back) == []
    original, again = read_swf(filtered), read_swf(back)
    kept = ["job_id", "submit_s", "run_s", "req_time_s"]
    assert_frame_equal(again.jobs.select(kept), original.jobs.select(kept))
    # a .json trace simulates like the SWF it came from
    via_json = run_json(capsys, "simulate", workload, *SPF_40H)["summary"]
    direct = run_json(capsys, "simulate", filtered, *SPF_40H)["summary"]
    assert via_json == direct


def test_convert_refuses_and_filters(kth_path: Path, capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "convert", kth_path, tmp_path / "raw.json")
    assert code == 2
    assert "job 27313" in err and "--filter" in err  # the raw log has a job without processors
    assert not (tmp_path / "raw.json").exists()
    summary = run_json(capsys, "convert", kth_path, tmp_path / "k.json", "--filter",
                       "--profile-type", "DelayProfile")  # fmt: skip
    assert summary["filter"]["jobs_out"] == KTH_KEPT
    profiles = json.loads((tmp_path / "k.json").read_text())["profiles"]
    assert {p["type"] for p in profiles.values()} == {"DelayProfile"}
    code, _, err = run(capsys, "convert", kth_path, tmp_path / "k.txt")
    assert code == 2 and "expected an output name ending with .swf" in err
    code, _, err = run(capsys, "info", tmp_path / "k.json", "--lenient")
    assert code == 2 and "--lenient skips malformed SWF job lines" in err


def test_evalys_reads_filtered_swf(kth_path: Path, tmp_path: Path, monkeypatch) -> None:
    """evalys's SWF reader (``Workload.from_csv``) reads schedlab's SWF: its header values and
    jobs. Two facts of evalys 4.0.7 shape the test: it calls pandas.read_csv with
    ``delim_whitespace=True``, which pandas 3 removed (the test passes the equivalent
    ``sep=r"\\s+"``), and it takes the first job line for a header line (``header=0``), so it
    reads one job less than the file holds."""
    import evalys.workload as workload

    trace, _ = strong_filter(read_swf(kth_path))
    from scheduler.traces.swf import write_swf

    path = tmp_path / "kth.swf"
    write_swf(trace, path, job_counts=True)
    read_csv = pd.read_csv

    def read_csv_pandas3(*args, delim_whitespace=False, **kwargs):
        if delim_whitespace:
            kwargs["sep"] = r"\s+"
        return read_csv(*args, **kwargs)

    monkeypatch.setattr(workload.pd, "read_csv", read_csv_pandas3)
    read = workload.Workload.from_csv(str(path))
    assert (read.MaxJobs, read.MaxRecords, read.MaxProcs) == (KTH_KEPT, KTH_KEPT, 100)
    assert read.UnixStartTime == 843480031
    # evalys keeps status <= 1 (drops cancelled jobs, 5) and skips the first job line
    expected = trace.jobs.filter(trace.jobs["status"] <= 1).slice(1)
    assert read.df["jobID"].tolist() == expected["job_id"].to_list()
    assert read.df["execution_time"].tolist() == expected["run_s"].to_list()
    assert read.df["proc_alloc"].tolist() == expected["alloc_procs"].to_list()
