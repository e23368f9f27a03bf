"""The one definition of each run figure (scheduler.sim.metrics.run_figures), by hand, and every
engine variant's summary equal to it applied to that run's own start times (real logs and
hypothesis workloads).

The studies' figures (the queue-tuning weeks, the redirection grid) are checked the same way in
``tests/studies/test_run_figures.py``.
"""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.workloads import workloads

import scheduler
from scheduler.core.constants import BSLD_TAU_S, SWF_COLUMNS, SWF_SCHEMA
from scheduler.sim.memory import MemoryConfig, MemorySummary, memory_jobs, simulate_memory
from scheduler.sim.metrics import RunFigures, RunSummary, run_figures, with_job_metrics
from scheduler.sim.prediction import simulate_predicted
from scheduler.sim.redirection import RedirectSummary, pool_sizes, simulate_redirect
from scheduler.sim.results import RunResult
from scheduler.traces.filters import strong_filter
from scheduler.traces.memory import memory_filter, scale_to_load
from scheduler.traces.swf import Trace, read_swf, used_procs

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
FIGURE_NAMES = [field.name for field in fields(RunFigures)]

# -- the function, by hand ---------------------------------------------------------------------

# three jobs on m = 4: waits 0, 10, 5 s; ends 10, 15, 30 s; work 20 + 20 + 20 proc-s
HAND = {
    "submit_s": np.array([0.0, 0.0, 5.0]),
    "start_s": np.array([0.0, 10.0, 10.0]),
    "run_s": np.array([10.0, 5.0, 20.0]),
    "procs": np.array([2, 4, 1]),
}


def hand_figures(**options) -> RunFigures:
    return run_figures(HAND["submit_s"], HAND["start_s"], HAND["run_s"], HAND["procs"], 4,
                       **options)  # fmt: skip


def test_figures_by_hand() -> None:
    figures = hand_figures(tau_s=10.0)
    # bsld: 10/10 = 1; (10 + 5)/max(5, 10) = 1.5; (5 + 20)/20 = 1.25
    assert figures == RunFigures(
        jobs=3, avg_wait_s=5.0, max_wait_s=10.0, total_wait_s=15.0, avg_bsld=3.75 / 3,
        max_bsld=1.5, avg_stretch=(1.0 + 3.0 + 1.25) / 3, makespan_s=30.0,
        utilisation=60 / (4 * 30), utilisation_with_waste=60 / (4 * 30), wasted_proc_s=0.0,
    )  # fmt: skip


def test_tau_is_the_bounded_slowdowns_threshold() -> None:
    # with τ = 60 s every job's (wait + p) / τ is below 1: every bsld is 1
    figures = hand_figures(tau_s=60.0)
    assert figures.avg_bsld == figures.max_bsld == 1.0
    assert figures.avg_stretch == hand_figures(tau_s=10.0).avg_stretch  # τ plays no part
    with pytest.raises(TypeError):
        hand_figures()  # τ has no default: every caller names it


def test_wasted_work_counts_only_in_utilisation_with_waste() -> None:
    figures = hand_figures(tau_s=10.0, wasted_proc_s=np.array([6.0, 0.0, 4.0, 2.0]))
    assert figures.wasted_proc_s == 12.0
    assert figures.utilisation == 0.5
    assert figures.utilisation_with_waste == pytest.approx(72 / 120)


def test_order_of_the_jobs_does_not_matter() -> None:
    order = [2, 0, 1]
    shuffled = run_figures(*(HAND[k][order] for k in ("submit_s", "start_s", "run_s", "procs")),
                           4, tau_s=10.0)  # fmt: skip
    assert shuffled == hand_figures(tau_s=10.0)


def test_no_job_gives_zeros() -> None:
    empty = np.zeros(0)
    figures = run_figures(empty, empty, empty, empty, 8, tau_s=10.0)
    assert figures.jobs == 0
    assert all(getattr(figures, name) == 0.0 for name in FIGURE_NAMES[1:])


def test_bad_arrays_are_refused() -> None:
    with pytest.raises(ValueError, match="one length"):
        run_figures(np.zeros(2), np.zeros(3), np.ones(2), np.ones(2), 4, tau_s=10.0)
    with pytest.raises(ValueError, match="finite start"):
        run_figures(np.zeros(2), np.array([0.0, np.nan]), np.ones(2), np.ones(2), 4, tau_s=10.0)


def test_summaries_add_fields_to_the_run_figures() -> None:
    """Every variant's summary starts with RunFigures' fields, unchanged, and adds its own."""
    for summary in (RunSummary, RedirectSummary, MemorySummary):
        assert issubclass(summary, RunFigures)
        own = [(f.name, f.type) for f in fields(summary)]
        assert own[: len(FIGURE_NAMES)] == [(f.name, f.type) for f in fields(RunFigures)]


def test_job_columns_use_the_same_definitions() -> None:
    table = pl.DataFrame({name: HAND[name] for name in ("submit_s", "start_s", "run_s")})
    jobs = with_job_metrics(table, tau_s=10.0)
    assert jobs["wait_s"].to_list() == [0.0, 10.0, 5.0]
    assert jobs["end_s"].to_list() == [10.0, 15.0, 30.0]
    assert jobs["bsld"].to_list() == [1.0, 1.5, 1.25]
    assert jobs["stretch"].to_list() == [1.0, 3.0, 1.25]


# -- every variant's summary is run_figures of its own schedule ---------------------------------


def figures_of(result: RunResult, machine_procs: int, tau_s: float, wasted=None) -> RunFigures:
    """run_figures applied to the run's own jobs and start times (from its table)."""
    return run_figures(result.submit_s, result.start_s, result.run_s, result.procs,
                       machine_procs, tau_s=tau_s, wasted_proc_s=wasted)  # fmt: skip


@pytest.fixture(scope="module")
def kth_slice() -> Trace:
    return strong_filter(read_swf(RESOURCES / "KTH-slice.swf.gz"))[0]


@pytest.mark.parametrize(
    "options",
    [{}, {"primary": "SPF", "backfill": "SPF", "threshold": "10h"}, {"backfill": None}],
)
def test_base_engine_summary(kth_slice: Trace, options: dict) -> None:
    result = scheduler.simulate(kth_slice, **options)
    assert result.summary.figures() == figures_of(result, 100, BSLD_TAU_S)
    assert result.summary.backfilled_jobs == int(result.jobs["backfilled"].sum())
    assert result.summary.wasted_proc_s == 0.0
    assert result.summary.utilisation == result.summary.utilisation_with_waste


def test_prediction_summary(kth_slice: Trace) -> None:
    result = simulate_predicted(kth_slice, predictor="ave2", correction="incremental",
                                backfill_order="sjbf")  # fmt: skip
    assert result.summary.figures() == figures_of(result, 100, BSLD_TAU_S)


@pytest.mark.parametrize("balance", [False, True])
def test_redirection_summary(kth_slice: Trace, balance: bool) -> None:
    main, _ = pool_sizes(0.2, 100)
    trace = kth_slice.with_jobs(kth_slice.jobs.filter(used_procs() <= main))
    result = simulate_redirect(trace, alpha=0.2, theta=5, balance=balance)
    assert result.redirections > 0  # the waste is not trivially 0
    wasted = result.jobs["wasted_proc_s"].to_numpy()
    assert result.summary.figures() == figures_of(result, 100, result.config.tau_s, wasted)
    assert result.summary.wasted_proc_s > 0
    assert result.summary.utilisation < result.summary.utilisation_with_waste
    assert result.summary.redirections == result.redirections


@pytest.mark.parametrize(
    "options",
    [{"scheduler": "fcfs"}, {"scheduler": "easy", "estimator": "perceptron", "seed": 4},
     {"estimator": "perceptron", "feedback": "explicit", "gradient": "normalised", "seed": 2}],
)  # fmt: skip
def test_memory_summary(options: dict) -> None:
    raw = read_swf(RESOURCES / "LANL-CM5-tiny.swf.gz", machine_procs=1024)
    jobs, _ = memory_filter(raw.jobs, 1024, largest_node_kb=32 * 1024.0)
    jobs = memory_jobs(scale_to_load(jobs.head(600), 1024, 1.1))
    config = MemoryConfig(class_nodes=(512, 512), class_memory_mb=(32.0, 24.0), **options)
    result = simulate_memory(jobs, config)
    # the failed runs' node-seconds, in run order
    failed = result.runs.filter(pl.col("failed")).join(
        result.jobs.select("job_id", "procs"), on="job_id", how="left", maintain_order="left"
    )
    wasted = (failed["procs"] * (failed["end_s"] - failed["start_s"])).to_numpy()
    assert result.summary.figures() == figures_of(result, 1024, BSLD_TAU_S, wasted)
    assert result.summary.failed_runs == failed.height
    if options.get("estimator") == "perceptron":
        assert failed.height > 0 and result.summary.wasted_proc_s > 0


def swf_table(jobs) -> pl.DataFrame:
    """An SWF job table of hypothesis jobs (processors allocated = requested)."""
    unknown = dict.fromkeys(SWF_COLUMNS, -1)
    rows = [{**unknown, "job_id": j.job_id, "submit_s": int(j.submit_s), "run_s": int(j.run_s),
             "alloc_procs": j.procs, "req_procs": j.procs, "req_time_s": int(j.requested_s)}
            for j in jobs]  # fmt: skip
    return pl.DataFrame(rows, schema=SWF_SCHEMA)


@settings(max_examples=40, deadline=None)
@given(workloads(max_jobs=20), st.sampled_from(["FCFS", "SPF", "LQF"]))
def test_base_engine_summary_on_random_workloads(workload, policy: str) -> None:
    jobs, m = workload
    result = scheduler.simulate(swf_table(jobs), policy, policy, machine_procs=m)
    assert result.summary.figures() == figures_of(result, m, BSLD_TAU_S)


@settings(max_examples=40, deadline=None)
@given(workloads(max_jobs=20), st.sampled_from([0, 1, 3, math.inf]), st.booleans())
def test_redirection_summary_on_random_workloads(workload, theta: float, balance: bool) -> None:
    jobs, m = workload
    if m < 2:
        m = 2
    main, _ = pool_sizes(0.3, m)
    table = swf_table(jobs).with_columns(
        pl.col("alloc_procs").clip(upper_bound=main), pl.col("req_procs").clip(upper_bound=main)
    )
    result = simulate_redirect(table, alpha=0.3, theta=theta, balance=balance, machine_procs=m,
                               tau_s=7.0)  # fmt: skip
    wasted = result.jobs["wasted_proc_s"].to_numpy()
    assert result.summary.figures() == figures_of(result, m, 7.0, wasted)
