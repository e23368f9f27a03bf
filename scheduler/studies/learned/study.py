"""The learned-priority-function study in the study registry (Carastan-Santos & de Camargo,
SC'17). Its setup registers the learned functions LF1 … as policies of every study."""

from __future__ import annotations

from scheduler.studies.common.study import Study, register_study
from scheduler.studies.learned.plan import learned_plan, learned_setup

__all__ = ["STUDY"]

STUDY = register_study(
    Study(
        name="learned",
        title="Learned priority functions",
        question=(
            "Can a simple priority function of a job's run time, size and submit time, fitted "
            "by regression to scores obtained by simulating random orderings, outperform the "
            "classic and published policies (FCFS, SPF, WFP3, UNICEF, F1-F4)? Reproduces "
            "Carastan-Santos & de Camargo (SC'17); its functions LF1 ... are then policies of "
            "every study."
        ),
        plan=learned_plan,
        rank=4,
        setup=learned_setup,
    )
)
