"""What the model sees of an MCP tool result or resource, and one-line error text."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any

import mcp_types as types

from ..messages import ImagePart
from ..tools.result import ToolResult


def tool_result_value(result: types.CallToolResult) -> Any:
    """A successful result as agentnb returns it: the structured content (a dict, shown to the
    model as JSON) when the server gave one; else, when it holds images, its items as a
    ``ToolResult`` (text, and each image the model sees as an image, as a Python tool's); else the
    text of the content items joined."""
    if result.structured_content is not None:
        return result.structured_content
    if any(isinstance(item, types.ImageContent) for item in result.content):
        return ToolResult(content=[_image_or_text(item) for item in result.content])
    return content_text(result.content)


def _image_or_text(item: Any) -> Any:
    """An image item as an ImagePart (its bytes decoded), any other item (or an image of a kind
    the API does not take) as its text."""
    if isinstance(item, types.ImageContent):
        try:
            return ImagePart(base64.b64decode(item.data, validate=True), media_type=item.mime_type)
        except (binascii.Error, ValueError):  # PartError is a ValueError: a kind the API does not take
            pass
    return content_item_text(item)


def content_text(items: Iterable[Any]) -> str:
    """Text items joined by blank lines; images, audio and resources summarised in brackets."""
    return "\n\n".join(part for part in (content_item_text(item) for item in items) if part)


def content_item_text(item: Any) -> str:
    """One content item as text: its text, or a bracketed summary of what it is."""
    if isinstance(item, types.TextContent):
        return item.text
    if isinstance(item, types.ImageContent):
        return f"[image {item.mime_type}, {_size(item.data)}]"
    if isinstance(item, types.AudioContent):
        return f"[audio {item.mime_type}, {_size(item.data)}]"
    if isinstance(item, types.ResourceLink):
        described = f": {item.description}" if item.description else ""
        return f"[resource link {item.uri} ({item.name}){described}]"
    if isinstance(item, types.EmbeddedResource):
        return resource_contents_text(item.resource)
    return f"[{getattr(item, 'type', type(item).__name__)} content]"


def resource_contents_text(contents: Any) -> str:
    """A resource's text, or a summary of a binary one."""
    if isinstance(contents, types.TextResourceContents):
        return contents.text
    mime = getattr(contents, "mime_type", None) or "application/octet-stream"
    return f"[binary resource {contents.uri}, {mime}, {_size(getattr(contents, 'blob', ''))}]"


def _size(data: str) -> str:
    """The decoded size of base64 ``data``, for a summary line."""
    try:
        n = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        n = len(data)
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} kB"


def flat(text: str, limit: int = 300) -> str:
    """``text`` on one line (newlines become `` | ``), cut to ``limit`` characters."""
    line = " | ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def leaf_error(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups; cancellations only as a last
    resort, since a failing task cancels its siblings."""
    found: list[BaseException] = []

    def walk(e: BaseException) -> None:
        children = getattr(e, "exceptions", None)
        if isinstance(children, tuple):
            for child in children:
                walk(child)
        else:
            found.append(e)

    walk(exc)
    real = [e for e in found if isinstance(e, Exception)]
    return (real or found or [exc])[0]


def describe_error(exc: BaseException) -> str:
    """``Type: message`` on one line (the SDK's MCPError already reads well on its own)."""
    message = flat(str(exc)) or type(exc).__name__
    if type(exc).__name__ == "MCPError":
        return message
    return f"{type(exc).__name__}: {message}" if message != type(exc).__name__ else message
