"""The JSON-safe, compact forms of the core's records that the inspector sends to the browser:
events, turn summaries, change summaries (by ``agentnb.diff``'s rule, values as short text)."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from ..diff import Change
from ..events import (
    ContextRetrieved,
    Event,
    HookStep,
    ModelRequested,
    ModelResponded,
    PromptRendered,
    PromptSection,
    RunFailed,
    RunFinished,
    RunStarted,
    StateCause,
    StateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from ..render import value_text

if TYPE_CHECKING:
    from ..agent import Agent
    from ..history import TurnChanges, TurnRecord

SUMMARY_TEXT = 300
"""Characters of a turn's message and answer kept in its summary row."""

CHANGE_TEXT = 120
"""Characters of the old and new value shown for one state change."""

MAX_CHANGED_PATHS = 200
"""Changed paths sent in one change summary; the rest are only counted (``more``)."""



def model_info(agent: Agent) -> dict[str, Any]:
    """Label, kind and origin of the agent's model, for the header."""
    model = agent.model
    origin = getattr(model, "origin", None)
    return {
        "label": str(model.label),
        "kind": str(getattr(model, "kind", "model")),
        "origin": None if origin is None else str(origin),
    }


def json_text(value: Any) -> str:
    """``value`` as JSON text, with anything JSON cannot hold replaced: NaN and infinities by
    strings, other objects by their ``repr`` (the browser's JSON parser rejects NaN)."""
    return to_json(value, fallback=repr, inf_nan_mode="strings").decode()


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (see ``json_text``)."""
    return json.loads(json_text(value))


def turn_state(record: TurnRecord, agent: Agent) -> dict[str, Any]:
    """The state a turn ended with (the live state while it runs)."""
    if record.status == "running":
        return copy.deepcopy(agent.session_state)
    return record.state_after


def turn_summary(record: TurnRecord) -> dict[str, Any]:
    """One row of the History tab."""
    context = record.context
    return {
        "turn": record.index,
        "message": record.message[:SUMMARY_TEXT],
        "status": record.status,
        "content": None if record.content is None else record.content[:SUMMARY_TEXT],
        "error": record.error,
        "model": record.model,
        "usage": compact_usage(record.usage),
        "duration_ms": record.duration_ms,
        "tool_calls": len(record.tool_calls),
        "replayed": record.replayed,
        # Both counts, so the Context tab of a turn not loaded yet can be labelled or greyed.
        "context": len(context),
        "context_blocks": sum(len(c.blocks) for c in context),
    }


def compact_change(change: Change) -> dict[str, Any]:
    """One state change as the browser shows it: old and new as short JSON text."""
    return {
        "path": change.path,
        "key": change.key,
        "how": change.how,
        "authors": list(change.authors),
        "old": None if change.how == "added" else preview_text(change.old),
        "new": None if change.how == "removed" else preview_text(change.new),
    }


def preview_text(value: Any, limit: int = CHANGE_TEXT) -> str:
    """``agentnb.render.value_text`` of a value, encoding only the part that is shown: the old
    value of a key holding a large state costs the preview, not the whole value."""
    encoder = json.JSONEncoder(ensure_ascii=False)
    chunks: list[str] = []
    size = 0
    try:
        # iterencode (not one-shot) is lazy: stop as soon as the preview is full.
        for chunk in encoder.iterencode(value):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                break
    except (TypeError, ValueError):  # not plain JSON (an object, a cycle): value_text's fallbacks
        return value_text(value, limit)
    text = "".join(chunks)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compact_changes(changes: TurnChanges) -> dict[str, Any]:
    """A turn's change summary for the wire: every key, and the first ``MAX_CHANGED_PATHS`` paths."""
    return {
        "keys": [compact_change(c) for c in changes.keys],
        "paths": [compact_change(c) for c in changes.paths[:MAX_CHANGED_PATHS]],
        "more": max(0, len(changes.paths) - MAX_CHANGED_PATHS),
    }


def compact_usage(usage: Usage) -> dict[str, Any]:
    return {"input": usage.input_tokens, "output": usage.output_tokens, "estimated": usage.estimated}


def compact_section(section: PromptSection) -> dict[str, Any]:
    return {
        "source": section.source,
        "text": section.text,
        "start": section.start,
        "placeholders": [
            {"name": p.name, "resolved": p.resolved, "source": p.source, "start": p.start, "end": p.end}
            for p in section.placeholders
        ],
    }


def compact_hook(step: HookStep) -> dict[str, Any]:
    return {
        "name": step.name,
        "arguments": step.arguments,
        "outcome": step.outcome,
        "result": step.result,
        "error": step.error,
        "duration_ms": step.duration_ms,
    }


def compact_cause(cause: StateCause) -> dict[str, Any]:
    return {
        "kind": cause.kind,
        "name": cause.name,
        "tool_call_id": cause.tool_call_id,
        "handler": cause.handler,
        "label": cause.label(),
    }


def compact_context(event: ContextRetrieved) -> dict[str, Any]:
    # ``rendered`` is left out: it is the blocks' text again, and the browser rebuilds it.
    return {
        "label": event.label,
        "provider": event.provider,
        "query": event.query,
        "top_k": event.top_k,
        "via": event.via,
        "blocks": [{"text": b.text, "score": b.score, "source": b.source, "metadata": b.metadata} for b in event.blocks],
        "duration_ms": event.duration_ms,
    }


def compact_event(event: Event) -> dict[str, Any]:
    """The part of an event the browser shows. A model request's payload is left out (it is
    fetched when the Request tab opens); a state change keeps only its patch and author."""
    body: dict[str, Any]
    if isinstance(event, RunStarted):
        body = {"message": event.message, "model": event.model, "at": event.at}
    elif isinstance(event, PromptRendered):
        body = {
            "sections": [compact_section(s) for s in event.sections],
            "user_prompt": event.user_prompt,
            "notes": list(event.notes),
        }
    elif isinstance(event, ModelRequested):
        request = event.request
        body = {
            "call": event.call,
            "at": event.at,
            "messages": len(request.get("messages") or ()),
            "tools": len(request.get("tools") or ()),
        }
    elif isinstance(event, TextDelta):
        body = {"call": event.call, "text": event.text}
    elif isinstance(event, ModelResponded):
        body = {
            "call": event.call,
            "content": event.content,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in event.tool_calls],
            "finish_reason": event.finish_reason,
            "usage": compact_usage(event.usage),
            "duration_ms": event.duration_ms,
        }
    elif isinstance(event, ToolCallStarted):
        body = {"call": event.call, "id": event.tool_call_id, "name": event.name, "arguments": event.arguments}
    elif isinstance(event, ToolCallFinished):
        body = {
            "call": event.call,
            "id": event.tool_call_id,
            "name": event.name,
            "arguments": event.arguments,
            "result": event.result,
            "error": event.error,
            "error_kind": event.error_kind,
            "hooks": [compact_hook(h) for h in event.hooks],
            "answered_by": event.answered_by,
            "changed_keys": list(event.changed_keys),
            "duration_ms": event.duration_ms,
        }
    elif isinstance(event, StateChanged):
        body = {"patch": list(event.patch), "cause": compact_cause(event.cause)}
    elif isinstance(event, RunFinished):
        body = {
            "content": event.content,
            "usage": compact_usage(event.usage),
            "duration_ms": event.duration_ms,
            "model_calls": event.model_calls,
            "tool_calls": event.tool_calls,
        }
    elif isinstance(event, ContextRetrieved):
        body = compact_context(event)
    elif isinstance(event, RunFailed):
        body = {
            "error": event.error,
            "error_type": event.error_type,
            "usage": compact_usage(event.usage),
            "duration_ms": event.duration_ms,
        }
    else:
        body = {}
    body["kind"] = event.kind
    return body


__all__ = [
    "compact_changes",
    "compact_event",
    "json_text",
    "jsonable",
    "model_info",
    "turn_state",
    "turn_summary",
]
