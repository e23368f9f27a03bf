"""The ``memory`` group: the memory-aware variant on the whole LANL-CM5 log,
at its own offered load and saturated, beside plain EASY of the base engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from scheduler.cli.bench.group import log_group
from scheduler.cli.bench.logs import read_log
from scheduler.cli.bench.timing import side_by_side, timing_line
from scheduler.sim.api import simulate
from scheduler.sim.memory import MemoryConfig, memory_jobs, simulate_memory
from scheduler.traces.memory import memory_filter, scale_to_load
from scheduler.traces.swf import Trace

__all__ = [
    "GROUP",
    "MEMORY_BENCH_LOADS",
    "MEMORY_RUNS",
    "format_memory_figures",
    "memory_figures",
]

#: The memory-aware runs of the benchmark: (label, scheduler, estimator, feedback).
MEMORY_RUNS: tuple[tuple[str, str, str, str], ...] = (
    ("FCFS, no estimation", "fcfs", "none", "implicit"),
    ("FCFS, perceptron implicit", "fcfs", "perceptron", "implicit"),
    ("FCFS, perceptron explicit", "fcfs", "perceptron", "explicit"),
    ("FCFS, history", "fcfs", "history", "implicit"),
    ("EASY, no estimation", "easy", "none", "implicit"),
    ("EASY, perceptron implicit", "easy", "perceptron", "implicit"),
    ("EASY, perceptron explicit", "easy", "perceptron", "explicit"),
    ("EASY, history", "easy", "history", "implicit"),
)
#: Offered loads of the memory benchmark: the log's own, and the saturated end of the sweep.
MEMORY_BENCH_LOADS: tuple[float | None, ...] = (None, 1.2)
#: Processors (one per node) of the memory-aware runs' machine: :class:`MemoryConfig`'s
#: default classes, 512 × 32 MB + 512 × 24 MB; plain EASY gets the same machine.
MEMORY_MACHINE_PROCS: int = sum(MemoryConfig().class_nodes)


def memory_figures(trace: Trace, repeat: int = 5) -> dict[str, object]:
    """Wall times of the memory-aware variant on a whole log (512 × 32 MB + 512 × 24 MB).

    The log goes through :func:`scheduler.traces.memory.memory_filter` (requests below use
    raised); each run is :func:`scheduler.sim.memory.simulate_memory` on the converted table
    (conversion and validation included), at the log's own offered load and scaled to 1.2.
    One warm-up call of each run, then ``repeat`` rounds calling every run in turn; plain EASY
    of the base engine on the same jobs (the whole machine as one class of identical nodes) is
    timed in the same rounds, and each run's ratio to it is taken within a round. Returns per
    load and run the median, min and max wall time (s), the ratio, and the run's summary.
    """
    # the jobs with both memory fields: the benchmark page's figures were measured on them
    jobs, report = memory_filter(
        trace.jobs, trace.machine_procs, largest_node_kb=32 * 1024, missing_memory="drop"
    )
    out: dict[str, object] = {"jobs": jobs.height, "filter": report, "repeat": repeat}
    for load in MEMORY_BENCH_LOADS:
        table = jobs if load is None else scale_to_load(jobs, MEMORY_MACHINE_PROCS, load)
        engine = memory_jobs(table)
        plain = Trace(
            jobs=table.with_columns(pl.col("submit_s").round().cast(pl.Int64)),
            header=trace.header, machine_procs=MEMORY_MACHINE_PROCS,
        )  # fmt: skip
        calls: dict[str, Callable[[], object]] = {
            "plain EASY (base engine)": lambda plain=plain: simulate(plain)
        }
        for label, scheduler, estimator, feedback in MEMORY_RUNS:
            config = MemoryConfig(scheduler=scheduler, estimator=estimator, feedback=feedback)
            calls[label] = lambda config=config, engine=engine: simulate_memory(engine, config)
        outputs, times = side_by_side(calls, repeat, "plain EASY (base engine)")
        part: dict[str, object] = {}
        for label, figures in times.items():
            result: Any = outputs[label]
            part[label] = {**figures, "summary": result.summary.to_dict()}
        out["native" if load is None else f"load {load:g}"] = part
    return out


def format_memory_figures(figures: dict[str, Any]) -> list[str]:
    """Lines of :func:`memory_figures`."""
    lines = [
        f"LANL-CM5 after the memory filter ({figures['jobs']} jobs; 512 x 32 MB + 512 x 24 MB), "
        f"{figures['repeat']} rounds: median [min, max], ratio to plain EASY of the base engine"
    ]
    for key, part in figures.items():
        if not isinstance(part, dict) or "plain EASY (base engine)" not in part:
            continue
        lines.append(f"  offered load: {key}")
        for label, f in part.items():
            summary = f["summary"]
            extra = (
                f"  eff. util {summary['utilisation']:.3f}, {summary['failed_runs']} failed runs"
                if "failed_runs" in summary
                else ""
            )
            target = " (target <= 1 s)" if "perceptron" in label else ""
            lines.append("    " + timing_line(label, f, 27, target + extra))
    return lines


GROUP = log_group(
    "memory",
    "the memory-aware variant on the whole LANL-CM5.swf.gz",
    "LANL-CM5",
    lambda path, inputs: memory_figures(read_log(path, "LANL-CM5", inputs.catalogue), repeat=3),
    format_memory_figures,
    in_default_run=True,
)
