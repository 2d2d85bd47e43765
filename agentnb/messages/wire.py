"""Parts in the OpenAI Chat Completions wire format, by reference: what every model receives.

A request (``ModelRequest``) holds each image's or file's bytes as a reference,
``agentnb-blob:<sha256>``, with the part's description (hash, media type, size, name, pixel size)
under ``"part"`` beside it; the bytes travel in ``ModelRequest.parts``. An image given by URL is
its URL, with no description. So a request stays small
and comparable (a recording matches a replayed request by hash), and what a scripted model or
the inspector sees names each part by its hash and size. Only the OpenAI models, when they send
a request, write the bytes in as ``data:`` URLs and drop the descriptions (``inline``).

Content items (Chat Completions):
``{"type": "text", "text": ...}``,
``{"type": "image_url", "image_url": {"url": <reference, data: URL or http(s) URL>, "detail": ...}}``,
``{"type": "file", "file": {"filename": ..., "file_data": <reference or data: URL>}}``.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import MissingBlobError, PartError
from .parts import BinaryPart, FilePart, ImagePart, Part, TextPart, data_url_bytes, describe

BLOB_SCHEME = "agentnb-blob:"
"""How a request refers to a part's bytes: ``agentnb-blob:<sha256>``."""
PART_KEY = "part"
"""The key, beside a content item, of the part's description (never sent)."""


def reference(part: BinaryPart) -> str:
    """``agentnb-blob:<sha256>`` for ``part``."""
    return f"{BLOB_SCHEME}{part.sha256}"


def data_url(part: BinaryPart) -> str:
    """``part``'s bytes as a ``data:`` URL (what the API receives)."""
    assert part.data is not None
    return f"data:{part.media_type};base64,{base64.b64encode(part.data).decode('ascii')}"


def content_item(part: Part) -> dict[str, Any]:
    """One part as a Chat Completions content item, by reference."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        if part.data is None:  # by URL: sent as it is, nothing to describe or write in
            return {"type": "image_url", "image_url": {"url": part.url, "detail": part.detail}}
        return {
            "type": "image_url",
            "image_url": {"url": reference(part), "detail": part.detail},
            PART_KEY: describe(part),
        }
    return {
        "type": "file",
        "file": {"filename": part.label, "file_data": reference(part)},
        PART_KEY: describe(part),
    }


def content_items(parts: Iterable[Part]) -> list[dict[str, Any]]:
    """Parts as a Chat Completions content list, by reference."""
    return [content_item(part) for part in parts]


def _known(ref: str, known: Mapping[str, BinaryPart] | None) -> BinaryPart:
    sha = ref[len(BLOB_SCHEME) :]
    part = (known or {}).get(sha)
    if part is None:
        raise MissingBlobError(
            f"the message refers to blob {sha}, which is not among the parts of this conversation "
            f"({len(known or {})} known); give the part itself (Image(...), File(...)) or its data: URL"
        )
    return part


def part_from_item(item: Any, known: Mapping[str, BinaryPart] | None = None) -> Part:
    """A part from a Chat Completions content item (a ``data:`` URL decoded, a reference looked up
    among ``known`` parts by hash); PartError for an item that is no part."""
    if not isinstance(item, dict):
        raise PartError(
            f"a content item must be a dict like {{'type': 'text', 'text': ...}}; got {item!r:.80}"
        )
    kind = item.get("type")
    described = item.get(PART_KEY) or {}
    detail: Any
    if kind in ("text", "input_text", "output_text"):
        return TextPart(item.get("text", ""))
    if kind == "image_url":
        image = item.get("image_url")
        url, detail = (  # an unknown detail is ImagePart's error
            (image.get("url"), image.get("detail", "auto")) if isinstance(image, dict) else (image, "auto")
        )
        if not isinstance(url, str):
            raise PartError(f"an image_url item needs a url; got {item!r:.80}")
        if url.startswith(BLOB_SCHEME):
            found = _known(url, known)
            if not isinstance(found, ImagePart):
                raise PartError(f"the image item refers to {url}, which is a file, not an image")
            return ImagePart(
                data=found.data,
                media_type=found.media_type,
                detail=detail,
                name=described.get("name") or found.name,
            )
        return ImagePart(url=url, detail=detail, name=described.get("name"))
    if kind == "file":
        file: dict[str, Any] = item["file"] if isinstance(item.get("file"), dict) else {}
        data = file.get("file_data")
        name = file.get("filename")
        if isinstance(data, str) and data.startswith(BLOB_SCHEME):
            found = _known(data, known)
            if not isinstance(found, FilePart):
                raise PartError(f"the file item refers to {data}, which is an image, not a file")
            return FilePart(found.data, found.media_type, name or found.label)
        if isinstance(data, str) and data.startswith("data:"):
            raw, media_type = data_url_bytes(data)
            return FilePart(raw, media_type, name)
        raise PartError(f"a file item needs file_data (a data: URL); got {str(item)[:80]}")
    raise PartError(f"a content item of unknown type {kind!r:.40} (text, image_url or file)")


def parts_from_items(items: Sequence[Any], known: Mapping[str, BinaryPart] | None = None) -> tuple[Part, ...]:
    """Parts from a Chat Completions content list (see ``part_from_item``)."""
    return tuple(part_from_item(item, known) for item in items)


def inline(value: Any, parts: Mapping[str, BinaryPart]) -> Any:
    """``value`` (a request body) with every ``agentnb-blob:`` reference replaced by its part's
    ``data:`` URL and every part description dropped: the body as the API receives it. A value
    with no reference comes back equal (dicts and lists copied)."""
    if isinstance(value, dict):
        return {k: inline(v, parts) for k, v in value.items() if k != PART_KEY}
    if isinstance(value, list):
        return [inline(v, parts) for v in value]
    if isinstance(value, str) and value.startswith(BLOB_SCHEME):
        return data_url(_known(value, parts))
    return value


def parts_by_hash(messages: Iterable[Any]) -> dict[str, BinaryPart]:
    """The images and files (given as bytes) of ``messages``, by hash: what a request's
    references name."""
    found: dict[str, BinaryPart] = {}
    for message in messages:
        content = message.content
        if content is None or content.__class__ is str:
            continue
        for part in content:
            if isinstance(part, FilePart) or (isinstance(part, ImagePart) and part.data is not None):
                found[part.sha256 or ""] = part
    return found


def text_of(content: Any) -> str | None:
    """The text of a wire message's content: the str itself, or its text items joined by
    newlines (None for no content)."""
    if content is None or isinstance(content, str):
        return content
    return "\n".join(
        item.get("text", "")
        for item in content
        if isinstance(item, dict) and item.get("type") in ("text", "input_text", "output_text")
    )


__all__ = [
    "BLOB_SCHEME",
    "PART_KEY",
    "content_item",
    "content_items",
    "data_url",
    "inline",
    "part_from_item",
    "parts_by_hash",
    "parts_from_items",
    "reference",
    "text_of",
]
