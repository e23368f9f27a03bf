"""The online policy-selection study in the study registry (Reis's thesis, ch. 6)."""

from __future__ import annotations

from scheduler.studies.common.study import Study, register_study
from scheduler.studies.online.plan import online_plan

__all__ = ["STUDY"]

STUDY = register_study(
    Study(
        name="online",
        title="Online selection",
        question=(
            "Can a selector that switches the live system's EASY policy period by period "
            "(uniformly at random, by simulating every policy on the last period, or as an "
            "epsilon-greedy bandit) beat the best fixed policy on long resampled traces? "
            "Reproduces chapter 6 of Reis's thesis."
        ),
        plan=online_plan,
        rank=2,
    )
)
