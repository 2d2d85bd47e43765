"""How a ``copy`` delegation's changes come up: each operation on the parent's keys applied
with the member-side author that made it, conflicts between siblings refused unless the key has a
merge handler."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..events import StateCause
from ..history.records import TurnRecord
from ..state.diff import apply_patch, tokens, top_level_key
from ..state.frozen import thaw
from ..state.state import replace_values
from ..state.tracking import StateTracker


@dataclass
class ChildRun:
    """A member run and what it brings up."""

    member: str
    """The member's name."""
    record: TurnRecord | None = None
    """Its record (a turn of the member's own history), once it ran."""
    ops: list[tuple[dict[str, Any], StateCause]] = field(default_factory=list)
    """``copy``: each operation on the parent's keys with the member-side author that made it."""
    outputs: list[tuple[str, Any, Any]] = field(default_factory=list)
    """``none``: (parent key, value, handler) for each ``outputs_to_state`` entry that has a value."""
    after: dict[str, Any] = field(default_factory=dict)
    """The member's state at its end (for merge handlers)."""

    @property
    def done(self) -> TurnRecord:
        """Its record (it ran)."""
        assert self.record is not None, "a child run is read only after it ran"
        return self.record


def merge(
    run: ChildRun, agent: Any, state: Any, tracker: StateTracker, writers: dict[str, str], cause: StateCause
) -> str | None:
    """Apply a ``copy`` member's changes to the parent's keys, each attributed to its author;
    the text of a refusal when a sibling (or a call beside it) changed the same path and the
    key has no merge handler, or a patch no longer applies."""
    handlers = _explicit_handlers(agent)
    combined: dict[str, Any] = {}
    for op, _ in run.ops:
        other = next((w for p, w in writers.items() if w != run.member and _related(p, op["path"])), None)
        if other is None:
            continue
        key = top_level_key(op["path"]) or ""
        if key not in handlers:
            return _conflict_text(run, other, op["path"], key)
        combined[key] = handlers[key]
    start, pending = tracker.snapshot, list(tracker.pending)
    try:
        for key, handler in combined.items():
            state.set(key, copy.deepcopy(run.after.get(key)), handler_override=handler)
            tracker.checkpoint(replace(cause, handler=getattr(handler, "__name__", None)))
        for chain, ops in _groups(
            [(op, author) for op, author in run.ops if top_level_key(op["path"]) not in combined]
        ):
            current: dict[Any, Any] = {
                k: thaw(tracker.snapshot.get(k))
                for k in dict.fromkeys(top_level_key(op["path"]) for op in ops)
                if k in state.data
            }
            patched = apply_patch(current, ops)
            for key, value in patched.items():
                state.set(key, value, handler_override=replace_values)
            for key in current.keys() - patched.keys():
                state.data.pop(key, None)
            tracker.checkpoint(replace(cause, via=chain))
    except Exception as exc:  # a patch that no longer applies (a sibling reshaped a list)
        tracker.rollback(start)
        tracker.pending = pending  # the siblings' merges before this one stand, with their events
        other = next(iter(set(writers.values()) - {run.member}), "an earlier delegation")
        return _conflict_text(
            run, other, run.ops[0][0]["path"], top_level_key(run.ops[0][0]["path"]) or "", why=str(exc)
        )
    for op, _ in run.ops:
        writers.setdefault(op["path"], run.member)
    return None


def author(path: str, changes: Sequence[Any], run_path: tuple[str, ...]) -> StateCause:
    """The member-side change that last wrote ``path`` (or a path around or under it)."""
    for change in reversed(changes):
        if any(_related(op["path"], path) for op in change.patch):
            return change.cause
    return StateCause(kind="user", via=run_path)


def _chain(cause: StateCause) -> tuple[str, ...]:
    """The delegation chain of a member-side change, for the merge that carries it up."""
    return cause.via if cause.kind == "merge" else (*cause.via, cause.label())


def _groups(
    ops: list[tuple[dict[str, Any], StateCause]],
) -> list[tuple[tuple[str, ...], list[dict[str, Any]]]]:
    """Consecutive operations with one author, together."""
    out: list[tuple[tuple[str, ...], list[dict[str, Any]]]] = []
    for op, author in ops:
        chain = _chain(author)
        if out and out[-1][0] == chain:
            out[-1][1].append(op)
        else:
            out.append((chain, [op]))
    return out


def _related(a: str, b: str) -> bool:
    """Whether one JSON pointer is the other or lies under it."""
    ta, tb = tokens(a), tokens(b)
    n = min(len(ta), len(tb))
    return ta[:n] == tb[:n]


def _explicit_handlers(agent: Any) -> dict[str, Any]:
    """The merge handlers the parent's state schema declares (defaults do not count)."""
    schema = getattr(agent, "state_schema", None) or {}
    return {
        k: v["handler"] for k, v in schema.items() if isinstance(v, Mapping) and callable(v.get("handler"))
    }


def _conflict_text(run: ChildRun, other: str, path: str, key: str, why: str = "") -> str:
    extra = f" ({why})" if why else ""
    if other.startswith("tool:"):  # a call of the response run while the member ran (executor.Running)
        both = (
            f"{run.member!r} and the {other[5:]!r} call before it both changed {path} in one response "
            f"({run.member!r} ran beside that call, on the state from before it)"
        )
    else:
        both = f"{run.member!r} and {other!r} both changed {path} in delegations of one response"
    return (
        f"{both}{extra}; "
        f"the changes of {run.member!r} were not merged (they stay in its own run, its turn {run.done.number}). "
        f"Give {key!r} a merge handler (state_schema={{{key!r}: {{'type': ..., 'handler': fn}}}}), "
        f"or delegate these tasks one at a time."
    )


__all__ = ["ChildRun", "author", "merge"]
