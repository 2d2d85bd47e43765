"""The compact form of each kind of event: the JSON-safe part of it the inspector sends to the
browser (a model request's payload and a state change's states are left out: they are sent when
asked for)."""

from __future__ import annotations

from typing import Any

from ..events import (
    ContextRetrieved,
    Event,
    HookStep,
    ModelRequested,
    ModelResponded,
    OutputChecked,
    PromptRendered,
    RunFailed,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StateCause,
    StateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from .compact_parts import request_parts
from .compact_prompt import compact_prompt


def compact_usage(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "estimated": usage.estimated,
    }
    if usage.reasoning_tokens:  # a reasoning model's: of the output, the tokens spent thinking
        out["reasoning"] = usage.reasoning_tokens
    return out


def compact_hook(step: HookStep) -> dict[str, Any]:
    return {
        "name": step.name,
        "arguments": step.arguments,
        "outcome": step.outcome,
        "result": step.result,
        "error": step.error,
        "duration_ms": step.duration_ms,
        "passed_arguments": step.passed_arguments,
        "passed_error": step.passed_error,
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
        "blocks": [
            {"text": b.text, "score": b.score, "source": b.source, "metadata": b.metadata}
            for b in event.blocks
        ],
        "duration_ms": event.duration_ms,
    }


def _run_started(e: RunStarted) -> dict[str, Any]:
    return {"message": e.message, "model": e.model, "at": e.at, "kind": e.kind}


def _prompt_rendered(e: PromptRendered) -> dict[str, Any]:
    body = compact_prompt(e)
    body["kind"] = e.kind
    return body


def _model_requested(e: ModelRequested) -> dict[str, Any]:
    request = e.request
    out = {
        "call": e.call,
        "at": e.at,
        "messages": len(request.get("messages") or ()),
        "tools": len(request.get("tools") or ()),
        "kind": e.kind,
    }
    parts = request_parts(request) if e.call == 0 else None  # the user's images, in the Prompt tab
    if parts:
        out["user_parts"] = parts
    return out


def _text_delta(e: TextDelta) -> dict[str, Any]:
    return {"call": e.call, "text": e.text, "kind": e.kind}


def _model_responded(e: ModelResponded) -> dict[str, Any]:
    return {
        "call": e.call,
        "content": e.content,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in e.tool_calls],
        "finish_reason": e.finish_reason,
        "usage": compact_usage(e.usage),
        "duration_ms": e.duration_ms,
        "kind": e.kind,
    }


def _tool_call_started(e: ToolCallStarted) -> dict[str, Any]:
    return {
        "call": e.call,
        "id": e.tool_call_id,
        "name": e.name,
        "arguments": e.arguments,
        "source": e.source,
        "kind": e.kind,
    }


def _tool_call_finished(e: ToolCallFinished) -> dict[str, Any]:
    out = {
        "call": e.call,
        "id": e.tool_call_id,
        "name": e.name,
        "arguments": e.arguments,
        "result": e.result,
        "error": e.error,
        "error_kind": e.error_kind,
        "hooks": [compact_hook(h) for h in e.hooks],
        "answered_by": e.answered_by,
        "changed_keys": list(e.changed_keys),
        "source": e.source,
        "replayed": e.replayed,
        "duration_ms": e.duration_ms,
        "kind": e.kind,
    }
    if e.child_run_id is not None:  # a delegation: the run it started (its time is within the call's)
        out["child_run_id"] = e.child_run_id
    if e.attachments:  # images and files the result holds, described (their bytes come on request)
        out["attachments"] = list(e.attachments)
    return out


def _state_changed(e: StateChanged) -> dict[str, Any]:
    return {"patch": list(e.patch), "cause": compact_cause(e.cause), "kind": e.kind}


def _run_finished(e: RunFinished) -> dict[str, Any]:
    return {
        "content": e.content,
        "usage": compact_usage(e.usage),
        "duration_ms": e.duration_ms,
        "model_calls": e.model_calls,
        "tool_calls": e.tool_calls,
        "kind": e.kind,
    }


def _context_retrieved(e: ContextRetrieved) -> dict[str, Any]:
    body = compact_context(e)
    body["kind"] = e.kind
    return body


def _run_failed(e: RunFailed) -> dict[str, Any]:
    return {
        "error": e.error,
        "error_type": e.error_type,
        "usage": compact_usage(e.usage),
        "duration_ms": e.duration_ms,
        "kind": e.kind,
    }


def _run_paused(e: RunPaused) -> dict[str, Any]:
    """A run waiting for a person: its items as data (the inspector builds its cards from them)."""
    items = [{k: getattr(i, k) for k in _PENDING_FIELDS} | {"path": list(i.path)} for i in e.items]
    return {"items": items, "usage": compact_usage(e.usage), "duration_ms": e.duration_ms, "kind": e.kind}


def _output_checked(e: OutputChecked) -> dict[str, Any]:
    """One answer checked against the output type (the Output tab lists them in order)."""
    return {
        "call": e.call,
        "attempt": e.attempt,
        "mode": e.mode,
        "ok": e.ok,
        "errors": [dict(error) for error in e.errors],
        "output": e.output,
        "text": e.text,
        "tool_call_id": e.tool_call_id,
        "output_type": e.output_type,
        "validators": list(e.validators),
        "kind": e.kind,
    }


def _run_resumed(e: RunResumed) -> dict[str, Any]:
    return {
        "decisions": [{"id": d.id, "verdict": d.verdict, "by": d.by} for d in e.decisions],
        "kind": e.kind,
    }


_PENDING_FIELDS = ("id", "kind", "tool", "arguments", "reason", "call")


_COMPACT: dict[type, Any] = {
    RunStarted: _run_started,
    PromptRendered: _prompt_rendered,
    ModelRequested: _model_requested,
    TextDelta: _text_delta,
    ModelResponded: _model_responded,
    ToolCallStarted: _tool_call_started,
    ToolCallFinished: _tool_call_finished,
    StateChanged: _state_changed,
    RunFinished: _run_finished,
    ContextRetrieved: _context_retrieved,
    RunFailed: _run_failed,
    RunPaused: _run_paused,
    RunResumed: _run_resumed,
    OutputChecked: _output_checked,
}
"""The compact form of each kind of event (looked up by the event's class: one dict lookup per
event, not a chain of isinstance tests)."""


def compact_event(event: Event) -> dict[str, Any]:
    """The part of an event the browser shows. A model request's payload is left out (it is
    fetched when the Request tab opens); a state change keeps only its patch and author."""
    make = _COMPACT.get(type(event))
    if make is None:  # a subclass of an event class, or an unknown kind
        make = next((f for cls, f in _COMPACT.items() if isinstance(event, cls)), None)
        if make is None:
            return {"kind": event.kind}
    return make(event)


__all__ = ["compact_event", "compact_usage"]
