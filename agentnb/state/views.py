"""Read-only views of frozen states: what a turn record hands out as its states.

A view is a real ``dict`` / ``list`` (``json``, pandas, pydantic and the inspector read it as
plain data) that refuses changes, so views can be shared: the view of a state a turn left is
the one the next turn's change summary shows as "before", and the view of a large map is built
from the view of the map it was derived from (a copy at C speed, then the keys that changed),
not rebuilt whole. ``copy.deepcopy(view)`` is a plain, mutable copy.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from typing import Any, NoReturn

from .frozen import SMALL, FrozenList, FrozenMap
from .tracked import SCALARS

READ_ONLY = "a turn's recorded state is read-only; copy.deepcopy(...) it to change a copy"


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(READ_ONLY)


class StateView(dict):
    """A frozen dict as a read-only plain dict."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = pop = popitem = setdefault = update = clear = _refuse

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in dict.items(self)}

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (dict, (dict(self),))


class ListView(list):
    """A frozen list as a read-only plain list."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = (
        sort
    ) = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in list.__iter__(self)]

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (list, (list(self),))


_KEPT = 4
"""Views of large maps kept for the next view to be built from (the last few turns' states)."""
_ANCESTORS = 1_000
"""Updates a view is built across (the changed keys between a map and its ancestor are found in
time proportional to the difference, not the map's size)."""
_kept: OrderedDict[int, tuple[FrozenMap, StateView]] = OrderedDict()
_lock = threading.Lock()


def view(value: Any) -> Any:
    """A read-only plain view of a frozen value (other values as they are)."""
    kind = type(value)
    if kind in SCALARS:
        return value
    if kind is FrozenMap:
        return _map_view(value)
    if kind is FrozenList:
        return ListView([view(v) for v in value])
    if kind is tuple:
        return tuple(view(v) for v in value)
    return value


def _map_view(frozen: FrozenMap) -> StateView:
    if len(frozen) <= SMALL:
        return StateView([(k, view(v)) for k, v in frozen.items()])
    with _lock:
        kept = _kept.get(id(frozen))
        if kept is not None and kept[0] is frozen:
            _kept.move_to_end(id(frozen))
            return kept[1]
        base, kept = _kept_ancestor(frozen)
    changed = frozen.changed_keys(base) if base is not None else None
    if kept is not None and base is not None and changed is not None and _in_place(frozen, base, changed):
        out = StateView(kept[1])  # an ancestor's view, copied in C; then what changed since
        for key in changed:
            if key in frozen:
                dict.__setitem__(out, key, view(frozen[key]))
            else:
                dict.__delitem__(out, key)
    else:
        out = StateView([(k, view(v)) for k, v in frozen.items()])
    with _lock:
        _kept[id(frozen)] = (frozen, out)
        if len(_kept) > _KEPT:
            _kept.popitem(last=False)
    return out


def _kept_ancestor(frozen: FrozenMap) -> tuple[FrozenMap | None, tuple[FrozenMap, StateView] | None]:
    """The nearest map ``frozen`` was derived from (through ``_ANCESTORS`` updates at most) whose
    view is kept, and that view: the turns in between may never have been viewed (a loop of
    quick turns the inspector sends as History rows)."""
    base = frozen.base()
    for _ in range(_ANCESTORS):
        if base is None:
            break
        kept = _kept.get(id(base))
        if kept is not None and kept[0] is base:
            return base, kept
        base = base.base()
    return None, None


def _in_place(frozen: FrozenMap, base: FrozenMap, changed: list[Any]) -> bool:
    """Whether ``base``'s order with ``changed`` applied (new keys last) is ``frozen``'s order:
    not when a key was removed and set again since (it moved to the end, perhaps with the same
    value), which shows as more insertions than new keys."""
    fresh = sum(1 for key in changed if key not in base and key in frozen)
    return frozen.insertions() - base.insertions() == fresh


__all__ = ["ListView", "READ_ONLY", "StateView", "view"]
