"""Content for span attributes: messages in the GenAI parts schema and OpenInference's flattened
lists, JSON text, and what must never leave (credentials).

Every function here is pure: it takes recorded data and returns attribute values.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..messages import parse_arguments
from . import conventions as sc

SECRET_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "authorization",
        "headers",
        "extra_headers",
        "default_headers",
        "password",
        "token",
        "secret",
    }
)
"""Keys dropped from every payload before it becomes an attribute, whatever the content setting."""

_SECRET_VALUE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,})")


def capture_from_env() -> bool:
    """Whether ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for content on spans
    (true/1/yes, or the newer SPAN_ONLY / SPAN_AND_EVENT)."""
    value = os.environ.get(sc.CONTENT_ENV, "").strip().lower()
    return value in ("1", "true", "yes", "on", "span_only", "span_and_event")


def scrub(value: Any) -> Any:
    """``value`` without credential-looking keys or strings (``sk-…``, ``Bearer …``)."""
    if isinstance(value, Mapping):
        return {k: scrub(v) for k, v in value.items() if str(k).lower().replace("-", "_") not in SECRET_KEYS}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return _SECRET_VALUE.sub("[redacted]", value)
    return value


_JSON_TYPES = ((bool, "boolean"), (int, "number"), (float, "number"), (str, "string"), (Mapping, "object"))


def described(value: Any) -> dict[str, Any]:
    """What a value is without what it says: its JSON type and its size (characters of a string,
    items of an array or object)."""
    if value is None:
        return {"type": "null"}
    if isinstance(value, (list, tuple)):
        return {"type": "array", "size": len(value)}
    kind = next((name for cls, name in _JSON_TYPES if isinstance(value, cls)), type(value).__name__)
    return {"type": kind, "size": len(value)} if isinstance(value, (str, Mapping)) else {"type": kind}


_RAISED = re.compile(r"\(([A-Za-z_][\w.]*) raised by (?:tool|hook) '[^']*'\)\s*$")
_TYPE_FIRST = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt)): ")


def error_summary(error: str | None, kind: str | None = None) -> str:
    """An error without its message (which is content: it may quote arguments, state or
    secrets): the exception's type when the text names it, else the error kind."""
    text = error or ""
    found = _RAISED.search(text) or _TYPE_FIRST.match(text)
    name = found.group(1) if found else None
    if kind and name:
        return f"{kind}: {name}"
    return name or kind or "error"


def to_json(value: Any) -> str:
    """Compact JSON text of ``value`` (scrubbed), anything not JSON-able as its ``str``."""
    return json.dumps(scrub(value), ensure_ascii=False, default=str, separators=(",", ":"))


def text_of(content: Any) -> str:
    """The text of an OpenAI message's content (a string or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content)
    return str(content)


def request_messages(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's messages as OpenAI chat messages (the Responses API's ``instructions`` and
    ``input`` items are mapped onto the same shape)."""
    if isinstance(request.get("messages"), list):
        return [dict(m) for m in request["messages"] if isinstance(m, Mapping)]
    out: list[dict[str, Any]] = []
    if request.get("instructions"):
        out.append({"role": "system", "content": request["instructions"]})
    items = request.get("input")
    if isinstance(items, str):
        return [*out, {"role": "user", "content": items}]
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "function_call":
            call = {
                "id": item.get("call_id"),
                "function": {"name": item.get("name"), "arguments": item.get("arguments")},
            }
            out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif item.get("type") == "function_call_output":
            out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")})
        elif "role" in item:
            out.append({"role": item["role"], "content": item.get("content")})
    return out


def genai_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One OpenAI chat message in the GenAI parts schema."""
    role = message.get("role", "user")
    parts: list[dict[str, Any]] = []
    text = text_of(message.get("content"))
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": message.get("tool_call_id"), "response": text})
    elif text:
        parts.append({"type": "text", "content": text})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": _arguments(function.get("arguments")),
            }
        )
    return {"role": role, "parts": parts}


def genai_output(
    content: str | None, tool_calls: Iterable[Any], finish_reason: str | None
) -> list[dict[str, Any]]:
    """A model's answer as the GenAI output-messages schema (one assistant message)."""
    parts: list[dict[str, Any]] = [{"type": "text", "content": content}] if content else []
    parts += [
        {"type": "tool_call", "id": c.id, "name": c.name, "arguments": _arguments(c.arguments)}
        for c in tool_calls
    ]
    reason = finish_reason or "stop"
    return [
        {"role": "assistant", "parts": parts, "finish_reason": sc.FINISH_REASON_VALUES.get(reason, reason)}
    ]


def _arguments(arguments: Any) -> Any:
    if isinstance(arguments, str) and arguments.strip():
        try:
            return parse_arguments(arguments)
        except ValueError:
            return arguments  # arguments the executor could not read stay as the model wrote them
    return arguments


def oi_messages(prefix: str, messages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """OpenInference's flattened ``{prefix}.{i}.message.*`` attributes for chat messages."""
    out: dict[str, Any] = {}
    for i, message in enumerate(messages):
        key = f"{prefix}.{i}.message"
        out[f"{key}.role"] = str(message.get("role", "user"))
        text = text_of(message.get("content"))
        if text:
            out[f"{key}.content"] = scrub(text)
        if message.get("tool_call_id"):
            out[f"{key}.tool_call_id"] = str(message["tool_call_id"])
        for j, call in enumerate(message.get("tool_calls") or ()):
            function = call.get("function") or {}
            out[f"{key}.tool_calls.{j}.tool_call.id"] = str(call.get("id") or "")
            out[f"{key}.tool_calls.{j}.tool_call.function.name"] = str(function.get("name") or "")
            out[f"{key}.tool_calls.{j}.tool_call.function.arguments"] = scrub(
                str(function.get("arguments") or "")
            )
    return out


def oi_output(content: str | None, tool_calls: Iterable[Any]) -> dict[str, Any]:
    """The answer as OpenInference's ``llm.output_messages.0.message.*``."""
    wire = [{"id": c.id, "function": {"name": c.name, "arguments": c.arguments}} for c in tool_calls]
    return oi_messages(sc.OI_OUTPUT_MESSAGES, [{"role": "assistant", "content": content, "tool_calls": wire}])


__all__ = [
    "capture_from_env",
    "described",
    "error_summary",
    "genai_message",
    "genai_output",
    "oi_messages",
    "oi_output",
    "request_messages",
    "scrub",
    "text_of",
    "to_json",
]
