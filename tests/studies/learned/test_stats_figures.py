"""The learned study's evaluation table and figures on small hand-made tables."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.figures import save_figure
from scheduler.studies.learned.figures import (
    convergence_plot,
    evaluation_boxplot,
    function_surface_plot,
)
from scheduler.studies.learned.stats import median_table


def _evaluation() -> pl.DataFrame:
    rows = []
    for workload in ("model-256", "LOG"):
        for mode in ("runtime", "backfilling"):
            for k, policy in enumerate(("FCFS", "SPF", "LF1")):
                for seq in range(5):
                    rows.append({"workload": workload, "mode": mode, "policy": policy,
                                 "sequence": seq, "first_job": seq * 10, "jobs": 100,
                                 "avg_bsld": float(10 * (3 - k) + seq)})  # fmt: skip
    return pl.DataFrame(rows)


def test_median_table_by_hand() -> None:
    table = median_table(_evaluation())
    assert table.height == 2 * 2 * 3
    row = table.filter((pl.col("policy") == "FCFS") & (pl.col("mode") == "runtime")).row(
        0, named=True
    )
    # FCFS values 30..34: median 32, quartiles 31 and 33
    assert (row["sequences"], row["median_avg_bsld"]) == (5, 32.0)
    assert (row["q1_avg_bsld"], row["q3_avg_bsld"]) == (31.0, 33.0)
    ranks = table.filter(pl.col("workload") == "LOG", pl.col("mode") == "runtime")
    assert dict(zip(ranks["policy"], ranks["rank"], strict=True)) == {"FCFS": 3, "SPF": 2, "LF1": 1}
    with pytest.raises(ConfigurationError, match="lacks"):
        median_table(pl.DataFrame({"workload": ["a"]}))


def test_evaluation_boxplot_keeps_the_orders(tmp_path) -> None:
    plot = evaluation_boxplot(_evaluation(), ["LF1", "SPF", "FCFS"], ["backfilling", "runtime"])
    assert list(plot.data["policy"].cat.categories) == ["LF1", "SPF", "FCFS"]
    assert list(plot.data["mode"].cat.categories) == ["backfilling", "runtime"]
    assert list(plot.data["workload"].cat.categories) == ["model-256", "LOG"]
    assert "5 sequences" in plot.labels.get("subtitle", "") or "up to 5" in str(plot.labels)
    save_figure(plot, tmp_path / "e.png", tmp_path / "e.pdf")
    assert (tmp_path / "e.png").stat().st_size > 10_000


def test_convergence_and_function_plots(tmp_path) -> None:
    curve = pl.DataFrame({"trials": [1000, 4000], "normalised_std": [0.2, 0.1]})
    plot = convergence_plot(curve)
    assert plot.data["trials"].tolist() == [1000, 4000]
    # a function increasing in r: the left panel's order grows with x
    surface = function_surface_plot(lambda r, n, s: r * n, "r n", points=10)
    left = surface.data[surface.data["panel"].str.startswith("over (r, n)")]
    first_row = left[left["y"] == left["y"].min()].sort_values("x")
    assert np.all(np.diff(first_row["order"].to_numpy()) > 0)
    save_figure(surface, tmp_path / "f.png", tmp_path / "f.pdf")
    assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"
