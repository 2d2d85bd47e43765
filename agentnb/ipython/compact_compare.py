"""Two turns side by side as the inspector's Compare tab receives them: the comparison's rows
folded where long and unchanged (``compact_events`` and its neighbours have the forms of everything else)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..history.comparison import Comparison, LineRow
from .compact_prompt import compact_tokens

FOLD_KEEP = 2
"""Equal lines kept on each side of a folded run in a comparison."""

MAX_ROWS = 400
"""Rows of one side-by-side text sent; the rest are counted."""


def compact_rows(rows: Sequence[LineRow]) -> list[dict[str, Any]]:
    """Side-by-side rows with long runs of equal lines folded into one ``fold`` row."""
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j].how == "same":
            j += 1
        run = j - i
        if run > 2 * FOLD_KEEP + 1:
            keep_start = 0 if i == 0 else FOLD_KEEP
            keep_end = 0 if j == len(rows) else FOLD_KEEP
            out.extend({"how": "same", "left": r.left, "right": r.right} for r in rows[i : i + keep_start])
            out.append({"how": "fold", "count": run - keep_start - keep_end})
            out.extend({"how": "same", "left": r.left, "right": r.right} for r in rows[j - keep_end : j])
        else:
            out.extend({"how": "same", "left": r.left, "right": r.right} for r in rows[i:j])
        if j < len(rows):
            out.append({"how": rows[j].how, "left": rows[j].left, "right": rows[j].right})
            j += 1
        i = j
    if len(out) > MAX_ROWS:
        out = out[:MAX_ROWS] + [{"how": "fold", "count": len(out) - MAX_ROWS, "cut": True}]
    return out


def compact_comparison(c: Comparison) -> dict[str, Any]:
    """Two turns side by side for the Compare tab (``agentnb.history.compare``)."""
    return {
        "left": c.left,
        "right": c.right,
        "causes": list(c.causes),
        "effects": list(c.effects),
        "same": c.same,
        "tokens": [compact_tokens(t) for t in c.tokens],
        "sections": [
            {
                "source": s.source,
                "how": s.how,
                "rows": compact_rows(s.rows),
                "left_tokens": s.left_tokens,
                "right_tokens": s.right_tokens,
            }
            for s in c.sections
        ],
        "requests": [
            {"call": r.call, "how": r.how, "parts": list(r.parts), "rows": compact_rows(r.rows)}
            for r in c.requests
        ],
        "tool_calls": [
            {"number": t.number, "how": t.how, "left": t.left, "right": t.right} for t in c.tool_calls
        ],
        "state": [
            {
                "key": k.key,
                "how": k.how,
                "left": k.left,
                "right": k.right,
                "hidden": k.hidden,
                "paths": list(k.paths),
            }
            for k in c.state
        ],
        "answers": list(c.answers),
    }


__all__ = ["compact_comparison", "compact_rows"]
