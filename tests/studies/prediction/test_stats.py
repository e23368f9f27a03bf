"""Statistics of the prediction study on small hand-made runs tables (values worked by hand)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.predictors.losses import loss
from scheduler.studies.prediction.stats import (
    best_worst_table,
    error_table,
    lolo_table,
    prediction_errors,
    relative_bsld,
)


def _runs(values: dict[str, dict[str, float]]) -> pl.DataFrame:
    """values: trace -> {triple label: AVEbsld}; the other columns follow from the label."""
    rows = []
    for trace, triples in values.items():
        for label, bsld in triples.items():
            technique, correction, backfill = label.split("/")
            predictor = "nag" if technique.startswith("nag-") else technique
            rows.append({"trace": trace, "technique": technique, "predictor": predictor,
                         "correction": correction, "backfill": backfill, "triple": label,
                         "avg_bsld": bsld, "mae_s": 100.0 * bsld, "mean_eloss": bsld,
                         "under_share": 0.5, "floor_share": 0.0, "corrections": 3})  # fmt: skip
    return pl.DataFrame(rows)


A = {
    "requested/none/easy": 10.0,
    "ave2/incremental/sjbf": 8.0,
    "clairvoyant/none/easy": 6.0,
    "clairvoyant/none/sjbf": 4.0,
    "nag-eloss/incremental/easy": 7.0,
    "nag-eloss/incremental/sjbf": 5.0,
    "nag-sq/incremental/easy": 9.0,
    "nag-sq/incremental/sjbf": 6.5,
}
B = {
    "requested/none/easy": 100.0,
    "ave2/incremental/sjbf": 50.0,
    "clairvoyant/none/easy": 60.0,
    "clairvoyant/none/sjbf": 30.0,
    "nag-eloss/incremental/easy": 90.0,
    "nag-eloss/incremental/sjbf": 70.0,
    "nag-sq/incremental/easy": 80.0,
    "nag-sq/incremental/sjbf": 40.0,
}


def test_best_worst_per_variant() -> None:
    table = best_worst_table(_runs({"A": A, "B": B})).sort("trace")
    a, b = table.row(0, named=True), table.row(1, named=True)
    assert (a["easy"], a["easy_pp"], a["clairvoyant_easy"], a["clairvoyant_sjbf"]) == (
        10.0, 8.0, 6.0, 4.0
    )  # fmt: skip
    # learned triples only (NAG): on A the best EASY one is E-loss (7), the worst squared (9)
    assert (a["best_easy"], a["best_easy_triple"]) == (7.0, "nag-eloss/incremental/easy")
    assert (a["worst_easy"], a["worst_easy_triple"]) == (9.0, "nag-sq/incremental/easy")
    assert (b["best_sjbf"], b["best_sjbf_triple"]) == (40.0, "nag-sq/incremental/sjbf")
    assert (b["worst_sjbf"], b["worst_sjbf_triple"]) == (70.0, "nag-eloss/incremental/sjbf")


def test_best_worst_leaves_out_what_was_not_run() -> None:
    only = {"requested/none/easy": 3.0, "nag-eloss/incremental/easy": 2.0}
    table = best_worst_table(_runs({"A": only}))
    assert "easy_pp" not in table.columns and "clairvoyant_sjbf" not in table.columns
    assert "best_sjbf" not in table.columns
    assert table["best_easy"][0] == table["worst_easy"][0] == 2.0


def test_relative_bsld_divides_by_easy_of_the_same_log() -> None:
    rel = relative_bsld(_runs({"A": A, "B": B}))
    row = rel.filter((pl.col("trace") == "B") & (pl.col("triple") == "nag-sq/incremental/sjbf"))
    assert row["relative_bsld"][0] == pytest.approx(0.4)
    with pytest.raises(ConfigurationError, match="no EASY run"):
        relative_bsld(_runs({"A": {"ave2/incremental/sjbf": 1.0}}))


def test_lolo_sum_and_relative_scores_choose_differently() -> None:
    """Three logs; C has huge AVEbsld, so the raw sum follows C while the relative score
    weighs every log alike (hand-computed below)."""
    c = {"requested/none/easy": 1000.0, "ave2/incremental/sjbf": 900.0,
         "nag-eloss/incremental/sjbf": 500.0, "nag-sq/incremental/sjbf": 800.0}  # fmt: skip
    a = {"requested/none/easy": 10.0, "ave2/incremental/sjbf": 9.0,
         "nag-eloss/incremental/sjbf": 9.5, "nag-sq/incremental/sjbf": 2.0}  # fmt: skip
    b = {"requested/none/easy": 10.0, "ave2/incremental/sjbf": 9.0,
         "nag-eloss/incremental/sjbf": 9.5, "nag-sq/incremental/sjbf": 2.0}  # fmt: skip
    runs = _runs({"A": a, "B": b, "C": c})
    summed = lolo_table(runs, score="sum").sort("trace")
    # held-out A: sums over B + C: eloss 509.5, sq 802, ave2 909, requested 1010 -> eloss
    row = summed.row(0, named=True)
    assert row["triple"] == "nag-eloss/incremental/sjbf"
    assert row["training_score"] == pytest.approx(509.5)
    assert row["avg_bsld"] == 9.5 and row["easy"] == 10.0 and row["easy_pp"] == 9.0
    assert row["reduction_vs_easy"] == pytest.approx(0.05)
    assert row["reduction_vs_easy_pp"] == pytest.approx(1 - 9.5 / 9.0)
    # held-out C: sums over A + B: sq 4 wins
    assert summed.row(2, named=True)["triple"] == "nag-sq/incremental/sjbf"
    relative = lolo_table(runs, score="relative").sort("trace")
    # held-out A, relative over B + C: sq 0.2 + 0.8 = 1.0, eloss 0.95 + 0.5 = 1.45 -> sq
    row = relative.row(0, named=True)
    assert row["triple"] == "nag-sq/incremental/sjbf"
    assert row["training_score"] == pytest.approx(1.0)


def test_lolo_ignores_clairvoyant_and_incomplete_triples() -> None:
    a = {"requested/none/easy": 10.0, "clairvoyant/none/easy": 1.0, "nag-x/incremental/easy": 0.5,
         "ave2/incremental/easy": 8.0}  # fmt: skip
    b = {"requested/none/easy": 10.0, "clairvoyant/none/easy": 1.0, "ave2/incremental/easy": 9.0}
    table = lolo_table(_runs({"A": a, "B": b}))
    assert set(table["triple"]) == {"ave2/incremental/easy"}
    assert table["easy_pp"].is_nan().all()  # no EASY++ triple in this study


def test_lolo_needs_two_logs() -> None:
    with pytest.raises(ConfigurationError, match="at least 2 logs"):
        lolo_table(_runs({"A": A}))
    with pytest.raises(ConfigurationError, match="one of sum, relative"):
        lolo_table(_runs({"A": A, "B": B}), score="mean")


def test_error_table_keeps_ave2_and_nag() -> None:
    table = error_table(_runs({"A": A}))
    assert set(table["technique"]) == {"ave2", "nag-eloss", "nag-sq"}
    eloss = table.filter(pl.col("technique") == "nag-eloss").row(0, named=True)
    assert eloss["runs"] == 2
    assert eloss["mae_s"] == pytest.approx(600.0)  # mean of 700 and 500
    assert (eloss["mae_min_s"], eloss["mae_max_s"]) == (500.0, 700.0)


def test_prediction_errors_by_hand() -> None:
    pred = np.array([1.0, 100.0, 50.0, 300.0])
    run = np.array([10.0, 100.0, 150.0, 200.0])
    procs = np.array([1.0, 2.0, 4.0, 8.0])
    errors = prediction_errors(pred, run, procs, 0.01)
    assert errors["mae_s"] == pytest.approx((9 + 0 + 100 + 100) / 4)
    assert errors["under_share"] == 0.5 and errors["floor_share"] == 0.25
    # E-loss: linear under-prediction and squared over-prediction, weight log(q p)
    by_hand = (
        math.log(10) * 9 + 0.0 + math.log(600) * 100 + math.log(1600) * 100**2
    ) / 4  # fmt: skip
    assert errors["mean_eloss"] == pytest.approx(by_hand)
    assert errors["mean_eloss"] == pytest.approx(float(np.mean(loss("eloss", pred, run, procs))))
    with pytest.raises(ConfigurationError, match="0 jobs"):
        prediction_errors(np.array([]), np.array([]), np.array([]), 0.01)
