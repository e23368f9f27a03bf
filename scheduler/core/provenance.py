"""What made an output: the package and library versions and the configuration, recorded in it.

Every file the workflow writes carries a provenance record (a flat JSON object):

- parquet: key-value metadata ``schedlab.provenance`` (see :func:`read_parquet_provenance`);
- CSV: a first line ``# provenance: {...}`` (``polars.read_csv(path, comment_prefix="#")``);
- Markdown: a trailing HTML comment ``<!-- provenance: {...} -->`` (invisible when rendered);
- JSON: a top-level ``"provenance"`` key;
- PNG/PDF figures: the image metadata (see :func:`scheduler.studies.common.figures.save_figure`).

The record has no time stamp on purpose: the same inputs, configuration and code give
byte-identical outputs, so reruns and other machines can be compared file by file.

A parquet table also carries the SHA-256 of its own bytes (:data:`CHECKSUM_KEY`, see
:func:`write_parquet`), which :func:`verify_parquet` checks before the table is read: parquet has
no checksum of its own, and one flipped bit can be read as other data without an error.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl

from scheduler.core.atomic import atomic_path, atomic_write_bytes
from scheduler.core.code_hash import package_hash
from scheduler.core.errors import TableError
from scheduler.core.version import __version__

__all__ = [
    "CHECKSUM_KEY",
    "PROVENANCE_KEY",
    "provenance",
    "read_csv",
    "read_parquet",
    "read_parquet_provenance",
    "verify_parquet",
    "write_csv",
    "write_json",
    "write_markdown",
    "write_parquet",
]

PROVENANCE_KEY = "schedlab.provenance"
#: Parquet metadata key of a table's checksum: ``sha256:`` and the SHA-256 (64 lowercase hex
#: digits) of the file's bytes with those 64 digits read as ``0`` (:func:`write_parquet`).
CHECKSUM_KEY = "schedlab.checksum"
_DIGEST_PREFIX = b"sha256:"
_DIGEST_CHARS = 64
_PLACEHOLDER = b"0" * _DIGEST_CHARS
#: Bytes between the key and its value in the footer (Thrift's field header and the length).
_KEY_TO_VALUE_BYTES = 8
_HEX = re.compile(rb"[0-9a-f]{64}")
_STEP = re.compile(rb'([A-Za-z0-9_.]{1,200})"')
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
    """Write ``table`` to parquet atomically, with the provenance record and its checksum in its
    metadata.

    The checksum (:data:`CHECKSUM_KEY`, the last metadata entry) is the SHA-256 of the whole
    file with the 64 digits of the checksum itself read as ``0``: polars writes the file with
    zeros there, the digest of those bytes then takes their place (same length, so nothing
    else moves). Every other byte is covered: data pages, schema, row-group offsets, the other
    metadata. :func:`verify_parquet` recomputes it.
    """
    meta = {PROVENANCE_KEY: _dumps(record), **(extra_metadata or {})}
    meta.pop(CHECKSUM_KEY, None)
    meta[CHECKSUM_KEY] = (_DIGEST_PREFIX + _PLACEHOLDER).decode("ascii")
    with atomic_path(path) as tmp:
        table.write_parquet(tmp, metadata=meta)
        _seal(tmp)


def _seal(path: os.PathLike[str]) -> None:
    """Put the checksum of the just-written parquet file ``path`` in place of its zeros."""
    with open(path, "r+b") as handle:
        data = handle.read()
        start = _digest_start(data)
        if start is None or start < 0 or data[start : start + _DIGEST_CHARS] != _PLACEHOLDER:
            raise RuntimeError(f"{path}: polars did not write the {CHECKSUM_KEY} placeholder")
        handle.seek(start)
        handle.write(hashlib.sha256(data).hexdigest().encode("ascii"))


def _digest_start(data: bytes) -> int | None:
    """Where the checksum's 64 digits start in a parquet file's bytes; None when the file has
    no :data:`CHECKSUM_KEY` (written by an older schedlab, or by another program), -1 when it
    has the key but no readable value after it."""
    key = CHECKSUM_KEY.encode("ascii")
    # the last occurrence: the footer (key-value metadata, the checksum last) ends the file,
    # after every data page that might hold the same bytes
    found = data.rfind(key)
    if found < 0:
        return None
    after = found + len(key)
    prefix = data.find(_DIGEST_PREFIX, after, after + _KEY_TO_VALUE_BYTES + len(_DIGEST_PREFIX))
    return -1 if prefix < 0 else prefix + len(_DIGEST_PREFIX)


def verify_parquet(path: str | os.PathLike[str]) -> bool:
    """Check a parquet table against the checksum :func:`write_parquet` recorded in it.

    The file is hashed at every call (no cache keyed on its times: two writes within one tick
    of the file system's clock leave the times alike); SHA-256 runs at about 1 GB/s, a tenth of
    the time polars takes to decode the table (docs/architecture.md).

    Parameters
    ----------
    path
        A parquet file.

    Returns
    -------
    bool
        True when the checksum matched; False when the file has none (written by a schedlab
        before checksums, or by another program): it is read unchecked.

    Raises
    ------
    TableError
        The file's bytes differ from those its step wrote: "<path>: the file changed since step
        <step> wrote it: checksum mismatch (...)", the step read from its provenance record.
    OSError
        The file cannot be read (e.g. it does not exist).
    """
    with open(path, "rb") as handle:
        data = handle.read()
    start = _digest_start(data)
    if start is None:
        return False
    recorded = data[start : start + _DIGEST_CHARS] if start >= 0 else b""
    if _HEX.fullmatch(recorded) is None:
        raise TableError(
            f"{path}: the file changed since {_writer(data)} wrote it: its checksum "
            f"({CHECKSUM_KEY}) is unreadable; delete it and run the step again"
        )
    digest = hashlib.sha256()
    view = memoryview(data)
    digest.update(view[:start])
    digest.update(_PLACEHOLDER)
    digest.update(view[start + _DIGEST_CHARS :])
    found = digest.hexdigest()
    if found.encode("ascii") != recorded:
        raise TableError(
            f"{path}: the file changed since {_writer(data)} wrote it: checksum mismatch "
            f"(sha256 {recorded.decode('ascii')[:12]}… recorded, {found[:12]}… found); it is "
            "not read (it would be other data); delete it and run the step again"
        )
    return True


def _writer(data: bytes) -> str:
    """``step <name>`` of a damaged file's provenance record, read from its bytes (the footer
    may be too damaged to parse), or ``its step`` when none can be read."""
    found = data.rfind(b'"step":"')
    match = _STEP.match(data, found + len(b'"step":"')) if found >= 0 else None
    return f"step {match.group(1).decode('ascii')}" if match else "its step"


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
