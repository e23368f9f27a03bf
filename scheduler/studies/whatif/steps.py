"""The what-if study's steps: one function per rule of ``workflow/rules/whatif.smk``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.core.constants import WEEK_S
from scheduler.core.provenance import write_csv, write_markdown, write_parquet
from scheduler.core.steps import (
    StepContext,
    optional_path,
    procs_metadata,
    read_table,
    table_machine_procs,
    workflow_step,
)


@workflow_step
def site_jobs(
    source_paths: Sequence[str],
    jobs_path: str,
    *,
    source: Mapping[str, Any],
    machine_procs: int | None,
    ctx: StepContext,
) -> None:
    """The site's jobs with their accounts (:func:`scheduler.studies.whatif.jobs.site_jobs`),
    the machine size in the table's metadata."""
    from scheduler.studies.whatif.jobs import site_jobs as load

    jobs, procs = load(source, optional_path(source_paths), machine_procs)
    write_parquet(jobs, jobs_path, ctx.record(), procs_metadata(procs))
    ctx.log(
        f"{source['kind']}: {jobs.height} jobs, {jobs['user_id'].n_unique()} users, "
        f"{procs} processors"
    )


@workflow_step
def resample(
    jobs_path: str, weeks_path: str, *, weeks: int, seed: int, site: str, ctx: StepContext
) -> None:
    """The resampled weeks every alternative runs on."""
    from scheduler.studies.whatif.runs import resampled_weeks

    table = resampled_weeks(read_table(jobs_path), weeks, seed=seed, site=site)
    write_parquet(table, weeks_path, ctx.record(), procs_metadata(table_machine_procs(jobs_path)))
    ctx.log(f"{weeks} weeks, {table.height} jobs")


@workflow_step
def simulate(
    jobs_path: str,
    weeks_path: str,
    weeks_out_path: str,
    log_out_path: str,
    source_out_path: str,
    *,
    scheduler: Mapping[str, Any],
    ctx: StepContext,
) -> None:
    """One alternative on the resampled weeks, on the whole log, and on the log's weeks one by
    one: per-job tables."""
    from scheduler.studies.whatif.runs import simulate_log, simulate_source_weeks, simulate_weeks
    from scheduler.studies.whatif.schedulers import Scheduler

    spec = Scheduler.from_dict(scheduler)
    procs = table_machine_procs(jobs_path)
    weeks = simulate_weeks(spec, read_table(weeks_path), procs)
    record = ctx.record()
    write_parquet(weeks, weeks_out_path, record, procs_metadata(procs))
    ctx.log(f"weeks: {weeks.height} jobs")
    log = simulate_log(spec, read_table(jobs_path), procs)
    write_parquet(log, log_out_path, record, procs_metadata(procs))
    ctx.log(f"whole log: {log.height} jobs")
    source = simulate_source_weeks(spec, read_table(jobs_path), procs)
    write_parquet(source, source_out_path, record, procs_metadata(procs))
    ctx.log(f"the log's weeks one by one: {source['week_index'].n_unique()} weeks")


@workflow_step
def bootstrap(
    jobs_path: str,
    out_path: str,
    *,
    scheduler: Mapping[str, Any],
    replicates: Sequence[int],
    weeks: int,
    seed: int,
    site: str,
    ctx: StepContext,
) -> None:
    """One alternative on a batch of source-week bootstrap replicates."""
    from scheduler.studies.whatif.runs import bootstrap_figures
    from scheduler.studies.whatif.schedulers import Scheduler

    table = bootstrap_figures(
        Scheduler.from_dict(scheduler),
        read_table(jobs_path),
        table_machine_procs(jobs_path),
        replicates=replicates,
        weeks=weeks,
        seed=seed,
        site=site,
    )
    write_parquet(table, out_path, ctx.record())
    ctx.log(f"replicates {list(replicates)}")


@workflow_step
def tables(
    weeks_paths: Sequence[str],
    log_paths: Sequence[str],
    bootstrap_paths: Sequence[str],
    summary_csv_path: str,
    summary_md_path: str,
    groups_csv_path: str,
    users_csv_path: str,
    *,
    names: Sequence[str],
    changes: Sequence[str],
    confidence: float,
    size_classes: Sequence[int],
    shares: Mapping[str, int],
    replicates: int,
    ctx: StepContext,
) -> None:
    """The ranking of the alternatives, the per-group and the per-user tables."""
    import polars as pl

    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.whatif.runs import BOOTSTRAP_COLUMNS
    from scheduler.studies.whatif.stats import group_changes, summary_table, user_changes

    weeks = [read_table(path) for path in weeks_paths]
    logs = [read_table(path) for path in log_paths]
    per_name = len(bootstrap_paths) // len(names)
    boots = [
        pl.concat([read_table(p) for p in bootstrap_paths[i * per_name : (i + 1) * per_name]])
        if per_name
        else pl.DataFrame(schema=BOOTSTRAP_COLUMNS)
        for i in range(len(names))
    ]
    procs = table_machine_procs(weeks_paths[0])
    summary = summary_table(
        names, changes, weeks, logs, boots, machine_procs=procs, confidence=confidence
    )
    groups = group_changes(
        names, weeks, size_edges=size_classes, shares=shares, week_s=float(WEEK_S)
    )
    users = user_changes(names, logs)
    record = ctx.record()
    write_csv(summary, summary_csv_path, record)
    shown = summary.select(
        "alternative",
        "change",
        (pl.col("avg_wait_s") / 3600).alias("mean wait (h)"),
        (pl.col("p90_wait_s") / 3600).alias("p90 wait (h)"),
        (pl.col("p99_wait_s") / 3600).alias("p99 wait (h)"),
        (pl.col("avg_bsld")).alias("mean bounded slowdown"),
        pl.col("utilisation"),
        pl.col("jain_users").alias("Jain (users)"),
        (pl.col("rel_avg_wait_s") * 100).alias("mean wait change (%)"),
        (pl.col("rel_avg_wait_s_low") * 100).alias("low (%)"),
        (pl.col("rel_avg_wait_s_high") * 100).alias("high (%)"),
        "p_holm",
        "significant",
    )
    write_markdown(
        f"# What each change would do (means over the resampled weeks; {confidence:.0%} "
        f"source-week bootstrap intervals of the change against the baseline, "
        f"{replicates} replicates; Holm across the alternatives)\n\n" + markdown_table(shown),
        summary_md_path,
        record,
    )
    write_csv(groups, groups_csv_path, record)
    write_csv(users, users_csv_path, record)
    ctx.log(f"{summary.height} schedulers, {groups.height} group rows, {users.height} user rows")


@workflow_step
def online(
    source_paths: Sequence[str],
    online_csv_path: str,
    online_md_path: str,
    png_path: str,
    pdf_path: str,
    *,
    names: Sequence[str],
    selectors: Sequence[str],
    draws: int,
    seed: int,
    ctx: StepContext,
) -> None:
    """The bandits' weekly choices against the best fixed alternative in hindsight."""
    import polars as pl

    from scheduler.core.steps import flat_record
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.whatif.figures import online_figure
    from scheduler.studies.whatif.online import cost_matrix, online_choices, week_costs

    costs = week_costs(names, [read_table(path) for path in source_paths])
    weeks, totals, jobs = cost_matrix(costs, names)
    runs = online_choices(totals, jobs, names, selectors, draws=draws, seed=seed)
    record = ctx.record()
    write_csv(runs, online_csv_path, record)
    summary = runs.group_by("selector", maintain_order=True).agg(
        pl.len().alias("draws"),
        (pl.col("avg_wait_s").mean() / 3600).alias("mean wait (h)"),
        (pl.col("regret_s").mean() / 3600).alias("regret (h per job)"),
        (pl.col("regret_s").min() / 3600).alias("min"),
        (pl.col("regret_s").max() / 3600).alias("max"),
        (pl.col("relative_regret").mean() * 100).alias("regret (%)"),
    )
    best = runs.row(0, named=True)
    write_markdown(
        f"# Choosing the scheduler week by week ({best['weeks']} weeks, {best['jobs']} jobs; "
        f"best fixed in hindsight: {best['best_fixed']}, mean wait "
        f"{best['best_fixed_avg_wait_s'] / 3600:.3f} h)\n\n" + markdown_table(summary),
        online_md_path,
        record,
    )
    save_figure(
        online_figure(weeks, totals, jobs, runs, names),
        png_path,
        pdf_path,
        provenance=flat_record(record),
    )
    ctx.log(f"{runs.height} bandit runs over {best['weeks']} weeks")


@workflow_step
def ranking_figure(
    summary_csv_path: str, png_path: str, pdf_path: str, *, confidence: float, ctx: StepContext
) -> None:
    """The alternatives ranked by their change of the mean wait, with intervals."""
    from scheduler.core.provenance import read_csv
    from scheduler.core.steps import flat_record
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.whatif.figures import ranking_figure as draw

    plot = draw(read_csv(summary_csv_path), confidence=confidence)
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()))
    ctx.log("ranking")


@workflow_step
def alternative_figures(
    baseline_weeks_path: str,
    weeks_path: str,
    users_csv_path: str,
    sizes_png_path: str,
    sizes_pdf_path: str,
    users_png_path: str,
    users_pdf_path: str,
    week_png_path: str,
    week_pdf_path: str,
    *,
    alternative: str,
    change: str,
    size_classes: Sequence[int],
    week: int,
    ctx: StepContext,
) -> None:
    """An alternative's page: waits by size class, users' gains and losses, a week."""
    from scheduler.core.provenance import read_csv
    from scheduler.core.steps import flat_record
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.whatif import figures

    title = f"{alternative}" if change == alternative else f"{alternative} ({change})"
    base_weeks, weeks = read_table(baseline_weeks_path), read_table(weeks_path)
    procs = table_machine_procs(weeks_path)
    meta = flat_record(ctx.record())
    save_figure(
        figures.sizes_figure(base_weeks, weeks, alternative=title, size_edges=size_classes),
        sizes_png_path,
        sizes_pdf_path,
        provenance=meta,
    )
    users = read_csv(users_csv_path)
    save_figure(
        figures.users_figure(users, alternative=alternative),
        users_png_path,
        users_pdf_path,
        provenance=meta,
        height_in=max(4.5, 0.18 * min(users["user_id"].n_unique(), 30) + 1.5),
    )
    save_figure(
        figures.week_figure(base_weeks, weeks, alternative=title, week=week, machine_procs=procs),
        week_png_path,
        week_pdf_path,
        provenance=meta,
        height_in=5.5,
    )
    ctx.log(f"figures of {alternative}")


@workflow_step
def week_gantt(
    jobs_path: str,
    png_path: str,
    pdf_path: str,
    *,
    baseline: Mapping[str, Any],
    alternative: str,
    change: str,
    scheduler: Mapping[str, Any],
    ctx: StepContext,
) -> None:
    """The representative week of the site's log: the whole log replayed once under the
    ``baseline`` scheduler and under the alternative ``alternative`` (``change``: what differs,
    ``scheduler``: its scheduler), the week (7 days from the first submission on) where their
    mean bounded slowdowns differ most
    (:func:`~scheduler.studies.common.gantt.representative_week`), drawn stacked: runs coloured
    by how they started (in priority order or backfilled), queue length and utilisation under
    each."""
    import polars as pl

    from scheduler.core.steps import flat_record
    from scheduler.sim.schedule import schedule_of
    from scheduler.studies.common.gantt import Panel, draw_gantt, representative_week
    from scheduler.studies.whatif.schedulers import Scheduler
    from scheduler.studies.whatif.week import scheduler_result

    jobs = read_table(jobs_path)
    procs = table_machine_procs(jobs_path)
    results = [scheduler_result(Scheduler.from_dict(spec), jobs, procs)
               for spec in (baseline, scheduler)]  # fmt: skip
    window = representative_week(results[0].jobs, results[1].jobs)
    title = alternative if change == alternative else f"{alternative} ({change})"
    panels = []
    for label, result in zip(("baseline", title), results, strict=True):
        week = result.jobs.filter(pl.col("submit_s").is_between(*window, closed="left"))
        panels.append(Panel(f"{label}: {week.height} jobs submitted in the week, mean bounded "
                            f"slowdown {week['bsld'].mean():.2f}, mean wait "
                            f"{week['wait_s'].mean() / 3600:.2f} h",
                            schedule_of(result)))  # fmt: skip
    meta = flat_record(ctx.record())
    draw_gantt(panels, (png_path, pdf_path), window, colour_by="backfilled",
               title=f"The week that differs most: the baseline and {title}",
               provenance=meta)  # fmt: skip
    ctx.log(f"baseline vs {alternative}: week [{window[0]:.0f}, {window[1]:.0f}) s")
