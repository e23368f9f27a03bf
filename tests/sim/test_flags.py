"""Every yes/no parameter of the public API takes a bool (NumPy's too) and nothing else.

A truthy string such as ``"no"`` once turned a flag on (``simulate_redirect(...,
balance="no")`` ran with balancing and recorded ``balance=True``); every flag now goes through
one parser (:func:`scheduler.core.flags.flag`), which refuses anything but a bool with a
ConfigurationError naming the parameter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import scheduler
from scheduler.core.errors import ConfigurationError
from scheduler.predictors import NagLearner
from scheduler.sim.engine import Simulation, simulate_arrays
from scheduler.sim.prediction import simulate_predicted_arrays
from scheduler.sim.redirection import RedirectSimulation, simulate_redirect_arrays
from scheduler.sim.sweep import simulate_thresholds
from scheduler.sim.window import simulate_window
from scheduler.traces.swf import used_procs

SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"
NOT_BOOLS = ["no", "false", 0, 1, None, 1.0, np.int64(0)]


@pytest.fixture(scope="module")
def kth_slice():
    """The bundled slice, without the jobs wider than a main pool of 90 processors."""
    trace = scheduler.strong_filter(scheduler.read_swf(SLICE))[0]
    return trace.with_jobs(trace.jobs.filter(used_procs() <= 90))


def _arrays():
    return np.arange(3.0), np.ones(3), np.full(3, 10.0), np.full(3, 20.0)


def _calls(trace):
    """(parameter, call(value)) of every flag of the public API."""
    arrays = _arrays()
    users = np.zeros(3)
    return [
        ("balance", lambda v: scheduler.simulate_redirect(trace, alpha=0.1, theta=5, balance=v)),
        ("balance", lambda v: simulate_redirect_arrays(*arrays, 4, alpha=0.25, theta=1,
                                                       balance=v)),
        ("balance", lambda v: RedirectSimulation(*arrays, 4, alpha=0.25, balance=v)),
        ("validate", lambda v: RedirectSimulation(*arrays, 4, alpha=0.25, validate=v)),
        ("threshold_backfill", lambda v: scheduler.simulate(trace, threshold_backfill=v)),
        ("threshold_backfill",
         lambda v: scheduler.simulate(trace, predictor="requested", threshold_backfill=v)),
        ("threshold_backfill", lambda v: simulate_arrays(*arrays, 4, threshold_backfill=v)),
        ("validate", lambda v: simulate_arrays(*arrays, 4, validate=v)),
        ("validate", lambda v: Simulation(*arrays, 4, validate=v)),
        ("threshold_backfill", lambda v: simulate_thresholds(*arrays, 4, [10.0],
                                                             threshold_backfill=v)),
        ("whole_seconds", lambda v: scheduler.simulate_predicted(trace, whole_seconds=v)),
        ("squares", lambda v: scheduler.simulate_predicted(trace, predictor="nag", squares=v)),
        ("squares", lambda v: simulate_predicted_arrays(*arrays[:3], arrays[3], users, 4,
                                                        squares=v)),
        ("backfilling", lambda v: simulate_window(*arrays, 4, backfilling=v)),
        ("exchange_sort", lambda v: simulate_window(*arrays, 4, exchange_sort=v)),
        ("squares", lambda v: NagLearner(2, squares=v)),
        ("lenient", lambda v: scheduler.read_swf(SLICE, lenient=v)),
        ("infer_machine_procs", lambda v: scheduler.read_swf(SLICE, infer_machine_procs=v)),
        ("require_jobs", lambda v: scheduler.strong_filter(trace, require_jobs=v)),
    ]  # fmt: skip


def test_simulate_redirect_balance_no_is_refused(kth_slice):
    """The report's case: ``balance="no"`` must not turn balancing on."""
    with pytest.raises(ConfigurationError, match=r"balance must be True or False, got 'no'"):
        scheduler.simulate_redirect(kth_slice, alpha=0.1, theta=5, balance="no")


@pytest.mark.parametrize("value", NOT_BOOLS, ids=repr)
def test_every_flag_refuses_what_is_not_a_bool(kth_slice, value):
    for name, call in _calls(kth_slice):
        with pytest.raises(ConfigurationError, match=rf"^{name} must be True or False, got "):
            call(value)


def test_numpy_bools_are_bools(kth_slice):
    for _, call in _calls(kth_slice):
        call(np.False_)
    result = scheduler.simulate_redirect(kth_slice, alpha=0.1, theta=5, balance=np.True_)
    assert result.config.balance is True
