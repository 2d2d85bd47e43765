"""A PNG writer for 8-bit RGB and RGBA pixels, with the standard library only (``zlib``): how
an ``HxWx3`` / ``HxWx4`` array becomes an image where PIL is not installed."""

from __future__ import annotations

import struct
import zlib

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPES = {3: 2, 4: 6}
"""PNG colour type by channels: 2 is truecolour (RGB), 6 truecolour with alpha (RGBA)."""


def _chunk(kind: bytes, body: bytes) -> bytes:
    return (
        struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    )


def encode_png(pixels: bytes, width: int, height: int, channels: int) -> bytes:
    """A PNG file of ``height`` rows of ``width`` pixels of ``channels`` (3: RGB, 4: RGBA) bytes
    each, ``pixels`` row by row; ValueError when the sizes do not match."""
    if channels not in _COLOR_TYPES:
        raise ValueError(f"a PNG is written from 3 (RGB) or 4 (RGBA) channels, not {channels}")
    if width <= 0 or height <= 0:
        raise ValueError(f"an image of {width}x{height} pixels has no pixels")
    stride = width * channels
    if len(pixels) != stride * height:
        raise ValueError(f"{len(pixels)} bytes are not {height} rows of {width}x{channels} bytes")
    # Each row starts with its filter type: 0, none (the rows as they are, zlib compresses them).
    raw = b"".join(b"\x00" + pixels[row * stride : (row + 1) * stride] for row in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    return (
        _SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 6)) + _chunk(b"IEND", b"")
    )


__all__ = ["encode_png"]
