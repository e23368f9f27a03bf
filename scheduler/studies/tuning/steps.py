"""The queue-tuning study's workflow steps (one function per rule of
``workflow/rules/tuning.smk``): simulate batches of weeks, aggregate, tables, figures, and the
whole-log table (given pairs simulated on the whole filtered log)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import write_csv, write_markdown, write_parquet
from scheduler.core.steps import StepContext, flat_record, read_table, workflow_step
from scheduler.sim.arrays import kernel_arrays
from scheduler.studies.tuning.schema import Baseline
from scheduler.studies.tuning.weeks import WEEKLY_COLUMNS, run_label, simulate_weeks

__all__ = [
    "STUDY_FIGURES",
    "TRACE_FIGURES",
    "bootstrap_batch",
    "collect_weekly",
    "draw_week",
    "simulate_batch",
    "simulate_whole_log",
    "study_figure",
    "summarize_trace",
    "tabulate_whole_log",
    "trace_figure",
    "tuning_protocol",
]


@workflow_step
def simulate_batch(
    weeks_path: str,
    out_path: str,
    *,
    trace: str,
    split: str,
    primary: str,
    backfill: str,
    thresholds: Sequence[tuple[str, float]],
    threshold_backfill: bool,
    slurm: Mapping[str, Any] | None,
    ctx: StepContext,
) -> None:
    """Simulate one (primary, backfill) under every threshold Θ of ``thresholds`` ((label,
    seconds) pairs) on every week of a batch; write the weekly figures, one row per (Θ, week)
    (:func:`scheduler.studies.tuning.weeks.simulate_weeks`; ``slurm``: the study's Slurm
    settings, :mod:`scheduler.studies.common.slurm`)."""
    started = time.perf_counter()
    weeks, procs = kernel_arrays("weeks", weeks_path)
    table = simulate_weeks(
        weeks, procs, primary=primary, backfill=backfill, thresholds=thresholds,
        trace=trace, split=split, threshold_backfill=threshold_backfill, slurm=slurm,
    )  # fmt: skip
    labels = [label for label, _ in thresholds]
    write_parquet(table, out_path, ctx.record())
    elapsed_s = time.perf_counter() - started
    ctx.log(f"{trace} {split} {run_label(primary, backfill)} Θ in {labels}: "
            f"{table.height // len(labels)} weeks, {int(table['jobs'].sum()):,} jobs, "
            f"{elapsed_s:.2f} s")  # fmt: skip


def _read_weekly(paths: Sequence[str]) -> pl.DataFrame:
    if not paths:
        raise ConfigurationError("no simulation results to aggregate")
    tables = [read_table(path) for path in paths]
    for path, table in zip(paths, tables, strict=True):
        if dict(table.schema) != WEEKLY_COLUMNS:
            raise ConfigurationError(f"{path}: not a weekly simulation table")
    return pl.concat(tables)


@workflow_step
def collect_weekly(
    sim_paths: Sequence[str],
    out_path: str,
    *,
    trace: str,
    baseline: Mapping[str, str],
    ctx: StepContext,
) -> None:
    """Gather a trace's simulated weeks into one table with values relative to the baseline
    (rows sorted by case and week: :func:`~scheduler.studies.tuning.stats.add_relative_columns`,
    whatever the files' order)."""
    from scheduler.studies.tuning.stats import add_relative_columns

    weekly = _read_weekly(sim_paths)
    relative = add_relative_columns(weekly, Baseline(**baseline))
    record = ctx.record()
    write_parquet(relative, out_path, record)
    ctx.log(f"{trace}: {len(sim_paths)} simulation files, {relative.height:,} weekly rows")


@workflow_step
def summarize_trace(
    weekly_path: str,
    parquet_path: str,
    csv_path: str,
    markdown_path: str,
    *,
    trace: str,
    baseline: Mapping[str, str],
    ctx: StepContext,
) -> None:
    """Per (split, pair, threshold) means, deciles and worst cases of one trace's weeks."""
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.tuning.stats import summarize_configs

    summary = summarize_configs(read_table(weekly_path), Baseline(**baseline))
    record = ctx.record()
    write_parquet(summary, parquet_path, record)
    write_csv(summary, csv_path, record)
    shown = summary.select(
        "split", "primary", "backfill", "threshold", "weeks", "mean_relative_avg_wait",
        "relative_avg_wait_d1", "relative_avg_wait_d9", "mean_avg_wait_s",
        "worst_max_wait_s", "mean_max_wait_s", "mean_relative_avg_bsld",
    )  # fmt: skip
    title = f"# {trace}: policy pairs relative to {Baseline(**baseline).name}\n\n"
    write_markdown(title + markdown_table(shown), markdown_path, record)
    ctx.log(f"{trace}: {summary.height} configurations summarised")


@workflow_step
def bootstrap_batch(
    weekly_path: str,
    split_path: str,
    out_path: str,
    *,
    trace: str,
    baseline: Mapping[str, str],
    first_replicate: int,
    last_replicate: int,
    weeks: int,
    seed: int,
    method: str,
    threshold_backfill: bool,
    alignment: str,
    slurm: Mapping[str, Any] | None,
    ctx: StepContext,
) -> None:
    """Source-week bootstrap replicates ``first..last`` of the test split for the pairs learned
    on the training weeks and the baseline (:mod:`scheduler.studies.tuning.bootstrap`;
    ``slurm``: the study's Slurm settings, :mod:`scheduler.studies.common.slurm`)."""
    from scheduler.core.steps import table_machine_procs
    from scheduler.studies.tuning.bootstrap import Configuration, bootstrap_replicates
    from scheduler.studies.tuning.stats import learned_pairs
    from scheduler.traces.calendar import check_week_alignment, table_calendar

    started = time.perf_counter()
    check_week_alignment(alignment, "tuning.week_alignment")
    calendar = table_calendar(split_path) if alignment == "calendar" else None
    weekly = read_table(weekly_path).filter(pl.col("trace") == trace)
    base = Baseline(**baseline)
    base_rows = weekly.filter(base.expr())
    if base_rows.height == 0:
        raise ConfigurationError(f"{weekly_path}: no week of the baseline {base.label}")
    configurations = [
        Configuration(row["primary"], row["backfill"], row["threshold"], row["threshold_s"])
        for row in learned_pairs(weekly).iter_rows(named=True)
    ]
    configurations.append(Configuration(base.primary, base.backfill, base.threshold,
                                        float(base_rows["threshold_s"][0])))  # fmt: skip
    table = bootstrap_replicates(
        read_table(split_path), table_machine_procs(split_path), configurations,
        replicates=range(first_replicate, last_replicate + 1), weeks=weeks, seed=seed,
        trace=trace, split="test", method=method, threshold_backfill=threshold_backfill,
        calendar=calendar, slurm=slurm,
    )  # fmt: skip
    write_parquet(table, out_path, ctx.record())
    ctx.log(f"{trace}: bootstrap replicates {first_replicate}..{last_replicate}, "
            f"{len(set(configurations))} configurations x {weeks} weeks, "
            f"{time.perf_counter() - started:.1f} s")  # fmt: skip


@workflow_step
def tuning_protocol(
    weekly_paths: Sequence[str],
    parquet_path: str,
    csv_path: str,
    markdown_path: str,
    *,
    baseline: Mapping[str, str],
    confidence: float,
    bootstrap_paths: Sequence[str],
    ctx: StepContext,
) -> None:
    """The train/test protocol over every trace: learned pair per threshold, ratio of means,
    differences, intervals and tests from the source-week bootstrap (when ``bootstrap_paths``)."""
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.tuning.schema import BOOTSTRAP_COLUMNS
    from scheduler.studies.tuning.stats import train_test_protocol

    weekly = pl.concat([read_table(path) for path in weekly_paths], how="diagonal_relaxed")
    bootstrap = None
    if bootstrap_paths:
        bootstrap = pl.concat([read_table(path).select(list(BOOTSTRAP_COLUMNS))
                               for path in bootstrap_paths])  # fmt: skip
    protocol = train_test_protocol(
        weekly, Baseline(**baseline), confidence=confidence, bootstrap=bootstrap
    )
    record = ctx.record()
    write_parquet(protocol, parquet_path, record)
    write_csv(protocol, csv_path, record)
    title = (
        "# Learned policy pair per trace and threshold (train → test), relative to "
        f"{Baseline(**baseline).name}\n\n"
        "Ratio of means: mean AvgWait of the pair / mean AvgWait of the baseline on the same "
        "weeks (the statistic the selection minimises on the training weeks). Intervals "
        f"({confidence:.0%}) and p-values: source-week bootstrap (estimate ± t(K − 1)·SE, K "
        "source weeks of the test half; the resampled weeks are not independent); p_holm: "
        "Holm over all rows. Times in hours.\n\n"
    )
    hours = [name for name in protocol.columns if name.endswith("_s") and name != "threshold_s"]
    shown = protocol.select(
        "trace", "threshold", "primary", "backfill", "train_weeks", "test_weeks",
        "train_ratio_of_means", "test_ratio_of_means", "test_ratio_ci_low",
        "test_ratio_ci_high", "test_mean_relative_avg_wait", *hours,
        "test_relative_worst_max_wait", "source_weeks", "bootstrap_replicates", "p_value",
        "p_holm", "significant",
    ).with_columns(
        *(pl.col(name) / 3600.0 for name in hours),
        *(pl.col(name).map_elements(lambda p: f"{p:.1e}", return_dtype=pl.String)
          for name in ("p_value", "p_holm")),
    ).rename({name: name.removesuffix("_s") + "_h" for name in hours})  # fmt: skip
    write_markdown(title + markdown_table(shown), markdown_path, record)
    ctx.log(f"{protocol.height} (trace, threshold) rows")


#: Per-trace figures: name -> builder of (plots module, weekly table, summary table, trace,
#: settings, baseline); the module is passed in so that it is imported only when a figure is
#: drawn. Short names: p plots, w weekly, m summary, t trace, s settings, b baseline. The weeks
#: are those of ``s["split"]`` (``tuning.figures.weeks_from``: "whole" or "train").
_TRACE_FIGURES: dict[str, Callable[..., Any]] = {
    "weekly_avg_wait": lambda p, w, m, t, s, b: p.weekly_avg_wait_plot(
        w, t, split=s["split"], backfill=s["weekly_backfill"], threshold=b.threshold,
        weeks=s["weeks"], relative=False, baseline=b,
    ),
    "weekly_relative_avg_wait": lambda p, w, m, t, s, b: p.weekly_avg_wait_plot(
        w, t, split=s["split"], backfill=s["weekly_backfill"], threshold=b.threshold,
        weeks=s["weeks"], relative=True, baseline=b,
    ),
    "pairs_worst_max_wait": lambda p, w, m, t, s, b: p.pair_scatter_plot(
        m, t, split=s["split"], threshold=b.threshold, max_wait="worst", baseline=b
    ),
    "pairs_mean_max_wait": lambda p, w, m, t, s, b: p.pair_scatter_plot(
        m, t, split=s["split"], threshold=b.threshold, max_wait="mean", baseline=b
    ),
    "backfill_by_primary": lambda p, w, m, t, s, b: p.backfill_facet_plot(
        m, t, split=s["split"], threshold=b.threshold, baseline=b
    ),
    "thresholded_primary": lambda p, w, m, t, s, b: p.threshold_comparison_plot(
        m, t, split=s["split"], backfill=s["thresholded_backfill"], threshold=s["threshold"],
        baseline=b,
    ),
}  # fmt: skip


@workflow_step
def trace_figure(
    weekly_path: str,
    summary_path: str,
    png_path: str,
    pdf_path: str,
    *,
    figure: str,
    trace: str,
    weeks: int,
    weekly_backfill: str,
    thresholded_backfill: str,
    threshold: str,
    baseline: Mapping[str, str],
    split: str,
    ctx: StepContext,
) -> None:
    """Draw one per-trace figure of the tuning study (PNG and PDF): ``weeks`` weeks in the
    weekly figures (backfilling ``weekly_backfill``), ``thresholded_backfill`` and
    ``threshold`` in the thresholded-policies figure, ``split`` the week source (the weekly and
    summary tables must hold it)."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.tuning import figures as plots

    if figure not in _TRACE_FIGURES:
        raise ConfigurationError(f"unknown figure {figure!r}; known: {sorted(_TRACE_FIGURES)}")
    settings = {"weeks": weeks, "weekly_backfill": weekly_backfill, "split": split,
                "thresholded_backfill": thresholded_backfill, "threshold": threshold}  # fmt: skip
    plot = _TRACE_FIGURES[figure](
        plots, read_table(weekly_path), read_table(summary_path), trace, settings,
        Baseline(**baseline),
    )
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()))
    ctx.log(f"{trace}: {figure} drawn")


#: The figures over every trace (one file each), drawn by :func:`study_figure`.
STUDY_FIGURES: tuple[str, ...] = ("protocol_by_threshold", "train_test_pairs")
#: The figures drawn per trace by :func:`trace_figure`, in the report's order.
TRACE_FIGURES: tuple[str, ...] = tuple(_TRACE_FIGURES)


@workflow_step
def study_figure(
    protocol_path: str,
    summary_paths: Sequence[str],
    png_path: str,
    pdf_path: str,
    *,
    figure: str,
    threshold: str,
    baseline: Mapping[str, str],
    ctx: StepContext,
) -> None:
    """Draw one figure over every trace: the protocol per threshold, or train → test pairs."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.tuning import figures as plots

    if figure not in STUDY_FIGURES:
        raise ConfigurationError(f"unknown study figure {figure!r}; known: {STUDY_FIGURES}")
    base = Baseline(**baseline)
    if figure == "protocol_by_threshold":
        protocol = read_table(protocol_path)
        plot = plots.protocol_threshold_plot(protocol, baseline=base)
        size = {"height_in": 2.2 + 1.8 * protocol["trace"].n_unique()}
    else:  # train_test_pairs: the pair learned at the threshold is marked
        summary = pl.concat([read_table(path) for path in summary_paths])
        plot = plots.train_test_pairs_plot(
            summary, threshold=threshold, baseline=base, learned=read_table(protocol_path)
        )
        size = {"height_in": 2.4 + 2.2 * summary["trace"].n_unique()}
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()), **size)
    ctx.log(f"{figure} drawn")


@workflow_step
def simulate_whole_log(
    filtered_path: str,
    out_path: str,
    *,
    trace: str,
    primary: str,
    backfill: str,
    threshold: str,
    threshold_s: float,
    threshold_backfill: bool,
    slurm: Mapping[str, Any] | None,
    ctx: StepContext,
) -> None:
    """Simulate EASY(primary, backfill, Θ) on a whole filtered log; write its one-row figures
    (:data:`~scheduler.studies.tuning.whole_log.WHOLE_LOG_RUN_COLUMNS`).

    The run is :func:`~scheduler.studies.tuning.whole_log.simulate_whole_log_case`: EASY with
    the study's reservation rule and the requested times as estimates, or conservative
    backfilling with the study's Slurm settings ``slurm`` when ``backfill`` is
    :data:`~scheduler.studies.common.config.CONSERVATIVE`.
    """
    from scheduler.core.steps import table_machine_procs
    from scheduler.studies.tuning.whole_log import simulate_whole_log_case, whole_log_run

    started = time.perf_counter()
    result = simulate_whole_log_case(
        read_table(filtered_path), table_machine_procs(filtered_path), primary=primary,
        backfill=backfill, threshold_s=threshold_s, threshold_backfill=threshold_backfill,
        slurm=slurm,
    )  # fmt: skip
    row = whole_log_run(
        result.summary, trace=trace, primary=primary, backfill=backfill,
        threshold=threshold, threshold_s=threshold_s,
    )  # fmt: skip
    write_parquet(row, out_path, ctx.record())
    ctx.log(f"{trace} whole log {run_label(primary, backfill)} Θ={threshold}: "
            f"{result.summary.jobs:,} jobs, AvgWait {result.summary.avg_wait_s:,.0f} s, "
            f"MaxWait {result.summary.max_wait_s:,.0f} s, "
            f"{time.perf_counter() - started:.2f} s")  # fmt: skip


@workflow_step
def tabulate_whole_log(
    run_paths: Sequence[str],
    parquet_path: str,
    csv_path: str,
    markdown_path: str,
    *,
    baseline: Mapping[str, str],
    ctx: StepContext,
) -> None:
    """The whole-log table: every run of :func:`simulate_whole_log` with AvgWait and MaxWait
    in seconds, hours and relative to the baseline's run on the same log."""
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.tuning.whole_log import whole_log_table

    if not run_paths:
        raise ConfigurationError("no whole-log runs to tabulate")
    base = Baseline(**baseline)
    table = whole_log_table(pl.concat([read_table(path) for path in run_paths]), base)
    record = ctx.record()
    write_parquet(table, parquet_path, record)
    write_csv(table, csv_path, record)
    shown = table.select(
        "trace", "primary", "backfill", "threshold", "jobs", "avg_wait_s", "avg_wait_h",
        "relative_avg_wait", "max_wait_s", "max_wait_h", "relative_max_wait",
    )  # fmt: skip
    title = (
        "# Policy pairs simulated on the whole filtered logs (no resampling), relative to "
        f"{base.name} on the same log\n\n"
    )
    write_markdown(title + markdown_table(shown), markdown_path, record)
    ctx.log(f"{table.height} whole-log runs on {table['trace'].n_unique()} logs")


def _case_label(primary: str, backfill: str, threshold: str) -> str:
    """A configuration as the week figure names it: ``EASY-SPF-SPF, Θ = 20h``."""
    label = run_label(primary, backfill)
    return label if threshold == "none" else f"{label}, Θ = {threshold}"


@workflow_step
def draw_week(
    filtered_path: str,
    protocol_path: str,
    png_path: str,
    pdf_path: str,
    *,
    trace: str,
    baseline: Mapping[str, str],
    baseline_threshold_s: float,
    threshold_backfill: bool,
    slurm: Mapping[str, Any] | None,
    ctx: StepContext,
) -> None:
    """The representative week of the study (PNG and PDF): the baseline and the tuned
    configuration (:func:`~scheduler.studies.tuning.stats.tuned_configuration`: the pair the
    protocol learned with the lowest training ratio of means) simulated on the whole filtered
    log of ``trace`` (:func:`~scheduler.studies.tuning.whole_log.simulate_whole_log_case`), drawn
    stacked over the week where their mean bounded slowdowns differ most
    (:func:`~scheduler.studies.common.gantt.week_figure`), runs coloured by whether they were
    backfilled. ``baseline_threshold_s``: the baseline's Θ in seconds (``inf``: none);
    ``slurm``: the study's Slurm settings, used by a conservative pair."""
    from scheduler.core.steps import table_machine_procs
    from scheduler.studies.common.gantt import week_figure
    from scheduler.studies.tuning.stats import tuned_configuration
    from scheduler.studies.tuning.whole_log import simulate_whole_log_case

    started = time.perf_counter()
    jobs = read_table(filtered_path)
    procs = table_machine_procs(filtered_path)
    base = Baseline(**baseline)
    tuned = tuned_configuration(read_table(protocol_path), trace)
    cases = [
        (base.primary, base.backfill, base.threshold, baseline_threshold_s),
        (tuned["primary"], tuned["backfill"], tuned["threshold"], tuned["threshold_s"]),
    ]
    panels = []
    for primary, backfill, threshold, threshold_s in cases:
        result = simulate_whole_log_case(
            jobs, procs, primary=primary, backfill=backfill, threshold_s=threshold_s,
            threshold_backfill=threshold_backfill, slurm=slurm,
        )  # fmt: skip
        label = _case_label(primary, backfill, threshold)
        panels.append((f"{label}: mean bsld {result.summary.avg_bsld:.2f} over the log", result))
    title = f"{trace}: the week of the largest difference in mean bounded slowdown"
    record = ctx.record(tuned=_case_label(tuned["primary"], tuned["backfill"], tuned["threshold"]))
    window = week_figure(panels, (png_path, pdf_path), colour_by="backfilled", title=title,
                         provenance=flat_record(record))  # fmt: skip
    ctx.log(f"{trace}: {panels[0][0]} against {panels[1][0]}, week [{window[0]:.0f}, "
            f"{window[1]:.0f}) s drawn in {time.perf_counter() - started:.1f} s")  # fmt: skip
