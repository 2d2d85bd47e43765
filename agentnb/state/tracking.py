"""Who changed the state, and how: checkpoints, patches, authors and rollback for one turn.

The state a tool mutates is the live dict (Agno's semantics); its dicts and lists are tracked
(``agentnb.state.tracked``), so the state's journal (``agentnb.state.journal``) knows which
paths were written since the last checkpoint. A checkpoint compares only those paths with the
last snapshot, emits a ``StateChanged`` with the RFC 6902 patch and the author, and takes a new
snapshot by copying only what the patch changed: snapshots are frozen (``agentnb.state.frozen``)
and share everything else with the one before, so "which keys changed since snapshot S" is an
identity test. A checkpoint costs what was written, not the size of the state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..events import StateCause, StateChanged
from .diff import PLAIN_LEAVES, escape, make_patch, plain_equal, tokens, top_level_key
from .frozen import FrozenList, FrozenMap, freeze, thaw
from .journal import Trie, mark, track
from .refreeze import live_order, reorder, update_along
from .state import State
from .tracked import WHOLE, TrackedDict, TrackedList

_ABSENT: Any = object()

Snapshot = FrozenMap
"""A frozen copy of the state data (never mutated; shares unchanged parts with others)."""


class StateTracker:
    """The state changes of one run, attributed to their authors."""

    def __init__(self, state: State, run_id: str, start: Snapshot | None) -> None:
        self.state = state
        self.run_id = run_id
        self.snapshot: Snapshot = start if start is not None else state.frozen(consume=True)
        """The state as of the last checkpoint."""
        self.pending: list[StateChanged] = []
        """Changes checkpointed but not emitted yet."""
        self.via: tuple[str, ...] = ()
        """The delegation chain of the run (its agent path), put on every cause it records."""

    def checkpoint(self, cause: StateCause) -> None:
        """Record whatever changed since the last checkpoint as made by ``cause``."""
        journal = self.state.journal
        if not journal.dirty and not journal.loose and self.snapshot is journal.image:
            return  # nothing written: the usual case, checked first
        found = journal.written(consume=True)
        written = found.paths
        if self.snapshot is not journal.image:
            # A snapshot from elsewhere (a restored or loaded history): the writes since the
            # last checkpoint do not say what differs from it.
            written = WHOLE
        elif written is None:
            return
        data, snapshot = self.state.data, self.snapshot
        if written is WHOLE:
            patch = make_patch(thaw(snapshot), data)
            # The whole state, written anew (its dicts may be new ones, in another order).
            new = snapshot if not patch and _same_order(snapshot, data) else freeze(data)
        elif all(sub is WHOLE for sub in written.values()):
            patch, new = _top_values(snapshot, data, written)
        else:
            before, after = _prune(snapshot, data, written)
            patch = make_patch(before, after)
            del before, after  # the live values they hold must not count as references below
            new = update_along(snapshot, data, _patched(patch, written))
        if found.inserted:
            new = reorder(new, snapshot, data, found.inserted)
        self.snapshot = journal.image = new
        if found.places:
            journal.settle(found.places)
        if patch:
            if self.via and not cause.via:
                cause = replace(cause, via=self.via)
            self.pending.append(StateChanged(run_id=self.run_id, patch=tuple(patch), cause=cause))

    def drain(self) -> list[StateChanged]:
        """The changes checkpointed since the last drain, in order."""
        pending, self.pending = self.pending, []
        return pending

    def changed_since(self, before: Snapshot) -> list[str]:
        """Top-level keys changed between the snapshot ``before`` and now (identity test)."""
        return self.snapshot.changed_keys(before)

    def rollback(self, to: Snapshot) -> None:
        """Undo everything since the snapshot ``to``: a tool call's changes apply whole or not at
        all. Changes not emitted yet are dropped."""
        self.pending = [e for e in self.pending if not isinstance(e, StateChanged)]
        journal = self.state.journal
        written = journal.written(consume=True).paths
        if self.snapshot is not journal.image or written is WHOLE:
            paths: Trie | Any = WHOLE
        else:
            paths = _frozen_changes(to, self.snapshot)
            _merge(paths, written or {})
        _restore(self.state.data, to, paths)
        journal.written(consume=True)  # the restore's own writes: the state is ``to`` again
        self.snapshot = journal.image = to


class Authors:
    """Attributes state changes inside a hook chain to the link whose code made them.

    ``on_link`` is the hook chain's callback: a checkpoint at every boundary between links, each
    change credited to the link that was running."""

    def __init__(self, tracker: StateTracker, cause: Callable[[str], StateCause]) -> None:
        self.tracker = tracker
        self.cause = cause
        self.stack: list[str] = []

    def on_link(self, what: str, link: str) -> None:
        """``('enter', name)`` before and ``('exit', name)`` after a link's own code runs."""
        if what == "enter":
            if self.stack:
                self.tracker.checkpoint(self.cause(self.stack[-1]))
            self.stack.append(link)
        else:
            self.tracker.checkpoint(self.cause(link))
            if self.stack and self.stack[-1] == link:
                self.stack.pop()

    def close(self) -> None:
        """The chain ended without error: whatever is left belongs to the tool."""
        self.tracker.checkpoint(self.cause("tool"))


# -- comparing only what was written ----------------------------------------------------------


def _top_values(
    frozen: FrozenMap, live: dict[str, Any], keys: Trie
) -> tuple[list[dict[str, Any]], FrozenMap]:
    """The patch and the new snapshot when every write was to top-level values as a whole (the
    usual case: ``_prune``, ``make_patch``, ``_patched`` and ``update_along`` in one pass)."""
    if len(keys) == 1:  # one key (a tool's append, a user's reset): nothing to order
        (key,) = keys
        old, new = frozen.get(key, _ABSENT), live.get(key, _ABSENT)
        patch = _grown_or_cut(key, old, new)
        if patch is None:
            patch = make_patch(
                {} if old is _ABSENT else {key: thaw(old)}, {} if new is _ABSENT else {key: new}
            )
        if not patch:
            return patch, frozen
        if new is _ABSENT:
            return patch, frozen.updated({}, (key,))
        return patch, frozen.updated({key: freeze(new)})
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for key in frozen.order([k for k in keys if k in frozen]):
        before[key] = thaw(frozen[key])
        value = live.get(key, _ABSENT)
        if value is not _ABSENT:
            after[key] = value
    added = live_order(live, [k for k in keys if k not in frozen and k in live])
    for key in added:
        after[key] = live[key]
    patch = make_patch(before, after)
    del before, after  # the live values they hold must not count as references below
    if not patch:
        return patch, frozen
    touched = {top_level_key(path) for op in patch for path in (op["path"], op.get("from")) if path}
    changed = [k for k in keys if (k if type(k) is str else str(k)) in touched]
    changes = {k: freeze(live[k]) for k in changed if k in frozen and k in live}
    for key in added:
        if key in touched or str(key) in touched:
            changes[key] = freeze(live[key])
    return patch, frozen.updated(changes, [k for k in changed if k not in live])


def _grown_or_cut(key: Any, old: Any, new: Any) -> list[dict[str, Any]] | None:
    """The patch of a top-level list of plain leaves (strings, whole numbers, booleans, nulls)
    that only grew at its end or was only cut at its end (an append, ``state["items"] = []``),
    as ``make_patch`` makes it: the added items, or one removal per item cut, at the first
    index cut. None for anything else (``make_patch`` compares it)."""
    if type(old) is not FrozenList or type(new) not in (TrackedList, list):
        return None
    n, m = len(old), len(new)
    if n == m:
        return None
    path = f"/{escape(key)}"
    if m > n:
        added = new[n:]
        if (n and not plain_equal(old, new[:n])) or any(type(v) not in PLAIN_LEAVES for v in added):
            return None
        return [{"op": "add", "path": f"{path}/{i}", "value": v} for i, v in enumerate(added, n)]
    if m and not plain_equal(old[:m], new):
        return None
    cut = f"{path}/{m}"
    return [{"op": "remove", "path": cut} for _ in range(n - m)]


def _prune(frozen: FrozenMap, live: dict[str, Any], written: Trie) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parts of the snapshot and of the live state that ``written`` covers, as two plain
    documents with the same paths. jsonpatch writes no operation for what is equal in both, so
    the patch between these is the patch between the whole states: removed keys in the
    snapshot's order, added ones in the live order, the others compared."""
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for key in frozen.order([k for k in written if k in frozen]):
        sub, old, new = written[key], frozen[key], live.get(key, _ABSENT)
        if sub is not WHOLE and type(old) is FrozenMap and type(new) is TrackedDict:
            before[key], after[key] = _prune(old, new, sub)
        else:
            before[key] = thaw(old)
            if new is not _ABSENT:
                after[key] = new
    added = [k for k in written if k not in frozen and k in live]
    for key in live_order(live, added):
        after[key] = live[key]
    return before, after


def _patched(patch: list[dict[str, Any]], written: Trie) -> Trie | Any:
    """The paths a patch changes, down to where ``written`` (which holds them all) says a value
    was written whole, with the state's own keys (a pointer token is a string)."""
    trie: Trie = {}
    for op in patch:
        for pointer in (op["path"], op.get("from")):
            if pointer is None:
                continue
            node: Any = written
            path: list[Any] = []
            for token in tokens(pointer):
                key = token if token in node else next((k for k in node if escape(k) == escape(token)), None)
                if key is None:  # not where a write was noted: copy from here down
                    break
                path.append(key)
                node = node[key]
                if node is WHOLE:
                    break
            if not path or mark(trie, tuple(path)):
                return WHOLE
    return trie


def _same_order(frozen: Any, live: Any) -> bool:
    """Whether the dicts of two equal states list their keys in the same order."""
    if isinstance(frozen, FrozenMap) and isinstance(live, dict):
        return list(frozen) == list(live) and all(_same_order(v, live[k]) for k, v in frozen.items())
    if isinstance(frozen, FrozenList) and isinstance(live, list):
        return all(map(_same_order, frozen, live))
    return True


# -- undoing -----------------------------------------------------------------------------------


def _frozen_changes(a: FrozenMap, b: FrozenMap) -> Trie:
    """The paths where two snapshots differ (by identity: they share what did not change)."""
    out: Trie = {}
    for key in a.changed_keys(b):
        x, y = a.get(key, _ABSENT), b.get(key, _ABSENT)
        if type(x) is FrozenMap and type(y) is FrozenMap:
            out[key] = _frozen_changes(x, y)  # maybe only the order of its keys: visit it
        else:
            out[key] = WHOLE
    return out


def _merge(into: Trie, other: Trie) -> None:
    for key, sub in other.items():
        mine = into.get(key)
        if mine is None or sub is WHOLE:
            into[key] = sub
        elif mine is not WHOLE:
            _merge(mine, sub)


def _only_here(container: TrackedDict, parent: dict[str, Any], key: Any) -> bool:
    """Whether ``container`` is in the state at ``parent[key]`` and nowhere else (then it can be
    put back in place; one in two places is replaced by a copy at each)."""
    return container._more is None and container._parent is parent and container._key == key


def _restore(live: dict[str, Any], frozen: FrozenMap, paths: Trie | Any) -> None:
    """Put the live state back as ``frozen`` at ``paths`` (writing through the tracked dicts)."""
    journal = live._journal  # type: ignore[attr-defined]  # a state's data is a TrackedDict
    if paths is WHOLE:
        live.clear()
        live.update({k: track(thaw(v), journal, owned=True) for k, v in frozen.items()})
        return
    for key, sub in paths.items():
        old, cur = frozen.get(key, _ABSENT), live.get(key, _ABSENT)
        if old is _ABSENT:
            live.pop(key, None)
        elif (
            sub is not WHOLE
            and type(old) is FrozenMap
            and type(cur) is TrackedDict
            and _only_here(cur, live, key)
        ):
            _restore(cur, old, sub)
        else:
            live[key] = track(thaw(old), journal, owned=True)
    if list(live) != list(frozen):  # a key deleted and put back went last: restore the order
        pairs = [(k, dict.__getitem__(live, k)) for k in frozen]
        dict.clear(live)
        dict.update(live, pairs)


__all__ = ["Authors", "Snapshot", "StateTracker"]
