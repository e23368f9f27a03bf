"""The scaling model (scheduler.core.scaling): job graphs read from Snakemake's detailed summary,
and list schedules behind one dispatcher worked out by hand."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from scheduler.cli.main import main
from scheduler.core.errors import ConfigurationError
from scheduler.core.scaling import JobGraph, job_graph, model_wall
from scheduler.core.steps import StepTiming

HEADER = "output_file\tdate\trule\tlog-file(s)\tinput-file(s)\tshellcmd\tstatus\tplan\n"


def graph(durations: list[float], edges: list[tuple[int, int]]) -> JobGraph:
    successors = [[] for _ in durations]
    for a, b in edges:
        successors[a].append(b)
    return JobGraph(
        rule=tuple("r" for _ in durations), log=tuple(f"{k}.log" for k in range(len(durations))),
        duration_s=np.array(durations, dtype=float),
        successors=tuple(tuple(s) for s in successors),
    )  # fmt: skip


def test_a_chain_takes_its_length_on_any_number_of_cores() -> None:
    chain = graph([1.0, 2.0, 3.0], [(0, 1), (1, 2)])
    for cores in (1, 2, 64):
        assert model_wall(chain, cores, dispatch_s=0.0) == 6.0
    assert model_wall(chain, 4, dispatch_s=0.5, startup_s=2.0) == 2.0 + 3 * 0.5 + 6.0


def test_independent_jobs_share_the_cores_and_the_dispatcher() -> None:
    four = graph([1.0] * 4, [])
    assert model_wall(four, 1, dispatch_s=0.0) == 4.0
    assert model_wall(four, 2, dispatch_s=0.0) == 2.0
    # one dispatcher: the jobs start at 0.5, 1.0, 1.5 and 2.0 s, the last ends at 3.0 s
    assert model_wall(four, 4, dispatch_s=0.5) == 3.0
    # more cores than the dispatcher can feed: 1 s jobs, 0.5 s each to dispatch -> 2 cores busy
    many = graph([1.0] * 100, [])
    assert model_wall(many, 64, dispatch_s=0.5) == pytest.approx(100 * 0.5 + 1.0)


def test_the_dispatch_cost_grows_with_the_ready_jobs() -> None:
    # the first dispatch sees 2 ready jobs (2 s at 1 s each), the second 1 (1 s): 2+1, 2+1+1
    two = graph([1.0, 1.0], [])
    assert model_wall(two, 2, dispatch_s=0.0, per_ready_s=1.0) == 4.0


def test_the_longest_remaining_path_goes_first() -> None:
    # job 0 (1 s) then job 2 (5 s) behind it; job 1 (3 s) alone: on one core each order takes
    # 9 s, on two cores starting job 0 first takes 6 s (starting job 1 first would take 9 s)
    jobs = graph([1.0, 3.0, 5.0], [(0, 2)])
    assert list(jobs.critical_path_s()) == [6.0, 3.0, 5.0]
    assert model_wall(jobs, 1, dispatch_s=0.0) == 9.0
    assert model_wall(jobs, 2, dispatch_s=0.0) == 6.0


def test_a_cycle_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="cycle"):
        model_wall(graph([1.0, 1.0], [(0, 1), (1, 0)]), 2, dispatch_s=0.0)


def _summary(path: Path) -> Path:
    rows = [
        ("results/b.parquet", "simulate", "logs/b.log", "results/a.parquet"),
        ("results/c.parquet", "simulate", "logs/c.log", "results/a.parquet"),
        ("results/a.parquet", "prepare", "logs/a.log", "resources/in.swf"),
        ("results/a.json", "prepare", "logs/a.log", "resources/in.swf"),  # same job, 2 outputs
        ("results/t.csv", "tables", "logs/t.log", "results/b.parquet,results/c.parquet"),
        ("results/t.csv", "all", "-", "results/t.csv"),
    ]
    text = HEADER + "".join(f"{o}\t-\t{r}\t{log}\t{i}\t-\tmissing\tupdate pending\n"
                            for o, r, log, i in rows)  # fmt: skip
    path.write_text(text)
    return path


def test_job_graph_from_a_detailed_summary(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    summary = _summary(tmp_path / "summary.tsv")
    durations = {os.path.abspath("logs/a.log"): 2.0, os.path.abspath("logs/b.log"): 3.0,
                 os.path.abspath("logs/c.log"): 1.0}  # fmt: skip
    jobs = job_graph(summary, durations)
    assert jobs.jobs == 4 and sorted(jobs.rule) == ["prepare", "simulate", "simulate", "tables"]
    index = {log: k for k, log in enumerate(jobs.log)}
    a, b, c, t = (index[f"logs/{x}.log"] for x in "abct")
    assert set(jobs.successors[a]) == {b, c} and jobs.successors[b] == (t,)
    assert list(jobs.predecessors()[[a, b, c, t]]) == [0, 1, 1, 2]
    assert jobs.duration_s[t] == 0.0  # no timing: instant
    assert model_wall(jobs, 2, dispatch_s=0.0) == 5.0 and model_wall(jobs, 1, dispatch_s=0.0) == 6.0
    (tmp_path / "bad.tsv").write_text("a\tb\n1\t2\n")
    with pytest.raises(ConfigurationError, match="not the output of `snakemake --detailed"):
        job_graph(tmp_path / "bad.tsv", {})


def test_timings_model_command(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    summary = _summary(tmp_path / "summary.tsv")
    for name, seconds in (("a", 2.0), ("b", 3.0), ("c", 1.0)):
        log = tmp_path / "logs" / f"{name}.log"
        log.parent.mkdir(exist_ok=True)
        log.write_text(f"2026-11-28 10:00:00 {StepTiming(seconds, seconds, None).line()}\n")
    assert main(["timings", "logs", "--model", str(summary), "--cores", "1", "2",
                 "--dispatch-ms", "0", "--per-ready-us", "0"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "4 jobs (3 timed, 6.0 s of job time; the longest chain 5.0 s)" in out
    assert "│ 2     ┆ 5.0" in out and "1.2" in out  # 6 s on one core, 5 s on two: speed-up 1.2
