"""ReplayModel: recorded turns play back identically; drift is caught with a readable diff."""

from __future__ import annotations

import dataclasses
import warnings

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent
from agentnb.errors import ReplayDriftError, ReplayDriftWarning, ReplayExhaustedError
from agentnb.events import ModelRequested, ModelResponded, RunFailed
from agentnb.model_spec import resolve_model
from agentnb.models import OpenAIChat, OpenAIResponses, ReplayModel, ScriptedModel, tool_call


def add_item(item: str, session_state: dict) -> str:
    """Add an item to the shopping list."""
    session_state.setdefault("items", []).append(item)
    return f"added {item}"


def make_agent(model, instructions: str = "You manage a shopping list.") -> Agent:
    return Agent(
        "shop", model=model, instructions=instructions, tools=[add_item], session_state={"items": []}
    )


def scripted() -> ScriptedModel:
    return ScriptedModel(
        [
            tool_call("add_item", item="milk"),
            "Milk is on the list.",
            tool_call("add_item", item="eggs"),
            "Eggs too.",
        ]
    )


def wire(turn) -> list[tuple[dict, dict]]:
    """What a turn sent and got, with timings masked."""
    out = []
    for event in turn.events:
        if isinstance(event, ModelRequested):
            out.append(("request", event.call, event.request))
        elif isinstance(event, ModelResponded):
            out.append(("response", dataclasses.replace(event, run_id="", duration_ms=0.0)))
    return out


def record(model) -> Agent:
    agent = make_agent(model)
    agent.run("Add milk.")
    agent.run("Add eggs.")
    return agent


def test_a_replayed_session_is_identical():
    recorded = record(scripted())
    replay = ReplayModel.from_history(recorded.history)
    assert len(replay.recordings) == 4 and replay.recordings[1].turn == 0 and replay.recordings[1].call == 1

    again = record(replay)
    assert again.model.label == "replay" and replay.remaining == 0
    for old, new in zip(recorded.history, again.history):
        assert new.content == old.content and new.usage == old.usage
        assert wire(new) == wire(old)
        assert [(c.name, c.arguments, c.result) for c in new.tool_calls] == [
            (c.name, c.arguments, c.result) for c in old.tool_calls
        ]
    assert again.session_state == recorded.session_state == {"items": ["milk", "eggs"]}


def test_edited_instructions_fail_strict_replay_with_a_diff():
    recorded = record(scripted())
    agent = make_agent(ReplayModel.from_history(recorded.history), instructions="You manage a TODO list.")
    with pytest.raises(ReplayDriftError) as info:
        agent.run("Add milk.")
    text = str(info.value)
    first, *diff = text.splitlines()
    assert first.startswith("replay drift at turn 0, call 0: the request differs from the recording")
    assert "messages[0] (system) changed" in first and "strict=False" in first
    assert "--- recorded (turn 0, call 0)" in diff and "+++ this run (turn 0, call 0)" in diff
    assert '-      "content": "You manage a shopping list."' in diff
    assert '+      "content": "You manage a TODO list."' in diff
    failed = agent.history[-1].events[-1]
    assert isinstance(failed, RunFailed) and failed.error == first and failed.error_type == "ReplayDriftError"
    assert agent.session_state == {"items": []}


def test_drift_in_a_later_call_names_it():
    recorded = record(scripted())
    replay = ReplayModel.from_history(recorded.history)
    agent = make_agent(replay)
    agent.run("Add milk.")
    with pytest.raises(
        ReplayDriftError, match=r"^replay drift at turn 1, call 0: .*messages\[1\] \(user\) changed"
    ):
        agent.run("Add bread.")
    assert replay.position == 2  # the drifting call is not consumed: fix the cell and run it again
    assert agent.run("Add eggs.").content == "Eggs too."


def test_lax_replay_warns_and_answers():
    recorded = record(scripted())
    replay = ReplayModel.from_history(recorded.history, strict=False)
    agent = make_agent(replay, instructions="Changed.")
    with pytest.warns(ReplayDriftWarning, match=r"turn 0, call \d: .*answering from the recording anyway"):
        result = agent.run("Add milk.")
    assert result.content == "Milk is on the list."
    assert len(replay.drifts) == 2  # both calls of the turn saw the changed system prompt


def test_options_and_tools_are_compared():
    recorded = record(scripted())
    agent = make_agent(ReplayModel.from_history(recorded.history))
    agent.model_options = {"temperature": 0.5}
    with pytest.raises(ReplayDriftError, match="'temperature' added"):
        agent.run("Add milk.")
    agent = Agent(
        "shop",
        model=ReplayModel.from_history(recorded.history),
        instructions="You manage a shopping list.",
        session_state={"items": []},
    )
    with pytest.raises(ReplayDriftError, match="'tools' removed"):
        agent.run("Add milk.")


def test_more_calls_than_recorded():
    recorded = make_agent(ScriptedModel(["Hi."]))
    recorded.run("hello")
    agent = make_agent(ReplayModel.from_history(recorded.history))
    agent.run("hello")
    with pytest.raises(ReplayExhaustedError, match="holds 1 model call"):
        agent.run("hello")
    with pytest.raises(ReplayExhaustedError, match="no recording"):
        make_agent(resolve_model("replay")).run("hello")
    assert agent.model.rewind().remaining == 1


@pytest.mark.parametrize("family", [OpenAIChat, OpenAIResponses])
def test_openai_recordings_replay_in_their_own_wire_format(family):
    with OpenAIServer() as server:
        server.add(
            Reply(tool_calls=[("add_item", {"item": "milk"})], usage=(40, 10)),
            Reply(text="Done.", usage=(55, 3)),
        )
        recorded = make_agent(family("gpt-test", base_url=server.url, temperature=0, max_retries=0))
        recorded.run("Add milk.")
    # The server is gone: the replay needs no network.
    again = make_agent(ReplayModel.from_history(recorded.history))
    again.run("Add milk.")
    assert wire(again.history[0]) == wire(recorded.history[0])
    assert again.history[0].usage == recorded.history[0].usage
    request = again.history[0].model_calls[1].request
    assert request["temperature"] == 0 and ("input" in request) is (family is OpenAIResponses)


def test_bare_recordings_from_payload_and_raw_pairs():
    with OpenAIServer() as server:
        server.add(Reply(text="Hello!", usage=(9, 2)))
        recorded = Agent("a", model=OpenAIChat("gpt-test", base_url=server.url, stream=False, max_retries=0))
        recorded.run("hi")
    call = recorded.history[0].model_calls[0]
    replay = ReplayModel([(call.request, call.response.response)])
    result = Agent("a", model=replay).run("hi")
    assert result.content == "Hello!" and (result.usage.input_tokens, result.usage.output_tokens) == (9, 2)
    with pytest.raises(ValueError, match="must be a \\(request payload, response\\) pair"):
        ReplayModel(["nope"])


def test_replay_from_a_saved_session(tmp_path):
    from agentnb.sessions import JSONSession

    recorded = record(scripted())
    JSONSession(tmp_path).save_session_state_sync("shop1", agent=recorded)
    from agentnb.sessions import load_history

    replay = ReplayModel.from_history(load_history(tmp_path, session_id="shop1"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = record(replay)
    assert [t.content for t in again.history] == [t.content for t in recorded.history]
    assert [wire(t) for t in again.history] == [wire(t) for t in recorded.history]
