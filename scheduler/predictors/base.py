"""The predictor registry of the run-time prediction study.

A predictor turns what the scheduler knows at a job's submission into a run-time estimate (s).
The items are the names: the predictors run inside the compiled simulation
(``scheduler.sim.prediction.simulate_predicted``, kernel ``scheduler.sim._predict_kernel``), which
maps each name to a kernel code. Learned predictors take a loss spec
(:mod:`scheduler.predictors.losses`).
"""

from __future__ import annotations

from scheduler.core.registry import Registry

#: Run-time predictors by name (lower case; ``"NAG"`` finds ``"nag"``). The items are the names.
PREDICTORS: Registry[str] = Registry("predictor", canonical=str.lower)

PREDICTORS.add("requested", "requested", "the requested time p̃_j (plain EASY)")
PREDICTORS.add(
    "ave2",
    "ave2",
    "mean of the user's last two finished run times; p̃_j when fewer are known; capped at p̃_j",
)
PREDICTORS.add("clairvoyant", "clairvoyant", "the actual run time p_j (never corrected)")
PREDICTORS.add(
    "nag",
    "nag",
    "online NAG regression on degree-2 polynomial features of 20 submission-time features "
    "(docs/simulator.md), learned on each completion, with one of the 20 losses",
)
