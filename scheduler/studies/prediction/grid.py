"""The learner grid: EASY on NAG predictions for every (loss, η, λ), against plain EASY.

:func:`learner_grid` simulates one trace once with the requested times (plain EASY: predictor
``"requested"``, no correction needed, FCFS backfilling) and once per combination of a loss, a
step size η (s) and an ℓ2 weight λ with the ``"nag"`` predictor
(:func:`scheduler.sim.prediction.simulate_predicted`), and returns one row per run. It is how
the defaults of the learner were chosen, on logs the study does not use
(``docs/prediction.md``, "Choosing the learner's η and λ"); ``scheduler prediction-grid`` runs
it from the command line.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from scheduler.core.errors import ConfigurationError, quote
from scheduler.predictors.losses import LOSSES, parse_loss
from scheduler.predictors.settings import learner_setting
from scheduler.sim.prediction import PredictedResult, simulate_predicted
from scheduler.traces.swf import Trace

__all__ = ["GRID_COLUMNS", "PREDICTION_FLOOR_S", "check_grid", "learner_grid", "trace_name"]

#: Smallest prediction the engine uses (s): predictions are bounded to [1 s, requested time]
#: (``docs/simulator.md``); a prediction at this value is "at the floor".
PREDICTION_FLOOR_S = 1.0

#: Columns of :func:`learner_grid`, in order.
GRID_COLUMNS = (
    "trace", "predictor", "loss", "eta", "lam", "correction", "backfill_order", "jobs",
    "avg_bsld", "avg_wait_s", "relative_avg_bsld", "relative_avg_wait", "mae_s",
    "under_share", "floor_share", "corrections", "wall_s",
)  # fmt: skip

_SCHEMA = {
    "trace": pl.String,
    "predictor": pl.String,
    "loss": pl.String,
    "eta": pl.Float64,
    "lam": pl.Float64,
    "correction": pl.String,
    "backfill_order": pl.String,
    "jobs": pl.Int64,
    "avg_bsld": pl.Float64,
    "avg_wait_s": pl.Float64,
    "relative_avg_bsld": pl.Float64,
    "relative_avg_wait": pl.Float64,
    "mae_s": pl.Float64,
    "under_share": pl.Float64,
    "floor_share": pl.Float64,
    "corrections": pl.Int64,
    "wall_s": pl.Float64,
}


def _numbers(name: str, values: Iterable[object]) -> list[float]:
    if isinstance(values, str | bytes):
        raise ConfigurationError(f"{name}: expected a list of numbers, got {quote(values)}")
    out: list[float] = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigurationError(f"{name}: expected numbers, got {quote(value)}")
        number = float(value)
        if number not in out:
            out.append(number)
    if not out:
        raise ConfigurationError(f"{name}: give at least one value")
    return out


def check_grid(
    losses: Iterable[object], etas: Iterable[object], lams: Iterable[object]
) -> tuple[list[str], list[float], list[float]]:
    """Check and normalise the axes of a learner grid (before any simulation runs).

    Parameters
    ----------
    losses
        Loss names of :data:`scheduler.predictors.losses.LOSSES` (``eloss``, ``squared``,
        ``absolute``) or spec strings ``"over=…,under=…,gamma=…"``.
    etas
        Step sizes η (s), each > 0.
    lams
        ℓ2 weights λ, each ≥ 0 (every value within the bounds of
        :func:`scheduler.predictors.settings.learner_setting`).

    Returns
    -------
    losses, etas, lams
        Losses by registered name (also when given as the spec of a registered loss), else
        by their canonical spec string; numbers as floats; duplicates dropped, order kept.

    Raises
    ------
    ConfigurationError
        An unknown loss (the message lists the known names), an η or a λ outside its bounds
        (the message of :func:`scheduler.predictors.settings.learner_setting`), a value that is
        not a number, or an empty axis.
    """
    if isinstance(losses, str):
        losses = [losses]
    names: list[str] = []
    for loss in losses:
        spec = parse_loss(loss)
        named = [name for name in LOSSES if LOSSES[name] == spec]
        name = named[0] if named else spec.spec
        if name not in names:
            names.append(name)
    if not names:
        raise ConfigurationError("losses: give at least one loss")
    eta_values = [learner_setting("eta", eta) for eta in _numbers("eta", etas)]
    lam_values = [learner_setting("lam", lam) for lam in _numbers("lam", lams)]
    return names, eta_values, lam_values


def trace_name(trace: Trace | pl.DataFrame) -> str | None:
    """The name of a trace's file without ``.swf``/``.swf.gz`` (``"KTH-SP2"``), else ``None``."""
    if not isinstance(trace, Trace) or trace.path is None:
        return None
    name = Path(trace.path).name
    for suffix in (".gz", ".swf"):
        name = name.removesuffix(suffix)
    return name


def _row(result: PredictedResult, wall_s: float, baseline: PredictedResult | None) -> dict:
    jobs = result.jobs
    prediction, run = jobs["prediction_s"], jobs["run_s"].cast(pl.Float64)
    summary = result.summary
    base = summary if baseline is None else baseline.summary
    relative_wait = summary.avg_wait_s / base.avg_wait_s if base.avg_wait_s > 0 else None
    return {
        "predictor": result.predictor,
        "loss": result.loss,
        "correction": result.correction,
        "backfill_order": result.backfill_order,
        "jobs": summary.jobs,
        "avg_bsld": summary.avg_bsld,
        "avg_wait_s": summary.avg_wait_s,
        "relative_avg_bsld": summary.avg_bsld / base.avg_bsld,
        "relative_avg_wait": relative_wait,
        "mae_s": float((prediction - run).abs().mean()),
        "under_share": float((prediction < run).mean()),
        "floor_share": float((prediction <= PREDICTION_FLOOR_S).mean()),
        "corrections": result.total_corrections,
        "wall_s": wall_s,
    }


def _timed(trace: Trace | pl.DataFrame, **kwargs: object) -> tuple[PredictedResult, float]:
    started = time.perf_counter()
    result = simulate_predicted(trace, **kwargs)  # type: ignore[arg-type]
    return result, time.perf_counter() - started


def learner_grid(
    trace: Trace | pl.DataFrame,
    *,
    losses: Iterable[object],
    etas: Iterable[float],
    lams: Iterable[float],
    correction: str = "incremental",
    backfill_order: str = "sjbf",
    machine_procs: int | None = None,
    reservation: str = "default",
    whole_seconds: bool = False,
) -> pl.DataFrame:
    """Simulate ``trace`` with the NAG predictor for every (loss, η, λ), and plain EASY once.

    Parameters
    ----------
    trace
        A (filtered) :class:`~scheduler.traces.swf.Trace`, or an SWF job table with
        ``machine_procs``.
    losses
        Losses of the learner: names (``eloss``, ``squared``, ``absolute``) or spec strings.
    etas
        Step sizes η (s), each > 0.
    lams
        ℓ2 weights λ, each ≥ 0 (0 is plain NAG).
    correction
        Correction of an under-prediction for the NAG runs (default ``incremental``).
    backfill_order
        Backfilling order of the NAG runs: ``sjbf`` (default, by increasing prediction) or
        ``easy`` (FCFS).
    machine_procs
        Machine size (processors); default the trace's.
    reservation, whole_seconds
        The reservation rule of every run, baseline included, and whole-second NAG predictions
        (:func:`~scheduler.sim.prediction.simulate_predicted`; the published simulator's rules
        are ``"classic"`` and ``True``).

    Returns
    -------
    polars.DataFrame
        Columns :data:`GRID_COLUMNS`, ``1 + len(losses) · len(etas) · len(lams)`` rows. The first
        row is the baseline, plain EASY (``predictor = "requested"``, correction ``requested``,
        backfill ``easy``; ``loss``, ``eta``, ``lam`` null); then one row per combination, losses
        outermost, λ innermost. ``eta`` (s), ``lam``; ``avg_bsld`` (AVEbsld, τ = 10 s) and
        ``avg_wait_s`` (s) of the run; ``relative_avg_bsld`` and ``relative_avg_wait``: the same
        divided by the baseline's (1 for the baseline; the wait ratio is null when the
        baseline's wait is 0); ``mae_s``: mean |prediction at submission − run time| (s);
        ``under_share``: share of jobs whose prediction at submission was below their run time;
        ``floor_share``: share predicted at the :data:`PREDICTION_FLOOR_S` floor;
        ``corrections``: corrections in the run; ``wall_s``: wall time of the simulation (s, the
        only column that is not deterministic). ``trace`` is the file name without ``.swf.gz``
        (null for a bare table).

    Raises
    ------
    ConfigurationError
        A bad axis value (:func:`check_grid`, checked before anything runs), correction or
        backfill order.
    """
    loss_names, eta_values, lam_values = check_grid(losses, etas, lams)
    common = {
        "machine_procs": machine_procs,
        "correction": correction,
        "backfill_order": backfill_order,
        "reservation": reservation,
        "whole_seconds": whole_seconds,
    }
    baseline, baseline_wall = _timed(trace, machine_procs=machine_procs, reservation=reservation)
    rows = [{**_row(baseline, baseline_wall, None), "loss": None, "eta": None, "lam": None}]
    for loss in loss_names:
        for eta in eta_values:
            for lam in lam_values:
                result, wall = _timed(trace, predictor="nag", loss=loss, eta=eta, lam=lam, **common)
                rows.append({**_row(result, wall, baseline), "loss": loss, "eta": eta, "lam": lam})
    name = trace_name(trace)
    table = pl.DataFrame(rows, schema=_SCHEMA)
    return table.with_columns(pl.lit(name, pl.String).alias("trace")).select(GRID_COLUMNS)
