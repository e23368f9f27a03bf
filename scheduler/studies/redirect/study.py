"""The redirection study in the study registry (Faure, Lucarelli, Richard & Trystram)."""

from __future__ import annotations

from scheduler.studies.common.study import Study, register_study
from scheduler.studies.redirect.plan import redirect_plan

__all__ = ["STUDY"]

STUDY = register_study(
    Study(
        name="redirect",
        title="Redirection",
        question=(
            "Does killing jobs that block the main pool and restarting them on a small "
            "dedicated pool lower the bounded slowdown of loaded weeks, for which dedicated "
            "share α and redirection threshold θ, and can θ be chosen online by a bandit? "
            "Reproduces the redirection study of Faure, Lucarelli, Richard & Trystram."
        ),
        plan=redirect_plan,
        rank=5,
    )
)
