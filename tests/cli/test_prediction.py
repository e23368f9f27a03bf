"""``scheduler prediction-grid`` (scheduler.cli.prediction) on the bundled KTH-SP2 slice.

The command's rows must equal :func:`scheduler.studies.prediction.grid.learner_grid` on the same
filtered trace; bad axis values are one-line errors, reported before any trace is read.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from cli.helpers import argparse_exit, assert_one_line_error, run, run_json
from polars.testing import assert_frame_equal

from scheduler import read_swf, strong_filter
from scheduler.studies.prediction.grid import GRID_COLUMNS, learner_grid

SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"
AXES = ["--loss", "eloss", "--loss", "squared", "--eta", "10,1000", "--lam", "0,1e-4"]


@pytest.fixture(scope="module")
def expected() -> pl.DataFrame:
    trace = strong_filter(read_swf(SLICE), overrun="clip")[0]
    return learner_grid(trace, losses=["eloss", "squared"], etas=[10, 1000], lams=[0, 1e-4])


def test_json_equals_the_api(capsys: pytest.CaptureFixture[str], expected: pl.DataFrame) -> None:
    out = run_json(capsys, "prediction-grid", SLICE, *AXES, "--overrun", "clip")
    rows = pl.DataFrame(out["rows"], schema=expected.schema)
    assert rows.columns == list(GRID_COLUMNS)
    assert_frame_equal(rows.drop("wall_s"), expected.drop("wall_s"))
    assert out["overrun"] == "clip"
    assert out["filter"]["KTH-slice"]["jobs_out"] == expected["jobs"][0]
    assert rows["relative_avg_bsld"][0] == 1.0


def test_text_and_several_traces(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, expected: pl.DataFrame
) -> None:
    code, out, err = run(
        capsys, "prediction-grid", SLICE, SLICE, *AXES, "--overrun", "clip",
        "--out", tmp_path / "grid.csv",
    )  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [
        "trace", "loss", "eta_s", "lam", "AVEbsld", "rel", "wait_h", "rel_wait", "MAE_h",
        "under", "floor", "corrections", "wall_s",
    ]  # fmt: skip
    assert len(lines) == 1 + 2 * expected.height
    easy = lines[1].split()
    assert easy[:4] == ["KTH-slice", "EASY", "-", "-"]
    assert easy[4:6] == [f"{expected['avg_bsld'][0]:.2f}", "1.000"]
    last = expected.row(-1, named=True)
    assert lines[-1].split()[:6] == [
        "KTH-slice", "squared", "1000", "0.0001", f"{last['avg_bsld']:.2f}",
        f"{last['relative_avg_bsld']:.3f}",
    ]  # fmt: skip
    written = pl.read_csv(tmp_path / "grid.csv")
    assert written.height == 2 * expected.height
    assert written["avg_bsld"].to_list() == pytest.approx(2 * expected["avg_bsld"].to_list())


def test_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "prediction-grid", SLICE, "--eta", "100")
    rows = out["rows"]
    assert [(r["loss"], r["eta"], r["lam"]) for r in rows] == [
        (None, None, None),
        ("eloss", 100, 0),
    ]
    assert (rows[1]["correction"], rows[1]["backfill_order"]) == ("incremental", "sjbf")
    assert out["overrun"] == "drop"


@pytest.mark.parametrize(
    ("option", "fragments"),
    [
        (["--eta", "0"], ("eta", "> 0", "got 0")),
        (["--eta", "10,-5"], ("eta", "got -5")),
        (["--eta", "inf"], ("eta", "got inf")),
        (["--lam=-1e-6"], ("lam", ">= 0", "got -1e-06")),
        (["--lam", "nan"], ("lam", "got nan")),
        (["--loss", "huber"], ("'huber'", "eloss, squared, absolute")),
    ],
)
def test_bad_values_are_one_line_errors_before_reading(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, option: list[str], fragments: tuple[str]
) -> None:
    # the trace does not exist: the axes are checked first
    code, out, err = run(capsys, "prediction-grid", tmp_path / "missing.swf", *option)
    assert_one_line_error(code, out, err, *fragments)


@pytest.mark.parametrize(
    "option", [["--eta", "1,x"], ["--lam", ""], ["--backfill", "lifo"], ["--correction", "x"]]
)
def test_malformed_options_are_usage_errors(
    capsys: pytest.CaptureFixture[str], option: list[str]
) -> None:
    code, err = argparse_exit(capsys, "prediction-grid", SLICE, *option)
    assert code == 2
    assert "usage: scheduler prediction-grid" in err


def test_missing_trace_is_one_line_error(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    code, out, err = run(capsys, "prediction-grid", tmp_path / "missing.swf", "--eta", "10")
    assert_one_line_error(code, out, err, "missing.swf")


def test_the_published_simulators_rules_equal_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    from scheduler import simulate
    from scheduler.traces.filters import with_processor_count

    trace = strong_filter(read_swf(SLICE), overrun="clip")[0]
    trace = replace(trace, jobs=with_processor_count(trace.jobs, "requested", trace.machine_procs))
    expected = learner_grid(trace, losses=["eloss"], etas=[10], lams=[0], reservation="classic",
                            whole_seconds=True)  # fmt: skip
    out = run_json(capsys, "prediction-grid", SLICE, "--loss", "eloss", "--eta", "10",
                   "--lam", "0", "--overrun", "clip", "--processors", "requested",
                   "--reservation", "classic", "--whole-seconds")  # fmt: skip
    rows = pl.DataFrame(out["rows"], schema=expected.schema)
    assert_frame_equal(rows.drop("wall_s"), expected.drop("wall_s"))
    assert (out["processors"], out["reservation"], out["whole_seconds"]) == (
        "requested", "classic", True)  # fmt: skip
    # the baseline is plain EASY with the same reservation rule
    easy = simulate(trace, reservation="classic").summary.avg_bsld
    assert rows["avg_bsld"][0] == pytest.approx(easy)
