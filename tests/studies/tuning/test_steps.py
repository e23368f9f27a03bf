"""The workflow steps (scheduler.traces.steps, scheduler.studies.tuning.steps) end to end on the
bundled KTH-SP2 log, in a temporary directory: filter → split → resample → simulate → collect →
summarize → protocol."""

from __future__ import annotations

import gzip
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from support.expected import KTH_FILTER_COUNTS, KTH_KEPT

from scheduler.core import steps as core_steps
from scheduler.core.code_hash import package_hash
from scheduler.core.constants import SWF_COLUMNS
from scheduler.core.errors import ConfigurationError, TraceFormatError
from scheduler.core.provenance import read_csv, read_parquet_provenance
from scheduler.sim.multifactor import MULTIFACTOR, MultifactorPriority
from scheduler.studies.common.config import CONSERVATIVE
from scheduler.studies.common.slurm import study_slurm
from scheduler.studies.tuning import steps as tuning_steps
from scheduler.studies.tuning.schema import WEEKLY_COLUMNS
from scheduler.studies.tuning.stats import PROTOCOL_COLUMNS, SUMMARY_COLUMNS
from scheduler.traces import steps as trace_steps
from scheduler.traces.resample import WEEK_COLUMNS

ROOT = Path(__file__).resolve().parents[3]

TRACE = "KTH-SP2"
SEED = 20261121
WEEKS = (0, 3)  # first and last resampled week of the batch
CONFIGS = [
    ("FCFS", "FCFS", "none", math.inf),
    ("SPF", "FCFS", "none", math.inf),
    ("FCFS", "FCFS", "20h", 72000.0),
    ("SPF", "FCFS", "20h", 72000.0),
]
PAIRS = [("FCFS", "FCFS"), ("SPF", "FCFS")]
BASELINE = {"primary": "FCFS", "backfill": "FCFS", "threshold": "none"}
STAMPED = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \S")


@pytest.fixture(scope="module")
def study(kth_path, tmp_path_factory) -> Path:
    """Run every step once; tests then inspect the files."""
    d = tmp_path_factory.mktemp("study")
    logs = d / "logs"
    trace_steps.filter_trace(
        str(kth_path), str(d / "filtered.parquet"), str(d / "filter.json"),
        trace=TRACE, log_path=str(logs / "filter.log"),
        machine_procs=None, overrun="drop",
    )  # fmt: skip
    trace_steps.split_trace(
        str(d / "filtered.parquet"), str(d / "train.parquet"), str(d / "test.parquet"),
        trace=TRACE, log_path=str(logs / "split.log"),
    )  # fmt: skip
    sims = []
    for split in ("train", "test"):
        trace_steps.resample_batch(
            str(d / f"{split}.parquet"), str(d / f"weeks-{split}.parquet"),
            trace=TRACE, split=split, first_week=WEEKS[0], last_week=WEEKS[1], seed=SEED,
            log_path=str(logs / f"resample-{split}.log"),
            method="uniform", alignment="first_submit",
        )  # fmt: skip
        # one file per pair holds both thresholds (pair-major: the weekly table is case-major)
        for primary, backfill in PAIRS:
            out = d / f"sim-{split}-{primary}-{backfill}.parquet"
            tuning_steps.simulate_batch(
                str(d / f"weeks-{split}.parquet"), str(out),
                trace=TRACE, split=split, primary=primary, backfill=backfill,
                thresholds=[(t, s) for p, b, t, s in CONFIGS if (p, b) == (primary, backfill)],
                log_path=str(logs / "simulate.log"),
                threshold_backfill=False, slurm=None,
            )  # fmt: skip
            sims.append(str(out))
    tuning_steps.collect_weekly(
        sims, str(d / "weekly.parquet"), trace=TRACE, baseline=BASELINE,
        log_path=str(logs / "collect.log"),
    )  # fmt: skip
    tuning_steps.summarize_trace(
        str(d / "weekly.parquet"), str(d / "summary.parquet"), str(d / "summary.csv"),
        str(d / "summary.md"), trace=TRACE, baseline=BASELINE,
        log_path=str(logs / "summarize.log"),
    )  # fmt: skip
    tuning_steps.tuning_protocol(
        [str(d / "weekly.parquet")], str(d / "protocol.parquet"), str(d / "protocol.csv"),
        str(d / "protocol.md"), baseline=BASELINE, confidence=0.95,
        log_path=str(logs / "protocol.log"),
        bootstrap_paths=[],
    )  # fmt: skip
    return d


def machine_procs(path: Path) -> str | None:
    return pl.read_parquet_metadata(path).get(core_steps.MACHINE_PROCS_KEY)


# --------------------------------------------------------------------------------------------
# Each step's outputs
# --------------------------------------------------------------------------------------------


def test_filter_trace(study):
    jobs = pl.read_parquet(study / "filtered.parquet")
    assert jobs.height == KTH_KEPT == 27_992
    assert jobs.columns == list(SWF_COLUMNS)
    assert jobs.equals(jobs.sort("submit_s", "job_id"))
    assert machine_procs(study / "filtered.parquet") == "100"
    record = read_parquet_provenance(study / "filtered.parquet")
    assert record["step"] == "traces.steps.filter_trace"
    assert record["config"]["trace"] == TRACE
    assert record["config"]["overrun"] == "drop"
    assert record["code_hash"] == package_hash()

    report = json.loads((study / "filter.json").read_text())
    for key, value in KTH_FILTER_COUNTS.items():
        assert report[key] == value, key
    assert report["provenance"] == record


def test_split_trace(study):
    filtered = pl.read_parquet(study / "filtered.parquet")
    train = pl.read_parquet(study / "train.parquet")
    test = pl.read_parquet(study / "test.parquet")
    assert train.height + test.height == filtered.height
    assert train.height > 0 and test.height > 0
    midpoint = (filtered["submit_s"].min() + filtered["submit_s"].max()) / 2
    assert train["submit_s"].max() < midpoint <= test["submit_s"].min()
    assert pl.concat([train, test]).equals(filtered)  # filtered is sorted by submit time
    for split, frame in (("train", train), ("test", test)):
        path = study / f"{split}.parquet"
        assert machine_procs(path) == "100"
        record = read_parquet_provenance(path)
        assert record["step"] == "traces.steps.split_trace" and record["split"] == split
        assert frame.schema == filtered.schema


def test_resample_batch(study):
    for split in ("train", "test"):
        path = study / f"weeks-{split}.parquet"
        weeks = pl.read_parquet(path)
        assert tuple(weeks.columns) == WEEK_COLUMNS
        assert weeks["week_index"].unique().sort().to_list() == [0, 1, 2, 3]
        assert machine_procs(path) == "100"
        record = read_parquet_provenance(path)
        assert record["config"] == {
            "trace": TRACE, "split": split, "first_week": 0, "last_week": 3,
            "seed": SEED, "method": "uniform", "alignment": "first_submit",
        }  # fmt: skip
        # every source job of the week comes from this split's part
        part = pl.read_parquet(study / f"{split}.parquet")
        assert weeks["source_job_id"].is_in(part["job_id"].implode()).all()
    train = pl.read_parquet(study / "weeks-train.parquet")
    test = pl.read_parquet(study / "weeks-test.parquet")
    assert not train["source_job_id"].is_in(test["source_job_id"].implode()).any()


def test_simulate_batch(study):
    for split in ("train", "test"):
        heights = (
            pl.read_parquet(study / f"weeks-{split}.parquet")
            .group_by("week_index")
            .len()
            .sort("week_index")
        )
        for primary, backfill, threshold, threshold_s in CONFIGS:
            path = study / f"sim-{split}-{primary}-{backfill}.parquet"
            both = pl.read_parquet(path)
            assert dict(both.schema) == WEEKLY_COLUMNS
            assert both["threshold"].to_list() == ["none"] * 4 + ["20h"] * 4
            table = both.filter(pl.col("threshold") == threshold)
            assert table["week_index"].to_list() == [0, 1, 2, 3]
            assert table["jobs"].to_list() == heights["len"].to_list()
            assert (table["split"] == split).all() and (table["trace"] == TRACE).all()
            assert (table["primary"] == primary).all()
            assert (table["threshold"] == threshold).all()
            assert (table["threshold_s"] == threshold_s).all()
            assert (table["avg_wait_s"] >= 0).all()
            assert ((table["utilisation"] > 0) & (table["utilisation"] <= 1)).all()
            record = read_parquet_provenance(path)
            assert record["step"] == "studies.tuning.steps.simulate_batch"
            assert record["config"]["primary"] == primary and record["config"]["split"] == split
    lines = (study / "logs" / "simulate.log").read_text().splitlines()
    started = [line for line in lines if line.endswith(" studies.tuning.steps.simulate_batch: "
                                                       "started")]  # fmt: skip
    timed = [line for line in lines if " timing: wall_s=" in line]
    # each run: its name, its line, its timing
    assert len(started) == len(timed) == len(lines) - len(started) - len(timed) == 2 * len(PAIRS)
    assert all(STAMPED.match(line) for line in lines)


def test_collect_weekly(study):
    weekly = pl.read_parquet(study / "weekly.parquet")
    assert weekly.height == 2 * len(CONFIGS) * 4
    # sorted by case and week, whatever the files' (pair-major) order
    keys = ["split", "primary", "backfill", "threshold_s", "week_index"]
    assert weekly.select(keys).equals(weekly.select(keys).sort(keys))
    relative = ["relative_avg_wait", "relative_max_wait", "relative_avg_bsld", "relative_max_bsld"]
    assert weekly.columns == [*WEEKLY_COLUMNS, *relative]
    is_base = (
        (pl.col("primary") == "FCFS") & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )  # fmt: skip
    base = weekly.filter(is_base)
    assert base.height == 8
    for column in relative:
        assert (base[column] == 1.0).all(), column
    # other rows: value / baseline value of the same (split, week), computed here
    joined = weekly.join(
        base.select("split", "week_index", pl.col("avg_wait_s").alias("b_wait"),
                    pl.col("max_bsld").alias("b_max_bsld")),
        on=["split", "week_index"],
    )  # fmt: skip
    spf = joined.filter(pl.col("primary") == "SPF")
    assert spf.height == 16
    assert (spf["relative_avg_wait"] - spf["avg_wait_s"] / spf["b_wait"]).abs().max() < 1e-12
    assert (spf["relative_max_bsld"] - spf["max_bsld"] / spf["b_max_bsld"]).abs().max() < 1e-12
    assert not (spf["relative_avg_wait"] == 1.0).all()
    assert read_parquet_provenance(study / "weekly.parquet")["config"]["baseline"] == BASELINE


def test_summarize_trace(study):
    summary = pl.read_parquet(study / "summary.parquet")
    assert summary.columns == list(SUMMARY_COLUMNS)
    assert summary.height == 2 * len(CONFIGS)
    assert (summary["weeks"] == 4).all()
    base = summary.filter(
        (pl.col("primary") == "FCFS") & (pl.col("backfill") == "FCFS")
        & (pl.col("threshold") == "none")
    )  # fmt: skip
    assert base.height == 2 and (base["mean_relative_avg_wait"] == 1.0).all()
    weekly = pl.read_parquet(study / "weekly.parquet")
    expected = weekly.filter(
        (pl.col("split") == "test") & (pl.col("primary") == "SPF") & (pl.col("threshold") == "20h")
    )["avg_wait_s"].mean()
    got = summary.filter(
        (pl.col("split") == "test") & (pl.col("primary") == "SPF") & (pl.col("threshold") == "20h")
    )["mean_avg_wait_s"].item()
    assert got == pytest.approx(expected, rel=1e-12)

    lines = (study / "summary.csv").read_text().splitlines()
    assert lines[0].startswith("# provenance: ")
    assert json.loads(lines[0].removeprefix("# provenance: ")) == read_parquet_provenance(
        study / "summary.parquet"
    )
    assert read_csv(study / "summary.csv").equals(summary)
    markdown = (study / "summary.md").read_text()
    assert markdown.startswith(f"# {TRACE}")
    assert re.search(r"\n<!-- provenance: \{.*\} -->\n\Z", markdown)
    assert "mean_relative_avg_wait" in markdown


def test_tuning_protocol(study):
    protocol = pl.read_parquet(study / "protocol.parquet")
    assert protocol.columns == list(PROTOCOL_COLUMNS)
    assert protocol.height == 2  # one row per (trace, threshold)
    assert protocol["threshold"].to_list() == ["20h", "none"]  # sorted by threshold_s
    assert (protocol["trace"] == TRACE).all()
    assert (protocol["train_weeks"] == 4).all() and (protocol["test_weeks"] == 4).all()
    assert read_csv(study / "protocol.csv").height == 2
    assert (study / "protocol.csv").read_text().startswith("# provenance: ")
    assert (study / "protocol.md").read_text().rstrip().endswith("-->")
    assert read_parquet_provenance(study / "protocol.parquet")["config"]["confidence"] == 0.95


def test_resample_whole_log_weeks(study, tmp_path):
    """The "whole" week source resamples the whole filtered log (both halves feed it) with
    seeds of its own: its week i is neither the train nor the test week i."""
    path = tmp_path / "weeks-whole.parquet"
    trace_steps.resample_batch(
        str(study / "filtered.parquet"), str(path), trace=TRACE, split="whole",
        first_week=WEEKS[0], last_week=WEEKS[1], seed=SEED,
        method="uniform", alignment="first_submit",
    )  # fmt: skip
    whole = pl.read_parquet(path)
    assert whole["week_index"].unique().sort().to_list() == [0, 1, 2, 3]
    assert machine_procs(path) == "100"
    sources = whole["source_job_id"]
    for split in ("train", "test"):
        part = pl.read_parquet(study / f"{split}.parquet")
        assert sources.is_in(part["job_id"].implode()).any(), split  # both halves feed it
        weeks = pl.read_parquet(study / f"weeks-{split}.parquet")
        assert not whole.select("week_index", "source_job_id").equals(
            weeks.select("week_index", "source_job_id")
        )
    assert read_parquet_provenance(path)["config"]["split"] == "whole"


def test_whole_log_simulation_and_table(study, tmp_path):
    """Each pair simulated on the whole filtered log equals scheduler.simulate on it (the
    pair with CONSERVATIVE: scheduler.simulate_conservative); the table gives hours and ratios
    to the baseline's run on the same log."""
    import scheduler

    pairs = [("FCFS", "FCFS", "none", math.inf), ("SPF", "SPF", "none", math.inf),
             ("LEXP", "LEXP", "20h", 72000.0), ("SPF", CONSERVATIVE, "20h", 72000.0),
             (MULTIFACTOR, CONSERVATIVE, "none", math.inf)]  # fmt: skip
    # the example site's slurm.conf: its limits and multifactor priority (docs/tuning.md)
    slurm = study_slurm(str(ROOT / "config/slurm/multifactor.conf"), "tuning.slurm_conf")
    runs = []
    for primary, backfill, threshold, threshold_s in pairs:
        out = tmp_path / f"{primary}-{backfill}-{threshold}.parquet"
        tuning_steps.simulate_whole_log(
            str(study / "filtered.parquet"), str(out), trace=TRACE, primary=primary,
            backfill=backfill, threshold=threshold, threshold_s=threshold_s,
            log_path=str(tmp_path / "whole.log"),
            threshold_backfill=False, slurm=slurm if primary == MULTIFACTOR else None,
        )  # fmt: skip
        runs.append(str(out))
    jobs = pl.read_parquet(study / "filtered.parquet")
    slurm_kwargs = {"swf_account": "single", **slurm["limits"],
                    "priority": MultifactorPriority(**slurm["priority"])}  # fmt: skip
    direct = {
        (p, b, t): (
            scheduler.simulate_conservative(jobs, p, t, machine_procs=100,
                                            **(slurm_kwargs if p == MULTIFACTOR else {}))
            if b == CONSERVATIVE else scheduler.simulate(jobs, p, b, t, machine_procs=100)
        ).summary
        for p, b, t, _ in pairs
    }  # fmt: skip
    assert direct["SPF", CONSERVATIVE, "20h"] != direct["SPF", "SPF", "none"]
    assert direct[MULTIFACTOR, CONSERVATIVE, "none"] != direct["FCFS", "FCFS", "none"]
    tuning_steps.tabulate_whole_log(
        runs, str(tmp_path / "t.parquet"), str(tmp_path / "t.csv"), str(tmp_path / "t.md"),
        baseline=BASELINE, log_path=str(tmp_path / "table.log"),
    )  # fmt: skip
    table = pl.read_parquet(tmp_path / "t.parquet")
    assert table.height == 5 and (table["jobs"] == KTH_KEPT).all()
    base = direct["FCFS", "FCFS", "none"]
    for row in table.iter_rows(named=True):
        summary = direct[row["primary"], row["backfill"], row["threshold"]]
        assert row["avg_wait_s"] == pytest.approx(summary.avg_wait_s, rel=1e-12)
        assert row["max_wait_s"] == pytest.approx(summary.max_wait_s, rel=1e-12)
        assert row["avg_wait_h"] == pytest.approx(summary.avg_wait_s / 3600.0, rel=1e-12)
        assert row["max_wait_h"] == pytest.approx(summary.max_wait_s / 3600.0, rel=1e-12)
        assert row["relative_avg_wait"] == pytest.approx(summary.avg_wait_s / base.avg_wait_s)
        assert row["relative_max_wait"] == pytest.approx(summary.max_wait_s / base.max_wait_s)
    assert table.filter(pl.col("primary") == "LEXP")["threshold_s"].to_list() == [72000.0]
    assert table.filter(pl.col("primary") == "FCFS")["relative_avg_wait"].to_list() == [1.0]
    assert read_csv(tmp_path / "t.csv").equals(table)
    markdown = (tmp_path / "t.md").read_text()
    assert "relative to EASY-FCFS-FCFS" in markdown and "| KTH-SP2 | SPF | SPF |" in markdown
    lines = (tmp_path / "whole.log").read_text().splitlines()
    assert len(lines) == 3 * len(pairs)  # each run: its name, its line, then its timing
    assert lines[0].endswith(" studies.tuning.steps.simulate_whole_log: started")
    # without the baseline's run the table cannot be relative to it
    with pytest.raises(core_steps.StepError, match="baseline EASY-FCFS-FCFS has no run"):
        tuning_steps.tabulate_whole_log(
            runs[1:], str(tmp_path / "u.parquet"), str(tmp_path / "u.csv"),
            str(tmp_path / "u.md"), baseline=BASELINE,
        )  # fmt: skip


def test_train_test_figure_agrees_with_the_protocol(study):
    """The train/test figure's AvgWait difference of the learned pair on the test weeks is the
    protocol's test_mean_difference_s (the same weeks, paired), in hours."""
    from scheduler.studies.tuning.figures import train_test_pairs_plot

    summary = pl.read_parquet(study / "summary.parquet")
    protocol = pl.read_parquet(study / "protocol.parquet")
    plot = train_test_pairs_plot(summary, threshold="20h", learned=protocol)
    row = protocol.filter(pl.col("threshold") == "20h").row(0, named=True)
    data = plot.data
    point = data[
        (data["primary"] == row["primary"]) & (data["backfill"] == row["backfill"])
        & (data["metric"] == "AvgWait")
    ]  # fmt: skip
    assert point["test"].iloc[0] == pytest.approx(row["test_mean_difference_s"] / 3600.0)


def test_every_step_logged(study):
    for name in ("filter", "split", "resample-train", "collect", "summarize", "protocol"):
        lines = (study / "logs" / f"{name}.log").read_text().splitlines()
        assert lines, name
        assert all(STAMPED.match(line) for line in lines), name
        assert not any(" error:" in line for line in lines), name
    filter_log = (study / "logs" / "filter.log").read_text()
    assert "27,992 kept" in filter_log and "100 processors" in filter_log


def test_outputs_without_temporary_files(study):
    assert not [p.name for p in study.rglob("*.tmp")]


# --------------------------------------------------------------------------------------------
# Failures
# --------------------------------------------------------------------------------------------


def test_malformed_swf_names_file_line_field_and_log(kth_path, tmp_path):
    with gzip.open(kth_path, "rt") as handle:
        lines = [next(handle) for _ in range(35)]
    job_lines = [line for line in lines if not line.startswith(";")]
    assert len(job_lines) >= 5
    fields = job_lines[0].split()
    fields[3] = "12x4"  # run_s, the 4th SWF field
    lines.append(" ".join(fields) + "\n")
    bad_line = len(lines)  # 1-based number of the appended line
    swf = tmp_path / "broken-KTH.swf"
    swf.write_text("".join(lines))
    out = tmp_path / "out"
    log = tmp_path / "logs" / "filter.log"

    with pytest.raises(core_steps.StepError) as info:
        trace_steps.filter_trace(
            str(swf), str(out / "filtered.parquet"), str(out / "report.json"),
            trace="broken", log_path=str(log),
            machine_procs=None, overrun="drop",
        )  # fmt: skip
    message = str(info.value)
    assert f"broken-KTH.swf:{bad_line}" in message
    assert "run_s" in message
    assert "12x4" in message
    assert message.endswith(f"(log: {log})")
    cause = info.value.__cause__
    assert isinstance(cause, TraceFormatError)
    assert (cause.line, cause.field) == (bad_line, "run_s")
    log_text = log.read_text()
    assert "error:" in log_text and f":{bad_line}" in log_text
    assert all(STAMPED.match(line) for line in log_text.splitlines())
    assert not out.exists() or not list(out.iterdir())


def test_missing_machine_procs_metadata(tmp_path):
    jobs = pl.DataFrame({"job_id": [1, 2], "submit_s": [0, 10]})
    jobs.write_parquet(tmp_path / "plain.parquet")
    with pytest.raises(core_steps.StepError, match=r"plain\.parquet.*schedlab\.machine_procs"):
        trace_steps.split_trace(
            str(tmp_path / "plain.parquet"), str(tmp_path / "a.parquet"),
            str(tmp_path / "b.parquet"), trace="t", log_path=str(tmp_path / "split.log"),
        )  # fmt: skip
    assert not (tmp_path / "a.parquet").exists() and not (tmp_path / "b.parquet").exists()


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_unreadable_weeks_batch_is_an_error_naming_the_file(study, tmp_path, damage):
    """A corrupted table between steps (a bad disk, a killed copy) fails the job with the
    file's name in the message and in the rule's log, and writes no output."""
    good = (study / "weeks-test.parquet").read_bytes()
    bad = tmp_path / "batch0.parquet"
    bad.write_bytes(b"PAR1 not a table PAR1" if damage == "garbage" else good[: len(good) // 2])
    out, log = tmp_path / "sim.parquet", tmp_path / "sim.log"
    with pytest.raises(core_steps.StepError, match=r"batch0\.parquet: not a readable parquet"):
        tuning_steps.simulate_batch(
            str(bad), str(out), trace=TRACE, split="test", primary="FCFS", backfill="FCFS",
            thresholds=[("none", math.inf)], log_path=str(log),
            threshold_backfill=False, slurm=None,
        )  # fmt: skip
    assert "batch0.parquet: not a readable parquet table" in log.read_text()
    assert not out.exists()


def test_collect_refuses_non_weekly_table(study, tmp_path):
    pl.DataFrame({"x": [1]}).write_parquet(tmp_path / "junk.parquet")
    with pytest.raises(core_steps.StepError, match=r"junk\.parquet: not a weekly"):
        tuning_steps.collect_weekly(
            [str(tmp_path / "junk.parquet")], str(tmp_path / "w.parquet"),
            trace=TRACE, baseline=BASELINE, log_path=None,
        )  # fmt: skip
    with pytest.raises(core_steps.StepError, match="no simulation results"):
        tuning_steps.collect_weekly([], str(tmp_path / "w.parquet"), trace=TRACE, baseline=BASELINE)
    assert not (tmp_path / "w.parquet").exists()


# --------------------------------------------------------------------------------------------
# rule_log
# --------------------------------------------------------------------------------------------


def test_rule_log_time_stamps_and_appends(tmp_path):
    path = tmp_path / "deep" / "dir" / "rule.log"
    with core_steps.rule_log(path) as log:
        log("first line")
        log("second line")
    with core_steps.rule_log(path) as log:
        log("third")
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    for line, text in zip(lines, ("first line", "second line", "third"), strict=True):
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} " + text, line)


def test_rule_log_without_path():
    with core_steps.rule_log(None) as log:
        log("nowhere")  # no file, no error


def test_rule_log_turns_schedlab_errors_into_step_errors(tmp_path):
    path = tmp_path / "rule.log"
    with pytest.raises(core_steps.StepError) as info, core_steps.rule_log(path) as log:
        log("working")
        raise ConfigurationError("bad thing")
    assert str(info.value) == f"bad thing (log: {path})"
    assert isinstance(info.value.__cause__, ConfigurationError)
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and lines[1].endswith(" error: bad thing")
    with pytest.raises(core_steps.StepError, match="no such"), core_steps.rule_log(path):
        raise FileNotFoundError("no such file")


def test_rule_log_logs_other_errors_and_lets_them_through(tmp_path):
    """A bug keeps its type and traceback; the log holds it too (it was left empty)."""
    path = tmp_path / "rule.log"
    with pytest.raises(ValueError, match="programming error") as info, core_steps.rule_log(path):
        raise ValueError("programming error")
    assert info.value.__notes__ == [f"(log: {path})"]
    text = path.read_text()
    assert " error: unexpected ValueError: programming error; its traceback:" in text
    assert "Traceback (most recent call last):" in text


def test_importing_the_steps_leaves_statistics_and_plotting_unloaded() -> None:
    """Snakemake imports every steps module at every start (once per job on a cluster): the
    statistics, optimisation and plotting libraries load only when a step that uses them runs."""
    code = (
        "import importlib, sys, scheduler.traces.steps\n"
        "from scheduler.studies.common.study import discover_studies\n"
        "for study in discover_studies():\n"
        "    importlib.import_module(f'scheduler.studies.{study.name}.steps')\n"
        "heavy = ('statsmodels', 'scipy.stats', 'scipy.optimize', 'plotnine', 'matplotlib')\n"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


# -- bad input (issue #11) -----------------------------------------------------------------------


def kth_head(kth_path: Path, jobs: int) -> list[str]:
    """The header and the first ``jobs`` job lines of KTH-SP2."""
    lines = []
    with gzip.open(kth_path, "rt") as handle:
        for line in handle:
            lines.append(line)
            if sum(not text.startswith(";") for text in lines) == jobs:
                return lines
    raise AssertionError("KTH-SP2 is shorter than expected")


def test_filter_step_refuses_duplicate_job_numbers(kth_path, tmp_path):
    lines = kth_head(kth_path, 20)
    first_job = next(i for i, line in enumerate(lines) if not line.startswith(";"))
    lines.append(lines[first_job + 3])  # a second copy of the fourth job
    swf = tmp_path / "dup.swf"
    swf.write_text("".join(lines))
    number = lines[first_job + 3].split()[0]
    out = tmp_path / "out"
    with pytest.raises(core_steps.StepError) as info:
        trace_steps.filter_trace(
            str(swf), str(out / "filtered.parquet"), str(out / "report.json"),
            trace="dup", log_path=str(tmp_path / "filter.log"),
            machine_procs=None, overrun="drop",
        )  # fmt: skip
    message = str(info.value)
    assert f"{swf}:{len(lines)}: field job_id: job number {number}" in message
    assert f"lines {first_job + 4} and {len(lines)}" in message
    assert not out.exists() or not list(out.iterdir())


def test_huge_malformed_line_is_quoted_short_in_error_and_log(kth_path, tmp_path):
    lines = kth_head(kth_path, 5)
    fields = lines[-1].split()
    fields[3] = "9" * 5_000_000 + "x"  # run_s
    lines[-1] = " ".join(fields) + "\n"
    swf = tmp_path / "huge.swf"
    swf.write_text("".join(lines))
    log = tmp_path / "filter.log"
    with pytest.raises(core_steps.StepError) as info:
        trace_steps.filter_trace(
            str(swf), str(tmp_path / "f.parquet"), str(tmp_path / "r.json"),
            trace="huge", log_path=str(log),
            machine_procs=None, overrun="drop",
        )  # fmt: skip
    assert len(str(info.value)) < 600 and "(5,000,001 characters)" in str(info.value)
    assert log.stat().st_size < 600


def test_filter_step_with_no_job_left_names_the_rule_counts(kth_path, tmp_path):
    lines = kth_head(kth_path, 3)
    damaged = []
    for line in lines:
        fields = line.split()
        if not line.startswith(";"):
            fields[3] = "0"  # run_s: rule 3 removes every job
        damaged.append(" ".join(fields) + "\n")
    swf = tmp_path / "jobless.swf"
    swf.write_text("".join(damaged))
    with pytest.raises(core_steps.StepError) as info:
        trace_steps.filter_trace(
            str(swf),
            str(tmp_path / "f.parquet"),
            str(tmp_path / "r.json"),
            trace="jobless",
            machine_procs=None,
            overrun="drop",
        )
    assert f"{swf}: no job left after filtering (3 jobs in; removed by rule: " in str(info.value)
    assert "run time <= 0 or submit < 0 3" in str(info.value)
    assert not (tmp_path / "f.parquet").exists() and not (tmp_path / "r.json").exists()


def test_filter_step_without_machine_size_names_the_config_key(kth_path, tmp_path):
    lines = [line for line in kth_head(kth_path, 5) if not line.startswith("; Max")]
    swf = tmp_path / "sizeless.swf"
    swf.write_text("".join(lines))
    with pytest.raises(core_steps.StepError) as info:
        trace_steps.filter_trace(
            str(swf),
            str(tmp_path / "f.parquet"),
            str(tmp_path / "r.json"),
            trace="Sizeless",
            machine_procs=None,
            overrun="drop",
        )
    message = str(info.value)
    assert message.startswith(f"{swf}: field MaxProcs: ")
    assert "set traces.Sizeless.machine_procs in the config" in message
    assert "infer_machine_procs" not in message and "machine_procs=" not in message


# -- filter_trace(overrun=..., machine_procs=None) ------------------------------------------


def test_filter_trace_overrun_clip(kth_path, tmp_path):
    from support.expected import KTH_CLIPPED

    out = tmp_path / "clip"
    trace_steps.filter_trace(
        str(kth_path), str(out / "filtered.parquet"), str(out / "filter.json"),
        trace=TRACE, overrun="clip", log_path=str(out / "filter.log"),
        machine_procs=None,
    )  # fmt: skip
    jobs = pl.read_parquet(out / "filtered.parquet")
    assert jobs.height == KTH_KEPT + KTH_CLIPPED
    assert (jobs.get_column("run_s") <= jobs.get_column("req_time_s")).all()
    record = read_parquet_provenance(out / "filtered.parquet")
    assert record["config"]["overrun"] == "clip"
    report = json.loads((out / "filter.json").read_text())
    assert (report["overrun"], report["clipped_overrun"]) == ("clip", KTH_CLIPPED)
    assert report["provenance"] == record
    assert f"({KTH_CLIPPED:,} clipped)" in (out / "filter.log").read_text()


def test_filter_trace_bad_overrun_writes_nothing(kth_path, tmp_path):
    out = tmp_path / "bad"
    with pytest.raises(core_steps.StepError, match=r"overrun must be one of 'drop', 'clip'"):
        trace_steps.filter_trace(
            str(kth_path), str(out / "filtered.parquet"), str(out / "filter.json"),
            trace=TRACE, overrun="cut", log_path=str(tmp_path / "filter.log"),
            machine_procs=None,
        )  # fmt: skip
    assert not out.exists()
