"""The redirection study's representative week (scheduler.studies.redirect.week and the step
redirect_week) on the tiny config's KTH slice: the week drawn is the test week where the tuned
cell differs most from the baseline, its runs are the grid's, and the killed runs are drawn."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from support.png import png_text

from scheduler.core.errors import ConfigurationError
from scheduler.core.steps import read_table
from scheduler.sim.schedule import schedule_of
from scheduler.studies.redirect import steps as redirect_steps
from scheduler.studies.redirect.week import drawn_week, week_pair
from scheduler.traces import steps as trace_steps

KTH_SLICE = Path(__file__).resolve().parents[3] / "resources" / "KTH-slice.swf.gz"
SETTINGS = {"trace": "KTH-slice", "primary": "FCFS", "backfill": "FCFS", "tau_s": 60.0,
            "max_alpha": 0.2}  # fmt: skip


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The study's steps on the slice: two weeks (one train, one test), the baseline and
    α = 0.2 with two θ, the tables, then the week."""
    folder = tmp_path_factory.mktemp("redirect-week")
    paths = {name: str(folder / name) for name in (
        "filtered.parquet", "weeks.parquet", "baseline.parquet", "alpha.parquet", "grid.parquet",
        "best.parquet", "week.png", "week.pdf", "week.log")}  # fmt: skip
    trace_steps.filter_trace(str(KTH_SLICE), paths["filtered.parquet"], str(folder / "r.json"),
                             trace="KTH-slice", machine_procs=None, overrun="drop")  # fmt: skip
    redirect_steps.choose_weeks(paths["filtered.parquet"], paths["weeks.parquet"],
                                str(folder / "weeks.csv"), trace="KTH-slice", count=2,
                                min_load=0.3, step_days=1, split="chronological")  # fmt: skip
    for alpha, name in ((None, "baseline.parquet"), (0.2, "alpha.parquet")):
        redirect_steps.simulate_alpha(paths["filtered.parquet"], paths["weeks.parquet"],
                                      paths[name], alpha=alpha, thetas=[5, 20], balance=[False],
                                      **SETTINGS)  # fmt: skip
    tables = [str(folder / name) for name in ("heat.csv", "heat.md")]
    redirect_steps.redirect_tables(
        [paths["baseline.parquet"], paths["alpha.parquet"]], paths["grid.parquet"], *tables,
        paths["best.parquet"], str(folder / "best.csv"), str(folder / "best.md"), [],
        str(folder / "online.parquet"), str(folder / "online.csv"), str(folder / "online.md"),
    )  # fmt: skip
    redirect_steps.redirect_week(paths["filtered.parquet"], paths["weeks.parquet"],
                                 paths["grid.parquet"], paths["best.parquet"], paths["week.png"],
                                 paths["week.pdf"], log_path=paths["week.log"],
                                 **SETTINGS)  # fmt: skip
    return paths


def test_the_week_is_the_test_week_that_differs_most(study: dict[str, str]) -> None:
    grid = read_table(study["grid.parquet"])
    best = read_table(study["best.parquet"])
    chosen = drawn_week(grid, best, read_table(study["weeks.parquet"]), "KTH-slice")
    cell = best.sort("train_median_ratio_avg_bsld").row(0, named=True)
    assert (chosen.alpha, chosen.theta) == (cell["alpha"], cell["theta"]) == (0.2, chosen.theta)
    test = grid.filter(pl.col("split") == "test")
    gaps = {}
    for week in set(test["week"]):
        base = test.filter((pl.col("week") == week) & (pl.col("alpha") == 0.0))["avg_bsld"][0]
        run = test.filter((pl.col("week") == week) & (pl.col("theta") == chosen.theta))
        gaps[week] = abs(run["avg_bsld"][0] - base)
    assert chosen.week == max(gaps, key=gaps.get)
    assert abs(chosen.avg_bsld - chosen.baseline_avg_bsld) == gaps[chosen.week]


def test_the_runs_drawn_are_the_grids_and_killed_runs_appear(study: dict[str, str]) -> None:
    grid = read_table(study["grid.parquet"])
    chosen = drawn_week(grid, read_table(study["best.parquet"]),
                        read_table(study["weeks.parquet"]), "KTH-slice")  # fmt: skip
    baseline, redirected = week_pair(read_table(study["filtered.parquet"]), 100, chosen,
                                     widest=80, primary="FCFS", backfill="FCFS",
                                     tau_s=60.0)  # fmt: skip
    assert baseline.summary.avg_bsld == pytest.approx(chosen.baseline_avg_bsld, rel=1e-12)
    assert redirected.summary.avg_bsld == pytest.approx(chosen.avg_bsld, rel=1e-12)
    assert baseline.redirections == 0 and baseline.config.dedicated_procs == 0
    runs = schedule_of(redirected).runs
    killed = runs.filter(~pl.col("final"))
    assert killed.height == redirected.redirections > 0
    assert (killed["pool"] == 0).all()  # killed on the main pool, restarted on the dedicated one
    assert (runs.filter(pl.col("redirected") & pl.col("final"))["pool"] == 1).all()
    assert f"{redirected.redirections} redirections" in Path(study["week.log"]).read_text()


def test_the_figures_carry_their_provenance(study: dict[str, str]) -> None:
    record = json.loads(png_text(Path(study["week.png"]))["Description"])
    assert record["step"] == "studies.redirect.steps.redirect_week"
    config = json.loads(record["config"])  # the flat record holds the settings as JSON text
    assert config["trace"] == "KTH-slice" and config["max_alpha"] == 0.2
    assert Path(study["week.pdf"]).read_bytes()[:5] == b"%PDF-"


def test_a_log_without_a_tuned_cell_is_refused(study: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError, match="no tuned"):
        drawn_week(read_table(study["grid.parquet"]), read_table(study["best.parquet"]),
                   read_table(study["weeks.parquet"]), "NOPE")  # fmt: skip
