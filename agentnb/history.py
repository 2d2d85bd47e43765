"""Turn records: everything one run did, kept on the agent as ``agent.history``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

from . import events as events_module
from .events import (
    ContextRetrieved,
    Event,
    ModelRequested,
    ModelResponded,
    PromptRendered,
    StateChanged,
    ToolCallFinished,
    Usage,
)
from .messages import Message
from . import diff
from .diff import top_level_key

if TYPE_CHECKING:
    import pandas


@dataclass(frozen=True)
class TurnChanges:
    """What a turn changed in the state (see ``agentnb.diff`` for the rule)."""

    keys: list[diff.Change]
    """Top-level keys added, changed or removed, in first-write order."""
    paths: list[diff.Change]
    """Every path written that ended up different, in first-write order."""


@dataclass(frozen=True)
class ModelCall:
    """One request/response pair of a turn."""

    index: int
    """Position within the turn (0-based)."""
    request: dict[str, Any]
    """The payload exactly as sent."""
    response: ModelResponded | None
    """The answer (None when the call failed)."""


@dataclass
class TurnRecord:
    """One run of an agent: its events, requests, responses, tool calls and state."""

    index: int
    """Position in the agent's history (0-based)."""
    run_id: str
    agent: str
    message: str
    """The user's message."""
    model: str
    """The model's label."""
    status: Literal["running", "ok", "failed"] = "running"
    content: str | None = None
    """The final answer."""
    error: str | None = None
    """Why the run failed, if it did."""
    started_at: float = 0.0
    duration_ms: float = 0.0
    usage: Usage = field(default_factory=Usage)
    state_start: dict[str, Any] = field(default_factory=dict)
    """The state when the turn began, before the user's edits since the last turn and the run
    keywords were applied: what ``changes()`` compares with."""
    state_before: dict[str, Any] = field(default_factory=dict)
    """The state the prompt was rendered from (after the user's edits and the run keywords)."""
    state_after: dict[str, Any] = field(default_factory=dict)
    """The state when the run ended."""
    events: list[Event] = field(default_factory=list)
    """Every event but text deltas, in order."""
    messages: list[Message] = field(default_factory=list)
    """The run's messages: system, user, assistant and tool."""
    output: Any = None
    """The answer parsed by the agent's output formatter (a ParsedOutput), if it has one."""

    @property
    def context(self) -> list[ContextRetrieved]:
        """Every context retrieval of the turn, in order: passive injections (``via='passive'``)
        then the model's ``retrieve_context`` calls (``via='tool'``); each has label and blocks."""
        return [e for e in self.events if isinstance(e, ContextRetrieved)]

    @property
    def prompt(self) -> PromptRendered | None:
        return next((e for e in self.events if isinstance(e, PromptRendered)), None)

    @property
    def system_prompt(self) -> str | None:
        prompt = self.prompt
        return prompt.system_prompt if prompt else None

    @property
    def model_calls(self) -> list[ModelCall]:
        requests = [e for e in self.events if isinstance(e, ModelRequested)]
        responses = {e.call: e for e in self.events if isinstance(e, ModelResponded)}
        return [ModelCall(index=r.call, request=r.request, response=responses.get(r.call)) for r in requests]

    @property
    def tool_calls(self) -> list[ToolCallFinished]:
        return [e for e in self.events if isinstance(e, ToolCallFinished)]

    @property
    def state_changes(self) -> list[StateChanged]:
        return [e for e in self.events if isinstance(e, StateChanged)]

    def changed_keys(self) -> list[str]:
        """Top-level keys changed during this turn, in first-change order."""
        keys = (top_level_key(op["path"]) for change in self.state_changes for op in change.patch)
        return [k for k in dict.fromkeys(keys) if k]

    def changes(self, state: Mapping[str, Any] | None = None) -> TurnChanges:
        """What this turn changed, by the rule of ``agentnb.diff``: top-level keys and every path
        written, each added / changed / removed with its authors and old and new values.
        ``state`` is the state to compare with (default: the state the turn ended with; the
        live state for a turn still running)."""
        log = diff.ChangeLog(self.state_start)
        for change in self.state_changes:
            log.add(change.patch, change.cause.label())
        after = self.state_after if state is None else state
        return TurnChanges(keys=log.keys(after), paths=log.paths(after))

    def to_dict(self) -> dict[str, Any]:
        """This turn as plain data (events through ``EVENTS_ADAPTER``); state values as they are."""
        from .sessions.modules import message_to_dict

        return {
            "index": self.index,
            "run_id": self.run_id,
            "agent": self.agent,
            "message": self.message,
            "model": self.model,
            "status": self.status,
            "content": self.content,
            "error": self.error,
            "started_at": self.started_at,
            "duration_ms": self.duration_ms,
            "usage": dataclasses.asdict(self.usage),
            "state_before": self.state_before,
            "state_after": self.state_after,
            "events": events_module.EVENTS_ADAPTER.dump_python(self.events),
            "messages": [message_to_dict(m) for m in self.messages],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TurnRecord:
        """The inverse of ``to_dict``."""
        from .sessions.modules import message_from_dict

        return cls(
            index=data["index"],
            run_id=data["run_id"],
            agent=data["agent"],
            message=data["message"],
            model=data["model"],
            status=data["status"],
            content=data.get("content"),
            error=data.get("error"),
            started_at=data.get("started_at", 0.0),
            duration_ms=data.get("duration_ms", 0.0),
            usage=Usage(**data.get("usage", {})),
            state_before=data.get("state_before", {}),
            state_after=data.get("state_after", {}),
            events=events_module.EVENTS_ADAPTER.validate_python(data.get("events", [])),
            messages=[message_from_dict(m) for m in data.get("messages", [])],
        )

    def __repr__(self) -> str:
        return (
            f"TurnRecord(#{self.index} {self.status}: {self.message[:40]!r} -> "
            f"{(self.content or self.error or '')[:40]!r}; {len(self.tool_calls)} tool call(s))"
        )


class History(Sequence[TurnRecord]):
    """The turns of an agent, oldest first, with pandas views."""

    def __init__(self, turns: list[TurnRecord] | None = None) -> None:
        self._turns: list[TurnRecord] = turns if turns is not None else []

    @overload
    def __getitem__(self, index: int) -> TurnRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[TurnRecord]: ...
    def __getitem__(self, index: int | slice) -> TurnRecord | list[TurnRecord]:
        return self._turns[index]

    def __len__(self) -> int:
        return len(self._turns)

    def __iter__(self) -> Iterator[TurnRecord]:
        return iter(self._turns)

    def append(self, turn: TurnRecord) -> None:
        self._turns.append(turn)

    def clear(self) -> None:
        self._turns.clear()

    def state_dict(self) -> dict[str, Any]:
        """The finished turns as plain data, each turn's state stored as a patch (sessions)."""
        from .sessions.modules import history_state_dict

        return history_state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        """Replace the turns with those of ``state_dict`` (from ``state_dict()``)."""
        from .sessions.modules import history_from_state_dict

        self._turns[:] = history_from_state_dict(state_dict)

    def __repr__(self) -> str:
        return f"History({len(self._turns)} turn(s))"

    def turns(self) -> pandas.DataFrame:
        """One row per turn: message, answer, status, model, tokens, duration, tool calls."""
        from .frames import turns_frame

        return turns_frame(self._turns)

    def tool_calls(self) -> pandas.DataFrame:
        """One row per tool call: turn, name, arguments, result, error, hooks, duration."""
        from .frames import tool_calls_frame

        return tool_calls_frame(self._turns)

    def states(self) -> pandas.DataFrame:
        """The state after each turn, one column per top-level key."""
        from .frames import states_frame

        return states_frame(self._turns)
