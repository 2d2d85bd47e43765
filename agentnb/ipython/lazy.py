"""A large state sent lazily: its top levels and small subtrees now, the rest when a view shows it.

A state that fits ``STATE_BYTES`` (estimated as JSON) is sent whole. A larger one is walked
breadth first until that budget is spent: a container with more than ``PAGE`` children brings
its first ``PAGE``, containers reached after the budget come empty, and a string longer than
``STRING_HEAD`` brings its head. Each such placeholder is listed as ``{pointer: full size}``
(children for a container, characters for a string); the browser marks those nodes, shows their
sizes, and asks for the rest (``subtree``) when the user opens one, pages on, or edits it.

The walk visits at most the nodes it sends (plus the ones that show the budget is spent), so a
10,000-node state costs what its first screen costs, not its size.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from itertools import islice
from typing import Any

STATE_BYTES = 24_000
"""Estimated JSON bytes of state in one message; a state within it is sent whole."""

PAGE = 100
"""Children of a large container sent at a time (the tree shows 100 per "show more")."""

STRING_HEAD = 500
"""Characters of a long string sent before it is asked for whole (the tree shows 240)."""

_CONTAINERS = (dict, list, tuple)


def _leaf_cost(value: Any) -> int:
    if isinstance(value, str):
        return len(value) + 2 if value.isascii() else 3 * len(value) + 2  # UTF-8: up to 3 bytes a character
    return 6  # a number, true/false/null, or an odd value sent as its repr


def _key_cost(key: Any) -> int:
    return len(key) + 4 if isinstance(key, str) else 8


def _children(value: Any, start: int = 0) -> Iterator[tuple[Any, Any]]:
    """(key, child) of a dict, or (index, item) of a list, from child ``start`` on."""
    if isinstance(value, dict):
        return islice(value.items(), start, None)
    return zip(range(start, len(value)), islice(value, start, None))


def _fits(children: Iterator[tuple[Any, Any]], budget: int) -> bool:
    """Whether everything under ``children`` costs at most ``budget``; stops as soon as it does not."""
    # Depth first: a container's contents are counted before its next sibling, so a wide state
    # is found too large after about ``budget`` bytes of nodes, not one iterator per child.
    stack = [children]
    while stack:
        for key, child in stack[-1]:
            budget -= _key_cost(key)
            if isinstance(child, _CONTAINERS):
                budget -= 2
                if budget < 0:
                    return False
                stack.append(_children(child))
                break  # go down; this level resumes from its iterator when the child is done
            budget -= _leaf_cost(child)
            if budget < 0:
                return False
        else:
            stack.pop()
    return True


def is_small(value: Any) -> bool:
    """Whether ``value`` is sent whole (within ``STATE_BYTES``)."""
    return not isinstance(value, _CONTAINERS) or _fits(_children(value), STATE_BYTES)


def escape(key: Any) -> str:
    """One JSON-pointer token (RFC 6901)."""
    token = str(key)
    if "~" in token or "/" in token:
        token = token.replace("~", "~0").replace("/", "~1")
    return token


def lazy_form(
    value: Any, pointer: str = "", start: int = 0, budget: int = STATE_BYTES
) -> tuple[Any, dict[str, int]]:
    """``value`` (from child ``start`` on) as sent, and its placeholders ``{pointer: full size}``.

    ``pointer`` is where ``value`` sits in the state (placeholders are named from the root).
    A ``value`` that is not a container, or that fits ``budget``, comes back as it is.
    """
    if not isinstance(value, _CONTAINERS):
        return value, {}
    if _fits(_children(value, start), budget):  # the common case: a small state, sent as it is
        if start == 0:
            return value, {}
        return (dict(_children(value, start)) if isinstance(value, dict) else list(value[start:])), {}
    stubs: dict[str, int] = {}
    root: Any = {} if isinstance(value, dict) else []
    queue: deque[tuple[Any, Any, str, int]] = deque([(value, root, pointer, start)])
    while queue:
        source, out, at, first = queue.popleft()
        taken = 0
        for key, child in _children(source, first):
            if taken == PAGE or budget <= 0:
                break
            budget -= _key_cost(key)
            if isinstance(child, _CONTAINERS):
                budget -= 2
                part: Any = {} if isinstance(child, dict) else []
                queue.append((child, part, f"{at}/{escape(key)}", 0))
            elif isinstance(child, str) and len(child) > STRING_HEAD:
                part = child[:STRING_HEAD]
                stubs[f"{at}/{escape(key)}"] = len(child)
                budget -= STRING_HEAD
            else:
                part = child
                budget -= _leaf_cost(child)
            if isinstance(out, dict):
                out[key] = part
            else:
                out.append(part)
            taken += 1
        if first + taken < len(source):
            stubs[at] = len(source)
    return root, stubs


def find(state: Any, tokens: list[str]) -> Any:
    """The value at a JSON pointer's ``tokens``; raises ``LookupError`` naming what is missing."""
    node = state
    for depth, token in enumerate(tokens):
        if isinstance(node, dict):
            if token in node:
                node = node[token]
                continue
            # A key that is not a string travels as its text (an int key 1 as "1").
            match = [k for k in node if not isinstance(k, str) and str(k) == token]
            if match:
                node = node[match[0]]
                continue
        elif isinstance(node, (list, tuple)) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
            continue
        where = "/" + "/".join(escape(t) for t in tokens[: depth + 1])
        raise LookupError(f"the state has no {where} (it changed since the view loaded it: reopen the node)")
    return node


def decode_pointer(pointer: str) -> list[str]:
    """The tokens of a JSON pointer ("" is the whole state)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"a JSON pointer starts with '/': {pointer!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def size_of(value: Any) -> int:
    """Children of a container, characters of a string, else 0."""
    return len(value) if isinstance(value, (*_CONTAINERS, str)) else 0


__all__ = [
    "PAGE",
    "STATE_BYTES",
    "STRING_HEAD",
    "decode_pointer",
    "escape",
    "find",
    "is_small",
    "lazy_form",
    "size_of",
]
