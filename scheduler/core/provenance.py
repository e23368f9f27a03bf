"""What made an output: the package and library versions and the configuration, recorded in it.

Every file the workflow writes carries a provenance record (a flat JSON object):

- parquet: key-value metadata ``schedlab.provenance`` (see :func:`read_parquet_provenance`);
- CSV: a first line ``# provenance: {...}`` (``polars.read_csv(path, comment_prefix="#")``);
- Markdown: a trailing HTML comment ``<!-- provenance: {...} -->`` (invisible when rendered);
- JSON: a top-level ``"provenance"`` key;
- PNG/PDF figures: the image metadata (see :func:`scheduler.studies.common.figures.save_figure`).

The record has no time stamp on purpose: the same inputs, configuration and code give
byte-identical outputs, so reruns and other machines can be compared file by file.
"""

from __future__ import annotations

import functools
import json
import os
import platform
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl

from scheduler.core.atomic import atomic_path, atomic_write_bytes
from scheduler.core.code_hash import package_hash
from scheduler.core.version import __version__

__all__ = [
    "PROVENANCE_KEY",
    "provenance",
    "read_csv",
    "read_parquet",
    "read_parquet_provenance",
    "write_csv",
    "write_json",
    "write_markdown",
    "write_parquet",
]

PROVENANCE_KEY = "schedlab.provenance"
_LIBRARIES = ("numpy", "numba", "polars", "statsmodels", "plotnine", "snakemake")


@functools.cache
def _versions() -> dict[str, str]:
    versions = {"schedlab": __version__, "python": platform.python_version()}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def provenance(config: Mapping[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """The provenance record of an output.

    ``config`` is the part of the configuration that made the output (JSON-serialisable);
    ``fields`` add more entries (e.g. ``rule="simulate"``).
    """
    record: dict[str, Any] = {"versions": _versions(), "code_hash": package_hash()}
    if config is not None:
        record["config"] = _jsonable(config)
    record.update({key: _jsonable(value) for key, value in fields.items()})
    return record


def _jsonable(value: Any) -> Any:
    """``value`` made JSON-serialisable (infinite floats become the string "inf")."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, Path | os.PathLike):
        return os.fspath(value)
    return value


def _dumps(record: Mapping[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def write_parquet(
    table: pl.DataFrame,
    path: str | os.PathLike[str],
    record: Mapping[str, Any],
    extra_metadata: Mapping[str, str] | None = None,
) -> None:
    """Write ``table`` to parquet atomically, with the provenance record in its metadata."""
    meta = {PROVENANCE_KEY: _dumps(record), **(extra_metadata or {})}
    with atomic_path(path) as tmp:
        table.write_parquet(tmp, metadata=meta)


def read_parquet_provenance(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The provenance record stored in a parquet file written by :func:`write_parquet`."""
    return json.loads(pl.read_parquet_metadata(path)[PROVENANCE_KEY])


def read_parquet(path: str | os.PathLike[str]) -> tuple[pl.DataFrame, dict[str, str]]:
    """A parquet table and its key-value metadata."""
    return pl.read_parquet(path), pl.read_parquet_metadata(path)


def write_csv(table: pl.DataFrame, path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Write ``table`` as CSV atomically, after a ``# provenance: {...}`` comment line."""
    # text fields are quoted, so no data line can start with the comment character
    text = f"# provenance: {_dumps(record)}\n" + table.write_csv(quote_style="non_numeric")
    atomic_write_bytes(path, text.encode("utf-8"))


def read_csv(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Read a CSV written by :func:`write_csv` (the provenance line is skipped)."""
    return pl.read_csv(path, comment_prefix="#")


def write_markdown(text: str, path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Write Markdown atomically, ending with an HTML comment holding the provenance record."""
    body = text.rstrip("\n") + f"\n\n<!-- provenance: {_dumps(record)} -->\n"
    atomic_write_bytes(path, body.encode("utf-8"))


def write_json(
    content: Mapping[str, Any], path: str | os.PathLike[str], record: Mapping[str, Any]
) -> None:
    """Write a JSON object atomically with a ``"provenance"`` key added."""
    body = {**_jsonable(content), "provenance": dict(record)}
    atomic_write_bytes(path, (json.dumps(body, sort_keys=True, indent=2) + "\n").encode("utf-8"))
