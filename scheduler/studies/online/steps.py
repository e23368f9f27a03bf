"""The online-selection study's workflow steps (one function per rule of
``workflow/rules/online.smk``): long traces, period costs, live runs, tables, figures."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import write_csv, write_markdown, write_parquet
from scheduler.core.steps import (
    StepContext,
    flat_record,
    procs_metadata,
    read_table,
    table_machine_procs,
    table_metadata,
    workflow_step,
)
from scheduler.sim.arrays import kernel_arrays
from scheduler.studies.online.live import (
    run_online,
    simulated_period_costs,
)
from scheduler.studies.online.long_traces import long_trace
from scheduler.studies.online.selectors import (
    EPSILON_GREEDY,
    SELECTORS,
    bandit_spec,
    make_selector,
    parse_spec,
)
from scheduler.traces.calendar import (
    check_week_alignment,
    table_calendar,
    table_calendar_metadata,
)
from scheduler.traces.resample import name_hash

__all__ = [
    "CHOICE_SHARE_SELECTORS",
    "WEEK_ALIGNMENT_KEY",
    "draw_week",
    "draws_choice_shares",
    "live_run",
    "long_trace_period_origin",
    "make_long_trace",
    "online_figure",
    "online_run",
    "online_tables",
    "period_costs",
]


#: Parquet metadata key of a long trace's week alignment (``calendar``: its time 0 is a local
#: Monday 00:00; ``first_submit``: an arbitrary instant).
WEEK_ALIGNMENT_KEY = "schedlab.week_alignment"


@workflow_step
def make_long_trace(
    filtered_path: str,
    out_path: str,
    *,
    trace: str,
    replica: int,
    weeks: int,
    seed: int,
    method: str,
    alignment: str,
    ctx: StepContext,
) -> None:
    """Build long resampled trace ``replica`` (``weeks`` resampled weeks end to end).

    ``alignment`` (``online.week_alignment``): ``"calendar"`` cuts the source weeks at Monday
    00:00 in the log's time zone (the calendar the filter step stored in the filtered table),
    ``"first_submit"`` every week from the log's first submission. The output's metadata records
    it (:data:`WEEK_ALIGNMENT_KEY`) beside the log's calendar.
    """
    check_week_alignment(alignment, "online.week_alignment")
    calendar = table_calendar(filtered_path) if alignment == "calendar" else None
    jobs = read_table(filtered_path)
    table = long_trace(
        jobs, replica, weeks=weeks, seed=seed, trace=trace, method=method,  # type: ignore[arg-type]
        calendar=calendar,
    )  # fmt: skip
    metadata = procs_metadata(table_machine_procs(filtered_path))
    metadata |= table_calendar_metadata(filtered_path) | {WEEK_ALIGNMENT_KEY: alignment}
    write_parquet(table, out_path, ctx.record(), metadata)
    clock = f"weeks from Monday 00:00, {calendar.describe()}" if calendar else "first_submit"
    ctx.log(f"{trace} replica {replica}: {weeks} weeks ({clock}), {table.height:,} jobs")


def long_trace_period_origin(trace_path: str, period_alignment: str) -> float | None:
    """The ``period_origin_s`` of :func:`~scheduler.studies.online.live.run_online` on a long
    trace: 0 (its time 0, a local Monday 00:00) for ``"calendar"``, ``None`` (its first
    submission) for ``"first_submit"``.

    Raises ConfigurationError for another value, or for calendar periods on a long trace whose
    weeks were not cut on the calendar (its time 0 is no midnight).
    """
    check_week_alignment(period_alignment, "online.period_alignment")
    if period_alignment == "first_submit":
        return None
    weeks = table_metadata(trace_path).get(WEEK_ALIGNMENT_KEY)
    if weeks != "calendar":
        raise ConfigurationError(
            f"{trace_path}: calendar periods (online.period_alignment: calendar) need a long "
            f"trace cut on the calendar (online.week_alignment: calendar), found {weeks!r}"
        )
    return 0.0


@workflow_step
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
    threshold_backfill: bool,
    period_alignment: str,
    slurm: Mapping[str, Any] | None,
    ctx: StepContext,
) -> None:
    """Simulated feedback of a long trace: w(t; P) for every period t and policy P
    (``threshold_backfill``: backfill in the thresholded order, ``online.threshold_backfill``;
    periods aligned as ``period_alignment`` says, see :func:`long_trace_period_origin`;
    ``slurm``: the multifactor policy's Slurm settings, :mod:`scheduler.studies.common.slurm`)."""
    started = time.perf_counter()
    origin = long_trace_period_origin(trace_path, period_alignment)
    arrays, procs = kernel_arrays("long_trace", trace_path)
    costs = simulated_period_costs(
        arrays, procs, tuple(policies), period_s=period_s, threshold_s=threshold_s,
        threshold_backfill=threshold_backfill,
        period_origin_s=origin, slurm=slurm,
    )  # fmt: skip
    table = pl.DataFrame(
        {"period_index": np.arange(costs.shape[0], dtype=np.int64)}
        | {policy: costs[:, k] for k, policy in enumerate(policies)}
    )
    write_parquet(table, out_path, ctx.record())
    ctx.log(f"{trace} replica {replica} Δ={period}: {costs.shape[0]} periods × "
            f"{len(policies)} policies in {time.perf_counter() - started:.1f} s")  # fmt: skip


@workflow_step
def online_run(
    trace_paths: Sequence[str],
    curve_path: str,
    choices_path: str,
    *,
    trace: str,
    replicas: Sequence[int],
    strategy: str,
    period: str,
    period_s: float,
    policies: Sequence[str],
    threshold_s: float,
    seed: int,
    threshold_backfill: bool,
    options: Mapping[str, Any],
    costs_paths: Sequence[str] = (),
    period_alignment: str,
    slurm: Mapping[str, Any] | None,
    ctx: StepContext,
) -> None:
    """The live runs of a strategy (a selector spec) on a batch of long traces: daily
    cumulative waits and the policy chosen in every period, one row set per replica
    (``trace_paths[k]`` is replica ``replicas[k]``, ``costs_paths[k]`` its period costs when
    the selector needs them; each replica's run as :func:`live_run` makes it, whatever the
    batch). Both tables are written once for the batch."""
    if len(trace_paths) != len(replicas) or len(costs_paths) not in (0, len(replicas)):
        raise ConfigurationError(
            f"online run {trace} {strategy}: {len(trace_paths)} long traces and "
            f"{len(costs_paths)} cost files for replicas {list(replicas)}"
        )
    curves, choices = [], []
    for k, (path, replica) in enumerate(zip(trace_paths, replicas, strict=True)):
        curve, chosen = live_run(
            path, trace=trace, replica=replica, strategy=strategy, period=period,
            period_s=period_s, policies=policies, threshold_s=threshold_s, seed=seed,
            threshold_backfill=threshold_backfill, options=options,
            costs_path=costs_paths[k] if costs_paths else None,
            period_alignment=period_alignment, slurm=slurm, log=ctx.log,
        )  # fmt: skip
        curves.append(curve)
        choices.append(chosen)
    record = ctx.record()
    write_parquet(pl.concat(curves), curve_path, record)
    write_parquet(pl.concat(choices, how="diagonal_relaxed"), choices_path, record)


def live_run(
    trace_path: str,
    *,
    trace: str,
    replica: int,
    strategy: str,
    period: str,
    period_s: float,
    policies: Sequence[str],
    threshold_s: float,
    seed: int,
    threshold_backfill: bool,
    options: Mapping[str, Any],
    costs_path: str | None,
    period_alignment: str,
    slurm: Mapping[str, Any] | None,
    log: Callable[[str], None],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One live run of a strategy (a selector spec) on a long trace: its daily cumulative waits
    (curve) and the policy chosen in every period (choices), keyed by trace, replica, strategy
    and period (``threshold_backfill``: EASY(P, Θ) backfills in the thresholded order,
    ``online.threshold_backfill``; periods and days aligned as ``period_alignment`` says, see
    :func:`long_trace_period_origin`; the costs must have been computed with the same;
    ``slurm``: the multifactor arm's Slurm settings). The selector's random stream is seeded
    by (seed, trace, replica, strategy, period) alone."""
    started = time.perf_counter()
    origin = long_trace_period_origin(trace_path, period_alignment)
    arrays, procs = kernel_arrays("long_trace", trace_path)
    rng = np.random.default_rng(
        np.random.SeedSequence(
            [seed, name_hash(trace), replica, name_hash(strategy), name_hash(period)]
        )
    )
    selector = make_selector(strategy, tuple(policies), rng=rng, **dict(options or {}))
    costs = None
    if costs_path is not None:
        costs = read_table(costs_path).select(list(policies)).to_numpy()
    result = run_online(
        arrays, procs, selector, period_s=period_s, threshold_s=threshold_s,
        threshold_backfill=threshold_backfill, costs=costs, period_origin_s=origin,
        slurm=slurm,
    )  # fmt: skip
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
    log(f"{trace} replica {replica} {selector.name} Δ={period}: W = "
        f"{result.total_wait_s:.6g} s over {arrays.jobs:,} jobs, {periods} periods, "
        f"{time.perf_counter() - started:.2f} s")  # fmt: skip
    return curve, pl.DataFrame(columns)


@workflow_step
def online_tables(
    curve_paths: Sequence[str],
    choice_paths: Sequence[str],
    *,
    changes_path: str,
    changes_csv_path: str,
    fixed_md_path: str,
    strategies_md_path: str,
    improvement_path: str,
    shares_path: str,
    epsilon_csv_path: str | None = None,
    epsilon_md_path: str | None = None,
    reference: str,
    threshold_s: float,
    confidence: float,
    seed: int,
    epsilons: Sequence[float],
    epsilon: float,
    epsilon_vote: str,
    ctx: StepContext,
) -> None:
    """The online study's tables: the bandit's ε (leave-one-trace-out vote, or the configured
    ε), relative total-wait changes of every strategy (bootstrap CIs, paired tests vs the
    cross-fitted best fixed policy, Holm), the fixed-policy and strategy tables, improvement
    curves (ending at the tables' values) and choice shares for the figures.

    The ε table's paths are needed only when ``epsilons`` is not empty. ``reference`` is the
    reference strategy ``"fixed:P"`` and ``threshold_s`` the EASY threshold in seconds
    (``OnlinePlan.reference``, ``OnlinePlan.threshold_s``): the reference's rows are 0 and the
    headers name it EASY(P, Θ).

    ``epsilons`` are the configured ε values of the bandit (``OnlinePlan.bandit_epsilons``),
    the only candidates of the vote; empty (no bandit selector): no ε table and no
    bandit-choice rows. ``epsilon_vote`` is
    ``online.epsilon_vote`` (``"pooled"``: one ε per held-out trace for every period, as
    published; ``"per_period"``; ``"configured"``) and ``epsilon`` the configured ε
    (``online.epsilon``), used with ``"configured"`` and for a single trace.
    """
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.online.changes import (
        STRATEGY_TABLE_NOTE,
        fixed_policy_table,
        relative_changes,
        strategy_table,
    )
    from scheduler.studies.online.curves import choice_shares, improvement_curves
    from scheduler.studies.online.epsilon import choose_epsilon
    from scheduler.studies.online.runs import reference_label, run_totals

    curves = pl.concat([read_table(path) for path in curve_paths])
    choices = pl.concat([read_table(path) for path in choice_paths], how="diagonal_relaxed")
    totals = run_totals(curves)
    if epsilons:
        candidates = [bandit_spec(float(eps)) for eps in epsilons]
        chosen = choose_epsilon(
            totals, candidates=candidates, vote=epsilon_vote,  # type: ignore[arg-type]
            configured=epsilon,
        )  # fmt: skip
    else:  # no bandit: an empty vote, so no bandit-choice row
        chosen = pl.DataFrame(
            schema={"period": pl.String, "held_out": pl.String, "chosen_strategy": pl.String}
        )
    changes = relative_changes(
        totals, reference=reference, chosen_epsilon=chosen, confidence=confidence,
        seed=seed,
    )  # fmt: skip
    record = ctx.record()
    if epsilons:
        if epsilon_csv_path is None or epsilon_md_path is None:
            raise ConfigurationError("online_tables: the bandit's ε table needs its two paths")
        write_csv(chosen, epsilon_csv_path, record)
        write_markdown(
            f"# ε of the bandit: {_epsilon_title(chosen)}\n\n" + markdown_table(chosen),
            epsilon_md_path, record,
        )  # fmt: skip
    write_parquet(changes, changes_path, record)
    write_csv(changes, changes_csv_path, record)
    label = reference_label(reference, threshold_s)
    title = f"# Relative total-wait change vs {label} over the resampled traces\n\n"
    fixed = markdown_table(fixed_policy_table(changes))
    write_markdown(title + "## Fixed policies\n\n" + fixed, fixed_md_path, record)
    write_markdown(
        title + "## Strategies\n\n" + markdown_table(strategy_table(changes))
        + "\n" + STRATEGY_TABLE_NOTE + "\n",
        strategies_md_path, record,
    )  # fmt: skip
    write_parquet(improvement_curves(curves, reference=reference),
                  improvement_path, record)  # fmt: skip
    # fixed policies never switch: shares are for the selectors
    selectors = choices.filter(pl.col("period") != "none")
    write_parquet(choice_shares(selectors), shares_path, record)
    ctx.log(f"{totals.height} runs over {totals['trace'].n_unique()} traces summarised")


def _epsilon_title(chosen: pl.DataFrame) -> str:
    """What the ε table's rows are: voted (how) or configured."""
    hows = set(chosen["how"]) if chosen.height else set()
    if hows == {"configured"}:
        return "the configured ε (online.epsilon; a single trace cannot vote)"
    if hows == {"vote (per Δ)"}:
        return "leave-one-trace-out majority vote, per policy period Δ"
    return (
        "leave-one-trace-out majority vote over the other traces' best ε at every policy "
        "period Δ (one ε per trace for all Δ, as published)"
    )


#: Selectors whose choices the ``choice_shares`` figure shows, the first one run (beside the
#: bandit with the leave-one-trace-out ε): the registered kinds with simulated feedback, the
#: last registered first (``noisy``, the study's figure, then the exact ``full``).
CHOICE_SHARE_SELECTORS: tuple[str, ...] = tuple(
    reversed([name for name, kind in SELECTORS.items() if kind.needs_simulation])
)


def draws_choice_shares(specs: Sequence[str]) -> bool:
    """Whether an online study running these selector specs has a ``choice_shares`` figure:
    one of :data:`CHOICE_SHARE_SELECTORS` or a bandit is among them."""
    shown = {*CHOICE_SHARE_SELECTORS, EPSILON_GREEDY}
    return any(parse_spec(spec)[0] in shown for spec in specs)


@workflow_step
def online_figure(
    improvement_path: str,
    shares_path: str,
    changes_path: str,
    png_path: str,
    pdf_path: str,
    *,
    figure: str,
    trace: str,
    reference: str,
    threshold_s: float,
    ctx: StepContext,
) -> None:
    """One figure of the online study for one trace: ``fixed_improvement``,
    ``selector_improvement_<period>`` or ``choice_shares_<period>``. ``reference`` (``"fixed:P"``)
    and ``threshold_s`` (seconds) name the reference EASY(P, Θ) the improvements are against
    (``OnlinePlan.reference``, ``OnlinePlan.threshold_s``)."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.online import figures as online_plots
    from scheduler.studies.online.runs import BANDIT_CHOICES, BEST_FIXED, CONFIGURED_BANDIT

    changes = read_table(changes_path).filter(pl.col("trace") == trace)
    improvement = read_table(improvement_path)
    kind, _, period = figure.rpartition("_")
    bandit_rows = changes.filter(
        pl.col("strategy").is_in(list(BANDIT_CHOICES)) & (pl.col("period") == period)
    )
    bandit = bandit_rows["source"][0] if bandit_rows.height else None
    configured = bool(bandit_rows.height) and bandit_rows["strategy"][0] == CONFIGURED_BANDIT
    best_rows = changes.filter(pl.col("strategy") == BEST_FIXED)
    best_fixed = best_rows["source"][0] if best_rows.height else None
    if figure == "fixed_improvement":
        plot = online_plots.fixed_improvement_plot(
            improvement, trace, reference=reference, threshold_s=threshold_s
        )
    elif kind == "selector_improvement":
        plot = online_plots.selector_improvement_plot(
            improvement, trace, period=period, bandit=bandit, best_fixed=best_fixed,
            reference=reference, threshold_s=threshold_s, configured_epsilon=configured,
        )  # fmt: skip
    elif kind == "choice_shares":
        shares = read_table(shares_path)
        run = set(shares.filter((pl.col("trace") == trace) & (pl.col("period") == period))[
            "strategy"])  # fmt: skip
        # the noisy selector's choices (the study's figure); without it, the exact ones
        panels = next(((name,) for name in CHOICE_SHARE_SELECTORS if name in run), ())
        plot = online_plots.choice_share_plot(
            shares, trace, strategies=panels, bandit=bandit, period=period,
            configured_epsilon=configured,
        )  # fmt: skip
    else:
        raise ConfigurationError(f"unknown online figure {figure!r}")
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()))
    ctx.log(f"{trace}: {figure} drawn")


@workflow_step
def draw_week(
    trace_path: str,
    changes_path: str,
    choice_paths: Sequence[str],
    png_path: str,
    pdf_path: str,
    *,
    trace: str,
    replica: int,
    reference: str,
    period_seconds: Mapping[str, float],
    threshold_s: float,
    threshold_backfill: bool,
    period_alignment: str,
    slurm: Mapping[str, Any] | None,
    ctx: StepContext,
) -> None:
    """The representative week of the study (PNG and PDF) on one replica's long trace: the
    reference and the strategy that beats it most over the replicas
    (:func:`~scheduler.studies.online.runs.best_run`, read from the changes table), both
    replayed from their recorded choices (:func:`~scheduler.studies.online.live.replay_online`:
    the live runs' schedules, job for job), drawn stacked over the week where their mean
    bounded slowdowns differ most (:func:`~scheduler.studies.common.gantt.week_figure`), runs
    coloured by whether they were backfilled.

    ``choice_paths``: the choices of every run on ``trace`` whose batch holds ``replica`` (the
    step reads the two it draws); ``period_seconds``: each period label's length in seconds
    (``none``: the fixed policies' pace); the other settings as the live runs'
    (:func:`online_run`)."""
    from scheduler.studies.common.gantt import week_figure
    from scheduler.studies.online.live import online_result, replay_online
    from scheduler.studies.online.runs import best_run, display_name, reference_label

    started = time.perf_counter()
    origin = long_trace_period_origin(trace_path, period_alignment)
    arrays, procs = kernel_arrays("long_trace", trace_path)
    best = best_run(read_table(changes_path), trace, reference)
    choices = pl.concat([read_table(path) for path in choice_paths], how="diagonal_relaxed")
    panels = []
    for strategy, period in ((reference, "none"), best):
        chosen = choices.filter(
            (pl.col("trace") == trace) & (pl.col("replica") == replica)
            & (pl.col("strategy") == strategy) & (pl.col("period") == period)
        ).sort("period_index")  # fmt: skip
        if chosen.height == 0:
            raise ConfigurationError(
                f"online week: no choices of {strategy} (period {period}) on {trace} replica "
                f"{replica} among {len(choice_paths)} choice files"
            )
        run = replay_online(
            arrays, procs, chosen["policy"].to_list(), name=strategy,
            period_s=period_seconds[period], threshold_s=threshold_s,
            threshold_backfill=threshold_backfill, period_origin_s=origin, slurm=slurm,
        )  # fmt: skip
        result = online_result(arrays, procs, run)
        if strategy == reference:
            label = f"reference {reference_label(reference, threshold_s)}"
        else:
            label = display_name(strategy) + ("" if period == "none" else f", Δ = {period}")
        panels.append((f"{label}: mean bsld {result.summary.avg_bsld:.2f} over the replica",
                       result))  # fmt: skip
    title = f"{trace}, replica {replica}: the week of the largest difference in mean bsld"
    record = flat_record(ctx.record(strategy=best[0], period=best[1]))
    window = week_figure(panels, (png_path, pdf_path), colour_by="backfilled", title=title,
                         provenance=record)  # fmt: skip
    ctx.log(f"{trace} replica {replica}: {panels[0][0]} against {panels[1][0]}, week "
            f"[{window[0]:.0f}, {window[1]:.0f}) s drawn in "
            f"{time.perf_counter() - started:.1f} s")  # fmt: skip
