"""The state as the inspector shows it: the state a turn shows, its change summary (by
``agentnb.state.diff``'s rule) and the pending edits, each value as short JSON text."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..history.render import value_text
from ..state.diff import MISSING, Change

if TYPE_CHECKING:
    from ..agent import Agent
    from ..history.history import TurnChanges, TurnRecord
    from ..state.edits import StateEdit

CHANGE_TEXT = 120
"""Characters of the old and new value shown for one state change."""

MAX_CHANGED_PATHS = 200
"""Changed paths sent in one change summary; the rest are only counted (``more``)."""


def turn_state(record: TurnRecord, agent: Agent) -> dict[str, Any]:
    """The state a turn ended with; the live state itself while it runs (encode it at once:
    the run changes it)."""
    if record.status == "running":
        return agent.session_state
    return record.state_after


def compact_change(change: Change) -> dict[str, Any]:
    """One state change as the browser shows it: old and new as short JSON text."""
    return {
        "path": change.path,
        "key": change.key,
        "how": change.how,
        "authors": list(change.authors),
        "old": None if change.how == "added" else preview_text(change.old),
        "new": None if change.how == "removed" else preview_text(change.new),
    }


_SCALARS = (str, int, float, bool, type(None))


def preview_text(value: Any, limit: int = CHANGE_TEXT) -> str:
    """``agentnb.history.render.value_text`` of a value, encoding only the part that is shown: the old
    value of a key holding a large state costs the preview, not the whole value."""
    if isinstance(value, _SCALARS) or (
        isinstance(value, (list, dict))
        and len(value) <= 8
        and all(isinstance(v, _SCALARS) for v in (value.values() if isinstance(value, dict) else value))
    ):
        return value_text(value, limit)  # small: encoded whole at C speed
    encoder = json.JSONEncoder(ensure_ascii=False)
    chunks: list[str] = []
    size = 0
    try:
        # iterencode (not one-shot) is lazy: stop as soon as the preview is full.
        for chunk in encoder.iterencode(value):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                break
    except (TypeError, ValueError):  # not plain JSON (an object, a cycle): value_text's fallbacks
        return value_text(value, limit)
    text = "".join(chunks)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compact_changes(changes: TurnChanges) -> dict[str, Any]:
    """A turn's change summary for the wire: every key, and the first ``MAX_CHANGED_PATHS`` paths."""
    return summarize_changes(changes.keys, changes.paths)


def summarize_changes(keys: Sequence[Change], paths: Sequence[Change]) -> dict[str, Any]:
    """``compact_changes`` of the changed keys and paths (``ChangeLog.keys`` / ``paths``)."""
    return {
        "keys": [compact_change(c) for c in keys],
        "paths": [compact_change(c) for c in paths[:MAX_CHANGED_PATHS]],
        "more": max(0, len(paths) - MAX_CHANGED_PATHS),
    }


def compact_edit(edit: StateEdit) -> dict[str, Any]:
    """One pending edit of the state, as the State tab lists it."""
    return {
        "path": edit.path,
        "how": edit.how,
        "old": None if edit.old is MISSING else preview_text(edit.old),
        "new": None if edit.new is MISSING else preview_text(edit.new),
    }


__all__ = ["compact_changes", "compact_edit", "preview_text", "summarize_changes", "turn_state"]
