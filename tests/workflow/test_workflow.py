"""End-to-end tests of the Snakemake workflow: real Snakemake runs on a tiny study.

The study is a six-week slice of the real KTH-SP2 log served from a local mirror directory,
two resampled weeks per job, 2 x 2 policies and two thresholds. The workflow files are copied
into a temporary directory so the tests never touch the repository's results.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from support.configs import check, names_a_key, overlay, sections
from support.png import png_text

import scheduler
from scheduler.core.provenance import read_csv, read_parquet_provenance
from scheduler.studies.online.steps import WEEK_ALIGNMENT_KEY

ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
SLICE_WEEKS = 6

pytestmark = pytest.mark.workflow


def tiny_config(mirror: Path, **tuning: object) -> dict:
    """The tiny study's config: config/tiny.yaml with its mirror replaced by ``mirror`` (which
    holds the slice written by :func:`write_slice`) and the ``tuning`` keys updated (the result is
    overlaid on config/config.yaml by Snakemake)."""
    config = yaml.safe_load((ROOT / "config" / "tiny.yaml").read_text())
    config["archive"]["mirror_dirs"] = [str(mirror)]
    config["tuning"].update(tuning)
    return config


def write_slice(source: Path, target: Path, weeks: int = SLICE_WEEKS) -> None:
    """The header and the jobs of the first ``weeks`` weeks of an SWF log, gzipped."""
    lines, first = [], None
    with gzip.open(source, "rt") as handle:
        for line in handle:
            if line.startswith(";") or not line.strip():
                lines.append(line)
                continue
            submit = int(line.split()[1])
            first = submit if first is None else first
            if submit - first >= weeks * 7 * 86400:
                break
            lines.append(line)
    target.write_bytes(gzip.compress("".join(lines).encode(), mtime=0))


def make_project(tmp: Path, kth_path: Path) -> Path:
    """A copy of the workflow (Snakefile, rules, config, profile) and a mirror with the slice."""
    project = tmp / "project"
    project.mkdir()
    shutil.copy(ROOT / "Snakefile", project)
    for directory in ("workflow", "config", "profiles"):
        shutil.copytree(ROOT / directory, project / directory)
    mirror = tmp / "mirror"
    mirror.mkdir()
    write_slice(kth_path, mirror / "KTH-slice.swf.gz")
    # the memory study's bundled LANL-CM5 slice (header and first 1,500 jobs)
    shutil.copy(ROOT / "resources" / "LANL-CM5-tiny.swf.gz", mirror)
    write_config(project, tiny_config(mirror))
    return project


def study_project(tmp: Path, kth_path: Path, study: str, **section: object) -> Path:
    """A tiny project running ``study`` alone, its config section updated with ``section``."""
    project = make_project(tmp, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["studies"] = [study]
    config[study].update(section)
    write_config(project, config)
    return project


def write_config(project: Path, config: dict) -> None:
    (project / "tiny.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def snakemake(
    project: Path, *args: str, check: bool = True, pythonpath: Path | None = None
) -> subprocess.CompletedProcess:
    """Run Snakemake for real in ``project`` with the tiny config; return the finished process.
    ``pythonpath``: where to import ``scheduler`` from (a modified copy of the package)."""
    command = [*SNAKEMAKE, "--cores", "2", "--configfile", "tiny.yaml", *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    done = subprocess.run(
        command, cwd=project, capture_output=True, text=True, timeout=600, env=env
    )
    if check and done.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def result_files(project: Path) -> dict[str, bytes]:
    """Every file under ``project``'s results/ (relative path -> bytes)."""
    return {
        str(path.relative_to(project)): path.read_bytes()
        for path in sorted((project / "results").rglob("*"))
        if path.is_file()
    }


def planned_jobs(project: Path, pythonpath: Path | None = None) -> dict[str, int]:
    """Rule -> number of jobs Snakemake would run now (from a dry run's job stats)."""
    done = snakemake(project, "--dry-run", "--quiet", "rules", pythonpath=pythonpath)
    text = done.stdout + done.stderr
    if "Nothing to be done" in text:
        return {}
    return job_stats(text)


def job_stats(output: str) -> dict[str, int]:
    """Rule -> number of jobs, from the "Job stats" table Snakemake prints before it runs."""
    table = output[output.index("Job stats:") :].split("\ntotal", 1)[0]
    counts = {}
    for match in re.finditer(r"^(\w+)\s+(\d+)$", table, flags=re.MULTILINE):
        counts[match.group(1)] = int(match.group(2))
    assert counts, output
    return counts


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory, kth_path: Path) -> Path:
    """The tiny study, run once for the module."""
    project = make_project(tmp_path_factory.mktemp("workflow"), kth_path)
    snakemake(project)
    return project


def test_lint_is_clean(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    done = snakemake(project, "--lint")
    assert "Congratulations" in done.stdout + done.stderr


def test_dry_run_plans_the_whole_study(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    jobs = planned_jobs(project)
    # one job per pair and batch runs all its thresholds: 2 splits x 2 x 2 pairs x 2 batches of
    # 2 weeks, and the whole-log weeks of the descriptive figures (the 4 pairs at Θ = none, the
    # 2 with SPF backfilling at 20 h too) x 2 batches
    assert jobs["simulate_batch"] == 2 * 4 * 2 + 4 * 2
    assert jobs["resample_weeks"] == 2 * 2 + 2
    assert jobs["collect_whole_weekly"] == jobs["summarize_whole"] == 1
    # the whole-log table: four pairs (the baseline among them) on the whole filtered log
    assert jobs["simulate_whole_log"] == 4 and jobs["whole_log_table"] == 1
    assert jobs["filter_trace"] == jobs["split_trace"] == 1
    assert jobs["download_trace"] == 2  # KTH-slice and the memory study's LANL-CM5-tiny
    assert jobs["trace_figure"] == 6
    assert jobs["study_figure"] == 2
    # online: 2 replicas x (3 fixed + 2 periods x (random, full, noisy, ucb, swucb, 2 bandits))
    assert jobs["online_run"] == 2 * (3 + 2 * 7)
    assert jobs["period_costs"] == 2 * 2 and jobs["long_trace"] == 2
    assert jobs["online_tables"] == 1 and jobs["online_figure"] == 5
    # prediction: 4 techniques (requested, ave2, clairvoyant, nag-eloss) on the clipped log
    assert jobs["filter_trace_overrun"] == 1 and jobs["simulate_technique"] == 4
    assert jobs["prediction_tables"] == 1 and jobs["prediction_trace_figure"] == 3
    assert "prediction_study_figure" not in jobs  # one log: no correlation between logs
    # learned: the model, 2 batches of 2 tuples (tuples, scores), the fit, the convergence
    # curve, 2 function figures, 2 evaluated workloads, the evaluation tables
    assert jobs["learned_model"] == 1 and jobs["learned_tuples"] == jobs["learned_scores"] == 2
    assert jobs["learned_fit"] == jobs["learned_convergence"] == 1
    assert jobs["learned_function_figure"] == jobs["learned_evaluate"] == 2
    # redirection: the weeks, the baseline and 2 shares, the tables, 3 figures
    assert jobs["redirect_weeks"] == 1 and jobs["redirect_simulate"] == 3
    assert jobs["redirect_tables"] == 1 and jobs["redirect_figure"] == 3
    # memory: the filter, 2 schedulers x (2 loads + 2 second-class sizes), tables, 5 figures
    assert jobs["memory_filter"] == 1 and jobs["memory_simulate"] == jobs["memory_sweep"] == 4
    assert jobs["memory_tables"] == 1 and jobs["memory_figure"] == 5
    assert not (project / "results").exists()


@pytest.mark.parametrize(
    ("selectors", "figures"),
    [(["full", "bandit"], 5), (["bandit"], 5), (["random", "ucb"], 3)],
)
def test_choice_share_figures_are_planned_only_for_selectors_they_show(
    tmp_path: Path, kth_path: Path, selectors: list[str], figures: int
) -> None:
    """Choice shares show the noisy (else full) selector and the bandit: without any of them
    the figure is not planned (it would fail after the whole study had run)."""
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["online"]["selectors"] = selectors
    write_config(project, config)
    assert planned_jobs(project)["online_figure"] == figures


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


def test_figures_from_the_training_weeks(tmp_path: Path, kth_path: Path) -> None:
    """tuning.figures.weeks_from: train plans no whole-log weeks and draws the descriptive
    figures from the training weeks."""
    project = study_project(tmp_path, kth_path, "tuning", figures={"weeks_from": "train"})
    jobs = planned_jobs(project)
    assert jobs["simulate_batch"] == 2 * 4 * 2 and jobs["resample_weeks"] == 2 * 2
    assert "collect_whole_weekly" not in jobs and "summarize_whole" not in jobs
    snakemake(project, "--until", "trace_figure")
    png = project / "results/tuning/figures/KTH-slice/pairs_worst_max_wait.png"
    assert json.loads(json.loads(png_text(png)["Description"])["config"])["split"] == "train"
    assert not (project / "results/KTH-slice/weeks/whole").exists()


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
    assert len(figures) == 6 + 2
    for png in figures:
        data = png.read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000, png
        assert b"schedlab" in data  # provenance in the PNG text chunks
        pdf = png.with_suffix(".pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and len(pdf) > 5_000


def test_logs_and_benchmarks_are_written(study: Path) -> None:
    log = (study / "logs/tuning/KTH-slice/sims/test/SPF/SPF/batch0.log").read_text()
    assert re.search(r"EASY-SPF-SPF Θ in \['(20h|none)', '(20h|none)'\]: 2 weeks", log)
    benchmark = study / "benchmarks/tuning/KTH-slice/sims/test/SPF/SPF/batch0.tsv"
    assert benchmark.read_text().startswith("s\th:m:s")
    fetched = json.loads((study / "resources/traces/KTH-slice.fetch.json").read_text())
    assert fetched["origin"] == "mirror" and fetched["source_path"].endswith("KTH-slice.swf.gz")
    assert fetched["provenance"]["step"] == "traces.steps.download_trace"


def test_rerun_does_nothing(study: Path) -> None:
    assert planned_jobs(study) == {}


def copy_with(study: Path, tmp_path: Path, section: str = "tuning", **keys: object) -> Path:
    """A copy of the finished study whose config has the given keys of ``section`` changed."""
    project = tmp_path / "copy"
    shutil.copytree(study, project, symlinks=True)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config[section].update(keys)
    write_config(project, config)
    return project


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
    project = copy_with(study, tmp_path, primary_policies=["FCFS", "SPF", "LQF"])
    jobs = planned_jobs(project)
    # splits x LQF x backfills x batches (all thresholds in each), and on the whole-log weeks
    # LQF with both backfills x batches
    assert jobs["simulate_batch"] == 2 * 1 * 2 * 2 + 2 * 2
    snakemake(project)
    assert planned_jobs(project) == {}
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
    # 2 replicas x 2 periods (full, noisy); 2 replicas x (3 fixed + 2 periods x 7 selectors)
    assert jobs["period_costs"] == 2 * 2 and jobs["online_run"] == 2 * (3 + 2 * 7)
    assert "long_trace" not in jobs and "simulate_batch" not in jobs
    assert {"online_tables", "online_figure"} <= set(jobs)


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
    choices = pl.read_parquet(study / "results/online/KTH-slice/choices/1d/noisy/replica1.parquet")
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
    curve = pl.read_parquet(runs / "none/fixed-FCFS/replica0.parquet")
    assert curve["finished_jobs"].to_list() == expected.tolist()
    assert curve["day"].to_list() == list(range(expected.size))


def test_alignment_options_rerun_what_they_change(study: Path, tmp_path: Path) -> None:
    """online.period_alignment reruns the period costs and the live runs, not the long traces;
    online.week_alignment the long traces too; the tuning study is left alone."""
    project = copy_with(study, tmp_path, "online", period_alignment="first_submit")
    jobs = planned_jobs(project)
    assert "long_trace" not in jobs and jobs["period_costs"] == 2 * 2
    assert jobs["online_run"] == 2 * (3 + 2 * 7)  # the fixed policies' daily curves too
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


def test_bad_time_zone_stops_the_long_trace_naming_the_log_and_the_key(
    tmp_path: Path, kth_path: Path
) -> None:
    project = make_project(tmp_path, kth_path)
    mirror = tmp_path / "mirror" / "KTH-slice.swf.gz"
    text = gzip.decompress(mirror.read_bytes()).decode()
    assert "; TimeZoneString: Europe/Stockholm" in text
    text = text.replace("; TimeZoneString: Europe/Stockholm", "; TimeZoneString: Europe/Stokholm")
    mirror.write_bytes(gzip.compress(text.encode(), mtime=0))
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["traces"]["KTH-slice"]["sha256"] = None
    config["studies"] = ["online"]
    write_config(project, config)
    done = snakemake(project, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "KTH-slice.swf.gz: field TimeZoneString: 'Europe/Stokholm' is not an IANA" in output
    assert "logs/online/KTH-slice/traces/replica" in output
    assert (project / "results/KTH-slice/filtered.parquet").exists()  # the filter does not care
    assert not list((project / "results/online").rglob("replica*.parquet"))


def test_report_contains_every_figure_and_table(study: Path) -> None:
    snakemake(study, "--report", "report.html")
    html = (study / "report.html").read_text(errors="replace")
    assert len(html) > 100_000
    names = ("weekly_avg_wait", "pairs_worst_max_wait", "train_test_pairs", "protocol.csv",
             "selector_improvement_1d", "choice_shares_1w", "changes.csv", "best_worst.csv",
             "bsld_heatmap", "whole_log.csv", "KTH-slice_whole_summary.csv")  # fmt: skip
    for name in names:
        assert name in html


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"thresholds": ["none", "20"]}, "needs a unit"),
        ({"primary_policies": ["FCFS", "XYZ"]}, "unknown policy 'XYZ'"),
        ({"traces": ["NOPE"]}, "unknown trace 'NOPE'"),
        ({"weeks_per_job": 0}, "weeks_per_job"),
    ],
)
def test_bad_config_is_refused_before_anything_runs(
    tmp_path: Path, kth_path: Path, change: dict, message: str
) -> None:
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["tuning"].update(change)
    write_config(project, config)
    done = snakemake(project, check=False)
    assert done.returncode != 0
    assert message in done.stdout + done.stderr
    assert not (project / "results").exists()


def test_unknown_config_key_is_refused(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["tunning"] = {}
    write_config(project, config)
    done = snakemake(project, check=False)
    assert done.returncode != 0 and "tunning" in done.stdout + done.stderr


def test_malformed_trace_line_names_file_line_field_and_log(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    mirror = tmp_path / "mirror" / "KTH-slice.swf.gz"
    lines = gzip.decompress(mirror.read_bytes()).decode().splitlines(keepends=True)
    bad = next(i for i, line in enumerate(lines) if not line.startswith(";")) + 5
    fields = lines[bad].split()
    fields[3] = "12x"  # run time
    lines[bad] = " ".join(fields) + "\n"
    mirror.write_bytes(gzip.compress("".join(lines).encode(), mtime=0))
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["traces"]["KTH-slice"]["sha256"] = None  # the damaged copy must reach the filter
    # the tuning study alone, so that the common filter is the step that reads the log first
    # (the other studies' readers stop the same way: their own filter, the learned evaluation)
    config["studies"] = ["tuning"]
    write_config(project, config)
    done = snakemake(project, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"KTH-slice.swf.gz:{bad + 1}" in output and "run_s" in output
    assert "logs/filter/KTH-slice.log" in output
    assert not (project / "results/KTH-slice/filtered.parquet").exists()


def test_checksum_mismatch_keeps_nothing(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["traces"]["KTH-slice"]["sha256"] = "0" * 64
    write_config(project, config)
    done = snakemake(project, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "0" * 64 in output
    assert not (project / "resources/traces/KTH-slice.swf.gz").exists()


# -- the layout: the bundled tiny config, code hashes, study subsets, labels from the config ------


def test_bundled_slice_is_the_tests_slice(tmp_path: Path, kth_path: Path) -> None:
    """config/tiny.yaml runs on resources/KTH-slice.swf.gz: the very bytes the tests write."""
    write_slice(kth_path, tmp_path / "KTH-slice.swf.gz")
    bundled = ROOT / "resources" / "KTH-slice.swf.gz"
    assert bundled.read_bytes() == (tmp_path / "KTH-slice.swf.gz").read_bytes()
    config = yaml.safe_load((ROOT / "config" / "tiny.yaml").read_text())
    assert (
        config["traces"]["KTH-slice"]["sha256"] == hashlib.sha256(bundled.read_bytes()).hexdigest()
    )


def edited_package(tmp_path: Path, module: str) -> Path:
    """A copy of the scheduler package with one line appended to ``module`` (a path inside it);
    put the returned folder on PYTHONPATH to make Snakemake use it."""
    root = tmp_path / "edited"
    package = Path(scheduler.__file__).resolve().parent
    shutil.copytree(package, root / "scheduler", ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "scheduler" / module
    path.write_text(path.read_text() + "\n# an edit that changes nothing but the file\n")
    return root


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
    assert planned_jobs(study) == {}
    jobs = planned_jobs(study, pythonpath=edited_package(tmp_path, module))
    assert expected <= set(jobs), jobs
    assert not untouched & set(jobs), jobs


def test_one_study_alone(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    online_rules = {"long_trace", "period_costs", "online_run", "online_tables", "online_figure"}
    tuning_rules = {"split_trace", "resample_weeks", "simulate_batch", "collect_weekly"}

    # the online study alone: the tuning section is not checked (an empty trace list passes)
    write_config(project, {**config, "studies": ["online"], "tuning": {"traces": []}})
    jobs = set(planned_jobs(project))
    assert online_rules <= jobs and not tuning_rules & jobs and "filter_trace" in jobs

    # the tuning study alone
    write_config(project, {**config, "studies": ["tuning"]})
    jobs = set(planned_jobs(project))
    assert tuning_rules <= jobs and not online_rules & jobs

    # the prediction study alone (on the clipped filter only)
    write_config(project, {**config, "studies": ["prediction"], "tuning": {"traces": []}})
    jobs = set(planned_jobs(project))
    assert {"simulate_technique", "filter_trace_overrun"} <= jobs
    assert not (tuning_rules | online_rules | {"filter_trace"}) & jobs

    # a listed study is checked: its empty trace list is refused before anything runs
    write_config(project, {**config, "studies": ["tuning"], "tuning": {"traces": []}})
    done = snakemake(project, "--dry-run", check=False)
    assert done.returncode != 0 and "tuning.traces" in done.stdout + done.stderr


@pytest.fixture(scope="module")
def spf_study(tmp_path_factory: pytest.TempPathFactory, kth_path: Path) -> Path:
    """A tiny study whose tuning baseline is EASY-SPF-FCFS and online reference EASY(SPF, 40 h)."""
    project = make_project(tmp_path_factory.mktemp("spf"), kth_path)
    config = tiny_config(
        project.parent / "mirror",
        baseline={"primary": "SPF", "backfill": "FCFS", "threshold": "none"},
        weeks_per_split=2,
    )
    config["online"].update(reference="SPF", periods=["1d"], selectors=["full", "bandit"])
    config["online"]["epsilons"] = [0.1]
    write_config(project, config)
    snakemake(project)
    return project


def test_the_configured_baseline_names_tables_and_figures(spf_study: Path) -> None:
    summary = read_csv(spf_study / "results/tuning/tables/KTH-slice_summary.csv")
    base = summary.filter(
        (pl.col("primary") == "SPF")
        & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )
    assert base.height == 2 and base["mean_relative_avg_wait"].to_list() == [1.0, 1.0]
    fcfs = summary.filter(
        (pl.col("primary") == "FCFS")
        & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )
    assert fcfs["mean_relative_avg_wait"].to_list() != [1.0, 1.0]
    for table in ("KTH-slice_summary.md", "protocol.md", "whole_log.md"):
        text = (spf_study / "results/tuning/tables" / table).read_text()
        assert "EASY-SPF-FCFS" in text and "EASY-FCFS-FCFS" not in text.split("<!--")[0]
    weekly = pl.read_parquet(spf_study / "results/tuning/KTH-slice/weekly.parquet")
    rows = weekly.filter((pl.col("primary") == "SPF") & (pl.col("backfill") == "FCFS"))
    assert rows.filter(pl.col("threshold") == "none")["relative_avg_wait"].unique().to_list() == [
        1.0
    ]
    # the figures' text is drawn, not stored: their provenance metadata names the baseline
    for figure in ("train_test_pairs.png", "KTH-slice/pairs_worst_max_wait.png"):
        record = json.loads(png_text(spf_study / "results/tuning/figures" / figure)["Description"])
        config = json.loads(record["config"])
        baseline = config["baseline"]
        assert baseline["primary"] == "SPF" and baseline["backfill"] == "FCFS", record


def test_the_configured_reference_names_online_tables_and_figures(spf_study: Path) -> None:
    changes = read_csv(spf_study / "results/online/tables/changes.csv")
    reference = changes.filter(pl.col("strategy") == "fixed:SPF")
    assert reference.height == 1 and reference["relative_change"].to_list() == [0.0]
    fcfs = changes.filter(pl.col("strategy") == "fixed:FCFS")
    assert fcfs["relative_change"].to_list() != [0.0]
    for table in ("strategies.md", "fixed_policies.md"):
        text = (spf_study / "results/online/tables" / table).read_text().split("<!--")[0]
        assert "EASY(SPF, 40 h)" in text and "EASY(FCFS" not in text
    record = json.loads(
        png_text(spf_study / "results/online/figures/KTH-slice/fixed_improvement.png")[
            "Description"
        ]
    )
    assert "SPF" in record["config"], record


# -- #11: the ε vote among the configured values; a study without a bandit ------------------------


def online_only(tmp_path: Path, kth_path: Path, **online: object) -> Path:
    """A tiny online-only project (one period, two policies) with ``online`` keys updated."""
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["studies"] = ["online"]
    config["online"].update({"policies": ["FCFS", "SPF"], "periods": ["1d"], **online})
    write_config(project, config)
    return project


def test_epsilon_is_chosen_among_the_configured_values(tmp_path: Path, kth_path: Path) -> None:
    """With epsilons [0.2, 0.4] (none of them in the old built-in list) the tables are made;
    one trace cannot vote, so the ε table reports the configured online.epsilon (#16)."""
    project = online_only(
        tmp_path, kth_path, selectors=["random", "bandit"], epsilons=[0.2, 0.4], epsilon=0.4
    )
    jobs = planned_jobs(project)
    assert jobs["online_run"] == 2 * (2 + 3) and jobs["online_tables"] == 1
    snakemake(project)
    epsilon = read_csv(project / "results/online/tables/epsilon.csv")
    assert epsilon.height == 1 and epsilon["chosen"][0] == 0.4
    assert epsilon["chosen_strategy"][0] == "bandit(eps=0.4)" and epsilon["how"][0] == "configured"
    changes = read_csv(project / "results/online/tables/changes.csv")
    assert "bandit (configured ε)" in changes["strategy"].to_list()
    assert "configured ε" in (project / "results/online/tables/epsilon.md").read_text()


def test_a_study_without_a_bandit_has_no_epsilon_table(tmp_path: Path, kth_path: Path) -> None:
    project = online_only(tmp_path, kth_path, selectors=["random", "ucb"])
    snakemake(project)
    tables = project / "results/online/tables"
    assert (tables / "changes.csv").exists() and not list(tables.glob("epsilon*"))
    changes = read_csv(tables / "changes.csv")
    assert not changes["strategy"].str.starts_with("bandit").any()
    figures = sorted(f.stem for f in (project / "results/online/figures/KTH-slice").glob("*.png"))
    assert figures == ["fixed_improvement", "selector_improvement_1d"]


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(change=sections())
def test_drawn_configs_are_refused_by_name_or_dry_run(
    tmp_path_factory: pytest.TempPathFactory, kth_path: Path, change: dict
) -> None:
    """#11: a config drawn from the schema is refused before anything runs, naming the key, or
    Snakemake's dry run plans the tiny study with it."""
    project = PROPERTY_PROJECTS.get("project")
    if project is None:
        project = PROPERTY_PROJECTS["project"] = make_project(
            tmp_path_factory.mktemp("drawn"), kth_path
        )
        # every example starts from the project's own config, not from the previous example's
        shutil.copy(project / "tiny.yaml", project / "tiny-base.yaml")
    config = yaml.safe_load((project / "tiny-base.yaml").read_text())
    mirror = config["archive"]["mirror_dirs"]
    accepted = check(change)  # in-process: schema, plans, what the steps refuse
    config = overlay(config, change)
    config["archive"]["mirror_dirs"] = mirror
    write_config(project, config)
    done = snakemake(project, "--dry-run", "--quiet", "rules", check=False)
    output = done.stdout + done.stderr
    if accepted:
        assert done.returncode == 0, output
    else:
        assert done.returncode != 0 and names_a_key(output, change), output
    assert not (project / "results").exists()


PROPERTY_PROJECTS: dict[str, Path] = {}


# -- bad input (issue #11) ------------------------------------------------------------------------


def damaged_project(tmp_path: Path, kth_path: Path, change) -> tuple[Path, list[str]]:
    """A tiny project whose mirror slice has its decompressed lines edited by ``change`` (a
    function of the list of lines, returning the new list); no checksum is required."""
    project = make_project(tmp_path, kth_path)
    mirror = tmp_path / "mirror" / "KTH-slice.swf.gz"
    lines = change(gzip.decompress(mirror.read_bytes()).decode().splitlines(keepends=True))
    mirror.write_bytes(gzip.compress("".join(lines).encode(), mtime=0))
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["traces"]["KTH-slice"]["sha256"] = None  # the damaged copy must reach the filter
    config["studies"] = ["tuning"]  # the common filter reads the log first (see above)
    write_config(project, config)
    return project, lines


def test_duplicate_job_number_stops_the_filter_step(tmp_path: Path, kth_path: Path) -> None:
    def duplicate(lines: list[str]) -> list[str]:
        first = next(i for i, line in enumerate(lines) if not line.startswith(";"))
        return [*lines[: first + 10], lines[first + 2], *lines[first + 10 :]]

    project, lines = damaged_project(tmp_path, kth_path, duplicate)
    first = next(i for i, line in enumerate(lines) if not line.startswith(";"))
    number = lines[first + 2].split()[0]
    done = snakemake(project, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"KTH-slice.swf.gz:{first + 11}: field job_id: job number {number}" in output
    assert f"lines {first + 3} and {first + 11}" in output
    assert "logs/filter/KTH-slice.log" in output
    assert not (project / "results/KTH-slice/filtered.parquet").exists()
    assert not (project / "results/KTH-slice/filter_report.json").exists()


def test_missing_machine_size_names_the_config_key(tmp_path: Path, kth_path: Path) -> None:
    project, _ = damaged_project(
        tmp_path, kth_path, lambda lines: [line for line in lines if not line.startswith("; Max")]
    )
    done = snakemake(project, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "set traces.KTH-slice.machine_procs in the config" in output
    assert "--machine-procs" not in output and "infer_machine_procs" not in output
    assert not (project / "results/KTH-slice/filtered.parquet").exists()


def test_download_size_limit_comes_from_the_config(tmp_path: Path, kth_path: Path) -> None:
    """archive.max_bytes reaches the download step: a body over it fails and leaves nothing
    (the trace is served by a local HTTP server on 127.0.0.1; no mirror)."""
    from traces.test_download import LocalServer, Reply

    project = make_project(tmp_path, kth_path)
    body = (tmp_path / "mirror" / "KTH-slice.swf.gz").read_bytes()
    server = LocalServer()
    server.thread.start()
    try:
        config = yaml.safe_load((project / "tiny.yaml").read_text())
        config["traces"]["KTH-slice"]["url"] = server.serve("/KTH-slice.swf.gz", Reply(body=body))
        config["archive"] = {"mirror_dirs": [], "offline": False, "max_bytes": 1000}
        # the memory study's log is not served here
        config["studies"] = [name for name in config["studies"] if name != "memory"]
        write_config(project, config)
        done = snakemake(project, "--until", "download_trace", check=False)
        output = done.stdout + done.stderr
        assert done.returncode != 0 and "limit of 1000 bytes" in output, output
        assert "archive.max_bytes" in output
        assert not (project / "resources/traces/KTH-slice.swf.gz").exists()
        config["archive"]["max_bytes"] = len(body)  # exactly the size: accepted
        write_config(project, config)
        snakemake(project, "--until", "download_trace")
        assert (project / "resources/traces/KTH-slice.swf.gz").read_bytes() == body
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
