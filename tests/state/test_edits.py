"""Edits of the state by hand between turns: set, add, remove, schema checks, undo, and how the
next prompt and the next turn see them."""

from __future__ import annotations

import pytest

from agentnb import Agent, ScriptedModel
from agentnb.errors import ConfigurationError, StateEditError, StateKeyError, StateTypeError
from agentnb.state.diff import MISSING
from agentnb.state.edits import edit_text


def shop(**options) -> Agent:
    options.setdefault("session_state", {"items": ["milk", "eggs"], "budget": 10, "prefs": {"brand": "any"}})
    return Agent(
        "shop",
        ScriptedModel(["ok"] * 5),
        instructions="Budget {budget}.",
        add_session_state_to_context=True,
        **options,
    )


def test_set_add_and_remove_keys_and_paths_below_them() -> None:
    agent = shop()
    changed = agent.edit_state("budget", 20)
    added = agent.edit_state("note", {"text": "hi"})
    replaced = agent.edit_state("/items/0", "oat milk")
    appended = agent.edit_state("/items/-", "bread")
    nested = agent.edit_state("/prefs/organic", True)
    removed = agent.remove_state("/items/1")
    gone = agent.remove_state("prefs")
    assert agent.session_state == {"items": ["oat milk", "bread"], "budget": 20, "note": {"text": "hi"}}
    assert [(e.path, e.how) for e in agent.state_edits] == [
        ("/budget", "changed"),
        ("/note", "added"),
        ("/items/0", "changed"),
        ("/items/2", "added"),
        ("/prefs/organic", "added"),
        ("/items/1", "removed"),
        ("/prefs", "removed"),
    ]
    assert (changed.old, changed.new, removed.old, gone.old) == (
        10,
        20,
        "eggs",
        {"brand": "any", "organic": True},
    )
    assert (added.new, replaced.old, appended.old, nested.old) == ({"text": "hi"}, "milk", MISSING, MISSING)
    assert [edit_text(e) for e in (changed, added, removed)] == [
        "~ /budget: 10 → 20",
        '+ /note: {"text": "hi"}',
        '- /items/1: "eggs" (removed)',
    ]


def test_undo_takes_edits_back_in_reverse_order_to_the_state_before() -> None:
    agent = shop()
    before = agent.get_session_state()
    agent.edit_state("/items/0", "oat milk")
    agent.remove_state("/items/1")
    agent.edit_state("/items/-", "bread")
    agent.remove_state("budget")
    agent.edit_state("extra", [1])
    undone = [agent.undo_edit().path for _ in range(5)]
    assert undone == ["/extra", "/budget", "/items/1", "/items/1", "/items/0"]  # the append went to index 1
    assert agent.session_state == before
    with pytest.raises(ConfigurationError, match="has no edit to undo since its last turn"):
        agent.undo_edit()


def test_a_value_is_copied_so_later_changes_to_it_do_not_leak_in() -> None:
    agent = shop()
    value = ["a"]
    agent.edit_state("tags", value)
    value.append("b")
    assert agent.session_state["tags"] == ["a"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/items/9", "/items/9: index 9 is out of range (the list has 2 item(s))"),
        ("/items/01", "/items/01: '01' is not a list index (0, 1, ... or - for the end)"),
        ("/nope/x", "/nope/x: there is no state key 'nope' (keys: items, budget, prefs)"),
        ("/budget/x", "/budget/x: /budget holds a int, which has no items to set"),
        ("/prefs/a/b", "/prefs/a/b: there is nothing at /prefs/a"),
        ("messages", "the conversation (messages) is not edited here"),
        ("", "a state path is a key name or a JSON pointer such as /items/0, got ''"),
    ],
)
def test_a_bad_path_says_what_is_wrong_and_changes_nothing(path: str, message: str) -> None:
    agent = shop()
    before = agent.get_session_state()
    with pytest.raises(StateEditError) as info:
        agent.edit_state(path, 1)
    assert message in str(info.value)
    assert agent.session_state == before and agent.state_edits == ()


def test_removing_what_is_not_there_is_an_error() -> None:
    agent = shop()
    with pytest.raises(StateEditError, match="there is no state key 'ghost' to remove"):
        agent.remove_state("ghost")
    with pytest.raises(StateEditError, match="index 2 is out of range"):
        agent.remove_state("/items/2")


def test_a_typed_state_checks_each_edit_against_its_schema() -> None:
    agent = Agent(
        "typed",
        state_schema={"items": {"type": list[str]}, "budget": {"type": int}},
        session_state={"items": ["milk"], "budget": 3},
    )
    with pytest.raises(StateTypeError, match="state key 'budget' expects int, got str"):
        agent.edit_state("budget", "ten")
    with pytest.raises(StateTypeError, match="state key 'items' expects list\\[str\\]"):
        agent.edit_state("/items/0", 5)
    with pytest.raises(StateKeyError, match="Key 'other' not found in schema"):
        agent.edit_state("other", 1)
    assert agent.session_state == {"items": ["milk"], "budget": 3}
    agent.edit_state("items", ["tea"])  # replaced whole, not merged by the list handler
    assert agent.session_state["items"] == ["tea"]


def test_the_next_prompt_shows_an_edit_at_once_and_the_next_turn_records_it_as_the_users() -> None:
    agent = shop()
    agent.run("first")
    agent.edit_state("budget", 25)
    preview = agent.observe("second")
    assert preview.system_prompt.startswith("Budget 25.") and "'budget': 25" in preview.system_prompt
    assert agent.model.requests[-1].messages[0]["content"].startswith("Budget 10.")  # no model call
    turn = agent.run("second").turn
    assert [(c.key, c.how, c.authors) for c in turn.changes().keys] == [("budget", "changed", ("user",))]
    assert agent.state_edits == ()  # the turn took them over: nothing left to undo
    with pytest.raises(ConfigurationError, match="no edit to undo"):
        agent.undo_edit()


def test_listeners_hear_each_edit_and_undo() -> None:
    agent = shop()
    heard = []
    stop = agent.on_edit(lambda edit, undone: heard.append((edit.path, undone)))
    agent.edit_state("budget", 1)
    agent.undo_edit()
    stop()
    agent.edit_state("budget", 2)
    assert heard == [("/budget", False), ("/budget", True)]
