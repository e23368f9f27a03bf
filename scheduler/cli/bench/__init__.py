"""``scheduler bench``: benchmarks of the simulator core; prints figures, asserts nothing.

Each figure is the best (or median) of several repetitions of the simulation alone on one core,
after a warm-up run; reading a log is timed separately. ``docs/benchmarks.md`` records the
figures, the machine and the command.

The figures come in groups, one table of them (:data:`BENCH_GROUPS`, in ``table``): each group
is a :class:`BenchGroup` (name, one-line help, run function, format function, whether a plain
run includes it), defined in the module of its family: ``core`` (the simulator's speed and
memory targets), ``redirection``, ``trials``, ``memory``, ``thresholds`` (threshold-backfill,
threshold-sweep), ``online``, ``kernel``, ``conservative``, ``rl`` (rl-env: the Gymnasium
environment against RLScheduler's, whose side ``rlscheduler_driver``, a standalone script, runs
in a subprocess), ``schedules`` (the processor assignment, a week's Gantt chart and the
exports on CEA-Curie). ``command`` builds the command's arguments, dispatch and output from
the table; ``group``, ``logs`` (machine sizes from the trace catalogue) and ``timing`` are what
the groups share.
"""

from scheduler.cli.bench.command import add_commands, cmd_bench, format_figures, main_bench
from scheduler.cli.bench.group import BenchGroup, BenchInputs
from scheduler.cli.bench.table import BENCH_GROUPS

__all__ = [
    "BENCH_GROUPS",
    "BenchGroup",
    "BenchInputs",
    "add_commands",
    "cmd_bench",
    "format_figures",
    "main_bench",
]
