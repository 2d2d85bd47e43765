"""The Responses API through the real ``openai`` client against a scripted server on 127.0.0.1."""

from __future__ import annotations

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent
from agentnb.errors import ModelAuthenticationError, ModelNotFoundError, ModelRateLimitError
from agentnb.events import TextDelta
from agentnb.model_spec import resolve_model
from agentnb.models import OpenAIResponses
from agentnb.models.base import ModelRequest


def lookup(city: str) -> str:
    """Look up the weather in a city."""
    return f"sunny in {city}"


def model(server: OpenAIServer, **options) -> OpenAIResponses:
    options.setdefault("max_retries", 0)
    return OpenAIResponses("gpt-test", base_url=server.url, **options)


@pytest.mark.parametrize("stream", [True, False])
def test_system_prompt_goes_as_a_developer_item(server, stream):
    server.add(Reply(text="Hello there, friend.", usage=(12, 4)))
    agent = Agent("r", model=model(server, stream=stream, max_tokens=64), instructions="Greet warmly.")
    events = []
    result = agent.run("hi", on_event=events.append)

    assert agent.model.label == "openai-responses:gpt-test"
    assert result.content == "Hello there, friend."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == result.content
    assert (result.usage.input_tokens, result.usage.output_tokens) == (12, 4)
    sent = server.requests[-1].body
    assert server.requests[-1].path == "/v1/responses"
    assert sent["input"] == [
        {"role": "developer", "content": "Greet warmly."},
        {"role": "user", "content": "hi"},
    ]
    assert sent["max_output_tokens"] == 64 and "messages" not in sent
    assert sent.get("stream", False) is stream
    assert agent.history[-1].model_calls[0].request == sent
    assert agent.history[-1].model_calls[0].response.response["status"] == "completed"
    assert server.problems == []


@pytest.mark.parametrize("stream", [True, False])
def test_function_calls_round_trip_as_responses_items(server, stream):
    server.add(
        Reply(tool_calls=[("lookup", {"city": "Oslo"}), ("lookup", {"city": "Rome"})]),
        Reply(text="Sunny in both."),
    )
    agent = Agent("w", model=model(server, stream=stream), tools=[lookup])
    result = agent.run("Weather in Oslo and Rome?")

    assert result.content == "Sunny in both."
    assert [c.result for c in result.tool_calls] == ["sunny in Oslo", "sunny in Rome"]
    first, second = (r.body for r in server.requests)
    assert first["tools"] == [
        {
            "type": "function",
            "name": "lookup",
            "description": "Look up the weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
    ]
    kinds = [item.get("type", item.get("role")) for item in second["input"]]
    assert kinds == ["user", "function_call", "function_call", "function_call_output", "function_call_output"]
    assert second["input"][3] == {
        "type": "function_call_output",
        "call_id": "call_1_0",
        "output": "sunny in Oslo",
    }
    assert agent.history[-1].model_calls[0].response.finish_reason == "tool_calls"
    assert server.problems == []


def test_chat_options_are_renamed_for_responses():
    request = ModelRequest(
        messages=[{"role": "user", "content": "x"}],
        tools=[
            {
                "type": "function",
                "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
            }
        ],
        options={"max_tokens": 5, "tool_choice": {"type": "function", "function": {"name": "f"}}},
    )
    body = OpenAIResponses("m", base_url="http://127.0.0.1:9/v1", stream=False).payload(request)
    assert body["max_output_tokens"] == 5 and "max_tokens" not in body
    assert body["tool_choice"] == {"type": "function", "name": "f"}
    assert "stream" not in body


def test_errors_are_one_line(server):
    server.add(Reply(status=404, error="no such model"))
    with pytest.raises(ModelNotFoundError, match="'gpt-test' was not found"):
        Agent("a", model=model(server)).run("hi")
    server.add(Reply(status=429, error="slow down", repeat=True, headers={"retry-after-ms": "5"}))
    with pytest.raises(ModelRateLimitError, match="after 1 retry"):
        Agent("a", model=model(server, max_retries=1)).run("hi")
    with pytest.raises(
        ModelAuthenticationError, match=r"set OPENAI_API_KEY \(or pass api_key=\), or give base_url="
    ):
        Agent("a", model=resolve_model("openai-responses:gpt-5-mini")).run("hi")
