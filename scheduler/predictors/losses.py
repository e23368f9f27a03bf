"""The 20 asymmetric losses of the run-time prediction study.

A loss compares a predicted run time ``f`` (s) with the actual run time ``p`` (s) of a job that
requested ``q`` processors::

    L(f, p) = γ(p, q) · L_over(f − p)    when f ≥ p   (over-prediction)
    L(f, p) = γ(p, q) · L_under(p − f)   when f < p   (under-prediction)

with ``L_over, L_under ∈ {linear: z ↦ z, squared: z ↦ z²}`` (``z`` in s, so a loss is in s or
s², times the dimensionless weight γ) and one of five weights (natural logarithms, ``p`` in s,
``q`` in processors):

========================  =====================================================
``1``                     1
``5+log(q/p)``            5 + log(q / p)
``5+log(p/q)``            5 + log(p / q)
``11+log(1/(qp))``        11 + log(1 / (q · p))
``log(qp)``               log(q · p)
========================  =====================================================

2 × 2 × 5 = 20 losses. The *E-loss* (``"eloss"``) is squared over-prediction, linear
under-prediction, γ = log(q · p). (The published equation prints log(r_j · p_j); its text
describes a weight growing with run time and processors, so q · p is used.)

Guards (the published weights are undefined or non-positive on part of real logs):

* inside γ only, ``p`` and ``q`` are floored at 1 (s, processor): a run time of 0 s has no
  logarithm;
* γ is clipped at ``gamma_floor`` (default :data:`GAMMA_FLOOR` = 0.01; bounds in
  :mod:`scheduler.predictors.settings`). Four of the five weights
  reach 0 or below on ordinary jobs (``5 + log(q/p) ≤ 0`` once p ≥ 148 q seconds,
  ``11 + log(1/(qp)) ≤ 0`` once q·p ≥ e¹¹ ≈ 59 874 processor-seconds, ``log(qp) = 0`` for a
  1-processor 1-s job); a zero weight ignores a job and a negative one would *reward* the
  error (its gradient pushes the prediction away from ``p``). The floor keeps every loss convex
  with a minimum at ``f = p``.

Spec strings
------------
``"over=squared,under=linear,gamma=log(qp)"`` (keys in any order, all three required, case,
spaces, ``*`` and ``·`` ignored in the weight; ``pq`` is accepted for ``qp``), or a registered
name of :data:`LOSSES` (``"eloss"``, ``"squared"``, ``"absolute"``). :func:`parse_loss` raises a
:class:`~scheduler.core.errors.ConfigurationError` naming the part that does not parse.

Compiled use
------------
Each loss has a small integer *code* (:attr:`LossSpec.code`, 0…19:
``4 · gamma + 2 · over + under`` with shapes ``linear = 0, squared = 1`` and weights in the order
of the table). :func:`loss_at` and :func:`loss_grad_at` are numba functions of
``(code, f, p, q, gamma_floor)`` that a compiled kernel calls without Python;
:func:`loss` and :func:`loss_derivative` are their NumPy-broadcasting wrappers.

The derivative is taken with respect to ``f`` (the prediction). At ``f = p`` the over-prediction
branch applies (``f ≥ p``): a linear over-prediction gives γ there, a squared one 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scheduler.core.compile import jit
from scheduler.core.errors import ConfigurationError, quote
from scheduler.core.registry import Registry
from scheduler.predictors.settings import learner_setting

#: Shapes of one side of a loss, in code order.
SHAPES: tuple[str, ...] = ("linear", "squared")
#: Weights γ, in code order (canonical spelling).
GAMMAS: tuple[str, ...] = ("1", "5+log(q/p)", "5+log(p/q)", "11+log(1/(qp))", "log(qp)")
#: Default floor of γ (dimensionless); see the module docstring.
GAMMA_FLOOR = 0.01
#: Number of loss codes.
N_LOSSES = len(SHAPES) ** 2 * len(GAMMAS)

_GAMMA_ALIASES = {g: i for i, g in enumerate(GAMMAS)}
_GAMMA_ALIASES.update({"log(pq)": 4, "11+log(1/(pq))": 3})
_KEYS = ("over", "under", "gamma")


@dataclass(frozen=True)
class LossSpec:
    """One of the 20 losses.

    Attributes
    ----------
    over
        Shape of the over-prediction side (``f ≥ p``): ``"linear"`` or ``"squared"``.
    under
        Shape of the under-prediction side (``f < p``).
    gamma
        The weight, canonical spelling from :data:`GAMMAS`.
    """

    over: str
    under: str
    gamma: str

    def __post_init__(self) -> None:
        if self.over not in SHAPES or self.under not in SHAPES or self.gamma not in GAMMAS:
            raise ValueError(f"not a loss: {self!r}")

    @property
    def code(self) -> int:
        """The integer code that the compiled functions take (0 … 19)."""
        return 4 * GAMMAS.index(self.gamma) + 2 * SHAPES.index(self.over) + SHAPES.index(self.under)

    @property
    def spec(self) -> str:
        """The canonical spec string, which :func:`parse_loss` reads back to ``self``."""
        return f"over={self.over},under={self.under},gamma={self.gamma}"

    def __str__(self) -> str:
        return self.spec

    @classmethod
    def from_code(cls, code: int) -> LossSpec:
        """The loss with integer code ``code`` (0 … 19)."""
        if not 0 <= int(code) < N_LOSSES:
            raise ValueError(f"loss code {code} not in 0..{N_LOSSES - 1}")
        gamma, rest = divmod(int(code), 4)
        over, under = divmod(rest, 2)
        return cls(SHAPES[over], SHAPES[under], GAMMAS[gamma])


#: Every loss, in code order.
ALL_LOSSES: tuple[LossSpec, ...] = tuple(LossSpec.from_code(c) for c in range(N_LOSSES))

#: Named losses; a spec string may be one of these names.
LOSSES: Registry[LossSpec] = Registry("loss", canonical=str.lower, plural="losses")
LOSSES.add(
    "eloss",
    LossSpec("squared", "linear", "log(qp)"),
    "E-loss: squared over-prediction, linear under-prediction, γ = log(q·p)",
)
LOSSES.add("squared", LossSpec("squared", "squared", "1"), "plain squared error")
LOSSES.add("absolute", LossSpec("linear", "linear", "1"), "plain absolute error")


def parse_loss(spec: object, *, where: str = "loss") -> LossSpec:
    """Read a loss spec: a name of :data:`LOSSES` or ``"over=…,under=…,gamma=…"``.

    Parameters
    ----------
    spec
        The text (a :class:`LossSpec` is returned unchanged).
    where
        Prefix of error messages (a config key, a CLI option).

    Raises
    ------
    ConfigurationError
        The spec does not parse; the message quotes the offending part (unknown key, duplicate
        or missing key, unknown shape or weight, a part without ``=``).
    """
    if isinstance(spec, LossSpec):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigurationError(
            f"{where}: a loss spec must be a non-empty string, got {quote(spec)}"
        )
    named = LOSSES.canonical(spec)
    if named is not None:
        return LOSSES[named]
    values: dict[str, str] = {}
    for raw in spec.split(","):
        part = raw.strip()
        if "=" not in part:
            raise ConfigurationError(
                f"{where}: part {quote(part)} of loss spec {quote(spec)} is not key=value "
                f"(keys: {', '.join(_KEYS)}; or a named loss: {', '.join(LOSSES)})"
            )
        key, _, value = part.partition("=")
        key = key.strip().lower()
        value = value.strip().lower()
        if key not in _KEYS:
            raise ConfigurationError(
                f"{where}: unknown key {quote(key)} in loss spec {quote(spec)}; "
                f"keys: {', '.join(_KEYS)}"
            )
        if key in values:
            raise ConfigurationError(
                f"{where}: key {quote(key)} given twice in loss spec {quote(spec)}"
            )
        values[key] = value
    missing = [k for k in _KEYS if k not in values]
    if missing:
        raise ConfigurationError(
            f"{where}: loss spec {quote(spec)} lacks {', '.join(k + '=' for k in missing)}"
        )
    for key in ("over", "under"):
        if values[key] not in SHAPES:
            raise ConfigurationError(
                f"{where}: {key}={quote(values[key])} in loss spec {quote(spec)} is not a shape; "
                f"shapes: {', '.join(SHAPES)}"
            )
    gamma = values["gamma"]
    for char in " *·":
        gamma = gamma.replace(char, "")
    if gamma not in _GAMMA_ALIASES:
        raise ConfigurationError(
            f"{where}: gamma={quote(values['gamma'])} in loss spec {quote(spec)} is not a weight; "
            f"weights: {', '.join(GAMMAS)}"
        )
    return LossSpec(values["over"], values["under"], GAMMAS[_GAMMA_ALIASES[gamma]])


def loss_code(spec: object) -> int:
    """The integer code of a loss spec (see :func:`parse_loss`)."""
    return parse_loss(spec).code


# -- compiled scalar functions (callable from other numba kernels) ----------------------------
@jit
def gamma_at(gamma_index: int, p: float, q: float, gamma_floor: float) -> float:
    """γ of weight ``gamma_index`` (0 … 4) for run time ``p`` (s) and ``q`` processors,
    with ``p`` and ``q`` floored at 1 and the result clipped at ``gamma_floor``."""
    pp = max(p, 1.0)
    qq = max(q, 1.0)
    if gamma_index == 0:
        g = 1.0
    elif gamma_index == 1:
        g = 5.0 + math.log(qq / pp)
    elif gamma_index == 2:
        g = 5.0 + math.log(pp / qq)
    elif gamma_index == 3:
        g = 11.0 - math.log(qq * pp)
    else:
        g = math.log(qq * pp)
    return max(g, gamma_floor)


@jit
def loss_at(code: int, f: float, p: float, q: float, gamma_floor: float) -> float:
    """L(f, p) of loss ``code`` (s or s², times γ); ``f`` predicted and ``p`` actual run time (s),
    ``q`` processors."""
    g = gamma_at(code // 4, p, q, gamma_floor)
    if f >= p:
        z = f - p
        squared = (code // 2) % 2 == 1
    else:
        z = p - f
        squared = code % 2 == 1
    return g * (z * z if squared else z)


@jit
def loss_grad_at(code: int, f: float, p: float, q: float, gamma_floor: float) -> float:
    """dL/df of loss ``code`` at ``f`` (the over-prediction branch at ``f = p``)."""
    g = gamma_at(code // 4, p, q, gamma_floor)
    if f >= p:
        if (code // 2) % 2 == 1:
            return g * 2.0 * (f - p)
        return g
    if code % 2 == 1:
        return -g * 2.0 * (p - f)
    return -g


@jit
def _loss_array(code, f, p, q, gamma_floor, derivative, out):  # pragma: no cover - compiled
    for i in range(out.size):
        if derivative:
            out[i] = loss_grad_at(code, f[i], p[i], q[i], gamma_floor)
        else:
            out[i] = loss_at(code, f[i], p[i], q[i], gamma_floor)


def _evaluate(
    spec: object, f: object, p: object, q: object, gamma_floor: float, derivative: bool
) -> np.ndarray | float:
    code = parse_loss(spec).code
    gamma_floor = learner_setting("gamma_floor", gamma_floor)
    fa, pa, qa = np.broadcast_arrays(
        np.asarray(f, dtype=np.float64),
        np.asarray(p, dtype=np.float64),
        np.asarray(q, dtype=np.float64),
    )
    out = np.empty(fa.shape, dtype=np.float64)
    _loss_array(
        code,
        np.ascontiguousarray(fa).ravel(),
        np.ascontiguousarray(pa).ravel(),
        np.ascontiguousarray(qa).ravel(),
        gamma_floor,
        derivative,
        out.reshape(-1),
    )
    return out if out.ndim else float(out)


def loss(
    spec: object,
    f: np.typing.ArrayLike,
    p: np.typing.ArrayLike,
    q: np.typing.ArrayLike,
    *,
    gamma_floor: float = GAMMA_FLOOR,
) -> np.ndarray | float:
    """Loss values L(f, p) (broadcast over arrays; a float for scalars).

    Parameters
    ----------
    spec
        A loss spec (:func:`parse_loss`), a :class:`LossSpec`, or a registered name.
    f, p
        Predicted and actual run times (s).
    q
        Processors of the job.
    gamma_floor
        Lower bound of γ (dimensionless, > 0; bounded above by
        :data:`scheduler.predictors.settings.MAX_GAMMA_FLOOR`).
    """
    return _evaluate(spec, f, p, q, gamma_floor, False)


def loss_derivative(
    spec: object,
    f: np.typing.ArrayLike,
    p: np.typing.ArrayLike,
    q: np.typing.ArrayLike,
    *,
    gamma_floor: float = GAMMA_FLOOR,
) -> np.ndarray | float:
    """dL/df (same arguments as :func:`loss`; the over-prediction branch at ``f = p``)."""
    return _evaluate(spec, f, p, q, gamma_floor, True)
