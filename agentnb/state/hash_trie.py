"""The hash trie under a large ``FrozenMap`` (``agentnb.state.frozen``).

A map of more than ``SMALL`` keys is a tuple of ``WIDTH`` slots per level, indexed by ``BITS``
bits of each key's hash, down to leaves that are dicts ``{key: (seq, value)}``. Nothing in it is
ever changed: setting or removing a key copies the nodes on the path from its leaf to the root
(``put``, ``remove``) and shares every other node with the trie it came from, which is also what
lets ``diff_tries`` skip the parts two tries share.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

BITS = 5
"""Bits of a key's hash that pick its slot at each level."""
WIDTH = 1 << BITS
MASK = WIDTH - 1
EMPTY_LEAF: dict[Any, tuple[int, Any]] = {}
"""The leaf of a slot that holds none."""


def assemble(leaves: dict[int, dict[Any, Any]], depth: int, level: int) -> tuple[Any, ...]:
    """The trie node at ``level`` over ``leaves`` (keyed by their hash's low ``5 * depth`` bits)."""
    slots: list[Any] = [None] * WIDTH
    shift = BITS * level
    if level == depth - 1:
        for h, leaf in leaves.items():
            slots[(h >> shift) & MASK] = leaf
        return tuple(slots)
    groups: dict[int, dict[int, dict[Any, Any]]] = {}
    for h, leaf in leaves.items():
        groups.setdefault((h >> shift) & MASK, {})[h] = leaf
    for i, group in groups.items():
        slots[i] = assemble(group, depth, level + 1)
    return tuple(slots)


def leaves_of(node: Any, depth: int) -> Iterator[dict[Any, tuple[int, Any]]]:
    """Every leaf under ``node``, which is ``depth`` levels above the leaves."""
    if node is None:
        return
    if depth == 1:
        yield from (leaf for leaf in node if leaf)
        return
    for child in node:
        yield from leaves_of(child, depth - 1)


def put(
    trie: tuple[Any, ...] | None, depth: int, key: Any, value: Any, next_seq: int
) -> tuple[tuple[Any, ...], int, int]:
    """The trie with ``key`` set; (trie, 1 if the key is new else 0, next seq)."""
    h = hash(key)
    path = []
    node: Any = trie
    for level in range(depth):
        path.append(node)
        node = None if node is None else node[(h >> (BITS * level)) & MASK]
    leaf = dict(node) if node else {}
    old = leaf.get(key)
    if old is None:
        leaf[key] = (next_seq, value)
        grew, next_seq = 1, next_seq + 1
    else:
        leaf[key] = (old[0], value)
        grew = 0
    return _rebuild(path, h, leaf), grew, next_seq


def remove(trie: tuple[Any, ...] | None, depth: int, key: Any) -> tuple[Any, ...]:
    """The trie without ``key``, which it holds."""
    h = hash(key)
    path = []
    node: Any = trie
    for level in range(depth):
        path.append(node)
        node = node[(h >> (BITS * level)) & MASK]
    leaf = dict(node)
    del leaf[key]
    return _rebuild(path, h, leaf or None)


def _rebuild(path: list[Any], h: int, child: Any) -> tuple[Any, ...]:
    """New nodes from the leaf up to the root along ``path`` (the old nodes, root first)."""
    for level in range(len(path) - 1, -1, -1):
        node = path[level]
        items = list(node) if node is not None else [None] * WIDTH
        items[(h >> (BITS * level)) & MASK] = child
        child = tuple(items)
    return child


def diff_tries(a: Any, b: Any, depth: int, mine: list[Any], theirs: list[Any]) -> None:
    """Add to ``mine`` the keys of ``a`` whose value is not ``b``'s (by identity), to ``theirs``
    the keys only ``b`` holds; the nodes both share are skipped."""
    if a is b:
        return
    if depth == 0:
        a = a or EMPTY_LEAF
        b = b or EMPTY_LEAF
        for key, entry in a.items():
            other = b.get(key)
            if other is None or other[1] is not entry[1]:
                mine.append(key)
        theirs.extend(k for k in b if k not in a)
        return
    for i in range(WIDTH):
        diff_tries(a[i] if a is not None else None, b[i] if b is not None else None, depth - 1, mine, theirs)


__all__ = ["BITS", "EMPTY_LEAF", "MASK", "WIDTH", "assemble", "diff_tries", "leaves_of", "put", "remove"]
