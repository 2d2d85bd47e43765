"""Tracked containers: the live state's dicts and lists, which note where they were written.

Tools mutate the state in place, as in Agno (``session_state["items"].append(x)``). To know what
changed without comparing the whole state at every checkpoint, the state's dicts and lists are
``TrackedDict`` / ``TrackedList``: real ``dict`` / ``list`` subclasses (``isinstance``,
``json.dumps`` and ``str()`` see plain containers; reads run at C speed) whose mutating methods
also tell the state's ``Journal`` which key was written. Each tracked container knows the
container(s) holding it, so the journal turns "key ``k`` of this dict" into a path from the root.
A dict records the keys written; a list records only that it was written (it is compared whole).

Values stored from outside stay the very objects the tool stored (a tool may keep mutating
them through its own reference). Until nothing else can reach them they are *loose*: compared
whole at every checkpoint. ``Journal.settle`` swaps a loose dict or list for a tracked copy once
its container is the only holder (CPython's reference count says so), which nobody can tell
apart; values that can never be tracked (sets, custom objects) stay loose.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import fractions
import sys
import uuid
import weakref
from collections.abc import Iterable
from typing import Any, NamedTuple

SCALARS = frozenset({str, int, float, bool, type(None), bytes, complex})
"""Types whose values never change: shared between the live state and its frozen copies."""
_IMMUTABLE = SCALARS | {
    datetime.date,
    datetime.datetime,
    datetime.time,
    datetime.timedelta,
    decimal.Decimal,
    fractions.Fraction,
    uuid.UUID,
    range,
}

WHOLE: Any = type("Whole", (), {"__repr__": lambda self: "WHOLE"})()
"""In a trie of written paths: everything at and below this path may have changed."""

_ABSENT: Any = object()

Trie = dict[Any, Any]
"""Written paths: ``{key: WHOLE | Trie}`` level by level from the root."""


def immutable(value: Any) -> bool:
    """Whether ``value`` can never change in place (scalars, dates, tuples of such...)."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return True
    if kind is tuple or kind is frozenset:
        return all(immutable(v) for v in value)
    return False


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
                    _attach(dict.__getitem__(container, key), container, key)
                if not _loose_value(container, key, self):
                    self.loose.pop((id(container), key), None)
            else:
                still = False
                for i in range(len(container)):
                    if type(list.__getitem__(container, i)) in _PLAIN and _sole(container, i):
                        list.__setitem__(
                            container, i, track(list.__getitem__(container, i), self, owned=False)
                        )
                        _attach(list.__getitem__(container, i), container, None)
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


def _link(child: Any, parent: Any, key: Any) -> None:
    if child._parent is None:
        child._parent, child._key = parent, key
    elif child._more is None:
        child._more = [(parent, key)]
    else:
        child._more.append((parent, key))


def _unlink(child: Any, parent: Any, key: Any) -> None:
    if child._parent is parent and (key is None or child._key == key):
        more = child._more
        if more:
            child._parent, child._key = more.pop()
            if not more:
                child._more = None
        else:
            child._parent = child._key = None
        return
    more = child._more
    if more:
        for i, (p, k) in enumerate(more):
            if p is parent and (key is None or k == key):
                del more[i]
                break
        if not more:
            child._more = None


def _attach(value: Any, parent: Any, key: Any) -> None:
    """``value`` was stored at ``parent[key]``: link it, or note a loose value."""
    kind = type(value)
    if kind in SCALARS:
        return
    journal = parent._journal
    if (kind is TrackedDict or kind is TrackedList) and value._journal is journal:
        _link(value, parent, key)
    elif journal is not None and not immutable(value):
        journal.add_loose(parent, key)


def _detach(value: Any, parent: Any, key: Any) -> None:
    kind = type(value)
    if (kind is TrackedDict or kind is TrackedList) and value._journal is parent._journal:
        _unlink(value, parent, key)


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
            _attach(dict.__getitem__(out, key), out, key)
        return out
    if kind is list:
        out = TrackedList()
        out._journal = journal
        for i in range(len(value)):
            if type(list.__getitem__(value, i)) in _PLAIN and (owned or _sole(value, i)):
                list.append(out, track(list.__getitem__(value, i), journal, owned=owned))
            else:
                list.append(out, list.__getitem__(value, i))
            _attach(list.__getitem__(out, i), out, None)
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
                _attach(item, out, key)
        return out
    if kind is list or kind is TrackedList:
        out = TrackedList()
        out._journal = journal
        for item in value:
            item = tracked_copy(item, journal)
            list.append(out, item)
            if type(item) not in SCALARS:
                _attach(item, out, None)
        return out
    return copy.deepcopy(value)


class TrackedDict(dict):
    """A dict of a tracked state: a plain dict to its users; writes are noted in the journal."""

    __slots__ = ("_journal", "_parent", "_key", "_more", "_writes", "__weakref__")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        dict.__init__(self, *args, **kwargs)
        self._journal: Journal | None = None
        self._parent: Any = None
        self._key: Any = None
        self._more: list[tuple[Any, Any]] | None = None
        self._writes: dict[Any, bool] | Any = None
        """Keys written since the last checkpoint (True: inserted), WHOLE, or None."""

    def _wrote(self, key: Any, inserted: bool = False) -> None:
        writes = self._writes
        if writes is None:
            journal = self._journal
            if journal is None:
                return
            self._writes = writes = {}
            journal.dirty.append(self)
        elif writes is WHOLE:
            return
        writes[key] = inserted or writes.get(key, False)

    def _wrote_all(self) -> None:
        if self._writes is None and self._journal is not None:
            self._journal.dirty.append(self)
        self._writes = WHOLE

    def __setitem__(self, key: Any, value: Any) -> None:
        old = dict.get(self, key, _ABSENT)
        dict.__setitem__(self, key, value)
        if old is not value:
            # Scalars, the usual values, need no bookkeeping: checked here, not in a call.
            if type(old) in _CONTAINERS:
                _detach(old, self, key)
            if type(value) not in SCALARS:
                _attach(value, self, key)
        writes = self._writes
        if writes is None:
            journal = self._journal
            if journal is None:
                return
            self._writes = writes = {}
            journal.dirty.append(self)
        elif writes is WHOLE:
            return
        if old is _ABSENT:
            writes[key] = True
        elif key not in writes:
            writes[key] = False

    def __delitem__(self, key: Any) -> None:
        old = dict.__getitem__(self, key)
        dict.__delitem__(self, key)
        _detach(old, self, key)
        self._wrote(key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            value = dict.pop(self, key)
            _detach(value, self, key)
            self._wrote(key)
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def popitem(self) -> tuple[Any, Any]:
        key, value = dict.popitem(self)
        _detach(value, self, key)
        self._wrote(key)
        return key, value

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key in self:
            return dict.__getitem__(self, key)
        self[key] = default
        return default

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        if hasattr(other, "keys"):
            for key in list(other.keys()):
                self[key] = other[key]
        else:
            for key, value in other:
                self[key] = value
        for key, value in kwargs.items():
            self[key] = value

    def __ior__(self, other: Any) -> TrackedDict:  # type: ignore[misc]  # takes any mapping, as dict's does
        self.update(other)
        return self

    def clear(self) -> None:
        for key, value in dict.items(self):
            _detach(value, self, key)
        dict.clear(self)
        self._wrote_all()

    @classmethod
    def fromkeys(cls, iterable: Iterable[Any], value: Any = None) -> dict[Any, Any]:
        return dict.fromkeys(iterable, value)

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        memo[id(self)] = out
        for key, value in dict.items(self):
            out[copy.deepcopy(key, memo)] = copy.deepcopy(value, memo)
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (dict, (), None, None, iter(dict.items(self)))


class TrackedList(list):
    """A list of a tracked state: a plain list to its users; a write marks it as changed."""

    __slots__ = ("_journal", "_parent", "_key", "_more", "_writes", "__weakref__")

    def __init__(self, *args: Any) -> None:
        list.__init__(self, *args)
        self._journal: Journal | None = None
        self._parent: Any = None
        self._key: Any = None
        self._more: list[tuple[Any, Any]] | None = None
        self._writes: Any = None

    def _wrote(self) -> None:
        if self._writes is None and self._journal is not None:
            self._writes = WHOLE
            self._journal.dirty.append(self)

    def _added(self, items: Iterable[Any]) -> None:
        for item in items:
            _attach(item, self, None)

    def _removed(self, items: Iterable[Any]) -> None:
        for item in items:
            _detach(item, self, None)

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            old = list.__getitem__(self, index)
            items = list(value)
            list.__setitem__(self, index, items)
            self._removed(old)
            self._added(items)
        else:
            old = list.__getitem__(self, index)
            list.__setitem__(self, index, value)
            if old is not value:
                _detach(old, self, None)
                _attach(value, self, None)
        self._wrote()

    def __delitem__(self, index: Any) -> None:
        old = list.__getitem__(self, index)
        list.__delitem__(self, index)
        self._removed(old if isinstance(index, slice) else (old,))
        self._wrote()

    def append(self, value: Any) -> None:
        list.append(self, value)
        if type(value) not in SCALARS:
            _attach(value, self, None)
        if self._writes is None and self._journal is not None:
            self._writes = WHOLE
            self._journal.dirty.append(self)

    def extend(self, values: Iterable[Any]) -> None:
        items = list(values)
        list.extend(self, items)
        self._added(items)
        self._wrote()

    def insert(self, index: Any, value: Any) -> None:
        list.insert(self, index, value)
        _attach(value, self, None)
        self._wrote()

    def pop(self, index: Any = -1) -> Any:
        value = list.pop(self, index)
        _detach(value, self, None)
        self._wrote()
        return value

    def remove(self, value: Any) -> None:
        index = list.index(self, value)
        self.pop(index)

    def clear(self) -> None:
        old = list(self)
        list.clear(self)
        self._removed(old)
        self._wrote()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        list.sort(self, *args, **kwargs)
        self._wrote()

    def reverse(self) -> None:
        list.reverse(self)
        self._wrote()

    def __iadd__(self, values: Iterable[Any]) -> TrackedList:  # type: ignore[misc]  # any iterable, as list's
        self.extend(values)
        return self

    def __imul__(self, times: Any) -> TrackedList:  # type: ignore[misc]  # returns the tracked list itself
        old = list(self)
        list.__imul__(self, times)
        if len(self) == 0:
            self._removed(old)
        else:
            for _ in range(len(self) // max(len(old), 1) - 1):
                self._added(old)
        self._wrote()
        return self

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        out: list[Any] = []
        memo[id(self)] = out
        out.extend(copy.deepcopy(value, memo) for value in list.__iter__(self))
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (list, (), None, iter(list.__iter__(self)))


_CONTAINERS = frozenset({TrackedDict, TrackedList})
_SOLE = _calibrate()

__all__ = [
    "Journal",
    "SCALARS",
    "Written",
    "TrackedDict",
    "TrackedList",
    "Trie",
    "WHOLE",
    "immutable",
    "mark",
    "track",
    "tracked_copy",
]
