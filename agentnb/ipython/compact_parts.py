"""The compact form of the images and files a model request carries: what the Prompt tab shows
beside the user's message.

A request refers to each image's or file's bytes by hash and keeps the part's description beside
it (``agentnb.messages.wire.PART_KEY``), in both wire forms: Chat Completions ``messages`` and the
Responses API's ``input`` items. An image given by URL has no description: it is named by its URL
(which the inspector never loads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..messages.wire import PART_KEY


def item_part(item: Any) -> dict[str, Any] | None:
    """The description of one content item that is an image or a file, or None."""
    if not isinstance(item, Mapping):
        return None
    described = item.get(PART_KEY)
    if isinstance(described, Mapping):
        return dict(described)
    kind = item.get("type")
    if kind in ("image_url", "input_image"):
        image = item.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            return {"type": "image", "url": url}
    return None


def request_parts(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The images and files of the last user message of a request (either wire form), described."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        messages = request.get("input")
    if not isinstance(messages, list):
        return []
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            if not isinstance(content, list):
                return []
            return [part for part in map(item_part, content) if part is not None]
    return []


__all__ = ["item_part", "request_parts"]
