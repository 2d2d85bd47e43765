"""Turn records: everything one run did (``TurnRecord``), as ``agent.history`` holds them.

A record's three states are frozen maps shared with the turns around it; its events and
messages may be kept as stored and decoded when first read (``Stored`` / ``LazyField``).
"""

from __future__ import annotations

import copy
import dataclasses
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, Literal, TypeVar, overload

from .. import events as events_module
from ..errors import SessionFormatError
from ..events import (
    ContextRetrieved,
    Event,
    ModelRequested,
    ModelResponded,
    OutputChecked,
    PromptRendered,
    RunFailed,
    RunFinished,
    RunStarted,
    StateChanged,
    ToolCallFinished,
    Usage,
)
from ..events.parts import NO_USAGE
from ..messages import Message, hold_stored
from ..state import diff
from ..state.diff import top_level_key
from ..state.frozen import EMPTY, FrozenMap, frozen_map
from ..state.views import view
from .pause import Pause

T = TypeVar("T")

_RUNS: weakref.WeakValueDictionary[str, TurnRecord] = weakref.WeakValueDictionary()
"""The runs in memory a run may name as its children (a delegation's, a loaded one: ``findable``) by
run id, where it finds them: a tree needs no links rebuilt when its histories load one by one."""


def findable(record: TurnRecord) -> TurnRecord:
    """``record``, entered where a run naming it as its child finds it (``children``)."""
    _RUNS[record.run_id] = record
    return record


@dataclass(frozen=True)
class TurnChanges:
    """What a turn changed in the state (see ``agentnb.state.diff`` for the rule)."""

    keys: list[diff.Change]
    """Top-level keys added, changed or removed, in first-write order."""
    paths: list[diff.Change]
    """Every path written that ended up different, in first-write order."""


class StateField:
    """A turn's state as a field: kept frozen (sharing what did not change with the turns
    around it), read as a read-only plain dict (``agentnb.state.views``; ``copy.deepcopy`` it to get
    a copy to change). It and ``LazyField`` keep their values as attributes of the record, never
    through its ``__dict__``: once CPython 3.11 made that dict, every read of a field is slower."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_frozen_{name}"

    @overload
    def __get__(self, record: None, owner: type | None = None) -> None: ...

    @overload
    def __get__(self, record: object, owner: type | None = None) -> dict[str, Any]: ...

    def __get__(self, record: Any, owner: type | None = None) -> dict[str, Any] | None:
        if record is None:
            return None  # the dataclass default: an empty state
        return view(getattr(record, self.slot, EMPTY))

    def __set__(self, record: Any, value: Mapping[str, Any] | None) -> None:
        if type(value) is not FrozenMap:
            value = EMPTY if value is None else frozen_map(value)
        setattr(record, self.slot, value)


class Stored:
    """A field's value as a session stored it, decoded the first time it is read."""

    __slots__ = ("decode",)

    def __init__(self, decode: Callable[[], Any]) -> None:
        self.decode = decode


class LazyField(Generic[T]):
    """A list field of a TurnRecord that may hold a ``Stored`` value: a long history loads
    without decoding every turn's events and messages (only those read)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    @overload
    def __get__(self, record: None, owner: type | None = None) -> None: ...

    @overload
    def __get__(self, record: object, owner: type | None = None) -> list[T]: ...

    def __get__(self, record: Any, owner: type | None = None) -> list[T] | None:
        if record is None:
            return None  # the dataclass default: an empty list
        value = getattr(record, self.slot)
        if type(value) is Stored:
            setattr(record, self.slot, value := value.decode())
        return value

    def __set__(self, record: Any, value: list[T] | Stored | None) -> None:
        setattr(record, self.slot, [] if value is None else value)


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
    """Unique id of the run."""
    agent: str
    """The agent's name."""
    message: str
    """The user's message."""
    model: str
    """The model's label."""
    status: Literal["running", "ok", "failed", "paused"] = "running"
    """running while the turn runs, then ok (an answer) or failed; paused while it waits for a
    person (``pause`` says where; ``continue_run()`` carries it on, in this same record)."""
    content: str | None = None
    """The final answer."""
    error: str | None = None
    """Why the run failed, if it did."""
    started_at: float = 0.0
    """Wall-clock start (epoch seconds)."""
    duration_ms: float = 0.0
    """How long the turn took."""
    usage: Usage = NO_USAGE
    """Token counts of all its model calls."""
    state_start: StateField = StateField()
    """The state when the turn began, before the user's edits since the last turn and the run
    keywords were applied: what ``changes()`` compares with. (Read-only: see ``StateField``;
    ``frozen_start`` is the stored one.)"""
    state_before: StateField = StateField()
    """The state the prompt was rendered from (after the user's edits and the run keywords)."""
    state_after: StateField = StateField()
    """The state when the run ended."""
    events: LazyField[Event] = LazyField()
    """Every event but text deltas, in order."""
    messages: LazyField[Message] = LazyField()
    """The run's messages: system, user, assistant and tool."""
    output: Any = None
    """The typed output (``output_type``: the validated value), or the answer parsed by the
    agent's output formatter (a ParsedOutput), if it has one. A turn loaded from a session holds
    the typed output as JSON data (what ``OutputChecked`` recorded): the typed object cannot be
    rebuilt without its type ``T``; ``T.model_validate(record.output)`` (or a pydantic
    ``TypeAdapter(T)``) makes it again."""
    replayed: bool = False
    """Whether its model calls were answered from the notebook's recording (not saved)."""
    _children: list[TurnRecord] = field(default_factory=list, init=False, compare=False, repr=False)
    """The child runs found so far (and, while it runs, those adopted before their call ended)."""
    _linked: bool = field(default=False, init=False, compare=False, repr=False)
    """Whether ``_children`` holds every run its delegate calls name (then they are not looked up again)."""
    pause: Pause | None = field(default=None, compare=False, repr=False)
    """Where the run stopped and what it needs to go on: set when it pauses for a person, kept
    while it goes on (its waiting delegations' runs are named there), cleared when it ends."""

    @property
    def children(self) -> list[TurnRecord]:
        """The runs its delegations started, in call order, each a turn of the member's own
        history. Derived from the lineage: the runs its delegate calls name (``child_run_id`` /
        ``child_run_ids``), found among the run records in memory — whichever agent's history
        holds them and however it was loaded (a team's session, one module at a time by hand,
        in any order). While it runs, a child adopted before its call ended comes last."""
        if self._linked:
            return self._children
        ids = self.child_run_ids()
        adopted = {child.run_id: child for child in self._children}
        found = [child for child in (adopted.get(i) or _RUNS.get(i) for i in ids) if child is not None]
        named = set(ids)
        pending = [child for child in self._children if child.run_id not in named]
        self._children = found + pending
        self._linked = self.status != "running" and len(found) == len(ids) and not pending
        return self._children

    def adopt(self, child: TurnRecord) -> None:
        """A child run that ended, before the delegate call naming it ends (the run's own loop)."""
        self._children.append(child)
        self._linked = False

    def child_run_ids(self) -> list[str]:
        """The runs its delegate calls started, in call order (its side of the lineage); while
        it is paused or going on, then those of the delegations that wait (kept on ``pause``)."""
        ids: list[str] = []
        for call in self.tool_calls:
            ids.extend(call.child_run_ids or ([call.child_run_id] if call.child_run_id else []))
        if self.pause is not None:
            named = set(ids)
            ids.extend(i for started in self.pause.delegated.values() for i in started if i not in named)
        return ids

    @property
    def started(self) -> RunStarted | None:
        """The turn's RunStarted event (lineage: ``parent_run_id``, ``path``)."""
        events = self.events
        return events[0] if events and isinstance(events[0], RunStarted) else None

    @property
    def parent_run_id(self) -> str | None:
        """The run whose delegation started this one (None: a top-level run)."""
        started = self.started
        return started.parent_run_id if started is not None else None

    @property
    def path(self) -> tuple[str, ...]:
        """Agent names from the top-level run down to this one."""
        started = self.started
        return started.path if started is not None and started.path else (self.agent,)

    @property
    def usage_total(self) -> Usage:
        """Its own usage plus every descendant run's (its own alone until it ended)."""
        for event in reversed(self.events):
            if isinstance(event, (RunFinished, RunFailed)):
                return event.usage_total if event.usage_total is not None else event.usage
        return self.usage + sum((c.usage_total for c in self.children), NO_USAGE)

    def walk(self) -> list[TurnRecord]:
        """This run and its descendants, depth first in call order."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out

    @property
    def frozen_start(self) -> FrozenMap:
        """``state_start`` as stored: frozen, shared with the other turns (read it, no copy)."""
        return getattr(self, "_frozen_state_start", EMPTY)  # (StateField's attribute)

    @property
    def frozen_before(self) -> FrozenMap:
        """``state_before`` as stored."""
        return getattr(self, "_frozen_state_before", EMPTY)  # (StateField's attribute)

    @property
    def frozen_after(self) -> FrozenMap:
        """``state_after`` as stored."""
        return getattr(self, "_frozen_state_after", EMPTY)  # (StateField's attribute)

    @property
    def number(self) -> int:
        """The turn's number as records, the inspector and DataFrames show it (1 = the first;
        ``history[number - 1]``)."""
        return self.index + 1

    @property
    def finish_reason(self) -> str | None:
        """Why the model stopped its last answer of the turn: ``stop``, ``tool_calls``,
        ``length`` (cut at the token limit: ``max_tokens`` / ``max_output_tokens``),
        ``content_filter``, ``incomplete``; None when no answer came."""
        for event in reversed(self.events):
            if isinstance(event, ModelResponded):
                return event.finish_reason
        return None

    @property
    def truncated(self) -> bool:
        """Whether the answer was cut at the token limit (``finish_reason == "length"``): the
        text is what came before the cut."""
        return self.finish_reason == "length"

    @property
    def context(self) -> list[ContextRetrieved]:
        """Every context retrieval of the turn, in order: passive injections (``via='passive'``)
        then the model's ``retrieve_context`` calls (``via='tool'``); each has label and blocks."""
        return [e for e in self.events if isinstance(e, ContextRetrieved)]

    @property
    def prompt(self) -> PromptRendered | None:
        """The turn's rendered system prompt with its sections."""
        return next((e for e in self.events if isinstance(e, PromptRendered)), None)

    @property
    def system_prompt(self) -> str | None:
        """The system prompt's text."""
        prompt = self.prompt
        return prompt.system_prompt if prompt else None

    @property
    def model_calls(self) -> list[ModelCall]:
        """Each request with its answer, in order."""
        requests = [e for e in self.events if isinstance(e, ModelRequested)]
        responses = {e.call: e for e in self.events if isinstance(e, ModelResponded)}
        return [ModelCall(index=r.call, request=r.request, response=responses.get(r.call)) for r in requests]

    @property
    def tool_calls(self) -> list[ToolCallFinished]:
        """Every finished tool call, in order."""
        return [e for e in self.events if isinstance(e, ToolCallFinished)]

    @property
    def attempts(self) -> list[OutputChecked]:
        """Every answer checked against the run's ``output_type``, in order (the last one is
        the output when it is ok); empty for a run without an output type."""
        return [e for e in self.events if isinstance(e, OutputChecked)]

    @property
    def output_data(self) -> Any:
        """The accepted typed output as JSON data (what sessions and DataFrames keep); None
        when the run has no output type or no answer matched it."""
        for event in reversed(self.events):
            if isinstance(event, OutputChecked) and event.ok:
                return event.output
        return None

    @property
    def state_changes(self) -> list[StateChanged]:
        """Every state change (patch and author), in order."""
        return [e for e in self.events if isinstance(e, StateChanged)]

    def changed_keys(self) -> list[str]:
        """Top-level keys written during this turn, in first-write order."""
        keys = (top_level_key(op["path"]) for change in self.state_changes for op in change.patch)
        return [k for k in dict.fromkeys(keys) if k]

    def changes(self, state: Mapping[str, Any] | None = None) -> TurnChanges:
        """What this turn changed, by the rule of ``agentnb.state.diff``: top-level keys and every path
        written, each added / changed / removed with its authors and old and new values.
        ``state`` is the state to compare with (default: the state the turn ended with; pass the
        live state for a turn still running)."""
        log = diff.ChangeLog(self.frozen_start)
        for change in self.state_changes:
            log.add(change.patch, change.cause.label())
        after = self.frozen_after if state is None else state
        return TurnChanges(keys=log.keys(after), paths=log.paths(after))

    def own_copy(self) -> TurnRecord:
        """A copy that goes its own way: a paused turn is continued in place, so a snapshot or a
        fork that keeps one holds its own (its events, messages and decisions apart)."""
        pause = self.pause
        copied = dataclasses.replace(
            self,
            events=list(self.events),
            messages=list(self.messages),
            pause=dataclasses.replace(pause, decisions=dict(pause.decisions)) if pause is not None else None,
        )
        findable(self)  # the run's id still names this record; the copy finds its own children
        copied._children = [
            child.own_copy() if child.status == "paused" else child for child in self.children
        ]
        copied._linked = False
        for name in ("_frozen_state_start", "_frozen_state_before", "_frozen_state_after"):  # shared
            setattr(copied, name, getattr(self, name, EMPTY))
        return copied

    def to_dict(self) -> dict[str, Any]:
        """This turn as plain data (events through ``EVENTS_ADAPTER``; states as plain dicts)."""
        return {
            **self._fields(),
            "state_start": self.state_start,
            "state_before": self.state_before,
            "state_after": self.state_after,
            "events": events_module.EVENTS_ADAPTER.dump_python(self.events),
            "messages": [m.to_dict() for m in self.messages],
        }

    def _fields(self) -> dict[str, Any]:
        if self.pause is not None:
            return {**self._plain_fields(), "pause": self.pause.to_dict()}
        return self._plain_fields()

    def _plain_fields(self) -> dict[str, Any]:
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
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, lazy: bool = False) -> TurnRecord:
        """The inverse of ``to_dict`` (``lazy``: events and messages decoded when first read)."""
        events, messages = data.get("events", []), data.get("messages", [])
        record = cls(
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
            state_start=data.get("state_start", data.get("state_before", {})),
            state_before=data.get("state_before", {}),
            state_after=data.get("state_after", {}),
            events=Stored(partial(_events, events)) if lazy else _events(events),
            messages=Stored(partial(_messages, messages)) if lazy else _messages(messages),
            output=_stored_output(events),
            pause=Pause.from_dict(data["pause"]) if data.get("pause") is not None else None,
        )
        if lazy:  # its messages' images are decoded when first read: the record holds their bytes
            hold_stored(messages, record)
        return findable(record)  # (a loaded run may be some loaded run's child)

    def __repr__(self) -> str:
        return (
            f"TurnRecord(#{self.index} {self.status}: {self.message[:40]!r} -> "
            f"{(self.content or self.error or '')[:40]!r}; {len(self.tool_calls)} tool call(s))"
        )


def _stored_output(events: list[Any]) -> Any:
    """The accepted typed output among a stored turn's events, as JSON data (read from the raw
    events: a lazily loaded turn does not decode them for it)."""
    for event in reversed(events):
        if isinstance(event, dict) and event.get("kind") == "output_checked" and event.get("ok"):
            return copy.deepcopy(event.get("output"))  # the event keeps its own copy
    return None


def _events(stored: list[Any]) -> list[Event]:
    try:
        return events_module.EVENTS_ADAPTER.validate_python(stored)
    except ValueError as exc:  # pydantic's ValidationError
        raise SessionFormatError(f"a stored turn's events do not load: {_first_line(exc)}") from None


def _messages(stored: list[Any]) -> list[Message]:
    try:
        return [Message.from_dict(m) for m in stored]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise SessionFormatError(f"a stored turn's messages do not load: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return " ".join(str(exc).split("\n")[:3])[:300]


__all__ = ["LazyField", "ModelCall", "StateField", "Stored", "TurnChanges", "TurnRecord", "findable"]
