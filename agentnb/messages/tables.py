"""A pandas DataFrame as a model reads it: a compact text table, its shape first, its first rows
(capped), and how many rows were left out. pandas is never imported here: a frame is recognised
by its type's module."""

from __future__ import annotations

from typing import Any

MAX_ROWS = 20
"""Rows of a frame sent to a model (the head); the rest are counted, not sent."""
MAX_COLUMNS = 30
"""Columns shown (pandas elides the middle ones beyond this)."""
MAX_CELL = 60
"""Characters shown of one cell."""


def is_frame(obj: Any) -> bool:
    """Whether ``obj`` is a pandas DataFrame or Series."""
    kind = type(obj)
    return (kind.__module__ or "").partition(".")[0] == "pandas" and kind.__name__ in ("DataFrame", "Series")


def frame_text(frame: Any, max_rows: int = MAX_ROWS) -> str:
    """``frame`` as a compact text table: ``DataFrame: R rows x C columns``, its first
    ``max_rows`` rows, and a line saying how many rows are not shown."""
    if type(frame).__name__ == "Series":
        frame = frame.to_frame()
    rows, columns = frame.shape
    head = frame.head(max_rows).to_string(max_cols=MAX_COLUMNS, max_colwidth=MAX_CELL)
    lines = [f"DataFrame: {rows} rows x {columns} columns", head]
    if rows > max_rows:
        lines.append(f"({rows - max_rows} more rows not shown)")
    return "\n".join(lines)


__all__ = ["MAX_ROWS", "frame_text", "is_frame"]
