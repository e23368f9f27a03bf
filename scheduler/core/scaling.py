"""How a workflow run would scale with cores: its job graph, its jobs' measured durations, and
the cost of Snakemake's own process, replayed on P cores.

The job graph comes from Snakemake's ``--detailed-summary`` (a row per output file: rule, log,
inputs), a job being the outputs that share a log; an edge joins the job that writes a file to
each job that reads it. Each job's duration is the wall time its step logged
(:class:`~scheduler.core.steps.StepTiming`, read by ``scheduler timings``); jobs without a
timing line (local rules that are not steps) count as instant.

The model (:func:`model_wall`) is a list schedule of that graph on ``cores`` cores behind one
dispatcher, Snakemake's process: every job costs the dispatcher ``dispatch_s + per_ready_s × r``
seconds of its time before it starts (``r``: jobs ready and waiting at that moment; Snakemake's
job selection looks at all of them, docs/benchmarks.md), one job after the other; a job starts
once its inputs exist, a core is free and the dispatcher has handled it; ready jobs go longest
remaining path first. Startup (parsing the workflow, building the DAG) is ``startup_s``. What
the model leaves out: jobs slowed by each other (shared memory bandwidth, disk), and a
dispatcher's cost at a job's end counted at its start instead.
"""

from __future__ import annotations

import csv
import heapq
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scheduler.core.errors import ConfigurationError

__all__ = ["DISPATCH_S", "PER_READY_S", "JobGraph", "job_graph", "model_table", "model_wall"]

#: Snakemake's (9.27, thread mode, greedy scheduler, no rate limit) CPU seconds per job of
#: this workflow's default study, and its cost per job ready and waiting when it selects one
#: (1,000 and 4,000 instant jobs); the model's defaults, measured 2026-11-28 on 2 cores
#: (docs/benchmarks.md, "Snakemake's own process").
DISPATCH_S = 0.006
PER_READY_S = 5.3e-6


@dataclass(frozen=True)
class JobGraph:
    """Jobs ``0..n-1``: ``rule[k]``, ``log[k]`` (its key), ``duration_s[k]`` (wall seconds),
    ``successors[k]`` (the jobs reading its outputs) and ``predecessors`` counts.

    Invariant: acyclic (Snakemake's DAG), and every edge joins two distinct jobs.
    """

    rule: tuple[str, ...]
    log: tuple[str, ...]
    duration_s: np.ndarray
    successors: tuple[tuple[int, ...], ...]

    @property
    def jobs(self) -> int:
        return len(self.rule)

    def predecessors(self) -> np.ndarray:
        """How many jobs each job waits for."""
        counts = np.zeros(self.jobs, dtype=np.int64)
        for following in self.successors:
            for job in following:
                counts[job] += 1
        return counts

    def critical_path_s(self) -> np.ndarray:
        """Each job's longest path to the end of the graph, itself included (seconds)."""
        order = _topological_order(self)
        path = self.duration_s.astype(float).copy()
        for job in reversed(order):
            after = self.successors[job]
            if after:
                path[job] += max(path[k] for k in after)
        return path


def _topological_order(graph: JobGraph) -> list[int]:
    waiting = graph.predecessors()
    ready = [k for k in range(graph.jobs) if waiting[k] == 0]
    order = []
    while ready:
        job = ready.pop()
        order.append(job)
        for k in graph.successors[job]:
            waiting[k] -= 1
            if waiting[k] == 0:
                ready.append(k)
    if len(order) != graph.jobs:
        raise ConfigurationError("the job graph has a cycle (not a Snakemake summary?)")
    return order


def job_graph(summary_path: str | os.PathLike[str], durations: Mapping[str, float]) -> JobGraph:
    """The job graph of Snakemake's ``--detailed-summary`` (tab-separated, with a header) and
    each job's duration from ``durations`` (absolute log path -> wall seconds; the summary's
    paths are taken relative to the working directory, the project's root; jobs missing from
    it take 0 s). The target rule ``all`` is left out."""
    path = Path(summary_path)
    csv.field_size_limit(sys.maxsize)  # a tables job lists thousands of input files
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
    except OSError as error:
        raise ConfigurationError(f"{path}: cannot read the summary ({error})") from error
    needed = {"output_file", "rule", "log-file(s)", "input-file(s)"}
    if not rows or not needed <= set(rows[0]):
        raise ConfigurationError(
            f"{path}: not the output of `snakemake --detailed-summary` (columns "
            f"{sorted(needed)} expected)"
        )
    keys: dict[str, int] = {}
    rules: list[str] = []
    inputs: list[set[str]] = []
    writer: dict[str, int] = {}
    for row in rows:
        if row["rule"] == "all":
            continue
        key = row["log-file(s)"] if row["log-file(s)"] not in ("", "-") else row["output_file"]
        job = keys.setdefault(key, len(keys))
        if job == len(rules):
            rules.append(row["rule"])
            inputs.append(set())
        writer[row["output_file"]] = job
        listed = row["input-file(s)"]
        if listed not in ("", "-"):
            inputs[job].update(listed.split(","))
    successors: list[set[int]] = [set() for _ in rules]
    for job, files in enumerate(inputs):
        for name in files:
            source = writer.get(name)
            if source is not None and source != job:
                successors[source].add(job)
    logs = tuple(keys)
    return JobGraph(
        rule=tuple(rules),
        log=logs,
        duration_s=np.array([float(durations.get(os.path.abspath(log), 0.0)) for log in logs]),
        successors=tuple(tuple(sorted(s)) for s in successors),
    )


def model_wall(
    graph: JobGraph,
    cores: int,
    *,
    dispatch_s: float,
    per_ready_s: float = 0.0,
    startup_s: float = 0.0,
) -> float:
    """Modelled wall seconds of the run on ``cores`` cores (see the module's docstring).

    Parameters
    ----------
    graph
        The jobs, their durations (s) and dependencies.
    cores
        Jobs running at once (>= 1).
    dispatch_s
        The dispatcher's fixed cost per job, seconds (>= 0).
    per_ready_s
        Its cost per job ready and waiting when it dispatches one, seconds (>= 0).
    startup_s
        Seconds before the first job can start (>= 0).
    """
    if cores < 1 or dispatch_s < 0 or per_ready_s < 0 or startup_s < 0:
        raise ValueError("cores >= 1 and non-negative costs expected")
    priority = graph.critical_path_s()
    waiting = graph.predecessors()
    ready: list[tuple[float, int]] = [(-priority[k], k) for k in range(graph.jobs)
                                      if waiting[k] == 0]  # fmt: skip
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []  # (end time, job)
    now = dispatcher = startup_s
    done = 0
    while done < graph.jobs:
        while ready and len(running) < cores:
            _, job = heapq.heappop(ready)
            dispatcher = max(dispatcher, now) + dispatch_s + per_ready_s * (len(ready) + 1)
            heapq.heappush(running, (dispatcher + float(graph.duration_s[job]), job))
        if not running:
            raise ConfigurationError("the job graph has a cycle (no job can run)")
        now, job = heapq.heappop(running)
        done += 1
        for k in graph.successors[job]:
            waiting[k] -= 1
            if waiting[k] == 0:
                heapq.heappush(ready, (-priority[k], k))
    return max(now, dispatcher)


def model_table(
    graph: JobGraph, cores: Sequence[int], *, dispatch_s: float, per_ready_s: float,
    startup_s: float,
) -> list[dict[str, float]]:  # fmt: skip
    """:func:`model_wall` at each of ``cores``, with the speed-up and parallel efficiency
    against one core."""
    one = model_wall(graph, 1, dispatch_s=dispatch_s, per_ready_s=per_ready_s,
                     startup_s=startup_s)  # fmt: skip
    rows = []
    for count in cores:
        wall = model_wall(graph, count, dispatch_s=dispatch_s, per_ready_s=per_ready_s,
                          startup_s=startup_s)  # fmt: skip
        rows.append({"cores": count, "wall_s": wall, "speedup": one / wall,
                     "efficiency": one / wall / count})  # fmt: skip
    return rows
