"""A turn's images and files as a saved notebook shows them: one line of text each (kind, name,
media type, pixel size, size) and, for an image, a small thumbnail as a ``data:`` URL.

The lines are deterministic and read the same in every place that writes them (a turn's record,
the inspector's static view here and in ``js/saved.js``), so a reader sees what the agent was
shown on GitHub or nbviewer, and nbval compares them. The pictures are thumbnails
(``thumbnails.py``): a saved notebook grows by a few kilobytes per image shown, never by the image.
A description (``agentnb.messages.describe``) is all a line needs; the picture needs the bytes,
which a turn's own messages hold (the user's message, the tool messages).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..messages import FilePart, ImagePart, describe
from ..messages.media import IMAGE_TYPES
from .thumbnails import STATIC_ORIGINAL_BYTES, STATIC_PX, thumbnail

if TYPE_CHECKING:
    from .records import TurnRecord

STATIC_IMAGES = 8
"""Images a saved notebook shows as thumbnails per turn (the rest are named only)."""


def size_text(size: int) -> str:
    """A size in bytes as people read it: ``812 B``, ``23.4 KB``, ``1.0 MB`` (1 KB = 1024 bytes).
    Rounded half up in integers, as ``js/format.js`` ``sizeText`` does, so both write the same."""
    if size < 1024:
        return f"{size} B"
    unit, name = (1024, "KB") if size < 1024 * 1024 else (1024 * 1024, "MB")
    tenths = (size * 10 + unit // 2) // unit
    return f"{tenths // 10}.{tenths % 10} {name}"


def part_line(part: Mapping[str, Any]) -> str:
    """One image or file in one line, from its description: ``image chart.png · image/png ·
    640×480 · 23.4 KB``, ``file report.pdf · application/pdf · 52.1 KB``, ``image
    https://... (by URL)``."""
    kind = "file" if part.get("type") == "file" else "image"
    if part.get("url") is not None and part.get("sha256") is None:
        return f"image {part['url']} (by URL)"
    bits = [f"{kind} {part.get('name') or str(part.get('sha256') or '')[:12]}"]
    if part.get("media_type"):
        bits.append(str(part["media_type"]))
    if part.get("width") is not None and part.get("height") is not None:
        bits.append(f"{part['width']}×{part['height']}")
    if type(part.get("size")) is int:
        bits.append(size_text(part["size"]))
    return " · ".join(bits)


def user_parts(turn: TurnRecord) -> list[dict[str, Any]]:
    """The images and files of the turn's user message, described (empty for a text message)."""
    message = next((m for m in turn.messages if m.role == "user"), None)
    if message is None:
        return []
    return [describe(p) for p in message.attachments if isinstance(p, (ImagePart, FilePart))]


def turn_bytes(turns: Iterable[TurnRecord]) -> dict[str, bytes]:
    """The bytes of every image and file the turns' messages hold, by hash."""
    found: dict[str, bytes] = {}
    for turn in turns:
        for message in turn.messages:
            for part in message.attachments:
                if isinstance(part, (ImagePart, FilePart)) and part.data is not None:
                    found[part.sha256 or ""] = part.data
    return found


def static_picture(part: Mapping[str, Any], found: Mapping[str, bytes]) -> str | None:
    """The ``data:`` URL of a saved notebook's thumbnail of ``part``, or None (a file, an image by
    URL, bytes not held, or no picture could be made)."""
    if part.get("type") != "image":
        return None
    data = found.get(str(part.get("sha256")))
    if data is None:
        return None
    picture = thumbnail(data, STATIC_PX, STATIC_ORIGINAL_BYTES)
    if picture.data is None or picture.media_type not in IMAGE_TYPES:
        return None
    return f"data:{picture.media_type};base64,{base64.b64encode(picture.data).decode('ascii')}"


_FIGURE = (
    "display:inline-block;vertical-align:top;margin:2px 12px 2px 0;max-width:26em;"
    "font-size:12px;color:var(--jp-ui-font-color2,var(--vscode-descriptionForeground,#555))"
)

PICTURE_URL = re.compile(r"data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}")
"""The only pictures a saved notebook's static views hold: raster images as base64 data URLs."""
MAX_PICTURE_URL = 200_000
"""The longest picture URL a static view takes from a notebook's metadata (a thumbnail is a few KB)."""


def figure_html(kind: str, line: str, url: str | None = None) -> str:
    """One image or file as a small figure: its picture (``url``, used only when it is a data URL
    of a raster image, see ``PICTURE_URL``) above its line, escaped."""
    picture = ""
    if url is not None and len(url) <= MAX_PICTURE_URL and PICTURE_URL.fullmatch(url):
        picture = (
            f'<img src="{url}" alt="{html.escape(line, quote=True)}" '
            f'style="display:block;max-width:{STATIC_PX}px;max-height:{STATIC_PX}px">'
        )
    return (
        f'<figure class="agentnb-part" data-kind="{"file" if kind == "file" else "image"}" style="{_FIGURE}">'
        f'{picture}<figcaption style="overflow-wrap:anywhere">{html.escape(line, quote=True)}</figcaption></figure>'
    )


def static_figures(images: Any) -> str:
    """The thumbnails of an inspector's static view (``[{"line", "url"}]``, as the kernel's snapshot
    carries them and ``js/saved.js`` writes them into a notebook's metadata) as a row of figures;
    anything else in the list is left out, and at most ``STATIC_IMAGES`` are shown."""
    if not isinstance(images, (list, tuple)):
        return ""
    shown = [i for i in images if isinstance(i, Mapping) and isinstance(i.get("line"), str)]
    figures = "".join(
        figure_html("image", i["line"], i["url"] if isinstance(i.get("url"), str) else None)
        for i in shown[:STATIC_IMAGES]
    )
    return f'<div class="agentnb-parts">{figures}</div>' if figures else ""


def figures_html(parts: Sequence[Mapping[str, Any]], found: Mapping[str, bytes]) -> str:
    """The parts as a row of small figures: a thumbnail (for an image whose bytes are held, up to
    ``STATIC_IMAGES``) above its line."""
    items = [
        figure_html(
            str(part.get("type")), part_line(part), static_picture(part, found) if n < STATIC_IMAGES else None
        )
        for n, part in enumerate(parts)
    ]
    return f'<div class="agentnb-parts">{"".join(items)}</div>' if items else ""


__all__ = [
    "MAX_PICTURE_URL",
    "PICTURE_URL",
    "STATIC_IMAGES",
    "figure_html",
    "figures_html",
    "static_figures",
    "part_line",
    "size_text",
    "static_picture",
    "turn_bytes",
    "user_parts",
]
