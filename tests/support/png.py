"""Reading back the PNG files the figures are saved to: chunks (CRC checked) and text chunks."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, payload) of every chunk of a PNG file, CRC checked."""
    assert data[:8] == PNG_SIGNATURE
    chunks = []
    offset = 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        payload = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(kind + payload) & 0xFFFFFFFF
        chunks.append((kind, payload))
        offset += 12 + length
    return chunks


def png_texts(chunks: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Key/value pairs of the tEXt chunks."""
    texts = {}
    for kind, payload in chunks:
        if kind == b"tEXt":
            key, _, value = payload.partition(b"\x00")
            texts[key.decode("latin-1")] = value.decode("latin-1")
    return texts


def png_text(path: Path) -> dict[str, str]:
    """The tEXt chunks of a PNG file (keyword -> text)."""
    return png_texts(png_chunks(Path(path).read_bytes()))
