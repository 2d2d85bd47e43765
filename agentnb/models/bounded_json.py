"""Decoding JSON a server sent, with limits: depth of nesting, digits of integers, no NaN.

Anything malformed is a ``ModelResponseError`` saying what the server sent (``kind`` and
``show`` name and render a value for those messages). An integer too long to read is kept as a
``LongInt`` inside a tool call's arguments (that call fails, not the answer), and ``NaN`` /
``Infinity`` inside a ``usage`` block are read as null (a count the server does not know).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ModelResponseError
from ..util.text import one_line

MAX_DEPTH = 64
"""Deepest JSON nesting accepted in an answer (real ones are under ten levels)."""


def kind(value: Any) -> str:
    """'a list', 'an int', 'null': how a JSON value is named in messages."""
    if value is None:
        return "null"
    name = {dict: "object", list: "list", str: "string", bool: "boolean", int: "int", float: "number"}.get(
        type(value), type(value).__name__
    )
    return ("an " if name[0] in "aeiou" else "a ") + name


def show(value: Any, limit: int = 60) -> str:
    """A short, one-line rendering of a value the server sent."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=True, default=repr)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class _NonFinite:
    """Where a server sent ``NaN`` or ``Infinity`` (not JSON numbers) while a token count is read."""

    __slots__ = ()


_NON_FINITE = _NonFinite()


def load_json(data: bytes | str, what: str) -> Any:
    """Decode ``data``; ModelResponseError (naming ``what``) when it is not bounded, valid JSON.
    ``NaN`` / ``Infinity`` are refused, except inside a ``usage`` block, where they are read as
    null (a count the server does not know: the usage is then estimated)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ModelResponseError(
                f"sent {what} that is not valid JSON: not UTF-8 text (byte {exc.start})"
            ) from None
    if not data.strip():
        raise ModelResponseError(f"sent an empty {what}")
    long_ints: list[LongInt] = []

    def parse_int(text: str) -> Any:
        if len(text) > _INT_DIGITS:
            long_ints.append(LongInt(text))
            return long_ints[-1]
        return int(text)

    try:
        try:
            value = json.loads(data, parse_constant=_reject_constant, parse_int=parse_int)
        except ValueError as exc:
            if "is not valid JSON" not in str(exc):
                raise
            value = json.loads(data, parse_constant=lambda name: _NON_FINITE, parse_int=parse_int)
            if not _only_in_usage(value):
                raise
        if long_ints and not _only_in_arguments(value):
            digits = len(long_ints[0].text.lstrip("-"))
            raise ValueError(f"an integer of {digits:,} digits, longer than Python reads ({_INT_DIGITS:,})")
    except RecursionError:
        raise ModelResponseError(f"sent {what} that is not valid JSON: nested too deeply to read") from None
    except ValueError as exc:  # JSONDecodeError, and integers too long to convert
        raise ModelResponseError(
            f"sent {what} that is not valid JSON ({one_line(exc)[:100]}): {show(data)}"
        ) from None
    if not _shallow(value):
        raise ModelResponseError(f"sent {what} nested deeper than {MAX_DEPTH} levels")
    return value


_INT_DIGITS = 4300
"""Python's own limit on the digits of an integer read from text (``sys.get_int_max_str_digits``)."""


class LongInt:
    """An integer too long to read, inside a tool call's arguments: kept as its digits, so the
    call (not the answer) fails, saying so (``arguments_text`` writes it back as it came)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _only_in_arguments(value: Any) -> bool:
    """Whether every LongInt in ``value`` is inside a tool call's ``arguments``."""
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, inside = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in pairs:
            if isinstance(child, LongInt) and not inside:
                return False
            if isinstance(child, (dict, list)):
                stack.append((child, inside or key == "arguments"))
    return True


def _only_in_usage(value: Any) -> bool:
    """Whether every NaN / Infinity in ``value`` is inside a ``usage`` object (each is then
    replaced by None, in place)."""
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, in_usage = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in pairs:
            if child is _NON_FINITE:
                if not in_usage:
                    return False
                item[key] = None
            elif isinstance(child, (dict, list)):
                stack.append((child, in_usage or key == "usage"))
    return True


def _shallow(value: Any) -> bool:
    """Whether ``value`` nests at most MAX_DEPTH levels, not counting a tool call's arguments
    (sent as an object: they become text, and a call whose arguments nest too deeply fails
    alone, as its error result)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict):
            stack.extend(
                (v, depth + 1) for k, v in item.items() if isinstance(v, (dict, list)) and k != "arguments"
            )
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return True


__all__ = ["MAX_DEPTH", "LongInt", "kind", "load_json", "show"]
