"""The inspector as a debugger, kernel side: token counts and the template map in every prompt,
edits of the state from the browser (or Python) with a re-rendered preview at once, and two turns
side by side."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("anywidget")

from test_inspector import Wire, make_agent  # noqa: E402

from agentnb import Agent, ScriptedModel, tool_call  # noqa: E402
from agentnb.history.compare import LineRow  # noqa: E402
from agentnb.ipython import wire  # noqa: E402
from agentnb.ipython.compact_compare import compact_rows  # noqa: E402
from agentnb.ipython.inspector import Inspector  # noqa: E402
from agentnb.state.diff import apply_patch  # noqa: E402


def kinds(sent: Wire, since: int = 0) -> list[str]:
    return [m[wire.KIND] for m in sent.messages[since:]]


@pytest.fixture
def shop(monkeypatch: pytest.MonkeyPatch) -> tuple[Agent, Inspector, Wire]:
    agent = make_agent(
        [tool_call("add_item", item="eggs"), "Added eggs.", "Hi again."],
        session_state={"items": ["milk"], "budget": 10, "api_key": "sk-1", "notes": "x"},
        add_session_state_to_context=True,
        hide_state_keys=["api_key"],
    )
    inspector = Inspector.for_agent(agent)
    return agent, inspector, Wire(inspector, monkeypatch)


def test_the_prompt_carries_token_counts_hidden_and_unused_keys(shop) -> None:
    agent, _inspector, sent = shop
    agent.instructions = "List: {items} {missing}"
    agent.add_session_state_to_context = False
    agent.run("add eggs")
    (prompt,) = [m[wire.EVENT_BODY] for m in sent.events() if m[wire.EVENT_BODY]["kind"] == "prompt_rendered"]
    assert prompt["hidden_keys"] == ["api_key"] and prompt["unused_keys"] == ["budget", "notes"]
    tokens = prompt["tokens"]
    assert (tokens["counter"], tokens["exact"]) == ("estimate", False)
    assert tokens["sections"] == [len(prompt["sections"][0]["text"]) // 4]
    assert tokens["total"] == tokens["system"] + tokens["user"]
    finished = sent.events()[-1][wire.EVENT_BODY]
    assert finished["kind"] == "run_finished" and "prompt_tokens" not in finished  # nothing recounted


def test_a_turn_recounted_at_its_end_sends_the_new_counts(monkeypatch) -> None:
    from token_models import WarmingUp

    agent = make_agent([], tools=[])
    agent.model = WarmingUp(["Done."])
    sent = Wire(Inspector.for_agent(agent), monkeypatch)
    agent.run("hello")
    bodies = [m[wire.EVENT_BODY] for m in sent.events()]
    (prompt,) = [b for b in bodies if b["kind"] == "prompt_rendered"]
    assert prompt["tokens"]["exact"] is False and prompt["tokens"]["note"] == "not started"
    assert bodies[-1]["prompt_tokens"]["counter"] == "words" and bodies[-1]["prompt_tokens"]["exact"] is True


def test_turn_summaries_carry_the_state_blocks_cost(shop) -> None:
    agent, _inspector, sent = shop
    agent.run("add eggs")
    agent.run("hello")
    summaries = sent.ask(**{wire.KIND: wire.SYNC})[wire.SUMMARIES]
    blocks = [t.prompt.sections[-1] for t in agent.history]
    assert [b.source for b in blocks] == ["session_state", "session_state"]
    assert [s["state_tokens"] for s in summaries] == [len(b.text) // 4 for b in blocks]
    assert summaries[0]["state_tokens"] < summaries[1]["state_tokens"]  # eggs joined the list
    assert [s["tokens_exact"] for s in summaries] == [False, False]


def test_an_edit_from_the_browser_sends_the_live_state_then_the_next_prompt(shop) -> None:
    agent, _inspector, sent = shop
    agent.run("add eggs")
    start = len(sent.messages)
    sent.inspector._on_msg(sent.inspector, {wire.KIND: wire.EDIT, wire.PATH: "/budget", wire.VALUE: "25"}, [])
    assert kinds(sent, start) == [wire.EDITED, wire.PREVIEW]
    edited, preview = sent.messages[start:]
    assert edited[wire.EDITS] == [{"path": "/budget", "how": "changed", "old": "10", "new": "25"}]
    assert edited[wire.LIVE_STATE] == {
        "items": ["milk", "eggs"],
        "budget": 25,
        "api_key": "sk-1",
        "notes": "x",
    }
    # The next message is the last turn's until the browser previews another; no model call.
    assert preview[wire.MESSAGE] == "add eggs" and preview[wire.EDITS] == 1
    state_block = [s for s in preview["sections"] if s["source"] == "session_state"][0]
    assert "'budget': 25" in state_block["text"] and "sk-1" not in json.dumps(preview)
    assert preview["hidden_keys"] == ["api_key"] and preview["tokens"]["counter"] == "estimate"
    assert len(agent.model.requests) == 2
    # Undo puts it back, and the preview follows.
    sent.inspector._on_msg(sent.inspector, {wire.KIND: wire.UNDO}, [])
    edited, preview = sent.messages[-2:]
    assert edited[wire.EDITS] == [] and edited[wire.LIVE_STATE]["budget"] == 10
    assert "'budget': 10" in [s for s in preview["sections"] if s["source"] == "session_state"][0]["text"]


def test_adding_and_removing_keys_and_the_message_previewed_last(shop) -> None:
    agent, _inspector, sent = shop
    sent.ask(**{wire.KIND: wire.PREVIEW, wire.MESSAGE: "what now?"})
    sent.inspector._on_msg(
        sent.inspector, {wire.KIND: wire.EDIT, wire.PATH: "/tag", wire.VALUE: '{"a": [1]}'}, []
    )
    sent.inspector._on_msg(sent.inspector, {wire.KIND: wire.EDIT, wire.PATH: "/notes", wire.OP: "remove"}, [])
    edited, preview = sent.messages[-2:]
    assert [(e["path"], e["how"]) for e in edited[wire.EDITS]] == [("/tag", "added"), ("/notes", "removed")]
    assert edited[wire.LIVE_STATE] == {"items": ["milk"], "budget": 10, "api_key": "sk-1", "tag": {"a": [1]}}
    assert preview[wire.MESSAGE] == "what now?" and preview["user_prompt"] == "what now?"
    assert agent.session_state == edited[wire.LIVE_STATE]


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ({wire.PATH: "/budget", wire.VALUE: "twenty"}, "not JSON: Expecting value at position 0"),
        (
            {wire.PATH: "/items/7", wire.VALUE: '"x"'},
            "/items/7: index 7 is out of range (the list has 1 item(s))",
        ),
        ({wire.PATH: "/ghost", wire.OP: "remove"}, "there is no state key 'ghost' to remove"),
        ({wire.PATH: "/budget"}, "an edit needs a value (JSON text)"),
    ],
)
def test_a_refused_edit_says_where_and_why_and_changes_nothing(
    shop, content: dict[str, Any], text: str
) -> None:
    agent, _inspector, sent = shop
    before = agent.get_session_state()
    reply = sent.ask(**{wire.KIND: wire.EDIT, **content})
    assert reply[wire.KIND] == wire.EDIT_FAILED and reply[wire.PATH] == content[wire.PATH]
    assert text in reply[wire.TEXT]
    assert agent.session_state == before and agent.state_edits == ()


def test_a_typed_state_refuses_a_value_of_the_wrong_type(monkeypatch) -> None:
    agent = Agent(
        "typed", ScriptedModel([]), state_schema={"budget": {"type": int}}, session_state={"budget": 1}
    )
    sent = Wire(Inspector.for_agent(agent), monkeypatch)
    reply = sent.ask(**{wire.KIND: wire.EDIT, wire.PATH: "/budget", wire.VALUE: '"ten"'})
    assert reply[wire.TEXT] == "state key 'budget' expects int, got str: 'ten'"


def test_edits_made_in_python_reach_the_view_and_a_new_view_starts_with_them(shop) -> None:
    agent, inspector, sent = shop
    agent.edit_state("/items/-", "tea")
    assert kinds(sent)[-2:] == [wire.EDITED, wire.PREVIEW]
    snapshot = sent.ask(**{wire.KIND: wire.SYNC})
    assert snapshot[wire.EDITS] == [{"path": "/items/1", "how": "added", "old": None, "new": '"tea"'}]
    assert snapshot[wire.LIVE_STATE]["items"] == ["milk", "tea"]
    agent.run("add eggs")  # the turn takes the edit over as the user's change: nothing pending
    assert wire.EDITS not in sent.ask(**{wire.KIND: wire.SYNC})


def test_an_edit_of_a_large_state_travels_as_a_patch_against_the_last_turn(monkeypatch) -> None:
    big = {"items": ["milk"], "catalog": [{"sku": i} for i in range(6000)]}
    agent = make_agent([tool_call("add_item", item="eggs"), "ok"], session_state=big)
    sent = Wire(Inspector.for_agent(agent), monkeypatch)
    agent.run("add eggs")
    agent.edit_state("/catalog/5/sku", -5)
    edited = [m for m in sent.messages if m[wire.KIND] == wire.EDITED][-1]
    assert wire.LIVE_STATE not in edited and edited[wire.TURN_INDEX] == 0
    assert len(json.dumps(edited)) < 500
    assert apply_patch(agent.history[0].state_after, edited[wire.LIVE_PATCH]) == agent.session_state


def test_compare_puts_a_fork_beside_its_parent_by_default(shop, monkeypatch) -> None:
    agent, _inspector, _sent = shop
    agent.run("add eggs")
    agent.run("hello")
    fork = agent.fork("shop_v2", turn=1)
    fork.instructions = "List: {items}. Be kind."
    fork.model = ScriptedModel(["Hello!"])
    fork.run("hello")
    fork_sent = Wire(Inspector.for_agent(fork), monkeypatch)
    reply = fork_sent.ask(**{wire.KIND: wire.COMPARE, wire.TURN_INDEX: 1})
    assert reply[wire.KIND] == wire.COMPARISON
    assert (reply[wire.LEFT], reply[wire.RIGHT]) == (
        {"agent": "shop", "turn": 1},
        {"agent": "shop_v2", "turn": 1},
    )
    comparison = reply["comparison"]
    assert comparison["causes"] == ["the system prompt differs in: instructions"]
    assert comparison["effects"] == ["the model answered differently from call 1", "the answers differ"]
    assert comparison["answers"] == ["Hi again.", "Hello!"]
    names = {a["name"]: a for a in reply["agents"]}
    assert names["shop_v2"]["parent"] == "shop" and names["shop"]["turns"] == 2
    # The parent's own inspector puts its newest fork beside it.
    parent_sent = Wire(Inspector.for_agent(agent), monkeypatch)
    reply = parent_sent.ask(**{wire.KIND: wire.COMPARE, wire.TURN_INDEX: 1})
    assert (reply[wire.LEFT], reply[wire.RIGHT]) == (
        {"agent": "shop", "turn": 1},
        {"agent": "shop_v2", "turn": 1},
    )


def test_compare_takes_any_two_turns_and_says_when_one_is_missing(shop) -> None:
    agent, _inspector, sent = shop
    agent.run("add eggs")
    agent.run("hello")
    default = sent.ask(**{wire.KIND: wire.COMPARE})
    assert (default[wire.LEFT], default[wire.RIGHT]) == (
        {"agent": "shop", "turn": 0},
        {"agent": "shop", "turn": 1},
    )
    same = sent.ask(
        **{
            wire.KIND: wire.COMPARE,
            wire.LEFT: {"agent": "shop", "turn": 1},
            wire.RIGHT: {"agent": "shop", "turn": 1},
        }
    )
    assert same["comparison"]["same"] is True
    reply = sent.ask(
        **{
            wire.KIND: wire.COMPARE,
            wire.LEFT: {"agent": "ghost", "turn": 0},
            wire.RIGHT: {"agent": "shop", "turn": 0},
        }
    )
    assert reply[wire.KIND] == wire.ERROR and "there is no agent 'ghost' to compare" in reply[wire.TEXT]
    reply = sent.ask(
        **{
            wire.KIND: wire.COMPARE,
            wire.LEFT: {"agent": "shop", "turn": 5},
            wire.RIGHT: {"agent": "shop", "turn": 0},
        }
    )
    assert "agent 'shop' has no finished turn 5 (it has 2 turn(s))" in reply[wire.TEXT]


def test_long_runs_of_equal_lines_are_folded() -> None:
    rows = (
        [LineRow("same", str(i), str(i)) for i in range(10)]
        + [LineRow("changed", "a", "b")]
        + [LineRow("same", "z", "z")] * 9
    )
    out = compact_rows(rows)
    assert [r["how"] for r in out] == ["fold", "same", "same", "changed", "same", "same", "fold"]
    assert out[0]["count"] == 8 and out[-1]["count"] == 7 and out[1]["left"] == "8"
