"""The memory study's claims table (scheduler.studies.memory.published): every claim of the
paper's text read, each quantity computed from hand-made runs whose values are worked out here,
and the agreement rule."""

from __future__ import annotations

import polars as pl
import pytest

from scheduler.studies.memory.published import QUANTITIES, published_claims, published_table
from scheduler.studies.memory.stats import baseline_ratios, seed_intervals

FEATURES = ("free_class1", "free_class2", "need", "log_request", "log_queue", "bias")
#: (variant, feedback) -> per load: (utilisation per seed, stretch, w_free_class2, w_log_queue)
LOAD_RUNS = {
    ("none", ""): {0.3: ((0.3,), 10.0, 0, 0), 0.5: ((0.5,), 10.0, 0, 0),
                   1.2: ((0.5,), 10.0, 0, 0)},
    ("perceptron-implicit", "implicit"): {0.3: ((0.3, 0.3), 12.0, 3.0, 1.0),
                                          0.5: ((0.5, 0.5), 1.0, 2.0, 2.0),
                                          1.2: ((0.66, 0.68), 5.0, 1.0, 3.0)},
    ("perceptron-explicit", "explicit"): {0.3: ((0.3, 0.3), 9.0, 3.0, 3.0),
                                          0.5: ((0.5, 0.5), 1.0, 2.0, 2.0),
                                          1.2: ((0.75, 0.75), 5.0, 1.0, 1.0)},
}  # fmt: skip
#: the second class's memory -> the explicit variant's utilisation (the baseline's is 0.5)
SWEEP = {4.0: 0.45, 16.0: 0.6, 24.0: 0.75, 32.0: 0.5}


def _run(kind, variant, feedback, load, memory, seed, utilisation, stretch, w1, w4) -> dict:
    estimator = variant.split("-")[0]
    weights = dict.fromkeys(FEATURES, 0.0) | {"free_class2": w1, "log_queue": w4}
    return {
        "kind": kind, "trace": "LANL", "scheduler": "fcfs", "variant": variant,
        "estimator": estimator, "feedback": feedback,
        "gradient": "literal" if feedback else "", "load": load, "second_memory_mb": memory,
        "seed": seed, "utilisation": utilisation, "utilisation_with_waste": utilisation,
        "avg_stretch": stretch, "avg_bsld": stretch, "avg_wait_s": 1.0, "failed_runs": 0,
        "forced": 0, "success_fraction": 1.0,
        **{f"w_{name}": float(value) for name, value in weights.items()},
    }  # fmt: skip


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    rows = []
    for (variant, feedback), loads in LOAD_RUNS.items():
        for load, (utilisations, stretch, w1, w4) in loads.items():
            for seed, utilisation in enumerate(utilisations):
                rows.append(_run("load", variant, feedback, load, 24.0, seed, utilisation,
                                 stretch, w1, w4))  # fmt: skip
    for memory, utilisation in SWEEP.items():
        rows.append(_run("sweep", "none", "", 1.2, memory, 0, 0.5, 10.0, 0, 0))
        for variant, feedback in (("perceptron-implicit", "implicit"),
                                  ("perceptron-explicit", "explicit")):  # fmt: skip
            for seed in (0, 1):
                rows.append(_run("sweep", variant, feedback, 1.2, memory, seed, utilisation,
                                 10.0, 0, 0))  # fmt: skip
    runs = pl.DataFrame(rows)
    report = {"trace": "LANL", "removed_whole_machine": 6, "removed_bad_runtime": 2,
              "missing_memory": "fill"}  # fmt: skip
    return published_table(baseline_ratios(runs), seed_intervals(runs), [report],
                           saturation_load=1.2, class_memory_mb=[32.0, 24.0])  # fmt: skip


def _cell(table: pl.DataFrame, variant: str, quantity: str) -> dict:
    rows = table.filter((pl.col("variant") == variant)
                        & (pl.col("quantity") == quantity)).to_dicts()  # fmt: skip
    assert len(rows) == 1, (variant, quantity, rows)
    return rows[0]


def test_every_claim_is_read_and_known() -> None:
    claims = published_claims()
    assert len(claims) == 18
    assert {claim["quantity"] for claim in claims} == set(QUANTITIES)


def test_utilisation_gains_and_the_feedback_gap(table: pl.DataFrame) -> None:
    gain = QUANTITIES["utilisation_gain_pct"]
    implicit = _cell(table, "perceptron-implicit", gain)
    assert implicit["schedlab"] == pytest.approx(34.0)  # (0.66 + 0.68) / 2 / 0.5 - 1
    assert implicit["paper"] == "33" and implicit["agrees"] is True  # within 5 points
    explicit = _cell(table, "perceptron-explicit", gain)
    assert explicit["schedlab"] == pytest.approx(50.0) and explicit["agrees"] is False
    gap = _cell(table, "perceptron-implicit", QUANTITIES["feedback_gap_pct"])
    assert gap["schedlab"] == pytest.approx(16.0) and gap["agrees"] is False
    assert gap["detail"] == "vs perceptron-explicit"


def test_slowdown_ratios_over_the_loads(table: pl.DataFrame) -> None:
    # implicit: ratios 1.2 (load 0.3), 0.1 (0.5), 0.5 (1.2)
    assert _cell(table, "perceptron-implicit",
                 QUANTITIES["slowdown_ratio_median"])["schedlab"] == pytest.approx(0.5)  # fmt: skip
    worst = _cell(table, "perceptron-implicit", QUANTITIES["slowdown_ratio_max"])
    assert worst["schedlab"] == pytest.approx(1.2) and worst["agrees"] is False
    assert worst["detail"] == "at load 0.3" and worst["bound"] == "max"
    explicit = _cell(table, "perceptron-explicit", QUANTITIES["slowdown_ratio_max"])
    assert explicit["schedlab"] == pytest.approx(0.9) and explicit["agrees"] is True
    half = _cell(table, "perceptron-implicit", QUANTITIES["slowdown_ratio_at_half"])
    assert half["schedlab"] == pytest.approx(0.1) and half["agrees"] is True


def test_figure_9_slopes_map_the_papers_features(table: pl.DataFrame) -> None:
    # feature 1 (free 32 MB nodes) is the larger class, w_free_class2: 3, 2, 1 at 0.3, 0.5, 1.2
    first = _cell(table, "perceptron-implicit",
                  QUANTITIES["weight_slope"] + ", feature 1")  # fmt: skip
    assert first["schedlab"] < 0 and first["agrees"] is True
    assert first["detail"].startswith("w_free_class2, R² ")
    queue = _cell(table, "perceptron-implicit", QUANTITIES["weight_slope"] + ", feature 4")
    assert queue["schedlab"] > 0 and queue["agrees"] is False
    # no failure in these runs: a flat line has no sign, so it does not agree with "rises"
    failures = _cell(table, "perceptron-implicit", QUANTITIES["failures_slope"])
    assert failures["schedlab"] == 0.0 and failures["agrees"] is False


def test_memory_sweep_and_filter_claims(table: pl.DataFrame) -> None:
    best = _cell(table, "perceptron-explicit", QUANTITIES["sweep_best_mb"])
    assert best["schedlab"] == 24.0 and best["paper"] == "16-28" and best["agrees"] is True
    homogeneous = _cell(table, "perceptron-explicit", QUANTITIES["sweep_ratio_homogeneous"])
    assert homogeneous["schedlab"] == pytest.approx(1.0) and homogeneous["agrees"] is True
    small = _cell(table, "perceptron-explicit", QUANTITIES["sweep_ratio_small_min"])
    assert small["schedlab"] == pytest.approx(0.9) and small["detail"] == "at 4 MB"
    removed = _cell(table, "", QUANTITIES["jobs_removed"])
    assert removed["schedlab"] == 8.0 and removed["agrees"] is False  # 6 published
    assert removed["detail"] == "missing_memory: fill"


def test_no_fcfs_perceptron_runs_give_only_the_filter_rows() -> None:
    runs = pl.DataFrame([_run("load", "none", "", 0.5, 24.0, 0, 0.5, 1.0, 0, 0)])
    out = published_table(baseline_ratios(runs), seed_intervals(runs), [],
                          saturation_load=0.5, class_memory_mb=[32.0, 24.0])  # fmt: skip
    assert out.height == 0 and "agrees" in out.columns
