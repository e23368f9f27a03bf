"""The queue-tuning study in the study registry (Reis's thesis, ch. 5)."""

from __future__ import annotations

from scheduler.studies.common.study import Study, register_study
from scheduler.studies.tuning.plan import tuning_plan

__all__ = ["STUDY"]

STUDY = register_study(
    Study(
        name="tuning",
        title="Queue tuning",
        question=(
            "Which ordering of EASY's primary and backfilling queues, with which waiting-time "
            "threshold, lowers the mean wait of a cluster's workload, and does the pair chosen "
            "on one half of a log keep its gain on the other half? Reproduces chapter 5 of "
            "Reis's thesis on resampled weeks, with source-week bootstrap intervals."
        ),
        plan=tuning_plan,
        rank=1,
    )
)
