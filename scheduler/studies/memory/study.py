"""The memory-aware cluster study in the study registry (Yom-Tov & Aridor, JSSPP 2007)."""

from __future__ import annotations

from scheduler.studies.common.study import Study, register_study
from scheduler.studies.memory.plan import memory_plan

__all__ = ["STUDY"]

STUDY = register_study(
    Study(
        name="memory",
        title="Memory-aware clusters",
        question=(
            "On a cluster whose nodes differ in memory, can a scheduler that estimates each "
            "job's real memory need online (a perceptron fed by failures or by the memory "
            "used) run over-requesting jobs on small nodes and so raise utilisation and lower "
            "slowdown? Reproduces Yom-Tov & Aridor (JSSPP 2007) on the LANL CM-5 log."
        ),
        plan=memory_plan,
        rank=6,
    )
)
