"""The tiny study run once through Snakemake for real (every study, a six-week slice of the real
KTH-SP2 log, the memory study's LANL-CM5 slice): its tables, figures, logs, provenance and
report, and what a change of config or code reruns (planned on copies of the finished study).
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import time
import zlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from support.png import png_text
from support.tiny_project import (
    copy_with,
    edited_package,
    planned_jobs,
    run_jobs,
    snakemake,
    write_config,
)

import scheduler
from scheduler.core.provenance import read_csv, read_parquet_provenance
from scheduler.studies.online.steps import WEEK_ALIGNMENT_KEY

pytestmark = pytest.mark.workflow


@pytest.fixture
def study(tiny_study: Path) -> Path:
    """The session's tiny study (every study), shared with the other workflow test files."""
    return tiny_study


def test_tables_have_expected_rows_and_baseline_is_one(study: Path) -> None:
    summary = read_csv(study / "results/tuning/tables/KTH-slice_summary.csv")
    assert summary.height == 2 * 8  # splits x cases
    assert set(summary["weeks"].to_list()) == {4}
    baseline = summary.filter(
        (pl.col("primary") == "FCFS") & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )  # fmt: skip
    assert baseline.height == 2
    assert baseline["mean_relative_avg_wait"].to_list() == [1.0, 1.0]
    assert baseline["relative_worst_max_wait"].to_list() == [1.0, 1.0]
    weekly = pl.read_parquet(study / "results/tuning/KTH-slice/weekly.parquet")
    assert weekly.height == 2 * 8 * 4
    assert sorted(set(weekly["week_index"].to_list())) == [0, 1, 2, 3]
    assert (weekly["jobs"] > 0).all()
    protocol = read_csv(study / "results/tuning/tables/protocol.csv")
    assert protocol.height == 2  # one learned pair per threshold
    assert set(protocol["threshold"].to_list()) == {"none", "20h"}
    # intervals and tests from the source-week bootstrap (tiny.yaml: 4 replicates in 2 jobs)
    assert (protocol["bootstrap_replicates"] == 4).all()
    assert (protocol["p_holm"] >= protocol["p_value"]).all()
    assert (protocol["test_difference_ci_low_s"] <= protocol["test_mean_difference_s"]).all()
    assert (protocol["test_mean_difference_s"] <= protocol["test_difference_ci_high_s"]).all()
    boot = pl.read_parquet(study / "results/tuning/KTH-slice/bootstrap/batch1.parquet")
    assert boot["replicate"].unique().sort().to_list() == [2, 3]
    markdown = (study / "results/tuning/tables/protocol.md").read_text()
    assert markdown.count("\n| KTH-slice |") == 2 and "<!-- provenance:" in markdown


def test_whole_log_weeks_feed_the_descriptive_figures(study: Path) -> None:
    whole = read_csv(study / "results/tuning/tables/KTH-slice_whole_summary.csv")
    assert set(whole["split"].to_list()) == {"whole"} and set(whole["weeks"].to_list()) == {4}
    assert whole.height == 6  # the figures' cases only
    assert set(zip(whole["primary"], whole["backfill"], whole["threshold"], strict=True)) == {
        ("FCFS", "FCFS", "none"), ("FCFS", "SPF", "none"), ("SPF", "FCFS", "none"),
        ("SPF", "SPF", "none"), ("FCFS", "SPF", "20h"), ("SPF", "SPF", "20h"),
    }  # fmt: skip
    base = whole.filter(
        (pl.col("primary") == "FCFS") & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )  # fmt: skip
    assert base["mean_relative_avg_wait"].to_list() == [1.0]
    assert base["relative_max_wait_d1"].to_list() == [1.0]
    # the whole weeks are resampled from the whole filtered log, with their own seeds
    weeks = pl.read_parquet(study / "results/KTH-slice/weeks/whole/batch0.parquet")
    train = pl.read_parquet(study / "results/KTH-slice/weeks/train/batch0.parquet")
    filtered = pl.read_parquet(study / "results/KTH-slice/filtered.parquet")
    assert weeks["source_job_id"].is_in(filtered["job_id"].implode()).all()
    assert not weeks.select("week_index", "source_job_id").equals(
        train.select("week_index", "source_job_id")
    )
    # the per-trace figures say which weeks they drew; the train/test figures use train/test
    for figure in ("weekly_avg_wait", "pairs_mean_max_wait", "thresholded_primary"):
        png = study / f"results/tuning/figures/KTH-slice/{figure}.png"
        record = json.loads(png_text(png)["Description"])
        assert json.loads(record["config"])["split"] == "whole", figure
    protocol = read_csv(study / "results/tuning/tables/protocol.csv")
    assert set(protocol["train_weeks"].to_list()) == {4}  # train weeks only


def test_whole_log_table(study: Path) -> None:
    table = read_csv(study / "results/tuning/tables/whole_log.csv")
    assert list(zip(table["primary"], table["backfill"], strict=True)) == [
        ("LEXP", "LEXP"), ("SQF", "SQF"), ("SPF", "SPF"), ("FCFS", "FCFS"),
    ]  # fmt: skip
    filtered = pl.read_parquet(study / "results/KTH-slice/filtered.parquet")
    assert (table["jobs"] == filtered.height).all() and (table["trace"] == "KTH-slice").all()
    base = table.filter(pl.col("primary") == "FCFS").row(0, named=True)
    assert (base["relative_avg_wait"], base["relative_max_wait"]) == (1.0, 1.0)
    for row in table.iter_rows(named=True):
        assert row["avg_wait_h"] == pytest.approx(row["avg_wait_s"] / 3600)
        assert row["relative_max_wait"] == pytest.approx(row["max_wait_s"] / base["max_wait_s"])
    markdown = (study / "results/tuning/tables/whole_log.md").read_text()
    assert "relative to EASY-FCFS-FCFS" in markdown and markdown.count("| KTH-slice |") == 4
    log = (study / "logs/tuning/KTH-slice/whole_log/LEXP/LEXP/none.log").read_text()
    assert f"{filtered.height:,} jobs" in log


def test_outputs_record_config_and_versions(study: Path) -> None:
    record = read_parquet_provenance(
        study / "results/tuning/KTH-slice/sims/train/SPF/FCFS/batch1.parquet"
    )
    assert record["config"]["primary"] == "SPF"
    assert sorted(label for label, _ in record["config"]["thresholds"]) == ["20h", "none"]
    assert set(record["versions"]) >= {"schedlab", "numba", "polars", "snakemake"}
    first_line = (study / "results/tuning/tables/protocol.csv").read_text().splitlines()[0]
    assert first_line.startswith("# provenance: {") and '"statsmodels"' in first_line


def test_figures_are_real_images(study: Path) -> None:
    figures = sorted((study / "results/tuning/figures").rglob("*.png"))
    assert len(figures) == 6 + 2 + 1  # per trace, over the traces, the week
    for png in figures:
        data = png.read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000, png
        assert b"schedlab" in data  # provenance in the PNG text chunks
        pdf = png.with_suffix(".pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and len(pdf) > 5_000


def test_logs_and_benchmarks_are_written(study: Path) -> None:
    log = (study / "logs/tuning/KTH-slice/sims/test/SPF/SPF/batch0.log").read_text()
    assert re.search(r"EASY-SPF-SPF Θ in \['(20h|none)', '(20h|none)'\]: 2 weeks", log)
    assert re.search(r"timing: wall_s=[0-9.]+ cpu_s=[0-9.]+ max_rss_mb=[0-9.]+\n$", log)
    assert not (study / "benchmarks").exists()
    fetched = json.loads((study / "resources/traces/KTH-slice.fetch.json").read_text())
    assert fetched["origin"] == "mirror" and fetched["source_path"].endswith("KTH-slice.swf.gz")
    assert fetched["provenance"]["step"] == "traces.steps.download_trace"


def test_a_local_run_has_no_job_rate_limit(study: Path, tmp_path: Path) -> None:
    """workflow/rules/scheduling.smk lifts Snakemake's --max-jobs-per-timespan where the jobs run
    here (its reevaluation timers multiplied with every finished job): at one job per 20 s the
    forced simulation jobs would take 20 s each after the first."""
    project = tmp_path / "copy"
    shutil.copytree(study, project, symlinks=True)
    started = time.monotonic()
    ran = run_jobs(project, "--forcerun", "simulate_batch", "--until", "simulate_batch",
                   "--max-jobs-per-timespan", "1/20s")  # fmt: skip
    elapsed = time.monotonic() - started
    assert ran["simulate_batch"] >= 8
    assert elapsed < 20 * (ran["simulate_batch"] - 1) / 2, elapsed


def test_rerun_does_nothing(study: Path) -> None:
    assert planned_jobs(study) == {}


def test_adding_a_threshold_reruns_only_affected_simulations(study: Path, tmp_path: Path) -> None:
    """A pair's job runs all its thresholds (they share a prefix): a new threshold reruns the
    train/test jobs (splits x pairs x batches), not the whole-log weeks' nor anything else."""
    project = copy_with(study, tmp_path, thresholds=["none", "20h", "40h"])
    jobs = planned_jobs(project)
    assert jobs.pop("simulate_batch") == 2 * 4 * 2
    # the same plan when a failed run deleted those simulations' outputs (the collection's
    # params name every case, so it is out of date, not only the simulations' params)
    for path in (project / "results/tuning/KTH-slice/sims").glob("t*/*/*/*.parquet"):
        path.unlink()
    assert planned_jobs(project)["simulate_batch"] == 2 * 4 * 2
    assert "filter_trace" not in jobs and "resample_weeks" not in jobs
    assert "online_run" not in jobs and "online_tables" not in jobs
    assert {"collect_weekly", "summarize_trace", "tuning_protocol"} <= set(jobs)


def test_adding_a_policy_reruns_only_new_simulations(study: Path, tmp_path: Path) -> None:
    """The plan is what the run up to the summary table ran plus what is left after it (one
    Snakemake start fewer than a dry run before the run)."""
    project = copy_with(study, tmp_path, primary_policies=["FCFS", "SPF", "LQF"])
    # run up to the summary table (the figures after it are drawn as any figure is): splits x
    # LQF x backfills x batches (all thresholds in each)
    ran = run_jobs(project, "--until", "summarize_trace")
    assert ran["simulate_batch"] == 2 * 1 * 2 * 2 and "collect_weekly" in ran, ran
    assert not {"filter_trace", "resample_weeks"} & set(ran), ran
    left = planned_jobs(project)
    # left: the whole-log weeks' LQF simulations with both backfills x batches (they feed the
    # figures, not the summary)
    assert left["simulate_batch"] == 2 * 2 and "collect_weekly" not in left, left
    assert {"trace_figure", "tuning_protocol"} <= set(left), left
    summary = read_csv(project / "results/tuning/tables/KTH-slice_summary.csv")
    assert summary.height == 2 * 12


def test_more_weeks_add_only_new_batches(study: Path, tmp_path: Path) -> None:
    jobs = planned_jobs(copy_with(study, tmp_path, weeks_per_split=6))
    assert jobs["resample_weeks"] == 2  # batch 2 of each split (not of the whole-log weeks)
    assert jobs["simulate_batch"] == 2 * 4  # splits x pairs, batch 2 only
    assert "filter_trace" not in jobs and "split_trace" not in jobs


def test_changing_the_online_backfill_order_reruns_the_online_simulations(
    study: Path, tmp_path: Path
) -> None:
    """online.threshold_backfill is a param of period_costs and online_run: turning it off
    reruns them (and the tables and figures after them), not the long traces."""
    project = copy_with(study, tmp_path, "online", threshold_backfill=False)
    jobs = planned_jobs(project)
    # 2 replicas x 2 periods (full, noisy); one batch of the 2 replicas x (3 fixed + 2 periods
    # x 7 selectors)
    assert jobs["period_costs"] == 2 * 2 and jobs["online_run"] == 3 + 2 * 7
    assert "long_trace" not in jobs and "simulate_batch" not in jobs
    assert {"online_tables", "online_figure"} <= set(jobs)


def test_slurms_scheduler_in_both_studies_through_snakemake(study: Path, tmp_path: Path) -> None:
    """One slurm.conf (relative to the project) for both studies. Tuning: CONSERVATIVE and
    multifactor pairs, of which Snakemake runs only the new ones, multifactor its own schedule.
    Online: a multifactor arm, so the costs and every run rerun (the policy set changed), not the
    long traces; the fixed arm's waits are its own and the full selector chooses it. Editing the
    slurm.conf reruns the tuning study's conservative simulations (their params hold its
    settings), no EASY one, and the online runs (they all may run the arm)."""
    conf = "config/slurm/multifactor.conf"
    project = copy_with(
        study, tmp_path, slurm_conf=conf, primary_policies=["FCFS", "SPF", "multifactor"],
        backfill_policies=["FCFS", "SPF", "CONSERVATIVE"],
    )  # fmt: skip
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["online"].update(slurm_conf=conf, policies=["FCFS", "multifactor"], selectors=["full"])
    write_config(project, config)
    ran = run_jobs(project, "--until", "collect_weekly", "online_run")
    # tuning: splits x the conservative pairs (FCFS, SPF, multifactor) x batches; online: one
    # batch of the 2 replicas x (2 fixed arms + full at 2 periods)
    assert ran["simulate_batch"] == 2 * 3 * 2, ran
    assert ran["online_run"] == 2 + 2 and "long_trace" not in ran, ran
    weekly = pl.read_parquet(project / "results/tuning/KTH-slice/weekly.parquet")
    conservative = weekly.filter(pl.col("backfill") == "CONSERVATIVE").sort(
        "primary", "split", "threshold", "week_index"
    )
    multifactor, fcfs = (
        conservative.filter(pl.col("primary") == name).select("avg_wait_s", "max_wait_s")
        for name in ("multifactor", "FCFS")
    )
    assert multifactor.height == fcfs.height == 2 * 2 * 4  # splits x thresholds x weeks
    assert not multifactor.equals(fcfs)
    assert weekly.filter(pl.col("primary") == "multifactor")["backfill"].unique().to_list() == [
        "CONSERVATIVE"
    ]
    runs = project / "results/online/KTH-slice/runs/none"
    totals = {arm: pl.concat([pl.read_parquet(path)
                              for path in sorted((runs / f"fixed-{arm}").glob("*.parquet"))])
                   .group_by("replica", maintain_order=True).agg(pl.col("cumulative_wait_s").last())
                   ["cumulative_wait_s"].to_list()
              for arm in ("FCFS", "multifactor")}  # fmt: skip
    assert len(totals["multifactor"]) == 2 and totals["multifactor"] != totals["FCFS"]
    folder = project / "results/online/KTH-slice/choices"
    chosen = {policy for path in folder.glob("[0-9]*/full/*.parquet")
              for policy in pl.read_parquet(path)["policy"].to_list()}  # fmt: skip
    assert chosen == {"FCFS", "multifactor"}
    path = project / conf
    path.write_text(path.read_text().replace("PriorityWeightFairshare=10000",
                                             "PriorityWeightFairshare=0"))  # fmt: skip
    left = planned_jobs(project)
    # the conservative pairs on train and test, and on the whole-log weeks of the figures
    assert left["simulate_batch"] == 2 * 3 * 2 + 3 * 2, left
    # one batch of both replicas (online.replicas_per_job) per strategy and period
    assert left["online_run"] == 2 + 2 and left["period_costs"] == 2 * 2, left
    assert "resample_weeks" not in left and "long_trace" not in left, left


def test_online_study_tables_and_figures(study: Path) -> None:
    changes = read_csv(study / "results/online/tables/changes.csv")
    fixed = changes.filter(pl.col("strategy").str.starts_with("fixed:"))
    assert fixed.height == 3
    reference = fixed.filter(pl.col("strategy") == "fixed:FCFS")
    assert reference["relative_change"].to_list() == [0.0]
    selectors = set(changes.filter(pl.col("period") == "1d")["strategy"].to_list())
    # one trace: the bandit runs with the configured ε (online.epsilon), labelled so (#16)
    assert {"random", "full", "noisy", "ucb", "swucb", "bandit (configured ε)"} <= selectors
    best = changes.filter(pl.col("strategy") == "best fixed (hindsight)")
    assert best["relative_change"][0] == fixed["relative_change"].min()
    assert best["p_value"].is_nan().all()  # descriptive; the tests use the cross-fitted one
    crossfit = changes.filter(pl.col("strategy") == "best fixed (cross-fitted)")
    assert crossfit.height == 1 and crossfit["source"][0].count("fixed:") == 2
    additions = changes.filter(~pl.col("from_thesis"))["strategy"].to_list()
    assert set(additions) == {"ucb", "swucb", "best fixed (cross-fitted)"}
    strategies = (study / "results/online/tables/strategies.md").read_text()
    assert "| ucb (addition) | 1d |" in strategies and "| random | 1d |" in strategies
    epsilon = read_csv(study / "results/online/tables/epsilon.csv")
    assert set(epsilon["chosen"].to_list()) == {0.1} and set(epsilon["how"]) == {"configured"}
    batch = pl.read_parquet(study / "results/online/KTH-slice/choices/1d/noisy/batch0.parquet")
    assert batch["replica"].unique().sort().to_list() == [0, 1]  # both replicas in one batch
    choices = batch.filter(pl.col("replica") == 1)
    assert choices["period_index"].to_list() == list(range(choices.height))
    assert set(choices["policy"].to_list()) <= {"FCFS", "SPF", "LQF"}
    observed = choices.filter(pl.col("costs_s").is_not_null())  # noisy logs its cost vectors
    assert observed.height >= choices.height - 1
    assert all(len(costs) == 3 for costs in observed["costs_s"].to_list())
    figures = sorted((study / "results/online/figures/KTH-slice").glob("*.png"))
    assert [f.stem for f in figures] == [
        "choice_shares_1d", "choice_shares_1w", "fixed_improvement",
        "selector_improvement_1d", "selector_improvement_1w",
    ]  # fmt: skip
    assert all(f.stat().st_size > 10_000 for f in figures)


def test_online_periods_are_on_the_calendar(study: Path) -> None:
    """The tiny study's defaults: the long traces of KTH-slice (Europe/Stockholm) start on a
    Monday 00:00 and the daily curve counts local days from there (#16, point 12)."""
    path = study / "results/online/KTH-slice/traces/replica0.parquet"
    meta = pl.read_parquet_metadata(path)
    assert meta[WEEK_ALIGNMENT_KEY] == "calendar"
    assert json.loads(meta["schedlab.calendar"])["time_zone"] == "Europe/Stockholm"
    assert read_parquet_provenance(path)["config"]["alignment"] == "calendar"
    costs = study / "results/online/KTH-slice/costs/1w/replica0.parquet"
    assert read_parquet_provenance(costs)["config"]["period_alignment"] == "calendar"
    # EASY(FCFS, 40 h) run directly: its jobs' ends binned by day from time 0 (the Monday)
    trace = pl.read_parquet(path)
    fcfs = scheduler.simulate(trace, "FCFS", "FCFS", 40 * 3600.0,
                              machine_procs=int(meta["schedlab.machine_procs"])).jobs  # fmt: skip
    ends = (fcfs["start_s"] + fcfs["run_s"]).to_numpy()
    expected = np.cumsum(np.bincount((ends // 86400).astype(np.int64)))
    runs = study / "results/online/KTH-slice/runs"
    curve = pl.read_parquet(runs / "none/fixed-FCFS/batch0.parquet").filter(pl.col("replica") == 0)
    assert curve["finished_jobs"].to_list() == expected.tolist()
    assert curve["day"].to_list() == list(range(expected.size))


def test_alignment_options_rerun_what_they_change(study: Path, tmp_path: Path) -> None:
    """online.period_alignment reruns the period costs and the live runs, not the long traces;
    online.week_alignment the long traces too; the tuning study is left alone."""
    project = copy_with(study, tmp_path, "online", period_alignment="first_submit")
    jobs = planned_jobs(project)
    assert "long_trace" not in jobs and jobs["period_costs"] == 2 * 2
    assert jobs["online_run"] == 3 + 2 * 7  # the fixed policies' daily curves too
    assert not {"filter_trace", "resample_weeks", "simulate_batch"} & set(jobs)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["online"]["week_alignment"] = "first_submit"
    write_config(project, config)
    jobs = planned_jobs(project)
    assert jobs["long_trace"] == 2 and jobs["period_costs"] == 2 * 2
    assert not {"filter_trace", "resample_weeks", "simulate_batch"} & set(jobs)
    config["tuning"]["week_alignment"] = "calendar"
    write_config(project, config)
    jobs = planned_jobs(project)
    # train and test: 2 batches each; the whole-log weeks of the figures: 2 batches
    assert jobs["resample_weeks"] == 2 * 2 + 2 and "split_trace" not in jobs
    assert jobs["tuning_bootstrap"] == 2  # its source weeks are cut as the study's


def test_report_contains_every_figure_and_table(study: Path, tmp_path: Path) -> None:
    project = copy_with(study, tmp_path)  # the shared study is only read
    snakemake(project, "--report", "report.html")
    html = (project / "report.html").read_text(errors="replace")
    assert len(html) > 100_000
    names = ("weekly_avg_wait", "pairs_worst_max_wait", "train_test_pairs", "protocol.csv",
             "selector_improvement_1d", "choice_shares_1w", "changes.csv", "best_worst.csv",
             "bsld_heatmap", "whole_log.csv", "KTH-slice_whole_summary.csv", "published.csv",
             "comparison.csv")  # fmt: skip
    for name in names:
        assert name in html
    # every study of the tiny config has its representative week's Gantt chart in the report
    studies = yaml.safe_load((project / "tiny.yaml").read_text())["studies"]
    weeks = set(re.findall(r'"results/(\w+)/figures/week\.png"', html))
    assert weeks == set(studies) and len(studies) == 8
    # the report opens in a real browser: the what-if study's category and its page per
    # alternative are in the rendered menu, and the screenshot is a drawn page, not a blank one
    from support.browser import rendered_dom, screenshot
    from support.png import png_chunks

    dom = rendered_dom(project / "report.html")
    assert "What-if for an administrator" in dom and "Learning by reinforcement" in dom
    for page in ("Summary", "bf_window=1h", "policy=EASY-FCFS-FCFS"):
        assert f'"{page}"' in dom or f">{page}<" in dom
    png = tmp_path / "report.png"
    screenshot(project / "report.html", png)
    chunks = png_chunks(png.read_bytes())
    width, height = struct.unpack(">II", chunks[0][1][:8])
    pixels = zlib.decompress(b"".join(data for kind, data in chunks if kind == b"IDAT"))
    assert (width, height) == (1400, 1000) and len(set(pixels)) > 20  # not one flat colour


@pytest.mark.parametrize(
    ("module", "expected", "untouched"),
    [
        # resampling uses core.constants.WEEK_S (the hand-written lists missed it)
        ("core/constants.py", {"filter_trace", "resample_weeks", "simulate_batch", "long_trace"},
         {"download_trace"}),
        # a figure module reruns figures only
        ("studies/tuning/figures.py", {"trace_figure", "study_figure"},
         {"simulate_batch", "collect_weekly", "summarize_trace", "online_figure", "online_run"}),
        # the kernel reruns every simulation, and what follows them, but no trace preparation
        ("sim/_kernel.py", {"simulate_batch", "period_costs", "online_run"},
         {"download_trace", "filter_trace", "split_trace", "resample_weeks", "long_trace"}),
        # the download module reruns the download (and so everything after it)
        ("traces/download.py", {"download_trace"}, set()),
    ],
)  # fmt: skip
def test_editing_a_module_reruns_the_steps_that_use_it(
    study: Path, tmp_path: Path, module: str, expected: set[str], untouched: set[str]
) -> None:
    """(The unedited package plans nothing: :func:`test_rerun_does_nothing`.)"""
    jobs = planned_jobs(study, pythonpath=edited_package(tmp_path, module))
    assert expected <= set(jobs), jobs
    assert not untouched & set(jobs), jobs
