"""The NAG learner's settings and their bounds: the one check every entry point uses.

The step size η (s), the ℓ2 weight λ and the floor of the losses' weight γ reach the learner
through :class:`~scheduler.predictors.nag.NagLearner`, the prediction engine
(:func:`scheduler.sim.prediction.simulate_predicted`, hence :func:`scheduler.simulate` and
``scheduler simulate --eta/--lam``), the learner grid (``scheduler prediction-grid``) and the
prediction study's configuration (``prediction.learner``, whose schema takes its maxima from
here). Each of them calls :func:`check_learner`, so a bad value gets the same message
everywhere, naming the setting (or the config key) and the bound.

Why the bounds: outside them the learner's arithmetic overflows and every prediction collapses
to the engine's 1-s floor without a word (η = ∞, λ = ∞, γ floor = 10³⁰⁸; on the bundled
KTH-SP2 slice η ≥ 1e200 and λ ≈ 1e300 do it too). Inside them, with every time of the jobs
within the engine's :data:`~scheduler.core.constants.MAX_TIME_S`, the learner stays finite:

* η in (0, :data:`MAX_ETA_S`] s, MAX_ETA_S = 2**52 s, the longest time the engine accepts: one
  step moves a basis function's contribution by at most about η, and a step longer than any
  run or requested time can only throw the predictions to their bounds;
* λ in [0, :data:`MAX_LAM`], MAX_LAM = 1e12: far above any useful value (the published
  campaign's ℓ2 weight on raw weights was 4e9; ``docs/prediction.md`` tried up to 100) and far
  below the values that overflow the squared gradients (≈ 1e150);
* γ floor in (0, :data:`MAX_GAMMA_FLOOR`], MAX_GAMMA_FLOOR = 1000: the largest weight γ a job
  within the engine's bounds can have is log(q·p) ≤ log(2**31 · 2**52) ≈ 57.5, so any floor
  above that weighs every job alike; 1000 leaves a margin and keeps every loss (≤ 1000 · (2**52
  s)², summed over a billion jobs) finite. A floor ≤ 0 would let a weight reach 0 (ignore a
  job) or go negative (reward an error).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from scheduler.core.constants import MAX_TIME_S
from scheduler.core.errors import ConfigurationError, quote

__all__ = [
    "LEARNER_SETTINGS",
    "MAX_ETA_S",
    "MAX_GAMMA_FLOOR",
    "MAX_LAM",
    "check_learner",
    "learner_setting",
]

#: Largest step size η, seconds: the longest time the engine accepts (2**52 s).
MAX_ETA_S: float = float(MAX_TIME_S)
#: Largest ℓ2 weight λ (dimensionless for squared losses; loss per s² in general).
MAX_LAM: float = 1e12
#: Largest floor of the losses' weight γ (dimensionless).
MAX_GAMMA_FLOOR: float = 1000.0

#: Each setting: (what it is, lower bound, whether the lower bound is allowed, upper bound,
#: unit shown after the bounds).
LEARNER_SETTINGS: dict[str, tuple[str, float, bool, float, str]] = {
    "eta": ("the step size η", 0.0, False, MAX_ETA_S, " s"),
    "lam": ("the ℓ2 weight λ", 0.0, True, MAX_LAM, ""),
    "gamma_floor": ("the floor of the loss weight γ", 0.0, False, MAX_GAMMA_FLOOR, ""),
}


def learner_setting(name: str, value: object, key: str | None = None) -> float:
    """``value`` of the learner setting ``name`` (``eta``, ``lam``, ``gamma_floor``) as a float,
    or a ConfigurationError naming ``key`` (default ``name``), the bounds and the value.

    >>> learner_setting("eta", 10)
    10.0
    """
    what, low, low_ok, high, unit = LEARNER_SETTINGS[name]
    key = name if key is None else key
    number = int | float | np.integer | np.floating
    if isinstance(value, bool | np.bool_) or not isinstance(value, number):
        raise ConfigurationError(f"{key}: {what} must be a number, got {quote(value)}")
    x = float(value)
    if not (math.isfinite(x) and (x >= low if low_ok else x > low) and x <= high):
        raise ConfigurationError(
            f"{key}: {what} must be a finite number {'>=' if low_ok else '>'} {low:g}{unit} "
            f"and <= {high:g}{unit}, got {x:g}"
        )
    return x


def check_learner(
    eta: object, lam: object, gamma_floor: object, *, keys: Mapping[str, str] | None = None
) -> tuple[float, float, float]:
    """``(eta, lam, gamma_floor)`` checked (:func:`learner_setting`), as floats.

    Parameters
    ----------
    eta, lam, gamma_floor
        The settings: η (s), λ, the floor of γ.
    keys
        How the caller names each setting in messages (``{"eta": "config
        prediction.learner.eta_s"}``); by default its name.

    Raises
    ------
    ConfigurationError
        The first setting (in the order eta, lam, gamma_floor) that is not a number within its
        bounds.
    """
    names = keys or {}
    values = {"eta": eta, "lam": lam, "gamma_floor": gamma_floor}
    checked = [learner_setting(name, value, names.get(name)) for name, value in values.items()]
    return checked[0], checked[1], checked[2]
