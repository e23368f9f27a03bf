"""Run-time prediction inside the simulation: EASY on predicted run times.

- :func:`simulate_predicted` takes a :class:`~scheduler.traces.swf.Trace` (or an SWF job table)
  and returns a :class:`PredictedResult`: the :class:`~scheduler.sim.engine.SimulationResult` of
  :func:`scheduler.simulate` with the columns ``prediction_s`` and ``corrections`` added, and the
  run's total of corrections.
- :func:`simulate_predicted_arrays` is the low-level entry over NumPy arrays.

The scheduler sees each job's prediction instead of its requested time; predictions are made at
submission, learned online from the simulated schedule, corrected when a job outlives them, and
backfilling tries candidates in FCFS order (``"easy"``) or by increasing prediction (``"sjbf"``).
The semantics are in ``docs/simulator.md`` ("Run-time prediction inside the simulation"); the
loop is the compiled sibling of the EASY kernel, ``scheduler.sim._predict_kernel``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.predictors import PREDICTORS
from scheduler.predictors.corrections import CORRECTIONS
from scheduler.predictors.losses import GAMMA_FLOOR, loss_code
from scheduler.predictors.nag import ETA
from scheduler.predictors.nag import new_state as nag_state
from scheduler.predictors.settings import check_learner
from scheduler.sim import _kernel as kernel
from scheduler.sim import _predict_kernel as pk
from scheduler.sim._jobs import (
    TABLE_COLUMNS,
    check_choice,
    job_column,
    job_matrix,
    machine_procs_value,
    trace_table,
)
from scheduler.sim.engine import RESERVATIONS, SimulationConfig, SimulationResult
from scheduler.sim.metrics import summarize, with_job_metrics
from scheduler.traces.swf import Trace, used_procs

BackfillOrder = Literal["easy", "sjbf"]

#: Default ℓ2 weight λ of the NAG predictor: 0 (plain NAG), chosen with η (``docs/prediction.md``).
LAM = 0.0

_PREDICTOR_CODES = {
    "requested": pk.PRED_REQUESTED,
    "ave2": pk.PRED_AVE2,
    "clairvoyant": pk.PRED_CLAIRVOYANT,
    "nag": pk.PRED_NAG,
}
_CORRECTION_CODES = {
    "requested": pk.CORR_REQUESTED,
    "incremental": pk.CORR_INCREMENTAL,
    "doubling": pk.CORR_DOUBLING,
}
_BACKFILL_ORDERS = ("easy", "sjbf")
_TABLE_COLUMNS = (*TABLE_COLUMNS, "user_id")


_RESULT_COLUMNS = (
    "job_id", "submit_s", "procs", "run_s", "estimate_s", "start_s", "backfilled",
    "prediction_s", "corrections",
)  # fmt: skip


@dataclass(frozen=True)
class PredictedArrays:
    """A predicted simulation over arrays, in the input's order: start times (s), whether each
    job was backfilled, its prediction at submission (s), its corrections; for ``"nag"`` also
    the features at submission, one row per job (``docs/simulator.md``), else ``None`` (and
    ``None`` when not asked for: ``simulate_predicted_arrays(..., features=False)``)."""

    start_s: np.ndarray
    backfilled: np.ndarray
    prediction_s: np.ndarray
    corrections: np.ndarray
    features: np.ndarray | None = None


@dataclass(frozen=True)
class PredictedResult(SimulationResult):
    """:class:`SimulationResult` plus the predictions: ``jobs`` has the extra columns
    ``prediction_s`` (at submission) and ``corrections``; ``estimate_s`` holds the prediction."""

    predictor: str = "requested"
    loss: str | None = None
    correction: str = "requested"
    backfill_order: str = "easy"
    total_corrections: int = 0

    @property
    def prediction_mae_s(self) -> float:
        """Mean absolute error (s) of the predictions made at submission:
        mean over jobs of ``|prediction_s - run_s|``."""
        return float((self.jobs["prediction_s"] - self.jobs["run_s"]).abs().mean())  # type: ignore[arg-type]

    def prediction_dict(self) -> dict[str, object]:
        """The prediction settings and figures as a plain dict (JSON-ready)."""
        return {
            "predictor": self.predictor,
            "loss": self.loss,
            "correction": self.correction,
            "backfill_order": self.backfill_order,
            "total_corrections": self.total_corrections,
            "prediction_mae_s": self.prediction_mae_s,
        }


def _names(predictor: str, correction: str, backfill_order: str) -> tuple[str, str, str]:
    name = PREDICTORS.lookup(predictor, where="predictor")
    corr = CORRECTIONS.lookup(correction, where="correction")
    if not isinstance(backfill_order, str):
        raise ConfigurationError(f"backfill_order must be one of {list(_BACKFILL_ORDERS)}")
    order = backfill_order.lower()
    check_choice("backfill_order", order, _BACKFILL_ORDERS)
    return name, corr, order


def _user_index(users: np.ndarray) -> np.ndarray:
    """Each job's user numbered 0 … u−1 in increasing order of its user number (the inverse of
    ``np.unique``), int64. SWF user numbers are small non-negative integers: a table of the
    numbers present gives the same in O(n + the largest number), without ``np.unique``'s sort
    (0.5 ms against 6.5 ms on CEA-Curie's 295,540 jobs). Other values (negative, large or not
    integers) take ``np.unique``."""
    if users.dtype.kind in "iu" and users.size:
        low, high = int(users.min()), int(users.max())
        if low >= 0 and high <= 4 * users.size + 1024:
            present = np.zeros(high + 1, dtype=bool)
            present[users] = True
            rank = np.cumsum(present, dtype=np.int64) - 1
            return rank[users]
    _, inverse = np.unique(users, return_inverse=True)
    return inverse.astype(np.int64).reshape(users.shape)


def simulate_predicted_arrays(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    requested_s: np.ndarray,
    user_id: np.ndarray,
    machine_procs: int,
    *,
    job_id: np.ndarray | None = None,
    predictor: str = "requested",
    loss: object = "eloss",
    correction: str = "requested",
    backfill_order: BackfillOrder = "easy",
    reservation: str = "default",
    whole_seconds: bool = False,
    eta: float = ETA,
    lam: float = LAM,
    squares: bool = True,
    gamma_floor: float = GAMMA_FLOOR,
    features: bool = True,
) -> PredictedArrays:
    """EASY(FCFS) on predicted run times over plain arrays (one entry per job, any order).

    ``user_id`` is the SWF user number (any integers); the other arrays are as for
    :func:`scheduler.sim.engine.simulate_arrays`, with the requested time as the upper bound of
    every prediction. ``loss``, ``eta``, ``lam``, ``squares`` and ``gamma_floor`` configure the
    ``"nag"`` predictor (``scheduler.predictors.nag.NagLearner``) and are ignored otherwise,
    but always checked (:func:`scheduler.predictors.settings.check_learner`: outside their
    bounds every prediction would collapse to the 1-s floor).
    ``reservation="classic"`` counts, in the head's extra processors, every running job whose
    predicted end equals the shadow time; ``whole_seconds`` rounds the AVE2 and NAG predictions
    down to whole seconds before their bounds. Both as the published study's simulator (pyss)
    does: ``docs/prediction.md``, "The published simulator's semantics". ``features``: return
    the ``"nag"`` predictor's features (a copy of n × 20 floats, 47 MB on CEA-Curie); ``False``
    leaves ``PredictedArrays.features`` ``None`` (:func:`simulate_predicted` does not read them).
    """
    name, corr, order = _names(predictor, correction, backfill_order)
    features = flag(features, "features")
    check_choice("reservation", reservation, RESERVATIONS)
    whole_seconds = flag(whole_seconds, "whole_seconds")
    squares = flag(squares, "squares")
    eta, lam, gamma_floor = check_learner(eta, lam, gamma_floor)  # whatever the predictor
    code = loss_code(loss) if name == "nag" else 0
    m = machine_procs_value(machine_procs)
    # the requested time is both the estimate the kernel starts from and the upper bound
    submit = job_column("submit_s", submit_s, None)
    requested = job_column("requested_s", requested_s, submit.shape[0])
    matrix = job_matrix(submit, procs, run_s, requested, m, job_id=job_id)
    jobs = matrix.jobs
    n = jobs.shape[1]
    users = np.asarray(user_id)
    if users.shape != (n,):
        raise ConfigurationError(f"user_id has shape {users.shape}, expected ({n},)")
    user_index = _user_index(users)
    if matrix.order is not None:
        user_index = np.ascontiguousarray(user_index[matrix.order])
    n_users = int(user_index.max()) + 1
    istate, iwork, fwork = kernel.new_state(jobs, m)
    keys = np.zeros((kernel.B_BASE + 1, n))  # row B_BASE: the SJBF key, the predictions
    pred = keys[kernel.B_BASE]
    ncorr = np.zeros(n, dtype=np.int64)
    feats = np.zeros((n if name == "nag" else 1, pk.N_FEAT))
    ustate, links, uhead = pk.new_user_state(n, n_users)
    vec, acc = nag_state(pk.N_FEAT, squares=squares)
    pk.run(
        jobs, user_index, _PREDICTOR_CODES[name], _CORRECTION_CODES[corr], order == "sjbf",
        reservation == "classic", whole_seconds, code, eta, lam, gamma_floor,
        istate, iwork, fwork, keys, pred, ncorr, feats, ustate, links, uhead, vec, acc,
    )  # fmt: skip

    restore = matrix.restore
    return PredictedArrays(
        start_s=restore(fwork[kernel.START]),
        backfilled=restore(iwork[kernel.STATUS] == kernel.STARTED_BACKFILL),
        prediction_s=restore(pred),
        corrections=restore(ncorr),
        features=restore(feats) if name == "nag" and features else None,
    )


def simulate_predicted(
    trace: Trace | pl.DataFrame,
    *,
    predictor: str = "requested",
    loss: object = "eloss",
    correction: str = "requested",
    backfill_order: BackfillOrder = "easy",
    machine_procs: int | None = None,
    reservation: str = "default",
    whole_seconds: bool = False,
    eta: float = ETA,
    lam: float = LAM,
    squares: bool = True,
    gamma_floor: float = GAMMA_FLOOR,
) -> PredictedResult:
    """EASY(FCFS) with run-time predictions, corrections and EASY/SJBF backfilling on a trace.

    ``predictor``: ``requested``, ``ave2``, ``clairvoyant`` or ``nag``
    (``scheduler.predictors.PREDICTORS``); ``correction``: ``requested``, ``incremental`` or
    ``doubling`` (``scheduler.predictors.corrections.CORRECTIONS``); ``backfill_order``:
    ``easy`` (FCFS) or ``sjbf`` (shortest predicted job first). The user of each job is SWF
    field 12 (``user_id``). Each job uses its allocated processors (SWF field 5), or its
    requested ones (field 8) when the allocated count is unknown.

    ``loss``, ``eta`` (the step size η, s), ``lam`` (the ℓ2 weight λ), ``squares`` and
    ``gamma_floor`` (the floor of the loss weight γ) configure the ``nag`` learner
    (:class:`~scheduler.predictors.nag.NagLearner`). A setting outside its bounds
    (:mod:`scheduler.predictors.settings`: η in (0, 2**52] s, λ in [0, 1e12], the floor in
    (0, 1000]) is a :class:`~scheduler.core.errors.ConfigurationError` naming it, whatever the
    predictor.
    """
    table, m = trace_table(trace, machine_procs, "simulate_predicted", _TABLE_COLUMNS)
    m = machine_procs_value(m)
    name, corr, order = _names(predictor, correction, backfill_order)
    jobs = table.select(
        "job_id",
        "submit_s",
        used_procs().alias("procs"),
        "run_s",
        pl.col("req_time_s").cast(pl.Float64).alias("requested_s"),
        "user_id",
    )
    out = simulate_predicted_arrays(
        jobs["submit_s"].to_numpy(),
        jobs["procs"].to_numpy(),
        jobs["run_s"].to_numpy(),
        jobs["requested_s"].to_numpy(),
        jobs["user_id"].to_numpy(),
        m,
        job_id=jobs["job_id"].to_numpy(),
        predictor=name,
        loss=loss,
        correction=corr,
        backfill_order=order,
        reservation=reservation,
        whole_seconds=whole_seconds,
        eta=eta,
        lam=lam,
        squares=squares,
        gamma_floor=gamma_floor,
        features=False,
    )
    result = (
        jobs.drop("requested_s", "user_id")
        .with_columns(
            pl.Series("estimate_s", out.prediction_s),
            pl.Series("start_s", out.start_s),
            pl.Series("backfilled", out.backfilled),
            pl.Series("prediction_s", out.prediction_s),
            pl.Series("corrections", out.corrections),
        )
        .select(*_RESULT_COLUMNS)
    )
    result = with_job_metrics(result, tau_s=BSLD_TAU_S).sort("submit_s", "job_id")
    config = SimulationConfig(
        machine_procs=m,
        primary="FCFS",
        backfill="SJBF" if order == "sjbf" else "FCFS",
        reservation=reservation,  # type: ignore[arg-type]
        outlive="requested",
        estimate=f"predicted:{name}",
    )
    return PredictedResult(
        result,
        summarize(result, m, tau_s=BSLD_TAU_S),
        config,
        source_jobs=table,
        predictor=name,
        loss=str(loss) if name == "nag" else None,
        correction=corr,
        backfill_order=order,
        total_corrections=int(out.corrections.sum()),
    )
