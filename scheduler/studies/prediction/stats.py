"""Statistics of the run-time prediction study: one row per simulated triple, and the study's
tables (best and worst triples per log, leave-one-log-out selection, prediction errors).

What is independent of what: each (log, triple) is one deterministic simulation of the whole
filtered log; there is no sampling, so no confidence interval is drawn around a log's AVEbsld.
Jobs inside a log are not independent (they share the machine), and neither are the triples
(they share the log). The leave-one-log-out selection has one held-out evaluation per log (six
in the full campaign): it says how a selection rule transfers between these logs, not more.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.predictors.losses import loss, parse_loss
from scheduler.studies.prediction.plan import EASY, EASY_PLUS_PLUS, NO_CORRECTION, Triple

__all__ = [
    "LOLO_SCORES",
    "RUN_COLUMNS",
    "best_worst_table",
    "error_table",
    "lolo_table",
    "prediction_errors",
    "relative_bsld",
    "week_triple",
]

#: How a triple is scored on the other logs in the leave-one-log-out selection
#: (:func:`lolo_table`): the sum of their AVEbsld, or of AVEbsld relative to EASY.
LOLO_SCORES: tuple[str, ...] = ("sum", "relative")

#: The columns of one simulated triple (``runs`` tables), with their types.
RUN_COLUMNS: dict[str, pl.DataType] = {
    "trace": pl.String(),
    "technique": pl.String(),
    "predictor": pl.String(),
    "loss": pl.String(),
    "correction": pl.String(),
    "backfill": pl.String(),
    "triple": pl.String(),
    "jobs": pl.Int64(),
    "avg_bsld": pl.Float64(),
    "max_bsld": pl.Float64(),
    "avg_wait_s": pl.Float64(),
    "max_wait_s": pl.Float64(),
    "utilisation": pl.Float64(),
    "mae_s": pl.Float64(),
    "mean_eloss": pl.Float64(),
    "under_share": pl.Float64(),
    "floor_share": pl.Float64(),
    "corrections": pl.Int64(),
    "corrected_jobs": pl.Int64(),
}

_ELOSS = parse_loss("eloss")


def prediction_errors(
    prediction_s: np.ndarray, run_s: np.ndarray, procs: np.ndarray, gamma_floor: float
) -> dict[str, float]:
    """Errors of predictions at submission against the actual run times (s).

    ``mae_s``: mean |prediction − run| (s); ``mean_eloss``: mean E-loss (s² for
    over-predictions, s for under-predictions, weighted by γ = log(q·p) floored as in
    :mod:`scheduler.predictors.losses`); ``under_share``: share of predictions below the run
    time; ``floor_share``: share at the 1-s floor.
    """
    pred = np.asarray(prediction_s, dtype=np.float64)
    run = np.asarray(run_s, dtype=np.float64)
    if pred.size == 0:
        raise ConfigurationError("no predictions to measure (0 jobs)")
    values = loss(_ELOSS, pred, run, np.asarray(procs, dtype=np.float64), gamma_floor=gamma_floor)
    return {
        "mae_s": float(np.mean(np.abs(pred - run))),
        "mean_eloss": float(np.mean(values)),
        "under_share": float(np.mean(pred < run)),
        "floor_share": float(np.mean(pred <= 1.0)),
    }


def _require(runs: pl.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in runs.columns]
    if missing:
        raise ConfigurationError(f"{what}: the runs table lacks {', '.join(missing)}")


def _triple_value(runs: pl.DataFrame, triple: Triple) -> pl.DataFrame:
    """(trace, value) of one triple's AVEbsld."""
    return runs.filter(pl.col("triple") == triple.label).select("trace", "avg_bsld")


def relative_bsld(runs: pl.DataFrame) -> pl.DataFrame:
    """``runs`` with ``relative_bsld`` = AVEbsld / AVEbsld of EASY on the same log."""
    _require(runs, ("trace", "triple", "avg_bsld"), "relative AVEbsld")
    easy = _triple_value(runs, EASY).rename({"avg_bsld": "easy_bsld"})
    missing = set(runs["trace"].unique()) - set(easy["trace"])
    if missing:
        raise ConfigurationError(
            f"relative AVEbsld: no EASY run ({EASY.label}) on {', '.join(sorted(missing))}"
        )
    return (
        runs.join(easy, on="trace", how="left")
        .with_columns((pl.col("avg_bsld") / pl.col("easy_bsld")).alias("relative_bsld"))
        .drop("easy_bsld")
    )


def best_worst_table(runs: pl.DataFrame) -> pl.DataFrame:
    """Per log: EASY, EASY++, CLAIRVOYANT per variant, and the best and worst AVEbsld among the
    learned (NAG) triples of each backfilling variant, with the triple that reaches it.

    Columns absent from the study (no EASY++, no CLAIRVOYANT, no NAG technique, no SJBF) are
    left out rather than filled.
    """
    _require(runs, ("trace", "triple", "technique", "predictor", "backfill", "avg_bsld"),
             "best/worst table")  # fmt: skip
    traces = sorted(runs["trace"].unique())
    table = pl.DataFrame({"trace": traces})

    def add(frame: pl.DataFrame, name: str) -> None:
        nonlocal table
        if frame.height:
            table = table.join(frame.rename({"avg_bsld": name}), on="trace", how="left")

    add(_triple_value(runs, EASY), "easy")
    add(_triple_value(runs, EASY_PLUS_PLUS), "easy_pp")
    for variant in sorted(runs["backfill"].unique()):
        add(_triple_value(runs, Triple("clairvoyant", NO_CORRECTION, variant)),
            f"clairvoyant_{variant}")  # fmt: skip
    learned = runs.filter(pl.col("predictor") == "nag")
    for variant in sorted(learned["backfill"].unique()):
        rows = learned.filter(pl.col("backfill") == variant).sort("trace", "avg_bsld", "triple")
        best = rows.group_by("trace", maintain_order=True).first()
        worst = rows.group_by("trace", maintain_order=True).last()
        for kind, frame in (("best", best), ("worst", worst)):
            part = frame.select(
                "trace",
                pl.col("avg_bsld").alias(f"{kind}_{variant}"),
                pl.col("triple").alias(f"{kind}_{variant}_triple"),
            )
            table = table.join(part, on="trace", how="left")
    return table


def lolo_table(runs: pl.DataFrame, *, score: str = "sum") -> pl.DataFrame:
    """Leave-one-log-out selection of a triple, evaluated on the held-out log.

    For each log L: among the deployable triples (every technique but CLAIRVOYANT) simulated on
    every log, choose the one minimising the score on the other logs; ``score="sum"`` sums their
    AVEbsld (the published rule: logs with large AVEbsld weigh most), ``"relative"`` sums
    AVEbsld / EASY's AVEbsld per log (every log weighs alike). Ties go to the triple first in
    name order. Reports the chosen triple's AVEbsld on L next to EASY's and EASY++'s, and the
    relative reductions ``1 − chosen / reference``. Needs at least two logs.
    """
    if score not in LOLO_SCORES:
        raise ConfigurationError(
            f"lolo score must be one of {', '.join(LOLO_SCORES)}, got {score!r}"
        )
    runs = relative_bsld(runs)
    traces = sorted(runs["trace"].unique())
    if len(traces) < 2:
        raise ConfigurationError(
            f"leave-one-log-out selection needs at least 2 logs, got {len(traces)}"
        )
    column = "avg_bsld" if score == "sum" else "relative_bsld"
    deployable = runs.filter(pl.col("predictor") != "clairvoyant")
    complete = (
        deployable.group_by("triple").agg(pl.col("trace").n_unique().alias("logs"))
        .filter(pl.col("logs") == len(traces))["triple"]
    )  # fmt: skip
    deployable = deployable.filter(pl.col("triple").is_in(complete.implode()))
    rows = []
    for held_out in traces:
        training = (
            deployable.filter(pl.col("trace") != held_out)
            .group_by("triple")
            .agg(pl.col(column).sum().alias("score"))
            .sort("score", "triple")
        )
        chosen = training["triple"][0]
        value = deployable.filter((pl.col("trace") == held_out) & (pl.col("triple") == chosen))
        easy = _triple_value(runs, EASY).filter(pl.col("trace") == held_out)["avg_bsld"]
        easy_pp = _triple_value(runs, EASY_PLUS_PLUS).filter(pl.col("trace") == held_out)
        chosen_bsld = float(value["avg_bsld"][0])
        row = {
            "trace": held_out,
            "triple": chosen,
            "training_score": float(training["score"][0]),
            "avg_bsld": chosen_bsld,
            "easy": float(easy[0]),
            "reduction_vs_easy": 1.0 - chosen_bsld / float(easy[0]),
            "easy_pp": math.nan,
            "reduction_vs_easy_pp": math.nan,
        }
        if easy_pp.height:
            row["easy_pp"] = float(easy_pp["avg_bsld"][0])
            row["reduction_vs_easy_pp"] = 1.0 - chosen_bsld / row["easy_pp"]
        rows.append(row)
    return pl.DataFrame(rows)


def error_table(runs: pl.DataFrame) -> pl.DataFrame:
    """Prediction errors of AVE2 and every NAG technique per log: MAE (s), mean E-loss, share of
    under-predictions and of 1-s predictions, corrections; the mean over the technique's runs
    (its corrections × variants, whose predictions differ only through the schedule) with the
    range of the MAE over them."""
    _require(runs, ("trace", "technique", "predictor", "mae_s", "mean_eloss"), "error table")
    chosen = runs.filter(pl.col("predictor").is_in(["ave2", "nag"]))
    return (
        chosen.group_by("trace", "technique", maintain_order=True)
        .agg(
            pl.len().alias("runs"),
            pl.col("mae_s").mean(),
            pl.col("mae_s").min().alias("mae_min_s"),
            pl.col("mae_s").max().alias("mae_max_s"),
            pl.col("mean_eloss").mean(),
            pl.col("under_share").mean(),
            pl.col("floor_share").mean(),
            pl.col("corrections").mean().alias("mean_corrections"),
        )
        .sort("trace", "technique")
    )


def week_triple(runs: pl.DataFrame, trace: str) -> Triple:
    """The triple the representative week compares with EASY on ``trace``: the lowest AVEbsld
    among the triples with a real prediction technique (neither EASY's requested times nor the
    clairvoyant run times; ties: the first label in order); when the study has none, the best
    other triple but EASY (a clairvoyant one, or requested times with SJBF).

    Raises
    ------
    ConfigurationError
        The table lacks a column, or ``trace`` has no triple but EASY.
    """
    _require(runs, ("trace", "triple", "technique", "correction", "backfill", "avg_bsld"),
             "week triple")  # fmt: skip
    others = runs.filter((pl.col("trace") == trace) & (pl.col("triple") != EASY.label))
    predicted = others.filter(~pl.col("technique").is_in(["requested", "clairvoyant"]))
    chosen = predicted if predicted.height else others
    if chosen.height == 0:
        raise ConfigurationError(
            f"week triple: {trace!r} has no simulated triple besides EASY ({EASY.label})"
        )
    row = chosen.sort("avg_bsld", "triple").row(0, named=True)
    return Triple(row["technique"], row["correction"], row["backfill"])
