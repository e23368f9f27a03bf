"""The example study in the study registry."""

from __future__ import annotations

from scheduler.studies.common.study import Study, register_study
from scheduler.studies.example.plan import example_plan

STUDY = register_study(
    Study(
        name="example",
        title="Example",
        question="How many jobs does each filtered log hold (times a factor)?",
        plan=example_plan,
        rank=99,
    )
)
