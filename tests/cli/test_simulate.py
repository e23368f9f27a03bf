"""``scheduler simulate`` and ``scheduler policies`` (scheduler.cli.simulate) on the KTH-SP2 log.

The command's results must equal the Python API's (:func:`scheduler.simulate`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from cli.helpers import OTHER_OPTIONS, SPF_40H, assert_one_line_error, run, run_json, value_of
from polars.testing import assert_frame_equal
from support.expected import KTH_KEPT

import scheduler
from scheduler.sim.api import simulate
from scheduler.sim.engine import SimulationResult
from scheduler.traces.filters import FilterReport
from scheduler.traces.swf import Trace, read_swf

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
    assert run_["config"]["threshold_backfill"] is False


def test_simulate_threshold_backfill_equals_the_api(
    capsys: pytest.CaptureFixture[str],
    kth_path: Path,
    kth_filtered: tuple[Trace, FilterReport],
) -> None:
    argv = ["--primary", "SPF", "--backfill", "SPF", "--threshold", "2h", "--threshold-backfill"]
    run_ = run_json(capsys, "simulate", kth_path, *argv)
    expected = simulate(kth_filtered[0], "SPF", "SPF", "2h", threshold_backfill=True)
    assert run_["summary"] == expected.summary.to_dict()
    assert run_["config"] == expected.config.to_dict()
    assert run_["config"]["threshold_backfill"] is True
    code, out, err = run(capsys, "simulate", kth_path, *argv)
    assert code == 0, err
    assert value_of("thresholded backfill", out) == "yes"
    code, out, err = run(capsys, "simulate", kth_path, *argv[:-1])
    assert value_of("thresholded backfill", out) == "no"


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


def test_simulate_draws_the_gantt_chart_the_api_draws(
    capsys: pytest.CaptureFixture[str], kth_path: Path, spf_40h: SimulationResult, tmp_path: Path
) -> None:
    from PIL import Image

    from scheduler.cli.simulate import draw_schedule

    chart = tmp_path / "week.png"
    code, _, err = run(capsys, "simulate", kth_path, *SPF_40H, "--gantt", chart,
                       "--window", "30d,37d", "--colour-by", "user")  # fmt: skip
    assert code == 0, err
    with Image.open(chart) as image:
        provenance = json.loads(image.info["Description"])
    assert json.loads(provenance["config"]) == spf_40h.config.to_dict()
    again = tmp_path / "again.png"
    trace = read_swf(kth_path)
    draw_schedule(spf_40h, trace, again, (30 * 86400.0, 37 * 86400.0), "user")
    assert again.read_bytes() == chart.read_bytes()


def test_simulate_writes_batsim_jobs(
    capsys: pytest.CaptureFixture[str], kth_path: Path, spf_40h: SimulationResult, tmp_path: Path
) -> None:
    from scheduler.traces.batsim import read_batsim_jobs

    path = tmp_path / "jobs.csv"
    code, _, err = run(capsys, "simulate", kth_path, *SPF_40H, "--batsim-jobs", path)
    assert code == 0, err
    table = read_batsim_jobs(path)
    assert table.height == KTH_KEPT
    waits = dict(zip(spf_40h.jobs["job_id"].cast(pl.String), spf_40h.jobs["wait_s"], strict=True))
    assert all(
        abs(waits[job] - wait) < 1e-6
        for job, wait in zip(table["job_id"], table["waiting_time"], strict=True)
    )


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--gantt", "week.svg"], ".png or .pdf"),
        (["--gantt", "week.png", "--window", "5d,3d"], "end after it starts"),
        (["--gantt", "week.png", "--window", "5d"], "START,END"),
        (["--gantt", "week.png", "--colour-by", "prediction"], "needs --predictor"),
    ],
)
def test_simulate_gantt_errors_before_any_work(
    capsys: pytest.CaptureFixture[str], kth_path: Path, tmp_path: Path, options, fragment
) -> None:
    options = [str(tmp_path / o) if o.startswith("week") else o for o in options]
    try:
        code, _, err = run(capsys, "simulate", kth_path, *options)
    except SystemExit as exit_info:  # argparse's own errors
        code, err = exit_info.code, capsys.readouterr().err
    assert code == 2 and fragment in err
    assert not list(tmp_path.iterdir())


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
# scheduler policies
# --------------------------------------------------------------------------------------------


def test_policies_lists_every_registered_policy(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "policies")
    assert code == 0
    for name, policy in scheduler.POLICIES.items():
        assert value_of(name, out) == policy.description
    listed = run_json(capsys, "policies")
    assert [entry["name"] for entry in listed] == scheduler.policy_names()


# --------------------------------------------------------------------------------------------
# scheduler simulate --predictor (the prediction variant)
# --------------------------------------------------------------------------------------------

KTH_SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"
NAG_SJBF = ["--predictor", "eloss", "--correction", "incremental", "--backfill", "SJBF"]


@pytest.fixture(scope="module")
def kth_slice() -> Trace:
    return scheduler.strong_filter(read_swf(KTH_SLICE))[0]


def test_simulate_with_a_loss_as_predictor_prints_the_prediction_figures(
    capsys: pytest.CaptureFixture[str], kth_slice: Trace
) -> None:
    code, out, err = run(capsys, "simulate", KTH_SLICE, *NAG_SJBF)
    assert code == 0, err
    api = simulate(kth_slice, predictor="nag", loss="eloss", correction="incremental",
                   backfill="SJBF")  # fmt: skip
    assert value_of("predictor", out) == "nag (loss eloss)"
    assert value_of("correction", out) == "incremental"
    assert value_of("backfill order", out) == "sjbf"
    assert value_of("backfill", out) == "SJBF"
    assert value_of("estimate", out) == "predicted:nag"
    assert value_of("total corrections", out) == str(api.total_corrections)
    assert value_of("MAE at submission", out).startswith(f"{api.prediction_mae_s:.1f} s")
    assert value_of("AVEbsld", out) == f"{api.summary.avg_bsld:.2f}"


def test_simulate_predictor_json_equals_the_api(
    capsys: pytest.CaptureFixture[str], kth_slice: Trace
) -> None:
    argv = ["--predictor", "nag", "--loss", "squared", "--eta", "100", "--lam", "1e-6"]
    run_ = run_json(capsys, "simulate", KTH_SLICE, *argv, "--correction", "doubling")
    api = simulate(kth_slice, predictor="nag", loss="squared", eta=100.0, lam=1e-6,
                   correction="doubling")  # fmt: skip
    assert run_["summary"] == api.summary.to_dict()
    assert run_["prediction"] == api.prediction_dict()
    assert run_["config"]["backfill"] == "FCFS"


def test_simulate_requested_predictor_equals_plain_easy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    plain = run_json(capsys, "simulate", KTH_SLICE, "--overrun", "clip")
    predicted = run_json(capsys, "simulate", KTH_SLICE, "--overrun", "clip",
                         "--predictor", "REQUESTED")  # fmt: skip
    assert predicted["summary"] == plain["summary"]
    assert plain["prediction"] is None
    assert predicted["prediction"]["total_corrections"] == 0


def test_simulate_sjbf_without_predictor_is_spf_backfilling(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sjbf = run_json(capsys, "simulate", KTH_SLICE, "--backfill", "sjbf")
    spf = run_json(capsys, "simulate", KTH_SLICE, "--backfill", "SPF")
    assert sjbf["summary"] == spf["summary"]
    assert sjbf["config"]["backfill"] == "SPF"


@pytest.mark.parametrize(
    ("option", "value"), [("--eta", "inf"), ("--eta", "nan"), ("--eta", "-1"), ("--lam", "inf"),
                          ("--lam", "-0.5"), ("--eta", "1e300")],
)  # fmt: skip
def test_simulate_bad_learner_settings_are_the_apis_error(
    capsys: pytest.CaptureFixture[str], kth_slice: Trace, option: str, value: str
) -> None:
    """``--eta inf`` made every prediction 1 s; now the API's refusal, word for word."""
    setting = option.removeprefix("--")
    with pytest.raises(scheduler.ConfigurationError) as api:
        simulate(kth_slice, predictor="nag", **{setting: float(value)})
    assert str(api.value).startswith(f"{setting}: ")
    code, out, err = run(capsys, "simulate", KTH_SLICE, "--predictor", "nag", option, value)
    assert_one_line_error(code, out, err)
    assert err.strip() == f"scheduler: error: {api.value}"


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["--predictor", "foo"], ("--predictor 'foo' is neither a predictor", "eloss")),
        (["--predictor", "over=foo"], ("--predictor 'over=foo'", "lacks")),
        (["--predictor", "nag", "--loss", "bad"], ("--loss:", "'bad'")),
        (["--predictor", "ave2", "--correction", "nope"], ("unknown correction 'nope'",)),
        (["--correction", "incremental"], ("--correction needs --predictor",)),
        (["--predictor", "eloss", "--loss", "squared"], ("give one of them",)),
        (["--predictor", "requested", "--primary", "SPF"], ("supports primary FCFS",)),
        (["--predictor", "requested", "--threshold", "40h"], ("no threshold",)),
        (["--predictor", "requested", "--threshold-backfill"], ("threshold_backfill=True",)),
        (["--predictor", "requested", "--backfill", "none"], ("got backfill=None",)),
        (["--predictor", "requested", "--eta", "10"], ("configures the nag predictor only",)),
    ],
)
def test_simulate_bad_prediction_options_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragments: tuple[str, ...]
) -> None:
    assert_one_line_error(*run(capsys, "simulate", KTH_SLICE, *argv), *fragments)
