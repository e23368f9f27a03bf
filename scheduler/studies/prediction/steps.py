"""The run-time prediction study's workflow steps (one function per rule of
``workflow/rules/prediction.smk``): simulate a technique's triples on a log, gather the runs,
the tables, the figures."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import write_csv, write_markdown, write_parquet
from scheduler.core.steps import (
    StepContext,
    flat_record,
    read_table,
    table_machine_procs,
    workflow_step,
)
from scheduler.sim.prediction import PredictedResult, simulate_predicted
from scheduler.studies.prediction.plan import NO_CORRECTION, Triple
from scheduler.studies.prediction.stats import (
    RUN_COLUMNS,
    best_worst_table,
    error_table,
    lolo_table,
    prediction_errors,
)
from scheduler.traces.filters import with_processor_count

__all__ = [
    "PREDICTION_COLUMNS",
    "STUDY_FIGURES",
    "TRACE_FIGURES",
    "collect_runs",
    "draw_week",
    "prediction_tables",
    "simulate_technique",
    "study_figure",
    "trace_figure",
]

#: Figures drawn per log, and over all logs (the latter need at least two logs).
TRACE_FIGURES: tuple[str, ...] = ("ecdf_error", "ecdf_value", "bsld_heatmap")
STUDY_FIGURES: tuple[str, ...] = ("pair_correlation", "correlation_matrix")
#: The job-level predictions kept per (log, technique): the run of the first configured
#: correction and backfilling variant.
PREDICTION_COLUMNS = ("technique", "job_id", "procs", "run_s", "req_time_s", "prediction_s")


@workflow_step
def simulate_technique(
    filtered_path: str,
    runs_path: str,
    predictions_path: str,
    *,
    trace: str,
    technique: str,
    predictor: str,
    loss: str | None,
    corrections: Sequence[str],
    backfills: Sequence[str],
    processors: str,
    reservation: str,
    whole_seconds: bool,
    learner: Mapping[str, Any],
    ctx: StepContext,
) -> None:
    """Simulate every (correction, backfilling variant) of one technique on a filtered log, each
    job occupying its allocated or requested processors (``processors``,
    :func:`~scheduler.traces.filters.with_processor_count`), with the reservation rule
    ``reservation`` and whole-second predictions when ``whole_seconds``
    (:func:`~scheduler.sim.prediction.simulate_predicted`).

    Writes one row per triple (:data:`~scheduler.studies.prediction.stats.RUN_COLUMNS`) and the
    job-level predictions at submission of the first triple (:data:`PREDICTION_COLUMNS`).
    The correction ``"none"`` (REQUESTED, CLAIRVOYANT) runs with the REQUESTED TIME rule, which
    never fires for them.
    """
    machine_procs = table_machine_procs(filtered_path)
    table = with_processor_count(read_table(filtered_path), processors, machine_procs)
    if not corrections or not backfills:
        raise ConfigurationError(f"{technique}: no correction or backfilling variant to run")
    rows: list[dict[str, Any]] = []
    predictions: pl.DataFrame | None = None
    for correction in corrections:
        for backfill in backfills:
            started = time.perf_counter()
            result = _simulate_triple(
                table, machine_procs, predictor=predictor, loss=loss, correction=correction,
                backfill=backfill, reservation=reservation, whole_seconds=whole_seconds,
                learner=learner,
            )  # fmt: skip
            elapsed_s = time.perf_counter() - started
            jobs = result.jobs
            errors = prediction_errors(
                jobs["prediction_s"].to_numpy(),
                jobs["run_s"].to_numpy(),
                jobs["procs"].to_numpy(),
                float(learner["gamma_floor"]),
            )
            summary = result.summary
            triple = Triple(technique, correction, backfill)
            rows.append({
                "trace": trace, "technique": technique, "predictor": predictor,
                "loss": loss, "correction": correction, "backfill": backfill,
                "triple": triple.label, "jobs": summary.jobs,
                "avg_bsld": summary.avg_bsld, "max_bsld": summary.max_bsld,
                "avg_wait_s": summary.avg_wait_s, "max_wait_s": summary.max_wait_s,
                "utilisation": summary.utilisation, **errors,
                "corrections": result.total_corrections,
                "corrected_jobs": int((jobs["corrections"] > 0).sum()),
            })  # fmt: skip
            ctx.log(f"{trace} {triple.label}: AVEbsld {summary.avg_bsld:.3f}, MAE "
                    f"{errors['mae_s']:.0f} s, {result.total_corrections:,} corrections, "
                    f"{elapsed_s:.2f} s")  # fmt: skip
            if predictions is None:
                predictions = _job_predictions(result.jobs, result.source_jobs, technique)
    record = ctx.record()
    write_parquet(pl.DataFrame(rows, schema=RUN_COLUMNS), runs_path, record)
    assert predictions is not None
    write_parquet(predictions, predictions_path, record)


def _simulate_triple(
    table: pl.DataFrame,
    machine_procs: int,
    *,
    predictor: str,
    loss: str | None,
    correction: str,
    backfill: str,
    reservation: str,
    whole_seconds: bool,
    learner: Mapping[str, Any],
) -> PredictedResult:
    """One triple on a log's jobs (:func:`~scheduler.sim.prediction.simulate_predicted`): the
    correction ``"none"`` (REQUESTED, CLAIRVOYANT) runs with the REQUESTED TIME rule, which never
    fires for them; a technique without a loss runs with E-loss, which it ignores."""
    return simulate_predicted(
        table,
        predictor=predictor,
        loss=loss if loss is not None else "eloss",
        correction="requested" if correction == NO_CORRECTION else correction,
        backfill_order=backfill,  # type: ignore[arg-type]
        machine_procs=machine_procs,
        reservation=reservation,
        whole_seconds=whole_seconds,
        **learner,
    )


def _job_predictions(jobs: pl.DataFrame, source: pl.DataFrame, technique: str) -> pl.DataFrame:
    requested = source.select("job_id", pl.col("req_time_s").cast(pl.Float64))
    return (
        jobs.select("job_id", "procs", "run_s", "prediction_s")
        .join(requested, on="job_id", how="left")
        .with_columns(pl.lit(technique).alias("technique"))
        .select(*PREDICTION_COLUMNS)
    )


@workflow_step
def collect_runs(
    run_paths: Sequence[str],
    parquet_path: str,
    csv_path: str,
    *,
    ctx: StepContext,
) -> None:
    """Gather every simulated triple of every log into one table (parquet and CSV)."""
    if not run_paths:
        raise ConfigurationError("no simulated triples to gather")
    tables = []
    for path in run_paths:
        table = read_table(path)
        if dict(table.schema) != RUN_COLUMNS:
            raise ConfigurationError(f"{path}: not a prediction runs table")
        tables.append(table)
    runs = pl.concat(tables).sort("trace", "technique", "correction", "backfill")
    record = ctx.record(runs=len(run_paths))
    write_parquet(runs, parquet_path, record)
    write_csv(runs, csv_path, record)
    ctx.log(f"{runs.height} simulated triples on {runs['trace'].n_unique()} logs")


@workflow_step
def prediction_tables(
    runs_path: str,
    *,
    best_worst_csv_path: str,
    best_worst_md_path: str,
    errors_csv_path: str,
    errors_md_path: str,
    published_csv_path: str,
    published_md_path: str,
    lolo_csv_path: str | None = None,
    lolo_md_path: str | None = None,
    lolo_score: str,
    ctx: StepContext,
) -> None:
    """The study's tables: ``best_worst`` (per log), ``errors`` (per log and technique),
    ``published`` (the thesis' Tables 4.1, 4.6–4.8 beside schedlab's values for the logs of the
    study) and, when its paths are given (at least two logs), ``lolo`` (leave-one-log-out
    selection)."""
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.prediction.published import published_table

    runs = read_table(runs_path)
    tables = {"best_worst": best_worst_table(runs), "errors": error_table(runs),
              "published": published_table(runs)}  # fmt: skip
    titles = {
        "best_worst": "AVEbsld per log: EASY, EASY++, CLAIRVOYANT, and the best and worst "
        "learned (NAG) triples per backfilling variant",
        "errors": "Prediction errors at submission (MAE in s, mean E-loss)",
        "lolo": f"Leave-one-log-out selection (score: {lolo_score})",
        "published": "The thesis' published values (Reis 2018, Tables 4.1, 4.6-4.8) beside "
        "schedlab's (difference = schedlab / published - 1)",
    }
    outputs = {
        "best_worst": (best_worst_csv_path, best_worst_md_path),
        "errors": (errors_csv_path, errors_md_path),
        "published": (published_csv_path, published_md_path),
    }
    if lolo_csv_path is not None and lolo_md_path is not None:
        tables["lolo"] = lolo_table(runs, score=lolo_score)
        outputs["lolo"] = (lolo_csv_path, lolo_md_path)
    record = ctx.record()
    for name, table in tables.items():
        csv_path, md_path = outputs[name]
        write_csv(table, csv_path, record)
        write_markdown(f"# {titles[name]}\n\n{markdown_table(table)}", md_path, record)
    ctx.log(f"tables {', '.join(tables)} from {runs.height} runs")


def _read_predictions(paths: Sequence[str]) -> pl.DataFrame:
    tables = [read_table(path) for path in paths]
    for path, table in zip(paths, tables, strict=True):
        if tuple(table.columns) != PREDICTION_COLUMNS:
            raise ConfigurationError(f"{path}: not a job-level predictions table")
    return pl.concat(tables)


@workflow_step
def trace_figure(
    runs_path: str,
    prediction_paths: Sequence[str],
    png_path: str,
    pdf_path: str,
    *,
    figure: str,
    trace: str,
    ctx: StepContext,
) -> None:
    """One per-log figure of :data:`TRACE_FIGURES`."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.prediction import figures

    if figure not in TRACE_FIGURES:
        raise ConfigurationError(f"unknown per-log figure {figure!r}; known: {TRACE_FIGURES}")
    if figure == "bsld_heatmap":
        plot = figures.bsld_heatmap_plot(read_table(runs_path), trace)
    else:
        kind = figure.removeprefix("ecdf_")
        plot = figures.prediction_ecdf_plot(_read_predictions(prediction_paths), trace,
                                            kind=kind)  # fmt: skip
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()))
    ctx.log(f"{trace}: figure {figure}")


@workflow_step
def study_figure(
    runs_path: str,
    png_path: str,
    pdf_path: str,
    *,
    figure: str,
    ctx: StepContext,
) -> None:
    """One all-log figure of :data:`STUDY_FIGURES` (needs at least two logs)."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.prediction import figures

    runs = read_table(runs_path)
    size: dict[str, float] = {}
    if figure == "pair_correlation":
        plot = figures.pair_correlation_plot(runs)
        # one facet per pair of logs: about 2.6 x 2.4 inches each
        logs = runs["trace"].n_unique()
        pairs = logs * (logs - 1) // 2
        columns = math.ceil(math.sqrt(pairs))
        rows = math.ceil(pairs / columns)
        size = {"width_in": max(7.0, 2.6 * columns + 2.0),
                "height_in": max(4.5, 2.4 * rows + 1.5)}  # fmt: skip
    elif figure == "correlation_matrix":
        plot = figures.correlation_matrix_plot(runs)
    else:
        raise ConfigurationError(f"unknown study figure {figure!r}; known: {STUDY_FIGURES}")
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()), **size)
    ctx.log(f"figure {figure} over {runs['trace'].n_unique()} logs")


@workflow_step
def draw_week(
    filtered_path: str,
    runs_path: str,
    png_path: str,
    pdf_path: str,
    *,
    trace: str,
    processors: str,
    reservation: str,
    whole_seconds: bool,
    learner: Mapping[str, Any],
    ctx: StepContext,
) -> None:
    """The representative week of the study (PNG and PDF) on one log: EASY (requested times,
    FCFS backfilling) and the best triple with a real prediction technique
    (:func:`~scheduler.studies.prediction.stats.week_triple`, read from the runs table), both
    simulated again on the whole log as :func:`simulate_technique` does, drawn stacked over the
    week where their mean bounded slowdowns differ most
    (:func:`~scheduler.studies.common.gantt.week_figure`), runs coloured by how their prediction
    at submission compares with their run time."""
    from scheduler.studies.common.gantt import week_figure
    from scheduler.studies.prediction.plan import EASY
    from scheduler.studies.prediction.stats import week_triple

    started = time.perf_counter()
    machine_procs = table_machine_procs(filtered_path)
    table = with_processor_count(read_table(filtered_path), processors, machine_procs)
    runs = read_table(runs_path).filter(pl.col("trace") == trace)
    triple = week_triple(runs, trace)
    panels = []
    for shown in (EASY, triple):
        row = runs.filter(pl.col("triple") == shown.label)
        if row.height == 0:
            raise ConfigurationError(f"{runs_path}: no run of {shown.label} on {trace}")
        result = _simulate_triple(
            table, machine_procs, predictor=row["predictor"][0], loss=row["loss"][0],
            correction=shown.correction, backfill=shown.backfill, reservation=reservation,
            whole_seconds=whole_seconds, learner=learner,
        )  # fmt: skip
        name = "EASY" if shown == EASY else shown.label
        panels.append((f"{name}: AVEbsld {result.summary.avg_bsld:.2f} over the log", result))
    title = f"{trace}: the week of the largest difference in mean bounded slowdown"
    record = flat_record(ctx.record(triple=triple.label))
    window = week_figure(panels, (png_path, pdf_path), colour_by="prediction", title=title,
                         provenance=record)  # fmt: skip
    ctx.log(f"{trace}: {panels[0][0]} against {panels[1][0]}, week [{window[0]:.0f}, "
            f"{window[1]:.0f}) s drawn in {time.perf_counter() - started:.1f} s")  # fmt: skip
