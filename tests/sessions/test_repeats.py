"""Long texts repeated in a session line or snapshot are written once and come back whole."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import SessionFormatError
from agentnb.sessions import JSONSession, SQLiteSession
from agentnb.sessions.repeats import MIN_CHARS, drop_repeats, restore_repeats

LONG = st.sampled_from(["a" * MIN_CHARS, "b" * (MIN_CHARS + 7), "é" * MIN_CHARS])
LEAF = st.one_of(st.none(), st.integers(), st.text(max_size=5), LONG)
DATA = st.dictionaries(
    st.text(max_size=4),
    st.recursive(
        LEAF,
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=3), kids, max_size=4),
        max_leaves=30,
    ),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(DATA)
def test_drop_then_restore_gives_the_data_back_and_leaves_it_alone(data):
    before = copy.deepcopy(data)
    dropped, pairs = drop_repeats(data)
    assert data == before  # the input (a module's live objects) is not touched
    texts = [s for s in _strings(before) if len(s) >= MIN_CHARS]
    assert len(pairs) == len(texts) - len(set(texts))  # every repeat, and only repeats
    assert sum(len(s) for s in _strings(dropped) if len(s) >= MIN_CHARS) == sum(len(s) for s in set(texts))
    stored = json.loads(json.dumps(dropped))
    restore_repeats(stored, json.loads(json.dumps(pairs)), "here")
    assert stored == before


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


@pytest.mark.parametrize(
    "pairs",
    [
        "no list",
        [[["a"], ["nowhere"]]],
        [[["a"], ["b"]]],  # b is not a dropped place
        [[["n"], ["c"]]],  # n is not a text
        [[["a"], ["l", 5]]],
        [[["a"], ["l", "0"]]],
        [[[], ["c"]]],
    ],
)
def test_a_damaged_repeat_is_a_format_error_naming_where(pairs):
    data = {"a": "x" * MIN_CHARS, "b": "other", "c": None, "n": 3, "l": [None]}
    with pytest.raises(SessionFormatError, match="^file 7: "):
        restore_repeats(data, pairs, "file 7")


def _agent(session, **options):
    def bump(session_state: dict) -> str:
        """Count up."""
        session_state["n"] = session_state.get("n", 0) + 1
        return "ok"

    return Agent(
        "r",
        ScriptedModel([tool_call("bump"), "done"] * 4),
        tools=[bump],
        session_state={"big": "y" * 200_000},
        session=session,
        **options,
    )


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_session_with_the_state_in_the_prompt_loads_back_every_copy(tmp_path, kind):
    make = (
        (lambda: JSONSession(tmp_path / "s"))
        if kind == "json"
        else (lambda: SQLiteSession(tmp_path / "s.db"))
    )
    agent = _agent(make(), add_session_state_to_context=True)
    agent.run("one")
    agent.run("two")
    stored = (tmp_path / "s" / "r.jsonl").read_text() if kind == "json" else None
    if stored is not None:  # the second turn's line holds the prompt once
        assert stored.splitlines()[-1].count("y" * 1000) < 2 * 200
    again = _agent(make(), add_session_state_to_context=True)
    assert len(again.history) == 2
    assert [t.messages for t in again.history] == [t.messages for t in agent.history]
    assert [t.events for t in again.history] == [t.events for t in agent.history]
    assert again.state.messages == agent.state.messages
    make().compact("r")  # the snapshot writes each text once too, and reads back
    third = _agent(make(), add_session_state_to_context=True)
    assert len(third.history) == 2
    assert [t.events for t in third.history] == [t.events for t in agent.history]
    assert third.state.messages == agent.state.messages
