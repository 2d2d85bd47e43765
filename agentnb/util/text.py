"""Text helpers every layer uses: one line of an error, a value cut to a length."""

from __future__ import annotations

ELLIPSIS = "…"


def one_line(value: object) -> str:
    """The first line of an exception's (or any value's) text; its class name when empty."""
    text = str(value).strip()
    return text.splitlines()[0].strip() if text else type(value).__name__


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + ELLIPSIS


__all__ = ["ELLIPSIS", "one_line", "shorten"]
