"""The journal: what was written in one state since the last checkpoint.

The state's dicts and lists are tracked containers (``agentnb.state.tracked``) that note their
writes in the state's ``Journal``. ``Journal.written`` turns those notes into the paths written
from the root (a trie), found through each container's links to the containers holding it, and
says which dicts had keys inserted (a key deleted and put back moves to the end).

Values stored from outside stay the very objects the tool stored (a tool may keep mutating
them through its own reference). Until nothing else can reach them they are *loose*: compared
whole at every checkpoint. ``Journal.settle`` swaps a loose dict or list for a tracked copy once
its container is the only holder (CPython's reference count says so), which nobody can tell
apart; values that can never be tracked (sets, custom objects) stay loose. ``track`` and
``tracked_copy`` bring a value under a journal.
"""

from __future__ import annotations

import copy
import sys
import weakref
from typing import Any, NamedTuple

from .tracked import SCALARS, WHOLE, TrackedDict, TrackedList, attach, immutable

_ABSENT: Any = object()

Trie = dict[Any, Any]
"""Written paths: ``{key: WHOLE | Trie}`` level by level from the root."""


class Written(NamedTuple):
    """What ``Journal.written`` found."""

    paths: Trie | Any | None
    """The paths written (a Trie), WHOLE for the whole state, or None for nothing."""
    places: list[tuple[Any, Any]]
    """The loose places among them (container, key), for ``Journal.settle``."""
    inserted: list[tuple[tuple[Any, ...], list[Any]]]
    """Dicts (by path) and the keys inserted into them: a key deleted and put back has moved
    to the end, which no patch says."""


class Journal:
    """What was written in one state since the last checkpoint."""

    __slots__ = ("root", "dirty", "loose", "image")

    def __init__(self) -> None:
        self.root = TrackedDict()
        """The state's data (the live dict tools receive)."""
        self.root._journal = self
        self.dirty: list[TrackedDict | TrackedList] = []
        """Containers written since the last checkpoint."""
        self.loose: dict[tuple[int, Any], tuple[weakref.ref[Any], Any]] = {}
        """Places holding a value that is not tracked: (container, key) by (id, key)."""
        self.image: Any = None
        """The state as of the last checkpoint, frozen (kept by whoever checkpoints)."""

    # -- reading what was written -----------------------------------------------------------------

    def written(self, *, consume: bool) -> Written:
        """What was written since the last checkpoint; ``consume`` starts a new interval."""
        trie: Trie = {}
        whole = False
        inserted: list[tuple[tuple[Any, ...], list[Any]]] = []
        root = self.root
        for container in self.dirty:
            writes = container._writes
            if consume:
                container._writes = None
            # The root and top-level values (the usual cases) are marked here, without a search.
            if container is root:
                if writes is WHOLE:
                    whole = True
                    continue
                for key in writes:
                    trie[key] = WHOLE
                if True in writes.values():
                    inserted.append(((), [k for k, added in writes.items() if added]))
                continue
            if container._parent is root and container._more is None:
                key = container._key
                if writes is WHOLE or type(container) is TrackedList:
                    trie[key] = WHOLE
                    continue
                node = trie.get(key)
                if node is not WHOLE:
                    if node is None:
                        node = trie[key] = {}
                    for name in writes:
                        node[name] = WHOLE
                if True in writes.values():
                    inserted.append(((key,), [k for k, added in writes.items() if added]))
                continue
            for path, exact in _locate(container, root, []):
                if not exact or writes is WHOLE or type(container) is TrackedList:
                    whole |= mark(trie, path)
                    continue
                for key in writes:
                    mark(trie, (*path, key))
                if True in writes.values():
                    inserted.append((path, [k for k, added in writes.items() if added]))
        if consume:
            self.dirty = []
        places = []
        if self.loose:
            for spot, (ref, key) in list(self.loose.items()):
                holder = ref()
                if holder is None or (type(holder) is TrackedDict and not _loose_value(holder, key, self)):
                    del self.loose[spot]
                    continue
                located = _ROOT if holder is root else _locate(holder, root, [])
                if located:
                    places.append((holder, key))
                for path, exact in located:
                    whole |= mark(trie, path if type(holder) is TrackedList or not exact else (*path, key))
        if whole:
            return Written(WHOLE, places, [])
        return Written(trie or None, places, inserted)

    def settle(self, places: list[tuple[Any, Any]]) -> None:
        """After a checkpoint: put tracked copies in place of the loose dicts and lists at
        ``places`` that their container alone holds; the others stay loose."""
        for container, key in places:
            if type(container) is TrackedDict:
                if type(dict.get(container, key)) in _PLAIN and _sole(container, key):
                    dict.__setitem__(
                        container, key, track(dict.__getitem__(container, key), self, owned=False)
                    )
                    attach(dict.__getitem__(container, key), container, key)
                if not _loose_value(container, key, self):
                    self.loose.pop((id(container), key), None)
            else:
                still = False
                for i in range(len(container)):
                    if type(list.__getitem__(container, i)) in _PLAIN and _sole(container, i):
                        list.__setitem__(
                            container, i, track(list.__getitem__(container, i), self, owned=False)
                        )
                        attach(list.__getitem__(container, i), container, None)
                    still = still or _loose_value(container, i, self)
                if not still:
                    self.loose.pop((id(container), None), None)

    def add_loose(self, container: TrackedDict | TrackedList, key: Any) -> None:
        spot = (id(container), None if type(container) is TrackedList else key)
        if spot not in self.loose:
            self.loose[spot] = (weakref.ref(container), spot[1])


def _loose_value(container: Any, key: Any, journal: Journal) -> bool:
    """Whether container[key] holds a value that is neither immutable nor tracked here."""
    value = (
        dict.get(container, key, _ABSENT)
        if type(container) is TrackedDict
        else list.__getitem__(container, key)
    )
    if value is _ABSENT:
        return False
    kind = type(value)
    if kind is TrackedDict or kind is TrackedList:
        return value._journal is not journal
    return not immutable(value)


_ROOT = [((), True)]


def mark(trie: Trie, path: tuple[Any, ...]) -> bool:
    """Add ``path`` to ``trie``; True when it is the whole state."""
    if not path:
        return True
    node = trie
    for token in path[:-1]:
        child = node.get(token)
        if child is WHOLE:
            return False
        if child is None:
            child = node[token] = {}
        node = child
    node[path[-1]] = WHOLE
    return False


def _locate(container: Any, root: Any, stack: list[int]) -> list[tuple[tuple[Any, ...], bool]]:
    """Every path from ``root`` to ``container``: (path, exact). Not exact: the container is
    inside the list at ``path`` (lists are compared whole)."""
    if container is root:
        return [((), True)]
    if id(container) in stack:  # a container holding itself
        return []
    stack.append(id(container))
    out = []
    for parent, key in _links(container):
        for path, exact in _locate(parent, root, stack):
            if exact and type(parent) is TrackedList:
                out.append((path, False))
            elif exact:
                out.append(((*path, key), True))
            else:
                out.append((path, False))
    stack.pop()
    return out


def _links(container: Any) -> list[tuple[Any, Any]]:
    parent = container._parent
    if parent is None:
        return []
    more = container._more
    return [(parent, container._key)] if more is None else [(parent, container._key), *more]


def _refs(container: Any, key: Any) -> int:
    value = (
        dict.__getitem__(container, key) if isinstance(container, dict) else list.__getitem__(container, key)
    )
    return sys.getrefcount(value)


def _calibrate() -> int:
    """How many references ``_refs`` counts for a value its container alone holds; 0 (never
    sole: every loose value stays loose) where reference counts cannot tell."""
    if sys.implementation.name != "cpython" or not hasattr(sys, "getrefcount"):
        return 0
    counts = {
        _refs({"k": []}, "k"),
        _refs([{}], 0),
        _refs(TrackedDict(k=[]), "k"),
        _refs(TrackedList([[]]), 0),
    }
    return counts.pop() if len(counts) == 1 else 0


def _sole(container: Any, key: Any) -> bool:
    """Whether the value at container[key] is held by that container alone."""
    return _refs(container, key) <= _SOLE


_PLAIN = (dict, list)


def track(value: Any, journal: Journal, *, owned: bool) -> Any:
    """``value`` with its dicts and lists as tracked containers of ``journal``. ``owned``: the
    caller holds the only reference to ``value`` and everything in it (a fresh copy), so every
    plain container is converted; otherwise only those their container alone holds."""
    kind = type(value)
    if not value and (kind is list or kind is dict):  # an empty one (``state["items"] = []``)
        empty = TrackedList() if kind is list else TrackedDict()
        empty._journal = journal
        return empty
    if kind is dict:
        out: Any = TrackedDict()
        out._journal = journal
        # Keys first, values looked up one at a time: a loop variable would hold a reference
        # and make every value look shared.
        for key in list(value):
            if type(dict.__getitem__(value, key)) in _PLAIN and (owned or _sole(value, key)):
                dict.__setitem__(out, key, track(dict.__getitem__(value, key), journal, owned=owned))
            else:
                dict.__setitem__(out, key, dict.__getitem__(value, key))
            attach(dict.__getitem__(out, key), out, key)
        return out
    if kind is list:
        out = TrackedList()
        out._journal = journal
        for i in range(len(value)):
            if type(list.__getitem__(value, i)) in _PLAIN and (owned or _sole(value, i)):
                list.append(out, track(list.__getitem__(value, i), journal, owned=owned))
            else:
                list.append(out, list.__getitem__(value, i))
            attach(list.__getitem__(out, i), out, None)
        return out
    return value


def tracked_copy(value: Any, journal: Journal) -> Any:
    """A deep copy of ``value`` whose dicts and lists are tracked containers of ``journal``
    (one pass: what loading a state needs)."""
    kind = type(value)
    if kind in SCALARS:
        return value
    if kind is dict or kind is TrackedDict:
        out: Any = TrackedDict()
        out._journal = journal
        for key, item in value.items():
            item = tracked_copy(item, journal)
            dict.__setitem__(out, key, item)
            if type(item) not in SCALARS:
                attach(item, out, key)
        return out
    if kind is list or kind is TrackedList:
        out = TrackedList()
        out._journal = journal
        for item in value:
            item = tracked_copy(item, journal)
            list.append(out, item)
            if type(item) not in SCALARS:
                attach(item, out, None)
        return out
    return copy.deepcopy(value)


_SOLE = _calibrate()

__all__ = [
    "Journal",
    "Trie",
    "Written",
    "mark",
    "track",
    "tracked_copy",
]
