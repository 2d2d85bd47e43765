"""The JSON-safe, compact forms of the core's records that the inspector sends to the browser:
events, turn summaries, change summaries (by ``agentnb.state.diff``'s rule, values as short text)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..events import (
    ContextRetrieved,
    Event,
    HookStep,
    ModelRequested,
    ModelResponded,
    OutputChecked,
    PromptRendered,
    PromptSection,
    PromptTokens,
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
from ..history.render import value_text
from ..state.diff import MISSING, Change
from .compact_parts import request_parts

if TYPE_CHECKING:
    from ..agent import Agent
    from ..history.history import TurnChanges, TurnRecord
    from ..state.edits import StateEdit

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


def turn_state(record: TurnRecord, agent: Agent) -> dict[str, Any]:
    """The state a turn ended with; the live state itself while it runs (encode it at once:
    the run changes it)."""
    if record.status == "running":
        return agent.session_state
    return record.state_after


def turn_summary(record: TurnRecord) -> dict[str, Any]:
    """One row of the History tab."""
    # One pass over the events (a loop of quick turns sends a row for nearly every turn).
    tool_calls = failed = context = blocks = pauses = resumed = 0
    prompt: PromptRendered | None = None
    finish = None
    asked = False
    for event in record.events:
        # Event classes are final: compared by identity, the cheapest test (and one mypy narrows).
        if type(event) is ToolCallFinished:
            tool_calls += 1
            failed += event.error is not None
        elif type(event) is ModelRequested:
            asked = True
        elif type(event) is ModelResponded:
            finish = event.finish_reason
        elif type(event) is ContextRetrieved:
            context += 1
            blocks += len(event.blocks)
        elif type(event) is PromptRendered and prompt is None:
            prompt = event
        elif type(event) is RunPaused:
            pauses += 1
        elif type(event) is RunResumed:
            resumed += 1
    content = record.content
    row = {
        "turn": record.index,
        "message": record.message[:SUMMARY_TEXT],
        "status": record.status,
        "content": None if content is None else content[:SUMMARY_TEXT],
        "error": record.error,
        "model": record.model,
        "usage": compact_usage(record.usage),
        "duration_ms": record.duration_ms,
        "tool_calls": tool_calls,
        "failed_tool_calls": failed,
        "replayed": record.replayed,
        # Both counts, so the Context tab of a turn not loaded yet can be labelled or greyed.
        "context": context,
        "context_blocks": blocks,
        "finish_reason": finish,  # "length": the answer was cut at the token limit
        **prompt_tokens(prompt),
    }
    if pauses:  # only a turn that paused says so (History marks it paused, then resumed)
        row["pauses"], row["resumed"] = pauses, resumed
    routed = None if asked or not tool_calls else routed_run(record)
    if routed is not None:
        row["routed"] = routed_summary(routed)
    return row


def routed_run(record: TurnRecord) -> TurnRecord | None:
    """The run that answered a turn routed to the agent in charge: an earlier handoff left another
    agent answering, so the turn went to it without a model call of its own (its one tool call,
    the handoff, was made for it). None for any other turn."""
    if record.model_calls or len(record.tool_calls) != 1:
        return None
    child_id = record.tool_calls[0].child_run_id
    return next((c for c in record.children if c.run_id == child_id), None) if child_id else None


def routed_summary(run: TurnRecord) -> dict[str, Any]:
    """What the header shows of the run a turn was routed to, before it is loaded: its agent, its
    run id (the tabs show it), its tokens and its time."""
    return {
        "agent": run.agent,
        "run_id": run.run_id,
        "usage": compact_usage(run.usage_total),
        "duration_ms": run.duration_ms,
    }


def prompt_tokens(prompt: PromptRendered | None) -> dict[str, Any]:
    """What a turn's prompt cost, and its ``<session_state>`` block's part (the History tab's
    columns); None for a turn whose prompt was not rendered."""
    tokens = prompt.tokens if prompt is not None else None
    if prompt is None or tokens is None:
        return {"prompt_tokens": None, "state_tokens": None, "tokens_exact": None}
    state = None  # (a plain loop: a History row is built for nearly every turn of a loop)
    for section, count in zip(prompt.sections, tokens.sections):
        if section.source == "session_state":
            state = count if state is None else state + count
    return {"prompt_tokens": tokens.total, "state_tokens": state, "tokens_exact": tokens.exact}


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


_SCALARS = (str, int, float, bool, type(None))


def preview_text(value: Any, limit: int = CHANGE_TEXT) -> str:
    """``agentnb.history.render.value_text`` of a value, encoding only the part that is shown: the old
    value of a key holding a large state costs the preview, not the whole value."""
    if isinstance(value, _SCALARS) or (
        isinstance(value, (list, dict))
        and len(value) <= 8
        and all(isinstance(v, _SCALARS) for v in (value.values() if isinstance(value, dict) else value))
    ):
        return value_text(value, limit)  # small: encoded whole at C speed
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
    return summarize_changes(changes.keys, changes.paths)


def summarize_changes(keys: Sequence[Change], paths: Sequence[Change]) -> dict[str, Any]:
    """``compact_changes`` of the changed keys and paths (``ChangeLog.keys`` / ``paths``)."""
    return {
        "keys": [compact_change(c) for c in keys],
        "paths": [compact_change(c) for c in paths[:MAX_CHANGED_PATHS]],
        "more": max(0, len(paths) - MAX_CHANGED_PATHS),
    }


def compact_usage(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "estimated": usage.estimated,
    }
    if usage.reasoning_tokens:  # a reasoning model's: of the output, the tokens spent thinking
        out["reasoning"] = usage.reasoning_tokens
    return out


def compact_tokens(tokens: PromptTokens | None) -> dict[str, Any] | None:
    """A prompt's token counts: per section, system prompt, earlier turns, user message,
    template overhead and total, with what counted them."""
    if tokens is None:
        return None
    out = {
        "counter": tokens.counter,
        "exact": tokens.exact,
        "note": tokens.note,
        "sections": list(tokens.sections),
        "system": tokens.system,
        "history": tokens.history,
        "user": tokens.user,
        "template": tokens.template,
        "total": tokens.total,
    }
    if tokens.user_sections or tokens.earlier_sections:  # a delegated run's labelled parts
        out["user_sections"] = list(tokens.user_sections)
        out["earlier_sections"] = list(tokens.earlier_sections)
    return out


def compact_prompt(prompt: Any) -> dict[str, Any]:
    """What the Prompt and Preview tabs show of a rendered prompt (a PromptRendered or an
    Observation): sections, user message, notes, hidden and unused keys, token counts."""
    return {
        "sections": [compact_section(s) for s in prompt.sections],
        "user_prompt": prompt.user_prompt,
        "notes": list(prompt.notes),
        "hidden_keys": list(prompt.hidden_keys),
        "unused_keys": list(prompt.unused_keys),
        "tokens": compact_tokens(prompt.tokens),
    }


def compact_edit(edit: StateEdit) -> dict[str, Any]:
    """One pending edit of the state, as the State tab lists it."""
    return {
        "path": edit.path,
        "how": edit.how,
        "old": None if edit.old is MISSING else preview_text(edit.old),
        "new": None if edit.new is MISSING else preview_text(edit.new),
    }


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


__all__ = [
    "compact_changes",
    "summarize_changes",
    "compact_edit",
    "compact_prompt",
    "compact_tokens",
    "compact_event",
    "model_info",
    "turn_state",
    "turn_summary",
]
