"""schedlab: learning and tuning HPC batch-scheduling policies on real workload traces.

The public API, re-exported here (the sub-packages hold the code)::

    trace = scheduler.read_swf("resources/KTH-SP2.swf.gz")
    trace, report = scheduler.strong_filter(trace)
    result = scheduler.simulate(trace, primary="SPF", backfill="FCFS", threshold="40h")
    result.summary.avg_wait_s

The names are resolved on first use (PEP 562), so ``import scheduler.traces.swf`` does not
import the simulator, and a Snakemake job imports only the modules its step needs. Layers and
folders: ``docs/architecture.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "__version__": "scheduler.core.version",
    "ConfigurationError": "scheduler.core.errors",
    "SchedlabError": "scheduler.core.errors",
    "TraceFormatError": "scheduler.core.errors",
    "format_duration": "scheduler.core.units",
    "parse_duration": "scheduler.core.units",
    "SwfHeader": "scheduler.traces.swf",
    "Trace": "scheduler.traces.swf",
    "read_swf": "scheduler.traces.swf",
    "write_swf": "scheduler.traces.swf",
    "SacctImport": "scheduler.traces.sacct",
    "SacctReport": "scheduler.traces.sacct",
    "import_sacct": "scheduler.traces.sacct",
    "read_sacct": "scheduler.traces.sacct",
    "FilterReport": "scheduler.traces.filters",
    "strong_filter": "scheduler.traces.filters",
    "trace_summary": "scheduler.traces.summary",
    "POLICIES": "scheduler.policies",
    "STUDY_POLICIES": "scheduler.policies",
    "policy_names": "scheduler.policies",
    "register": "scheduler.policies",
    "register_learned": "scheduler.policies",
    "RunFigures": "scheduler.sim.metrics",
    "RunSummary": "scheduler.sim.metrics",
    "cumulative_wait": "scheduler.sim.metrics",
    "run_figures": "scheduler.sim.metrics",
    "Simulation": "scheduler.sim.engine",
    "SimulationConfig": "scheduler.sim.engine",
    "SimulationResult": "scheduler.sim.engine",
    "simulate": "scheduler.sim.api",
    "simulate_arrays": "scheduler.sim.engine",
    "PredictedResult": "scheduler.sim.prediction",
    "simulate_predicted": "scheduler.sim.prediction",
    "ConservativeResult": "scheduler.sim.conservative",
    "simulate_conservative": "scheduler.sim.conservative",
    "SlurmConf": "scheduler.sim.slurm_conf",
    "read_slurm_conf": "scheduler.sim.slurm_conf",
    "RedirectResult": "scheduler.sim.redirection",
    "RedirectSimulation": "scheduler.sim.redirection",
    "simulate_redirect": "scheduler.sim.redirection",
    "Assignment": "scheduler.sim.assignment",
    "assign_processors": "scheduler.sim.assignment",
    "Schedule": "scheduler.sim.schedule",
    "schedule_of": "scheduler.sim.schedule",
    "Panel": "scheduler.studies.common.gantt",
    "draw_gantt": "scheduler.studies.common.gantt",
    "gantt_figure": "scheduler.studies.common.gantt",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'scheduler' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:  # for type checkers and editors: the same names, eagerly
    from scheduler.core.errors import ConfigurationError, SchedlabError, TraceFormatError
    from scheduler.core.units import format_duration, parse_duration
    from scheduler.core.version import __version__
    from scheduler.policies import (
        POLICIES,
        STUDY_POLICIES,
        policy_names,
        register,
        register_learned,
    )
    from scheduler.sim.api import simulate
    from scheduler.sim.assignment import Assignment, assign_processors
    from scheduler.sim.conservative import ConservativeResult, simulate_conservative
    from scheduler.sim.engine import Simulation, SimulationConfig, SimulationResult, simulate_arrays
    from scheduler.sim.metrics import RunFigures, RunSummary, cumulative_wait, run_figures
    from scheduler.sim.prediction import PredictedResult, simulate_predicted
    from scheduler.sim.redirection import RedirectResult, RedirectSimulation, simulate_redirect
    from scheduler.sim.schedule import Schedule, schedule_of
    from scheduler.sim.slurm_conf import SlurmConf, read_slurm_conf
    from scheduler.studies.common.gantt import Panel, draw_gantt, gantt_figure
    from scheduler.traces.filters import FilterReport, strong_filter
    from scheduler.traces.sacct import SacctImport, SacctReport, import_sacct, read_sacct
    from scheduler.traces.summary import trace_summary
    from scheduler.traces.swf import SwfHeader, Trace, read_swf, write_swf
