"""The learner grid (scheduler.studies.prediction.grid) on the bundled KTH-SP2 slice.

Its shape and order, the plain-EASY baseline (relative values exactly 1, equal to
``scheduler.simulate``), each NAG row equal to a direct ``simulate_predicted`` call, determinism,
and clear errors for bad axis values, raised before anything is simulated.
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from scheduler import read_swf, simulate, strong_filter
from scheduler.core.errors import ConfigurationError
from scheduler.sim.prediction import simulate_predicted
from scheduler.studies.prediction import grid as grid_module
from scheduler.studies.prediction.grid import (
    GRID_COLUMNS,
    PREDICTION_FLOOR_S,
    check_grid,
    learner_grid,
)
from scheduler.traces.swf import Trace

SLICE = Path(__file__).resolve().parents[3] / "resources" / "KTH-slice.swf.gz"
LOSSES = ["eloss", "squared"]
ETAS = [10.0, 1000.0]
LAMS = [0.0, 1e-4]


@pytest.fixture(scope="module")
def kth_slice() -> Trace:
    """The bundled six-week KTH-SP2 slice, strongly filtered with overrunning jobs clipped."""
    return strong_filter(read_swf(SLICE), overrun="clip")[0]


@pytest.fixture(scope="module")
def grid(kth_slice: Trace) -> pl.DataFrame:
    return learner_grid(kth_slice, losses=LOSSES, etas=ETAS, lams=LAMS)


def test_shape_and_order(grid: pl.DataFrame, kth_slice: Trace) -> None:
    assert grid.columns == list(GRID_COLUMNS)
    assert grid.height == 1 + len(LOSSES) * len(ETAS) * len(LAMS)
    runs = grid.slice(1)
    assert runs["predictor"].unique().to_list() == ["nag"]
    expected = [(loss, eta, lam) for loss in LOSSES for eta in ETAS for lam in LAMS]
    assert list(runs.select("loss", "eta", "lam").iter_rows()) == expected
    assert set(runs["correction"]) == {"incremental"}
    assert set(runs["backfill_order"]) == {"sjbf"}
    assert set(grid["jobs"]) == {kth_slice.jobs.height}
    assert set(grid["trace"]) == {"KTH-slice"}
    for column in ("under_share", "floor_share"):
        assert grid[column].is_between(0.0, 1.0).all()
    assert (grid["wall_s"] > 0).all()


def test_baseline_is_plain_easy_with_relative_one(grid: pl.DataFrame, kth_slice: Trace) -> None:
    base = grid.row(0, named=True)
    assert (base["predictor"], base["correction"], base["backfill_order"]) == (
        "requested", "requested", "easy",
    )  # fmt: skip
    assert base["loss"] is None and base["eta"] is None and base["lam"] is None
    assert base["relative_avg_bsld"] == 1.0 and base["relative_avg_wait"] == 1.0
    easy = simulate(kth_slice).summary
    assert base["avg_bsld"] == pytest.approx(easy.avg_bsld, rel=1e-12)
    assert base["avg_wait_s"] == pytest.approx(easy.avg_wait_s, rel=1e-12)
    # the requested time never under-predicts a (clipped) job and is never corrected
    assert base["under_share"] == 0.0 and base["corrections"] == 0
    runs = grid.slice(1)
    for row in runs.iter_rows(named=True):
        assert row["relative_avg_bsld"] == row["avg_bsld"] / base["avg_bsld"]
        assert row["relative_avg_wait"] == row["avg_wait_s"] / base["avg_wait_s"]


def test_a_row_equals_a_direct_run(grid: pl.DataFrame, kth_slice: Trace) -> None:
    result = simulate_predicted(
        kth_slice, predictor="nag", loss="squared", eta=1000.0, lam=1e-4,
        correction="incremental", backfill_order="sjbf",
    )  # fmt: skip
    row = grid.filter(
        (pl.col("loss") == "squared") & (pl.col("eta") == 1000.0) & (pl.col("lam") == 1e-4)
    ).row(0, named=True)
    jobs = result.jobs
    assert row["avg_bsld"] == result.summary.avg_bsld
    assert row["avg_wait_s"] == result.summary.avg_wait_s
    assert row["corrections"] == result.total_corrections == jobs["corrections"].sum()
    error = (jobs["prediction_s"] - jobs["run_s"]).abs().mean()
    assert row["mae_s"] == pytest.approx(error, rel=1e-12)
    assert row["under_share"] == (jobs["prediction_s"] < jobs["run_s"]).mean()
    assert row["floor_share"] == (jobs["prediction_s"] <= PREDICTION_FLOOR_S).mean()


def test_deterministic(grid: pl.DataFrame, kth_slice: Trace) -> None:
    again = learner_grid(kth_slice, losses=LOSSES, etas=ETAS, lams=LAMS)
    assert_frame_equal(again.drop("wall_s"), grid.drop("wall_s"))


def test_options_and_bare_table(kth_slice: Trace) -> None:
    table = kth_slice.jobs.head(500)
    out = learner_grid(
        table, losses=["absolute"], etas=[100], lams=[0], correction="doubling",
        backfill_order="easy", machine_procs=kth_slice.machine_procs,
    )  # fmt: skip
    assert out.height == 2
    assert out["trace"].to_list() == [None, None]
    assert out.row(1, named=True)["correction"] == "doubling"
    assert out.row(1, named=True)["backfill_order"] == "easy"


def test_axes_are_normalised() -> None:
    losses, etas, lams = check_grid(
        ["ELoss", "over=squared,under=linear,gamma=log(qp)", "over=linear,under=squared,gamma=1"],
        [10, 10.0, 1],
        (0, 1e-6),
    )
    assert losses == ["eloss", "over=linear,under=squared,gamma=1"]
    assert etas == [10.0, 1.0] and lams == [0.0, 1e-6]
    assert check_grid("squared", [1], [0])[0] == ["squared"]


@pytest.mark.parametrize(
    ("losses", "etas", "lams", "message"),
    [
        (["eloss"], [0], [0],
         "eta: the step size η must be a finite number > 0 s and <= 4.5036e+15 s, got 0"),
        (["eloss"], [10, -1], [0], "got -1"),
        (["eloss"], [math.nan], [0], "got nan"),
        (["eloss"], [math.inf], [0], "got inf"),
        (["eloss"], [10], [-1e-6],
         "lam: the ℓ2 weight λ must be a finite number >= 0 and <= 1e+12, got -1e-06"),
        (["eloss"], [1e300], [0], "eta: the step size η"),
        (["eloss"], [10], [1e300], "lam: the ℓ2 weight λ"),
        (["eloss"], [10], [math.nan], "lam"),
        (["huber"], [10], [0], "'huber'"),
        (["over=cubic,under=linear,gamma=1"], [10], [0], "cubic"),
        ([], [10], [0], "losses: give at least one loss"),
        (["eloss"], [], [0], "eta: give at least one value"),
        (["eloss"], "10", [0], "eta: expected a list of numbers"),
        (["eloss"], [10], ["0"], "lam: expected numbers"),
        (["eloss"], [True], [0], "eta: expected numbers"),
    ],
)
def test_bad_values_fail_before_any_run(
    monkeypatch: pytest.MonkeyPatch, kth_slice: Trace, losses, etas, lams, message
) -> None:
    def no_run(*args, **kwargs):
        raise AssertionError("simulated before checking the axes")

    monkeypatch.setattr(grid_module, "simulate_predicted", no_run)
    with pytest.raises(ConfigurationError) as info:
        learner_grid(kth_slice, losses=losses, etas=etas, lams=lams)
    assert message in str(info.value)


def test_unknown_loss_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="eloss, squared, absolute"):
        check_grid(["huber"], [10], [0])


def test_bad_correction_or_order(kth_slice: Trace) -> None:
    with pytest.raises(ConfigurationError, match="unknown correction 'triple'"):
        learner_grid(kth_slice, losses=["eloss"], etas=[10], lams=[0], correction="triple")
    with pytest.raises(ConfigurationError, match="backfill_order"):
        learner_grid(kth_slice, losses=["eloss"], etas=[10], lams=[0], backfill_order="lifo")
