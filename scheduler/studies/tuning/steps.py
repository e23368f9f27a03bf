"""The queue-tuning study's workflow steps (one function per rule of
``workflow/rules/tuning.smk``): simulate batches of weeks, aggregate, tables, figures, and the
whole-log table (given pairs simulated on the whole filtered log)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import (
    provenance,
    write_csv,
    write_markdown,
    write_parquet,
)
from scheduler.core.steps import flat_record, read_table, rule_log
from scheduler.sim.arrays import kernel_arrays
from scheduler.studies.tuning.schema import Baseline
from scheduler.studies.tuning.weeks import WEEKLY_COLUMNS, simulate_weeks

__all__ = [
    "STUDY_FIGURES",
    "TRACE_FIGURES",
    "bootstrap_batch",
    "collect_weekly",
    "simulate_batch",
    "simulate_bundle",
    "simulate_whole_log",
    "study_figure",
    "summarize_trace",
    "tabulate_whole_log",
    "trace_figure",
    "tuning_protocol",
]


def simulate_batch(
    weeks_path: str,
    out_path: str,
    *,
    trace: str,
    split: str,
    primary: str,
    backfill: str,
    thresholds: Sequence[tuple[str, float]],
    threshold_backfill: bool = False,
    log_path: str | None = None,
) -> None:
    """Simulate one (primary, backfill) under every threshold Θ of ``thresholds`` ((label,
    seconds) pairs) on every week of a batch; write the weekly figures, one row per (Θ, week)
    (:func:`scheduler.studies.tuning.weeks.simulate_weeks`)."""
    with rule_log(log_path) as log:
        started = time.perf_counter()
        weeks, procs = kernel_arrays("weeks", weeks_path)
        table = simulate_weeks(
            weeks, procs, primary=primary, backfill=backfill, thresholds=thresholds,
            trace=trace, split=split, threshold_backfill=threshold_backfill,
        )  # fmt: skip
        labels = [label for label, _ in thresholds]
        config = {"trace": trace, "split": split, "primary": primary, "backfill": backfill,
                  "thresholds": labels, "weeks_file": os.fspath(weeks_path),
                  "threshold_backfill": threshold_backfill}  # fmt: skip
        write_parquet(table, out_path, provenance(config, step="simulate"))
        elapsed_s = time.perf_counter() - started
        log(f"{trace} {split} EASY-{primary}-{backfill} Θ in {labels}: "
            f"{table.height // len(labels)} weeks, {int(table['jobs'].sum()):,} jobs, "
            f"{elapsed_s:.2f} s")  # fmt: skip


def simulate_bundle(
    weeks_path: str,
    out_paths: Sequence[str],
    *,
    trace: str,
    split: str,
    pairs: Sequence[Mapping[str, Any]],
    threshold_backfill: bool = False,
    log_paths: Sequence[str] | None = None,
) -> None:
    """Several :func:`simulate_batch` jobs in one (the config key ``bundle``, for clusters,
    where each job pays Snakemake's start-up): pair ``i`` (a mapping with ``primary``,
    ``backfill`` and ``thresholds``) on the batch ``weeks_path`` writes ``out_paths[i]`` and logs
    to ``log_paths[i]``, exactly as its own job would, one pair after the other."""
    if len(out_paths) != len(pairs) or (log_paths is not None and len(log_paths) != len(pairs)):
        raise ConfigurationError(
            f"simulate_bundle: {len(pairs)} pairs, {len(out_paths)} outputs, "
            f"{'no' if log_paths is None else len(log_paths)} logs"
        )
    for index, pair in enumerate(pairs):
        simulate_batch(
            weeks_path, out_paths[index], trace=trace, split=split,
            primary=pair["primary"], backfill=pair["backfill"], thresholds=pair["thresholds"],
            threshold_backfill=threshold_backfill,
            log_path=None if log_paths is None else log_paths[index],
        )  # fmt: skip


def _read_weekly(paths: Sequence[str]) -> pl.DataFrame:
    if not paths:
        raise ConfigurationError("no simulation results to aggregate")
    tables = [read_table(path) for path in paths]
    for path, table in zip(paths, tables, strict=True):
        if dict(table.schema) != WEEKLY_COLUMNS:
            raise ConfigurationError(f"{path}: not a weekly simulation table")
    return pl.concat(tables)


def collect_weekly(
    sim_paths: Sequence[str],
    out_path: str,
    *,
    trace: str,
    baseline: Mapping[str, str],
    log_path: str | None = None,
) -> None:
    """Gather a trace's simulated weeks into one table with values relative to the baseline
    (rows sorted by case and week: :func:`~scheduler.studies.tuning.stats.add_relative_columns`,
    whatever the files' order)."""
    from scheduler.studies.tuning.stats import add_relative_columns

    with rule_log(log_path) as log:
        weekly = _read_weekly(sim_paths)
        relative = add_relative_columns(weekly, Baseline(**baseline))
        record = provenance({"trace": trace, "baseline": dict(baseline)}, step="collect")
        write_parquet(relative, out_path, record)
        log(f"{trace}: {len(sim_paths)} simulation files, {relative.height:,} weekly rows")


def summarize_trace(
    weekly_path: str,
    parquet_path: str,
    csv_path: str,
    markdown_path: str,
    *,
    trace: str,
    baseline: Mapping[str, str],
    log_path: str | None = None,
) -> None:
    """Per (split, pair, threshold) means, deciles and worst cases of one trace's weeks."""
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.tuning.stats import summarize_configs

    with rule_log(log_path) as log:
        summary = summarize_configs(read_table(weekly_path), Baseline(**baseline))
        record = provenance({"trace": trace, "baseline": dict(baseline)}, step="summarize")
        write_parquet(summary, parquet_path, record)
        write_csv(summary, csv_path, record)
        shown = summary.select(
            "split", "primary", "backfill", "threshold", "weeks", "mean_relative_avg_wait",
            "relative_avg_wait_d1", "relative_avg_wait_d9", "mean_avg_wait_s",
            "worst_max_wait_s", "mean_max_wait_s", "mean_relative_avg_bsld",
        )  # fmt: skip
        title = f"# {trace}: policy pairs relative to {Baseline(**baseline).name}\n\n"
        write_markdown(title + markdown_table(shown), markdown_path, record)
        log(f"{trace}: {summary.height} configurations summarised")


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
    method: str = "uniform",
    threshold_backfill: bool = False,
    alignment: str = "first_submit",
    log_path: str | None = None,
) -> None:
    """Source-week bootstrap replicates ``first..last`` of the test split for the pairs learned
    on the training weeks and the baseline (:mod:`scheduler.studies.tuning.bootstrap`)."""
    from scheduler.core.steps import table_machine_procs
    from scheduler.studies.tuning.bootstrap import Configuration, bootstrap_replicates
    from scheduler.studies.tuning.stats import learned_pairs
    from scheduler.traces.calendar import check_week_alignment, table_calendar

    with rule_log(log_path) as log:
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
            calendar=calendar,
        )  # fmt: skip
        config = {"trace": trace, "baseline": dict(baseline), "first_replicate": first_replicate,
                  "last_replicate": last_replicate, "weeks": weeks, "seed": seed,
                  "method": method, "threshold_backfill": threshold_backfill,
                  "alignment": alignment}  # fmt: skip
        write_parquet(table, out_path, provenance(config, step="bootstrap"))
        log(f"{trace}: bootstrap replicates {first_replicate}..{last_replicate}, "
            f"{len(set(configurations))} configurations x {weeks} weeks, "
            f"{time.perf_counter() - started:.1f} s")  # fmt: skip


def tuning_protocol(
    weekly_paths: Sequence[str],
    parquet_path: str,
    csv_path: str,
    markdown_path: str,
    *,
    baseline: Mapping[str, str],
    confidence: float,
    bootstrap_paths: Sequence[str] = (),
    log_path: str | None = None,
) -> None:
    """The train/test protocol over every trace: learned pair per threshold, ratio of means,
    differences, intervals and tests from the source-week bootstrap (when ``bootstrap_paths``)."""
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.tuning.schema import BOOTSTRAP_COLUMNS
    from scheduler.studies.tuning.stats import train_test_protocol

    with rule_log(log_path) as log:
        weekly = pl.concat([read_table(path) for path in weekly_paths], how="diagonal_relaxed")
        bootstrap = None
        if bootstrap_paths:
            bootstrap = pl.concat([read_table(path).select(list(BOOTSTRAP_COLUMNS))
                                   for path in bootstrap_paths])  # fmt: skip
        protocol = train_test_protocol(
            weekly, Baseline(**baseline), confidence=confidence, bootstrap=bootstrap
        )
        record = provenance({"baseline": dict(baseline), "confidence": confidence},
                            step="protocol")  # fmt: skip
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
        log(f"{protocol.height} (trace, threshold) rows")


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


def trace_figure(
    figure: str,
    weekly_path: str,
    summary_path: str,
    png_path: str,
    pdf_path: str,
    *,
    trace: str,
    log_path: str | None = None,
    **settings: Any,
) -> None:
    """Draw one per-trace figure of the tuning study (PNG and PDF).

    ``settings``: the figure settings of the workflow (``weeks``, ``weekly_backfill``,
    ``thresholded_backfill``, ``threshold``, ``baseline`` and ``split``, the week source: the
    weekly and summary tables must hold it); ``split`` defaults to ``"train"``."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.tuning import figures as plots

    with rule_log(log_path) as log:
        if figure not in _TRACE_FIGURES:
            raise ConfigurationError(f"unknown figure {figure!r}; known: {sorted(_TRACE_FIGURES)}")
        settings = {"split": "train", **settings}
        plot = _TRACE_FIGURES[figure](
            plots, read_table(weekly_path), read_table(summary_path), trace, settings,
            Baseline(**settings["baseline"]),
        )
        record = provenance({"trace": trace, "figure": figure, **settings}, step="figure")
        save_figure(plot, png_path, pdf_path, provenance=flat_record(record))
        log(f"{trace}: {figure} drawn")


#: The figures over every trace (one file each), drawn by :func:`study_figure`.
STUDY_FIGURES: tuple[str, ...] = ("protocol_by_threshold", "train_test_pairs")
#: The figures drawn per trace by :func:`trace_figure`, in the report's order.
TRACE_FIGURES: tuple[str, ...] = tuple(_TRACE_FIGURES)


def study_figure(
    figure: str,
    protocol_path: str,
    summary_paths: Sequence[str],
    png_path: str,
    pdf_path: str,
    *,
    threshold: str,
    baseline: Mapping[str, str],
    log_path: str | None = None,
) -> None:
    """Draw one figure over every trace: the protocol per threshold, or train → test pairs."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.tuning import figures as plots

    with rule_log(log_path) as log:
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
        record = provenance(
            {"figure": figure, "threshold": threshold, "baseline": dict(baseline)}, step="figure"
        )
        save_figure(plot, png_path, pdf_path, provenance=flat_record(record), **size)
        log(f"{figure} drawn")


def simulate_whole_log(
    filtered_path: str,
    out_path: str,
    *,
    trace: str,
    primary: str,
    backfill: str,
    threshold: str,
    threshold_s: float,
    threshold_backfill: bool = False,
    log_path: str | None = None,
) -> None:
    """Simulate EASY(primary, backfill, Θ) on a whole filtered log; write its one-row figures
    (:data:`~scheduler.studies.tuning.whole_log.WHOLE_LOG_RUN_COLUMNS`).

    The run is :func:`scheduler.simulate` without a predictor (its plain-EASY path,
    :func:`~scheduler.sim.engine.simulate_easy`) on the filtered jobs and machine size, with the
    study's reservation rule (``reservation="default"``, as every week of the study) and the
    requested times as estimates.
    """
    from scheduler.core.steps import table_machine_procs
    from scheduler.sim.engine import simulate_easy
    from scheduler.studies.tuning.whole_log import whole_log_run

    with rule_log(log_path) as log:
        started = time.perf_counter()
        jobs = read_table(filtered_path)
        procs = table_machine_procs(filtered_path)
        result = simulate_easy(
            jobs, primary, backfill, threshold_s, machine_procs=procs, reservation="default",
            threshold_backfill=threshold_backfill,
        )
        row = whole_log_run(
            result.summary, trace=trace, primary=primary, backfill=backfill,
            threshold=threshold, threshold_s=threshold_s,
        )  # fmt: skip
        config = {"trace": trace, "primary": primary, "backfill": backfill,
                  "threshold": threshold, "filtered_file": os.fspath(filtered_path),
                  "threshold_backfill": threshold_backfill}  # fmt: skip
        write_parquet(row, out_path, provenance(config, step="simulate_whole_log"))
        log(f"{trace} whole log EASY-{primary}-{backfill} Θ={threshold}: "
            f"{result.summary.jobs:,} jobs, AvgWait {result.summary.avg_wait_s:,.0f} s, "
            f"MaxWait {result.summary.max_wait_s:,.0f} s, "
            f"{time.perf_counter() - started:.2f} s")  # fmt: skip


def tabulate_whole_log(
    run_paths: Sequence[str],
    parquet_path: str,
    csv_path: str,
    markdown_path: str,
    *,
    baseline: Mapping[str, str],
    log_path: str | None = None,
) -> None:
    """The whole-log table: every run of :func:`simulate_whole_log` with AvgWait and MaxWait
    in seconds, hours and relative to the baseline's run on the same log."""
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.tuning.whole_log import whole_log_table

    with rule_log(log_path) as log:
        if not run_paths:
            raise ConfigurationError("no whole-log runs to tabulate")
        base = Baseline(**baseline)
        table = whole_log_table(pl.concat([read_table(path) for path in run_paths]), base)
        record = provenance({"baseline": dict(baseline)}, step="whole_log_table")
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
        log(f"{table.height} whole-log runs on {table['trace'].n_unique()} logs")
