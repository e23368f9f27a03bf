"""One function per workflow step: what each Snakemake rule calls.

The rules in ``workflow/rules/*.smk`` only name files and parameters; everything else happens
here, where the tests reach it. Each step

- logs a line per unit of work to the rule's log file (:func:`rule_log`),
- writes its outputs atomically with a provenance record (:mod:`scheduler.provenance`),
- turns a failure into one :class:`StepError` whose message ends with the log's path.

Tables between steps are parquet files; the machine size (processors) travels in their
metadata under ``schedlab.machine_procs``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from scheduler import plots
from scheduler.campaign import WEEKLY_COLUMNS, simulate_weeks, week_arrays
from scheduler.download import TraceSource, fetch_trace
from scheduler.errors import ConfigurationError, SchedlabError
from scheduler.filters import strong_filter
from scheduler.provenance import provenance, write_csv, write_json, write_markdown, write_parquet
from scheduler.resample import resample_weeks, split_at_midpoint
from scheduler.stats import (
    Baseline,
    add_relative_columns,
    markdown_table,
    summarize_configs,
    train_test_protocol,
)
from scheduler.swf import read_swf

__all__ = [
    "MACHINE_PROCS_KEY",
    "StepError",
    "collect_weekly",
    "download_trace",
    "filter_trace",
    "resample_batch",
    "rule_log",
    "simulate_batch",
    "split_trace",
    "study_figure",
    "summarize_trace",
    "trace_figure",
    "tuning_protocol",
]

MACHINE_PROCS_KEY = "schedlab.machine_procs"
Log = Callable[[str], None]


class StepError(SchedlabError):
    """A workflow step failed; the message names the cause and the step's log file."""


@contextlib.contextmanager
def rule_log(path: str | os.PathLike[str] | None) -> Iterator[Log]:
    """Yield a ``log(line)`` function appending time-stamped lines to ``path``.

    A :class:`~scheduler.errors.SchedlabError` or ``OSError`` raised inside the block is written
    to the log and re-raised as :class:`StepError` naming the log, so Snakemake prints one clear
    line (the file, line and field of a malformed trace come from the core's own message).
    """
    handle = None
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed in finally)

    def log(line: str) -> None:
        if handle is not None:
            handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")
            handle.flush()

    try:
        yield log
    except (SchedlabError, OSError) as error:
        log(f"error: {error}")
        raise StepError(f"{error} (log: {path})") from error
    finally:
        if handle is not None:
            handle.close()


def _machine_procs(path: str | os.PathLike[str]) -> int:
    meta = pl.read_parquet_metadata(path)
    if MACHINE_PROCS_KEY not in meta:
        raise ConfigurationError(f"{path}: no {MACHINE_PROCS_KEY} in its metadata")
    return int(meta[MACHINE_PROCS_KEY])


def _procs_meta(machine_procs: int) -> dict[str, str]:
    return {MACHINE_PROCS_KEY: str(int(machine_procs))}


def download_trace(
    *,
    trace: str,
    url: str,
    sha256: str | None,
    destination: str,
    report_path: str,
    mirror_dirs: Sequence[str] = (),
    offline: bool = False,
    retries: int = 3,
    timeout_s: float = 60.0,
    log_path: str | None = None,
) -> None:
    """Fetch a trace (mirror first, then the archive) and record where it came from."""
    with rule_log(log_path) as log:
        report = fetch_trace(
            TraceSource(trace, url, sha256), destination,
            mirror_dirs=mirror_dirs, offline=offline, retries=retries, timeout_s=timeout_s,
            log=log,
        )  # fmt: skip
        record = provenance({"trace": trace, "url": url, "sha256": sha256}, step="download")
        write_json(report.to_dict(), report_path, record)
        log(f"{trace}: {report.bytes:,} bytes from {report.origin}, sha256 {report.sha256}")


def filter_trace(
    swf_path: str,
    filtered_path: str,
    report_path: str,
    *,
    trace: str,
    machine_procs: int | None = None,
    log_path: str | None = None,
) -> None:
    """Read an SWF log, apply the strong filter, write the jobs (parquet) and the report."""
    with rule_log(log_path) as log:
        raw = read_swf(swf_path, machine_procs=machine_procs)
        filtered, report = strong_filter(raw)
        if filtered.jobs.height == 0:
            raise ConfigurationError(f"{trace}: the strong filter removed every job of {swf_path}")
        record = provenance({"trace": trace, "machine_procs": machine_procs}, step="filter")
        write_parquet(filtered.jobs, filtered_path, record, _procs_meta(filtered.machine_procs))
        write_json(report.to_dict(), report_path, record)
        log(f"{trace}: {report.jobs_in:,} jobs read, {report.jobs_out:,} kept "
            f"on {filtered.machine_procs:,} processors")  # fmt: skip


def split_trace(
    filtered_path: str, train_path: str, test_path: str, *, trace: str, log_path: str | None = None
) -> None:
    """Cut the filtered jobs at their temporal midpoint into train and test parts."""
    with rule_log(log_path) as log:
        jobs = pl.read_parquet(filtered_path)
        procs = _machine_procs(filtered_path)
        parts = split_at_midpoint(jobs, name=trace)
        for split, path in (("train", train_path), ("test", test_path)):
            record = provenance({"trace": trace, "split": split}, step="split")
            write_parquet(parts[split], path, record, _procs_meta(procs))
            log(f"{trace} {split}: {parts[split].height:,} jobs")


def resample_batch(
    split_path: str,
    out_path: str,
    *,
    trace: str,
    split: str,
    first_week: int,
    last_week: int,
    seed: int,
    method: str = "uniform",
    log_path: str | None = None,
) -> None:
    """Build resampled weeks ``first_week..last_week`` (inclusive) of one split."""
    with rule_log(log_path) as log:
        jobs = pl.read_parquet(split_path)
        weeks = resample_weeks(
            jobs, range(first_week, last_week + 1), seed=seed, trace=trace, split=split,
            method=method,
        )  # fmt: skip
        config = {"trace": trace, "split": split, "first_week": first_week,
                  "last_week": last_week, "seed": seed, "method": method}  # fmt: skip
        write_parquet(
            weeks, out_path, provenance(config, step="resample"),
            _procs_meta(_machine_procs(split_path)),
        )  # fmt: skip
        log(f"{trace} {split}: weeks {first_week}-{last_week}, {weeks.height:,} jobs")


@functools.lru_cache(maxsize=4)
def _cached_week_arrays(path: str, stamp: tuple[int, int]) -> tuple[Any, int]:
    """Weeks of a batch file as kernel arrays, shared by the jobs that run in one process
    (Snakemake's thread mode); ``stamp`` (mtime, size) invalidates a rewritten file."""
    procs = _machine_procs(path)
    return week_arrays(pl.read_parquet(path), procs, source=path), procs


def simulate_batch(
    weeks_path: str,
    out_path: str,
    *,
    trace: str,
    split: str,
    primary: str,
    backfill: str,
    threshold: str,
    threshold_s: float,
    unthresholded_path: str | Sequence[str] | None = None,
    log_path: str | None = None,
) -> None:
    """Simulate one (primary, backfill, Θ) on every week of a batch; write weekly figures.

    ``unthresholded_path``: the same batch simulated without threshold; its weeks whose MaxWait
    is <= Θ are copied instead of simulated (exactly equal, see
    :func:`scheduler.campaign.simulate_weeks`). An empty list means none.
    """
    with rule_log(log_path) as log:
        started = time.perf_counter()
        status = os.stat(weeks_path)
        weeks, procs = _cached_week_arrays(
            os.path.abspath(weeks_path), (status.st_mtime_ns, status.st_size)
        )
        if not isinstance(unthresholded_path, str):
            unthresholded_path = unthresholded_path[0] if unthresholded_path else None
        unthresholded = None if unthresholded_path is None else pl.read_parquet(unthresholded_path)
        table = simulate_weeks(
            weeks, procs, primary=primary, backfill=backfill, threshold=threshold,
            threshold_s=threshold_s, trace=trace, split=split, unthresholded=unthresholded,
        )  # fmt: skip
        reused = 0
        if unthresholded is not None:
            reused = int((unthresholded["max_wait_s"] <= threshold_s).sum())
        config = {"trace": trace, "split": split, "primary": primary, "backfill": backfill,
                  "threshold": threshold, "weeks_file": os.fspath(weeks_path)}  # fmt: skip
        write_parquet(table, out_path, provenance(config, step="simulate"))
        elapsed_s = time.perf_counter() - started
        log(f"{trace} {split} EASY-{primary}-{backfill} Θ={threshold}: {table.height} weeks "
            f"({reused} copied from Θ=none), {int(table['jobs'].sum()):,} jobs, "
            f"{elapsed_s:.2f} s")  # fmt: skip


def _read_weekly(paths: Sequence[str]) -> pl.DataFrame:
    if not paths:
        raise ConfigurationError("no simulation results to aggregate")
    tables = [pl.read_parquet(path) for path in paths]
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
    """Gather a trace's simulated weeks into one table with values relative to the baseline."""
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
    with rule_log(log_path) as log:
        summary = summarize_configs(pl.read_parquet(weekly_path), Baseline(**baseline))
        record = provenance({"trace": trace, "baseline": dict(baseline)}, step="summarize")
        write_parquet(summary, parquet_path, record)
        write_csv(summary, csv_path, record)
        shown = summary.select(
            "split", "primary", "backfill", "threshold", "weeks", "mean_relative_avg_wait",
            "relative_avg_wait_d1", "relative_avg_wait_d9", "mean_avg_wait_s",
            "worst_max_wait_s", "mean_max_wait_s", "mean_relative_avg_bsld",
        )  # fmt: skip
        title = f"# {trace}: policy pairs relative to the baseline\n\n"
        write_markdown(title + markdown_table(shown), markdown_path, record)
        log(f"{trace}: {summary.height} configurations summarised")


def tuning_protocol(
    weekly_paths: Sequence[str],
    parquet_path: str,
    csv_path: str,
    markdown_path: str,
    *,
    baseline: Mapping[str, str],
    confidence: float,
    log_path: str | None = None,
) -> None:
    """The train/test protocol over every trace: learned pair per threshold, CIs, tests."""
    with rule_log(log_path) as log:
        weekly = pl.concat([pl.read_parquet(path) for path in weekly_paths])
        protocol = train_test_protocol(weekly, Baseline(**baseline), confidence=confidence)
        record = provenance({"baseline": dict(baseline), "confidence": confidence},
                            step="protocol")  # fmt: skip
        write_parquet(protocol, parquet_path, record)
        write_csv(protocol, csv_path, record)
        title = "# Learned policy pair per trace and threshold (train → test)\n\n"
        p_values = [name for name in ("t_p_value", "sign_p_value", "p_holm") if name in protocol]
        shown = protocol.with_columns(
            pl.col(name).map_elements(lambda p: f"{p:.1e}", return_dtype=pl.String)
            for name in p_values
        )  # p-values in scientific notation: 0.000 would hide their size
        write_markdown(title + markdown_table(shown), markdown_path, record)
        log(f"{protocol.height} (trace, threshold) rows")


#: Per-trace figures: name -> builder of (weekly table, summary table, trace, settings).
_TRACE_FIGURES: dict[str, Callable[..., Any]] = {
    "weekly_avg_wait": lambda weekly, summary, trace, s: plots.weekly_avg_wait_plot(
        weekly, trace, backfill=s["weekly_backfill"], threshold=s["baseline_threshold"],
        weeks=s["weeks"], relative=False,
    ),
    "weekly_relative_avg_wait": lambda weekly, summary, trace, s: plots.weekly_avg_wait_plot(
        weekly, trace, backfill=s["weekly_backfill"], threshold=s["baseline_threshold"],
        weeks=s["weeks"], relative=True,
    ),
    "pairs_worst_max_wait": lambda weekly, summary, trace, s: plots.pair_scatter_plot(
        summary, trace, threshold=s["baseline_threshold"], max_wait="worst"
    ),
    "pairs_mean_max_wait": lambda weekly, summary, trace, s: plots.pair_scatter_plot(
        summary, trace, threshold=s["baseline_threshold"], max_wait="mean"
    ),
    "backfill_by_primary": lambda weekly, summary, trace, s: plots.backfill_facet_plot(
        summary, trace, threshold=s["baseline_threshold"]
    ),
    "thresholded_primary": lambda weekly, summary, trace, s: plots.threshold_comparison_plot(
        summary, trace, backfill=s["thresholded_backfill"], threshold=s["threshold"]
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
    """Draw one per-trace figure of the tuning study (PNG and PDF)."""
    with rule_log(log_path) as log:
        if figure not in _TRACE_FIGURES:
            raise ConfigurationError(f"unknown figure {figure!r}; known: {sorted(_TRACE_FIGURES)}")
        plot = _TRACE_FIGURES[figure](
            pl.read_parquet(weekly_path), pl.read_parquet(summary_path), trace, settings
        )
        record = provenance({"trace": trace, "figure": figure, **settings}, step="figure")
        plots.save_figure(plot, png_path, pdf_path, provenance=_flat(record))
        log(f"{trace}: {figure} drawn")


def study_figure(
    figure: str,
    protocol_path: str,
    summary_paths: Sequence[str],
    png_path: str,
    pdf_path: str,
    *,
    threshold: str,
    log_path: str | None = None,
) -> None:
    """Draw one figure over every trace: the protocol per threshold, or train → test pairs."""
    with rule_log(log_path) as log:
        if figure == "protocol_by_threshold":
            plot = plots.protocol_threshold_plot(pl.read_parquet(protocol_path))
            size = {"height_in": 2.2 + 1.8 * pl.read_parquet(protocol_path)["trace"].n_unique()}
        elif figure == "train_test_pairs":
            summary = pl.concat([pl.read_parquet(path) for path in summary_paths])
            plot = plots.train_test_pairs_plot(summary, threshold=threshold)
            size = {"height_in": 5.0}
        else:
            raise ConfigurationError(f"unknown study figure {figure!r}")
        record = provenance({"figure": figure, "threshold": threshold}, step="figure")
        plots.save_figure(plot, png_path, pdf_path, provenance=_flat(record), **size)
        log(f"{figure} drawn")


def _flat(record: Mapping[str, Any]) -> dict[str, str]:
    """A provenance record as string values (image metadata holds text only)."""
    return {key: value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            for key, value in record.items()}  # fmt: skip
