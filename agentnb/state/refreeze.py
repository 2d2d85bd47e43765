"""Bringing a frozen copy of the state up to date with the live state, along the paths written.

A checkpoint knows which paths were written since the last one (``agentnb.state.journal``):
``update_along`` freezes only the live values at those paths into the last frozen copy, which
shares everything else. A dict's key deleted and put back has moved to the end, which no patch
says: ``reorder`` puts such keys in the live order, and ``live_order`` finds where keys added
since a snapshot sit.
"""

from __future__ import annotations

from typing import Any

from .frozen import FrozenMap, freeze, frozen_map
from .journal import Trie
from .tracked import WHOLE

_ABSENT: Any = object()


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


__all__ = ["live_order", "reorder", "update_along"]
