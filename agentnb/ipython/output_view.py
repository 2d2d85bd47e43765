"""A turn's typed output as the inspector shows it: the schema the model was asked for, the mode,
and each attempt in order — the answer, what was wrong with it (paths and messages), and the
message that went back to the model for another attempt.

The attempts are the turn's ``OutputChecked`` events; what they do not hold is read from the
turn's record when a view asks (``need_output``): the schema, from the first request that asked
for it (native: ``response_format`` or ``text.format``; tool: the output tools' parameters;
prompted: the ``<output_format>`` section of the system prompt), and each retry message, from the
request that followed the attempt (the output tool's result in tool mode, the user message
otherwise). What the model was sent is shown, not worked out again from the output type.

Wire names for these live here (``OUTPUT_WIRE``); ``js/outputs.js`` spells them the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..events import OutputChecked, ToolCallFinished
from . import wire

if TYPE_CHECKING:
    from ..history.records import ModelCall, TurnRecord

NEED_OUTPUT = "need_output"
"""browser → kernel: send the ``output`` of turn ``turn``."""
OUTPUT = "output"
"""kernel → browser: turn ``turn``'s output type, ``mode``, ``schemas`` and ``attempts``."""

OUTPUT_WIRE: dict[str, str] = {"NEED_OUTPUT": NEED_OUTPUT, "OUTPUT": OUTPUT}
"""Every name above, as ``js/outputs.js``'s ``OUTPUT_WIRE`` spells it (checked by a test)."""

OUTPUT_TOOL_DESCRIPTION = "Give your final answer ("
"""How an output tool's description starts (``agentnb.run.output.OutputSpec.tools``): it tells
the output tools apart from the agent's own when the model never called one."""

OUTPUT_SECTION = "output_type"
"""The source of the prompt section that asks for the schema in prompted mode."""


def output_message(record: TurnRecord) -> dict[str, Any]:
    """The ``output`` message of a turn (no attempts for a turn without an output type)."""
    attempts = record.attempts
    out: dict[str, Any] = {wire.KIND: OUTPUT, wire.TURN_INDEX: record.index, "attempts": []}
    if not attempts:
        return out
    calls = {call.index: call for call in record.model_calls}
    last = attempts[-1]
    out.update(
        type=last.output_type,
        mode=last.mode,
        validators=list(last.validators),
        schemas=_schemas(record, last.mode, calls.get(attempts[0].call)),
        attempts=[_attempt(a, calls, record) for a in attempts],
    )
    return out


def _attempt(attempt: OutputChecked, calls: Mapping[int, ModelCall], record: TurnRecord) -> dict[str, Any]:
    return {
        "attempt": attempt.attempt,
        "call": attempt.call,
        "ok": attempt.ok,
        "errors": [dict(e) for e in attempt.errors],
        "text": attempt.text,
        "output": attempt.output,
        "tool_call_id": attempt.tool_call_id,
        "retry": None if attempt.ok else _retry(attempt, calls.get(attempt.call + 1)),
    }


def _schemas(record: TurnRecord, mode: str, call: ModelCall | None) -> list[dict[str, Any]]:
    """The schemas the model was asked to answer with, each ``{"name", "schema", "from"}``."""
    payload = call.request if call is not None else {}
    if mode == "native":
        chat = (payload.get("response_format") or {}).get("json_schema") or {}
        if isinstance(chat.get("schema"), dict):
            return [{"name": chat.get("name"), "schema": chat["schema"], "from": "response_format"}]
        text = ((payload.get("text") or {}).get("format")) or {}
        if isinstance(text.get("schema"), dict):
            return [{"name": text.get("name"), "schema": text["schema"], "from": "text.format"}]
        return []
    if mode == "tool":
        used = {e.name for e in record.events if type(e) is ToolCallFinished and e.answered_by == "output"}
        found = []
        for tool in payload.get("tools") or ():
            spec = tool.get("function", tool) if isinstance(tool, dict) else {}
            name, description = spec.get("name"), str(spec.get("description") or "")
            if name in used or description.startswith(OUTPUT_TOOL_DESCRIPTION):
                found.append(
                    {"name": name, "schema": spec.get("parameters"), "from": f"the parameters of tool {name}"}
                )
        return found
    if mode == "prompted":
        prompt = record.prompt
        for section in prompt.sections if prompt is not None else ():
            if section.source.startswith(OUTPUT_SECTION):
                schema = _json_in(section.text)
                if schema is not None:
                    return [{"name": section.source, "schema": schema, "from": "the system prompt"}]
    return []


def _json_in(text: str) -> Any:
    """The JSON object a prompt section holds (from its first ``{`` to its last ``}``), or None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        return json.loads(text[start : end + 1])
    except ValueError:
        return None


def _retry(attempt: OutputChecked, following: ModelCall | None) -> str | None:
    """What went back to the model after a failed attempt: found in the request that followed
    it (None when none did: the attempts were spent)."""
    if following is None:
        return None
    payload = following.request
    messages: Sequence[Any] = payload.get("messages") or ()
    if messages:
        if attempt.tool_call_id is not None:
            for message in messages:
                if message.get("role") == "tool" and message.get("tool_call_id") == attempt.tool_call_id:
                    return _text(message.get("content"))
            return None
        last = messages[-1]
        return _text(last.get("content")) if last.get("role") == "user" else None
    for item in reversed(payload.get("input") or ()):  # the Responses API's input items
        if (
            attempt.tool_call_id is not None
            and item.get("type") == "function_call_output"
            and item.get("call_id") == attempt.tool_call_id
        ):
            return _text(item.get("output"))
        if attempt.tool_call_id is None and item.get("role") == "user":
            return _text(item.get("content"))
    return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return json.dumps(content, ensure_ascii=False)


__all__ = ["OUTPUT_WIRE", "output_message"]
