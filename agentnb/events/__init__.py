"""The events a run emits, one frozen dataclass per kind, and the values they carry.

Event names and fields are public API: the inspector, the turn records, the sessions and the
pandas views are all built from them. ``EVENT_ADAPTER`` round-trips any event through JSON.
The events are in ``kinds.py`` (a typed run's answers, ``OutputChecked`` and ``OutputDelta``, in
``output.py``), the values they carry (usage, prompt sections, hook steps, state causes, context
blocks) in ``parts.py``; import them all from here.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .kinds import (
    ContextRetrieved,
    Decision,
    Event,
    ModelRequested,
    ModelResponded,
    OutputChecked,
    OutputDelta,
    PendingCall,
    PendingKind,
    PromptRendered,
    RunFailed,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from .parts import (
    CauseKind,
    ContextBlock,
    HookStep,
    Placeholder,
    PromptSection,
    PromptTokens,
    StateCause,
    Usage,
)

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    EVENT_ADAPTER: TypeAdapter[Event]
    EVENTS_ADAPTER: TypeAdapter[list[Event]]


_ADAPTERS_LOCK = threading.Lock()


def __getattr__(name: str) -> Any:
    # pydantic builds the adapters in a few hundred milliseconds: only when first used, so
    # `import agentnb` stays light.
    if name in ("EVENT_ADAPTER", "EVENTS_ADAPTER"):
        with _ADAPTERS_LOCK:  # threads asking at once (an evaluation's cases) build them once
            if name not in globals():
                from typing import Annotated

                from pydantic import Field, TypeAdapter

                tagged = Annotated[Event, Field(discriminator="kind")]
                globals()["EVENTS_ADAPTER"] = TypeAdapter(list[tagged])
                globals()["EVENT_ADAPTER"] = TypeAdapter(tagged)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CauseKind",
    "ContextBlock",
    "ContextRetrieved",
    "Decision",
    "Event",
    "EVENT_ADAPTER",
    "EVENTS_ADAPTER",
    "HookStep",
    "ModelRequested",
    "ModelResponded",
    "OutputChecked",
    "OutputDelta",
    "PendingCall",
    "PendingKind",
    "Placeholder",
    "PromptRendered",
    "PromptSection",
    "PromptTokens",
    "RunFailed",
    "RunFinished",
    "RunPaused",
    "RunResumed",
    "RunStarted",
    "StateCause",
    "StateChanged",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "Usage",
]
