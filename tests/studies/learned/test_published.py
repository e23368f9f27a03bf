"""The published Tables 3 and 4 (stored once as data) and their comparison with schedlab's."""

from __future__ import annotations

import polars as pl
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.studies.learned.published import (
    published_table3,
    published_table4,
    table3_comparison,
    table4_comparison,
)


def test_published_tables_hold_every_cell() -> None:
    table4 = published_table4()
    assert table4.height == 18 * 8
    assert table4.filter(pl.col("workload") == "CTC-SP2")["mode"].unique().len() == 3
    ctc = table4.filter(
        (pl.col("workload") == "CTC-SP2") & (pl.col("mode") == "backfilling")
        & (pl.col("policy") == "FCFS")
    )  # fmt: skip
    assert ctc["published"].item() == 74.96
    assert published_table3()["coefficient"].to_list() == [870.0, 25600.0, 6.86e6, 5.3e5]


def test_table4_comparison() -> None:
    evaluation = pl.DataFrame({
        "workload": ["CTC-SP2"] * 3, "mode": ["backfilling"] * 3, "policy": ["FCFS"] * 3,
        "avg_bsld": [70.0, 80.0, 90.0], "avg_bsld_default": [30.0, 40.0, 50.0],
    })  # fmt: skip
    table = table4_comparison(evaluation)
    row = table.row(0, named=True)
    assert (row["sequences"], row["schedlab_protocol"], row["schedlab_default"]) == (3, 80.0, 40.0)
    assert row["protocol_diff_pct"] == pytest.approx(round((80 / 74.96 - 1) * 100, 1))
    assert table.height == 1
    with pytest.raises(ConfigurationError, match="lacks"):
        table4_comparison(evaluation.drop("avg_bsld_default"))


def test_table3_comparison_reads_the_fitted_forms() -> None:
    # F1's form fitted with c1 = 2, c3 = 1740: simplified coefficient 870, rank 3 of 4 forms,
    # distinct rank 2 (rank 2 duplicates rank 1)
    forms = pl.DataFrame({
        "rank": [1, 2, 3, 4], "alpha": ["x", "x", "log10", "sqrt"],
        "beta": ["x", "x", "x", "x"], "op1": ["+", "+", "*", "*"],
        "gamma": ["x", "x", "log10", "log10"], "op2": ["+", "+", "+", "+"],
        "c1": [1.0, 1.0, 2.0, 1.0], "c2": [1.0, 1.0, 1.0, 1.0], "c3": [1.0, 1.0, 1740.0, 5.0],
        "duplicate_of": [None, 1, None, None],
    })  # fmt: skip
    table = table3_comparison(forms)
    f1 = table.row(0, named=True)
    assert (f1["function"], f1["fitted"], f1["diff_pct"]) == ("F1", 870.0, 0.0)
    assert (f1["rank"], f1["distinct_rank"]) == (3, 2)
    assert table.row(2, named=True)["rank"] is None  # F3's form is not in this table
