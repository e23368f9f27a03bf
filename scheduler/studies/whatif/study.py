"""The what-if study in the study registry: a scheduler change on a site's own workload."""

from __future__ import annotations

from scheduler.studies.common.study import Study, register_study
from scheduler.studies.whatif.plan import whatif_plan

__all__ = ["STUDY"]

STUDY = register_study(
    Study(
        name="whatif",
        title="What-if for an administrator",
        question=(
            "What would a change of the scheduler (a slurm.conf key, Slurm's backfilling limits, "
            "a research policy) do to a site's users: their mean and tail waits, slowdown, "
            "utilisation and fairness between users and accounts, and how sure is that? Each "
            "alternative against the baseline on the same resampled weeks of the site's log, "
            "with source-week bootstrap intervals and Holm's correction."
        ),
        plan=whatif_plan,
        rank=7,
    )
)
