"""``scheduler compare``: two results folders, value by value, provenance aside."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from scheduler.cli.compare import compare_trees
from scheduler.cli.main import main
from scheduler.core.provenance import (
    provenance,
    write_csv,
    write_json,
    write_markdown,
    write_parquet,
)


def _results(
    root: Path, *, value: float = 1.5, column: str = "avg_wait_s", step: str = "a"
) -> Path:
    table = pl.DataFrame({"trace": ["x", "y"], column: [value, 2.0]})
    record = provenance({"k": 1}, step=step)
    (root / "tables").mkdir(parents=True)
    write_parquet(table, root / "runs.parquet", record)
    write_csv(table, root / "tables" / "runs.csv", record)
    write_markdown(f"# Runs\n\n{column}: {value}", root / "tables" / "runs.md", record)
    write_json({"jobs": 3}, root / "report.json", record)
    (root / "figure.png").write_bytes(b"pixels " + step.encode())
    return root


def test_provenance_and_figures_aside_the_folders_are_equal(tmp_path: Path, capsys) -> None:
    first = _results(tmp_path / "a", step="one")
    second = _results(tmp_path / "b", step="two")  # other provenance, other pixels
    report = compare_trees(first, second)
    assert len(report["equal"]) == 4 and not report["different"]
    assert main(["compare", str(first), str(second)]) == 0
    assert "4 equal, 0 different, 0 missing, 0 extra" in capsys.readouterr().out


def test_a_changed_value_is_named(tmp_path: Path, capsys) -> None:
    first, second = _results(tmp_path / "a"), _results(tmp_path / "b", value=1.5000001)
    report = compare_trees(first, second)
    assert "runs.parquet: column avg_wait_s: 1 value(s) differ, first row 0: 1.5 != 1.5000001" \
        in report["different"]  # fmt: skip
    assert any(line.startswith("tables/runs.csv") for line in report["different"])
    assert main(["compare", str(first), str(second)]) == 1
    loose = compare_trees(first, second, rtol=1e-6)
    assert loose["different"] == ["tables/runs.md: different text"]


def test_a_renamed_column_is_mapped(tmp_path: Path) -> None:
    first = _results(tmp_path / "a", column="mean_wait_s")
    second = _results(tmp_path / "b", column="avg_wait_s")
    assert compare_trees(first, second)["different"]
    assert not compare_trees(first, second, {"mean_wait_s": "avg_wait_s"})["different"]


def test_missing_and_extra_files(tmp_path: Path) -> None:
    first, second = _results(tmp_path / "a"), _results(tmp_path / "b")
    (first / "report.json").unlink()
    shutil.copy(second / "runs.parquet", second / "more.parquet")
    report = compare_trees(first, second)
    assert report["extra"] == ["more.parquet", "report.json"]
    assert main(["compare", str(first), str(second), "--rename", "bad"]) == 2
    with pytest.raises(SystemExit):
        main(["compare", str(first)])


def test_new_columns_of_the_second_folder(tmp_path: Path) -> None:
    first, second = _results(tmp_path / "a"), tmp_path / "b"
    (second / "tables").mkdir(parents=True)
    table = pl.DataFrame({"extra": [0, 1], "avg_wait_s": [1.5, 2.0], "trace": ["x", "y"]})
    record = provenance({}, step="b")
    write_parquet(table, second / "runs.parquet", record)
    write_csv(table, second / "tables" / "runs.csv", record)
    assert "runs.parquet: columns" in " ".join(compare_trees(first, second)["different"])
    report = compare_trees(first, second, new_columns=True)
    assert "runs.parquet" in report["equal"] and "tables/runs.csv" in report["equal"]
