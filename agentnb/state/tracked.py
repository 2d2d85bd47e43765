"""Tracked containers: the live state's dicts and lists, which note where they were written.

Tools mutate the state in place, as in Agno (``session_state["items"].append(x)``). To know what
changed without comparing the whole state at every checkpoint, the state's dicts and lists are
``TrackedDict`` / ``TrackedList``: real ``dict`` / ``list`` subclasses (``isinstance``,
``json.dumps`` and ``str()`` see plain containers; reads run at C speed) whose mutating methods
also tell the state's ``Journal`` (``agentnb.state.journal``) which key was written. Each
tracked container knows the container(s) holding it, so the journal turns "key ``k`` of this
dict" into a path from the root. A dict records the keys written; a list records only that it
was written (it is compared whole). A value stored that is neither immutable nor tracked by the
same journal is noted as *loose* there.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import fractions
import uuid
from collections.abc import Iterable
from typing import Any

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
"""Written whole: in a container's writes or a trie of written paths (``agentnb.state.journal``),
everything at and below it may have changed."""

_ABSENT: Any = object()


def immutable(value: Any) -> bool:
    """Whether ``value`` can never change in place (scalars, dates, tuples of such...)."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return True
    if kind is tuple or kind is frozenset:
        return all(immutable(v) for v in value)
    return False


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


def attach(value: Any, parent: Any, key: Any) -> None:
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


class TrackedDict(dict):
    """A dict of a tracked state: a plain dict to its users; writes are noted in the journal."""

    __slots__ = ("_journal", "_parent", "_key", "_more", "_writes", "__weakref__")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        dict.__init__(self, *args, **kwargs)
        # The Journal (``agentnb.state.journal``) noting this container's writes, or None. Not
        # named as a type: the journal module imports this one.
        self._journal: Any = None
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
                attach(value, self, key)
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
        # The Journal (``agentnb.state.journal``) noting this container's writes, or None. Not
        # named as a type: the journal module imports this one.
        self._journal: Any = None
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
            attach(item, self, None)

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
                attach(value, self, None)
        self._wrote()

    def __delitem__(self, index: Any) -> None:
        old = list.__getitem__(self, index)
        list.__delitem__(self, index)
        self._removed(old if isinstance(index, slice) else (old,))
        self._wrote()

    def append(self, value: Any) -> None:
        list.append(self, value)
        if type(value) not in SCALARS:
            attach(value, self, None)
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
        attach(value, self, None)
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

__all__ = [
    "SCALARS",
    "TrackedDict",
    "TrackedList",
    "WHOLE",
    "attach",
    "immutable",
]
