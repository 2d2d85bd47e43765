"""Frozen states: immutable copies of a state that share every part they did not change.

A turn record keeps the state at three moments of every turn; a session keeps the state as last
stored. Copying a large state for each would cost its size every turn, so these copies are
*frozen*: a ``FrozenMap`` (a dict) or a ``FrozenList`` (a list) is never changed, and a changed
copy (``FrozenMap.updated``) shares every value it did not replace. A map of more than
``SMALL`` keys is a hash trie, so replacing one key of 10,000 copies about a kilobyte.

``freeze(value)`` makes a frozen copy of live data, ``thaw(frozen)`` a plain, mutable copy of a
frozen one (what users are handed). Values other than dicts, lists and tuples are copied with
``copy.deepcopy`` both ways; strings, numbers, booleans and None are shared.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .journal import Trie
from .tracked import SCALARS, WHOLE, TrackedDict, TrackedList

SMALL = 32
"""Maps of up to this many keys are stored as a plain dict; larger ones as a trie."""
_BITS = 5
_WIDTH = 1 << _BITS
_MASK = _WIDTH - 1
_LEAF = 16
"""Average keys per trie leaf the depth is chosen for (rebuilt deeper past four times that)."""


class FrozenMap(Mapping[Any, Any]):
    """An immutable dict (insertion-ordered); ``updated`` returns a changed copy sharing the rest.

    Small maps hold a private dict. Large ones hold a trie of 32-way tuples whose leaves are
    dicts ``{key: (seq, value)}``, ``seq`` giving the key's place in the order."""

    __slots__ = ("_small", "_trie", "_depth", "_len", "_next", "_base", "__weakref__")

    def __init__(self, items: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = ()) -> None:
        """A frozen map of ``items``, whose values must be frozen already (see ``freeze``)."""
        data = dict(items)
        self._base: weakref.ref[FrozenMap] | None = None
        if len(data) <= SMALL:
            self._small: dict[Any, Any] | None = data
            self._trie: tuple[Any, ...] | None = None
            self._depth = self._len = self._next = 0
        else:
            self._small = None
            self._build(((k, (i, v)) for i, (k, v) in enumerate(data.items())), len(data), len(data))

    def _build(self, entries: Iterable[tuple[Any, tuple[int, Any]]], size: int, next_seq: int) -> None:
        depth = 1
        while _WIDTH**depth * _LEAF < size:
            depth += 1
        leaves: dict[int, dict[Any, tuple[int, Any]]] = {}
        mask = (1 << (_BITS * depth)) - 1
        for key, entry in entries:
            leaves.setdefault(hash(key) & mask, {})[key] = entry
        self._trie = _assemble(leaves, depth, 0)
        self._depth, self._len, self._next = depth, size, next_seq

    @classmethod
    def _raw(
        cls, small: dict[Any, Any] | None, trie: tuple[Any, ...] | None, depth: int, size: int, next_seq: int
    ) -> FrozenMap:
        out = cls.__new__(cls)
        out._small, out._trie, out._depth, out._len, out._next = small, trie, depth, size, next_seq
        out._base = None
        return out

    # -- reading ------------------------------------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        small = self._small
        if small is not None:
            return small[key]
        entry = self._leaf(key).get(key)
        if entry is None:
            raise KeyError(key)
        return entry[1]

    def get(self, key: Any, default: Any = None) -> Any:
        small = self._small
        if small is not None:
            return small.get(key, default)
        entry = self._leaf(key).get(key)
        return default if entry is None else entry[1]

    def __contains__(self, key: object) -> bool:
        small = self._small
        if small is not None:
            return key in small
        try:
            return key in self._leaf(key)
        except TypeError:  # an unhashable key is in no map
            return False

    def __len__(self) -> int:
        small = self._small
        return len(small) if small is not None else self._len

    def __iter__(self) -> Iterator[Any]:
        small = self._small
        if small is not None:
            return iter(small)
        return (key for _, key, _ in self._ordered())

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]  # a list, not a view (see below)
        """(key, value) pairs in order (a list: a large map sorts its entries once)."""
        small = self._small
        if small is not None:
            return list(small.items())
        return [(key, value) for _, key, value in self._ordered()]

    def values(self) -> list[Any]:  # type: ignore[override]  # a list, as items()
        return [value for _, value in self.items()]

    def _leaf(self, key: Any) -> dict[Any, tuple[int, Any]]:
        h = hash(key)
        node: Any = self._trie
        for level in range(self._depth):
            node = node[(h >> (_BITS * level)) & _MASK]
            if node is None:
                return _EMPTY_LEAF
        return node

    def _ordered(self) -> list[tuple[int, Any, Any]]:
        out = [
            (seq, key, value)
            for leaf in _leaves(self._trie, self._depth)
            for key, (seq, value) in leaf.items()
        ]
        out.sort(key=_first)
        return out

    def order(self, keys: list[Any]) -> list[Any]:
        """``keys`` (which must be in this map) in this map's order."""
        if len(keys) < 2:
            return list(keys)
        small = self._small
        if small is not None:
            wanted = set(keys)
            if len(wanted) * 4 < len(small):
                position = {k: i for i, k in enumerate(small)}
                return sorted(wanted, key=position.__getitem__)
            return [k for k in small if k in wanted]
        return sorted(keys, key=lambda k: self._leaf(k)[k][0])

    def changed_keys(self, other: FrozenMap) -> list[Any]:
        """Keys whose value differs (by identity) between this map and ``other``, or that only
        one of them has: in time proportional to the difference when one was derived from the
        other by ``updated``. In this map's order, then the keys only ``other`` has."""
        if self is other:
            return []
        a, b = self._small, other._small
        if a is not None and b is not None:
            changed = [k for k, v in a.items() if b.get(k, _ABSENT) is not v]
            return changed + [k for k in b if k not in a]
        if a is None and b is None and self._depth == other._depth:
            mine: list[Any] = []
            theirs: list[Any] = []
            _diff_tries(self._trie, other._trie, self._depth, mine, theirs)
            return self.order(mine) + other.order(theirs)
        changed = [k for k, v in self.items() if other.get(k, _ABSENT) is not v]
        return changed + [k for k in other if k not in self]

    # -- changing (a new map) -------------------------------------------------------------------

    def updated(self, changes: Mapping[Any, Any], removed: Iterable[Any] = ()) -> FrozenMap:
        """A copy with the keys of ``changes`` set (values frozen already) and ``removed`` deleted.
        A new key goes last; a replaced one keeps its place."""
        gone = list(dict.fromkeys(k for k in removed if k in self and k not in changes)) if removed else ()
        if not changes and not gone:
            return self
        small = self._small
        if small is not None:
            data = small.copy()
            data.update(changes)
            for key in gone:
                del data[key]
            if len(data) > SMALL:
                return FrozenMap(data)
            out = _new_map()
            out._small, out._trie, out._depth, out._len, out._next, out._base = data, None, 0, 0, 0, None
            return out
        trie, depth, size, next_seq = self._trie, self._depth, self._len, self._next
        for key, value in changes.items():
            trie, grew, next_seq = _put(trie, depth, key, value, next_seq)
            size += grew
        for key in gone:
            trie = _remove(trie, depth, key)
            size -= 1
        if size <= SMALL // 2:
            return FrozenMap(FrozenMap._raw(None, trie, depth, size, next_seq).items())
        out = FrozenMap._raw(None, trie, depth, size, next_seq)
        if size > _WIDTH**depth * _LEAF * 4:
            ordered = out._ordered()
            out._build(((k, (s, v)) for s, k, v in ordered), size, next_seq)
        out._base = weakref.ref(self)
        return out

    def base(self) -> FrozenMap | None:
        """The large map this one was ``updated`` from, while it exists (views build on it)."""
        return self._base() if self._base is not None else None

    def insertions(self) -> int:
        """Keys set in this large map and the maps it was ``updated`` from where they were not
        (a key removed and set again counts twice): what put each key in its place."""
        return self._next

    # -- Python protocols ---------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return len(self) == len(other) and all(k in other and other[k] == v for k, v in self.items())

    __hash__ = None  # type: ignore[assignment]  # unhashable, as the dict it stands for

    def __repr__(self) -> str:
        return f"FrozenMap({dict(self.items())!r})"

    def __copy__(self) -> dict[Any, Any]:
        return thaw(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (self.items(),))


class FrozenList(tuple):
    """An immutable list (its items frozen); equal to a list with equal items."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return f"FrozenList({list(self)!r})"

    def __copy__(self) -> list[Any]:
        return thaw(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (tuple(self),))


def _new_map() -> FrozenMap:
    return FrozenMap.__new__(FrozenMap)


EMPTY = FrozenMap()
"""The empty frozen map."""

_ABSENT: Any = object()
_EMPTY_LEAF: dict[Any, tuple[int, Any]] = {}
_MAPS = (dict, TrackedDict)
_LISTS = (list, TrackedList)


def freeze(value: Any) -> Any:
    """A frozen copy of ``value``: dicts become FrozenMaps, lists FrozenLists, tuples tuples of
    frozen items; other objects a deep copy (frozen values are returned as they are)."""
    kind = type(value)
    if kind in SCALARS or kind is FrozenMap or kind is FrozenList:
        return value
    if kind in _MAPS:
        return FrozenMap({k: freeze(v) for k, v in value.items()})
    if kind in _LISTS:
        return FrozenList([freeze(v) for v in value])
    if kind is tuple:
        return tuple(freeze(v) for v in value)
    return copy.deepcopy(value)


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of a frozen value (dicts, lists and tuples rebuilt; other
    objects deep-copied, so the frozen one is never handed out)."""
    kind = type(value)
    if kind in SCALARS:
        return value
    if kind is FrozenMap:
        return {k: thaw(v) for k, v in value.items()}
    if kind is FrozenList:
        return [thaw(v) for v in value]
    if kind is tuple:
        return tuple(thaw(v) for v in value)
    return copy.deepcopy(value)


def plain(value: Any) -> Any:
    """``thaw(value)`` for a frozen value; any other value as it is."""
    kind = type(value)
    return thaw(value) if kind is FrozenMap or kind is FrozenList or kind is tuple else value


def same(frozen: Any, value: Any) -> bool:
    """Whether ``value`` is what the frozen ``frozen`` holds: equal as JSON (``1``, ``1.0`` and
    ``True`` differ), dicts with their keys in the same order."""
    kind = type(frozen)
    if kind is FrozenMap:
        if not isinstance(value, dict) or len(value) != len(frozen):
            return False
        return all(k == k2 and same(v, value[k2]) for (k, v), k2 in zip(frozen.items(), value))
    if kind is FrozenList:
        return isinstance(value, list) and len(value) == len(frozen) and all(map(same, frozen, value))
    if kind in SCALARS:
        return type(value) is kind and (frozen == value or frozen != frozen and value != value)
    if kind is tuple:
        return type(value) is tuple and len(value) == len(frozen) and all(map(same, frozen, value))
    return type(value) is kind and frozen == value


def frozen_map(value: Mapping[Any, Any]) -> FrozenMap:
    """``value`` as a FrozenMap (itself when it is one)."""
    return value if type(value) is FrozenMap else FrozenMap({k: freeze(v) for k, v in value.items()})


def update_along(frozen: FrozenMap, live: Any, paths: Trie | Any) -> FrozenMap:
    """``frozen`` with the live values at ``paths`` (a trie of changed paths, or WHOLE) frozen
    into it; everything else is shared with ``frozen``."""
    if paths is WHOLE:
        return frozen_map(live)
    changes: dict[Any, Any] = {}
    removed = []
    added = []
    for key, sub in paths.items():
        value = live.get(key, _ABSENT)
        if value is _ABSENT:
            removed.append(key)
            continue
        old = frozen.get(key, _ABSENT)
        if old is _ABSENT:
            added.append(key)
        elif sub is not WHOLE and type(old) is FrozenMap and isinstance(value, dict):
            changes[key] = update_along(old, value, sub)
        else:
            changes[key] = freeze(value)
    for key in live_order(live, added):  # new keys go last, in the live order
        changes[key] = freeze(live[key])
    return frozen.updated(changes, removed)


def live_order(live: Any, keys: list[Any]) -> list[Any]:
    """``keys``, added to the dict ``live`` since a snapshot, in its order. Keys added since a
    snapshot sit after every key present all along, so a scan from the end finds them among
    the keys written since."""
    if len(keys) < 2:
        return keys
    wanted = set(keys)
    found = []
    for key in reversed(live):
        if key in wanted:
            found.append(key)
            if len(found) == len(wanted):
                break
    return found[::-1]


def reorder(
    frozen: FrozenMap, before: FrozenMap, live: Any, inserted: list[tuple[tuple[Any, ...], list[Any]]]
) -> FrozenMap:
    """``frozen`` (the live state's copy, made from ``before``) with the keys of each dict in
    ``inserted`` in the live order, where a key of ``before`` was deleted and put back (it moved
    to the end: no patch says so)."""
    for path, keys in inserted:
        old: Any = before
        for key in path:
            old = old.get(key) if type(old) is FrozenMap else None
        if type(old) is not FrozenMap or not any(k in old for k in keys):
            continue
        frozen = _reordered_at(frozen, live, path)
    return frozen


def _reordered_at(frozen: FrozenMap, live: Any, path: tuple[Any, ...]) -> FrozenMap:
    if path:
        key = path[0]
        child, value = frozen.get(key), live.get(key) if isinstance(live, dict) else None
        if type(child) is not FrozenMap or not isinstance(value, dict):
            return frozen
        return frozen.updated({key: _reordered_at(child, value, path[1:])})
    if list(frozen) == list(live):
        return frozen
    return FrozenMap([(k, frozen[k]) for k in live])


# -- the trie ---------------------------------------------------------------------------------


def _first(entry: tuple[int, Any, Any]) -> int:
    return entry[0]


def _assemble(leaves: dict[int, dict[Any, Any]], depth: int, level: int) -> tuple[Any, ...]:
    """The trie node at ``level`` over ``leaves`` (keyed by their hash's low ``5 * depth`` bits)."""
    slots: list[Any] = [None] * _WIDTH
    shift = _BITS * level
    if level == depth - 1:
        for h, leaf in leaves.items():
            slots[(h >> shift) & _MASK] = leaf
        return tuple(slots)
    groups: dict[int, dict[int, dict[Any, Any]]] = {}
    for h, leaf in leaves.items():
        groups.setdefault((h >> shift) & _MASK, {})[h] = leaf
    for i, group in groups.items():
        slots[i] = _assemble(group, depth, level + 1)
    return tuple(slots)


def _leaves(node: Any, depth: int) -> Iterator[dict[Any, tuple[int, Any]]]:
    if node is None:
        return
    if depth == 1:
        yield from (leaf for leaf in node if leaf)
        return
    for child in node:
        yield from _leaves(child, depth - 1)


def _put(
    trie: tuple[Any, ...] | None, depth: int, key: Any, value: Any, next_seq: int
) -> tuple[tuple[Any, ...], int, int]:
    """The trie with ``key`` set; (trie, 1 if the key is new else 0, next seq)."""
    h = hash(key)
    path = []
    node: Any = trie
    for level in range(depth):
        path.append(node)
        node = None if node is None else node[(h >> (_BITS * level)) & _MASK]
    leaf = dict(node) if node else {}
    old = leaf.get(key)
    if old is None:
        leaf[key] = (next_seq, value)
        grew, next_seq = 1, next_seq + 1
    else:
        leaf[key] = (old[0], value)
        grew = 0
    return _rebuild(path, h, leaf), grew, next_seq


def _remove(trie: tuple[Any, ...] | None, depth: int, key: Any) -> tuple[Any, ...]:
    h = hash(key)
    path = []
    node: Any = trie
    for level in range(depth):
        path.append(node)
        node = node[(h >> (_BITS * level)) & _MASK]
    leaf = dict(node)
    del leaf[key]
    return _rebuild(path, h, leaf or None)


def _rebuild(path: list[Any], h: int, child: Any) -> tuple[Any, ...]:
    """New nodes from the leaf up to the root along ``path`` (the old nodes, root first)."""
    for level in range(len(path) - 1, -1, -1):
        node = path[level]
        items = list(node) if node is not None else [None] * _WIDTH
        items[(h >> (_BITS * level)) & _MASK] = child
        child = tuple(items)
    return child


def _diff_tries(a: Any, b: Any, depth: int, mine: list[Any], theirs: list[Any]) -> None:
    if a is b:
        return
    if depth == 0:
        a = a or _EMPTY_LEAF
        b = b or _EMPTY_LEAF
        for key, entry in a.items():
            other = b.get(key)
            if other is None or other[1] is not entry[1]:
                mine.append(key)
        theirs.extend(k for k in b if k not in a)
        return
    for i in range(_WIDTH):
        _diff_tries(a[i] if a is not None else None, b[i] if b is not None else None, depth - 1, mine, theirs)


__all__ = [
    "EMPTY",
    "FrozenList",
    "FrozenMap",
    "SMALL",
    "freeze",
    "frozen_map",
    "live_order",
    "plain",
    "reorder",
    "same",
    "thaw",
    "update_along",
]
