"""``scheduler simulate --backfilling conservative`` and ``--slurm-conf`` on a tiny trace.

Run in-process; the command's results must equal the Python API's
(:func:`scheduler.sim.conservative.simulate_conservative`, with ``SlurmConf.simulate_kwargs``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from cli.helpers import assert_one_line_error, run, run_json, value_of

from scheduler.sim.api import simulate
from scheduler.sim.conservative import simulate_conservative
from scheduler.sim.slurm_conf import read_slurm_conf
from scheduler.traces.filters import strong_filter
from scheduler.traces.sacct import SIDE_SCHEMA, write_side_table
from scheduler.traces.swf import read_swf

MACHINE_PROCS = 8


@pytest.fixture
def tiny_trace(tmp_path: Path) -> Path:
    """24 jobs on 8 processors, with enough queueing that backfilling matters."""
    rng = np.random.default_rng(7)
    lines = [f"; MaxProcs: {MACHINE_PROCS}"]
    submit = np.sort(rng.integers(0, 2000, 24))
    for number, submit_s in enumerate(submit, start=1):
        run_s = int(rng.integers(10, 600))
        procs = int(rng.integers(1, MACHINE_PROCS + 1))
        requested = run_s * int(rng.integers(1, 4))
        fields = [number, int(submit_s), 0, run_s, procs, -1, -1, procs, requested, -1, 1, 1, 1,
                  -1, -1, -1, -1, -1]  # fmt: skip
        lines.append(" ".join(str(value) for value in fields))
    path = tmp_path / "tiny.swf"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_conf(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    return path


BACKFILL_CONF = """\
ClusterName=tiny
SchedulerType=sched/backfill
SchedulerParameters=bf_window=5,bf_resolution=30,bf_interval=20,bf_max_job_test=6
SlurmctldLogFile=/var/log/slurmctld.log
NodeName=n[1-4] CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def test_conservative_options_equal_the_api(
    capsys: pytest.CaptureFixture[str], tiny_trace: Path
) -> None:
    argv = ["--backfilling", "conservative", "--primary", "SPF", "--bf-window", "10m",
            "--bf-resolution", "30", "--depth", "3", "--bf-max-job-test", "10",
            "--default-queue-depth", "5", "--bf-interval", "20", "--node-procs", "4"]  # fmt: skip
    result = run_json(capsys, "simulate", tiny_trace, *argv)
    trace, _ = strong_filter(read_swf(tiny_trace))
    expected = simulate_conservative(
        trace, "SPF", depth=3, bf_window_s=600, bf_resolution_s=30, bf_interval_s=20,
        bf_max_job_test=10, default_queue_depth=5, node_procs=4,
    )  # fmt: skip
    assert result["summary"] == expected.summary.to_dict()
    assert result["config"] == expected.config.to_dict()
    assert result["slurm_conf"] is None


def test_slurm_conf_equals_the_api(
    capsys: pytest.CaptureFixture[str], tiny_trace: Path, tmp_path: Path
) -> None:
    conf_path = write_conf(tmp_path, BACKFILL_CONF)
    result = run_json(capsys, "simulate", tiny_trace, "--slurm-conf", conf_path, "--no-filter")
    expected = simulate_conservative(
        read_swf(tiny_trace), **read_slurm_conf(conf_path).simulate_kwargs()
    )
    assert result["summary"] == expected.summary.to_dict()
    assert result["config"] == expected.config.to_dict()
    assert result["config"]["bf_window_s"] == 300  # bf_window is in minutes
    assert result["config"]["machine_procs"] == MACHINE_PROCS  # 4 nodes x 2 CPUs
    assert result["slurm_conf"] == str(conf_path)
    # The file's limits change this schedule: without them it differs.
    plain = simulate_conservative(read_swf(tiny_trace))
    assert plain.jobs["start_s"].to_list() != expected.jobs["start_s"].to_list()


def test_slurm_conf_text_and_job_table(
    capsys: pytest.CaptureFixture[str], tiny_trace: Path, tmp_path: Path
) -> None:
    conf_path = write_conf(tmp_path, BACKFILL_CONF)
    jobs_path = tmp_path / "jobs.csv"
    code, out, err = run(
        capsys, "simulate", tiny_trace, "--slurm-conf", conf_path, "--jobs-out", jobs_path
    )
    assert code == 0, err
    assert value_of("slurm.conf", out) == str(conf_path)
    assert value_of("backfilling", out) == "conservative"
    assert value_of("bf_window", out) == "300 s"
    assert value_of("bf_max_job_test", out) == "6"
    assert value_of("default_queue_depth", out) == "100"  # Slurm's default
    assert value_of("depth", out) == "none"
    trace, _ = strong_filter(read_swf(tiny_trace))
    expected = simulate_conservative(trace, **read_slurm_conf(conf_path).simulate_kwargs())
    table = pl.read_csv(jobs_path)
    assert table["start_s"].to_list() == expected.jobs["start_s"].to_list()


def test_builtin_conf_is_easy_without_backfilling(
    capsys: pytest.CaptureFixture[str], tiny_trace: Path, tmp_path: Path
) -> None:
    conf_path = write_conf(tmp_path, "SchedulerType=sched/builtin\nNodeName=n[1-8] CPUs=1\n")
    result = run_json(capsys, "simulate", tiny_trace, "--slurm-conf", conf_path)
    trace, _ = strong_filter(read_swf(tiny_trace))
    easy = simulate(trace, "FCFS", None)
    assert result["summary"]["avg_wait_s"] == easy.summary.avg_wait_s
    assert result["summary"]["backfilled_jobs"] == 0


def test_a_limit_of_none_is_no_limit(capsys: pytest.CaptureFixture[str], tiny_trace: Path) -> None:
    argv = ["--backfilling", "conservative", "--bf-window", "none", "--bf-interval", "none"]
    result = run_json(capsys, "simulate", tiny_trace, *argv)
    assert (result["config"]["bf_window_s"], result["config"]["bf_interval_s"]) == (None, None)
    plain = run_json(capsys, "simulate", tiny_trace, "--backfilling", "conservative")
    assert result["summary"] == plain["summary"]


def test_easy_stays_the_default(capsys: pytest.CaptureFixture[str], tiny_trace: Path) -> None:
    result = run_json(capsys, "simulate", tiny_trace)
    trace, _ = strong_filter(read_swf(tiny_trace))
    assert result["config"] == simulate(trace, "FCFS", "FCFS").config.to_dict()
    explicit = run_json(capsys, "simulate", tiny_trace, "--backfilling", "easy")
    assert explicit["summary"] == result["summary"]


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["--bf-window", "1h"], ("--bf-window", "--backfilling conservative")),
        (["--backfilling", "conservative", "--backfill", "SPF"], ("--backfill", "EASY")),
        (["--backfilling", "conservative", "--reservation", "classic"], ("--reservation",)),
        (["--backfilling", "conservative", "--threshold-backfill"], ("--threshold-backfill",)),
        (["--backfilling", "conservative", "--predictor", "nag"], ("--predictor",)),
        (["--backfilling", "conservative", "--depth", "-1"], ("depth", "-1")),
        (["--backfilling", "conservative", "--side", "s.parquet"], ("--side", "FCFS")),
        (["--primary", "Multifactor"], ("--primary multifactor", "--backfilling conservative")),
        (["--backfilling", "conservative", "--swf-account", "single"], ("--swf-account",)),
        (["--backfilling", "conservative", "--primary", "multifactor", "--side", "nope.parquet"],
         ("side table", "nope.parquet")),
    ],
)  # fmt: skip
def test_option_mixes_are_refused(
    capsys: pytest.CaptureFixture[str], tiny_trace: Path, argv: list[str], fragments: tuple[str]
) -> None:
    assert_one_line_error(*run(capsys, "simulate", tiny_trace, *argv), *fragments)


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["--primary", "SPF"], ("--primary", "--slurm-conf")),
        (["--machine-procs", "16"], ("--machine-procs",)),
        (["--backfilling", "easy"], ("--backfilling easy",)),
        (["--bf-window", "1h", "--depth", "2"], ("--depth", "--bf-window")),
    ],
)  # fmt: skip
def test_slurm_conf_is_not_mixed_with_what_it_decides(
    capsys: pytest.CaptureFixture[str],
    tiny_trace: Path,
    tmp_path: Path,
    argv: list[str],
    fragments: tuple[str],
) -> None:
    conf_path = write_conf(tmp_path, BACKFILL_CONF)
    code, out, err = run(capsys, "simulate", tiny_trace, "--slurm-conf", conf_path, *argv)
    assert_one_line_error(code, out, err, *fragments, str(conf_path))


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("PriorityType=priority/multifactor\nPriorityFlags=FAIR_TREE_X\n",
         (":2:", "PriorityFlags", "FAIR_TREE_X")),
        ("PriorityType=priority/multifactor\nPriorityFlags=NO_FAIR_TREE\nPriorityWeightAge=-1\n",
         (":3:", "PriorityWeightAge", "-1")),
        ("ClusterName=c\nSchedulerTyp=sched/backfill\n", (":2:", "SchedulerTyp", "unknown key")),
        ("SchedulerParameters=bf_max_job_user=2\n", (":1:", "bf_max_job_user", "not modelled")),
    ],
)  # fmt: skip
def test_slurm_conf_errors_name_file_and_line(
    capsys: pytest.CaptureFixture[str],
    tiny_trace: Path,
    tmp_path: Path,
    text: str,
    fragments: tuple[str],
) -> None:
    conf_path = write_conf(tmp_path, text + "NodeName=n[1-4] CPUs=2\n")
    code, out, err = run(capsys, "simulate", tiny_trace, "--slurm-conf", conf_path)
    assert_one_line_error(code, out, err, str(conf_path), *fragments)


MULTIFACTOR_CONF = """\
PriorityType=priority/multifactor
PriorityFlags=NO_FAIR_TREE
PriorityWeightAge=1000
PriorityWeightFairshare=5000
PriorityWeightJobSize=300
PriorityWeightPartition=200
PriorityDecayHalfLife=20
PriorityCalcPeriod=1
PriorityMaxAge=30
NodeName=n[1-4] CPUs=2
PartitionName=debug Nodes=ALL PriorityJobFactor=1
PartitionName=big Nodes=ALL PriorityJobFactor=3
"""


def side_table(trace_path: Path) -> pl.DataFrame:
    """The tiny trace's side table as ``scheduler import sacct`` writes it: three accounts,
    two partitions, eligible a minute after submission for every third job."""
    jobs = read_swf(trace_path).jobs
    n = jobs.height
    return pl.DataFrame(
        {
            "job_id": jobs["job_id"], "slurm_job_id": [str(100 + i) for i in range(n)],
            "account_id": [i % 3 + 1 for i in range(n)], "qos": ["normal"] * n,
            "partition": ["big" if i % 4 == 0 else "debug" for i in range(n)],
            "eligible_s": jobs["submit_s"] + pl.Series([60 if i % 3 == 0 else 0 for i in range(n)]),
            "state": ["COMPLETED"] * n, "exit_code": [0] * n, "exit_signal": [0] * n,
            "max_rss_kb": [1.0] * n, "het_components": [1] * n,
        },
        schema=SIDE_SCHEMA,
    )  # fmt: skip


def test_multifactor_slurm_conf_equals_the_api(
    capsys: pytest.CaptureFixture[str], tiny_trace: Path, tmp_path: Path
) -> None:
    """A multifactor slurm.conf with the sacct side table (--side) is simulate_conservative with
    MultifactorPriority from the file and the side table; without the side table (accounts from
    the SWF groups, one partition) the priorities differ."""
    conf_path = write_conf(tmp_path, MULTIFACTOR_CONF)
    side = side_table(tiny_trace)
    side_path = tmp_path / "tiny.side.parquet"
    write_side_table(side, side_path)
    argv = ["--slurm-conf", conf_path, "--no-filter", "--jobs-out", tmp_path / "jobs.csv"]
    result = run_json(capsys, "simulate", tiny_trace, *argv, "--side", side_path)
    kwargs = read_slurm_conf(conf_path).simulate_kwargs()
    assert kwargs["primary"] == "multifactor"
    assert kwargs["priority"].weight_fairshare == 5000
    assert kwargs["priority"].decay_half_life_s == 1200  # a plain number is minutes
    expected = simulate_conservative(read_swf(tiny_trace), **kwargs, side=side)
    assert result["summary"] == expected.summary.to_dict()
    assert result["config"] == expected.config.to_dict()
    assert result["config"]["priority"]["weight_age"] == 1000
    table = pl.read_csv(tmp_path / "jobs.csv")
    assert table["priority"].to_list() == expected.jobs["priority"].to_list()
    run_json(capsys, "simulate", tiny_trace, *argv)  # without --side: the SWF's attributes
    swf_only = simulate_conservative(read_swf(tiny_trace), **kwargs)
    assert pl.read_csv(tmp_path / "jobs.csv")["priority"].to_list() == (
        swf_only.jobs["priority"].to_list()
    )
    assert swf_only.jobs["priority"].to_list() != expected.jobs["priority"].to_list()
    code, out, err = run(capsys, "simulate", tiny_trace, *argv, "--side", side_path)
    assert code == 0, err
    assert value_of("priority weights", out) == (
        "age 1000, fair-share 5000, job size 300, partition 200, QOS 0"
    )
    assert value_of("job size", out) == "favor large, processors 2 per node"


def test_conservative_schedule_as_swf(
    capsys: pytest.CaptureFixture[str], tiny_trace: Path, tmp_path: Path
) -> None:
    """--out writes the conservative schedule as SWF: field 3 is each job's simulated wait, the
    header names the run's settings."""
    out = tmp_path / "schedule.swf"
    code, _, err = run(capsys, "simulate", tiny_trace, "--backfilling", "conservative",
                       "--primary", "SPF", "--out", out)  # fmt: skip
    assert code == 0, err
    written = read_swf(out)
    expected = simulate_conservative(strong_filter(read_swf(tiny_trace))[0], "SPF")
    assert written.jobs["wait_s"].to_list() == expected.jobs["wait_s"].round(0).to_list()
    assert written.jobs["wait_s"].to_list() != read_swf(tiny_trace).jobs["wait_s"].to_list()
    assert '"primary": "SPF"' in out.read_text()
