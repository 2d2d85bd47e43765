"""The images and files a span's call carried: each part's type, media type, size and SHA-256,
never its bytes, with content capture on or off (a hash and a size say which figure was sent
without sending it to a tracing backend).

A span carries them as parallel arrays, one attribute each, so a call of many images costs a
fixed number of attributes (the SDK keeps 128 per span): the first ``LISTED`` parts are listed,
and ``agentnb.parts.count`` / ``agentnb.parts.bytes`` count them all. An image given by URL has
no bytes and is not listed (its URL is content: it is in the messages when content is captured).

- ``invoke_agent``: the parts of the user's message;
- ``chat``: every part the request sends (the history's as well as the new message's);
- ``execute_tool``: the images and files the tool's result held.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..events import ToolCallFinished
from ..sessions.part_drift import described_parts
from . import conventions as sc
from .content import request_messages

LISTED = 16
"""Parts listed one by one on a span; more are counted, not listed."""


def part_attributes(descriptions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The span attributes of parts described as ``agentnb.messages.describe`` does (type,
    sha256, media_type, size): none when there are none."""
    found = [d for d in descriptions if isinstance(d.get("sha256"), str)]
    if not found:
        return {}
    listed = found[:LISTED]
    attrs: dict[str, Any] = {
        sc.PARTS_COUNT: len(found),
        sc.PARTS_BYTES: sum(int(d.get("size") or 0) for d in found),
        sc.PARTS_TYPES: [str(d.get("type", "")) for d in listed],
        sc.PARTS_MEDIA_TYPES: [str(d.get("media_type", "")) for d in listed],
        sc.PARTS_SIZES: [int(d.get("size") or 0) for d in listed],
        sc.PARTS_SHA256: [str(d["sha256"]) for d in listed],
    }
    if len(found) > LISTED:
        attrs[sc.PARTS_OMITTED] = len(found) - LISTED
    return attrs


def request_parts(request: Mapping[str, Any] | None) -> dict[str, Any]:
    """A ``chat`` span's parts: all those its request refers to, in order."""
    return part_attributes(described_parts(request)) if request else {}


def user_parts(request: Mapping[str, Any] | None) -> dict[str, Any]:
    """An ``invoke_agent`` span's parts: those of the last user message of its first request
    (the message the run was given)."""
    if not request:
        return {}
    users = [m for m in request_messages(request) if m.get("role") == "user"]
    return part_attributes(described_parts(users[-1])) if users else {}


def tool_parts(finished: ToolCallFinished | None) -> dict[str, Any]:
    """An ``execute_tool`` span's parts: what the result held (its ``attachments``)."""
    return part_attributes(list(_dicts(finished.attachments))) if finished is not None else {}


def _dicts(items: Iterable[Any]) -> Iterable[Mapping[str, Any]]:
    return (item for item in items if isinstance(item, Mapping))


__all__ = ["LISTED", "part_attributes", "request_parts", "tool_parts", "user_parts"]
