"""An agent's turns (``agent.history``), and how they are stored in a session.

A ``History`` serialises itself (``state_dict``): a turn's states are stored as top-level
deltas against the turn before, so N turns of a large state cost N changes in a session file,
not N copies. A session may keep a long history's older turns apart, in segments
(``EarlierTurns``): they are read from disk the first time one of them is asked for, so
loading costs the recent turns, not the whole history.
"""

from __future__ import annotations

import bisect
import dataclasses
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, overload

from .. import events as events_module
from ..errors import SessionFormatError
from ..events import Event, PromptRendered
from ..messages import ROLES
from ..state import diff
from ..state.diff import top_level_key
from ..state.frozen import EMPTY, FrozenMap, freeze, frozen_map
from ..state.views import view
from .frames import changes_frame, outputs_frame, runs_frame, states_frame, tool_calls_frame, turns_frame
from .records import (
    ModelCall,
    StateField,
    Stored,
    TurnChanges,
    TurnRecord,
    _events,
)

if TYPE_CHECKING:
    import pandas

KIND = "agentnb.History"
"""The ``kind`` a History's saved state carries (sessions find its turns by it)."""
EARLIER = "earlier"
"""The key of a history's state dict under which a session hands over the turns it stored
apart (an ``EarlierTurns``); never written."""


@dataclass(frozen=True)
class Segment:
    """Consecutive turns a session stored apart."""

    first: int
    """The index of its first turn."""
    count: int
    """How many turns it holds."""
    read: Callable[[], list[Any]]
    """Its stored entries (the first one self-contained), read from disk when called."""


class EarlierTurns:
    """The turns before a stored history's recent part, as segments read on demand."""

    def __init__(self, segments: Sequence[Segment]) -> None:
        expected = 0
        for segment in segments:
            if segment.first != expected or segment.count < 1:
                raise SessionFormatError(
                    f"the history's stored segments do not follow each other (turn {expected + 1} expected, "
                    f"found {segment.first + 1})"
                )
            expected += segment.count
        self.segments = list(segments)
        self.count = expected
        self._firsts = [s.first for s in self.segments]
        self._loaded: dict[int, list[TurnRecord]] = {}

    def __repr__(self) -> str:
        return (
            f"EarlierTurns({self.count} turn(s) in {len(self.segments)} segment(s), {len(self._loaded)} read)"
        )

    def turn(self, index: int) -> TurnRecord:
        """Turn ``index`` (0 <= index < count), reading its segment the first time."""
        number = bisect.bisect_right(self._firsts, index) - 1
        turns = self._loaded.get(number)
        if turns is None:
            segment = self.segments[number]
            turns = turns_from_entries(segment.read(), start=segment.first)
            if len(turns) != segment.count:
                raise SessionFormatError(
                    f"the stored segment of turns {segment.first + 1}-{segment.first + segment.count} holds "
                    f"{len(turns)} turn(s)"
                )
            self._loaded[number] = turns
        return turns[index - self.segments[number].first]

    def unread(self) -> int:
        """How many of its turns have not been read from disk yet."""
        return self.count - sum(s.count for n, s in enumerate(self.segments) if n in self._loaded)


class History(Sequence[TurnRecord]):
    """The turns of an agent, oldest first, with pandas views."""

    def __init__(self, turns: list[TurnRecord] | None = None, earlier: EarlierTurns | None = None) -> None:
        self._turns: list[TurnRecord] = turns if turns is not None else []
        self._earlier = earlier
        self._offset = earlier.count if earlier is not None else 0

    @overload
    def __getitem__(self, index: int) -> TurnRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[TurnRecord]: ...
    def __getitem__(self, index: int | slice) -> TurnRecord | list[TurnRecord]:
        offset = self._offset
        if isinstance(index, slice):
            if not offset:
                return self._turns[index]
            return [self[i] for i in range(*index.indices(len(self)))]
        if not offset:
            return self._turns[index]
        position = index + len(self) if index < 0 else index
        if position >= offset:
            return self._turns[position - offset]
        if position < 0:
            raise IndexError("history index out of range")
        assert self._earlier is not None
        return self._earlier.turn(position)

    def __len__(self) -> int:
        return self._offset + len(self._turns)

    def __iter__(self) -> Iterator[TurnRecord]:
        for i in range(self._offset):
            yield self[i]
        yield from self._turns

    def __reversed__(self) -> Iterator[TurnRecord]:
        yield from reversed(self._turns)
        for i in range(self._offset - 1, -1, -1):
            yield self[i]

    @property
    def stored_apart(self) -> int:
        """How many of the oldest turns are still on disk only (read when first asked for)."""
        return 0 if self._earlier is None else self._earlier.unread()

    def append(self, turn: TurnRecord) -> None:
        """Add a turn at the end."""
        self._turns.append(turn)

    def replace(self, turns: Sequence[TurnRecord]) -> None:
        """Replace every turn (the list is copied)."""
        turns = list(turns)
        self._earlier, self._offset = None, 0
        self._turns[:] = turns

    def adopt(self, other: History) -> None:
        """Take ``other``'s turns, the ones it keeps on disk included (``other`` is left as it is)."""
        self._earlier, self._offset = other._earlier, other._offset
        self._turns[:] = other._turns

    def clear(self) -> None:
        """Forget every turn."""
        self.replace([])

    def finished_count(self) -> int:
        """How many turns, from the first, have ended (a running turn is saved by the next
        save after it ends); stored turns are never running."""
        turns = self._turns
        if not turns or turns[-1].status != "running":
            return len(self)  # the usual case, without walking the history
        for i, turn in enumerate(turns):
            if turn.status == "running":
                return self._offset + i
        return len(self)

    def finished(self) -> list[TurnRecord]:
        """The turns that ended (every stored one is read)."""
        count = self.finished_count()
        if not self._offset:
            return self._turns[:count]
        return [self[i] for i in range(count)]

    def state_dict(self) -> dict[str, Any]:
        """The finished turns as plain data, each turn's states stored as deltas."""
        return {"kind": KIND, "turns": turn_entries(self.finished(), {})}

    @classmethod
    def from_state_dict(cls, state_dict: Mapping[str, Any]) -> History:
        """A history from ``state_dict()`` (and the turns a session stored apart, if any)."""
        if not isinstance(state_dict, Mapping):
            raise SessionFormatError(f"a history must be an object, got {type(state_dict).__name__}")
        kind = state_dict.get("kind", KIND)
        if kind != KIND or "turns" not in state_dict:
            found = (
                f"its kind is {kind!r}" if kind != KIND else f"it has no 'turns' (keys: {_keys(state_dict)})"
            )
            raise SessionFormatError(
                f"the history is not a saved history ({{'kind': {KIND!r}, 'turns': [...]}}): {found}"
            )
        earlier = state_dict.get(EARLIER)
        if earlier is not None and not isinstance(earlier, EarlierTurns):
            raise SessionFormatError(f"{EARLIER!r} is not something a history stores")
        start = earlier.count if earlier is not None else 0
        return cls(turns_from_entries(state_dict.get("turns") or [], start=start), earlier)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> None:
        """Replace the turns with those of ``state_dict`` (from ``state_dict()``)."""
        self.adopt(History.from_state_dict(state_dict))

    def __repr__(self) -> str:
        return f"History({len(self)} turn(s))"

    def turns(self) -> pandas.DataFrame:
        """One row per turn: message, answer, status, model, tokens, duration, tool calls."""
        return turns_frame(list(self))

    def tool_calls(self) -> pandas.DataFrame:
        """One row per tool call: turn, name, arguments, result, error, hooks, duration."""
        return tool_calls_frame(list(self))

    def states(self) -> pandas.DataFrame:
        """The state after each turn, one column per top-level key."""
        return states_frame(list(self))

    def runs(self) -> pandas.DataFrame:
        """One row per run of each turn's tree (the turn, its delegations at any depth): path,
        run_id, parent_run_id, own and total tokens, duration."""
        return runs_frame(list(self))

    def outputs(self) -> pandas.DataFrame:
        """The typed output of each turn that had an ``output_type``, indexed by turn: one
        column per top-level field, then ``attempts`` (the answers checked); a turn whose
        answers all failed has its fields missing. Works on a loaded session too."""
        return outputs_frame(list(self))

    def changes(self) -> pandas.DataFrame:
        """One row per state operation of every run of each turn's tree, with its author and
        delegation chain."""
        return changes_frame(list(self))


# -- turns as stored in a session --------------------------------------------------------------


def turn_entry(turn: TurnRecord, prev_after: Mapping[str, Any], *, first: bool = False) -> dict[str, Any]:
    """A turn as stored: its three states as deltas (start against the turn before, before
    against start, after against before).

    The loop records every state change as a StateChanged event, before the prompt was rendered
    (the user's edits, run keywords) and after; so, but for the first turn, the changed keys
    come from the events and nothing is compared key by key."""
    data = {
        **turn._fields(),
        "events": events_module.EVENTS_ADAPTER.dump_python(turn.events),
        "messages": [m.to_dict() for m in turn.messages],
    }
    used = _prompt_used_keys(turn)
    if used is not None:
        # "Every key but these": a large state's key names are not written again every turn.
        for event in data["events"]:
            if event.get("kind") == "prompt_rendered":
                del event["unused_keys"]
        data[PROMPT_USED_KEYS] = used
    split = None if first else _changed_keys_by_phase(turn)
    start, before, after = turn.frozen_start, turn.frozen_before, turn.frozen_after
    data["state_start_patch"] = _delta(frozen_map(prev_after), start)
    if split is None:
        data["state_before_patch"] = _delta(start, before)
        data["state_after_patch"] = _delta(before, after)
    else:
        data["state_before_patch"] = _keys_delta(before, split[0])
        data["state_after_patch"] = _keys_delta(after, split[1])
    return data


def turn_entries(
    turns: Sequence[TurnRecord], prev_after: Mapping[str, Any], start: int = 0
) -> list[dict[str, Any]]:
    """``turn_entry`` for consecutive turns, the first of which is turn ``start``."""
    entries = []
    for i, turn in enumerate(turns, start=start):
        entries.append(turn_entry(turn, prev_after, first=i == 0))
        prev_after = turn.frozen_after
    return entries


def turns_from_entries(entries: Sequence[Mapping[str, Any]], start: int = 0) -> list[TurnRecord]:
    """The inverse of ``turn_entries``: turns ``start``, ``start + 1``, ... whose first entry
    is self-contained (its start state stored whole). Each state is the one before with the
    delta applied, sharing everything else, and events and messages are decoded when first
    read: loading costs the changes, not the turns' whole contents."""
    if not isinstance(entries, list):
        raise SessionFormatError(f"the history's turns must be a list, got {type(entries).__name__}")
    turns = []
    prev: FrozenMap = EMPTY
    for i, stored in enumerate(entries, start=start):
        _check_entry(stored, i + 1)
        entry = dict(stored)
        at_start = _apply(prev, entry.pop("state_start_patch", {}))
        before = _apply(at_start, entry.pop("state_before_patch", {}))
        after = _apply(before, entry.pop("state_after_patch", {}))
        entry.setdefault("state_start", at_start)
        entry.setdefault("state_before", before)
        entry.setdefault("state_after", after)
        used = entry.pop(PROMPT_USED_KEYS, None)
        turn = TurnRecord.from_dict(entry, lazy=True)
        if isinstance(used, list):
            turn.events = Stored(partial(_with_unused_keys, entry.get("events") or [], before, used))
        turn.index = i
        turns.append(turn)
        prev = turn.frozen_after
    return turns


_EVENT_KINDS = frozenset(
    field.default
    for cls in typing.get_args(Event)
    for field in dataclasses.fields(cls)
    if field.name == "kind"
)


def _check_entry(entry: Any, number: int) -> None:
    """What a stored turn must be before it is read lazily: its events and messages are
    decoded when first shown, so a kind no event has, or a message that is no object, is
    caught here, at load, where the file can still be named."""
    if not isinstance(entry, dict):
        raise SessionFormatError(f"turn {number} is a {type(entry).__name__}, not an object")
    for name in ("events", "messages"):
        items = entry.get(name, [])
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise SessionFormatError(f"turn {number}: {name!r} must be a list of objects")
    for event in entry.get("events", []):
        if event.get("kind") not in _EVENT_KINDS:
            raise SessionFormatError(f"turn {number} has an event of unknown kind {event.get('kind')!r:.40}")
    for message in entry.get("messages", []):
        if message.get("role") not in ROLES:
            raise SessionFormatError(
                f"turn {number} has a message of unknown role {message.get('role')!r:.40} "
                f"(a message is one of {', '.join(ROLES)})"
            )


def _keys(data: Mapping[str, Any]) -> str:
    names = [repr(k)[:40] for k in list(data)[:5]]
    return ", ".join(names) + (", …" if len(data) > 5 else "") if names else "none"


PROMPT_USED_KEYS = "prompt_used_keys"
"""A stored turn's key for the state keys its prompt used, written instead of the prompt's
``unused_keys`` when those are many: they are every other key the prompt could show."""
_INLINE_KEYS = 16
_used_memo: list[tuple[tuple[str, ...], tuple[str, ...], list[str]] | None] = [None]


def _prompt_used_keys(turn: TurnRecord) -> list[str] | None:
    """The visible state keys the turn's prompt used, when its many unused keys are exactly
    the others (in the order of ``state_before``); else None."""
    prompt = next((e for e in turn.events if isinstance(e, PromptRendered)), None)
    if prompt is None or len(prompt.unused_keys) <= _INLINE_KEYS:
        return None
    memo = _used_memo[0]
    if memo is not None and memo[0] is prompt.unused_keys and memo[1] == prompt.hidden_keys:
        return memo[2]  # the same tuple (observe gives the same one for the same keys)
    hidden, unused = set(prompt.hidden_keys), set(prompt.unused_keys)
    visible = [k for k in turn.frozen_before if k not in hidden]
    if tuple(k for k in visible if k in unused) != prompt.unused_keys:
        return None
    used = [k for k in visible if k not in unused]
    _used_memo[0] = (prompt.unused_keys, prompt.hidden_keys, used)
    return used


def _with_unused_keys(events: list[Any], before: FrozenMap, used: list[str]) -> list[Event]:
    """The stored events, decoded, with the prompt's ``unused_keys`` put back."""
    out = []
    for event in events:
        if isinstance(event, dict) and event.get("kind") == "prompt_rendered" and "unused_keys" not in event:
            skip = {*event.get("hidden_keys", ()), *used}
            event = {**event, "unused_keys": [k for k in before if k not in skip]}
        out.append(event)
    return _events(out)


def _delta(before: FrozenMap, after: FrozenMap) -> dict[str, Any]:
    """Top-level changes between two frozen states: ``{"set": {key: new}, "unset": [key]}``."""
    keys = after.changed_keys(before)
    changed = [
        k for k in keys if k in after and (k not in before or not diff.json_equal(before[k], after[k]))
    ]
    return {"set": {k: view(after[k]) for k in changed}, "unset": [k for k in keys if k not in after]}


def _keys_delta(after: FrozenMap, keys: Sequence[str]) -> dict[str, Any]:
    """``_delta`` when the keys that may have changed are known."""
    known = list(dict.fromkeys(keys))
    return {
        "set": {k: view(after[k]) for k in known if k in after},
        "unset": [k for k in known if k not in after],
    }


def _apply(base: FrozenMap, delta: Mapping[str, Any]) -> FrozenMap:
    changes = delta.get("set") or {}
    return base.updated({k: freeze(v) for k, v in changes.items()}, delta.get("unset") or ())


def _changed_keys_by_phase(turn: TurnRecord) -> tuple[list[str], list[str]] | None:
    """Top-level keys changed before and after the prompt was rendered; None when the turn has
    no rendered prompt or a change replaced the whole state."""
    before: list[str] = []
    after: list[str] = []
    target = before
    rendered = False
    for event in turn.events:
        if event.kind == "prompt_rendered":
            target, rendered = after, True
        elif event.kind == "state_changed":
            for op in event.patch:
                key = top_level_key(op["path"])
                if key is None:
                    return None
                target.append(key)
    return (before, after) if rendered else None


_PATCHES = ("state_start_patch", "state_before_patch", "state_after_patch")


def rebased(entries: Sequence[Mapping[str, Any]], index: int) -> dict[str, Any] | None:
    """Entry ``index`` of stored ``entries`` (the first self-contained) made self-contained:
    its start state stored whole, so the turns from it on load without those before it. None
    when an entry is not in the delta form (``turn_entry``'s)."""
    state: dict[str, Any] = {}
    for entry in entries[:index]:
        for name in _PATCHES:
            if not _apply_plain(state, entry.get(name) if isinstance(entry, Mapping) else None):
                return None
    entry = entries[index]
    if not isinstance(entry, Mapping) or not _apply_plain(state, entry.get("state_start_patch")):
        return None
    return {**entry, "state_start_patch": {"set": state, "unset": []}}


def _apply_plain(state: dict[str, Any], delta: Any) -> bool:
    """Apply a stored top-level delta to a plain dict in place (False: not a delta)."""
    if (
        not isinstance(delta, Mapping)
        or not isinstance(delta.get("set", {}), Mapping)
        or not isinstance(delta.get("unset", []), list)
    ):
        return False
    state.update(delta.get("set") or {})
    for key in delta.get("unset") or ():
        state.pop(key, None)
    return True


__all__ = [
    "EARLIER",
    "KIND",
    "EarlierTurns",
    "History",
    "ModelCall",
    "Segment",
    "StateField",
    "Stored",
    "TurnChanges",
    "TurnRecord",
    "rebased",
    "turn_entries",
    "turn_entry",
    "turns_from_entries",
]
