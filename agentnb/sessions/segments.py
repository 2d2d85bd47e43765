"""A long history's older turns, stored apart from the snapshot in segments.

Loading a session parses its snapshot. If that held every turn, a session of a thousand turns
would take a thousand turns to open. So a compaction that finds more than ``SPLIT_AT`` turns in
a history keeps the last ``RECENT`` in the snapshot and writes the others to a segment of their
own: a JSON document the snapshot's metadata names by key::

    "__agentnb__": {..., "segments": [{"module": "agent", "path": ["history", "turns"],
                                        "first": 0, "count": 900, "key": "0-899-5f2a91c0"}]}

The first turn a snapshot keeps, and the first turn of every segment, is self-contained (its
start state stored whole, ``history.rebased``), so each part loads without the ones before
it. Loading hands a history its segments unread (``history.EarlierTurns``): an old turn is read
from disk the first time it is asked for. Segments are written once and never changed; a whole
save of a module rewrites its turns inline and the segments it no longer needs are deleted.

Only the turn lists of an agent (``kind`` ``agentnb.Agent``) and of a History
(``agentnb.History``) are split: their entries are the ones ``history.rebased`` understands.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from ..errors import SessionFormatError
from ..history.history import EARLIER, EarlierTurns, Segment, rebased
from ..state.diff import json_equal
from . import format as fmt
from .codec import decode, tagged
from .repeats import drop_repeats, restore_repeats

RECENT = 50
"""Turns a compaction leaves in the snapshot when it stores older ones apart."""
SPLIT_AT = 150
"""A compaction stores a history's older turns apart once the snapshot holds more than this."""

TURN_LISTS: dict[str, tuple[str, ...]] = {
    "agentnb.Agent": ("history", "turns"),
    "agentnb.History": ("turns",),
}
"""Where the turns are in the state of each ``kind`` of module that has them."""

KEY = re.compile(r"^[0-9]{1,12}-[0-9]{1,12}-[0-9a-f]{8}$")
"""A segment's key: its first and last turn index and a random part (it names a file)."""


def check_segments(raw: Any, where: str) -> list[dict[str, Any]]:
    """A snapshot's ``segments`` metadata, checked; SessionFormatError naming ``where``."""
    if not isinstance(raw, list):
        raise SessionFormatError(f"{where}: {fmt.META_KEY}.segments must be a list, got {type(raw).__name__}")
    out = []
    for info in raw:
        ok = (
            isinstance(info, dict)
            and isinstance(info.get("module"), str)
            and isinstance(info.get("path"), list)
            and all(isinstance(p, str) for p in info["path"])
            and all(type(info.get(k)) is int and info[k] >= 0 for k in ("first", "count"))
            and isinstance(info.get("key"), str)
            and KEY.match(info["key"])
        )
        if not ok:
            raise SessionFormatError(
                f"{where}: a segment's metadata is damaged ({info!r:.120}); restore the file from a backup"
            )
        out.append(dict(info))
    return out


def _parent(state: Any, path: list[str] | tuple[str, ...]) -> Any:
    """The dict that holds the list at ``path`` in ``state`` (None when there is none)."""
    parent = state
    for key in path[:-1]:
        parent = parent.get(key) if isinstance(parent, dict) else None
    return parent if isinstance(parent, dict) and isinstance(parent.get(path[-1]), list) else None


def _turn_lists(modules: dict[str, Any]) -> Iterator[tuple[str, list[str], dict[str, Any]]]:
    """(module, path, the dict holding the list) for each turn list in ``modules``."""
    for name, state in modules.items():
        if not isinstance(state, dict) or state.get("kind") not in TURN_LISTS:
            continue
        path = list(TURN_LISTS[state["kind"]])
        parent = _parent(state, path)
        if parent is not None:
            yield name, path, parent


def stored_apart(segments: list[dict[str, Any]], module: str | None, path: list[str]) -> int:
    """How many turns of ``module``'s list at ``path`` the segments hold."""
    return sum(s["count"] for s in segments if s["module"] == module and s["path"] == path)


def split(
    modules: dict[str, Any],
    segments: list[dict[str, Any]],
    split_at: int | None = None,
    recent: int | None = None,
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Move each long turn list's older entries out of ``modules`` (in place: data just read)
    into new segments, added to ``segments``; returns ``(metadata, document)`` for each.
    (``split_at`` and ``recent`` are ``SPLIT_AT`` and ``RECENT`` unless given.)"""
    split_at = SPLIT_AT if split_at is None else split_at
    recent = RECENT if recent is None else recent
    made = []
    for name, path, parent in _turn_lists(modules):
        turns = parent[path[-1]]
        if len(turns) <= split_at:
            continue
        cut = len(turns) - recent
        head = rebased(turns, cut)
        if head is None:  # entries in an older form: left inline
            continue
        first = stored_apart(segments, name, path)
        info = {
            "module": name,
            "path": path,
            "first": first,
            "count": cut,
            "key": f"{first}-{first + cut - 1}-{secrets.token_hex(4)}",
        }
        made.append((info, {"v": fmt.VERSION, **info, "entries": turns[:cut]}))
        parent[path[-1]] = [head, *turns[cut + 1 :]]
        segments.append(info)
    for name, path, parent in _turn_lists(modules):
        state = modules[name].get("state")
        turns = parent[path[-1]]
        if (
            path == ["history", "turns"]
            and isinstance(state, dict)
            and turns
            and stored_apart(segments, name, path)
        ):
            turns[0] = _against_state(turns[0], state)
    return made


BASE = "base"
"""The key, in the first kept turn's ``state_start_patch``, saying that its ``set`` and
``unset`` apply to the agent's saved ``state`` rather than to nothing: a turn stored
self-contained would otherwise hold the whole state a second time."""


def _against_state(entry: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """A self-contained entry with its start state written against the agent's ``state``
    (when that rebuilds it exactly, key order included)."""
    patch = entry.get("state_start_patch")
    if (
        not isinstance(patch, dict)
        or patch.get(BASE) is not None
        or patch.get("unset")
        or not isinstance(patch.get("set"), dict)
    ):
        return entry
    start = patch["set"]
    changed = {k: v for k, v in start.items() if k not in state or not json_equal(state[k], v)}
    unset = [k for k in state if k not in start]
    rebuilt = dict(state)
    rebuilt.update(changed)
    for key in unset:
        del rebuilt[key]
    if list(rebuilt) != list(start):
        return entry
    return {**entry, "state_start_patch": {BASE: ["state"], "set": changed, "unset": unset}}


def expand_bases(modules: dict[str, Any], where: str) -> None:
    """Undo ``_against_state`` in data just read, before the log changes the ``state`` it
    refers to (the start state is a copy of it, sharing its values)."""
    for name, path, parent in _turn_lists(modules):
        turns = parent[path[-1]]
        patch = turns[0].get("state_start_patch") if turns and isinstance(turns[0], dict) else None
        if not isinstance(patch, dict) or patch.get(BASE) is None:
            continue
        state = modules[name].get("state")
        changes, unset = patch.get("set"), patch.get("unset")
        if (
            patch[BASE] != ["state"]
            or not isinstance(state, dict)
            or not isinstance(changes, dict)
            or not isinstance(unset, list)
        ):
            raise SessionFormatError(
                f"{where}: module {name!r}: the first stored turn's start state refers to "
                f"{patch[BASE]!r:.60}, which it cannot be built from"
            )
        start = dict(state)
        start.update(changes)
        for key in unset:
            start.pop(key, None)
        turns[0] = {**turns[0], "state_start_patch": {"set": start, "unset": []}}


def document_text(document: dict[str, Any]) -> str:
    """A segment as written: each long text once (``repeats``)."""
    document, repeats = drop_repeats(document)
    if repeats:
        document = {**document, fmt.REPEATS: repeats}
    return fmt.dumps(document)


def parse(text: str, info: dict[str, Any], where: str) -> list[Any]:
    """A segment's entries from its text, checked against the metadata that named it."""
    fix = "the session's files do not match; restore them from a backup or start the session fresh"
    document = fmt.loads(text, where, fix)
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        raise SessionFormatError(f"{where} is not a segment of turns; {fix}")
    for key in ("module", "path", "first", "count", "key"):
        if document.get(key) != info[key]:
            raise SessionFormatError(
                f"{where} is not the segment the snapshot names ({key} {document.get(key)!r:.40}, "
                f"expected {info[key]!r}); {fix}"
            )
    if fmt.REPEATS in document:
        restore_repeats(document, document.pop(fmt.REPEATS), where)
    entries = document["entries"]
    if len(entries) != info["count"]:
        raise SessionFormatError(f"{where} holds {len(entries)} turn(s), not {info['count']}; {fix}")
    return decode(entries, where) if tagged(text) else entries


def adjust_line(line: dict[str, Any], segments: list[dict[str, Any]], where: str) -> dict[str, Any]:
    """A log line as it applies to a snapshot whose turn lists start after their segments:
    a module replaced whole, or a list replaced from above, drops its segments (in place);
    a splice that keeps the first n turns keeps n minus those stored apart."""
    name = line.get("module")
    if line.get("op") == "replace":
        segments[:] = [s for s in segments if s["module"] != name]
        return line
    ops = line.get("ops")
    if line.get("op") != "delta" or not isinstance(ops, list):
        return line
    mine = [s for s in segments if s["module"] == name]
    if not mine:
        return line
    out = []
    for op in ops:
        path = op.get("path") if isinstance(op, dict) else None
        if not isinstance(path, list):
            out.append(op)
            continue
        for target in {tuple(s["path"]) for s in mine}:
            n = len(path)
            if op.get("op") == "merge" and list(target[:n]) == path and n < len(target):
                written = {*(op.get("set") or {}), *(op.get("unset") or [])}
                if target[n] in written:  # the list, or a dict above it, replaced whole
                    segments[:] = [
                        s for s in segments if not (s["module"] == name and tuple(s["path"]) == target)
                    ]
            elif op.get("op") == "splice" and tuple(path) == target and type(op.get("keep")) is int:
                apart = stored_apart(segments, name, list(target))
                if op["keep"] < apart:
                    raise SessionFormatError(
                        f"{where} cuts the history at turn {op['keep']}, inside the turns stored apart "
                        f"(the first {apart})"
                    )
                op = {**op, "keep": op["keep"] - apart}
        out.append(op)
    return {**line, "ops": out}


def attach(
    state: Any, name: str, segments: list[dict[str, Any]], read: Callable[[dict[str, Any]], list[Any]]
) -> Any:
    """``state`` (module ``name``'s, decoded) with each of its turn lists' segments handed
    over unread, as an ``EarlierTurns`` beside the list."""
    mine = [s for s in segments if s["module"] == name]
    if not mine or not isinstance(state, dict):
        return state
    for path in {tuple(s["path"]) for s in mine}:
        parent = _parent(state, path)
        if parent is None:
            raise SessionFormatError(
                f"module {name!r} has turns stored apart but no list at {'.'.join(path)} to add them to"
            )
        ordered = sorted((s for s in mine if tuple(s["path"]) == path), key=lambda s: s["first"])
        parent[EARLIER] = EarlierTurns([Segment(s["first"], s["count"], partial(read, s)) for s in ordered])
    return state


__all__ = [
    "BASE",
    "RECENT",
    "expand_bases",
    "SPLIT_AT",
    "TURN_LISTS",
    "adjust_line",
    "attach",
    "check_segments",
    "document_text",
    "parse",
    "split",
    "stored_apart",
]
