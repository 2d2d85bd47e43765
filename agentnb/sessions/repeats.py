"""Long texts that a session line or snapshot holds more than once, written once.

A turn shows the model the same long text in several places: the rendered system prompt is in
the ``prompt_rendered`` event, in every ``model_requested`` payload, in the turn's messages and
in the agent's conversation; a tool's answer is in ``tool_call_finished``, in the tool message
and in the next request. With a large state in the prompt that was four to six copies of it per
turn. ``drop_repeats`` keeps the first copy where it is, puts ``null`` in the others and says
where each came from (``"repeats": [[from, to], ...]`` beside the data); ``restore_repeats``
puts them back. Positions, not markers: no stored value can be mistaken for a reference.
"""

from __future__ import annotations

from typing import Any

from ..errors import SessionFormatError

MIN_CHARS = 1024
"""Texts shorter than this are written wherever they occur (a reference would not pay)."""

Path = list[str | int]


def drop_repeats(data: dict[str, Any]) -> tuple[dict[str, Any], list[list[Path]]]:
    """``data`` with every repeat of a long text replaced by None, and ``[[first, repeat],
    ...]`` (JSON-ready paths). ``data`` itself is not changed: only the containers on the
    way to a repeat are copied (the rest may be a module's live objects)."""
    first: dict[str, Path] = {}
    pairs: list[list[Path]] = []
    stack: list[tuple[Any, Path]] = [(data, [])]
    while stack:  # depth first, in document order: the first copy is the one a reader meets first
        node, path = stack.pop()
        nested = []
        for key, value in node.items() if type(node) is dict else enumerate(node):
            kind = type(value)
            if kind is str and len(value) >= MIN_CHARS:
                where = [*path, key]
                seen = first.setdefault(value, where)
                if seen is not where:
                    pairs.append([seen, where])
            elif kind is dict or kind is list:
                nested.append((value, [*path, key]))
        stack.extend(reversed(nested))
    return (_with_none_at(data, [repeat for _, repeat in pairs]) if pairs else data), pairs


def _with_none_at(data: dict[str, Any], paths: list[Path]) -> dict[str, Any]:
    """A copy of ``data`` with None at ``paths``, sharing every container off those paths."""
    root = dict(data)
    copies: dict[tuple[str | int, ...], Any] = {(): root}
    for path in paths:
        node: dict[Any, Any] = root
        prefix: tuple[str | int, ...] = ()
        for key in path[:-1]:
            prefix = (*prefix, key)
            child = copies.get(prefix)
            if child is None:
                child = copies[prefix] = node[key].copy()
                node[key] = child
            node = child
        node[path[-1]] = None
    return root


def restore_repeats(data: dict[str, Any], pairs: Any, where: str) -> None:
    """Undo ``drop_repeats`` in place; SessionFormatError naming ``where`` when a pair does
    not point at a text and a dropped place."""
    if not isinstance(pairs, list):
        raise SessionFormatError(
            f"{where}: 'repeats' must be a list of [from, to] paths, got {type(pairs).__name__}"
        )
    for pair in pairs:
        try:
            (source, source_key), (target, target_key) = (_parent(data, path) for path in pair)
            text, there = source[source_key], target[target_key]
            # (a second restore of the same data finds the text already there)
            if type(text) is not str or there is not None and there is not text and there != text:
                raise ValueError("it does not copy a text into a dropped place")
            target[target_key] = text
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise SessionFormatError(
                f"{where}: cannot restore the repeated text {pair!r:.200}: {exc}"
            ) from None


def _parent(data: Any, path: Any) -> tuple[Any, str | int]:
    if not isinstance(path, list) or not path:
        raise ValueError(f"a path must be a non-empty list, got {path!r:.80}")
    node = data
    for key in path[:-1]:
        node = node[key]
    key = path[-1]
    if type(node) is dict and type(key) is str and key in node:
        return node, key
    if type(node) is list and type(key) is int and 0 <= key < len(node):
        return node, key
    raise KeyError(f"no place {key!r:.40} in a {type(node).__name__}")


__all__ = ["MIN_CHARS", "drop_repeats", "restore_repeats"]
