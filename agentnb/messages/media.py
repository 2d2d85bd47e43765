"""What bytes are, read from their first bytes: the media type of an image or PDF (magic numbers)
and an image's size in pixels (from its header: PNG, JPEG, GIF, WEBP), without an image library.

The size feeds the image token estimate (``agentnb.models.tokens``) and the inspector; a header
that cannot be read gives no size rather than an error (the API reads the image, not agentnb).
"""

from __future__ import annotations

import mimetypes
import struct

IMAGE_TYPES: tuple[str, ...] = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image media types the OpenAI APIs accept as image input."""

EXTENSIONS: dict[str, str] = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "application/pdf": "pdf",
    "text/plain": "txt",
    "text/markdown": "md",
    "text/csv": "csv",
    "application/json": "json",
}
"""The file name extension of each media type agentnb names files by (others: ``mimetypes``)."""

TEXT_SUFFIXES: dict[str, str] = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".html": "text/html",
    ".xml": "application/xml",
    ".py": "text/x-python",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
}
"""Text files a path may name, by suffix (sent as the API's file input)."""


def sniff(data: bytes) -> str | None:
    """The media type of ``data`` from its magic number (PNG, JPEG, GIF, WEBP, PDF), or None."""
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    return None


def extension(media_type: str) -> str:
    """The file name extension (no dot) for ``media_type``; ``bin`` when none is known."""
    known = EXTENSIONS.get(media_type)
    if known is not None:
        return known
    guessed = mimetypes.guess_extension(media_type, strict=False)
    return guessed.lstrip(".") if guessed else "bin"


def image_size(data: bytes, media_type: str) -> tuple[int, int] | None:
    """(width, height) in pixels from the image's header, or None when it cannot be read."""
    try:
        if media_type == "image/png":
            return _png(data)
        if media_type == "image/gif":
            return struct.unpack("<HH", data[6:10]) if len(data) >= 10 else None
        if media_type == "image/jpeg":
            return _jpeg(data)
        if media_type == "image/webp":
            return _webp(data)
    except struct.error:
        return None
    return None


def _png(data: bytes) -> tuple[int, int] | None:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""JPEG start-of-frame markers (the ones that hold the size; C4, C8 and CC are other segments)."""


def _jpeg(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _SOF_MARKERS:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and data[20:21] == b"\x2f":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


__all__ = ["EXTENSIONS", "IMAGE_TYPES", "TEXT_SUFFIXES", "extension", "image_size", "sniff"]
