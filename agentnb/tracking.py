"""Who changed the state, and how: checkpoints, patches, authors and rollback for one turn.

The state a tool mutates is the live dict (Agno's semantics). At each checkpoint the tracker
compares it with its last snapshot, emits a ``StateChanged`` with the RFC 6902 patch and the
author, and takes a new snapshot. Snapshots are never mutated: a new one shares the unchanged
top-level values of the last one, so a checkpoint copies what changed, not the whole state, and
"which keys changed since snapshot S" is an identity test.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .diff import make_patch, top_level_key
from .events import StateCause, StateChanged
from .state import State

_MISSING = object()

Snapshot = dict[str, Any]
"""A frozen copy of the state data (never mutated; shares unchanged values with others)."""


class StateTracker:
    """The state changes of one run, attributed to their authors."""

    def __init__(self, state: State, run_id: str, start: Snapshot | None) -> None:
        self.state = state
        self.run_id = run_id
        self.snapshot: Snapshot = start if start is not None else copy.deepcopy(state.data)
        """The state as of the last checkpoint."""
        self.pending: list[StateChanged] = []
        """Changes checkpointed but not emitted yet."""

    def checkpoint(self, cause: StateCause) -> None:
        """Record whatever changed since the last checkpoint as made by ``cause``."""
        data = self.state.data
        snap = self.snapshot
        if data == snap:
            return
        patch = make_patch(snap, data)
        # Only the keys the patch touches are copied; the others are shared with the last
        # snapshot, which is what makes changed_since() an identity test.
        touched = {top_level_key(p) for op in patch for p in (op["path"], op.get("from")) if p}
        touched.update(k for k in data if k not in snap)
        self.snapshot = {k: copy.deepcopy(v) if k in touched else snap.get(k, v) for k, v in data.items()}
        if patch:
            self.pending.append(StateChanged(run_id=self.run_id, patch=tuple(patch), cause=cause))

    def drain(self) -> list[StateChanged]:
        """The changes checkpointed since the last drain, in order."""
        pending, self.pending = self.pending, []
        return pending

    def changed_since(self, before: Snapshot) -> list[str]:
        """Top-level keys changed between the snapshot ``before`` and now (identity test)."""
        snap = self.snapshot
        keys = [k for k, v in snap.items() if before.get(k, _MISSING) is not v]
        keys += [k for k in before if k not in snap]
        return keys

    def rollback(self, to: Snapshot) -> None:
        """Undo everything since the snapshot ``to``: a tool call's changes apply whole or not at
        all. Changes not emitted yet are dropped."""
        self.pending = [e for e in self.pending if not isinstance(e, StateChanged)]
        self.state.data.clear()
        self.state.data.update(copy.deepcopy(to))
        self.snapshot = to


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


__all__ = ["Authors", "Snapshot", "StateTracker"]
