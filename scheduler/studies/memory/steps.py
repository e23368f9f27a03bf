"""The workflow steps of the memory-aware cluster study (one function per Snakemake rule of
``workflow/rules/memory.smk``): filter a log for the memory engine, simulate one batch of runs,
gather the tables, draw a figure. docs/memory.md describes the study."""

from __future__ import annotations

import time
from collections.abc import Sequence

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import write_csv, write_json, write_markdown, write_parquet
from scheduler.core.steps import (
    StepContext,
    flat_record,
    procs_metadata,
    read_table,
    workflow_step,
)
from scheduler.sim.memory import memory_jobs, simulate_memory
from scheduler.studies.memory.plan import parse_variant
from scheduler.studies.memory.published import published_table
from scheduler.studies.memory.stats import (
    baseline_ratios,
    paper_table,
    seed_intervals,
    summary_table,
)
from scheduler.traces.memory import (
    MEMORY_REMOVAL_RULES,
    memory_filter,
    offered_load,
    scale_to_load,
)
from scheduler.traces.swf import read_swf

__all__ = [
    "FIGURES",
    "filter_memory_jobs",
    "memory_figure",
    "memory_tables",
    "memory_week",
    "simulate_batch",
]

#: The study's figures (one Snakemake job each).
FIGURES = ("utilisation", "slowdown", "weights", "failures", "memory_sweep",
           "paper_utilisation", "paper_slowdown")  # fmt: skip


@workflow_step
def filter_memory_jobs(
    swf_path: str,
    jobs_path: str,
    report_path: str,
    *,
    trace: str,
    machine_nodes: int,
    largest_node_kb: float,
    under_request: str,
    missing_memory: str,
    slice_jobs: int | None,
    ctx: StepContext,
) -> None:
    """Read an SWF log, apply :func:`~scheduler.traces.memory.memory_filter` and keep the first
    ``slice_jobs`` survivors in submit order (all with ``None``); write the jobs (an SWF job
    table, parquet) and the filter report (JSON, with ``sliced_off``: survivors beyond the
    slice)."""
    raw = read_swf(swf_path, machine_procs=machine_nodes)
    jobs, report = memory_filter(raw.jobs, machine_nodes, largest_node_kb=largest_node_kb,
                                 under_request=under_request,  # type: ignore[arg-type]
                                 missing_memory=missing_memory)  # type: ignore[arg-type]  # fmt: skip
    sliced_off = 0
    if slice_jobs is not None and jobs.height > slice_jobs:
        sliced_off = jobs.height - slice_jobs
        jobs = jobs.head(slice_jobs)
    if jobs.height < 2:
        raise ConfigurationError(
            f"{trace}: {jobs.height} job(s) left after the memory filter; the study needs "
            "at least two (see memory.missing_memory, memory.under_request and memory.slice)"
        )
    report |= {"trace": trace, "sliced_off": sliced_off, "jobs_simulated": jobs.height}
    record = ctx.record()
    write_parquet(jobs, jobs_path, record, procs_metadata(machine_nodes))
    write_json(report, report_path, record)
    removed = ", ".join(f"{label} {report[name]:,}" for name, label in MEMORY_REMOVAL_RULES)
    ctx.log(f"{trace}: {report['jobs_in']:,} jobs in; "
            f"{report['filled_requested_memory']:,} unknown requests and "
            f"{report['filled_used_memory']:,} unknown uses filled; removed: {removed}; "
            f"{report['raised_under_request']:,} requests raised to the used memory; "
            f"{report['jobs_out']:,} kept, {jobs.height:,} simulated")  # fmt: skip


@workflow_step
def simulate_batch(
    jobs_path: str,
    out_path: str,
    *,
    kind: str,
    trace: str,
    scheduler: str,
    load: float,
    class_nodes: Sequence[int],
    class_memory_mb: Sequence[float],
    variants: Sequence[str],
    seeds: Sequence[int],
    memory_limit: str,
    max_failures: int,
    ctx: StepContext,
) -> None:
    """Every (estimator variant, seed) of one (log, scheduler, offered load, machine): the jobs'
    submit times scaled to offered load ``load`` (eq. 1), one simulation per variant and seed
    (the baseline ``none`` only with the first seed: it draws nothing). One row per run: the
    cell (``kind`` "load" or "sweep", log, scheduler, variant, estimator, feedback, gradient,
    target
    ``load``, ``second_memory_mb`` the memory of the machine's second class as given, MB), the
    ``seed``, the ``offered_load`` measured after scaling, ``scale_factor`` and the engine's
    summary (:meth:`~scheduler.sim.memory.MemorySummary.to_dict`, weights ``w_<feature>``)."""
    nodes = int(sum(class_nodes))
    swf = read_table(jobs_path)
    scaled = scale_to_load(swf, nodes, load)
    measured = offered_load(scaled, nodes)
    first = float(swf["submit_s"].min())
    span = float(swf["submit_s"].max()) - first
    factor = (float(scaled["submit_s"].max()) - first) / span if span > 0 else float("nan")
    jobs = memory_jobs(scaled)
    second = float(class_memory_mb[1] if len(class_memory_mb) > 1 else class_memory_mb[0])
    started = time.perf_counter()
    rows = []
    for label in variants:
        variant = parse_variant(label)
        for seed in seeds if variant.random else list(seeds)[:1]:
            config = variant.config(
                class_nodes=class_nodes, class_memory_mb=class_memory_mb, scheduler=scheduler,
                memory_limit=memory_limit, max_failures=max_failures, seed=seed,
            )  # fmt: skip
            summary = simulate_memory(jobs, config).summary
            learner = variant.estimator == "perceptron"
            rows.append({"kind": kind, "trace": trace, "scheduler": scheduler,
                         "variant": variant.label, "estimator": variant.estimator,
                         "feedback": variant.feedback if learner else "",
                         "gradient": variant.gradient if learner else "",
                         "load": float(load), "second_memory_mb": second,
                         "seed": int(seed), "offered_load": measured,
                         "scale_factor": factor, **summary.to_dict()})  # fmt: skip
    table = pl.DataFrame(rows)
    write_parquet(table, out_path, ctx.record())
    ctx.log(f"{trace} {scheduler} load {load:g} (measured {measured:.4f}, submit times x "
            f"{factor:.4g}), classes {list(class_nodes)} x {list(class_memory_mb)} MB: "
            f"{table.height} runs of {jobs.height:,} jobs in "
            f"{time.perf_counter() - started:.1f} s")  # fmt: skip


@workflow_step
def memory_tables(
    run_paths: Sequence[str],
    report_paths: Sequence[str],
    runs_path: str,
    intervals_path: str,
    ratios_path: str,
    summary_csv_path: str,
    summary_md_path: str,
    paper_csv_path: str,
    paper_md_path: str,
    published_csv_path: str,
    published_md_path: str,
    filter_csv_path: str,
    *,
    confidence: float,
    saturation_load: float,
    class_memory_mb: Sequence[float],
    ctx: StepContext,
) -> None:
    """Gather every run; intervals over seeds (:func:`seed_intervals`), ratios to the baseline
    (:func:`baseline_ratios`), the summary per (log, scheduler, variant, load), the "paper vs
    schedlab" table at ``saturation_load``, every claim of the paper beside schedlab's value
    (:func:`~scheduler.studies.memory.published.published_table`) and the filter counts of
    each log."""
    import json

    from scheduler.studies.common.tables import markdown_table

    runs = pl.concat([read_table(path) for path in run_paths], how="diagonal_relaxed")
    intervals = seed_intervals(runs, confidence)
    ratios = baseline_ratios(runs, confidence)
    summary = summary_table(intervals)
    paper = paper_table(ratios, saturation_load)
    reports = []
    for path in report_paths:
        with open(path, encoding="utf-8") as handle:
            content = json.load(handle)
        content.pop("provenance", None)
        reports.append(content)
    filters = pl.DataFrame(reports)
    published = published_table(ratios, intervals, reports, saturation_load=saturation_load,
                                class_memory_mb=class_memory_mb)  # fmt: skip
    record = ctx.record()
    write_parquet(runs, runs_path, record)
    write_parquet(intervals, intervals_path, record)
    write_parquet(ratios, ratios_path, record)
    write_csv(summary, summary_csv_path, record)
    write_markdown(f"# Memory-aware clusters: means over seeds ({confidence:.0%} t "
                   "intervals)\n\n" + markdown_table(summary), summary_md_path,
                   record)  # fmt: skip
    write_csv(paper, paper_csv_path, record)
    write_markdown(f"# The paper vs schedlab (saturation: offered load {saturation_load:g})"
                   "\n\n" + markdown_table(paper), paper_md_path, record)  # fmt: skip
    write_csv(published, published_csv_path, record)
    write_markdown("# Yom-Tov & Aridor (JSSPP 2007) beside schedlab (FCFS)\n\n"
                   + markdown_table(published), published_md_path, record)  # fmt: skip
    write_csv(filters, filter_csv_path, record)
    ctx.log(f"{runs.height} runs, {intervals.height} intervals, {ratios.height} ratios")


@workflow_step
def memory_figure(
    intervals_path: str,
    ratios_path: str,
    png_path: str,
    pdf_path: str,
    *,
    figure: str,
    ctx: StepContext,
) -> None:
    """One figure of :data:`FIGURES` (:mod:`scheduler.studies.memory.figures`)."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.memory import figures

    intervals = read_table(intervals_path)
    ratios = read_table(ratios_path)
    if figure == "utilisation":
        plot = figures.utilisation_figure(intervals)
    elif figure == "slowdown":
        plot = figures.slowdown_figure(intervals)
    elif figure == "weights":
        plot = figures.weights_figure(intervals)
    elif figure == "failures":
        plot = figures.failures_figure(intervals)
    elif figure == "memory_sweep":
        plot = figures.sweep_figure(ratios)
    elif figure == "paper_utilisation":
        plot = figures.paper_utilisation_figure(intervals)
    elif figure == "paper_slowdown":
        plot = figures.paper_slowdown_figure(intervals)
    else:
        raise ConfigurationError(f"unknown memory figure {figure!r}; known: {FIGURES}")
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()), width_in=8.0,
                height_in=6.0)  # fmt: skip
    ctx.log(f"figure {figure}")


@workflow_step
def memory_week(
    jobs_path: str,
    runs_path: str,
    png_path: str,
    pdf_path: str,
    *,
    trace: str,
    scheduler: str,
    load: float,
    class_nodes: Sequence[int],
    class_memory_mb: Sequence[float],
    estimators: Sequence[str],
    seed: int,
    memory_limit: str,
    max_failures: int,
    ctx: StepContext,
) -> None:
    """The representative week of log ``trace``: the log at offered load ``load`` (eq. 1) on
    the configured machine under ``scheduler``, without estimation (every job allocated its
    request) and with the variant of ``estimators`` that changes the mean bounded slowdown
    most (:func:`~scheduler.studies.memory.week.week_estimator`; random draws from ``seed``);
    the week (7 days from the first submission on) where their mean bounded slowdowns differ
    most (:func:`~scheduler.studies.common.gantt.representative_week`), drawn stacked: runs
    over the node classes, failed runs apart; queue length and utilisation under each."""
    from scheduler.sim.schedule import schedule_of
    from scheduler.studies.common.gantt import Panel, draw_gantt, representative_week
    from scheduler.studies.memory.week import week_estimator, week_runs

    estimator = week_estimator(read_table(runs_path), estimators, trace=trace,
                               scheduler=scheduler, load=load, seed=seed)  # fmt: skip
    results = week_runs(read_table(jobs_path), estimator, load=load, class_nodes=class_nodes,
                        class_memory_mb=class_memory_mb, scheduler=scheduler, seed=seed,
                        memory_limit=memory_limit, max_failures=max_failures)  # fmt: skip
    window = representative_week(results[0].jobs, results[1].jobs)
    panels = []
    for label, result in zip(("none", estimator), results, strict=True):
        week = result.jobs.filter(pl.col("submit_s").is_between(*window, closed="left"))
        panels.append(Panel(f"estimator {label}: {week.height} jobs submitted in the week, "
                            f"mean bounded slowdown {week['bsld'].mean():.2f}, "
                            f"{int(week['failures'].sum())} failed runs",
                            schedule_of(result)))  # fmt: skip
    title = f"{trace} at offered load {load:g}, {scheduler}: the week that differs most"
    meta = flat_record(ctx.record())
    draw_gantt(panels, (png_path, pdf_path), window, colour_by="failed", title=title,
               provenance=meta)  # fmt: skip
    ctx.log(f"{trace} {scheduler} load {load:g}, none vs {estimator}: week "
            f"[{window[0]:.0f}, {window[1]:.0f}) s")  # fmt: skip
