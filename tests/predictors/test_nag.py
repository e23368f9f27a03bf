"""The compiled NAG learner against a plain NumPy transcription of the algorithm of Ross,
Mineiro & Langford ("Normalized Online Learning", UAI 2013, NAG) written here, and the point of
NAG: predictions do not depend on the scale of a feature."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.predictors._nag import UNROLLED_N
from scheduler.predictors.losses import GAMMA_FLOOR, parse_loss
from scheduler.predictors.nag import NagLearner, basis_dim, expand
from scheduler.sim._predict_kernel import N_FEAT

# -- the reference ------------------------------------------------------------------------------


def ref_phi(x: np.ndarray, squares: bool) -> np.ndarray:
    i, j = np.triu_indices(x.size, k=1)  # row-major: (0,1), (0,2), ..., (1,2), ...
    parts = [np.ones(1), x] + ([x**2] if squares else []) + [x[i] * x[j]]
    return np.concatenate(parts)


def ref_dloss(spec, f: float, p: float, q: float, floor: float) -> float:
    pp, qq = max(p, 1.0), max(q, 1.0)
    gamma = {
        "1": 1.0,
        "5+log(q/p)": 5 + np.log(qq / pp),
        "5+log(p/q)": 5 + np.log(pp / qq),
        "11+log(1/(qp))": 11 - np.log(qq * pp),
        "log(qp)": np.log(qq * pp),
    }[spec.gamma]
    gamma = max(gamma, floor)
    if f >= p:
        return gamma * (2 * (f - p) if spec.over == "squared" else 1.0)
    return -gamma * (2 * (p - f) if spec.under == "squared" else 1.0)


class RefNag:
    """NAG, one vectorised NumPy step per example, from the paper's pseudo-code plus the ℓ2
    term λ·s_i²·w_i (intercept spared) documented in ``scheduler.predictors.nag``."""

    def __init__(self, n, loss, eta, lam, squares, floor=GAMMA_FLOOR):
        d = 1 + n + n * (n - 1) // 2 + (n if squares else 0)
        self.w, self.s, self.G = np.zeros(d), np.zeros(d), np.zeros(d)
        self.N, self.t = 0.0, 0
        self.loss, self.eta, self.lam, self.squares, self.floor = (
            parse_loss(loss),
            eta,
            lam,
            squares,
            floor,
        )

    def predict(self, x):
        return float(self.w @ ref_phi(x, self.squares))

    def update(self, x, p, q):
        phi = ref_phi(x, self.squares)
        a = np.abs(phi)
        grow = a > self.s
        self.w = np.where(grow & (self.s > 0), self.w * self.s / np.where(grow, a, 1), self.w)
        self.s = np.where(grow, a, self.s)
        y = float(self.w @ phi)
        on = self.s > 0
        self.N += float(np.sum((phi[on] / self.s[on]) ** 2))
        self.t += 1
        g = ref_dloss(self.loss, y, p, q, self.floor) * phi
        reg = self.lam * self.s**2 * self.w
        reg[0] = 0.0
        g = np.where(on, g + reg, 0.0)
        self.G += g**2
        step = on & (self.G > 0)
        self.w[step] -= (
            self.eta * np.sqrt(self.t / self.N) * g[step] / (self.s[step] * np.sqrt(self.G[step]))
        )
        return y


def stream(seed: int, k: int = 400, n: int = 4):
    """Features of very different scales, some zeros (a feature first seen late), maxima that
    keep growing (rescaling), run times depending on them, processors."""
    rng = np.random.default_rng(seed)
    scales = np.array([1.0, 1e3, 1e-2, 50.0])[:n]
    x = rng.normal(0, 1, (k, n)) * scales * np.linspace(0.2, 3, k)[:, None]
    x[: k // 4, -1] = 0.0
    p = np.abs(x @ (1.0 / scales) * 300 + 600 + rng.normal(0, 100, k)) + 1
    q = rng.integers(1, 257, k).astype(float)
    return x, p, q


CASES = [
    ("eloss", 0.0, True),
    ("eloss", 1e-3, True),
    ("squared", 0.0, False),
    ("squared", 0.05, True),
    ("absolute", 0.0, True),
    ("over=linear,under=squared,gamma=5+log(p/q)", 0.01, False),
    ("over=squared,under=squared,gamma=11+log(1/(qp))", 0.0, True),
    ("over=linear,under=linear,gamma=5+log(q/p)", 0.1, False),
]


@pytest.mark.parametrize(("loss", "lam", "squares"), CASES)
def test_compiled_nag_matches_numpy_reference(loss: str, lam: float, squares: bool):
    x, p, q = stream(11)
    eta = 50.0
    ref = RefNag(x.shape[1], loss, eta, lam, squares)
    ref_pred = np.empty(len(p))
    ref_seen = np.empty(len(p))
    for k in range(len(p)):
        ref_pred[k] = ref.predict(x[k])
        ref_seen[k] = ref.update(x[k], p[k], q[k])

    one = NagLearner(x.shape[1], loss=loss, eta=eta, lam=lam, squares=squares)
    seen = np.array([one.update(x[k], p[k], q[k]) for k in range(len(p))])
    batch = NagLearner(x.shape[1], loss=loss, eta=eta, lam=lam, squares=squares)
    pred = batch.run(x, p, q)

    for learner in (one, batch):
        np.testing.assert_allclose(learner.weights, ref.w, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(learner.scales, ref.s, rtol=1e-12)
        np.testing.assert_allclose(learner.grad_sq, ref.G, rtol=1e-9)
        assert learner.normaliser == pytest.approx(ref.N, rel=1e-12)
        assert learner.t == ref.t == len(p)
    np.testing.assert_allclose(pred, ref_pred, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(seen, ref_seen, rtol=1e-9, atol=1e-9)
    assert np.any(ref.w != 0)


@pytest.mark.parametrize(("loss", "lam", "squares"), CASES)
@pytest.mark.parametrize("factor", [1000.0, -1e-3])
def test_predictions_invariant_to_rescaling_a_feature(loss, lam, squares, factor):
    x, p, q = stream(5)
    x2 = x.copy()
    x2[:, 1] *= factor
    a = NagLearner(x.shape[1], loss=loss, eta=50.0, lam=lam, squares=squares)
    b = NagLearner(x.shape[1], loss=loss, eta=50.0, lam=lam, squares=squares)
    pa, pb = a.run(x, p, q), b.run(x2, p, q)
    np.testing.assert_allclose(pb, pa, rtol=1e-9, atol=1e-9 * np.abs(pa).max())
    assert a.predict(x[-1]) == pytest.approx(b.predict(x2[-1]), rel=1e-9)


def test_learns_a_linear_run_time():
    # a stationary stream, run time linear in features of very different scales
    rng = np.random.default_rng(2)
    scales = np.array([1.0, 1e3, 1e-2, 50.0])
    x = rng.normal(0, 1, (4000, 4)) * scales
    p = x @ (1.0 / scales) * 300 + 3000
    learner = NagLearner(4, loss="squared", eta=1000.0, squares=False)
    pred = learner.run(x, p, 1.0)
    spread = np.mean(np.abs(p - p.mean()))  # the error of the best constant, about 480 s
    assert np.mean(np.abs(pred[:500] - p[:500])) > 0.2 * spread  # starts from w = 0
    assert np.mean(np.abs(pred[-500:] - p[-500:])) < 0.02 * spread


def test_predict_leaves_the_state_unchanged():
    x, p, q = stream(1, k=50)
    learner = NagLearner(x.shape[1], eta=10.0)
    learner.run(x, p, q)
    before = (learner.weights, learner.scales, learner.grad_sq, learner.normaliser, learner.t)
    learner.predict(x[0] * 1e6)
    after = (learner.weights, learner.scales, learner.grad_sq, learner.normaliser, learner.t)
    for u, v in zip(before, after, strict=True):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("n", [0, 1, 2, 5, UNROLLED_N - 1, UNROLLED_N, UNROLLED_N + 1])
@pytest.mark.parametrize("squares", [False, True])
def test_basis(n: int, squares: bool):
    # UNROLLED_N features take the unrolled expansion, the others the same code with the count
    # read at run time: the same products either way
    x = np.random.default_rng(n).normal(0, 1, n) * np.logspace(-3, 5, n)
    assert basis_dim(n, squares) == 1 + n + n * (n - 1) // 2 + (n if squares else 0)
    np.testing.assert_array_equal(expand(x, squares=squares), ref_phi(x, squares))


def test_the_unrolled_count_is_the_prediction_kernels_feature_count():
    assert UNROLLED_N == N_FEAT


@pytest.mark.parametrize("squares", [False, True])
def test_compiled_nag_matches_numpy_reference_on_the_kernels_features(squares: bool):
    """The learner on UNROLLED_N features (the unrolled expansion), as the simulation uses it."""
    x, p, q = stream(5, k=300)
    rng = np.random.default_rng(6)
    x = np.hstack([x] * (UNROLLED_N // x.shape[1])) * rng.uniform(0.5, 2.0, UNROLLED_N)
    ref = RefNag(UNROLLED_N, "eloss", 50.0, 0.0, squares)
    learner = NagLearner(UNROLLED_N, loss="eloss", eta=50.0, squares=squares)
    for k in range(len(p)):
        assert learner.predict(x[k]) == pytest.approx(ref.predict(x[k]), rel=1e-9, abs=1e-9)
        learner.update(x[k], p[k], q[k])
        ref.update(x[k], p[k], q[k])
    np.testing.assert_allclose(learner.weights, ref.w, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(learner.scales, ref.s, rtol=1e-12)
    assert np.any(ref.w != 0)


def test_basis_order_by_hand():
    np.testing.assert_array_equal(expand([2.0, 3.0, 5.0], squares=False), [1, 2, 3, 5, 6, 10, 15])
    np.testing.assert_array_equal(expand([2.0, 3.0], squares=True), [1, 2, 3, 4, 9, 6])


def test_bad_arguments():
    with pytest.raises(ConfigurationError, match=r"^eta: the step size"):
        NagLearner(2, eta=0.0)
    with pytest.raises(ConfigurationError, match=r"^lam: the ℓ2 weight"):
        NagLearner(2, lam=-1.0)
    with pytest.raises(ConfigurationError, match=r"^gamma_floor: the floor"):
        NagLearner(2, gamma_floor=1e308)
    with pytest.raises(ValueError, match="expected 2 features"):
        NagLearner(2).predict([1.0, 2.0, 3.0])
