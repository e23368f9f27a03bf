"""Layer 2: run-time predictors: the losses, the NAG online learner, the registry.

``losses`` holds the 20 asymmetric losses (spec strings, integer codes, compiled value and
derivative); ``nag`` the Normalized Adaptive Gradient learner on the degree-2 polynomial basis
(compiled kernels in the private ``_nag``); ``base`` the ``PREDICTORS`` registry;
``corrections`` the ``CORRECTIONS`` registry; ``settings`` the bounds of the learner's
settings (η, λ, the floor of γ) and their one check.
"""

from scheduler.predictors.base import PREDICTORS
from scheduler.predictors.corrections import CORRECTIONS, INCREMENTS_S
from scheduler.predictors.losses import (
    ALL_LOSSES,
    GAMMA_FLOOR,
    GAMMAS,
    LOSSES,
    SHAPES,
    LossSpec,
    loss,
    loss_code,
    loss_derivative,
    parse_loss,
)
from scheduler.predictors.nag import NagLearner, basis_dim, new_state
from scheduler.predictors.settings import check_learner

__all__ = [
    "ALL_LOSSES",
    "CORRECTIONS",
    "GAMMAS",
    "GAMMA_FLOOR",
    "INCREMENTS_S",
    "LOSSES",
    "PREDICTORS",
    "SHAPES",
    "LossSpec",
    "NagLearner",
    "basis_dim",
    "check_learner",
    "loss",
    "loss_code",
    "loss_derivative",
    "new_state",
    "parse_loss",
]
