"""Small pictures of the images a turn carried: what the inspector and a turn's record show in the
place of an image, never the image itself.

A thumbnail is made from an image's bytes by Pillow when it is installed (scaled so its longest
side is ``longest`` pixels, as a JPEG, or a PNG when the image has transparency); without Pillow,
an image small enough is its own thumbnail, and a larger one has none (``Thumbnail.note`` says
its size instead). Only the image types a model takes (PNG, JPEG, GIF, WEBP, read from the bytes,
never from a name or a description) are made into pictures: anything else — an SVG, a PDF, bytes
that only claim to be an image — has no thumbnail, so nothing but a raster image ever reaches an
``<img>``.

Thumbnails are kept by hash and size (a figure shown in ten turns is scaled once), a few dozen at
a time: each is a few kilobytes.
"""

from __future__ import annotations

import io
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass

from ..messages.blobs import sha256_of
from ..messages.media import IMAGE_TYPES, image_size, sniff

LIVE_PX = 160
"""The longest side of the inspector's thumbnails."""
STATIC_PX = 80
"""The longest side of the thumbnails a saved notebook keeps (a turn's record, the inspector's
static view)."""
LIVE_ORIGINAL_BYTES = 256 * 1024
"""Without Pillow, the largest image the inspector shows as its own thumbnail."""
STATIC_ORIGINAL_BYTES = 12 * 1024
"""Without Pillow, the largest image a saved notebook keeps as its own thumbnail."""
MAX_PIXELS = 40_000_000
"""Larger images (in pixels, from their header) are not decoded for a thumbnail: the note gives
their size. Decoding one of 40 megapixels takes about 160 MB for a moment."""
KEPT = 64
"""Thumbnails kept in memory (by hash and size)."""


@dataclass(frozen=True)
class Thumbnail:
    """A small picture of an image, or why there is none."""

    data: bytes | None
    """The picture's bytes (PNG or JPEG; the image itself when it is small and Pillow is absent);
    None when there is no picture."""
    media_type: str | None
    """The picture's type (``image/png``, ``image/jpeg``, or the image's own); None without one."""
    width: int | None
    """The image's width in pixels, when known."""
    height: int | None
    """The image's height in pixels, when known."""
    note: str = ""
    """Why there is no picture (empty when there is one)."""


def thumbnail(data: bytes, longest: int = LIVE_PX, original_limit: int = LIVE_ORIGINAL_BYTES) -> Thumbnail:
    """A thumbnail of the image ``data`` whose longest side is at most ``longest`` pixels (kept by
    hash for the next call); never raises: bytes that are no image, or that Pillow cannot read,
    give a Thumbnail without a picture whose note says why."""
    key = (sha256_of(data), longest, original_limit)
    with _LOCK:
        kept = _KEPT.get(key)
        if kept is not None:
            _KEPT.move_to_end(key)
            return kept
    made = _make(data, longest, original_limit)
    with _LOCK:
        _KEPT[key] = made
        while len(_KEPT) > KEPT:
            _KEPT.popitem(last=False)
    return made


_KEPT: OrderedDict[tuple[str, int, int], Thumbnail] = OrderedDict()
_LOCK = threading.Lock()


def _make(data: bytes, longest: int, original_limit: int) -> Thumbnail:
    media_type = sniff(data)
    if media_type not in IMAGE_TYPES:
        return Thumbnail(
            None, None, None, None, f"not an image ({media_type or 'unknown bytes'}): no picture"
        )
    size = image_size(data, media_type)
    width, height = size if size is not None else (None, None)
    if width is not None and height is not None and width * height > MAX_PIXELS:
        return Thumbnail(None, None, width, height, f"{width}×{height} pixels: too large to scale here")
    small = width is not None and height is not None and max(width, height) <= longest
    try:
        import PIL.Image  # noqa: F401  (only to know whether Pillow is there)
    except ImportError:
        if small or len(data) <= original_limit:
            return Thumbnail(data, media_type, width, height)
        return Thumbnail(
            None, None, width, height, "no thumbnail: Pillow is not installed (pip install pillow)"
        )
    if small and len(data) <= original_limit:
        return Thumbnail(data, media_type, width, height)  # already small: shown as it is
    try:
        return _scaled(data, longest)
    except Exception as exc:  # a damaged image, or one Pillow cannot read: said, never raised
        return Thumbnail(None, None, width, height, f"no thumbnail: {type(exc).__name__}: {exc}"[:200])


def _scaled(data: bytes, longest: int) -> Thumbnail:
    """The image scaled down by Pillow: a JPEG, or a PNG when it has transparency."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                return Thumbnail(
                    None, None, width, height, f"{width}×{height} pixels: too large to scale here"
                )
            image.draft("RGB", (longest, longest))  # a JPEG is decoded at a fraction of its size
            transparent = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
            picture = image.convert("RGBA" if transparent else "RGB")
    if transparent and picture.getchannel("A").getextrema()[0] == 255:
        # An alpha channel every pixel leaves opaque (a matplotlib figure's): a JPEG is smaller.
        transparent, picture = False, picture.convert("RGB")
    picture.thumbnail((longest, longest), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if transparent:
        picture.save(out, format="PNG", optimize=True)
        return Thumbnail(out.getvalue(), "image/png", width, height)
    picture.save(out, format="JPEG", quality=80, optimize=True)
    return Thumbnail(out.getvalue(), "image/jpeg", width, height)


__all__ = [
    "KEPT",
    "LIVE_ORIGINAL_BYTES",
    "LIVE_PX",
    "MAX_PIXELS",
    "STATIC_ORIGINAL_BYTES",
    "STATIC_PX",
    "Thumbnail",
    "thumbnail",
]
