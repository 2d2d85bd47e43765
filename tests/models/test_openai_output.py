"""Typed output on the wire: the real ``openai`` client against a loopback server, Chat
Completions and the Responses API. The request bodies carry exactly the schema and mode asked
for; a server that ignores the schema gets a retry with the errors."""

from __future__ import annotations

import json

import pytest
from openai_server import Reply
from pydantic import BaseModel

from agentnb import Agent
from agentnb.errors import OutputValidationError
from agentnb.models import OpenAIChat, OpenAIResponses


class Invoice(BaseModel):
    vendor: str
    total: float


def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: ACME, 12.50"


def rate(currency: str) -> str:
    """A currency's rate to the euro."""
    return "1.0"


MODELS = {
    "chat": lambda server, **kw: OpenAIChat("gpt-test", base_url=server.url, max_retries=0, **kw),
    "responses": lambda server, **kw: OpenAIResponses("gpt-test", base_url=server.url, max_retries=0, **kw),
}


def native_form(api: str, body: dict) -> dict:
    if api == "chat":
        form = body["response_format"]
        assert form["type"] == "json_schema" and "text" not in body
        return {"name": form["json_schema"]["name"], **form["json_schema"]}
    form = body["text"]["format"]
    assert form["type"] == "json_schema" and "response_format" not in body
    return form


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("stream", [True, False])
def test_native_mode_sends_the_strict_schema_and_a_server_that_ignores_it_gets_the_errors(
    server, api, stream
):
    server.add(Reply(text="ACME, 12.50"), Reply(text='{"vendor": "ACME", "total": 12.5}'))
    agent = Agent("x", MODELS[api](server, stream=stream), output_type=Invoice)
    result = agent.run("extract the invoice")
    assert result.output == Invoice(vendor="ACME", total=12.5)
    first, second = (r.body for r in server.requests)
    form = native_form(api, first)
    assert form["name"] == "Invoice" and form["strict"] is True
    assert (
        form["schema"]["required"] == ["vendor", "total"] and form["schema"]["additionalProperties"] is False
    )
    assert "tools" not in first or not first["tools"]
    retry = (second["messages"] if api == "chat" else second["input"])[-1]
    assert retry["role"] == "user" and "not valid JSON" in json.dumps(retry)
    assert native_form(api, second) == form  # asked the same way again
    assert server.problems == []


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_spent_budget_raises_with_both_attempts(server, api):
    server.add(Reply(text='{"vendor": "ACME"}'), Reply(text='{"total": "lots"}'))
    agent = Agent("x", MODELS[api](server), output_type=Invoice, output_retries=1)
    with pytest.raises(OutputValidationError) as caught:
        agent.run("extract")
    assert [a.attempt for a in caught.value.attempts] == [1, 2]
    assert caught.value.attempts[0].errors[0]["path"] == "/total"
    assert len(server.requests) == 2 and server.problems == []


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_tool_mode_with_two_other_tools_in_one_turn(server, api):
    server.add(
        Reply(tool_calls=[("lookup", {"order": "A7"}), ("rate", {"currency": "USD"})]),
        Reply(tool_calls=[("final_result", {"vendor": "ACME", "total": 12.5})]),
    )
    agent = Agent("x", MODELS[api](server), tools=[lookup, rate], output_type=Invoice, output_mode="tool")
    result = agent.run("what was order A7?")
    assert result.output == Invoice(vendor="ACME", total=12.5)
    first = server.requests[0].body
    names = [t["function"]["name"] if api == "chat" else t["name"] for t in first["tools"]]
    assert names == ["lookup", "rate", "final_result"]
    assert "response_format" not in first and "text" not in first
    assert [c.name for c in result.turn.tool_calls] == ["lookup", "rate", "final_result"]
    assert server.problems == []


def test_prompted_mode_sends_the_schema_in_the_system_prompt_and_nothing_else(server):
    server.add(Reply(text='{"vendor": "ACME", "total": 1}'))
    agent = Agent(
        "x", MODELS["chat"](server), output_type=Invoice, output_mode="prompted", instructions="Read it."
    )
    assert agent.run("go").output.total == 1.0
    body = server.requests[0].body
    system = body["messages"][0]["content"]
    assert system.startswith("Read it.") and "<output_format>" in system and '"vendor"' in system
    assert "response_format" not in body and "tools" not in body
