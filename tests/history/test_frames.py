"""pandas views of an agent's history: columns, values, empty histories, copies."""

from __future__ import annotations

import pandas as pd
import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import ScriptedModelExhaustedError
from agentnb.history.frames import TOOL_CALL_COLUMNS, TURN_COLUMNS


def add_item(item: str, session_state: dict) -> str:
    """Add an item to the list."""
    session_state.setdefault("items", []).append(item)
    return f"added {item}"


def guard(function_name, function_call, arguments):
    if arguments.get("item") == "poison":
        return "refused"
    return function_call(**arguments)


def make_agent() -> Agent:
    model = ScriptedModel(
        [
            [tool_call("add_item", item="milk"), tool_call("add_item", item="poison")],
            "Added milk.",
            tool_call("nope", x=1),
            "Done.",
        ]
    )
    return Agent("shop", model, tools=[add_item], tool_hooks=[guard], session_state={"owner": "ann"})


def test_turns_frame_has_one_row_per_turn_with_fixed_columns():
    agent = make_agent()
    agent.run("add milk and poison")
    agent.run("call something unknown")
    frame = agent.history.turns()
    assert list(frame.columns) == list(TURN_COLUMNS)
    assert frame["turn"].tolist() == [1, 2]  # numbered as records and the inspector show them
    assert frame["message"].tolist() == ["add milk and poison", "call something unknown"]
    assert frame["answer"].tolist() == ["Added milk.", "Done."]
    assert frame["status"].tolist() == ["ok", "ok"]
    assert frame["model"].tolist() == ["scripted", "scripted"]
    assert frame["tool_calls"].tolist() == [2, 1]
    assert (frame["input_tokens"] > 0).all() and (frame["output_tokens"] > 0).all()
    assert frame["input_tokens"].tolist() == [t.usage.input_tokens for t in agent.history]
    assert (frame["duration_ms"] >= 0).all()


def test_failed_turn_shows_its_error():
    agent = Agent("a", ScriptedModel([]))
    with pytest.raises(ScriptedModelExhaustedError):
        agent.run("hi")
    row = agent.history.turns().iloc[0]
    assert row["status"] == "failed"
    assert "no reply left" in row["error"]
    assert pd.isna(row["answer"])


def test_tool_calls_frame_has_one_row_per_call_with_hooks_and_errors():
    agent = make_agent()
    agent.run("add milk and poison")
    agent.run("call something unknown")
    frame = agent.history.tool_calls()
    assert list(frame.columns) == list(TOOL_CALL_COLUMNS)
    assert frame["turn"].tolist() == [1, 1, 2]
    assert frame["call"].tolist() == [0, 0, 0]
    assert frame["name"].tolist() == ["add_item", "add_item", "nope"]
    assert frame["arguments"].tolist()[:2] == ['{"item": "milk"}', '{"item": "poison"}']
    assert frame["result"].tolist()[:2] == ["added milk", "refused"]
    assert frame["hooks"].tolist()[:2] == [["guard"], ["guard"]]
    assert frame["answered_by"].tolist()[:2] == ["tool", "guard"]
    assert frame["changed_keys"].tolist()[:2] == [["items"], []]
    unknown = frame.iloc[2]
    assert unknown["error_kind"] == "unknown_tool"
    assert "no tool named 'nope'" in unknown["error"]
    assert pd.isna(unknown["result"])


def test_states_frame_has_a_column_per_key_indexed_by_turn():
    agent = make_agent()
    agent.run("add milk and poison")
    agent.session_state["turn"] = "a key named turn"
    agent.run("call something unknown")
    frame = agent.history.states()
    assert frame.index.name == "turn"
    assert frame.index.tolist() == [1, 2]
    assert list(frame.columns) == ["owner", "items", "turn"]
    assert frame.loc[1, "items"] == ["milk"]
    assert pd.isna(frame.loc[1, "turn"])
    assert frame.loc[2, "turn"] == "a key named turn"


def test_states_frame_values_are_copies():
    agent = make_agent()
    agent.run("add milk and poison")
    frame = agent.history.states()
    frame.loc[1, "items"].append("changed in the frame")
    assert agent.history[0].state_after["items"] == ["milk"]


def test_empty_history_gives_empty_frames_with_columns():
    agent = Agent("a", ScriptedModel(["x"]))
    assert list(agent.history.turns().columns) == list(TURN_COLUMNS)
    assert len(agent.history.turns()) == 0
    assert list(agent.history.tool_calls().columns) == list(TOOL_CALL_COLUMNS)
    assert agent.history.states().empty


def test_turns_show_the_state_blocks_token_cost_growing_turn_by_turn():
    def add(item: str, session_state) -> str:
        """Add an item."""
        session_state["items"].append(item)
        return "ok"

    model = ScriptedModel(
        [tool_call("add", item="milk"), "a", tool_call("add", item="eggs and bread"), "b", "c"]
    )
    agent = Agent("shop", model, session_state={"items": []}, add_session_state_to_context=True, tools=[add])
    for message in ("one", "two", "three"):
        agent.run(message)
    frame = agent.history.turns()
    blocks = [t.prompt.sections[-1].text for t in agent.history]
    assert frame["state_tokens"].tolist() == [len(b) // 4 for b in blocks]  # the estimate's rule
    assert (
        frame["state_tokens"].is_monotonic_increasing
        and frame["state_tokens"].iloc[0] < frame["state_tokens"].iloc[2]
    )
    assert frame["prompt_tokens"].tolist() == [t.prompt.tokens.total for t in agent.history]
    assert frame["tokens_counted_by"].tolist() == ["estimate"] * 3
    plain = Agent("plain", ScriptedModel(["x"]), instructions="Hi")
    plain.run("hello")
    assert plain.history.turns()["state_tokens"].isna().all()
