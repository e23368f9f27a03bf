"""The RL benchmark in the study registry (RLScheduler, Zhang et al., SC'20)."""

from __future__ import annotations

from scheduler.studies.common.study import Study, register_study
from scheduler.studies.rl.plan import rl_plan

__all__ = ["STUDY"]

STUDY = register_study(
    Study(
        name="rl",
        title="Learning by reinforcement",
        question=(
            "How do RLScheduler's baselines, schedlab's EASY policies, the learned functions "
            "and a PPO agent trained in a Gymnasium environment compare on RLScheduler's test "
            "sequences, with and without backfilling? Reproduces RLScheduler's baseline table "
            "(Zhang et al., SC'20) and sets the correct definitions beside it."
        ),
        plan=rl_plan,
        rank=8,
    )
)
