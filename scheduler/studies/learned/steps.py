"""The learned-priority-function study's workflow steps (one function per rule of
``workflow/rules/learned.smk``): the workload model, training tuples, trial scores, the fit, the
convergence curve, the evaluation on 15-day sequences, tables and figures.

Seeds: every random choice derives from the config's ``seed`` and the item's identity (the
model's machine size, a tuple's number, a workload's name), never from the order in which jobs
run, so adding tuples leaves the existing ones (and their scores) unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

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
    workflow_step,
)
from scheduler.policies.learned import load_function, register_learned
from scheduler.sim.trials import trial_scores
from scheduler.studies.common.seeds import seed_key
from scheduler.studies.learned.convergence import score_convergence
from scheduler.studies.learned.evaluation import (
    evaluation_jobs,
    evaluation_sequences,
    sequence_bsld,
    simulate_workload,
)
from scheduler.studies.learned.regression import fit_forms, simplify, write_functions
from scheduler.studies.learned.stats import EVALUATION_COLUMNS, median_table
from scheduler.traces.estimates import with_estimates
from scheduler.traces.lublin import lublin_trace
from scheduler.traces.swf import read_swf

__all__ = [
    "SCORE_COLUMNS",
    "TUPLE_COLUMNS",
    "convergence_curve",
    "derived_seed",
    "draw_tuples",
    "draw_week",
    "evaluate_workload",
    "evaluation_tables",
    "fit_functions",
    "function_figure",
    "model_trace",
    "tuple_scores",
]

#: One row per job of a training tuple (``role``: "state" for S, "queue" for Q).
TUPLE_COLUMNS: dict[str, pl.DataType] = {
    "tuple": pl.Int64(),
    "position": pl.Int64(),
    "role": pl.String(),
    "submit_s": pl.Float64(),
    "procs": pl.Float64(),
    "run_s": pl.Float64(),
}
#: One observation (r, n, s, score) per job of Q.
SCORE_COLUMNS: dict[str, pl.DataType] = {
    "tuple": pl.Int64(),
    "position": pl.Int64(),
    "r": pl.Float64(),
    "n": pl.Float64(),
    "s": pl.Float64(),
    "score": pl.Float64(),
}

# streams of derived seeds (one per kind of random choice)
_MODEL, _TUPLE, _TRIALS, _ESTIMATES, _SEQUENCES, _CONVERGENCE = range(6)


def derived_seed(seed: int, stream: int, *key: int | str) -> int:
    """A 63-bit seed for one item: ``seed``, a stream number, and the item's identity (integers,
    or strings hashed with CRC-32)."""
    parts = seed_key(seed, stream, *key)
    return int(np.random.SeedSequence(parts).generate_state(1, np.uint64)[0] >> np.uint64(1))


@workflow_step
def model_trace(
    out_path: str,
    *,
    procs: int,
    jobs: int,
    job_types: str,
    seed: int,
    ctx: StepContext,
) -> None:
    """Generate the workload model at ``procs`` processors with the Tsafrir model's estimates
    (the model has no requested times); write its jobs with the machine size in the metadata."""
    model_seed = derived_seed(seed, _MODEL, procs)
    trace = lublin_trace(jobs, machine_procs=procs, seed=model_seed, job_types=job_types)  # type: ignore[arg-type]
    trace = with_estimates(trace, seed=derived_seed(seed, _ESTIMATES, procs))
    write_parquet(trace.jobs, out_path, ctx.record(model_seed=model_seed), procs_metadata(procs))
    ctx.log(f"model: {jobs:,} jobs on {procs} processors ({job_types}), seed {model_seed}")


@workflow_step
def draw_tuples(
    model_path: str,
    out_path: str,
    *,
    tuples: Sequence[int],
    state_jobs: int,
    queue_jobs: int,
    seed: int,
    ctx: StepContext,
) -> None:
    """Draw the training tuples numbered ``tuples``: each a window of ``state_jobs + queue_jobs``
    consecutive jobs of the model trace at a seeded random position (as the authors' generator
    does), submit times relative to the window's first job."""
    model = read_table(model_path).sort("submit_s", "job_id")
    size = state_jobs + queue_jobs
    if model.height < size:
        raise ConfigurationError(f"{model_path}: {model.height} jobs, a tuple needs {size}")
    submit = model["submit_s"].to_numpy().astype(np.float64)
    procs = model["alloc_procs"].to_numpy().astype(np.float64)
    run = model["run_s"].to_numpy().astype(np.float64)
    frames = []
    for k in tuples:
        rng = np.random.default_rng(derived_seed(seed, _TUPLE, k))
        first = int(rng.integers(0, model.height - size + 1))
        window = slice(first, first + size)
        frames.append(
            pl.DataFrame(
                {
                    "tuple": np.full(size, k, dtype=np.int64),
                    "position": np.arange(size, dtype=np.int64),
                    "role": ["state"] * state_jobs + ["queue"] * queue_jobs,
                    "submit_s": submit[window] - submit[first],
                    "procs": procs[window],
                    "run_s": run[window],
                },
                schema=TUPLE_COLUMNS,
            )
        )
    table = pl.concat(frames) if frames else pl.DataFrame(schema=TUPLE_COLUMNS)
    write_parquet(table, out_path, ctx.record(), procs_metadata(table_machine_procs(model_path)))
    ctx.log(f"{len(tuples)} tuples of {size} jobs")


@workflow_step
def tuple_scores(
    tuples_path: str,
    out_path: str,
    *,
    trials: int,
    tau_s: float,
    seed: int,
    ctx: StepContext,
) -> None:
    """The score of every Q job of every tuple of a batch (``trials`` trials per tuple)."""
    table = read_table(tuples_path)
    machine_procs = table_machine_procs(tuples_path)
    started = time.perf_counter()
    frames = []
    for (k,), part in table.sort("tuple", "position").group_by("tuple", maintain_order=True):
        state = int((part["role"] == "state").sum())
        scores = trial_scores(
            part["submit_s"].to_numpy(), part["procs"].to_numpy(), part["run_s"].to_numpy(),
            n_state=state, machine_procs=machine_procs, n_trials=trials,
            seed=derived_seed(seed, _TRIALS, int(k)), tau_s=tau_s,
        )  # fmt: skip
        queue = part.filter(pl.col("role") == "queue")
        frames.append(
            pl.DataFrame(
                {
                    "tuple": queue["tuple"],
                    "position": queue["position"],
                    "r": queue["run_s"],
                    "n": queue["procs"],
                    "s": queue["submit_s"],
                    "score": scores,
                },
                schema=SCORE_COLUMNS,
            )
        )
    scores_table = pl.concat(frames) if frames else pl.DataFrame(schema=SCORE_COLUMNS)
    elapsed = time.perf_counter() - started
    write_parquet(scores_table, out_path, ctx.record())
    n_tuples = scores_table["tuple"].n_unique()
    ctx.log(f"{n_tuples} tuples x {trials:,} trials in {elapsed:.2f} s")


@workflow_step
def fit_functions(
    score_paths: Sequence[str],
    forms_path: str,
    functions_path: str,
    forms_csv_path: str,
    top_md_path: str,
    *,
    top: int,
    ctx: StepContext,
) -> None:
    """Fit the 576 forms to every observation; write every form (``forms_path``, CSV) and the
    ``top`` simplified functions (``functions_path``, the fit file the policies read)."""
    from scheduler.studies.common.tables import markdown_table

    if not score_paths:
        raise ConfigurationError("no score observations to fit")
    observations = pl.concat([read_table(path) for path in score_paths])
    observations = observations.filter(pl.col("score").is_finite())
    if observations.height == 0:
        raise ConfigurationError("no finite score to fit (were the trials too few?)")
    started = time.perf_counter()
    forms = fit_forms(
        observations["r"].to_numpy(), observations["n"].to_numpy(),
        observations["s"].to_numpy(), observations["score"].to_numpy(),
    )  # fmt: skip
    best = simplify(forms, top=top)
    elapsed = time.perf_counter() - started
    record = ctx.record(observations=observations.height)
    write_parquet(forms, forms_path, record)
    write_csv(forms, forms_csv_path, record)
    write_functions(best, functions_path)
    shown = best.select("rank", "fit_rank", "function", "mae", "flipped")
    text = (
        f"# The {top} best of 576 function forms ({observations.height:,} observations)"
        f"\n\n{markdown_table(shown)}"
    )
    write_markdown(text, top_md_path, record)
    ctx.log(f"{observations.height:,} observations, 576 forms fitted in {elapsed:.1f} s")


@workflow_step
def convergence_curve(
    tuples_path: str,
    out_path: str,
    png_path: str,
    pdf_path: str,
    *,
    trial_counts: Sequence[int],
    repetitions: int,
    tau_s: float,
    seed: int,
    ctx: StepContext,
) -> None:
    """The convergence of the first tuple's scores with the number of trials."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.learned.figures import convergence_plot

    table = read_table(tuples_path).sort("tuple", "position")
    first = table.filter(pl.col("tuple") == table["tuple"][0])
    curve = score_convergence(
        first["submit_s"].to_numpy(), first["procs"].to_numpy(), first["run_s"].to_numpy(),
        trial_counts=list(trial_counts), repetitions=repetitions,
        seed=derived_seed(seed, _CONVERGENCE), n_state=int((first["role"] == "state").sum()),
        machine_procs=table_machine_procs(tuples_path), tau_s=tau_s,
    )  # fmt: skip
    record = ctx.record()
    write_parquet(curve, out_path, record)
    save_figure(convergence_plot(curve), png_path, pdf_path, provenance=flat_record(record))
    ctx.log(f"convergence over {list(trial_counts)} trials, {repetitions} repetitions")


@workflow_step
def function_figure(
    functions_path: str,
    png_path: str,
    pdf_path: str,
    *,
    rank: int,
    ctx: StepContext,
) -> None:
    """A learned function's priority over (r, n) and (r, s)."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.learned.figures import function_surface_plot

    function = load_function(functions_path, rank)
    label = f"LF{rank}: {function.form.expression(function.coefficients)}"
    plot = function_surface_plot(lambda r, n, s: function.evaluate(r, n, s + 1.0), label)
    save_figure(plot, png_path, pdf_path, provenance=flat_record(ctx.record()))
    ctx.log(f"figure of the rank-{rank} function")


def _workload_jobs(path: str, machine_procs: int | None) -> tuple[pl.DataFrame, int]:
    if path.endswith(".parquet"):
        return read_table(path), table_machine_procs(path)
    trace = read_swf(path, machine_procs=machine_procs)
    return trace.jobs, trace.machine_procs


@workflow_step
def evaluate_workload(
    workload_path: str,
    functions_path: str,
    out_path: str,
    *,
    workload: str,
    machine_procs: int | None,
    modes: Sequence[str],
    policies: Sequence[str],
    learned: Mapping[str, int],
    sequences: int | None,
    skipped_sequences: Sequence[int],
    allocated_only: bool,
    queue_window: int | None,
    state_in_order: bool,
    exchange_sorted_policies: Sequence[str],
    random_sequences: bool,
    days: float,
    tau_s: float,
    seed: int,
    ctx: StepContext,
) -> None:
    """AVEbsld of every policy (and learned function: ``learned`` maps a policy name to its
    rank in the fit file) on every sequence of a workload, in every mode; ``queue_window`` and
    ``state_in_order`` select the authors' windowed scheduler (``sequence_bsld``), which sorts
    the ``exchange_sorted_policies`` with their exchange sort."""
    for name, rank in learned.items():
        register_learned(name, f"learned:{functions_path}#{rank}")
    raw, procs = _workload_jobs(workload_path, machine_procs)
    jobs = evaluation_jobs(raw, allocated_only=allocated_only)
    if jobs.height and float(jobs["procs"].max()) > procs:
        jobs = jobs.filter(pl.col("procs") <= procs)
    chosen = evaluation_sequences(
        jobs["submit_s"].to_numpy(), days=days, count=sequences, skip=skipped_sequences,
        seed=derived_seed(seed, _SEQUENCES, workload) if random_sequences else None,
    )  # fmt: skip
    started = time.perf_counter()
    windowed = queue_window is not None or state_in_order
    rows = []
    names = list(policies) + list(learned)
    for mode in modes:
        for policy in names:
            for seq in chosen:
                rows.append({
                    "workload": workload, "mode": mode, "policy": policy,
                    "sequence": seq.index, "first_job": int(jobs["job_id"][seq.first]),
                    "jobs": seq.jobs - seq.n_state,
                    "avg_bsld": sequence_bsld(
                        jobs, seq, policy, mode, procs, tau_s=tau_s,
                        queue_window=queue_window, state_in_order=state_in_order,
                        exchange_sort=policy in exchange_sorted_policies,
                    ),
                })  # fmt: skip
                rows[-1]["avg_bsld_default"] = (
                    sequence_bsld(jobs, seq, policy, mode, procs, tau_s=tau_s)
                    if windowed else rows[-1]["avg_bsld"]
                )  # fmt: skip
    table = pl.DataFrame(rows, schema=EVALUATION_COLUMNS)
    record = ctx.record(resolved_machine_procs=procs, chosen=[s.index for s in chosen])
    write_parquet(table, out_path, record)
    ctx.log(f"{workload}: {len(chosen)} sequences x {len(names)} policies x {len(modes)} modes "
            f"on {procs:,} processors in {time.perf_counter() - started:.1f} s")  # fmt: skip


@workflow_step
def evaluation_tables(
    evaluation_paths: Sequence[str],
    parquet_path: str,
    csv_path: str,
    markdown_path: str,
    png_path: str,
    pdf_path: str,
    *,
    policies: Sequence[str],
    modes: Sequence[str],
    ctx: StepContext,
) -> None:
    """The median AVEbsld table and the box plots over every evaluated workload."""
    from scheduler.studies.common.figures import save_figure
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.learned.figures import evaluation_boxplot

    evaluation = pl.concat([read_table(path) for path in evaluation_paths])
    table = median_table(evaluation)
    record = ctx.record()
    write_parquet(evaluation, parquet_path, record)
    write_csv(table, csv_path, record)
    wide = table.pivot(on="policy", index=["workload", "mode"], values="median_avg_bsld")
    text = f"# Median AVEbsld over the 15-day sequences (tau = 10 s)\n\n{markdown_table(wide)}"
    write_markdown(text, markdown_path, record)
    plot = evaluation_boxplot(evaluation, list(policies), list(modes))
    workloads = evaluation["workload"].n_unique()
    save_figure(plot, png_path, pdf_path, provenance=flat_record(record),
                width_in=max(7.0, 2.6 * len(modes) + 1.5),
                height_in=max(4.5, 2.4 * workloads + 1.5))  # fmt: skip
    ctx.log(f"{evaluation.height} sequence results, {table.height} cells")


@workflow_step
def published_tables(
    forms_path: str,
    evaluation_path: str,
    markdown_path: str,
    csv_path: str,
    *,
    ctx: StepContext,
) -> None:
    """The paper's Tables 3 and 4 beside schedlab's fit and evaluation."""
    from scheduler.studies.common.tables import markdown_table
    from scheduler.studies.learned.published import table3_comparison, table4_comparison

    table3 = table3_comparison(read_table(forms_path))
    table4 = table4_comparison(read_table(evaluation_path))
    record = ctx.record()
    write_csv(table4, csv_path, record)
    text = (
        "# schedlab beside Carastan-Santos & de Camargo (SC'17)\n\n"
        "## Table 3: the coefficient of log10(s) in the simplified function\n\n"
        f"{markdown_table(table3)}\n\n"
        "## Table 4: median AVEbsld (tau = 10 s); differences in % of the published value\n\n"
        f"{markdown_table(table4)}"
    )
    write_markdown(text, markdown_path, record)
    ctx.log(f"{table4.height} Table 4 cells, {table3.height} Table 3 functions")


@workflow_step
def draw_week(
    workload_path: str,
    functions_path: str,
    png_path: str,
    pdf_path: str,
    *,
    workload: str,
    machine_procs: int | None,
    allocated_only: bool,
    baseline: str,
    learned: Mapping[str, int],
    ctx: StepContext,
) -> None:
    """The representative week of the study (PNG and PDF) on one evaluation workload: EASY
    with ``baseline`` and with the learned function (``learned``: its one policy name and its
    rank in the fit file), each ordering the queue and the backfilling candidates, on the whole
    workload (:func:`~scheduler.studies.learned.evaluation.simulate_workload`, the jobs of
    :func:`evaluate_workload`), drawn stacked over the week where their mean bounded slowdowns
    differ most (:func:`~scheduler.studies.common.gantt.week_figure`), runs coloured by whether
    they were backfilled."""
    from scheduler.studies.common.gantt import week_figure

    if len(learned) != 1:
        raise ConfigurationError(f"draw_week: one learned function to draw, got {dict(learned)}")
    started = time.perf_counter()
    for name, rank in learned.items():
        register_learned(name, f"learned:{functions_path}#{rank}")
    raw, procs = _workload_jobs(workload_path, machine_procs)
    jobs = evaluation_jobs(raw, allocated_only=allocated_only)
    if jobs.height and float(jobs["procs"].max()) > procs:
        jobs = jobs.filter(pl.col("procs") <= procs)
    panels = []
    for policy in (baseline, *learned):
        result = simulate_workload(jobs, policy, procs)
        panels.append((f"EASY-{policy}-{policy}: mean bsld {result.summary.avg_bsld:.2f} over "
                       "the workload", result))  # fmt: skip
    title = f"{workload}: the week of the largest difference in mean bounded slowdown"
    record = flat_record(ctx.record(resolved_machine_procs=procs))
    window = week_figure(panels, (png_path, pdf_path), colour_by="backfilled", title=title,
                         provenance=record)  # fmt: skip
    ctx.log(f"{workload}: {panels[0][0]} against {panels[1][0]}, week [{window[0]:.0f}, "
            f"{window[1]:.0f}) s drawn in {time.perf_counter() - started:.1f} s")  # fmt: skip
