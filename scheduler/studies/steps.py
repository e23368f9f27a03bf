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

import numpy as np
import polars as pl

from scheduler.campaign import WEEKLY_COLUMNS, simulate_weeks, week_arrays, weeks_to_copy
from scheduler.download import TraceSource, fetch_trace
from scheduler.errors import ConfigurationError, SchedlabError, TableError
from scheduler.filters import strong_filter
from scheduler.online import long_trace, run_online, simulated_period_costs, trace_arrays
from scheduler.provenance import provenance, write_csv, write_json, write_markdown, write_parquet
from scheduler.resample import name_hash, resample_weeks, split_at_midpoint
from scheduler.selectors import make_selector, parse_spec
from scheduler.swf import read_swf

# The statistics and plotting modules (statsmodels, plotnine: about 1.5 s of imports) are imported
# inside the table and figure steps only: Snakemake imports this module at every start, once per
# job on a cluster, and the simulation jobs never need them.

__all__ = [
    "MACHINE_PROCS_KEY",
    "StepError",
    "collect_weekly",
    "download_trace",
    "filter_trace",
    "make_long_trace",
    "online_figure",
    "online_run",
    "online_tables",
    "period_costs",
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


@contextlib.contextmanager
def _reading_table(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn polars' error on an unreadable parquet file (which does not name the file) into a
    :class:`TableError` naming it."""
    try:
        yield
    except pl.exceptions.PolarsError as error:
        raise TableError(f"{path}: not a readable parquet table ({error})") from error


def _read_table(path: str | os.PathLike[str]) -> pl.DataFrame:
    """A parquet table written by an earlier step (:func:`_reading_table` errors)."""
    with _reading_table(path):
        return pl.read_parquet(path)


def _machine_procs(path: str | os.PathLike[str]) -> int:
    with _reading_table(path):
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
        jobs = _read_table(filtered_path)
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
        jobs = _read_table(split_path)
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


#: How a table file of each kind becomes checked kernel arrays.
_ARRAY_BUILDERS: dict[str, Callable[..., Any]] = {"weeks": week_arrays, "long_trace": trace_arrays}


@functools.lru_cache(maxsize=4)
def _cached_kernel_arrays(kind: str, path: str, stamp: tuple[int, int]) -> tuple[Any, int]:
    procs = _machine_procs(path)
    return _ARRAY_BUILDERS[kind](_read_table(path), procs, source=path), procs


def _kernel_arrays(kind: str, path: str) -> tuple[Any, int]:
    """A weeks batch or a long trace as kernel arrays and the machine size (processors).

    Read and checked once per process and shared by the jobs that run in it (Snakemake's
    thread mode runs the many jobs over one file back to back); the file's (mtime, size)
    stamp invalidates the cache when it is rewritten.
    """
    status = os.stat(path)
    return _cached_kernel_arrays(kind, os.path.abspath(path), (status.st_mtime_ns, status.st_size))


def _optional_path(path: str | Sequence[str] | None) -> str | None:
    """A Snakemake input that is a path or an empty list (no such input) as a path or None."""
    if path is None or isinstance(path, str):
        return path
    return path[0] if path else None


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
        weeks, procs = _kernel_arrays("weeks", weeks_path)
        unthresholded_path = _optional_path(unthresholded_path)
        unthresholded = None if unthresholded_path is None else _read_table(unthresholded_path)
        table = simulate_weeks(
            weeks, procs, primary=primary, backfill=backfill, threshold=threshold,
            threshold_s=threshold_s, trace=trace, split=split, unthresholded=unthresholded,
        )  # fmt: skip
        reused = 0
        if unthresholded is not None:
            reused = int(weeks_to_copy(unthresholded["max_wait_s"].to_numpy(), threshold_s).sum())
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
    tables = [_read_table(path) for path in paths]
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
    from scheduler.stats import Baseline, add_relative_columns

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
    from scheduler.stats import Baseline, markdown_table, summarize_configs

    with rule_log(log_path) as log:
        summary = summarize_configs(_read_table(weekly_path), Baseline(**baseline))
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
    from scheduler.stats import Baseline, markdown_table, train_test_protocol

    with rule_log(log_path) as log:
        weekly = pl.concat([_read_table(path) for path in weekly_paths])
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


#: Per-trace figures: name -> builder of (plots module, weekly table, summary table, trace,
#: settings); the module is passed in so that it is imported only when a figure is drawn.
_TRACE_FIGURES: dict[str, Callable[..., Any]] = {
    "weekly_avg_wait": lambda plots, weekly, summary, trace, s: plots.weekly_avg_wait_plot(
        weekly, trace, backfill=s["weekly_backfill"], threshold=s["baseline_threshold"],
        weeks=s["weeks"], relative=False,
    ),
    "weekly_relative_avg_wait": lambda plots, weekly, summary, trace, s: plots.weekly_avg_wait_plot(
        weekly, trace, backfill=s["weekly_backfill"], threshold=s["baseline_threshold"],
        weeks=s["weeks"], relative=True,
    ),
    "pairs_worst_max_wait": lambda plots, weekly, summary, trace, s: plots.pair_scatter_plot(
        summary, trace, threshold=s["baseline_threshold"], max_wait="worst"
    ),
    "pairs_mean_max_wait": lambda plots, weekly, summary, trace, s: plots.pair_scatter_plot(
        summary, trace, threshold=s["baseline_threshold"], max_wait="mean"
    ),
    "backfill_by_primary": lambda plots, weekly, summary, trace, s: plots.backfill_facet_plot(
        summary, trace, threshold=s["baseline_threshold"]
    ),
    "thresholded_primary": lambda plots, weekly, summary, trace, s: plots.threshold_comparison_plot(
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
    from scheduler import plots

    with rule_log(log_path) as log:
        if figure not in _TRACE_FIGURES:
            raise ConfigurationError(f"unknown figure {figure!r}; known: {sorted(_TRACE_FIGURES)}")
        plot = _TRACE_FIGURES[figure](
            plots, _read_table(weekly_path), _read_table(summary_path), trace, settings
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
    from scheduler import plots

    with rule_log(log_path) as log:
        if figure == "protocol_by_threshold":
            plot = plots.protocol_threshold_plot(_read_table(protocol_path))
            size = {"height_in": 2.2 + 1.8 * _read_table(protocol_path)["trace"].n_unique()}
        elif figure == "train_test_pairs":
            summary = pl.concat([_read_table(path) for path in summary_paths])
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


# -- the online policy-selection study ------------------------------------------------------------


def make_long_trace(
    filtered_path: str,
    out_path: str,
    *,
    trace: str,
    replica: int,
    weeks: int,
    seed: int,
    method: str = "uniform",
    log_path: str | None = None,
) -> None:
    """Build long resampled trace ``replica`` (``weeks`` resampled weeks end to end)."""
    with rule_log(log_path) as log:
        jobs = _read_table(filtered_path)
        table = long_trace(jobs, replica, weeks=weeks, seed=seed, trace=trace, method=method)  # type: ignore[arg-type]
        config = {"trace": trace, "replica": replica, "weeks": weeks, "seed": seed,
                  "method": method}  # fmt: skip
        write_parquet(
            table, out_path, provenance(config, step="long_trace"),
            _procs_meta(_machine_procs(filtered_path)),
        )  # fmt: skip
        log(f"{trace} replica {replica}: {weeks} weeks, {table.height:,} jobs")


def period_costs(
    trace_path: str,
    out_path: str,
    *,
    trace: str,
    replica: int,
    period: str,
    period_s: float,
    policies: Sequence[str],
    threshold_s: float,
    log_path: str | None = None,
) -> None:
    """Simulated feedback of a long trace: w(t; P) for every period t and policy P."""
    with rule_log(log_path) as log:
        started = time.perf_counter()
        arrays, procs = _kernel_arrays("long_trace", trace_path)
        costs = simulated_period_costs(
            arrays, procs, tuple(policies), period_s=period_s, threshold_s=threshold_s
        )
        table = pl.DataFrame(
            {"period_index": np.arange(costs.shape[0], dtype=np.int64)}
            | {policy: costs[:, k] for k, policy in enumerate(policies)}
        )
        config = {"trace": trace, "replica": replica, "period": period,
                  "policies": list(policies), "threshold_s": threshold_s}  # fmt: skip
        write_parquet(table, out_path, provenance(config, step="period_costs"))
        log(f"{trace} replica {replica} Δ={period}: {costs.shape[0]} periods × "
            f"{len(policies)} policies in {time.perf_counter() - started:.1f} s")  # fmt: skip


def online_run(
    trace_path: str,
    curve_path: str,
    choices_path: str,
    *,
    trace: str,
    replica: int,
    strategy: str,
    period: str,
    period_s: float,
    policies: Sequence[str],
    threshold_s: float,
    seed: int,
    options: Mapping[str, Any] | None = None,
    costs_path: str | Sequence[str] | None = None,
    log_path: str | None = None,
) -> None:
    """One live run of a strategy (a selector spec) on a long trace: daily cumulative waits
    and the policy chosen in every period."""
    with rule_log(log_path) as log:
        started = time.perf_counter()
        arrays, procs = _kernel_arrays("long_trace", trace_path)
        rng = np.random.default_rng(
            np.random.SeedSequence(
                [seed, name_hash(trace), replica, name_hash(strategy), name_hash(period)]
            )
        )
        selector = make_selector(strategy, tuple(policies), rng=rng, **dict(options or {}))
        costs_path = _optional_path(costs_path)
        costs = None
        if costs_path is not None:
            costs = _read_table(costs_path).select(list(policies)).to_numpy()
        result = run_online(
            arrays, procs, selector, period_s=period_s, threshold_s=threshold_s, costs=costs
        )
        days = result.daily_cumulative_wait_s.size
        keys = {"trace": trace, "replica": replica, "strategy": strategy, "period": period}
        curve = pl.DataFrame(
            {
                **{k: [v] * days for k, v in keys.items()},
                "day": np.arange(days, dtype=np.int64),
                "cumulative_wait_s": result.daily_cumulative_wait_s,
                "finished_jobs": result.daily_finished_jobs.astype(np.int64),
            }
        )
        periods = len(result.choices)
        columns = {
            **{k: [v] * periods for k, v in keys.items()},
            "period_index": np.arange(periods, dtype=np.int64),
            "policy": list(result.choices),
        }
        if selector.needs_simulation:
            # the cost vector each period's feedback gave (noisy: with its noise), policy order
            costs_by_period = {e["period"]: e.get("costs") for e in selector.history}
            columns["costs_s"] = [costs_by_period.get(t) for t in range(periods)]
        choices = pl.DataFrame(columns)
        config = {**keys, "threshold_s": threshold_s, "seed": seed,
                  "options": dict(options or {})}  # fmt: skip
        record = provenance(config, step="online_run")
        write_parquet(curve, curve_path, record)
        write_parquet(choices, choices_path, record)
        log(f"{trace} replica {replica} {selector.name} Δ={period}: W = "
            f"{result.total_wait_s:.6g} s over {arrays.jobs:,} jobs, {periods} periods, "
            f"{time.perf_counter() - started:.2f} s")  # fmt: skip


def online_tables(
    curve_paths: Sequence[str],
    choice_paths: Sequence[str],
    outputs: Mapping[str, str],
    *,
    reference: str,
    confidence: float,
    seed: int,
    log_path: str | None = None,
) -> None:
    """The online study's tables: ε by leave-one-trace-out vote, relative total-wait changes
    of every strategy (bootstrap CIs, paired tests vs the best fixed policy, Holm), the fixed-
    policy and strategy tables, improvement curves and choice shares for the figures.

    ``outputs`` maps ``epsilon_csv, epsilon_md, changes_parquet, changes_csv, fixed_md,
    strategies_md, improvement_parquet, shares_parquet`` to paths.
    """
    from scheduler import online_stats
    from scheduler.stats import markdown_table

    with rule_log(log_path) as log:
        curves = pl.concat([_read_table(path) for path in curve_paths])
        choices = pl.concat([_read_table(path) for path in choice_paths], how="diagonal_relaxed")
        totals = online_stats.run_totals(curves)
        epsilon = online_stats.choose_epsilon(totals)
        changes = online_stats.relative_changes(
            totals, reference=reference, chosen_epsilon=epsilon, confidence=confidence,
            seed=seed,
        )  # fmt: skip
        record = provenance(
            {"reference": reference, "confidence": confidence, "seed": seed}, step="online"
        )
        write_csv(epsilon, outputs["epsilon_csv"], record)
        write_markdown(
            "# ε of the bandit, leave-one-trace-out majority vote\n\n" + markdown_table(epsilon),
            outputs["epsilon_md"], record,
        )  # fmt: skip
        write_parquet(changes, outputs["changes_parquet"], record)
        write_csv(changes, outputs["changes_csv"], record)
        title = "# Relative total-wait change vs EASY(FCFS, 40 h) over the resampled traces\n\n"
        fixed = markdown_table(online_stats.fixed_policy_table(changes))
        write_markdown(title + "## Fixed policies\n\n" + fixed, outputs["fixed_md"], record)
        write_markdown(
            title + "## Strategies\n\n" + markdown_table(online_stats.strategy_table(changes)),
            outputs["strategies_md"], record,
        )  # fmt: skip
        write_parquet(online_stats.improvement_curves(curves, reference=reference),
                      outputs["improvement_parquet"], record)  # fmt: skip
        # fixed policies never switch: shares are for the selectors
        selectors = choices.filter(pl.col("period") != "none")
        write_parquet(online_stats.choice_shares(selectors), outputs["shares_parquet"], record)
        log(f"{totals.height} runs over {totals['trace'].n_unique()} traces summarised")


#: Selectors whose choices the ``choice_shares`` figure shows, the first one run (beside the
#: bandit with the leave-one-trace-out ε).
CHOICE_SHARE_SELECTORS = ("noisy", "full")


def draws_choice_shares(specs: Sequence[str]) -> bool:
    """Whether an online study running these selector specs has a ``choice_shares`` figure:
    one of :data:`CHOICE_SHARE_SELECTORS` or a bandit is among them."""
    shown = {*CHOICE_SHARE_SELECTORS, "bandit"}
    return any(parse_spec(spec)[0] in shown for spec in specs)


def online_figure(
    figure: str,
    trace: str,
    improvement_path: str,
    shares_path: str,
    changes_path: str,
    png_path: str,
    pdf_path: str,
    *,
    log_path: str | None = None,
) -> None:
    """One figure of the online study for one trace: ``fixed_improvement``,
    ``selector_improvement_<period>`` or ``choice_shares_<period>``."""
    from scheduler import online_plots, online_stats, plots

    with rule_log(log_path) as log:
        changes = _read_table(changes_path).filter(pl.col("trace") == trace)
        improvement = _read_table(improvement_path)
        kind, _, period = figure.rpartition("_")
        bandit_rows = changes.filter(
            (pl.col("strategy") == online_stats.LOTO_BANDIT) & (pl.col("period") == period)
        )
        bandit = bandit_rows["source"][0] if bandit_rows.height else None
        best_rows = changes.filter(pl.col("strategy") == online_stats.BEST_FIXED)
        best_fixed = best_rows["source"][0] if best_rows.height else None
        if figure == "fixed_improvement":
            plot = online_plots.fixed_improvement_plot(improvement, trace)
        elif kind == "selector_improvement":
            plot = online_plots.selector_improvement_plot(
                improvement, trace, period=period, bandit=bandit, best_fixed=best_fixed
            )
        elif kind == "choice_shares":
            shares = _read_table(shares_path)
            run = set(shares.filter((pl.col("trace") == trace) & (pl.col("period") == period))[
                "strategy"])  # fmt: skip
            # the noisy selector's choices (the study's figure); without it, the exact ones
            panels = next(((name,) for name in CHOICE_SHARE_SELECTORS if name in run), ())
            plot = online_plots.choice_share_plot(
                shares, trace, strategies=panels, bandit=bandit, period=period
            )
        else:
            raise ConfigurationError(f"unknown online figure {figure!r}")
        record = provenance({"trace": trace, "figure": figure}, step="online_figure")
        plots.save_figure(plot, png_path, pdf_path, provenance=_flat(record))
        log(f"{trace}: {figure} drawn")
