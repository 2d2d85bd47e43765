"""A typed turn as the inspector's Output and Request tabs get it: each answer checked (live, as
an ``output_checked`` item), and on request the schema the model was asked with, the mode and the
message that went back after each failed attempt — in native, tool and prompted mode, with
agentnb's ScriptedModel and with the real ``openai`` client (Chat Completions and the Responses
API) against a loopback server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer, Reply
from pydantic import BaseModel
from test_inspector import Clock, Wire

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import OutputValidationError
from agentnb.ipython import output_view, wire
from agentnb.ipython.inspector import Inspector
from agentnb.models import OpenAIChat, OpenAIResponses

ROOT = Path(__file__).resolve().parents[2]
K = wire.KIND


class Invoice(BaseModel):
    customer: str
    total: int


def output_of(sent: Wire, turn: int = 0) -> dict[str, Any]:
    reply = sent.ask(**{K: output_view.NEED_OUTPUT, wire.TURN_INDEX: turn})
    assert reply[K] == output_view.OUTPUT and reply[wire.TURN_INDEX] == turn
    return reply


def typed(monkeypatch, model: Any, **options: Any) -> tuple[Agent, Wire]:
    agent = Agent("inv", model, output_type=Invoice, **options)
    return agent, Wire(Inspector.for_agent(agent), monkeypatch, Clock(step=0.0))


def test_the_wire_names_match_the_front_end() -> None:
    source = (ROOT / "js" / "outputs.js").read_text()
    block = re.search(r"export const OUTPUT_WIRE = (\{.*?\});", source, re.S)
    assert block is not None and json.loads(block.group(1)) == output_view.OUTPUT_WIRE


def test_tool_mode_each_attempt_goes_out_live_and_the_retry_is_the_output_tools_result(monkeypatch) -> None:
    model = ScriptedModel([
        tool_call("final_result", customer="ann", total="forty"),
        tool_call("final_result", customer="ann", total=40),
    ])  # fmt: skip
    agent, sent = typed(monkeypatch, model, output_mode="tool")
    agent.run("bill ann")
    checks = [e[wire.EVENT_BODY] for e in sent.events() if e[wire.EVENT_BODY]["kind"] == "output_checked"]
    assert [(c["attempt"], c["ok"], c["mode"], c["output_type"]) for c in checks] == [
        (1, False, "tool", "Invoice"), (2, True, "tool", "Invoice"),
    ]  # fmt: skip
    assert checks[0]["errors"] == [
        {"path": "/total", "message": "Input should be a valid integer, unable to parse string as an integer"}
    ]
    assert checks[0]["text"] == '{"customer": "ann", "total": "forty"}' and checks[1]["output"] == {
        "customer": "ann",
        "total": 40,
    }
    out = output_of(sent)
    assert (out["type"], out["mode"], out["validators"]) == ("Invoice", "tool", [])
    (schema,) = out["schemas"]
    assert schema["from"] == "the parameters of tool final_result"
    assert schema["schema"]["required"] == ["customer", "total"]
    first, second = out["attempts"]
    assert first["retry"] == (
        "Error: Your answer does not match the required output:\n- /total: Input should be a valid integer, "
        "unable to parse string as an integer\nCall final_result again with a corrected answer."
    )
    assert second["retry"] is None and second["ok"] is True


def test_native_and_prompted_mode_schemas_and_the_retry_sent_as_a_user_message(monkeypatch) -> None:
    steps = ['{"total": "x"}', '{"customer": "ann", "total": 3}']
    agent, sent = typed(monkeypatch, ScriptedModel(list(steps), native_output=True), output_mode="native")
    agent.run("go")
    out = output_of(sent)
    (schema,) = out["schemas"]
    assert (schema["name"], schema["from"], out["mode"]) == ("Invoice", "response_format", "native")
    assert schema["schema"]["additionalProperties"] is False  # made strict, as it was sent
    first = out["attempts"][0]
    assert sorted(e["path"] for e in first["errors"]) == ["/customer", "/total"]
    assert first["retry"].startswith("Your answer does not match the required output:\n")
    assert first["retry"].endswith("Answer again with only the JSON that matches the schema.")

    agent, sent = typed(monkeypatch, ScriptedModel(list(steps)), output_mode="prompted")
    agent.run("go")
    out = output_of(sent)
    (schema,) = out["schemas"]
    assert (schema["from"], out["mode"]) == ("the system prompt", "prompted")
    assert schema["schema"]["properties"]["total"]["type"] == "integer"
    assert out["attempts"][0]["retry"].startswith("Your answer does not match")


def test_a_failed_run_shows_every_attempt_and_the_last_sent_nothing_back(monkeypatch) -> None:
    model = ScriptedModel(['{"customer": "ann"}', '{"total": 1}'], native_output=True)
    agent, sent = typed(monkeypatch, model, output_retries=1)
    with pytest.raises(OutputValidationError):
        agent.run("go")
    out = output_of(sent)
    assert [(a["attempt"], a["ok"]) for a in out["attempts"]] == [(1, False), (2, False)]
    assert out["attempts"][0]["retry"].startswith("Your answer does not match")
    assert out["attempts"][1]["retry"] is None  # the attempts were spent: the run failed
    assert sent.events()[-1][wire.EVENT_BODY]["kind"] == "run_failed"


def test_a_turn_without_an_output_type_and_a_bad_turn(monkeypatch) -> None:
    agent = Agent("plain", ScriptedModel(["hi"]))
    sent = Wire(Inspector.for_agent(agent), monkeypatch, Clock(step=0.0))
    agent.run("x")
    assert output_of(sent) == {K: output_view.OUTPUT, wire.TURN_INDEX: 0, "attempts": []}
    error = sent.ask(**{K: output_view.NEED_OUTPUT, wire.TURN_INDEX: 7})
    assert error[K] == wire.ERROR and "there is no turn 7" in error[wire.TEXT]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_the_real_client_native_schema_and_retry_as_sent(monkeypatch, api) -> None:
    with OpenAIServer() as server:
        server.add(Reply(text="ann, forty"), Reply(text='{"customer": "ann", "total": 40}'))
        make = OpenAIChat if api == "chat" else OpenAIResponses
        agent, sent = typed(monkeypatch, make("gpt-test", base_url=server.url, max_retries=0))
        agent.run("bill ann")
        assert server.problems == []
    out = output_of(sent)
    (schema,) = out["schemas"]
    assert schema["from"] == ("response_format" if api == "chat" else "text.format")
    assert schema["name"] == "Invoice" and schema["schema"]["required"] == ["customer", "total"]
    first, second = out["attempts"]
    assert first["errors"][0]["message"].startswith("not valid JSON")
    assert first["retry"].startswith(
        "Your answer does not match the required output:\n- (the answer): not valid JSON"
    )
    assert second["ok"] and second["output"] == {"customer": "ann", "total": 40}


def test_the_real_client_tool_mode_retry_from_the_responses_input(monkeypatch) -> None:
    with OpenAIServer() as server:
        server.add(
            Reply(tool_calls=[("final_result", {"customer": "ann", "total": "x"})]),
            Reply(tool_calls=[("final_result", {"customer": "ann", "total": 4})]),
        )
        agent, sent = typed(
            monkeypatch, OpenAIResponses("gpt-test", base_url=server.url, max_retries=0), output_mode="tool"
        )
        agent.run("bill ann")
        assert server.problems == []
    out = output_of(sent)
    assert out["schemas"][0]["from"] == "the parameters of tool final_result"
    assert out["attempts"][0]["retry"].startswith("Error: Your answer does not match the required output:")
