"""One turn's row in the History tab: what it asked and answered, its status, tokens, time and
counts, built in one pass over its events (a loop of quick turns sends a row for nearly every
turn)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..events import (
    ContextRetrieved,
    ModelRequested,
    ModelResponded,
    PromptRendered,
    RunPaused,
    RunResumed,
    ToolCallFinished,
)
from .compact_events import compact_usage

if TYPE_CHECKING:
    from ..history.history import TurnRecord

SUMMARY_TEXT = 300
"""Characters of a turn's message and answer kept in its summary row."""


_COUNTED = frozenset(
    {
        ModelRequested,
        ModelResponded,
        ToolCallFinished,
        PromptRendered,
        ContextRetrieved,
        RunPaused,
        RunResumed,
    }
)
"""The events a History row counts or reads. The others (a turn's start and end, its state
changes, its tool calls' starts) are passed over with one test each instead of one per kind."""


def turn_summary(record: TurnRecord) -> dict[str, Any]:
    """One row of the History tab."""
    tool_calls = failed = context = blocks = pauses = resumed = 0
    prompt: PromptRendered | None = None
    responded: ModelResponded | None = None
    asked = False
    for event in record.events:
        if type(event) not in _COUNTED:
            continue
        # Event classes are final: compared by identity, the cheapest test (and one mypy narrows).
        if type(event) is ModelRequested:
            asked = True
        elif type(event) is ModelResponded:
            responded = event  # the last answer's finish reason is the turn's
        elif type(event) is ToolCallFinished:
            tool_calls += 1
            failed += event.error is not None
        elif type(event) is PromptRendered and prompt is None:
            prompt = event
        elif type(event) is ContextRetrieved:
            context += 1
            blocks += len(event.blocks)
        elif type(event) is RunPaused:
            pauses += 1
        elif type(event) is RunResumed:
            resumed += 1
    # What the turn's prompt cost, and its <session_state> block's part (None: not counted).
    tokens = None if prompt is None else prompt.tokens
    total = state = exact = None
    if prompt is not None and tokens is not None:
        total, exact = tokens.total, tokens.exact
        if tokens.sections:  # (a plain loop, as the rest: a row is built for nearly every turn)
            for section, count in zip(prompt.sections, tokens.sections):
                if section.source == "session_state":
                    state = count if state is None else state + count
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
        # "length": the answer was cut at the token limit
        "finish_reason": None if responded is None else responded.finish_reason,
        "prompt_tokens": total,
        "state_tokens": state,
        "tokens_exact": exact,
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


__all__ = ["routed_run", "routed_summary", "turn_summary"]
