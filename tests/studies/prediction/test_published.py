"""The thesis' published values beside a runs table (scheduler.studies.prediction.published)."""

from __future__ import annotations

import math

import polars as pl
import pytest

from scheduler.studies.prediction.published import published_table, published_values
from scheduler.studies.prediction.stats import RUN_COLUMNS


def runs_table(rows: list[tuple[str, str, str, str, float, float]]) -> pl.DataFrame:
    """(trace, technique, correction, backfill, AVEbsld, MAE) rows as a ``runs`` table."""
    records = []
    for trace, technique, correction, backfill, bsld, mae in rows:
        predictor = "nag" if technique.startswith("nag-") else technique
        record = {column: None for column in RUN_COLUMNS}
        record.update(trace=trace, technique=technique, predictor=predictor,
                      correction=correction, backfill=backfill,
                      triple=f"{technique}/{correction}/{backfill}", avg_bsld=bsld, mae_s=mae,
                      mean_eloss=10 * mae)  # fmt: skip
        records.append(record)
    return pl.DataFrame(records, schema=RUN_COLUMNS)


def test_every_published_value_is_a_number():
    # YAML 1.1 reads 1.02e9 (no sign in the exponent) as a string: every value must be a number
    data = published_values()
    values = [v for row in data["table_4_6"].values() for v in row.values()]
    values += list(data["table_4_7"]["avg_bsld"].values())
    values += [v for row in data["table_4_8"].values() for v in row.values()]
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
    assert flat and all(isinstance(x, int | float) and not isinstance(x, bool) for x in flat)
    # the thesis' names map to the catalogue's
    assert "CEA-Curie" in data["table_4_6"] and "Curie" not in data["table_4_6"]
    assert data["table_4_6"]["CTC-SP2"]["easy_pp"] == 85.8


def test_published_table_sets_each_value_beside_its_quantity():
    runs = runs_table([
        ("CTC-SP2", "requested", "none", "easy", 50.0, 0.0),
        ("CTC-SP2", "clairvoyant", "none", "easy", 40.0, 0.0),
        ("CTC-SP2", "ave2", "incremental", "sjbf", 80.0, 4000.0),
        ("CTC-SP2", "ave2", "requested", "sjbf", 30.0, 5000.0),
        ("CTC-SP2", "nag-eloss", "incremental", "sjbf", 25.0, 7000.0),
        ("CTC-SP2", "nag-squared", "requested", "sjbf", 60.0, 3000.0),
        ("CTC-SP2", "nag-squared", "requested", "easy", 35.0, 3000.0),
        ("HPC2N", "requested", "none", "easy", 90.0, 0.0),
    ])  # fmt: skip
    table = published_table(runs)
    assert set(table["trace"]) == {"CTC-SP2"}  # HPC2N is not in the thesis

    def row(table_id: str, quantity: str) -> dict:
        rows = table.filter((pl.col("table") == table_id) & (pl.col("quantity") == quantity))
        assert rows.height == 1, (table_id, quantity)
        return rows.row(0, named=True)

    easy = row("4.1, 4.6", "EASY")
    assert (easy["published"], easy["schedlab"]) == (49.6, 50.0)
    assert easy["difference"] == pytest.approx(50.0 / 49.6 - 1.0)
    assert row("4.6", "EASY++")["schedlab"] == 80.0
    # not simulated: no value, no difference
    missing = row("4.6", "CLAIRVOYANT EASY-SJBF")
    assert missing["schedlab"] is None and missing["difference"] is None
    # best and worst over the NAG triples of each variant (AVE2 is not a learned technique)
    best, worst = row("4.6", "learned, SJBF: best"), row("4.6", "learned, SJBF: worst")
    assert (best["schedlab"], best["schedlab_triple"]) == (25.0, "nag-eloss/incremental/sjbf")
    assert (worst["schedlab"], worst["published"]) == (60.0, 134.7)
    assert row("4.6", "learned, EASY: best")["schedlab"] == 35.0
    # Table 4.7: the published triple, not the best one
    chosen = row("4.7", "published C-V triple")
    assert (chosen["published"], chosen["schedlab"]) == (20.5, 25.0)
    # Table 4.8: the technique's mean over its runs
    assert row("4.8", "ave2: MAE (s)")["schedlab"] == 4500.0
    assert row("4.8", "nag-eloss: mean E-loss")["schedlab"] == 70000.0
    assert math.isclose(row("4.8", "nag-eloss: mean E-loss")["published"], 2.35e5)


def test_published_table_takes_the_requested_time_correction_on_sdsc_sp2():
    runs = runs_table([
        ("SDSC-SP2", "requested", "none", "easy", 88.0, 0.0),
        ("SDSC-SP2", "nag-eloss", "incremental", "sjbf", 70.0, 1.0),
        ("SDSC-SP2", "nag-eloss", "requested", "sjbf", 77.0, 1.0),
    ])  # fmt: skip
    chosen = published_table(runs).filter(pl.col("table") == "4.7").row(0, named=True)
    assert chosen["schedlab_triple"] == "nag-eloss/requested/sjbf"
    assert (chosen["published"], chosen["schedlab"]) == (75.0, 77.0)
