"""What the agent a handoff goes to receives, as OpenAI's Agents SDK gives it: the whole run so
far — the conversation before the user's message, the message, and this run's tool calls and
results up to the handoff, which is answered with a transfer note — then the handoff's
``input_filter``, if it has one. And the SDK's rule for several handoffs in one response: the
first is taken, the others are answered ``IGNORED`` and do nothing.

A filter is the developer's code: one that raises, or returns anything but a list of messages,
ends the run with a ``HandoffFilterError`` raised to the developer (never a tool error the model
reads).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

from ..errors import DelegationError, HandoffFilterError
from ..events import PromptSection
from ..messages import Message
from ..run.setup import continuation_id
from .site import Assignment

IGNORED = "Multiple handoffs detected, ignoring this one."
"""The result of every handoff call of a response after its first (OpenAI's text)."""

Filter = Callable[[list[Message]], Sequence[Message]]


def is_first_handoff(messages: Sequence[Message], call_id: str, handoffs: Collection[str]) -> bool:
    """Whether call ``call_id`` is the first call to one of ``handoffs`` in its response."""
    for message in reversed(messages):
        if message.role == "assistant" and any(c.id == call_id for c in message.tool_calls):
            first = next((c for c in message.tool_calls if c.name in handoffs), None)
            return first is None or first.id == call_id
    return True


def handoff_assignment(
    site: Any, target: Any, tool_name: str, input_filter: Filter | None, handoffs: Collection[str]
) -> Assignment:
    """The target's run: the user's message, with the run so far around it (after the filter),
    each message labelled as the handoff's history."""
    earlier, message, following = run_so_far(
        site.ctx.messages, site.tool_call_id, target.name, handoffs, site.parent.run_id
    )
    if input_filter is not None:
        earlier, message, following = _filtered(input_filter, tool_name, target, earlier, message, following)
    text = message.text
    cause = f"handoff ({tool_name}) history" + (", after input_filter" if input_filter is not None else "")
    labelled = tuple(_section(f"{cause}: {m.role}", m) for m in (*earlier, *following))
    sections = (PromptSection(source=f"handoff ({tool_name})", text=text, start=0, end=len(text)),)
    return Assignment(
        target,
        text,
        sections,
        tuple(earlier),
        tuple(following),
        earlier_sections=labelled,
        label=text,
        attachments=message.attachments,
    )


def run_so_far(
    messages: Sequence[Message], call_id: str, target: str, handoffs: Collection[str], run_id: str
) -> tuple[list[Message], Message, list[Message]]:
    """(the conversation before the user's message of this run, that message, this run's
    messages after it). The response holding the handoff keeps the calls answered so far, the
    other handoffs (answered ``IGNORED``) and the handoff itself, answered with the transfer
    note. A run given to the agent in charge (no model made its handoff call) has nothing after
    the message."""
    held = next(
        (i for i in range(len(messages) - 1, -1, -1) if any(c.id == call_id for c in messages[i].tool_calls)),
        len(messages),
    )
    user = next((i for i in range(min(held, len(messages)) - 1, -1, -1) if messages[i].role == "user"), None)
    if user is None:
        raise DelegationError("a handoff needs the user's message; this run has none")
    earlier = [m for m in messages[:user] if m.role != "system"]
    if call_id == continuation_id(run_id) or held == len(messages):
        return earlier, messages[user], []
    response = messages[held]
    results = {m.tool_call_id: m for m in messages[held + 1 :] if m.role == "tool"}
    transfer = json.dumps({"assistant": target})
    calls, answers = [], []
    for call in response.tool_calls:
        if call.id == call_id:
            answer = Message.tool(call, transfer)
        elif call.id in results:
            answer = results[call.id]
        elif call.name in handoffs:
            answer = Message.tool(call, IGNORED)
        else:  # not run yet: left out, with its call (a request may not hold a call without its result)
            continue
        calls.append(call)
        answers.append(answer)
    kept = Message.assistant(response.content, tuple(calls))
    return earlier, messages[user], [*messages[user + 1 : held], kept, *answers]


def _filtered(
    input_filter: Filter,
    tool_name: str,
    target: Any,
    earlier: list[Message],
    message: Message,
    following: list[Message],
) -> tuple[list[Message], Message, list[Message]]:
    """The filter's messages, split again around their last user message (the one the target
    answers); when it kept no user message, the user's message comes after them."""
    name = getattr(input_filter, "__qualname__", None) or repr(input_filter)
    where = f"the input_filter {name} of the handoff {tool_name} (to {target.name!r})"
    try:
        out = input_filter([*earlier, message, *following])
    except Exception as exc:
        raise HandoffFilterError(f"{where} raised {type(exc).__name__}: {exc}") from exc
    if isinstance(out, (str, bytes)) or not isinstance(out, Sequence):
        if inspect.iscoroutine(out):  # an async filter: not awaited, so closed (no warning later)
            out.close()
        raise HandoffFilterError(
            f"{where} returned {_shown(out)}; it must return a list of messages (agentnb.Message)"
        )
    wrong = next((m for m in out if not isinstance(m, Message)), None)
    if wrong is not None:
        raise HandoffFilterError(
            f"{where} returned a list holding {_shown(wrong)}; it must return a list of messages "
            "(agentnb.Message)"
        )
    kept = list(out)
    last = next((i for i in range(len(kept) - 1, -1, -1) if kept[i].role == "user"), None)
    if last is None:
        return kept, message, []
    return kept[:last], kept[last], kept[last + 1 :]


def _section(source: str, message: Message) -> PromptSection:
    """A message as a labelled part of the prompt: its text, and the calls it makes."""
    calls = [f"{c.name}({c.arguments})" for c in message.tool_calls]
    text = "\n".join([message.text, *calls] if message.text else calls)
    return PromptSection(source=source, text=text, start=0, end=len(text))


def _shown(value: Any) -> str:
    text = repr(value)
    return f"a {type(value).__name__} ({text[:80]}{'…' if len(text) > 80 else ''})"


__all__ = ["IGNORED", "handoff_assignment", "is_first_handoff", "run_so_far"]
