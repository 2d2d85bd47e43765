"""agentnb.state.frozen / views: frozen states that share what did not change, and the read-only
views turn records hand out."""

from __future__ import annotations

import copy
import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.state.frozen import FrozenList, FrozenMap, freeze, thaw
from agentnb.state.views import ListView, StateView, view

keys = st.sampled_from(["a", "b", "c", "x/y", "t~1", "", "ü"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["", "s", "milk"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=10,
)
states = st.dictionaries(keys, values, max_size=5)


def same(a, b) -> bool:
    """Equal as JSON, key order included."""
    return json.dumps(a) == json.dumps(b)


@settings(max_examples=100, deadline=None)
@given(states, st.data())
def test_frozen_maps_updated_share_and_read_like_dicts(initial, data):
    frozen = freeze(initial)
    assert same(thaw(frozen), initial) and frozen == initial
    changes = data.draw(st.dictionaries(keys, values, max_size=3))
    removed = data.draw(st.lists(keys, max_size=2))
    expected = {k: v for k, v in initial.items() if k not in removed or k in changes}
    expected.update(changes)
    updated = frozen.updated({k: freeze(v) for k, v in changes.items()}, removed)
    assert same(thaw(updated), expected)
    assert set(updated.changed_keys(frozen)) <= set(changes) | set(removed)
    for key in initial:
        if key not in changes and key not in removed:
            assert updated[key] is frozen[key]


def test_a_large_map_copies_a_path_not_the_map():
    big = FrozenMap({f"k{i}": i for i in range(10_000)})
    one = big.updated({"k17": -1})
    assert one["k17"] == -1 and big["k17"] == 17 and len(one) == 10_000
    assert one.changed_keys(big) == ["k17"]
    assert list(one)[:3] == ["k0", "k1", "k2"]
    grown = one.updated({"new": 1}, ["k0"])
    assert list(grown)[-1] == "new" and "k0" not in grown and grown.changed_keys(one) == ["new", "k0"]
    assert thaw(grown) == {**{f"k{i}": i for i in range(1, 10_000)}, "k17": -1, "new": 1}


def test_frozen_values_are_never_handed_out():
    frozen = freeze({"items": [1, {"a": 2}], "t": (1, [2])})
    assert isinstance(frozen, FrozenMap) and isinstance(frozen["items"], FrozenList)
    copy_ = thaw(frozen)
    copy_["items"][1]["a"] = 3
    assert frozen["items"][1]["a"] == 2
    assert copy.deepcopy(frozen) == {"items": [1, {"a": 2}], "t": (1, [2])}
    assert type(copy.deepcopy(frozen)) is dict


def test_a_view_is_plain_data_that_refuses_changes():
    frozen = freeze({"items": ["milk"], "cfg": {"n": 1}})
    shown = view(frozen)
    assert isinstance(shown, dict) and isinstance(shown["items"], list)
    assert json.dumps(shown) == '{"items": ["milk"], "cfg": {"n": 1}}' and shown == {
        "items": ["milk"],
        "cfg": {"n": 1},
    }
    for change in (
        lambda: shown.update(x=1),
        lambda: shown["cfg"].pop("n"),
        lambda: shown["items"].append(1),
        lambda: shown.__setitem__("x", 1),
    ):
        with pytest.raises(TypeError, match="read-only"):
            change()
    mine = copy.deepcopy(shown)
    mine["items"].append("eggs")
    assert type(mine) is dict and type(mine["items"]) is list and frozen["items"] == ["milk"]
    assert pd.DataFrame([shown]).loc[0, "cfg"] == {"n": 1}


def test_the_view_of_a_large_map_is_built_from_the_view_of_its_base():
    big = FrozenMap({f"k{i}": freeze({"n": i}) for i in range(1000)})
    first = view(big)
    changed = big.updated({"k5": freeze({"n": -5}), "new": 1}, ["k7"])
    second = view(changed)
    assert second is view(changed) and isinstance(second, StateView)
    assert second["k6"] is first["k6"]  # shared: a view is read-only
    assert second["k5"] == {"n": -5} and "k7" not in second and list(second)[-1] == "new"
    assert same(second, thaw(changed))


def test_the_view_of_a_large_map_is_built_across_the_updates_since_a_viewed_ancestor():
    big = FrozenMap({f"k{i}": freeze({"n": i}) for i in range(1000)})
    first = view(big)
    line = [big]
    for n in range(5):  # turns nobody viewed (a loop the inspector sent as History rows)
        line.append(line[-1].updated({f"k{n}": freeze({"n": -n}), f"new{n}": n}, [f"k{100 + n}"]))
    last = view(line[-1])
    assert last["k200"] is first["k200"]  # built from the ancestor's view, not afresh
    assert list(last) == list(line[-1]) and same(last, thaw(line[-1]))
    # A key removed and set again since (the same value) moves to the end: the view follows.
    removed = line[-1].updated({}, ["k300"])  # kept alive, as a turn record keeps its state
    moved = removed.updated({"k300": line[-1]["k300"]})
    assert moved.base() is removed and removed.base() is line[-1]
    shown = view(moved)
    assert list(shown)[-1] == "k300" and list(shown) == list(moved) and same(shown, thaw(moved))


def test_a_turn_record_hands_out_views_of_its_states():
    def add(item: str, session_state) -> str:
        session_state["items"].append(item)
        return "ok"

    agent = Agent(
        "a", ScriptedModel([tool_call("add", item="x"), "done"]), tools=[add], session_state={"items": []}
    )
    result = agent.run("go")
    record = agent.history[0]
    assert record.state_after == {"items": ["x"]} and isinstance(record.state_after["items"], ListView)
    assert result.state == {"items": ["x"]} and result["items"] == ["x"]
    with pytest.raises(TypeError, match="read-only"):
        result["items"].append("y")
    assert agent.session_state["items"] == ["x"]
    agent.session_state["items"].append("live")  # the live state is the agent's, as ever
    assert record.state_after == {"items": ["x"]}
