"""A large state reaches the browser lazily: the top levels and small subtrees first, the rest
when a view shows it (``agentnb/ipython/lazy.py`` and the inspector's ``need_subtree``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("anywidget")

from test_inspector import Wire, make_agent  # noqa: E402

from agentnb import tool_call  # noqa: E402
from agentnb.ipython import lazy, wire  # noqa: E402
from agentnb.ipython.inspector import Inspector  # noqa: E402
from agentnb.ipython.lazy import lazy_form  # noqa: E402


def nodes(n: int) -> dict[str, Any]:
    return {"nodes": {f"n{i:05d}": {"label": f"node {i}", "value": i, "tags": ["a", "b"]} for i in range(n)}}


def walk(value: Any, pointer: str) -> Any:
    for token in lazy.decode_pointer(pointer):
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def test_a_state_that_fits_is_sent_as_it_is() -> None:
    state = {"items": ["milk"], "notes": "x" * 2000, "n": list(range(300))}
    value, stubs = lazy_form(state)
    assert value is state and stubs == {}
    assert lazy_form("just text") == ("just text", {})


def test_whether_a_state_is_sent_whole_counts_every_level_to_the_byte() -> None:
    # Estimated cost: "a" 5, its braces 2, "b" 5, the string n + 2, "c" 5, "y" 3: n + 22 in all.
    # The deep string comes before a sibling, so the count must carry across levels both ways.
    def state(n: int) -> dict[str, Any]:
        return {"a": {"b": "x" * n}, "c": "y"}

    limit = lazy.STATE_BYTES - 22
    assert lazy.is_small(state(limit))
    assert not lazy.is_small(state(limit + 1))
    value, stubs = lazy_form(state(limit + 1))
    assert stubs == {"/a/b": limit + 1} and value["a"]["b"] == "x" * lazy.STRING_HEAD and value["c"] == "y"


def test_a_large_container_brings_its_first_page_and_says_how_big_it_is() -> None:
    state = {"items": ["milk"], **nodes(10_000)}
    value, stubs = lazy_form(state)
    assert stubs == {"/nodes": 10_000}
    assert value["items"] == ["milk"]
    assert list(value["nodes"]) == [f"n{i:05d}" for i in range(lazy.PAGE)]
    assert value["nodes"]["n00099"] == {"label": "node 99", "value": 99, "tags": ["a", "b"]}
    assert len(json.dumps(value)) < 50_000


def test_once_the_budget_is_spent_deeper_parts_come_empty_long_strings_as_their_head() -> None:
    state = {
        "a/b~c": {"inner": list(range(5))},
        "long": "x" * 5000,
        "wide": {f"k{i}": "y" * 400 for i in range(90)},
        "deep": {"d": {"e": 1}},
    }
    value, stubs = lazy_form(state, budget=8_000)
    assert value["long"] == "x" * lazy.STRING_HEAD and stubs["/long"] == 5000
    # Breadth first: the top level whole; the budget runs out inside "wide" (some of its
    # children came, the rest are counted); what lies below comes empty, with its size.
    assert 0 < len(value["wide"]) < 90 and stubs["/wide"] == 90
    assert value["deep"] == {} and stubs["/deep"] == 1
    assert value["a/b~c"] == {"inner": []} and stubs["/a~1b~0c/inner"] == 5
    for pointer, size in stubs.items():  # each placeholder names a node held in part
        assert len(walk(value, pointer)) < size
    assert len(json.dumps(value)) < 10_000


def test_a_page_from_further_on_names_its_children_from_the_root() -> None:
    state = {"rows": [{"cells": list(range(300))} for _ in range(250)]}
    value, stubs = lazy_form(state["rows"], "/rows", start=200, budget=2_000)
    assert isinstance(value, list) and len(value) <= 50
    assert all(p.startswith("/rows/2") for p in stubs if p != "/rows")
    assert stubs.get("/rows/200/cells") == 300 or stubs.get("/rows") == 250
    tail, none = lazy_form({"a": 1, "b": 2, "c": 3}, start=1)
    assert (tail, none) == ({"b": 2, "c": 3}, {})
    assert lazy_form((1, 2, 3), start=2) == ([3], {})


def test_find_reads_pointers_like_the_browser_writes_them() -> None:
    state = {"a/b": [{"x": 1}], 7: "seven"}
    assert lazy.find(state, lazy.decode_pointer("/a~1b/0/x")) == 1
    assert lazy.find(state, ["7"]) == "seven"  # a key that is not text travels as its text
    with pytest.raises(LookupError, match=r"the state has no /a~1b/3 "):
        lazy.find(state, ["a/b", "3"])
    with pytest.raises(ValueError, match="starts with '/'"):
        lazy.decode_pointer("nodes")


@pytest.fixture
def graph(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Inspector, Wire]:
    def set_value(session_state, key: str, value: int) -> str:
        """Set one node's value."""
        session_state["nodes"][key]["value"] = value
        return "set"

    agent = make_agent(
        [tool_call("set_value", key="n07919", value=-1), "updated"],
        session_state=nodes(10_000),
        tools=[set_value],
    )
    inspector = Inspector.for_agent(agent)
    return agent, inspector, Wire(inspector, monkeypatch)


def test_the_first_message_for_10000_nodes_is_small_and_a_one_node_change_stays_small(graph) -> None:
    agent, inspector, sent = graph
    first = sent.ask(**{wire.KIND: wire.SYNC})
    assert sent.bodies[-1] < 50_000
    assert first[wire.STUBS] == {"/nodes": 10_000} and len(first[wire.STATE]["nodes"]) == lazy.PAGE
    agent.run("change one node")
    (changed,) = [e for e in sent.events() if e[wire.EVENT_BODY]["kind"] == "state_changed"]
    assert len(json.dumps(changed)) < 1_000
    assert changed[wire.EVENT_BODY]["patch"] == [
        {"op": "replace", "path": "/nodes/n07919/value", "value": -1}
    ]
    assert inspector._outbox.last_bytes < 5_000  # the whole turn's batch


def test_a_view_asks_for_the_next_page_or_a_whole_value(graph) -> None:
    agent, _inspector, sent = graph
    agent.run("change one node")
    page = sent.ask(
        **{wire.KIND: wire.NEED_SUBTREE, wire.TURN_INDEX: 0, wire.PATH: "/nodes", wire.FROM: 7900}
    )
    assert page[wire.KIND] == wire.SUBTREE and (page[wire.PATH], page[wire.FROM], page[wire.SIZE]) == (
        "/nodes",
        7900,
        10_000,
    )
    assert list(page[wire.VALUE])[0] == "n07900" and len(page[wire.VALUE]) == lazy.PAGE
    assert page[wire.VALUE]["n07919"]["value"] == -1 and page[wire.STUBS] == {}
    last = sent.ask(
        **{wire.KIND: wire.NEED_SUBTREE, wire.TURN_INDEX: 0, wire.PATH: "/nodes", wire.FROM: 9950}
    )
    assert list(last[wire.VALUE]) == [f"n{i:05d}" for i in range(9950, 10_000)]
    whole = sent.ask(
        **{wire.KIND: wire.NEED_SUBTREE, wire.TURN_INDEX: 0, wire.PATH: "/nodes", wire.WHOLE: True}
    )
    assert whole[wire.WHOLE] is True and whole[wire.FROM] == 0 and len(whole[wire.VALUE]) == 10_000
    assert wire.STUBS not in whole
    assert sent.bodies[-1] > 500_000  # asked for whole: the browser gets all of it


def test_subtrees_come_from_the_state_the_view_shows(graph) -> None:
    agent, _inspector, sent = graph
    agent.run("change one node")
    agent.session_state["nodes"]["n00001"]["label"] = "after the turn"
    agent.edit_state("/nodes/n00002/label", "edited")
    past = sent.ask(
        **{
            wire.KIND: wire.NEED_SUBTREE,
            wire.TURN_INDEX: 0,
            wire.PATH: "/nodes/n00001/label",
            wire.WHOLE: True,
        }
    )
    now = sent.ask(
        **{
            wire.KIND: wire.NEED_SUBTREE,
            wire.LIVE: True,
            wire.TURN_INDEX: 0,
            wire.PATH: "/nodes/n00002",
            wire.FROM: 0,
        }
    )
    assert past[wire.VALUE] == "node 1" and past[wire.SIZE] == len("node 1")
    assert now[wire.LIVE] is True and now[wire.VALUE] == {"label": "edited", "value": 2, "tags": ["a", "b"]}
    # The edit of a large state went as a patch against the last turn's state, not whole.
    edited = [m for m in sent.messages if m[wire.KIND] == wire.EDITED][-1]
    assert wire.LIVE_STATE not in edited and edited[wire.TURN_INDEX] == 0
    assert {"op": "replace", "path": "/nodes/n00002/label", "value": "edited"} in edited[wire.LIVE_PATCH]


def test_a_subtree_of_a_path_that_is_not_there_says_so(graph) -> None:
    _agent, _inspector, sent = graph
    reply = sent.ask(**{wire.KIND: wire.NEED_SUBTREE, wire.PATH: "/nodes/n99999", wire.FROM: 0})
    assert reply == {
        wire.KIND: wire.ERROR,
        wire.TEXT: "need_subtree: LookupError: the state has no /nodes/n99999 (it changed since the view loaded it: reopen the node)",
    }
    reply = sent.ask(**{wire.KIND: wire.NEED_SUBTREE, wire.PATH: "/nodes", wire.FROM: -3})
    assert reply[wire.TEXT].startswith("need_subtree: TypeError: need_subtree takes a path")
    reply = sent.ask(**{wire.KIND: wire.NEED_SUBTREE, wire.TURN_INDEX: 4, wire.PATH: "", wire.FROM: 0})
    assert reply[wire.TEXT] == "need_subtree: LookupError: there is no turn 4; the agent has 0 turn(s)"
