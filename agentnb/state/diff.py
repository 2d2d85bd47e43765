"""State differences: JSON patches between two states, and what a turn changed.

Everything that shows a change — the static record of a turn, the DataFrames, the inspector —
takes it from here, so there is one rule. A path (a top-level key, or a JSON pointer into the
state) is:

- **added** when it is absent before and present after,
- **removed** when it is present before and absent after,
- **changed** when it is present both times with a different value (compared as JSON: ``1``,
  ``1.0`` and ``True`` differ),

where *before* is the state when the turn began and *after* the state now (or when the turn
ended). A key added and removed again within one turn is absent both times: not a change.

Patches are RFC 6902 JSON patches, as ``jsonpatch.make_patch`` writes them, made in time
proportional to what changed (``make_patch``).
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable, Mapping, MutableMapping, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .views import view

How = Literal["added", "changed", "removed"]

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__bool__": lambda self: False})()
"""Stands for 'no value at this path' (a value may itself be None)."""


# -- JSON pointers (RFC 6901) -------------------------------------------------------------------


def escape(token: Any) -> str:
    """One pointer token, escaped: ``a/b`` → ``a~1b``."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(tokens: Iterable[Any]) -> str:
    """A JSON pointer from its tokens (``()`` → ``""``, the whole document)."""
    return "".join("/" + escape(t) for t in tokens)


def tokens(path: str) -> list[str]:
    """The unescaped tokens of a JSON pointer."""
    if not path:
        return []
    if "~" not in path:
        return path[1:].split("/")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def top_level_key(path: str) -> str | None:
    """The top-level key a pointer points into; None for ``""`` (the whole state)."""
    if not path:
        return None
    return path.split("/", 2)[1].replace("~1", "/").replace("~0", "~")


def lookup(document: Any, path: str) -> Any:
    """The value at ``path`` in ``document``, or MISSING."""
    node = document
    for token in tokens(path):
        if isinstance(node, Mapping):
            if token not in node:
                return MISSING
            node = node[token]
        elif isinstance(node, (list, tuple)):
            if not token.isdigit() or int(token) >= len(node):
                return MISSING
            node = node[int(token)]
        else:
            return MISSING
    return node


# -- equality as JSON -----------------------------------------------------------------------------


def json_equal(a: Any, b: Any) -> bool:
    """Whether two values are equal as JSON: ``1``, ``1.0`` and ``True`` differ, ``[1]`` and
    ``(1,)`` do not. Shared objects compare in O(1), so comparing two snapshots that share their
    unchanged parts costs what differs."""
    if a is b:
        return True
    kind = type(a)
    if kind is type(b) and kind in PLAIN_LEAVES:  # the usual leaves: equal as JSON when equal
        return a == b
    if kind is list and type(b) is list:  # the usual lists, without the ABC checks below
        return len(a) == len(b) and all(map(json_equal, a, b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return len(a) == len(b) and all(k in b and json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(json_equal, a, b))
    if type(a) is not type(b) and (isinstance(a, (bool, int, float)) or isinstance(b, (bool, int, float))):
        return False
    try:
        if a == b:
            return True
    except Exception:  # an object whose __eq__ fails compares by its attributes below
        pass
    if type(a) is not type(b) or isinstance(a, (str, bytes, int, float, type(None))):
        return False
    # Objects that are not JSON (dataclasses, custom classes) are stored by their attributes:
    # two copies with the same attributes are the same value.
    try:
        return _dump_any(a) == _dump_any(b)
    except (TypeError, ValueError, RecursionError):
        return False


PLAIN_LEAVES = frozenset({str, int, bool, type(None)})
"""Types of immutable values equal as JSON exactly when they are equal and of one type (not
float: 0.0 and -0.0 are equal, and JSON tells them apart)."""


def plain_equal(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether ``a`` and ``b`` hold the same ``PLAIN_LEAVES``, item by item and of one type each
    (then they are equal as JSON and dump alike); False says nothing about other values."""
    return len(a) == len(b) and all(
        type(x) is type(y) and type(x) in PLAIN_LEAVES and x == y for x, y in zip(a, b)
    )


# -- patches --------------------------------------------------------------------------------------


def _dump_any(value: Any) -> str:
    # jsonpatch serialises values to compare list items; objects that are not JSON (dataclasses,
    # custom classes) compare by their attributes instead of failing the run.
    return _DUMPER.encode(value)


def _attributes(obj: Any) -> Any:
    return getattr(obj, "__dict__", None) or repr(obj)


_DUMPER = json.JSONEncoder(sort_keys=True, default=_attributes)
"""One encoder for every comparison (``json.dumps`` with options builds one per call)."""


@functools.cache
def _patch_class() -> Any:
    # jsonpatch is only needed for changes the fast path cannot express: loaded on first use.
    import jsonpatch

    class _Patch(jsonpatch.JsonPatch):
        json_dumper = staticmethod(_dump_any)

    return _Patch


class _Slow(Exception):
    """The change needs jsonpatch's matching (items moved, or replaced inside a list)."""


def key_changes(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> tuple[list[Any], list[Any], list[Any]]:
    """Top-level keys removed, added and changed (in the order jsonpatch visits them)."""
    removed = [k for k in before if k not in after]
    added = [k for k in after if k not in before]
    changed = [k for k in before if k in after and not json_equal(before[k], after[k])]
    return removed, added, changed


def make_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The RFC 6902 patch from ``before`` to ``after`` (two dicts), as jsonpatch makes it.

    Values equal in both (shared objects first of all) produce no operation and are not walked,
    so the cost follows what changed. Changes only jsonpatch's list matching can express (an
    item moved or replaced inside a list) fall back to jsonpatch on the changed keys alone.
    Operation values are copies: a patch never aliases the state."""
    removed, added, changed = key_changes(before, after)
    ops: list[dict[str, Any]] = []
    kinds: set[str] = set()
    try:
        _diff_keys(ops, kinds, "", before, after, removed, added, changed)
        # jsonpatch turns a removal and an addition of the same value into a move; with only
        # additions or only removals (plus replacements) there is nothing to pair.
        if len(kinds) < 2:
            return ops
    except _Slow:
        pass
    keep_before, keep_after = {*removed, *changed}, {*added, *changed}
    sub_before = {k: v for k, v in before.items() if k in keep_before}
    sub_after = {k: v for k, v in after.items() if k in keep_after}
    return copy.deepcopy(_patch_class().from_diff(sub_before, sub_after).patch)


def _diff_keys(
    ops: list[dict[str, Any]],
    kinds: set[str],
    path: str,
    before: Mapping[Any, Any],
    after: Mapping[Any, Any],
    removed: list[Any],
    added: list[Any],
    changed: list[Any],
) -> None:
    # Same order as jsonpatch: removed keys, added keys, then the common keys.
    for key in removed:
        kinds.add("remove")
        ops.append({"op": "remove", "path": f"{path}/{escape(key)}"})
    for key in added:
        kinds.add("add")
        ops.append({"op": "add", "path": f"{path}/{escape(key)}", "value": copy.deepcopy(after[key])})
    for key in changed:
        _diff_value(ops, kinds, f"{path}/{escape(key)}", before[key], after[key])


def _diff_value(ops: list[dict[str, Any]], kinds: set[str], path: str, old: Any, new: Any) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        _diff_keys(ops, kinds, path, old, new, *key_changes(old, new))
    elif isinstance(old, list) and isinstance(new, list):
        n, m = len(old), len(new)
        if n == m or not _same_items(old[:m], new) if m < n else not _same_items(old, new[:n]):
            raise _Slow
        if m > n:
            kinds.add("add")
            ops.extend(
                {"op": "add", "path": f"{path}/{i}", "value": copy.deepcopy(new[i])} for i in range(n, m)
            )
        else:
            kinds.add("remove")
            ops.extend({"op": "remove", "path": f"{path}/{m}"} for _ in range(n - m))
    elif (isinstance(old, MutableMapping) and isinstance(new, MutableMapping)) or (
        isinstance(old, MutableSequence) and isinstance(new, MutableSequence)
    ):
        raise _Slow
    else:
        try:
            same = _dump_any(old) == _dump_any(new)
        except (TypeError, ValueError, RecursionError):
            raise _Slow from None
        if not same:
            ops.append({"op": "replace", "path": path, "value": copy.deepcopy(new)})


def _same_items(a: list[Any], b: list[Any]) -> bool:
    """Equal as JSON, like jsonpatch compares list items (1 and True differ)."""
    if not a and not b:
        return True
    if plain_equal(a, b):
        return True
    try:
        return json_equal(a, b) and _dump_any(a) == _dump_any(b)
    except (TypeError, ValueError, RecursionError):
        raise _Slow from None


def apply_patch(document: Mapping[str, Any], patch: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``document`` with ``patch`` applied, as a new dict (the input is not changed)."""
    import jsonpatch

    return jsonpatch.apply_patch(dict(document), [dict(op) for op in patch])


# -- top-level deltas (what sessions store per turn) ----------------------------------------------


def top_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level changes from ``before`` to ``after``: ``{"set": {key: new}, "unset": [key]}``."""
    if before is after:
        return {"set": {}, "unset": []}
    changed = {k: v for k, v in after.items() if k not in before or not json_equal(before[k], v)}
    return {"set": changed, "unset": [k for k in before if k not in after]}


def keys_diff(after: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``top_diff`` when the keys that may have changed are already known."""
    known = list(dict.fromkeys(keys))
    return {"set": {k: after[k] for k in known if k in after}, "unset": [k for k in known if k not in after]}


def apply_top_diff(base: Mapping[str, Any], delta: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with a ``top_diff`` applied, as a new dict sharing the unchanged values."""
    out = dict(base)
    out.update(delta.get("set") or {})
    for key in delta.get("unset") or ():
        out.pop(key, None)
    return out


# -- what a turn changed --------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """How one path of the state changed over a turn, and who changed it."""

    path: str
    """A JSON pointer: ``/shopping_list`` for a top-level key, ``/shopping_list/1`` below it."""
    how: How
    """added, changed or removed (the rule is in the module docstring)."""
    authors: tuple[str, ...]
    """Who wrote to it, in order: ``tool:add_item``, ``hook:guard``, ``agentic:…``, ``user``…"""
    old: Any = None
    """The value before the turn (None when added)."""
    new: Any = None
    """The value after (None when removed)."""

    @property
    def key(self) -> str:
        """The top-level key the path is in."""
        return top_level_key(self.path) or ""


class ChangeLog:
    """A turn's state changes as they happen: which paths were written, and by whom.

    ``before`` may be frozen (``agentnb.state.frozen``); the changes' old and new values are read-only
    views of its frozen values (``agentnb.state.views``; live ones are the live values). Feed it
    every patch with its author (``add``); ``keys(after)`` and ``paths(after)`` give the net changes
    against ``before`` by the rule of this module. Adding costs the size of the patch;
    a summary costs the number of paths written (times their depth), not the size of the state.
    """

    def __init__(self, before: Mapping[str, Any]) -> None:
        self.before = before
        """The state when the turn began."""
        self._authors: dict[str, dict[str, None]] = {}
        self._keys: dict[str, dict[str, None]] = {}

    def add(self, patch: Iterable[Mapping[str, Any]], author: str) -> None:
        """Record one patch (a StateChanged's) and who made it."""
        for op in patch:
            for path in (op.get("from"), op["path"]) if op["op"] == "move" else (op["path"],):
                if not path:
                    continue
                self._authors.setdefault(path, {})[author] = None
                # The top-level key's pointer is the path's first token, escaped as it is there.
                end = path.find("/", 1)
                self._keys.setdefault(path if end < 0 else path[:end], {})[author] = None

    def keys(self, after: Mapping[str, Any], paths: list[Change] | None = None) -> list[Change]:
        """Top-level keys that changed, in first-write order (``paths``: ``self.paths(after)``
        when the caller has it already).

        A key written below its top (``/items/3``) is changed as soon as one of those paths
        ended up different, without comparing the whole value; only when every write under it
        cancelled out is the value compared whole (a list item removed and an equal one now in
        its place, say)."""
        changed_under = {
            c.key for c in (self.paths(after) if paths is None else paths) if c.path.count("/") > 1
        }
        out = []
        for path, authors in self._keys.items():
            key = top_level_key(path)
            assert key is not None  # add() keeps no empty path
            old, new = self.before.get(key, MISSING), after.get(key, MISSING)
            change = _net(path, authors, old, new, key in changed_under)
            if change is not None:
                out.append(change)
        return out

    def paths(self, after: Mapping[str, Any]) -> list[Change]:
        """Every path written that changed, in first-write order."""
        out = []
        for path, authors in self._authors.items():
            change = _net(path, authors, lookup(self.before, path), lookup(after, path))
            if change is not None:
                out.append(change)
        return out


def _net(
    path: str, authors: Mapping[str, None], old: Any, new: Any, known_changed: bool = False
) -> Change | None:
    """How ``path`` changed between ``old`` and ``new`` (MISSING for absent), or None."""
    if old is MISSING and new is MISSING:
        return None
    if old is MISSING:
        return Change(path, "added", tuple(authors), None, view(new))
    if new is MISSING:
        return Change(path, "removed", tuple(authors), view(old), None)
    if known_changed or not json_equal(old, new):
        return Change(path, "changed", tuple(authors), view(old), view(new))
    return None


__all__ = [
    "Change",
    "ChangeLog",
    "MISSING",
    "PLAIN_LEAVES",
    "apply_patch",
    "apply_top_diff",
    "escape",
    "json_equal",
    "key_changes",
    "keys_diff",
    "lookup",
    "make_patch",
    "plain_equal",
    "pointer",
    "tokens",
    "top_diff",
    "top_level_key",
]
