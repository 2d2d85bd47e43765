"""What changed among a request's images and files, by hash: how a replay drift names them.

A recorded request refers to each image or file by its hash, with its description beside it
(``agentnb.messages.wire``), so replay matches a request whose parts have the same bytes and a
changed figure is a changed hash. The drift report's diff shows that as two long hex strings;
``part_changes`` says it in words: ``image 1 changed: sha256 3a5f0c1e… → 9b2d4e77…``.
"""

from __future__ import annotations

from typing import Any

from ..messages.wire import PART_KEY

SHOWN = 12
"""Hex digits of a hash shown (enough to tell two apart, short enough to read)."""


def described_parts(payload: Any) -> list[dict[str, Any]]:
    """The descriptions of the images and files a request refers to by hash, in the order they
    appear in it (the same part sent twice is there twice)."""
    found: list[dict[str, Any]] = []
    stack = [payload]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            described = node.get(PART_KEY)
            if isinstance(described, dict) and isinstance(described.get("sha256"), str):
                found.append(described)
            stack.extend(reversed([v for k, v in node.items() if k != PART_KEY]))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return found


def _short(sha: str) -> str:
    return f"{sha[:SHOWN]}…"


def part_changes(recorded: Any, payload: Any) -> list[str]:
    """One line per image or file that differs between two requests: numbered by kind in order
    (``image 1``, ``file 1``), with the recorded and the new hash; a part added or removed is
    said so. Empty when the parts are the same."""
    before, after = described_parts(recorded), described_parts(payload)
    changes: list[str] = []
    counts: dict[str, int] = {}
    for i in range(max(len(before), len(after))):
        old = before[i] if i < len(before) else None
        new = after[i] if i < len(after) else None
        kind = str((new or old or {}).get("type") or "part")
        counts[kind] = counts.get(kind, 0) + 1
        name = f"{kind} {counts[kind]}"
        if old is None and new is not None:
            changes.append(f"{name} added: sha256 {_short(new['sha256'])} ({new.get('name', '')})")
        elif new is None and old is not None:
            changes.append(f"{name} removed: sha256 {_short(old['sha256'])} ({old.get('name', '')})")
        elif old is not None and new is not None and old["sha256"] != new["sha256"]:
            label = f" ({new['name']})" if new.get("name") and new.get("name") == old.get("name") else ""
            changes.append(f"{name}{label} changed: sha256 {_short(old['sha256'])} → {_short(new['sha256'])}")
    return changes


__all__ = ["SHOWN", "described_parts", "part_changes"]
