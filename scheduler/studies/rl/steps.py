"""The workflow steps of the RL benchmark (one function per Snakemake rule of
``workflow/rules/rl.smk``): every policy on a log's test sequences, the PPO agent's training and
evaluation, the tables, a figure. docs/rl.md describes the study."""

from __future__ import annotations

import time
from collections.abc import Sequence

import polars as pl

from scheduler.core.atomic import atomic_path
from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import write_csv, write_markdown, write_parquet
from scheduler.core.steps import StepContext, flat_record, read_table, workflow_step
from scheduler.sim.rlscheduler import RlsWorkload, rls_workload
from scheduler.studies.rl.plan import COMPATIBLE, EASY
from scheduler.studies.rl.published import published_comparison, published_source
from scheduler.studies.rl.sequences import SEQUENCE_FIGURES, sequence_runs
from scheduler.studies.rl.stats import AGENT, comparison_table, summary_table
from scheduler.traces.swf import read_swf

__all__ = ["FIGURES", "evaluate_agent", "rl_figure", "rl_tables", "rl_week",
           "simulate_sequences",
           "train_agent"]  # fmt: skip

#: The study's figures (one Snakemake job each).
FIGURES = ("sequences", "learning_curve")


def _workload(swf_path: str, trace: str) -> RlsWorkload:
    return rls_workload(read_swf(swf_path), trace)


def _test_source(workload: RlsWorkload, length: int, job_slice: int | None):
    from scheduler.rl.episodes import EpisodeSource

    return EpisodeSource(workload, length, job_slice)


@workflow_step
def simulate_sequences(
    swf_path: str,
    out_path: str,
    *,
    trace: str,
    job_slice: int | None,
    count: int,
    length: int,
    seed: int,
    heuristics: Sequence[str],
    policies: Sequence[str],
    backfill: Sequence[bool],
    bandits: Sequence[str],
    period_s: float,
    bandit_seed: int,
    ablation: bool,
    ctx: StepContext,
) -> None:
    """Every heuristic (compatible mode), policy and bandit over the policies (easy mode) on
    the log's test sequences, with and without backfilling
    (:func:`scheduler.studies.rl.sequences.sequence_runs`)."""
    started = time.perf_counter()
    workload = _workload(swf_path, trace)
    starts = _test_source(workload, length, job_slice).test_starts(count, seed)
    ctx.log(f"{trace}: {workload.size:,} jobs, {workload.total_nodes} nodes of "
            f"{workload.procs_per_node:g} processors; starts {starts.tolist()}")  # fmt: skip
    runs = sequence_runs(workload, starts.tolist(), length, heuristics=heuristics,
                         policies=policies, backfill=backfill, bandits=bandits,
                         period_s=period_s, seed=bandit_seed, ablation=ablation)  # fmt: skip
    write_parquet(runs.with_columns(pl.lit(trace).alias("trace")), out_path, ctx.record())
    ctx.log(f"{runs.height} sequence schedules in {time.perf_counter() - started:.1f} s")


@workflow_step
def train_agent(
    swf_path: str,
    model_path: str,
    curve_path: str,
    *,
    trace: str,
    job_slice: int | None,
    count: int,
    length: int,
    seed: int,
    semantics: str,
    train_backfill: bool,
    timesteps: int,
    train_length: int,
    window: int,
    n_steps: int,
    batch_size: int,
    epochs: int,
    learning_rate: float,
    threads: int,
    sjf_filter: Sequence[float] | None,
    ppo_seed: int,
    ctx: StepContext,
) -> None:
    """Train the PPO agent on sequences of ``train_length`` jobs of the whole log that overlap
    no test sequence (and whose SJF score is inside ``sjf_filter``: RLScheduler's trajectory
    filtering) (:mod:`scheduler.rl.ppo`); save it and its learning curve."""
    from scheduler.rl.env import SchedulingEnv
    from scheduler.rl.episodes import EpisodeSource
    from scheduler.rl.ppo import PpoSettings
    from scheduler.rl.ppo import train_agent as train

    started = time.perf_counter()
    workload = _workload(swf_path, trace)
    starts = _test_source(workload, length, job_slice).test_starts(count, seed)
    held_out = tuple((int(s), int(s) + length) for s in starts)
    band = None if sjf_filter is None else (float(sjf_filter[0]), float(sjf_filter[1]))
    source = EpisodeSource(workload, train_length, None, held_out, band, train_backfill)
    filtered = "" if band is None else f" and whose SJF score is in {band}"
    ctx.log(f"{trace}: training sequences of {train_length} jobs from "
            f"{source.allowed_starts.shape[0]:,} starts that avoid the {count} test "
            f"sequences{filtered}; {timesteps:,} decisions")  # fmt: skip
    env = SchedulingEnv(source, window=window, backfill=train_backfill, semantics=semantics)
    settings = PpoSettings(timesteps=timesteps, n_steps=n_steps, batch_size=batch_size,
                           epochs=epochs, learning_rate=learning_rate, seed=ppo_seed,
                           threads=threads)  # fmt: skip
    model, curve = train(env, settings)
    with atomic_path(model_path) as tmp:
        model.save(tmp)
        saved = tmp.with_name(tmp.name + ".zip")  # stable-baselines3 adds the extension
        if saved.exists():
            saved.replace(tmp)
    write_parquet(curve.with_columns(pl.lit(trace).alias("trace")), curve_path, ctx.record())
    ctx.log(f"trained in {time.perf_counter() - started:.1f} s: {curve.height} episodes, last "
            f"running median {curve['smoothed_bsld'][-1] if curve.height else float('nan'):.2f}")


@workflow_step
def evaluate_agent(
    swf_path: str,
    model_path: str,
    out_path: str,
    *,
    trace: str,
    job_slice: int | None,
    count: int,
    length: int,
    seed: int,
    backfill: Sequence[bool],
    semantics: str,
    window: int,
    ctx: StepContext,
) -> None:
    """The trained agent on the test sequences, with and without backfilling (its most likely
    action at each decision): rows as :func:`simulate_sequences`'s, policy ``PPO``."""
    from scheduler.rl.env import SchedulingEnv
    from scheduler.rl.ppo import evaluate_agent as evaluate
    from scheduler.rl.ppo import load_agent

    workload = _workload(swf_path, trace)
    source = _test_source(workload, length, job_slice)
    starts = source.test_starts(count, seed).tolist()
    model = load_agent(model_path)
    mode = COMPATIBLE if semantics == "rlscheduler" else EASY
    rows = []
    for bf in backfill:
        env = SchedulingEnv(source, window=window, backfill=bf, semantics=semantics)
        for index, row in enumerate(evaluate(model, env, starts)):
            rows.append({"mode": mode, "backfill": bf, "policy": AGENT, "sequence": index,
                         "start": row["start"],
                         **{name: float(row[name]) for name in SEQUENCE_FIGURES}})  # fmt: skip
            ctx.log(f"backfill={bf} sequence {index}: {row['decisions']} decisions, mean "
                    f"bounded slowdown {row['avg_bsld']:.2f}")  # fmt: skip
    table = pl.DataFrame(rows).with_columns(pl.lit(trace).alias("trace"))
    write_parquet(table, out_path, ctx.record())


@workflow_step
def rl_tables(
    run_paths: Sequence[str],
    evaluation_paths: Sequence[str],
    runs_path: str,
    sequences_csv_path: str,
    sequences_md_path: str,
    published_csv_path: str,
    published_md_path: str,
    comparison_csv_path: str,
    comparison_md_path: str,
    *,
    reference: str,
    confidence: float,
    ctx: StepContext,
) -> None:
    """Gather the runs (and the agent's): the summary per (log, mode, backfilling, policy),
    RLScheduler's published table beside the compatible mode, each policy against
    ``reference``."""
    from scheduler.studies.common.tables import markdown_table

    runs = pl.concat([read_table(p) for p in [*run_paths, *evaluation_paths]],
                     how="diagonal_relaxed")  # fmt: skip
    summary = summary_table(runs, confidence)
    published = published_comparison(summary, AGENT)
    comparison = comparison_table(runs, reference, confidence)
    record = ctx.record()
    write_parquet(runs, runs_path, record)
    level = f"{confidence:.0%}"
    write_csv(summary, sequences_csv_path, record)
    write_markdown(
        f"# RL benchmark: mean bounded slowdown over the test sequences ({level} t intervals "
        "over sequences; they overlap: docs/rl.md)\n\n" + markdown_table(summary),
        sequences_md_path, record,
    )  # fmt: skip
    write_csv(published, published_csv_path, record)
    write_markdown(
        f"# RLScheduler's published table beside the compatible mode\n\nSource: "
        f"{published_source()}.\n\n" + markdown_table(published, float_digits=2),
        published_md_path, record,
    )  # fmt: skip
    write_csv(comparison, comparison_csv_path, record)
    write_markdown(
        f"# Each policy against {reference}, paired over sequences (geometric mean of the "
        f"ratio of mean bounded slowdowns, {level} t interval)\n\n" + markdown_table(comparison),
        comparison_md_path, record,
    )  # fmt: skip
    ctx.log(f"{runs.height} sequence schedules; {published.height} published values matched")


@workflow_step
def rl_figure(
    runs_path: str,
    curve_paths: Sequence[str],
    png_path: str,
    pdf_path: str,
    *,
    figure: str,
    ctx: StepContext,
) -> None:
    """One figure of :data:`FIGURES` (:mod:`scheduler.studies.rl.figures`)."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.rl import figures

    if figure == "sequences":
        plot = figures.sequences_figure(read_table(runs_path))
    elif figure == "learning_curve":
        curves = pl.concat([read_table(path) for path in curve_paths])
        plot = figures.learning_curve_figure(curves)
    else:
        raise ConfigurationError(f"unknown rl figure {figure!r}; known: {FIGURES}")
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()), width_in=9.0,
                height_in=7.0)  # fmt: skip
    ctx.log(f"figure {figure}")


@workflow_step
def rl_week(
    swf_path: str,
    runs_path: str,
    png_path: str,
    pdf_path: str,
    *,
    trace: str,
    job_slice: int | None,
    count: int,
    length: int,
    seed: int,
    reference: str,
    policies: Sequence[str],
    backfill: bool,
    ctx: StepContext,
) -> None:
    """The representative sequence of log ``trace``: the test sequence where the study's best
    EASY policy and the reference differ most (:func:`~scheduler.studies.rl.week.drawn_sequence`),
    simulated again by schedlab's EASY under both and drawn stacked, from the sequence's first
    submission until its last job ends: runs coloured by how they started (with backfilling),
    queue length and utilisation under each."""
    from scheduler.sim.schedule import schedule_of
    from scheduler.studies.common.gantt import Panel, draw_gantt
    from scheduler.studies.rl.week import drawn_sequence, sequence_result

    chosen = drawn_sequence(read_table(runs_path), trace=trace, reference=reference,
                            policies=policies, backfill=backfill)  # fmt: skip
    workload = _workload(swf_path, trace)
    starts = _test_source(workload, length, job_slice).test_starts(count, seed).tolist()
    if chosen.start not in starts:
        raise ConfigurationError(f"{trace}: sequence start {chosen.start} of {runs_path} is "
                                 f"not one of the test sequences {starts}")  # fmt: skip
    panels, ends = [], []
    how = "with" if backfill else "without"
    for policy, avg_bsld in ((reference, chosen.reference_avg_bsld),
                             (chosen.policy, chosen.avg_bsld)):  # fmt: skip
        result = sequence_result(workload, chosen.start, length, policy=policy,
                                 backfill=backfill)  # fmt: skip
        ends.append(float(result.jobs["end_s"].max()))  # type: ignore[arg-type]
        panels.append(Panel(f"EASY-{policy} {how} backfilling: mean bounded slowdown "
                            f"{avg_bsld:.2f}", schedule_of(result)))  # fmt: skip
    first = float(workload.submit_s[chosen.start])
    window = (first, max(ends))
    title = (f"{trace}, test sequence {chosen.sequence} ({length} jobs from job {chosen.start}): "
             f"{reference} and {chosen.policy}")  # fmt: skip
    meta = flat_record(ctx.record())
    draw_gantt(panels, (png_path, pdf_path), window,
               colour_by="backfilled" if backfill else "none", title=title,
               provenance=meta)  # fmt: skip
    ctx.log(f"{trace} sequence {chosen.sequence} (start {chosen.start}): {reference} "
            f"{chosen.reference_avg_bsld:.3f} vs {chosen.policy} {chosen.avg_bsld:.3f}, "
            f"[{window[0]:.0f}, {window[1]:.0f}) s")  # fmt: skip
