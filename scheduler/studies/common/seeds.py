"""Seeds derived from the config's seed and an item's identity, so that every random choice of a
study depends on what the item is (a log, a week, a tuple number), never on the order in which
jobs run."""

from __future__ import annotations

import zlib

__all__ = ["seed_key"]


def seed_key(*parts: int | str) -> list[int]:
    """The entropy of a ``numpy.random.SeedSequence`` for an item: integers as they are, strings
    (e.g. a log's name) as their CRC-32."""
    return [zlib.crc32(p.encode()) if isinstance(p, str) else int(p) for p in parts]
