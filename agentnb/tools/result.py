"""What the model reads of a tool's return value: text, or text with images and files.

A tool returns an image by returning an ``ImagePart`` (``Image(fig)``), a matplotlib figure or a
PIL image, a list holding one, or ``ToolResult(content=[...])`` (anything ``to_parts`` takes:
text, figures, arrays, bytes, paths, frames). Each API receives it its own way
(``agentnb.models.attachments``): the Responses API in the function output, Chat Completions in
a user message after the tool message.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import FilePart, ImagePart, Part, TextPart, to_parts
from ..messages.limits import check_message_size


@dataclass(frozen=True)
class ToolResult:
    """A tool's result of several parts: ``ToolResult(content=["the chart", fig])``."""

    content: Sequence[Any]
    """Text, images and files, in order: anything ``agentnb.messages.to_parts`` converts."""


def result_text(value: Any) -> str:
    """What the model sees of a tool's return value (as text)."""
    if isinstance(value, str):
        return value
    pydantic = sys.modules.get("pydantic")  # a pydantic model can only exist once pydantic is loaded
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    elif callable(getattr(value, "to_dict", None)) and not isinstance(value, type):
        value = value.to_dict()  # Haystack's rule: an object that serialises itself is sent as that
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _is_picture(value: Any) -> bool:
    """A matplotlib figure or a PIL image: a value that can only be meant as an image."""
    module = type(value).__module__ or ""
    return (module.startswith("matplotlib.") and hasattr(value, "savefig")) or (
        module.startswith("PIL.") and hasattr(value, "mode") and hasattr(value, "save")
    )


def _binary(value: Any) -> bool:
    return isinstance(value, (ImagePart, FilePart)) or _is_picture(value)


def result_parts(value: Any) -> tuple[str, tuple[Part, ...]]:
    """A tool's return value as (the text the record keeps, the parts the model reads): no parts
    for a plain result (its text is ``result_text``); for one with images or files, its text
    parts joined (or, when it has none, a line naming each image and file) and all its parts."""
    if value.__class__ is str:  # the common case, without another call
        return value, ()
    if isinstance(value, ToolResult):
        parts = to_parts(value.content)
    elif isinstance(value, (list, tuple)):
        if not any(_binary(item) for item in value):
            return result_text(value), ()
        parts = to_parts([item if _binary(item) else result_text(item) for item in value])
    elif isinstance(value, (ImagePart, FilePart)) or _is_picture(value):
        parts = to_parts([value])
    else:
        return result_text(value), ()
    if not any(not isinstance(p, TextPart) for p in parts):
        return "\n".join(p.text for p in parts if isinstance(p, TextPart)), ()
    check_message_size(parts)  # (too much for one message: the call's error, for the model to read)
    text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
    named = "\n".join(f"[{p.kind} {p.label}]" for p in parts if not isinstance(p, TextPart))
    return text or named, parts


__all__ = ["ToolResult", "result_parts", "result_text"]
