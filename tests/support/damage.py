"""Damaged parquet files for the fault tests: one flipped bit that polars reads as other data
without an error, or one that makes polars panic.

The search runs in child processes: some flips make polars abort the process (a failed
allocation of exabytes), which no ``try`` can catch. A child tries the candidates in order and
prints each before trying it; when it dies, the next child starts after the one that killed it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_SEARCH = r"""
import io, sys
import polars as pl
data = open(sys.argv[1], "rb").read()
want, first = sys.argv[2], int(sys.argv[3])
original = pl.read_parquet(io.BytesIO(data))
for position in range(first, len(data) - 8):
    print("try", position, flush=True)
    for bit in range(8):
        damaged = bytearray(data)
        damaged[position] ^= 1 << bit
        try:
            table = pl.read_parquet(io.BytesIO(bytes(damaged)))
        except pl.exceptions.PanicException:
            if want == "panic":
                print("found", position, bit, flush=True)
                sys.exit(0)
            continue
        except Exception:
            continue
        if (want == "silent" and table.schema == original.schema
                and table.null_count().equals(original.null_count())
                and not table.equals(original)):
            print("found", position, bit, flush=True)
            sys.exit(0)
print("none", flush=True)
"""


def find_flip(path: Path, want: str, first: int = 0) -> tuple[int, int]:
    """The first (byte position, bit) from ``first`` on whose flip polars reads as a table of
    the same schema and null counts with other values (``want="silent"``) or panics on
    (``want="panic"``)."""
    env = {**os.environ, "RUST_BACKTRACE": "0", "POLARS_MAX_THREADS": "1"}
    while True:
        done = subprocess.run(
            [sys.executable, "-c", _SEARCH, str(path), want, str(first)],
            capture_output=True, text=True, env=env, timeout=600,
        )  # fmt: skip
        tried = first
        for line in done.stdout.splitlines():
            words = line.split()
            if words[0] == "found":
                return int(words[1]), int(words[2])
            if words[0] == "none":
                raise AssertionError(f"{path}: no flipped bit makes polars {want} (from {first})")
            tried = int(words[1])
        if done.returncode == 0:
            raise AssertionError(f"{path}: the search stopped early: {done.stderr[-2000:]}")
        first = tried + 1  # that position killed the child (an abort): skip it


def footer_start(path: Path) -> int:
    """Where the footer (the file's metadata: schema, row groups, key-value metadata) of a
    parquet file starts."""
    data = path.read_bytes()
    return len(data) - 8 - int.from_bytes(data[-8:-4], "little")


def flip(path: Path, position: int, bit: int) -> None:
    """Flip one bit of ``path`` in place."""
    data = bytearray(path.read_bytes())
    data[position] ^= 1 << bit
    path.write_bytes(bytes(data))
