"""The run-time prediction study in the study registry (Reis's thesis, ch. 4)."""

from __future__ import annotations

from scheduler.studies.common.study import Study, register_study
from scheduler.studies.prediction.plan import prediction_plan

__all__ = ["STUDY"]

STUDY = register_study(
    Study(
        name="prediction",
        title="Run-time prediction",
        question=(
            "Which run-time prediction technique (the user's request, the average of the "
            "user's last two jobs, an online learner minimising an asymmetric loss), with which "
            "correction of outlived predictions and which backfilling order, gives EASY the "
            "lowest bounded slowdown? Reproduces chapter 4 of Reis's thesis (heuristic "
            "triples, EASY++)."
        ),
        plan=prediction_plan,
        rank=3,
    )
)
