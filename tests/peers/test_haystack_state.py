"""Haystack's ``State`` and its merge handlers, ported to agentnb.

Peer file (deepset-ai/haystack): test/components/agents/test_state_class.py (it absorbed the
former test_state_utils.py). Haystack's private ``_is_valid_type`` / ``_is_list_type`` /
``_validate_schema`` are exercised through the public ``State(schema=...)``: a schema is
accepted or rejected at construction, and the default handler shows what counts as a list.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Optional, TypeVar, Union

import pytest

from agentnb import ChatMessage, State, merge_lists, replace_values


@pytest.fixture
def basic_schema() -> dict[str, Any]:
    return {"numbers": {"type": list}, "metadata": {"type": dict}, "name": {"type": str}}


def numbers_handler(current: Any, new: Any) -> list[int]:
    if current is None:
        return sorted(set(new))
    return sorted(set(current + new))


@pytest.fixture
def complex_schema() -> dict[str, Any]:
    return {
        "numbers": {"type": list, "handler": numbers_handler},
        "metadata": {"type": dict},
        "name": {"type": str},
    }


def _accepts(tp: Any) -> bool:
    """Whether State takes ``tp`` as a schema type."""
    try:
        State(schema={"k": {"type": tp}})
    except ValueError:
        return False
    return True


# test_state_class.py::test_is_list_type
def test_is_list_type() -> None:
    def handler(tp: Any) -> Any:
        return State(schema={"k": {"type": tp}}).schema["k"]["handler"]

    for tp in (list, list[int], list[str]):
        assert handler(tp) is merge_lists
    for tp in (dict, int, Union[list[int], None], list[int] | None):  # noqa: UP007  (the typing spelling is under test)
        assert handler(tp) is replace_values


# test_state_class.py::TestMergeLists::test_merge_two_lists
def test_merge_two_lists() -> None:
    current, new = [1, 2, 3], [4, 5, 6]
    assert merge_lists(current, new) == [1, 2, 3, 4, 5, 6]
    assert current == [1, 2, 3] and new == [4, 5, 6]


# test_state_class.py::TestMergeLists::test_append_to_list
def test_append_to_list() -> None:
    current = [1, 2, 3]
    assert merge_lists(current, 4) == [1, 2, 3, 4]
    assert current == [1, 2, 3]


# test_state_class.py::TestMergeLists::test_create_new_list
def test_create_new_list() -> None:
    assert merge_lists(1, 2) == [1, 2]


# test_state_class.py::TestMergeLists::test_replace_with_list
def test_replace_with_list() -> None:
    assert merge_lists(1, [2, 3]) == [1, 2, 3]


# test_state_class.py::TestIsValidType::test_builtin_types
def test_builtin_types_are_valid() -> None:
    for tp in (str, int, dict, list, tuple, set, bool, float):
        assert _accepts(tp), tp


# test_state_class.py::TestIsValidType::test_generic_types
def test_generic_types_are_valid() -> None:
    for tp in (
        list[str],
        list[str],
        dict[str, int],
        dict[str, int],
        list[dict[str, int]],
        list[dict[str, int]],
        dict[str, list[int]],
        dict[str, list[int]],
    ):
        assert _accepts(tp), tp


# test_state_class.py::TestIsValidType::test_custom_classes
def test_custom_classes_are_valid() -> None:
    @dataclass
    class CustomClass:
        value: int

    T = TypeVar("T")

    class GenericCustomClass(Generic[T]):
        pass

    for tp in (
        CustomClass,
        GenericCustomClass,
        GenericCustomClass[int],
        list[CustomClass],
        list[CustomClass],
        dict[str, CustomClass],
        dict[str, CustomClass],
        dict[str, GenericCustomClass[int]],
        dict[str, GenericCustomClass[int]],
    ):
        assert _accepts(tp), tp


# test_state_class.py::TestIsValidType::test_invalid_types
def test_values_are_not_valid_types() -> None:
    @dataclass
    class SampleClass:
        value: int

    for value in (42, "string", [1, 2, 3], {"a": 1}, True, SampleClass(42), len, lambda x: x, print):
        assert not _accepts(value), value


# test_state_class.py::TestIsValidType::test_union_and_optional_types
def test_union_and_optional_types() -> None:
    for tp in (
        Union[str, int],  # noqa: UP007  (the typing spelling is under test)
        Union[str, None],  # noqa: UP007  (the typing spelling is under test)
        Union[list[int], dict[str, str]],  # noqa: UP007  (the typing spelling is under test)
        Optional[str],  # noqa: UP045  (the typing spelling is under test)
        Optional[list[int]],  # noqa: UP045  (the typing spelling is under test)
        Optional[dict[str, list]],  # noqa: UP045  (the typing spelling is under test)
        str | int,
        str | None,
        list[int] | dict[str, str],
        list[int] | None,
        dict[str, list] | None,
    ):
        assert _accepts(tp), tp
    assert not _accepts(Union)


# test_state_class.py::TestIsValidType::test_nested_generic_types
def test_nested_generic_types() -> None:
    for tp in (
        list[list[dict[str, list[int]]]],
        dict[str, list[dict[str, set]]],
        dict[str, list[int] | None],
        list[str | dict[str, list[int]]],
        dict[str, list[int] | None],
        list[str | dict[str, list[int]]],
    ):
        assert _accepts(tp), tp


# test_state_class.py::TestIsValidType::test_edge_cases
def test_type_edge_cases() -> None:
    def sample_func() -> None:
        pass

    assert not _accepts(None)
    assert _accepts(type(None))
    assert not _accepts(sample_func)
    assert _accepts(type(sample_func))
    assert not _accepts(inspect)
    assert _accepts(type)


# test_state_class.py::TestState::test_validate_schema_valid
def test_validate_schema_valid(basic_schema: dict[str, Any]) -> None:
    assert set(State(schema=basic_schema).schema) == {"numbers", "metadata", "name", "messages"}


# test_state_class.py::TestState::test_validate_schema_invalid_type
def test_validate_schema_invalid_type() -> None:
    with pytest.raises(ValueError, match="'test'"):
        State(schema={"test": {"type": "not_a_type"}})


# test_state_class.py::TestState::test_validate_schema_missing_type
def test_validate_schema_missing_type() -> None:
    with pytest.raises(ValueError, match="'type'"):
        State(schema={"test": {"handler": lambda x, y: x + y}})


# test_state_class.py::TestState::test_validate_schema_invalid_handler
def test_validate_schema_invalid_handler() -> None:
    with pytest.raises(ValueError, match="handler"):
        State(schema={"test": {"type": list, "handler": "not_callable"}})


# test_state_class.py::TestState::test_validate_schema_with_messages
def test_validate_schema_with_messages() -> None:
    class ChatMessageSubclass(ChatMessage):
        pass

    assert (
        State(schema={"messages": {"type": list[ChatMessage]}}).schema["messages"]["type"]
        == list[ChatMessage]
    )
    assert _accepts(list[ChatMessageSubclass])
    State(schema={"messages": {"type": list[ChatMessageSubclass]}})


# test_state_class.py::TestState::test_state_initialization
def test_state_initialization(basic_schema: dict[str, Any]) -> None:
    assert State(basic_schema).data == {}
    state = State(basic_schema, {"numbers": [1, 2, 3], "name": "test"})
    assert state.data["numbers"] == [1, 2, 3]
    assert state.data["name"] == "test"


# test_state_class.py::TestState::test_state_get
def test_state_get(basic_schema: dict[str, Any]) -> None:
    state = State(basic_schema, {"name": "test"})
    assert state.get("name") == "test"
    assert state.get("non_existent") is None
    assert state.get("non_existent", "default") == "default"


# test_state_class.py::TestState::test_state_set_basic
def test_state_set_basic(basic_schema: dict[str, Any]) -> None:
    state = State(basic_schema)
    state.set("numbers", [1, 2])
    assert state.get("numbers") == [1, 2]
    state.set("numbers", [3, 4])
    assert state.get("numbers") == [1, 2, 3, 4]


# test_state_class.py::TestState::test_state_set_with_handler
def test_state_set_with_handler(complex_schema: dict[str, Any]) -> None:
    state = State(complex_schema)
    state.set("numbers", [3, 2, 1])
    assert state.get("numbers") == [1, 2, 3]
    state.set("numbers", [6, 5, 4])
    assert state.get("numbers") == [1, 2, 3, 4, 5, 6]


# test_state_class.py::TestState::test_state_set_with_handler_override
def test_state_set_with_handler_override(basic_schema: dict[str, Any]) -> None:
    state = State(basic_schema)
    state.set("name", "first")
    state.set("name", "second", handler_override=lambda current, new: f"{current}-{new}" if current else new)
    assert state.get("name") == "first-second"


# test_state_class.py::TestState::test_state_has
def test_state_has(basic_schema: dict[str, Any]) -> None:
    state = State(basic_schema, {"name": "test"})
    assert state.has("name") is True
    assert state.has("non_existent") is False


# test_state_class.py::TestState::test_state_empty_schema
def test_state_empty_schema() -> None:
    state = State({})
    assert state.data == {}
    assert "messages" in state.schema
    assert state.schema["messages"]["type"] == list[ChatMessage]
    assert callable(state.schema["messages"]["handler"])
    with pytest.raises(ValueError, match="Key 'any_key' not found in schema"):
        state.set("any_key", "value")


# test_state_class.py::TestState::test_state_empty_schema (has): Haystack's messages key holds
# data only once something was set; State({}).has("messages") is False
def test_empty_state_has_no_messages_yet() -> None:
    assert State({}).has("messages") is False


# test_state_class.py::TestState::test_state_none_values
def test_state_none_values(basic_schema: dict[str, Any]) -> None:
    state = State(basic_schema)
    state.set("name", None)
    assert state.get("name") is None
    state.set("name", "value")
    assert state.get("name") == "value"


# test_state_class.py::TestState::test_state_merge_lists
def test_state_merge_lists(basic_schema: dict[str, Any]) -> None:
    state = State(basic_schema)
    state.set("numbers", "not_a_list")
    assert state.get("numbers") == ["not_a_list"]
    state.set("numbers", [1, 2])
    assert state.get("numbers") == ["not_a_list", 1, 2]


# test_state_class.py::TestState::test_state_nested_structures
def test_state_nested_structures() -> None:
    def merge(current: Any, new: Any) -> Any:
        if not current:
            return new
        return {k: current.get(k, []) + new.get(k, []) for k in sorted(set(current) | set(new))}

    state = State({"complex": {"type": dict[str, list[int]], "handler": merge}})
    state.set("complex", {"a": [1, 2], "b": [3, 4]})
    state.set("complex", {"b": [5, 6], "c": [7, 8]})
    assert state.get("complex") == {"a": [1, 2], "b": [3, 4, 5, 6], "c": [7, 8]}


# test_state_class.py::TestState::test_state_mutability
def test_state_mutability() -> None:
    state = State({"my_list": {"type": list}}, {"my_list": [1, 2]})
    my_list = state.get("my_list")
    my_list.append(3)
    assert state.get("my_list") == [1, 2]


# test_state_class.py::TestState::test_state_to_dict (schema part: type names and handler paths)
def test_state_to_dict_schema() -> None:
    state = State(
        {"numbers": {"type": int}, "dict_of_lists": {"type": dict}},
        {"numbers": 1, "dict_of_lists": {"numbers": [1, 2, 3]}},
    )
    schema = state.to_dict()["schema"]
    assert schema["numbers"]["type"] == "int"
    assert schema["numbers"]["handler"].endswith(".replace_values")
    assert schema["messages"]["handler"].endswith(".merge_lists")
    assert schema["dict_of_lists"]["type"] == "dict"


# test_state_class.py::TestState::test_state_to_dict_skip_keys
def test_state_to_dict_skip_keys() -> None:
    state = State({"numbers": {"type": int}}, {"numbers": 1, "messages": [ChatMessage.user("Hello, world!")]})
    out = state.to_dict(skip_keys=["numbers"])
    assert set(out["schema"]) == {"messages"}


# test_state_class.py::TestState::test_state_from_dict (as a round trip through to_dict)
def test_state_from_dict_round_trip() -> None:
    state = State(
        {"numbers": {"type": int}, "dict_of_lists": {"type": dict}},
        {
            "numbers": 1,
            "dict_of_lists": {"numbers": [1, 2, 3]},
            "messages": [ChatMessage.user("Hello, world!")],
        },
    )
    restored = State.from_dict(state.to_dict())
    assert restored.schema["numbers"]["type"] is int
    assert restored.schema["dict_of_lists"]["type"] is dict
    assert all(callable(restored.schema[k]["handler"]) for k in ("numbers", "messages", "dict_of_lists"))
    assert restored.get("numbers") == 1
    assert restored.get("dict_of_lists") == {"numbers": [1, 2, 3]}
    assert restored.get("messages") == [ChatMessage.user("Hello, world!")]


# test_state_class.py::TestState::test_state_to_dict_omits_non_serializable_field
def test_state_to_dict_omits_non_serializable_field() -> None:
    state = State({"good": {"type": int}, "bad": {"type": object}}, {"good": 1, "bad": datetime(2024, 1, 1)})
    with pytest.warns(UserWarning, match="'bad' left out"):  # Haystack logs it
        data = state.to_dict()["data"]
    assert data["serialized_data"] == {"good": 1}
