"""Pauses over the wire: the real ``openai`` client against the scripted server on 127.0.0.1 — an
edited request at a breakpoint is what the server receives, a paused Responses API turn keeps
its reasoning items across a reload, and a replayed decision costs no model call."""

from __future__ import annotations

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, tool
from agentnb.errors import ReplayDriftError
from agentnb.models import OpenAIChat, OpenAIResponses
from agentnb.sessions import JSONSession


def chat(server: OpenAIServer) -> OpenAIChat:
    return OpenAIChat("gpt-test", base_url=server.url, max_retries=0)


def responses(server: OpenAIServer) -> OpenAIResponses:
    return OpenAIResponses("gpt-test", base_url=server.url, max_retries=0)


@tool(requires_approval=True)
def transfer(to: str, amount: int) -> str:
    """Transfer money."""
    return f"sent {amount} to {to}"


def test_an_edited_request_at_a_breakpoint_is_what_the_server_receives(server):
    server.add(Reply(text="Bonjour."))
    agent = Agent("a", model=chat(server), instructions="Answer in English.", break_before="model")
    result = agent.run("Say hello")
    (item,) = result.pending
    assert server.requests == []  # nothing went out
    assert item.request["messages"] == [
        {"role": "system", "content": "Answer in English."},
        {"role": "user", "content": "Say hello"},
    ]
    edited = [{"role": "system", "content": "Answer in French."}, {"role": "user", "content": "Say hello"}]
    item.edit(request={"messages": edited, "options": {"temperature": 0.5}})
    done = agent.continue_run()
    assert done.content == "Bonjour." and server.problems == []
    (received,) = server.requests
    assert received.body["messages"] == edited and received.body["temperature"] == 0.5
    assert done.turn.model_calls[0].request["messages"] == edited  # the record says what was sent
    assert done.turn.system_prompt == "Answer in English."  # the prompt as rendered, before the edit


def test_a_paused_responses_turn_keeps_its_reasoning_items_through_a_reload(server, tmp_path):
    server.add(
        Reply(
            reasoning="They want to pay Ann: transfer.", tool_calls=[("transfer", {"to": "ann", "amount": 5})]
        ),
        Reply(reasoning="", text="Sent 5 to Ann."),
    )
    first = Agent("bank", model=responses(server), tools=[transfer], session=JSONSession(tmp_path))
    assert first.run("pay ann 5").status == "paused"
    again = Agent("bank", model=responses(server), tools=[transfer], session=JSONSession(tmp_path))
    again.pending[0].approve()
    done = again.continue_run()
    assert done.content == "Sent 5 to Ann." and server.problems == []
    second = server.requests[1].body
    assert [item.get("type", "message") for item in second["input"]] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert second["input"][1]["id"] == "rs_1"
    assert second["input"][3]["output"] == "sent 5 to ann"


def record_and_replay(server: OpenAIServer, folder, decide_first, decide_again, monkeypatch) -> Agent:
    server.add(Reply(tool_calls=[("transfer", {"to": "bob", "amount": 9})]), Reply(text="Done."))
    agent = Agent("bank", model=chat(server), tools=[transfer])
    agent.attach_recording(folder, "nb")
    decide_first(agent.run("pay bob 9").pending[0])
    agent.continue_run()
    assert len(server.requests) == 2
    monkeypatch.setenv("AGENTNB_REPLAY", "strict")  # as under nbval
    again = Agent("bank", model=chat(server), tools=[transfer])
    again.attach_recording(folder, "nb")
    decide_again(again.run("pay bob 9").pending[0])
    return again


def test_a_replayed_pause_and_decision_cost_no_model_call(server, tmp_path, monkeypatch):
    again = record_and_replay(
        server,
        tmp_path,
        lambda item: item.approve(arguments={"to": "bob", "amount": 7}),
        lambda item: item.approve(arguments={"to": "bob", "amount": 7}),
        monkeypatch,
    )
    result = again.continue_run()
    assert result.content == "Done." and result.turn.replayed
    assert result.tool_calls[0].result == "sent 7 to bob"
    assert len(server.requests) == 2  # every answer came from the recording


def test_a_changed_decision_under_strict_replay_is_named_as_a_drift(server, tmp_path, monkeypatch):
    again = record_and_replay(
        server,
        tmp_path,
        lambda item: item.approve(),
        lambda item: item.reject("not today"),
        monkeypatch,
    )
    with pytest.raises(ReplayDriftError) as caught:
        again.continue_run()
    message = str(caught.value)
    assert message.startswith("turn 1 goes on with other decisions than the recording in ")
    assert "recorded approved; now rejected 'not today'" in message
    assert len(server.requests) == 2 and again.history[-1].status == "failed"
