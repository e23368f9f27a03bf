"""schedlab's simulator core: SWF traces, the strong filter, and a fast EASY-backfilling simulator.

The public API, re-exported here (the modules hold the code)::

    trace = scheduler.read_swf("resources/KTH-SP2.swf.gz")
    trace, report = scheduler.strong_filter(trace)
    result = scheduler.simulate(trace, primary="SPF", backfill="FCFS", threshold="40h")
    result.summary.avg_wait_s
"""

from scheduler._version import __version__
from scheduler.errors import ConfigurationError, SchedlabError, TraceFormatError
from scheduler.filters import FilterReport, strong_filter
from scheduler.metrics import RunSummary, cumulative_wait
from scheduler.policies import POLICIES, STUDY_POLICIES, policy_names, register
from scheduler.simulate import (
    Simulation,
    SimulationConfig,
    SimulationResult,
    simulate,
    simulate_arrays,
)
from scheduler.swf import SwfHeader, Trace, read_swf, write_swf
from scheduler.trace_stats import trace_summary
from scheduler.units import format_duration, parse_duration

__all__ = [
    "POLICIES",
    "STUDY_POLICIES",
    "ConfigurationError",
    "FilterReport",
    "RunSummary",
    "SchedlabError",
    "Simulation",
    "SimulationConfig",
    "SimulationResult",
    "SwfHeader",
    "Trace",
    "TraceFormatError",
    "__version__",
    "cumulative_wait",
    "format_duration",
    "parse_duration",
    "policy_names",
    "read_swf",
    "register",
    "simulate",
    "simulate_arrays",
    "strong_filter",
    "trace_summary",
    "write_swf",
]
