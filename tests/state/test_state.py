"""State: Haystack's typed State semantics and Agno's free dict, in one object."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import pytest

from agentnb import Message, State, merge_lists, replace_values
from agentnb.errors import StateKeyError, StateSchemaError, StateTypeError


def test_messages_key_is_always_in_the_schema():
    state = State(schema={"user_id": {"type": str}})
    assert "messages" in state.schema
    assert state.schema["messages"]["handler"] is merge_lists
    assert state.get("messages", []) == []
    assert not state.has("messages")  # Haystack: the key holds a value once a message is set
    state.set("messages", [{"role": "user", "content": "hi"}])
    assert state.has("messages") and state.get("messages")[0].content == "hi"


def test_default_handlers_merge_lists_and_replace_others():
    state = State(schema={"documents": {"type": list}, "user_name": {"type": str}, "count": {"type": int}})
    state.set("documents", [1, 2])
    state.set("documents", [3, 4])
    assert state.get("documents") == [1, 2, 3, 4]
    state.set("user_name", "Alice")
    state.set("user_name", "Bob")
    assert state.get("user_name") == "Bob"
    assert state.schema["documents"]["handler"] is merge_lists
    assert state.schema["count"]["handler"] is replace_values


def test_merge_lists_accepts_scalars_on_either_side():
    assert merge_lists(None, 1) == [1]
    assert merge_lists(1, 2) == [1, 2]
    assert merge_lists([1], 2) == [1, 2]
    assert merge_lists(1, [2, 3]) == [1, 2, 3]
    state = State(schema={"items": {"type": list[int]}})
    state.set("items", 5)
    state.set("items", [6])
    assert state.get("items") == [5, 6]


def test_custom_handler_and_handler_override():
    def custom_merge(current, new):
        return sorted((current or []) + (new if isinstance(new, list) else [new]))

    state = State(schema={"numbers": {"type": list, "handler": custom_merge}, "user_name": {"type": str}})
    state.set("numbers", [3, 1])
    state.set("numbers", [2, 4])
    assert state.get("numbers") == [1, 2, 3, 4]

    def concatenate_strings(current, new):
        return f"{current}-{new}" if current else new

    state.set("user_name", "Alice")
    state.set("user_name", "Bob", handler_override=concatenate_strings)
    assert state.get("user_name") == "Alice-Bob"


def test_get_returns_a_copy():
    state = State(schema={"docs": {"type": list}}, data={"docs": [{"a": 1}]})
    got = state.get("docs")
    got.append("x")
    got[0]["a"] = 2
    assert state.get("docs") == [{"a": 1}]


def test_keys_outside_the_schema_are_rejected_with_the_key_named():
    state = State(schema={"a": {"type": int}})
    with pytest.raises(StateKeyError, match=r"Key 'b' not found in schema \(declared keys: a\)"):
        state.set("b", 1)
    with pytest.raises(StateKeyError, match="'zz'"):
        State(schema={"a": {"type": int}}, data={"zz": 1})


@dataclass
class Doc:
    title: str


class Custom:
    pass


@pytest.mark.parametrize(
    ("tp", "good", "bad"),
    [
        (str, "x", 1),
        (int, 3, "3"),
        (int, 3, True),
        (float, 1, "1.0"),
        (bool, False, 0),
        (dict, {"a": 1}, [1]),
        (list[str], ["a"], ["a", 1]),
        (Union[str, int], 3, 1.5),  # noqa: UP007  (the typing spelling is under test)
        (Optional[str], None, 2),  # noqa: UP045  (the typing spelling is under test)
        (Doc, Doc("t"), {"title": "t"}),
        (list[Doc], [Doc("t")], [Doc("t"), "t"]),
        (Custom, Custom(), object()),
        (dict[str, int], {"a": 1}, {"a": "1"}),
    ],
)
def test_supported_types_accept_and_reject(tp, good, bad):
    state = State(schema={"k": {"type": tp, "handler": replace_values}})
    state.set("k", good)
    with pytest.raises(StateTypeError) as info:
        state.set("k", bad)
    message = str(info.value)
    assert "'k'" in message and "expects" in message and type(bad).__name__ in message


def test_type_error_names_key_expected_and_actual():
    state = State(schema={"count": {"type": int}})
    with pytest.raises(StateTypeError, match=r"state key 'count' expects int, got str: 'three'"):
        state.set("count", "three")


@pytest.mark.parametrize(
    ("schema", "match"),
    [
        ({"a": {"type": 3}}, r"\['type'\] must be a type"),
        ({"a": {}}, "must be a dict with a 'type' entry"),
        ({"a": {"type": int, "handler": "nope"}}, "must be a function"),
        ({"a": {"type": int, "hndlr": print}}, "unknown entries"),
        ({"a": int}, "must be a dict with a 'type' entry"),
        ([1], "must be a dict"),
    ],
)
def test_malformed_schema_is_an_error_at_construction(schema, match):
    with pytest.raises(StateSchemaError, match=match):
        State(schema=schema)


def test_free_state_is_a_live_dict_without_messages():
    state = State(data={"shopping_list": []})
    state.data["shopping_list"].append("milk")
    assert state.get("shopping_list") == ["milk"]
    state.set("shopping_list", ["eggs"])  # no schema: replace
    assert state.data == {"shopping_list": ["eggs"]}
    state.set("messages", [Message.user("hi")])
    assert "messages" not in state.data
    assert state.get("messages") == [Message.user("hi")]


def test_to_dict_and_from_dict_round_trip_types_and_handlers():
    from typing import Optional, Union

    from agentnb.state.serialization import type_from_str, type_to_str

    for tp in (
        int,
        dict[str, list[int]],
        Optional[int],  # noqa: UP045  (the typing spelling is under test)
        Union[str, int],  # noqa: UP007  (the typing spelling is under test)
        list[str],
        int | None,
        list[Message],
    ):
        assert type_from_str(type_to_str(tp)) == tp, tp
    state = State(
        {"tags": {"type": list[str] | None}, "n": {"type": int, "handler": replace_values}},
        {"tags": ["a"], "n": 2},
    )
    restored = State.from_dict(state.to_dict())
    assert restored.schema == state.schema and restored.data == {"tags": ["a"], "n": 2}
    assert State.from_dict(State(data={"free": {"x": 1}}).to_dict()).has_schema is False


def test_to_dict_names_a_handler_it_cannot_write():
    state = State({"n": {"type": int, "handler": lambda old, new: new}})
    with pytest.raises(ValueError, match="the handler of state key 'n' .* use a module-level function"):
        state.to_dict()
