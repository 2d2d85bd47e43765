"""One run's events, sorted into the spans they become, with each span's times.

``outline(events)`` reads a run's recorded events (live or from a saved history) and returns a
``RunOutline``: the root, one ``ChatCall`` per model call, one ``ToolRun`` per tool call with its
hooks, retrievals and state changes, and the passive retrievals. Times are nanoseconds since the
epoch, taken from the events' own ``at`` and ``duration_ms``; events that carry no time
(retrievals, hooks) are laid out inside the span they belong to.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..events import (
    ContextRetrieved,
    Event,
    HookStep,
    ModelRequested,
    ModelResponded,
    PromptRendered,
    RunFailed,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StateChanged,
    ToolCallFinished,
    ToolCallStarted,
)

NS_PER_MS = 1_000_000


@dataclass
class Timed:
    """A span's place in time."""

    start: int = 0
    """Start, nanoseconds since the epoch."""
    end: int = 0
    """End, nanoseconds since the epoch."""


@dataclass
class Retrieval(Timed):
    """A context retrieval and its span key."""

    event: ContextRetrieved | None = None
    """What the provider was asked and returned."""
    key: str = ""
    """The span's key within the run (its id is derived from it)."""


@dataclass
class Hook(Timed):
    """One hook of a tool call's chain."""

    step: HookStep | None = None
    """What the hook did."""
    key: str = ""
    """The span's key within the run."""
    states: list[StateChanged] = field(default_factory=list)
    """State changes the hook made."""


@dataclass
class ToolRun(Timed):
    """One tool call."""

    started: ToolCallStarted | None = None
    """The call as the model asked for it."""
    finished: ToolCallFinished | None = None
    """Its result, error and hooks (None when the run failed during it)."""
    key: str = ""
    """The span's key within the run (``tool:<tool_call_id>``)."""
    retrievals: list[Retrieval] = field(default_factory=list)
    """Retrievals the model made through this call (``retrieve_context``)."""
    hooks: list[Hook] = field(default_factory=list)
    """The hook chain, outermost first."""
    states: list[StateChanged] = field(default_factory=list)
    """State changes the call made (those of its hooks are on the hooks)."""


@dataclass
class ChatCall(Timed):
    """One model call."""

    requested: ModelRequested | None = None
    """The request."""
    responded: ModelResponded | None = None
    """The answer (None when the call failed)."""
    key: str = ""
    """The span's key within the run (``chat:<call>``)."""


@dataclass
class RunOutline(Timed):
    """A run sorted into spans."""

    started: RunStarted | None = None
    """The run's start."""
    prompt: PromptRendered | None = None
    """The rendered system prompt."""
    outcome: RunFinished | RunFailed | None = None
    """How it ended (None while it runs)."""
    calls: list[ChatCall] = field(default_factory=list)
    """Model calls in order."""
    tools: list[ToolRun] = field(default_factory=list)
    """Tool calls in order."""
    retrievals: list[Retrieval] = field(default_factory=list)
    """Passive retrievals (while the user turn was assembled)."""
    states: list[StateChanged] = field(default_factory=list)
    """State changes not made by a tool or hook."""
    pauses: list[RunPaused | RunResumed] = field(default_factory=list)
    """Where it paused for a person and went on, in order."""

    def tool_key(self, tool_call_id: str) -> str | None:
        """The span key of the latest tool call with this id."""
        for tool in reversed(self.tools):
            if tool.started is not None and tool.started.tool_call_id == tool_call_id:
                return tool.key
        return None


def outline(events: Sequence[Event], stamps: Sequence[int | None] | None = None) -> RunOutline:
    """Sort one run's events into spans; ``stamps`` are arrival times (ns) for live runs."""
    run = RunOutline()
    open_tools: dict[str, ToolRun] = {}
    taken: dict[str, int] = {}
    for event in events:
        if isinstance(event, RunStarted):
            run.started = event
        elif isinstance(event, PromptRendered):
            run.prompt = event
        elif isinstance(event, ModelRequested):
            run.calls.append(ChatCall(requested=event, key=f"chat:{event.call}"))
        elif isinstance(event, ModelResponded):
            for chat in reversed(run.calls):
                if chat.requested is not None and chat.requested.call == event.call:
                    chat.responded = event
                    break
        elif isinstance(event, ToolCallStarted):
            key = f"tool:{event.tool_call_id}"
            taken[key] = taken.get(key, 0) + 1
            tool = ToolRun(started=event, key=key if taken[key] == 1 else f"{key}#{taken[key]}")
            run.tools.append(tool)
            open_tools[event.tool_call_id] = tool
        elif isinstance(event, ToolCallFinished):
            finished = open_tools.pop(event.tool_call_id, None)
            if finished is not None:
                finished.finished = event
        elif isinstance(event, ContextRetrieved):
            _add_retrieval(run, event, open_tools)
        elif isinstance(event, StateChanged):
            writer = open_tools.get(event.cause.tool_call_id or "")
            (writer.states if writer is not None else run.states).append(event)
        elif isinstance(event, (RunFinished, RunFailed)):
            run.outcome = event
        elif isinstance(event, (RunPaused, RunResumed)):
            run.pauses.append(event)
    _place(run, stamps)
    return run


def _add_retrieval(run: RunOutline, event: ContextRetrieved, open_tools: dict[str, ToolRun]) -> None:
    if event.via == "tool" and open_tools:
        tool = list(open_tools.values())[-1]
        tool.retrievals.append(Retrieval(event=event, key=f"retrieval:{tool.key}:{len(tool.retrievals)}"))
    else:
        run.retrievals.append(Retrieval(event=event, key=f"retrieval:{len(run.retrievals)}"))


def _place(run: RunOutline, stamps: Sequence[int | None] | None) -> None:
    """Each span's start and end from the events' times."""
    latest = max((s for s in stamps or () if s), default=0)
    started = run.started
    run.start = _ns(started.at) if started is not None and started.at else (latest or time.time_ns())
    for chat in run.calls:
        chat.start = (
            max(run.start, _ns(chat.requested.at)) if chat.requested and chat.requested.at else run.start
        )
        chat.end = chat.start + _ms(chat.responded.duration_ms) if chat.responded else 0
    for tool in run.tools:
        tool.start = max(run.start, _ns(tool.started.at)) if tool.started and tool.started.at else run.start
        tool.end = tool.start + _ms(tool.finished.duration_ms) if tool.finished else 0
    # The run's duration and its children's times come from different clocks: the root ends no
    # earlier than its last child. Arrival times are not used, so a live run and its recording
    # exported later get the same times.
    children = [t for span in (*run.calls, *run.tools) for t in (span.start, span.end)]
    outcome = run.outcome
    own_end = run.start + _ms(outcome.duration_ms) if outcome is not None else run.start
    run.end = max(own_end, run.start, *children)
    for span in (*run.calls, *run.tools):
        span.end = span.end or run.end
    first_call = run.calls[0].start if run.calls else run.end
    _lay_out(run.retrievals, first_call, backwards=True, floor=run.start)
    for tool in run.tools:
        _lay_out(tool.retrievals, tool.start, backwards=False, floor=tool.start)
        _hooks(tool)


def _lay_out(retrievals: list[Retrieval], at: int, *, backwards: bool, floor: int) -> None:
    """Retrievals one after another, ending at ``at`` (passive) or starting there (tool)."""
    total = sum(_ms(r.event.duration_ms) for r in retrievals if r.event is not None)
    cursor = max(floor, at - total) if backwards else at
    for retrieval in retrievals:
        retrieval.start = cursor
        cursor += _ms(retrieval.event.duration_ms) if retrieval.event is not None else 0
        retrieval.end = cursor


def _hooks(tool: ToolRun) -> None:
    """The hook chain as nested spans (each hook's time includes the links inside it); the
    hooks' state changes move from the tool to the hook that made them."""
    steps = tool.finished.hooks if tool.finished is not None else ()
    for i, step in enumerate(steps):
        end = min(tool.end, tool.start + _ms(step.duration_ms)) if step.duration_ms else tool.end
        tool.hooks.append(Hook(start=tool.start, end=end, step=step, key=f"hook:{tool.key}:{i}"))
    by_name = {hook.step.name: hook for hook in tool.hooks if hook.step is not None}
    kept: list[StateChanged] = []
    for change in tool.states:
        hook = by_name.get(change.cause.name or "") if change.cause.kind == "hook" else None
        (hook.states if hook is not None else kept).append(change)
    tool.states = kept


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


def _ms(milliseconds: float) -> int:
    return int(milliseconds * NS_PER_MS)


def parent_of(started: Any) -> tuple[str | None, str | None]:
    """A delegated run's parent run and the delegate tool call that started it (None, None for a
    run of its own); read with defaults, as older recordings have neither field."""
    return getattr(started, "parent_run_id", None), getattr(started, "parent_tool_call_id", None)


__all__ = ["ChatCall", "Hook", "Retrieval", "RunOutline", "ToolRun", "outline", "parent_of"]
