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

from .hash_trie import BITS, EMPTY_LEAF, MASK, WIDTH, assemble, diff_tries, leaves_of, put, remove
from .tracked import SCALARS, TrackedDict, TrackedList

SMALL = 32
"""Maps of up to this many keys are stored as a plain dict; larger ones as a hash trie
(``agentnb.state.hash_trie``)."""
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
        while WIDTH**depth * _LEAF < size:
            depth += 1
        leaves: dict[int, dict[Any, tuple[int, Any]]] = {}
        mask = (1 << (BITS * depth)) - 1
        for key, entry in entries:
            leaves.setdefault(hash(key) & mask, {})[key] = entry
        self._trie = assemble(leaves, depth, 0)
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
            node = node[(h >> (BITS * level)) & MASK]
            if node is None:
                return EMPTY_LEAF
        return node

    def _ordered(self) -> list[tuple[int, Any, Any]]:
        out = [
            (seq, key, value)
            for leaf in leaves_of(self._trie, self._depth)
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
            diff_tries(self._trie, other._trie, self._depth, mine, theirs)
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
            trie, grew, next_seq = put(trie, depth, key, value, next_seq)
            size += grew
        for key in gone:
            trie = remove(trie, depth, key)
            size -= 1
        if size <= SMALL // 2:
            return FrozenMap(FrozenMap._raw(None, trie, depth, size, next_seq).items())
        out = FrozenMap._raw(None, trie, depth, size, next_seq)
        if size > WIDTH**depth * _LEAF * 4:
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


def _first(entry: tuple[int, Any, Any]) -> int:
    return entry[0]


__all__ = [
    "EMPTY",
    "FrozenList",
    "FrozenMap",
    "SMALL",
    "freeze",
    "frozen_map",
    "plain",
    "same",
    "thaw",
]
