"""The regression over function forms (Carastan-Santos & de Camargo, SC'17, section 4.2).

Observations ``(r, n, s, score)`` pooled over many tuples: r the job's processing time (s), n
its processors, s its submit time relative to the tuple's earliest submission (s, >= 0), score
the job's score (smaller: better to start first). :func:`fit_forms` fits every one of the 576
forms of :mod:`scheduler.policies.learned` by weighted least squares (the paper's eq. 4)

    minimise  Σ_i ((r_i · n_i) · (f(r_i, n_i, s_i + 1 s) − score_i))²

and ranks them by the mean absolute error (eq. 5, unweighted as in the authors' code)
``mean_i |f(r_i, n_i, s_i + 1 s) − score_i|``. The time variable is shifted by 1 s
(:data:`~scheduler.policies.base.SUBMIT_OFFSET_S`), exactly as the policies shift the seconds
since the trace's first submission, so a fitted function is used as a policy on the variable
it was fitted on, and ``log10`` and ``1/x`` are finite at s = 0. :func:`simplify` merges the
coefficients of the top functions as in the paper's Table 3; :func:`write_functions` writes a
fit file (``docs/learned.md``, "Function forms and the fit").

The numerical core (:func:`_fit_form`) works on arrays only; the public functions check inputs
and build the tables.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from scheduler.core.atomic import atomic_path
from scheduler.core.errors import ConfigurationError
from scheduler.policies.base import SUBMIT_OFFSET_S
from scheduler.policies.learned import (
    FIT_COLUMNS,
    TRANSFORMS,
    FunctionForm,
    all_forms,
    check_fit_table,
)

__all__ = ["FIT_EXTRA_COLUMNS", "fit_forms", "simplify", "write_functions"]

#: Columns :func:`fit_forms` adds after :data:`~scheduler.policies.learned.FIT_COLUMNS`:
#: ``form`` (the form as text, symbolic coefficients), ``n_free`` (its identifiable
#: coefficients) and ``wsse`` (the minimised weighted sum of squares, eq. 4; inf: not fitted).
FIT_EXTRA_COLUMNS = ("form", "n_free", "wsse")

#: Fewest observations :func:`fit_forms` accepts (more than the most free coefficients, 3).
MIN_OBSERVATIONS = 4


def _observations(values: object, name: str, n: int | None) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigurationError(f"fit_forms: {name} must hold numbers") from None
    if array.ndim != 1:
        raise ConfigurationError(f"fit_forms: {name} must be 1-D, got shape {array.shape}")
    if n is not None and array.shape[0] != n:
        raise ConfigurationError(
            f"fit_forms: {name} has {array.shape[0]} values, expected {n} (as r)"
        )
    if not np.isfinite(array).all():
        raise ConfigurationError(f"fit_forms: {name} holds values that are not finite")
    return array


def _fit_form(
    form: FunctionForm,
    terms: tuple[np.ndarray, np.ndarray, np.ndarray],
    score: np.ndarray,
    weight: np.ndarray,
    max_nfev: int,
) -> tuple[tuple[float, float, float], float, float]:
    """Fit one form: ``((c1, c2, c3), mae, wsse)``; NaN coefficients and inf errors when the
    form is not finite on the data (a division by log10(1) = 0).

    Every form is linear in its free coefficients (:attr:`FunctionForm.free`, the others at 1),
    so the weighted linear least-squares solution is the optimum. It is computed on the design
    matrix with unit-norm columns (the columns span many orders of magnitude: r·n·r vs r·n/r),
    and is the starting point of :func:`scipy.optimize.least_squares`, which minimises the
    residuals computed by :meth:`FunctionForm.combine` (the function the policy evaluates)
    and stops after at most ``max_nfev`` evaluations; from this start it stops at once unless
    rounding left room to improve. Deterministic: no random start. ``terms`` holds
    ``(α(r), β(n), γ(s))``, the form's transforms of the observations.
    """
    free = form.free
    columns = []
    for k in range(len(free)):
        unit = [0.0] * len(free)
        unit[k] = 1.0
        columns.append(form.combine(*terms, form.coefficients(unit)))
    basis = np.column_stack(columns)
    if not np.isfinite(basis).all():
        return (math.nan, math.nan, math.nan), math.inf, math.inf
    design = weight[:, None] * basis
    target = weight * score
    norms = np.linalg.norm(design, axis=0)
    norms[norms == 0.0] = 1.0  # an all-zero column: its coefficient stays 0
    scaled = design / norms
    start = np.linalg.lstsq(scaled, target, rcond=None)[0]

    def residuals(u: np.ndarray) -> np.ndarray:
        return weight * (form.combine(*terms, form.coefficients(u / norms)) - score)

    def jacobian(u: np.ndarray) -> np.ndarray:
        return scaled

    from scipy.optimize import least_squares  # here: the steps module imports this one

    result = least_squares(residuals, start, jac=jacobian, method="lm", max_nfev=max_nfev)
    values = result.x if result.cost <= 0.5 * float(residuals(start) @ residuals(start)) else start
    coefficients = form.coefficients(values / norms)
    predicted = form.combine(*terms, coefficients)
    mae = float(np.mean(np.abs(predicted - score)))
    wsse = float(np.sum((weight * (predicted - score)) ** 2))
    return coefficients, mae, wsse


def fit_forms(
    r: Sequence[float] | np.ndarray,
    n: Sequence[float] | np.ndarray,
    s: Sequence[float] | np.ndarray,
    score: Sequence[float] | np.ndarray,
    *,
    max_nfev: int = 50,
) -> pl.DataFrame:
    """Fit the 576 forms to the observations and rank them by mean absolute error.

    Parameters
    ----------
    r
        Processing time of each observed job, seconds (> 0).
    n
        Processors of each job (> 0).
    s
        Submit time relative to the earliest submission of the job's tuple, seconds (>= 0);
        the forms are evaluated at ``s + 1 s`` (the policies' time term).
    score
        The job's score (finite).
    max_nfev
        Bound on the residual evaluations of :func:`scipy.optimize.least_squares` per form.

    Returns
    -------
    polars.DataFrame
        One row per form, sorted by ``rank``: the fit-file columns
        (:data:`~scheduler.policies.learned.FIT_COLUMNS`: rank, alpha, beta, gamma, op1, op2,
        c1, c2, c3, mae, duplicate_of) then :data:`FIT_EXTRA_COLUMNS`. Ranks order by mae,
        then non-duplicates first, then the enumeration order; forms not finite on the data
        (mae inf, coefficients NaN) come last. A duplicate form (:attr:`FunctionForm.canonical`
        differs) is not fitted again: it gets its canonical form's coefficients (they evaluate
        the same function in its own writing) and mae, so it ranks right after it, and
        ``duplicate_of`` holds that form's rank.

    Raises
    ------
    ConfigurationError
        Arrays of different lengths, fewer than 4 observations, values not finite, r or n not
        positive, s negative.
    """
    r = _observations(r, "r", None)
    count = r.shape[0]
    n = _observations(n, "n", count)
    s = _observations(s, "s", count)
    score = _observations(score, "score", count)
    if count < MIN_OBSERVATIONS:
        raise ConfigurationError(
            f"fit_forms: {count} observations, need at least {MIN_OBSERVATIONS}"
        )
    if (r <= 0).any() or (n <= 0).any():
        raise ConfigurationError("fit_forms: r (seconds) and n (processors) must be > 0")
    if (s < 0).any():
        raise ConfigurationError("fit_forms: s (seconds since the tuple's first submission) < 0")
    if not isinstance(max_nfev, int) or max_nfev < 1:
        raise ConfigurationError(
            f"fit_forms: max_nfev must be a positive integer, got {max_nfev!r}"
        )
    shifted = s + SUBMIT_OFFSET_S
    weight = r * n
    forms = all_forms()
    position = {form: index for index, form in enumerate(forms)}
    fits: dict[FunctionForm, tuple[tuple[float, float, float], float, float]] = {}
    with np.errstate(all="ignore"):  # an undefined form is reported as not fitted
        transformed = [
            {name: transform(values) for name, transform in TRANSFORMS.items()}
            for values in (r, n, shifted)
        ]
        for form in forms:
            if not form.is_duplicate:
                terms = (
                    transformed[0][form.alpha],
                    transformed[1][form.beta],
                    transformed[2][form.gamma],
                )
                fits[form] = _fit_form(form, terms, score, weight, max_nfev)
    rows = []
    for index, form in enumerate(forms):
        coefficients, mae, wsse = fits[form.canonical]
        rows.append(
            {
                "index": index,
                "alpha": form.alpha,
                "beta": form.beta,
                "gamma": form.gamma,
                "op1": form.op1,
                "op2": form.op2,
                "c1": coefficients[0],
                "c2": coefficients[1],
                "c3": coefficients[2],
                "mae": mae,
                "form": form.expression(),
                "n_free": len(form.free),
                "wsse": wsse,
                "duplicate": form.is_duplicate,
                "canonical": position[form.canonical],
            }
        )
    table = pl.DataFrame(rows).sort("mae", "duplicate", "index")
    table = table.with_columns(pl.int_range(1, table.height + 1, dtype=pl.Int64).alias("rank"))
    rank_of = dict(zip(table["index"].to_list(), table["rank"].to_list(), strict=True))
    table = table.with_columns(
        pl.when(pl.col("duplicate"))
        .then(pl.col("canonical").replace_strict(rank_of, return_dtype=pl.Int64))
        .otherwise(None)
        .alias("duplicate_of")
    )
    names = [name for name, _ in FIT_COLUMNS]
    return check_fit_table(table.select(*names, *FIT_EXTRA_COLUMNS), "fit_forms")


def simplify(table: pl.DataFrame, top: int = 4) -> pl.DataFrame:
    """The ``top`` best distinct functions with their coefficients merged (paper, Table 3).

    Each fitted function is divided by the absolute value of its first free coefficient
    ``|c_lead|`` (``scale``). A positive rescaling does not change the order of a priority,
    so the simplified function orders jobs as the fitted one; e.g. ``c1·log10(r) · c2·n +
    c3·log10(s)`` (free: c1·c2 and c3) becomes ``log10(r)·n + (c3/(c1·c2))·log10(s)``. When
    ``c_lead < 0`` the leading coefficient stays −1 (``flipped`` is True): dividing by the
    negative factor itself would reverse the order, so the sign is kept.

    Parameters
    ----------
    table
        A fit table (:func:`fit_forms`, or a fit file's table).
    top
        How many functions (>= 1): duplicates and forms not fitted are skipped.

    Returns
    -------
    polars.DataFrame
        A fit table (the fit-file columns, so :func:`write_functions` can write it and a policy
        ``learned:PATH#RANK`` can use it), ranked 1..top, with the merged coefficients in
        c1..c3 and ``mae`` of the fitted function; then ``function`` (the text with numbers),
        ``fit_rank`` (the rank in ``table``), ``scale`` (> 0) and ``flipped``.
    """
    if not isinstance(top, int) or top < 1:
        raise ConfigurationError(f"simplify: top must be a positive integer, got {top!r}")
    checked = check_fit_table(table, "simplify").sort("rank")
    best = checked.filter(pl.col("duplicate_of").is_null() & pl.col("mae").is_finite()).head(top)
    rows = []
    for position, record in enumerate(best.iter_rows(named=True), start=1):
        form = FunctionForm(
            record["alpha"], record["beta"], record["gamma"], record["op1"], record["op2"]
        )
        fitted = (record["c1"], record["c2"], record["c3"])
        lead = fitted[form.free[0]]
        scale = abs(lead) if lead != 0.0 else 1.0
        merged = form.coefficients([fitted[k] / scale for k in form.free])
        rows.append(
            {
                "rank": position,
                "alpha": form.alpha,
                "beta": form.beta,
                "gamma": form.gamma,
                "op1": form.op1,
                "op2": form.op2,
                "c1": merged[0],
                "c2": merged[1],
                "c3": merged[2],
                "mae": record["mae"],
                "duplicate_of": None,
                "function": form.expression(merged),
                "fit_rank": record["rank"],
                "scale": scale,
                "flipped": lead < 0.0,
            }
        )
    schema = {
        **{name: {"int": pl.Int64, "str": pl.String, "float": pl.Float64}[kind]
           for name, kind in FIT_COLUMNS},
        "function": pl.String,
        "fit_rank": pl.Int64,
        "scale": pl.Float64,
        "flipped": pl.Boolean,
    }  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


def write_functions(table: pl.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a fit table as a fit file (parquet), atomically; returns the path.

    The table is checked first (:func:`scheduler.policies.learned.check_fit_table`): the
    fit-file columns come first, other columns are kept after them. Parent folders are made.

    Raises
    ------
    ConfigurationError
        The table is not a fit table (naming the target file and the column).
    """
    target = Path(path)
    checked = check_fit_table(table, f"fit file {target}").sort("rank")
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as temporary:
        checked.write_parquet(temporary)
    return target
