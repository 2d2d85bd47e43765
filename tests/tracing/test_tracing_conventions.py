"""The GenAI conventions' shapes and names where agentnb used to differ: flat tool definitions
(and OpenInference's ``llm.tools`` / ``tool.parameters``), ``server.address`` / ``server.port``,
reasoning tokens, the ``tool_call`` finish reason, and the retrieval's ``top_k`` as agentnb's."""

from __future__ import annotations

import json
import urllib.parse

from agentnb import Agent, DocumentContext, OpenAIChat, ScriptedModel, tool_call, tracing
from agentnb.models import OpenAIResponses
from tests.openai_server import OpenAIServer, Reply

KEY = "sk-test-conventions-0000000000"


def forecast(city: str, days: int = 1) -> str:
    """The forecast for a city."""
    return f"sunny in {city} for {days} day(s)"


def test_chat_spans_carry_flat_tool_definitions_the_server_and_tool_call_finish_reasons(provider):
    tp, spans = provider
    tracing.instrument(tp, capture_content=True)
    with OpenAIServer(api_key=KEY) as server:
        server.add(Reply(tool_calls=[("forecast", {"city": "Oslo"})]), Reply(text="Sunny."))
        model = OpenAIChat("gpt-test", base_url=server.url, api_key=KEY, stream=False, max_retries=0)
        Agent("weather", model, tools=[forecast]).run("forecast for Oslo?")
    first, second = spans.named("chat gpt-test")
    a = first.attributes
    (definition,) = json.loads(a["gen_ai.tool.definitions"])
    # the conventions' flat shape: name, description and parameters at the top, not under "function"
    assert set(definition) == {"type", "name", "description", "parameters"}
    assert (definition["type"], definition["name"]) == ("function", "forecast")
    assert definition["description"] == "The forecast for a city."
    assert set(definition["parameters"]["properties"]) == {"city", "days"}
    # OpenInference's tool list: the tool as the request sent it
    wire = json.loads(a["llm.tools.0.tool.json_schema"])
    assert wire["type"] == "function" and wire["function"]["name"] == "forecast"
    url = urllib.parse.urlsplit(server.url)
    assert (a["server.address"], a["server.port"]) == (url.hostname, url.port)
    assert a["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert json.loads(a["gen_ai.output.messages"])[0]["finish_reason"] == "tool_call"
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    tool = spans.one("execute_tool forecast").attributes
    assert json.loads(tool["tool.parameters"])["properties"]["city"] == {"type": "string"}


def test_tool_parameters_ride_on_the_tool_span_without_content_and_no_server_for_an_offline_model(provider):
    tp, spans = provider
    model = ScriptedModel([tool_call("forecast", city="Oslo"), "Sunny."])
    Agent("offline", model, tools=[forecast], tracer_provider=tp).run("forecast?")
    tool = spans.one("execute_tool forecast").attributes
    assert set(json.loads(tool["tool.parameters"])["required"]) == {"city"}
    assert not any("server.address" in s.attributes for s in spans.all)
    assert "gen_ai.tool.definitions" not in spans.named("chat scripted")[0].attributes  # content is opt-in


def test_reasoning_tokens_a_model_reports_are_on_its_chat_span(provider):
    tp, spans = provider
    with OpenAIServer(api_key=KEY) as server:
        server.add(Reply(text="42", usage=(20, 12), reasoning="thought", reasoning_tokens=7))
        model = OpenAIResponses("gpt-test", base_url=server.url, api_key=KEY, stream=False, max_retries=0)
        Agent("thinker", model, tracer_provider=tp).run("the answer?")
    chat = spans.one("chat gpt-test").attributes
    assert (chat["gen_ai.usage.output_tokens"], chat["gen_ai.usage.reasoning.output_tokens"]) == (12, 7)
    root = spans.one("invoke_agent thinker").attributes
    assert not any(k.startswith("gen_ai.usage.") for k in root)  # run totals stay agentnb's


def test_a_retrievals_top_k_is_agentnbs_own_attribute(provider):
    tp, spans = provider
    docs = DocumentContext(["Milk is on aisle 3.", "Bread is on aisle 1."], label="STORE")
    Agent("shop", ScriptedModel(["aisle 3"]), context_providers=[docs], tracer_provider=tp).run("milk?")
    retrieval = spans.one("retrieval STORE").attributes
    assert isinstance(retrieval["agentnb.retrieval.top_k"], int)
    assert not any(k.startswith("gen_ai.retrieval.top_k") for k in retrieval)
