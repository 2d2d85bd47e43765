"""agentnb.state.diff: patches checked against jsonpatch, and the one added/changed/removed rule."""

from __future__ import annotations

import copy

import jsonpatch
from hypothesis import given, settings
from hypothesis import strategies as st

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.state.diff import (
    MISSING,
    ChangeLog,
    apply_patch,
    apply_top_diff,
    json_equal,
    lookup,
    make_patch,
    pointer,
    tokens,
    top_diff,
)

keys = st.sampled_from(["a", "b", "c", "x/y", "t~1", "", "__proto__", "ü"])
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
    max_leaves=12,
)
states = st.dictionaries(keys, values, max_size=5)


def mutate(state: dict, data: st.DataObject) -> dict:
    """A state the way a tool leaves it: some keys replaced, added, removed, lists grown or cut."""
    after = copy.deepcopy(state)
    for key in list(after):
        action = data.draw(st.sampled_from(["keep", "keep", "replace", "remove", "append", "pop"]))
        if action == "replace":
            after[key] = data.draw(values)
        elif action == "remove":
            del after[key]
        elif action == "append" and isinstance(after[key], list):
            after[key].append(data.draw(values))
        elif action == "pop" and isinstance(after[key], list) and after[key]:
            after[key].pop()
    for key, value in data.draw(st.dictionaries(keys, values, max_size=2)).items():
        after[key] = value
    return after


@settings(max_examples=300, deadline=None)
@given(states, st.data())
def test_make_patch_turns_before_into_after_like_jsonpatch(before, data):
    after = mutate(before, data)
    patch = make_patch(before, after)
    assert json_equal(apply_patch(before, patch), after)
    assert json_equal(jsonpatch.apply_patch(copy.deepcopy(before), patch), after)
    # The very operations jsonpatch's own diff writes, made in time proportional to the change.
    assert patch == jsonpatch.make_patch(before, after).patch


@settings(max_examples=200, deadline=None)
@given(states, st.data())
def test_make_patch_does_not_alias_the_state(before, data):
    after = mutate(before, data)
    patch = make_patch(before, after)
    snapshot = copy.deepcopy(patch)
    for value in after.values():
        if isinstance(value, list):
            value.append("later")
        elif isinstance(value, dict):
            value["later"] = 1
    assert patch == snapshot


@settings(max_examples=200, deadline=None)
@given(states, st.data())
def test_top_diff_round_trips(before, data):
    after = mutate(before, data)
    assert json_equal(apply_top_diff(before, top_diff(before, after)), after)


@settings(deadline=None)  # a busy machine may pause any example past the 200 ms default
@given(st.lists(st.sampled_from(["a", "b/c", "d~e", "", "0"]), max_size=4))
def test_pointers_round_trip(parts):
    assert tokens(pointer(parts)) == parts


def test_json_equality_tells_numbers_and_booleans_apart():
    assert not json_equal(1, 1.0) and not json_equal(1, True) and not json_equal(0, False)
    assert json_equal([1, {"a": (2, 3)}], [1, {"a": [2, 3]}])
    assert not json_equal({"a": 1}, {"a": 1, "b": None})


def test_the_rule_added_changed_removed_and_added_then_removed():
    log = ChangeLog({"keep": 1, "gone": [1], "same": "x"})
    log.add([{"op": "add", "path": "/new", "value": 2}, {"op": "add", "path": "/tmp", "value": 0}], "tool:a")
    log.add([{"op": "remove", "path": "/tmp"}, {"op": "replace", "path": "/keep", "value": 5}], "hook:h")
    log.add([{"op": "remove", "path": "/gone"}, {"op": "replace", "path": "/same", "value": "y"}], "user")
    log.add([{"op": "replace", "path": "/same", "value": "x"}], "user")  # changed back: no change
    after = {"keep": 5, "same": "x", "new": 2}
    got = [(c.path, c.how, c.authors, c.old, c.new) for c in log.keys(after)]
    assert got == [
        ("/new", "added", ("tool:a",), None, 2),
        ("/keep", "changed", ("hook:h",), 1, 5),
        ("/gone", "removed", ("user",), [1], None),
    ]


def test_paths_name_list_items_with_old_values():
    log = ChangeLog({"items": ["milk", "eggs"]})
    log.add([{"op": "remove", "path": "/items/1"}], "tool:remove_item")
    (change,) = log.paths({"items": ["milk"]})
    assert (change.path, change.how, change.old, change.key) == ("/items/1", "removed", "eggs", "items")
    assert lookup({"items": ["milk"]}, "/items/1") is MISSING


def test_a_turn_record_reports_its_changes_by_that_rule():
    def add(item: str, session_state) -> str:
        session_state["items"].append(item)
        session_state["scratch"] = True
        return "ok"

    def tidy(session_state) -> str:
        del session_state["scratch"]
        return "tidied"

    model = ScriptedModel([tool_call("add", item="x"), tool_call("tidy"), "done"])
    agent = Agent("a", model, tools=[add, tidy], session_state={"items": []})
    agent.run("go")
    changes = agent.history[0].changes()
    assert [(c.key, c.how, c.authors) for c in changes.keys] == [("items", "changed", ("tool:add",))]
    assert [(c.path, c.how, c.new) for c in changes.paths] == [("/items/0", "added", "x")]


def test_a_key_whose_writes_cancel_out_in_a_list_is_still_compared_whole():
    log = ChangeLog({"l": ["a", "a", "b"]})
    log.add([{"op": "remove", "path": "/l/0"}], "tool:t")  # the item now at /l/0 equals the removed one
    assert [(c.path, c.how) for c in log.paths({"l": ["a", "b"]})] == []
    assert [(c.path, c.how) for c in log.keys({"l": ["a", "b"]})] == [("/l", "changed")]
