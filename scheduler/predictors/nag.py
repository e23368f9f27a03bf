"""The NAG online learner of run times (public API over the kernels of :mod:`._nag`).

Model
-----
``f(x) = wᵀΦ(x)`` (s), with Φ the degree-2 polynomial basis of the ``n`` raw features::

    Φ(x) = (1, x_0, …, x_{n−1}, [x_0², …, x_{n−1}²], x_i·x_l for i < l)

of dimension ``1 + n + n(n−1)/2``, or ``1 + 2n + n(n−1)/2`` with ``squares=True``. The issue
quotes the published count 1 + 2n + n(n−1)/2, which includes the squares; the published list
of terms (1, x_i, x_i·x_l for i < l) does not. Both are available; the default is
``squares=True``, the published dimension.

Learning (Ross, Mineiro & Langford, "Normalized Online Learning", UAI 2013, algorithm NAG)
-----------------------------------------------------------------------------------------
State: weights ``w_i``, scales ``s_i`` (largest |Φ_i| seen), accumulated squared gradients
``G_i``, the normaliser ``N`` and the number of updates ``t``; all zero at the start. One update
on (x, p, q), with Φ = Φ(x):

1. for each i with |Φ_i| > s_i: ``w_i ← w_i · s_i / |Φ_i|`` (when s_i > 0), ``s_i ← |Φ_i|``;
2. ``ŷ = wᵀΦ``; ``N ← N + Σ_i Φ_i² / s_i²`` (over the i with s_i > 0); ``t ← t + 1``;
3. ``g_i = L'(ŷ, p, q) · Φ_i + λ · s_i² · w_i`` (the ℓ2 term for i ≥ 1 only), ``G_i ← G_i + g_i²``,
   ``w_i ← w_i − η · sqrt(t / N) · g_i / (s_i · sqrt(G_i))`` (for s_i > 0 and G_i > 0).

``L'`` is the derivative with respect to the prediction of one of the 20 losses
(:mod:`scheduler.predictors.losses`).

ℓ2 regularisation: the term λ·s_i²·w_i is the gradient of ``(λ/2)·Σ_{i≥1} (s_i·w_i)²``, a
penalty on each basis function's largest contribution to the prediction so far (s_i·w_i, in s),
not on the raw weight: a raw ``(λ/2)·|w|²`` would depend on the units of the features and break
the scale invariance that is the point of NAG. The intercept is not penalised. λ = 0 is plain NAG.
λ has the units of the loss per s² (dimensionless for squared losses).

Invariants
----------
* Scale invariance: multiplying one raw feature by a constant c ≠ 0 throughout a stream
  multiplies the Φ_i that contain it by constants; s_i and the steps scale accordingly, w_i by
  the inverse, and every prediction is unchanged (to rounding), with or without λ.
* ``η`` is in the units of the prediction (s): a step moves a basis function's contribution
  s_i·w_i by at most about η·sqrt(t/N) (as g_i / sqrt(G_i) ≤ 1).
* Prediction (:meth:`NagLearner.predict`) never changes the state; a feature larger than its
  scale so far is rescaled at the next update. Predictions are not clipped here (the engine
  bounds them to [1 s, requested time]).
"""

from __future__ import annotations

import numpy as np

from scheduler.core.flags import flag
from scheduler.predictors import _nag
from scheduler.predictors._nag import basis_dim, nag_predict, nag_run, nag_update
from scheduler.predictors.losses import GAMMA_FLOOR, parse_loss
from scheduler.predictors.settings import check_learner

#: Default step size η (s), chosen on logs the prediction campaign does not use (RICC,
#: ANL-Intrepid, LANL-CM5): the E-loss + INCREMENTAL + SJBF AVEbsld relative to EASY, averaged
#: over them, is lowest for η = 1 s (``docs/prediction.md``, "Choosing the learner's η and λ").
#: A small η keeps E-loss predictions low, and it is the corrections and SJBF that then help;
#: a learner that should track run times needs a larger one (on a stationary linear stream with
#: a 3000-s intercept, η = 1000 s converges in a few hundred updates and η = 10 s has barely
#: moved after 4000, ``tests/predictors/test_nag.py``).
ETA = 1.0

__all__ = [
    "ETA",
    "NagLearner",
    "basis_dim",
    "expand",
    "nag_predict",
    "nag_run",
    "nag_update",
    "new_state",
]


def new_state(n_features: int, *, squares: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """A fresh learner state for ``n_features`` raw features: ``(vec, acc)``.

    ``vec`` is float64 (4, d) with rows weights, scales, G and a scratch row for Φ;
    ``acc`` is float64 (2,) holding N and t. Everything starts at zero.
    """
    if n_features < 0:
        raise ValueError("n_features must be >= 0")
    d = basis_dim(int(n_features), flag(squares, "squares"))
    return np.zeros((_nag.VEC_ROWS, d)), np.zeros(_nag.ACC_ROWS)


def expand(x: np.typing.ArrayLike, *, squares: bool = True) -> np.ndarray:
    """Φ(x) as a new array (see the module docstring for the order of the terms)."""
    squares = flag(squares, "squares")
    xa = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty(basis_dim(xa.size, squares))
    _nag.expand(xa, squares, out)
    return out


class NagLearner:
    """An online NAG regressor of run times on the degree-2 polynomial basis.

    Parameters
    ----------
    n_features
        Number of raw features ``n``.
    loss
        A loss spec or name (:func:`scheduler.predictors.losses.parse_loss`), default E-loss.
    eta
        Step size η (s), > 0.
    lam
        ℓ2 weight λ ≥ 0 (penalty (λ/2)·Σ_{i≥1}(s_i·w_i)²).
    squares
        Whether Φ includes the squares x_i² (default True: the published dimension).
    gamma_floor
        Lower bound of the loss weight γ, > 0.

    Raises
    ------
    ConfigurationError
        A setting outside its bounds, which :mod:`scheduler.predictors.settings` sets and
        explains (:func:`~scheduler.predictors.settings.check_learner`).
    """

    def __init__(
        self,
        n_features: int,
        *,
        loss: object = "eloss",
        eta: float = ETA,
        lam: float = 0.0,
        squares: bool = True,
        gamma_floor: float = GAMMA_FLOOR,
    ) -> None:
        self.eta, self.lam, self.gamma_floor = check_learner(eta, lam, gamma_floor)
        self.n_features = int(n_features)
        self.loss = parse_loss(loss)
        self.squares = flag(squares, "squares")
        self.vec, self.acc = new_state(self.n_features, squares=self.squares)

    def _x(self, x: np.typing.ArrayLike) -> np.ndarray:
        xa = np.ascontiguousarray(x, dtype=np.float64)
        if xa.shape != (self.n_features,):
            raise ValueError(f"expected {self.n_features} features, got shape {xa.shape}")
        return xa

    def predict(self, x: np.typing.ArrayLike) -> float:
        """The prediction wᵀΦ(x) (s) with the current weights."""
        return float(nag_predict(self.vec, self._x(x)))

    def update(self, x: np.typing.ArrayLike, p: float, q: float) -> float:
        """Learn from a finished job: features ``x``, run time ``p`` (s), ``q`` processors.
        Returns the prediction on which the gradient was taken."""
        return float(
            nag_update(
                self.vec,
                self.acc,
                self._x(x),
                float(p),
                float(q),
                self.loss.code,
                self.eta,
                self.lam,
                self.gamma_floor,
            )
        )

    def run(
        self, xs: np.typing.ArrayLike, p: np.typing.ArrayLike, q: np.typing.ArrayLike
    ) -> np.ndarray:
        """Predict then learn each row of ``xs`` in turn (compiled); returns the predictions
        made before each job was learned (s)."""
        xa = np.ascontiguousarray(xs, dtype=np.float64)
        if xa.ndim != 2 or xa.shape[1] != self.n_features:
            raise ValueError(f"expected (k, {self.n_features}) features, got {xa.shape}")
        k = xa.shape[0]
        pa = np.ascontiguousarray(np.broadcast_to(np.asarray(p, dtype=np.float64), (k,)))
        qa = np.ascontiguousarray(np.broadcast_to(np.asarray(q, dtype=np.float64), (k,)))
        out = np.empty(k)
        nag_run(
            self.vec,
            self.acc,
            xa,
            pa,
            qa,
            self.loss.code,
            self.eta,
            self.lam,
            self.gamma_floor,
            out,
        )
        return out

    @property
    def weights(self) -> np.ndarray:
        """w (a copy), one per basis function."""
        return self.vec[_nag.W].copy()

    @property
    def scales(self) -> np.ndarray:
        """s_i, the largest |Φ_i| seen so far (a copy)."""
        return self.vec[_nag.S].copy()

    @property
    def grad_sq(self) -> np.ndarray:
        """G_i, the accumulated squared gradients (a copy)."""
        return self.vec[_nag.G].copy()

    @property
    def normaliser(self) -> float:
        """N = Σ over updates of Σ_i Φ_i² / s_i²."""
        return float(self.acc[_nag.N_ACC])

    @property
    def t(self) -> int:
        """Number of updates so far."""
        return int(self.acc[_nag.T_ACC])
