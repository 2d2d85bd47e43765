"""How a message's images and files go on the wire of each OpenAI API.

A request holds them by reference (``agentnb.messages.wire``); the body a server receives has
their bytes written in as ``data:`` URLs (``outgoing``), and the body recorded and shown keeps
the references.

- **User messages**: Chat Completions takes a content list of ``text``, ``image_url`` and
  ``file`` items; the Responses API the same as ``input_text``, ``input_image`` and
  ``input_file`` items.
- **Text files**: the Responses API reads any file of ``input_file``; Chat Completions' ``file``
  input takes PDFs, so a text file (``text/*``, JSON, XML, YAML) goes to it as a text part
  holding the file's text between a header and a footer naming it (as pydantic-ai does).
- **Tool results**: the Responses API takes images and files in a ``function_call_output``'s
  output list. Chat Completions takes only text in a tool message, so there the tool message
  says ``[image NAME attached below]`` and the images and files follow, after the last tool
  message of that round, in one user message (the way an image reaches a Chat Completions model
  from a tool).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..messages.wire import PART_KEY, inline


def _item_kind(item: Any) -> str | None:
    return item.get("type") if isinstance(item, dict) else None


def _label(item: dict[str, Any]) -> str:
    described = item.get(PART_KEY) or {}
    if described.get("name"):
        return str(described["name"])
    if _item_kind(item) == "file":
        return str((item.get("file") or {}).get("filename") or "file")
    return str((item.get("image_url") or {}).get("url") or "image")  # an image by URL: its URL


def _is_parts(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "tool" and message.get("content").__class__ is list


def chat_tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as Chat Completions takes them: a tool message holding images or files
    becomes its text with ``[image NAME attached below]`` in place of each, and the images and
    files of a round of tool messages follow it in one user message (the same list when no tool
    message holds any)."""
    if not any(_is_parts(m) for m in messages):
        return messages
    out: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for message in messages:
        if held and message.get("role") != "tool":
            out.append({"role": "user", "content": held})
            held = []
        if not _is_parts(message):
            out.append(message)
            continue
        lines: list[str] = []
        for item in message["content"]:
            kind = _item_kind(item)
            if kind == "text":
                lines.append(str(item.get("text", "")))
                continue
            what = "file" if kind == "file" else "image"
            lines.append(f"[{what} {_label(item)} attached below]")
            held.append(
                {
                    "type": "text",
                    "text": f"[{what} {_label(item)} from tool call {message.get('tool_call_id')}]",
                }
            )
            held.append(item)
        out.append({**message, "content": "\n".join(lines)})
    if held:
        out.append({"role": "user", "content": held})
    return out


def responses_item(item: Any, role: str) -> Any:
    """One Chat Completions content item as a Responses content item (text as ``output_text`` in
    an assistant message, ``input_text`` elsewhere)."""
    kind = _item_kind(item)
    if kind == "text":
        return {"type": "output_text" if role == "assistant" else "input_text", "text": item.get("text", "")}
    if kind == "image_url":
        image = item.get("image_url") or {}
        out: dict[str, Any] = {
            "type": "input_image",
            "image_url": image.get("url"),
            "detail": image.get("detail", "auto"),
        }
    elif kind == "file":
        file = item.get("file") or {}
        out = {"type": "input_file", "filename": file.get("filename"), "file_data": file.get("file_data")}
    else:
        return item
    if PART_KEY in item:
        out[PART_KEY] = item[PART_KEY]
    return out


def responses_content(content: Any, role: str) -> Any:
    """A message's content for the Responses API: text as it is, a content list item by item."""
    if content.__class__ is not list:
        return content
    return [responses_item(item, role) for item in content]


TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/yaml", "application/x-yaml", "application/toml"}
)
"""Media types besides ``text/*`` whose files are text."""


def is_text(media_type: str | None) -> bool:
    """Whether a file of ``media_type`` is text (sent to Chat Completions as a text part)."""
    return bool(media_type) and (str(media_type).startswith("text/") or media_type in TEXT_TYPES)


def _text_file(item: Any, parts: Mapping[str, Any]) -> Any:
    """A Chat Completions ``file`` item of a text file as a text item holding its text."""
    if _item_kind(item) != "file":
        return item
    described = item.get(PART_KEY) or {}
    part = parts.get(described.get("sha256", ""))
    if part is None or not is_text(part.media_type):
        return item
    text = part.data.decode("utf-8", errors="replace")
    name = _label(item)
    return {
        "type": "text",
        "text": f"--- file {name} ({part.media_type}) ---\n{text}\n--- end of file {name} ---",
    }


def outgoing(body: dict[str, Any], parts: Mapping[str, Any], *, chat: bool = False) -> dict[str, Any]:
    """The body a server receives: its references' bytes written in as ``data:`` URLs and the
    parts' descriptions dropped (the body itself when the request has no image or file); for
    Chat Completions (``chat``), text files as text parts."""
    if not parts:
        return body
    if chat:
        body = {
            **body,
            "messages": [
                {**m, "content": [_text_file(item, parts) for item in m["content"]]}
                if m.get("content").__class__ is list
                else m
                for m in body.get("messages") or ()
            ],
        }
    return inline(body, parts)


__all__ = ["TEXT_TYPES", "chat_tool_results", "is_text", "outgoing", "responses_content", "responses_item"]
