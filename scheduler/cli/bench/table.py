"""The table of ``scheduler bench``'s groups of figures, :data:`BENCH_GROUPS`.

Each group is one :class:`~scheduler.cli.bench.group.BenchGroup`, defined beside its code in the
module of its family; this table orders them. The ``--only`` choices and their help, the groups
of a plain run (``in_default_run``, in this order), the dispatch and the printed lines are all
read from it.
"""

from __future__ import annotations

from scheduler.cli.bench import (
    conservative,
    core,
    kernel,
    memory,
    online,
    redirection,
    rl,
    schedules,
    thresholds,
    trials,
)
from scheduler.cli.bench.group import BenchGroup
from scheduler.core.registry import Registry

__all__ = ["BENCH_GROUPS"]

#: The benchmark groups by name, in the order of ``--help`` and of a plain run's output.
BENCH_GROUPS: Registry[BenchGroup] = Registry("benchmark group")

for _group in (
    core.GROUP,
    redirection.GROUP,
    trials.GROUP,
    memory.GROUP,
    thresholds.BACKFILL_GROUP,
    thresholds.SWEEP_GROUP,
    online.GROUP,
    kernel.GROUP,
    conservative.GROUP,
    rl.GROUP,
    schedules.GROUP,
):
    BENCH_GROUPS.add(_group.name, _group, _group.help)
del _group
