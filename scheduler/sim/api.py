"""The public entry point :func:`simulate`: plain EASY, or EASY on run-time predictions.

``scheduler.simulate`` is this module's :func:`simulate`. Without a ``predictor`` it is
:func:`scheduler.sim.engine.simulate_easy` (the base kernel); with one it delegates to the
prediction variant :func:`scheduler.sim.prediction.simulate_predicted`, after
checking that the other options are ones the variant supports.

Why a module of its own: ``prediction`` imports ``engine`` (result classes, input checks), so
the dispatch cannot live in ``engine`` without a cycle; and keeping ``engine`` free of any
import of the prediction modules keeps the rerun hashes of the studies that simulate through
``engine`` (``core.code_hash``) from covering the prediction kernel they never run.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.core.units import parse_duration
from scheduler.policies import get_policy
from scheduler.sim.engine import (
    EstimateSource,
    Outlive,
    Reservation,
    SimulationResult,
    simulate_easy,
)
from scheduler.sim.prediction import simulate_predicted
from scheduler.traces.swf import Trace

__all__ = ["BACKFILL_ORDER_NAMES", "PREDICTION_SUPPORT", "SJBF", "simulate"]

#: Backfill name of shortest-job-backfilled-first: candidates by increasing estimate. Without a
#: predictor it is the registered policy SPF used as the backfill order (the estimate being the
#: requested time, or the run time with ``estimate="clairvoyant"``); with one, the prediction
#: variant's ``"sjbf"`` order (increasing prediction at submission).
SJBF = "SJBF"

#: ``backfill`` names the prediction variant accepts (upper case) -> its ``backfill_order``.
BACKFILL_ORDER_NAMES = {"FCFS": "easy", SJBF: "sjbf", "SPF": "sjbf"}

#: What the prediction variant supports, for error messages.
PREDICTION_SUPPORT = (
    "the prediction variant (predictor=...) supports primary FCFS, backfill FCFS (EASY) or SJBF, "
    "no threshold, estimate 'requested' (the predictions replace it) and outlive 'requested' "
    "(the correction replaces it)"
)


def _plain_backfill(backfill: str | None) -> str | None:
    """``backfill`` for the plain engine: ``SJBF`` (any case) is the policy SPF."""
    if isinstance(backfill, str) and backfill.strip().upper() == SJBF:
        return "SPF"
    return backfill


def _unsupported(what: str) -> ConfigurationError:
    return ConfigurationError(f"{PREDICTION_SUPPORT}; got {what}")


def _backfill_order(backfill: str | None) -> str:
    if backfill is None:
        raise _unsupported("backfill=None (no backfilling)")
    if not isinstance(backfill, str):
        raise TypeError(f"backfill must be a policy name (str) or None, got {backfill!r}")
    order = BACKFILL_ORDER_NAMES.get(backfill.strip().upper())
    if order is None:
        raise _unsupported(f"backfill={backfill!r}")
    return order


def simulate(
    trace: Trace | pl.DataFrame,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    threshold: float | str | None = None,
    *,
    threshold_backfill: bool = False,
    machine_procs: int | None = None,
    estimate: EstimateSource | np.ndarray = "requested",
    reservation: Reservation = "default",
    outlive: Outlive = "requested",
    predictor: str | None = None,
    loss: object = None,
    correction: str | None = None,
    eta: float | None = None,
    lam: float | None = None,
) -> SimulationResult:
    """Simulate EASY(primary, backfill, Θ) on a trace's jobs, optionally on predicted run times.

    Parameters
    ----------
    trace
        A :class:`~scheduler.traces.swf.Trace` (usually after :func:`scheduler.strong_filter`), or a
        table with the SWF columns ``job_id, submit_s, run_s, alloc_procs, req_procs,
        req_time_s`` (then ``machine_procs`` is required; with a predictor also ``user_id``).
    primary, backfill
        Policy names (``scheduler.policies.base.policy_names()``); ``backfill=None`` disables
        backfilling. ``backfill="SJBF"`` (any case) is shortest-job-backfilled-first: without a
        predictor it is the same as ``backfill="SPF"`` (by increasing estimate), with one the
        variant's order by increasing prediction.
    threshold
        Θ: jobs waiting longer than this go to the head of the queue. Seconds or a string with
        a unit (``"40h"``); ``None`` or ``"none"`` disables it.
    threshold_backfill
        Backfill candidates in the thresholded order too (the jobs waiting longer than Θ first,
        by submit time and job number, then the others in ``backfill``'s order; Algorithm 2 of
        Reis's thesis when ``primary == backfill``). Default ``False``: ``backfill``'s order
        alone, Θ playing no role in it. No effect without a threshold; not with a predictor.
    machine_procs
        m, processors; overrides the trace's.
    estimate
        ``"requested"`` (the requested time, as a real scheduler sees it), ``"clairvoyant"``
        (the actual run time), or an array of per-job estimates (s) in the table's row order.
    reservation, outlive
        See ``docs/simulator.md``.
    predictor
        ``None`` (default): plain EASY on the estimates. Else a run-time predictor of
        ``scheduler.predictors.PREDICTORS`` (``requested``, ``ave2``, ``clairvoyant``, ``nag``):
        the run goes to :func:`scheduler.sim.prediction.simulate_predicted` and returns a
        :class:`~scheduler.sim.prediction.PredictedResult`. The variant supports primary FCFS,
        backfill FCFS or SJBF (``SPF`` is accepted as the same order), no threshold (nor
        ``threshold_backfill``), ``estimate="requested"`` and ``outlive="requested"``; anything
        else is a :class:`~scheduler.core.errors.ConfigurationError`.
    loss, eta, lam
        The ``nag`` predictor's loss spec (default ``"eloss"``; see
        :func:`scheduler.predictors.parse_loss`), step η (s) and ℓ2 weight λ; only with
        ``predictor="nag"``.
    correction
        What happens to a running job that outlives its prediction (``requested``,
        ``incremental``, ``doubling``; default ``requested``); only with a predictor.

    Notes
    -----
    Each job uses its allocated processors (SWF field 5), or its requested ones (field 8) when
    the allocated count is unknown.
    """
    if predictor is None:
        given = [
            name
            for name, value in (("loss", loss), ("correction", correction), ("eta", eta),
                                ("lam", lam))
            if value is not None
        ]  # fmt: skip
        if given:
            raise ConfigurationError(
                f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to run-time "
                "predictions only: pass predictor= (requested, ave2, clairvoyant or nag)"
            )
        return simulate_easy(
            trace, primary, _plain_backfill(backfill), threshold,
            threshold_backfill=threshold_backfill, machine_procs=machine_procs,
            estimate=estimate, reservation=reservation, outlive=outlive,
        )  # fmt: skip
    if not isinstance(predictor, str):
        raise TypeError(f"predictor must be a predictor name (str) or None, got {predictor!r}")
    if not isinstance(primary, str):
        raise TypeError(f"primary must be a policy name (str), got {primary!r}")
    if get_policy(primary).name != "FCFS":
        raise _unsupported(f"primary={primary!r}")
    order = _backfill_order(backfill)
    if not math.isinf(parse_duration(threshold)):
        raise _unsupported(f"threshold={threshold!r}")
    if flag(threshold_backfill, "threshold_backfill"):
        raise _unsupported(f"threshold_backfill={threshold_backfill!r}")
    if not (isinstance(estimate, str) and estimate == "requested"):
        shown = estimate if isinstance(estimate, str) else f"an {type(estimate).__name__}"
        raise _unsupported(f"estimate={shown!r}")
    if outlive != "requested":
        raise _unsupported(f"outlive={outlive!r}")
    options: dict[str, object] = {}
    for name, value in (("loss", loss), ("eta", eta), ("lam", lam)):
        if value is not None:
            options[name] = value
    if options and predictor.strip().lower() != "nag":
        raise ConfigurationError(
            f"{', '.join(options)} configure{'s' if len(options) == 1 else ''} the nag "
            f"predictor only, got predictor={predictor!r}"
        )
    return simulate_predicted(
        trace,
        predictor=predictor,
        correction="requested" if correction is None else correction,
        backfill_order=order,  # type: ignore[arg-type]
        machine_procs=machine_procs,
        reservation=reservation,
        **options,  # type: ignore[arg-type]
    )
