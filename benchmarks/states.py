"""The states every large-state benchmark uses, for agentnb and the other frameworks alike.

Standard library only: the anchor frameworks' scripts (``benchmarks/peers/``) import this file
from their own venvs, so both sides build byte-for-byte the same state.

* ``nested_nodes(10_000)``: ``{"nodes": {"n00000": {"label", "value", "tags"}, ...}}``, one
  top-level key holding 10,000 small dicts (about 610 kB as JSON). A turn that changes one node
  changes one value three levels down.
* ``flat_1mb()``: 8,500 top-level keys of ``{"text": 90 characters, "n": i}`` (1.08 MB as
  JSON). A turn that changes one key replaces one top-level value.
* ``tiny()``: ``{"items": []}``, the per-turn overhead benchmarks' state.
"""

from __future__ import annotations

import json
from typing import Any

NESTED_NODES = 10_000
"""Nodes in the nested state."""
FLAT_KEYS = 8_500
"""Top-level keys in the flat 1 MB state."""


def node_key(i: int) -> str:
    """The key of node ``i`` in ``nested_nodes``."""
    return f"n{i:05d}"


def flat_key(i: int) -> str:
    """The key of entry ``i`` in ``flat_1mb``."""
    return f"key{i:05d}"


def nested_nodes(n: int = NESTED_NODES) -> dict[str, Any]:
    """One top-level key holding ``n`` small dicts."""
    return {"nodes": {node_key(i): {"label": f"node {i}", "value": i, "tags": ["a", "b"]} for i in range(n)}}


def flat_1mb(n: int = FLAT_KEYS) -> dict[str, Any]:
    """``n`` top-level keys of about 127 bytes of JSON each."""
    return {flat_key(i): {"text": "x" * 90, "n": i} for i in range(n)}


def tiny() -> dict[str, Any]:
    """The per-turn benchmarks' state."""
    return {"items": []}


def turn_target(turn: int, n: int) -> int:
    """Which node or key turn ``turn`` changes: a different one every turn, spread over the state."""
    return turn * 7919 % n


def json_bytes(value: Any) -> int:
    """Size of ``value`` as compact JSON."""
    return len(json.dumps(value, separators=(",", ":")))


CASES: dict[str, str] = {
    "tiny": "K=1 turn, tiny state {'items': []}, the tool appends one item (reset after the turn)",
    "nested_one": "K=1 turn, one node changed in a 10,000-node nested state",
    "nested_untouched": "K=1 turn, 10,000-node state left untouched (the tool appends to a separate 'items' key)",
    "flat_one": "K=1 turn, 8,500-key 1 MB state, one key changed",
}
"""The per-turn cases, by name (the same names in every framework's results)."""


def initial_state(case: str) -> dict[str, Any]:
    """The state an agent starts with in ``case``."""
    if case == "tiny":
        return tiny()
    if case == "nested_one":
        return nested_nodes()
    if case == "nested_untouched":
        return {**nested_nodes(), "items": []}
    if case == "flat_one":
        return flat_1mb()
    raise ValueError(f"unknown case {case!r}; expected one of {sorted(CASES)}")


def tool_call_for(case: str, turn: int) -> tuple[str, dict[str, Any]]:
    """The one tool call the fake model asks for in turn ``turn`` of ``case``: (name, arguments)."""
    if case in ("tiny", "nested_untouched"):
        return "add_item", {"item": "item-0"}
    if case == "nested_one":
        return "set_node", {"key": node_key(turn_target(turn, NESTED_NODES)), "value": -turn}
    if case == "flat_one":
        return "set_key", {"key": flat_key(turn_target(turn, FLAT_KEYS)), "n": -turn}
    raise ValueError(f"unknown case {case!r}; expected one of {sorted(CASES)}")


def apply_tool(state: dict[str, Any], name: str, arguments: dict[str, Any]) -> str:
    """What each benchmark tool does to the live state (every framework's tool calls this)."""
    if name == "add_item":
        state["items"].append(arguments["item"])
        return f"added {arguments['item']}"
    if name == "set_node":
        state["nodes"][arguments["key"]]["value"] = arguments["value"]
        return f"{arguments['key']} = {arguments['value']}"
    if name == "set_key":
        state[arguments["key"]] = {"text": "z" * 90, "n": arguments["n"]}
        return f"{arguments['key']} set"
    raise ValueError(f"unknown tool {name!r}")


def needs_reset(case: str) -> bool:
    """Whether ``items`` is emptied after each turn (outside the timed region) so turns do equal work."""
    return case in ("tiny", "nested_untouched")
