"""A paused turn's place: what its run needs to go on from where it stopped (``Pause``), kept on
the turn record while it waits and saved with it, so a run paused in one process continues in
another."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import SessionFormatError
from ..events import Decision, PendingCall
from ..messages import Message, ToolCall

Stop = Literal["tools", "model"]
"""Where a run stopped: before some tool calls of a response, or before a model call."""


@dataclass
class Pause:
    """Where a paused run stopped and what it needs to go on; the person's decisions so far."""

    items: tuple[PendingCall, ...]
    """Its own pending items, in call order."""
    stop: Stop
    """``tools``: some calls of the last response wait; ``model``: a model call waits."""
    call: int
    """The model call (0 = the first) whose response holds the waiting calls, or that waits."""
    messages: tuple[Message, ...]
    """The whole conversation as the model would be sent it next: the system prompt, the
    earlier turns sent as context, the user's message and what followed."""
    context: tuple[int, int] = (0, 0)
    """The slice of ``messages`` that are earlier turns' (sent as context, not this turn's own)."""
    waiting: tuple[ToolCall, ...] = ()
    """The calls of the last response not finished, in the order they run: the items' calls,
    and delegations waiting on a member's pending item."""
    reasoning: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    """Reasoning items (Responses API) by the index in ``messages`` of the answer they came with."""
    delegated: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The runs each waiting delegation started before the pause, by its tool call id (a member's
    run that waits goes on; one that ended is not run again)."""
    direct: str | None = None
    """A member's answer for the whole run, given before the pause (route mode, a handoff)."""
    duration_ms: float = 0.0
    """Time the run took until it paused."""
    decisions: dict[str, Decision] = field(default_factory=dict)
    """The person's decisions so far, by item id."""

    def undecided(self) -> list[PendingCall]:
        """The items no decision was taken about yet."""
        return [item for item in self.items if item.id not in self.decisions]

    def to_dict(self) -> dict[str, Any]:
        """The pause as plain data (for a session)."""
        return {
            "items": [dataclasses.asdict(item) for item in self.items],
            "stop": self.stop,
            "call": self.call,
            "messages": [m.to_dict() for m in self.messages],
            "context": list(self.context),
            "waiting": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.waiting],
            "reasoning": [[index, items] for index, items in self.reasoning.items()],
            "delegated": {key: list(runs) for key, runs in self.delegated.items()},
            "direct": self.direct,
            "duration_ms": self.duration_ms,
            "decisions": [dataclasses.asdict(d) for d in self.decisions.values()],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pause:
        """The inverse of ``to_dict``; SessionFormatError names what is wrong."""
        try:
            items = tuple(_pending(item) for item in data["items"])
            decisions = [Decision(**d) for d in data.get("decisions") or ()]
            start, stop = data.get("context") or (0, 0)
            return cls(
                items=items,
                stop=data["stop"],
                call=int(data["call"]),
                messages=tuple(Message.from_dict(m) for m in data["messages"]),
                context=(int(start), int(stop)),
                waiting=tuple(
                    ToolCall(c["id"], c["name"], c["arguments"]) for c in data.get("waiting") or ()
                ),
                reasoning={int(index): list(found) for index, found in data.get("reasoning") or ()},
                delegated={str(k): tuple(map(str, v)) for k, v in (data.get("delegated") or {}).items()},
                direct=data.get("direct"),
                duration_ms=float(data.get("duration_ms", 0.0)),
                decisions={d.id: d for d in decisions},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionFormatError(f"a paused turn's place does not load: {exc!r:.200}") from None


def _pending(data: Mapping[str, Any]) -> PendingCall:
    return PendingCall(**{**data, "path": tuple(data.get("path") or ())})


__all__ = ["Pause", "Stop"]
