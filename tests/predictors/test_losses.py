"""The 20 losses against a plain NumPy transcription of their definition and against finite
differences, and the loss spec parser (good specs, and every bad part named in the error)."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.predictors.losses import (
    ALL_LOSSES,
    GAMMA_FLOOR,
    GAMMAS,
    LOSSES,
    N_LOSSES,
    SHAPES,
    LossSpec,
    loss,
    loss_derivative,
    parse_loss,
)

# -- the reference: the definition of the issue, transcribed with NumPy ----------------------


def ref_gamma(gamma: str, p: np.ndarray, q: np.ndarray, floor: float) -> np.ndarray:
    pp = np.maximum(p, 1.0)  # inside γ, p and q are floored at 1 s / 1 processor
    qq = np.maximum(q, 1.0)
    raw = {
        "1": np.ones_like(pp),
        "5+log(q/p)": 5 + np.log(qq / pp),
        "5+log(p/q)": 5 + np.log(pp / qq),
        "11+log(1/(qp))": 11 + np.log(1 / (qq * pp)),
        "log(qp)": np.log(qq * pp),
    }[gamma]
    return np.maximum(raw, floor)


SHAPE = {"linear": lambda z: z, "squared": lambda z: z**2}
SHAPE_DERIV = {"linear": lambda z: np.ones_like(z), "squared": lambda z: 2 * z}


def ref_loss(spec: LossSpec, f, p, q, floor=GAMMA_FLOOR):
    g = ref_gamma(spec.gamma, p, q, floor)
    return np.where(f >= p, g * SHAPE[spec.over](f - p), g * SHAPE[spec.under](p - f))


def ref_derivative(spec: LossSpec, f, p, q, floor=GAMMA_FLOOR):
    g = ref_gamma(spec.gamma, p, q, floor)
    return np.where(f >= p, g * SHAPE_DERIV[spec.over](f - p), -g * SHAPE_DERIV[spec.under](p - f))


def random_jobs(seed: int, k: int = 2000):
    rng = np.random.default_rng(seed)
    p = np.exp(rng.uniform(0, np.log(2e5), k))  # 1 s .. ~2 days, log-uniform
    q = rng.integers(1, 4097, k).astype(float)
    f = p * np.exp(rng.normal(0, 1.5, k))  # over- and under-predictions
    p[:10] = 0.0  # zero run times: γ floors p at 1 s
    return f, p, q


ALL = pytest.mark.parametrize("spec", ALL_LOSSES, ids=[s.spec for s in ALL_LOSSES])


def test_twenty_distinct_codes():
    assert len(ALL_LOSSES) == N_LOSSES == 20
    assert [s.code for s in ALL_LOSSES] == list(range(20))
    assert len({(s.over, s.under, s.gamma) for s in ALL_LOSSES}) == 20
    for s in ALL_LOSSES:
        assert LossSpec.from_code(s.code) == s
        assert parse_loss(s.spec) == s


@ALL
@pytest.mark.parametrize("seed", [0, 1])
def test_value_and_derivative_match_numpy(spec: LossSpec, seed: int):
    f, p, q = random_jobs(seed)
    np.testing.assert_allclose(loss(spec, f, p, q), ref_loss(spec, f, p, q), rtol=1e-12)
    np.testing.assert_allclose(
        loss_derivative(spec, f, p, q), ref_derivative(spec, f, p, q), rtol=1e-12
    )


@ALL
def test_derivative_matches_finite_differences(spec: LossSpec):
    f, p, q = random_jobs(7)
    keep = np.abs(f - p) > 1.0  # away from the kink at f = p
    f, p, q = f[keep], p[keep], q[keep]
    h = 1e-3
    numeric = (loss(spec, f + h, p, q) - loss(spec, f - h, p, q)) / (2 * h)
    scale = np.maximum(np.abs(numeric), 1.0)
    np.testing.assert_allclose(
        loss_derivative(spec, f, p, q) / scale, numeric / scale, rtol=0, atol=1e-6
    )


@ALL
def test_loss_is_nonnegative_with_minimum_at_p(spec: LossSpec):
    f, p, q = random_jobs(3)
    values = loss(spec, f, p, q)
    assert np.all(values >= 0)
    assert np.all(loss(spec, p, p, q) == 0)
    assert np.all(values[np.abs(f - p) >= 1] > 0)  # γ ≥ floor > 0: every error costs


def test_kink_takes_the_over_prediction_branch():
    for spec in ALL_LOSSES:
        g = ref_gamma(spec.gamma, np.array([100.0]), np.array([8.0]), GAMMA_FLOOR)[0]
        expected = g if spec.over == "linear" else 0.0
        assert loss_derivative(spec, 100.0, 100.0, 8.0) == pytest.approx(expected, rel=1e-12)


def test_gamma_floor_is_a_parameter():
    # q·p = 4096 · 1e5 > e^11: 11 + log(1/(qp)) < 0, so γ is the floor
    spec = parse_loss("over=linear,under=linear,gamma=11+log(1/(qp))")
    assert loss(spec, 1e5 + 10, 1e5, 4096) == pytest.approx(10 * GAMMA_FLOOR)
    assert loss(spec, 1e5 + 10, 1e5, 4096, gamma_floor=0.5) == pytest.approx(5.0)
    # a 1-processor 1-s job: log(qp) = 0
    assert loss("eloss", 3.0, 1.0, 1.0) == pytest.approx(4 * GAMMA_FLOOR)


def test_eloss_on_a_hand_example():
    # p = 100 s, q = 10: γ = log(1000); f = 130 over-predicts by 30 s (squared),
    # f = 70 under-predicts by 30 s (linear)
    g = np.log(1000.0)
    assert loss("eloss", 130.0, 100.0, 10) == pytest.approx(g * 900)
    assert loss("eloss", 70.0, 100.0, 10) == pytest.approx(g * 30)
    assert loss_derivative("eloss", 130.0, 100.0, 10) == pytest.approx(g * 60)
    assert loss_derivative("eloss", 70.0, 100.0, 10) == pytest.approx(-g)


def test_scalars_and_broadcasting():
    assert isinstance(loss("eloss", 1.0, 2.0, 3.0), float)
    out = loss("eloss", np.ones((2, 3)), 2.0, [1.0, 2.0, 3.0])
    assert out.shape == (2, 3)


# -- spec parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("eloss", ("squared", "linear", "log(qp)")),
        ("ELoss", ("squared", "linear", "log(qp)")),
        (" squared ", ("squared", "squared", "1")),
        ("absolute", ("linear", "linear", "1")),
        ("over=squared,under=linear,gamma=log(qp)", ("squared", "linear", "log(qp)")),
        ("gamma = log(q*p), under=Linear, over=SQUARED", ("squared", "linear", "log(qp)")),
        ("over=linear,under=squared,gamma=log(p·q)", ("linear", "squared", "log(qp)")),
        ("over=linear,under=linear,gamma=5 + log(q/p)", ("linear", "linear", "5+log(q/p)")),
        ("over=linear,under=linear,gamma=5+log(p/q)", ("linear", "linear", "5+log(p/q)")),
        ("over=linear,under=linear,gamma=11+log(1/(q*p))", ("linear", "linear", GAMMAS[3])),
        ("over=linear,under=linear,gamma=1", ("linear", "linear", "1")),
    ],
)
def test_good_specs(text: str, expected: tuple[str, str, str]):
    assert parse_loss(text) == LossSpec(*expected)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("over=cubic,under=linear,gamma=1", "over='cubic'"),
        ("over=linear,under=abs,gamma=1", "under='abs'"),
        ("over=linear,under=linear,gamma=log(q)", "gamma='log(q)'"),
        ("over=linear,under=linear,gamma=1,power=2", "unknown key 'power'"),
        ("over=linear,under=linear,over=squared,gamma=1", "key 'over' given twice"),
        ("over=linear,gamma=1", "lacks under="),
        ("over=linear", "lacks under=, gamma="),
        ("over=linear,,gamma=1", "part ''"),
        ("eloss2", "part 'eloss2'"),
        ("over=linear;under=linear;gamma=1", "under=linear;gamma=1"),
        ("", "non-empty string"),
        (None, "non-empty string"),
    ],
)
def test_bad_specs_name_the_bad_part(text: object, named: str):
    with pytest.raises(ConfigurationError) as info:
        parse_loss(text, where="prediction.loss")
    message = str(info.value)
    assert message.startswith("prediction.loss: ")
    assert named in message


def test_registry_of_named_losses():
    assert LOSSES.names() == ("eloss", "squared", "absolute")
    assert LOSSES.lookup("ELOSS").spec == "over=squared,under=linear,gamma=log(qp)"
    assert set(SHAPES) == {"linear", "squared"}
