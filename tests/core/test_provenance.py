"""Provenance records and the writers that embed them (scheduler.core.provenance)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import platform
import re
import time
from pathlib import Path

import polars as pl
import pytest

import scheduler
from scheduler.core import provenance as prov
from scheduler.core.code_hash import package_hash
from scheduler.core.errors import TableError
from scheduler.core.provenance import (
    CHECKSUM_KEY,
    PROVENANCE_KEY,
    provenance,
    read_csv,
    read_parquet,
    read_parquet_provenance,
    verify_parquet,
    write_csv,
    write_json,
    write_markdown,
    write_parquet,
)
from scheduler.core.steps import read_table, table_metadata

PACKAGE = Path(scheduler.__file__).resolve().parent
RECORD = {"versions": {"schedlab": "0.1.0"}, "config": {"trace": "KTH-SP2", "seed": 3}}


@pytest.fixture
def table() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "trace": ["KTH-SP2", "CTC-SP2", "x,y"],
            "week_index": [0, 1, 2],
            "avg_wait_s": [1.5, 0.0, 1e6],
            "ok": [True, False, True],
        }
    )


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def _load_copy(directory: Path):
    """provenance.py loaded from a copy of the package (its own code_hash cache)."""
    spec = importlib.util.spec_from_file_location(
        f"_provenance_copy_{directory.name}", directory / "provenance.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------------
# The record
# --------------------------------------------------------------------------------------------


def test_provenance_record():
    record = provenance({"trace": "KTH-SP2", "weeks": (1, 2)}, step="filter", path=Path("a/b"))
    assert record["versions"]["schedlab"] == scheduler.__version__
    assert record["versions"]["python"] == platform.python_version()
    assert record["versions"]["polars"] == pl.__version__
    assert record["code_hash"] == package_hash()
    assert record["config"] == {"trace": "KTH-SP2", "weeks": [1, 2]}
    assert record["step"] == "filter"
    assert record["path"] == "a/b"
    json.dumps(record)  # serialisable
    assert "config" not in provenance(step="x")


def test_infinite_floats_recorded_as_inf():
    record = provenance(
        {"threshold_s": math.inf, "nested": {"low": -math.inf, "values": [1.0, math.inf]}},
        threshold_s=math.inf,
    )
    assert record["config"] == {
        "threshold_s": "inf",
        "nested": {"low": "-inf", "values": [1.0, "inf"]},
    }
    assert record["threshold_s"] == "inf"
    text = json.dumps(record, allow_nan=False)  # valid JSON: no Infinity literal
    assert "Infinity" not in text


def test_record_has_no_time_stamp():
    first = provenance({"a": 1}, step="s")
    time.sleep(1.05)
    assert provenance({"a": 1}, step="s") == first


# --------------------------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------------------------


def test_parquet_round_trip(tmp_path, table):
    path = tmp_path / "sub" / "t.parquet"  # parent created
    write_parquet(table, path, RECORD, {"schedlab.machine_procs": "100"})
    assert pl.read_parquet(path).equals(table)
    assert read_parquet_provenance(path) == RECORD
    frame, meta = read_parquet(path)
    assert frame.equals(table)
    assert meta["schedlab.machine_procs"] == "100"
    assert json.loads(meta[PROVENANCE_KEY]) == RECORD
    assert listing(path.parent) == ["t.parquet"]  # no temporary file left


def test_csv_round_trip(tmp_path, table):
    path = tmp_path / "t.csv"
    write_csv(table, path, RECORD)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# provenance: ")
    assert json.loads(lines[0].removeprefix("# provenance: ")) == RECORD
    assert lines[1] == '"trace","week_index","avg_wait_s","ok"'
    assert read_csv(path).equals(table)


def test_csv_infinite_values_round_trip(tmp_path):
    frame = pl.DataFrame({"threshold": ["none", "20h"], "threshold_s": [math.inf, 72000.0]})
    write_csv(frame, tmp_path / "t.csv", provenance({"threshold_s": math.inf}))
    assert read_csv(tmp_path / "t.csv").equals(frame)


def test_csv_round_trip_with_hash_in_first_column(tmp_path):
    frame = pl.DataFrame({"name": ["#1", "b"], "value": [1, 2]})
    write_csv(frame, tmp_path / "t.csv", RECORD)
    assert read_csv(tmp_path / "t.csv").equals(frame)


def test_markdown_ends_with_provenance(tmp_path):
    path = tmp_path / "t.md"
    write_markdown("# Title\n\n| a |\n|---|\n| 1 |\n\n\n", path, RECORD)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Title\n\n| a |\n|---|\n| 1 |\n\n<!-- provenance: ")
    assert text.endswith(" -->\n")
    match = re.search(r"<!-- provenance: (.*) -->\n\Z", text)
    assert match and json.loads(match.group(1)) == RECORD
    assert text.count("<!--") == 1


def test_json_has_provenance_key(tmp_path):
    path = tmp_path / "r.json"
    write_json({"jobs_out": 5, "threshold_s": math.inf, "nested": {"x": [1, 2]}}, path, RECORD)
    content = json.loads(path.read_text(encoding="utf-8"))
    assert content == {
        "jobs_out": 5,
        "threshold_s": "inf",
        "nested": {"x": [1, 2]},
        "provenance": RECORD,
    }


def test_writing_twice_gives_identical_bytes(tmp_path, table):
    def write_all(directory: Path) -> dict[str, bytes]:
        record = provenance({"trace": "KTH-SP2", "threshold_s": math.inf}, step="test")
        write_parquet(table, directory / "t.parquet", record, {"k": "v"})
        write_csv(table, directory / "t.csv", record)
        write_markdown("# T\n", directory / "t.md", record)
        write_json({"a": 1}, directory / "t.json", record)
        return {p.name: p.read_bytes() for p in directory.iterdir()}

    first = write_all(tmp_path / "one")
    time.sleep(1.05)  # a time stamp with one-second resolution would now differ
    second = write_all(tmp_path / "two")
    assert set(first) == {"t.parquet", "t.csv", "t.md", "t.json"}
    assert first == second


# --------------------------------------------------------------------------------------------
# Atomicity
# --------------------------------------------------------------------------------------------


class _FailingTable:
    """Writes part of a file, then fails (like a crash mid-write)."""

    def write_parquet(self, path, metadata=None):
        Path(path).write_bytes(b"PAR1 half written")
        raise RuntimeError("disk on fire")


def test_failed_parquet_write_leaves_no_file(tmp_path):
    target = tmp_path / "out.parquet"
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_parquet(_FailingTable(), target, RECORD)
    assert listing(tmp_path) == []
    bad = pl.DataFrame({"a": [object()]}, schema={"a": pl.Object})
    with pytest.raises(pl.exceptions.PolarsError):
        write_parquet(bad, target, RECORD)
    assert listing(tmp_path) == []


def test_failed_parquet_write_keeps_existing_target(tmp_path, table):
    target = tmp_path / "out.parquet"
    write_parquet(table, target, RECORD)
    before = target.read_bytes()
    with pytest.raises(RuntimeError):
        write_parquet(_FailingTable(), target, {"other": 1})
    bad = pl.DataFrame({"a": [object()]}, schema={"a": pl.Object})
    with pytest.raises(pl.exceptions.PolarsError):
        write_parquet(bad, target, {"other": 2})
    assert target.read_bytes() == before
    assert listing(tmp_path) == ["out.parquet"]
    assert read_parquet_provenance(target) == RECORD


def test_module_exports():
    for name in prov.__all__:
        assert hasattr(prov, name)


# --------------------------------------------------------------------------------------------
# Checksums of parquet tables
# --------------------------------------------------------------------------------------------


def test_parquet_records_the_checksum_of_its_own_bytes(tmp_path, table):
    """The checksum is the SHA-256 of the file with its own 64 digits read as zeros."""
    path = tmp_path / "t.parquet"
    write_parquet(table, path, provenance(step="core.test.step"), {"k": "v"})
    meta = pl.read_parquet_metadata(path)
    value = meta[CHECKSUM_KEY]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", value)
    digits = value.removeprefix("sha256:").encode()
    data = path.read_bytes()
    assert data.count(digits) == 1
    assert hashlib.sha256(data.replace(digits, b"0" * 64)).hexdigest() == digits.decode()
    assert verify_parquet(path) is True
    assert read_table(path).equals(table)
    assert table_metadata(path)["k"] == "v"


def test_every_flipped_bit_is_refused_by_name_or_changes_nothing(tmp_path, table):
    """One bit flipped anywhere in the file (one per byte, the bit varying): the read refuses
    the file, naming it and the step that wrote it, or (a flip inside the checksum's key name,
    which only hides the checksum) reads the very same table: never other data."""
    path = tmp_path / "t.parquet"
    write_parquet(table, path, provenance(step="core.test.step"))
    data = path.read_bytes()
    damaged_path = tmp_path / "damaged.parquet"
    refused = 0
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 1 << (position % 8)
        damaged_path.write_bytes(bytes(damaged))
        try:
            read = read_table(damaged_path)
        except TableError as error:
            assert str(error).startswith(f"{damaged_path}: ")
            refused += 1
            continue
        key = data.rfind(CHECKSUM_KEY.encode())
        assert key <= position < key + len(CHECKSUM_KEY), position
        assert read.equals(table)
    assert refused >= len(data) - len(CHECKSUM_KEY)


def test_a_changed_table_names_the_file_and_its_step(tmp_path, table):
    path = tmp_path / "t.parquet"
    write_parquet(table, path, provenance(step="studies.tuning.steps.simulate_batch"))
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(TableError) as caught:
        verify_parquet(path)
    assert str(caught.value).startswith(
        f"{path}: the file changed since step studies.tuning.steps.simulate_batch wrote it: "
        "checksum mismatch (sha256 "
    )
    with pytest.raises(TableError, match="checksum mismatch"):
        table_metadata(path)  # metadata reads are checked too (machine size, calendar)


def test_a_table_without_checksum_is_read_unchecked(tmp_path, table):
    """Tables written before checksums (or by another program) are read as they are."""
    path = tmp_path / "old.parquet"
    table.write_parquet(path, metadata={PROVENANCE_KEY: json.dumps(RECORD)})
    assert verify_parquet(path) is False
    assert read_table(path).equals(table)


def test_a_panic_of_polars_is_a_table_error_naming_the_file(tmp_path, table, monkeypatch):
    """pyo3_runtime.PanicException is a BaseException: reading_table turns it into a
    TableError naming the file (tests/workflow/test_workflow_faults.py meets a real one)."""
    path = tmp_path / "t.parquet"
    write_parquet(table, path, RECORD)

    def panic(*args, **kwargs):
        raise pl.exceptions.PanicException("called `Result::unwrap()` on an `Err` value")

    monkeypatch.setattr(pl, "read_parquet", panic)
    with pytest.raises(TableError, match=r"not a readable parquet table \(polars panicked") as info:
        read_table(path)
    assert str(info.value).startswith(f"{path}: ")
