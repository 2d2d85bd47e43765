"""Edits of the state by hand between turns (``agent.edit_state``), each one undoable.

An edit sets or removes one path — a top-level key, or a JSON pointer below one — and is checked
against the state's schema when it has one (the whole key is validated after the edit, so a
bad edit leaves the state as it was). Nothing here is a turn: the next turn sees the edits as
changes by ``user``, as it sees any change made between turns.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import StateEditError
from ..util.text import shorten
from .diff import MISSING, escape, json_equal, pointer, tokens
from .state import MESSAGES_KEY, State, replace_values


@dataclass(frozen=True)
class StateEdit:
    """One edit of the state: the path, its value before and after, and how it changed."""

    path: str
    """A JSON pointer: ``/budget`` for a top-level key, ``/items/0`` below one."""
    how: Literal["added", "changed", "removed"]
    """What the edit did to the path."""
    old: Any = MISSING
    """The value before (``diff.MISSING`` when the path was added)."""
    new: Any = MISSING
    """The value after (``diff.MISSING`` when the path was removed)."""

    @property
    def key(self) -> str:
        """The top-level key the edit is in."""
        return tokens(self.path)[0]


def as_pointer(path: str) -> str:
    """A path as a JSON pointer: a top-level key name (``budget``) or a pointer (``/items/0``)."""
    if not isinstance(path, str) or not path:
        raise StateEditError(f"a state path is a key name or a JSON pointer such as /items/0, got {path!r}")
    return path if path.startswith("/") else pointer([path])


def edit(state: State, path: str, value: Any = MISSING) -> StateEdit:
    """Set ``path`` to ``value`` (or remove it when ``value`` is ``MISSING``); returns the edit.
    The schema, if any, is checked before anything changes."""
    where = as_pointer(path)
    parts = tokens(where)
    key = parts[0]
    if key == MESSAGES_KEY:
        raise StateEditError("the conversation (messages) is not edited here; use agent.state.messages")
    data = state.data
    if len(parts) == 1:
        old = data.get(key, MISSING)
        if value is MISSING:
            if old is MISSING:
                raise StateEditError(f"there is no state key {key!r} to remove (keys: {_keys(data)})")
            del data[key]
            return StateEdit(where, "removed", old=old)
        state.set(key, copy.deepcopy(value), handler_override=replace_values)
        return StateEdit(where, "added" if old is MISSING else "changed", old=old, new=value)
    if key not in data:
        raise StateEditError(f"{where}: there is no state key {key!r} (keys: {_keys(data)})")
    whole = copy.deepcopy(data[key])
    if parts[-1] == "-":  # recorded at the index it went to, so that undo finds it
        parent = whole
        for depth, part in enumerate(parts[1:-1], start=1):
            parent = _child(parent, part, where, parts[: depth + 1])
        if isinstance(parent, list):
            parts[-1] = str(len(parent))
            where = pointer(parts)
    old = _put(whole, parts, value, where)
    state.set(key, whole, handler_override=replace_values)  # checks the whole key against the schema
    if value is MISSING:
        return StateEdit(where, "removed", old=old)
    return StateEdit(where, "added" if old is MISSING else "changed", old=old, new=value)


def undo(state: State, done: StateEdit) -> None:
    """Take ``done`` back: the path holds its old value again (or is gone, if it was added)."""
    parts = tokens(done.path)
    key = parts[0]
    if len(parts) == 1:
        if done.old is MISSING:
            state.data.pop(key, None)
        else:
            state.set(key, copy.deepcopy(done.old), handler_override=replace_values)
        return
    whole = copy.deepcopy(state.data.get(key))
    if done.how == "added":
        _put(whole, parts, MISSING, done.path)
    else:
        _put(whole, parts, copy.deepcopy(done.old), done.path, insert=done.how == "removed")
    state.set(key, whole, handler_override=replace_values)


def _put(document: Any, parts: list[str], value: Any, where: str, *, insert: bool = False) -> Any:
    """Set (or with ``MISSING`` remove) ``parts[1:]`` inside ``document``, the value of the key
    ``parts[0]``; returns the old value there. ``insert`` puts a list item back at its index."""
    container = document
    for depth, part in enumerate(parts[1:-1], start=1):
        container = _child(container, part, where, parts[: depth + 1])
    last = parts[-1]
    if isinstance(container, dict):
        old = container.get(last, MISSING)
        if value is MISSING:
            if old is MISSING:
                raise StateEditError(f"{where}: there is nothing at {last!r} to remove")
            del container[last]
        else:
            container[last] = copy.deepcopy(value)
        return old
    if isinstance(container, list):
        size = len(container)
        index = size if last == "-" else _index(last, where)
        if index > size or (index == size and value is MISSING):
            raise StateEditError(f"{where}: index {index} is out of range (the list has {size} item(s))")
        if value is MISSING:
            return container.pop(index)
        if insert or index == size:
            container.insert(index, copy.deepcopy(value))
            return MISSING
        old = container[index]
        container[index] = copy.deepcopy(value)
        return old
    raise StateEditError(
        f"{where}: {pointer(parts[:-1])} holds {_kind(container)}, which has no items to set"
    )


def _child(container: Any, part: str, where: str, so_far: list[str]) -> Any:
    if isinstance(container, dict) and part in container:
        return container[part]
    if isinstance(container, list):
        index = _index(part, where)
        if index < len(container):
            return container[index]
    raise StateEditError(f"{where}: there is nothing at {pointer(so_far)}")


def _index(part: str, where: str) -> int:
    if not part.isdigit() or (part != "0" and part.startswith("0")):
        raise StateEditError(f"{where}: {part!r} is not a list index (0, 1, ... or - for the end)")
    return int(part)


def _kind(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def _keys(data: Mapping[str, Any]) -> str:
    return ", ".join(escape(k) for k in data) or "none"


def edit_text(done: StateEdit) -> str:
    """An edit as one line: ``~ /budget: 10 → 20``, ``+ /note: "hi"``, ``- /items/0: "milk" (removed)``."""

    def show(value: Any) -> str:
        return shorten(json.dumps(value, ensure_ascii=False, default=repr), 80)

    if done.how == "added":
        return f"+ {done.path}: {show(done.new)}"
    if done.how == "removed":
        return f"- {done.path}: {show(done.old)} (removed)"
    if json_equal(done.old, done.new):
        return f"= {done.path}: {show(done.new)} (unchanged)"
    return f"~ {done.path}: {show(done.old)} → {show(done.new)}"


__all__ = ["StateEdit", "as_pointer", "edit", "edit_text", "undo"]
