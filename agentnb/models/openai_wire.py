"""The fields of an OpenAI-protocol answer, read defensively: errors in a stream, token usage,
tool calls (whole or streamed in pieces) and error bodies naming an unknown model.

What the Chat Completions and Responses readers share. A field of the wrong type is a
``ModelResponseError`` saying what the server sent; a tool call that cannot run is kept with its
``problem`` (it becomes that call's error result, and the run goes on).
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..errors import ModelResponseError
from ..events import Usage
from ..messages import ToolCall
from .base import ModelRequest
from .bounded_json import MAX_DEPTH, LongInt, kind, show
from .tokens import content_tokens, estimate_tokens


def event_error(event: str, data: Any) -> ModelResponseError | None:
    """The error a stream event carries (``{"error": ...}`` or ``event: error``), if any."""
    error = data.get("error") if isinstance(data, dict) else None
    if not error and event != "error":
        return None
    message = error.get("message") if isinstance(error, dict) else error
    if not message and isinstance(data, dict):
        message = data.get("message")
    return ModelResponseError(f"sent an error in the stream: {show(message or data, 200)}")


def number(value: Any) -> int | None:
    """A token count, or None when the server sent something that is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return int(value)
    return None


# -- fields shared by the Chat Completions and Responses answers ---------------------------------


def as_list(value: Any, what: str) -> list[Any]:
    """``value`` when it is a list ([] for null); ModelResponseError naming ``what`` otherwise."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ModelResponseError(f"sent {what} that is {kind(value)}, not a list: {show(value)}")
    return value


def arguments_text(value: Any) -> str:
    """Tool arguments as JSON text. Some servers send them as a JSON value instead of text:
    it is written back as text, so the tool's own validation says what is wrong with it."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    marks: dict[str, str] = {}

    def long_int(item: Any) -> str:
        if not isinstance(item, LongInt):
            raise TypeError(f"{type(item).__name__} is not JSON")
        mark = f"\ue000{len(marks)}\ue000"
        marks[json.dumps(mark, ensure_ascii=False)] = item.text
        return mark

    try:
        text = json.dumps(value, ensure_ascii=False, default=long_int)
    except RecursionError:  # nested past what Python can follow: sent back as it cannot be read
        return "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    for mark, digits in marks.items():
        text = text.replace(mark, digits)
    return text


OBJECT_NOTE = "the server sent the arguments as a JSON object, not as JSON text; they were used as sent"
"""The note kept on a tool call whose arguments came as an object (``ToolCall.note``)."""


def arguments_note(value: Any) -> str | None:
    """The note for arguments sent as something other than text (None for text or nothing)."""
    if value is None or isinstance(value, str):
        return None
    return (
        OBJECT_NOTE
        if isinstance(value, dict)
        else f"the server sent the arguments as {kind(value)}, not as JSON text"
    )


def name_problem(name: Any) -> str | None:
    """Why a tool call's name is unusable (None when it is a non-empty string)."""
    if isinstance(name, str) and name:
        return None
    what = "no name" if name in (None, "") else f"a name that is {kind(name)} ({show(name)})"
    return f"the server sent a tool call with {what}; a tool call names its tool with a string"


def tool_call_from(
    call_id: Any, name: Any, arguments: Any, position: int, problem: str | None = None
) -> ToolCall:
    """A ToolCall from the fields a server sent. One that cannot run (no name, a name that is
    not text, ``problem``) is kept with its ``problem``: it becomes that call's error result,
    and the run goes on."""
    problem = problem or name_problem(name)
    ident = (
        call_id
        if isinstance(call_id, str) and call_id
        else str(call_id)
        if isinstance(call_id, int)
        else f"call_{position}"
    )
    if problem is not None:
        shown = (
            name
            if isinstance(name, str) and name
            else "null"
            if name is None
            else json.dumps(name, ensure_ascii=False, default=repr)
        )
        return ToolCall(id=ident, name=shown or "null", arguments=arguments_text(arguments), problem=problem)
    return ToolCall(id=ident, name=name, arguments=arguments_text(arguments), note=arguments_note(arguments))


def usage_from(usage: Any, request: ModelRequest | None, content: str | None) -> Usage:
    """Server token counts; a marked estimate where the server sent none (or nonsense: a count
    it sent that is not a number, NaN included, is estimated and the whole usage marked so)."""
    messages = request.messages if request is not None else []
    if isinstance(usage, dict):
        sent_in = number(usage.get("prompt_tokens", usage.get("input_tokens")))
        sent_out = number(usage.get("completion_tokens", usage.get("output_tokens")))
        if sent_in is not None or sent_out is not None:
            return Usage(
                input_tokens=sent_in if sent_in is not None else _estimate_in(messages),
                output_tokens=sent_out if sent_out is not None else estimate_tokens(content),
                estimated=sent_in is None or sent_out is None,
                reasoning_tokens=reasoning_tokens(usage),
            )
    return Usage(input_tokens=_estimate_in(messages), output_tokens=estimate_tokens(content), estimated=True)


def _estimate_in(messages: list[dict[str, Any]]) -> int:
    return sum(content_tokens(m.get("content")) for m in messages)


def reasoning_tokens(usage: dict[str, Any]) -> int:
    """The reasoning tokens among the output tokens (``output_tokens_details`` on the Responses
    API, ``completion_tokens_details`` on Chat Completions); 0 when not sent."""
    for name in ("output_tokens_details", "completion_tokens_details"):
        details = usage.get(name)
        if isinstance(details, dict):
            count = number(details.get("reasoning_tokens"))
            if count is not None:
                return count
    return 0


# -- Chat Completions stream pieces and error bodies ---------------------------------------------


def add_call_delta(calls: dict[Any, dict[str, Any]], position: int, part: Any) -> dict[str, Any]:
    """Add one streamed tool-call delta to the calls assembled so far (by ``index``); returns
    the call it added to. A delta whose index is not a whole number, or whose name is not
    text, makes its call unusable: it is kept with a ``problem`` (the call's error result), the
    other calls run."""
    if not isinstance(part, dict):
        raise ModelResponseError(f"sent a tool call delta that is {kind(part)}: {show(part)}")
    index = part.get("index", position)
    problem = None
    if not isinstance(index, int) or isinstance(index, bool):
        shown = "" if index is None else f" ({show(index)})"
        problem = f"the server streamed a tool call whose index is {kind(index)}{shown}, not a whole number"
        # Its later pieces cannot be placed: a delta with an id starts another such call.
        unplaced = [key for key in calls if isinstance(key, tuple)]
        index = ("unplaced", len(unplaced)) if part.get("id") is not None or not unplaced else unplaced[-1]
    entry = calls.setdefault(
        index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
    )
    if problem is not None:
        entry["problem"] = problem
    if part.get("id") is not None:
        entry["id"] = part["id"]
    function = part.get("function")
    if function is None:
        return entry
    if not isinstance(function, dict):
        entry["problem"] = (
            f"the server streamed a tool call whose function is {kind(function)} ({show(function)}), not an object"
        )
        return entry
    name = function.get("name")
    if name is not None and not isinstance(name, str):
        entry["problem"] = name_problem(name)
        entry["function"]["bad_name"] = name
    else:
        entry["function"]["name"] += name or ""
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        entry["note"] = arguments_note(arguments)
    entry["function"]["arguments"] += arguments_text(arguments)
    return entry


def call_order(key: Any) -> tuple[int, int]:
    """Streamed calls in index order, those without a usable index after them."""
    return (1, key[1]) if isinstance(key, tuple) else (0, key)


_NOT_FOUND_CODES = frozenset({"model_not_found", "model_not_found_error", "not_found_error"})
"""Error ``code``/``type`` values that say the model does not exist (OpenAI's Responses API
answers HTTP 400 with ``code: model_not_found``)."""


def not_found_code(exc: Any) -> str | None:
    """The error body's ``code`` (else its ``type``) when it names an unknown model, else None."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    fields = [getattr(exc, "code", None), getattr(exc, "type", None)]
    if isinstance(inner, dict):
        fields += [inner.get("code"), inner.get("type")]
    for value in fields:
        if isinstance(value, str) and value.lower() in _NOT_FOUND_CODES:
            return value.lower()
    return None
