"""Chat Completions through the real ``openai`` client against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import socket

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent
from agentnb.errors import (
    ConfigurationError,
    ContextLengthError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelRateLimitError,
)
from agentnb.events import EVENTS_ADAPTER, RunFailed, TextDelta
from agentnb.model_spec import resolve_model, set_default_model
from agentnb.models import OpenAIChat, ScriptedModel


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def model(server: OpenAIServer, **options) -> OpenAIChat:
    options.setdefault("max_retries", 0)
    return OpenAIChat("gpt-test", base_url=server.url, **options)


@pytest.mark.parametrize("stream", [True, False])
def test_a_text_turn_streams_deltas_and_reports_usage(server, stream):
    server.add(Reply(text="Paris is the capital of France.", usage=(30, 8)))
    agent = Agent("geo", model=model(server, stream=stream, temperature=0.2), instructions="Answer briefly.")
    events = []
    result = agent.run("Capital of France?", on_event=events.append)

    assert result.content == "Paris is the capital of France."
    assert result.usage.input_tokens == 30 and result.usage.output_tokens == 8 and not result.usage.estimated
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == result.content
    assert len(deltas) == (3 if stream else 1)  # the server sends the text in three pieces
    responded = agent.history[-1].model_calls[0].response
    assert responded.finish_reason == "stop"
    # The recorded request is exactly what went over the wire.
    sent = server.requests[-1].body
    assert agent.history[-1].model_calls[0].request == sent
    assert sent["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert sent["temperature"] == 0.2
    assert sent.get("stream", False) is stream
    assert (sent.get("stream_options") == {"include_usage": True}) is stream
    assert responded.response["choices"][0]["message"]["content"] == result.content
    assert server.problems == []


@pytest.mark.parametrize("stream", [True, False])
def test_parallel_tool_calls_run_and_their_results_go_back(server, stream):
    server.add(
        Reply(tool_calls=[("add", {"a": 2, "b": 3}), ("multiply", {"a": 4, "b": 5})]),
        Reply(text="2+3=5 and 4*5=20."),
    )
    agent = Agent("calc", model=model(server, stream=stream), tools=[add, multiply])
    result = agent.run("Compute 2+3 and 4*5.")

    assert result.content == "2+3=5 and 4*5=20."
    assert [(c.name, c.arguments, c.result) for c in result.tool_calls] == [
        ("add", '{"a": 2, "b": 3}', "5"),
        ("multiply", '{"a": 4, "b": 5}', "20"),
    ]
    first = agent.history[-1].model_calls[0].response
    assert first.finish_reason == "tool_calls"
    assert [c.id for c in first.tool_calls] == ["call_1_0", "call_1_1"]
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in second[2:]] == ["call_1_0", "call_1_1"]
    assert [t["function"]["name"] for t in server.requests[0].body["tools"]] == ["add", "multiply"]
    assert result.usage.input_tokens == 42  # both calls summed
    assert server.problems == []


def test_model_options_reach_the_wire(server):
    server.add(Reply(text="ok"))
    agent = Agent(
        "opts",
        model=model(server, max_tokens=50, request_options={"top_p": 0.5}),
        model_options={"seed": 7},
    )
    agent.run("hi")
    sent = server.requests[-1].body
    assert sent["max_tokens"] == 50 and sent["top_p"] == 0.5 and sent["seed"] == 7
    assert agent.observe("again").request["seed"] == 7


def test_the_server_rejects_a_malformed_request(server):
    """The test server's own check: a tool message that answers no call is refused."""
    from agentnb.models.base import ModelRequest

    bad = ModelRequest(
        messages=[{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "nope", "content": "1"}]
    )
    with pytest.raises(ModelError, match="HTTP 400"):
        model(server).complete(bad)
    assert "tool_call_id 'nope'" in server.problems[0]


def run_failing(agent: Agent, error_type: type[Exception]) -> tuple[Exception, RunFailed]:
    state_before = dict(agent.session_state)
    with pytest.raises(error_type) as info:
        agent.run("hello")
    failed = agent.history[-1].events[-1]
    assert isinstance(failed, RunFailed)
    assert failed.error == str(info.value) and "\n" not in failed.error
    assert agent.history[-1].status == "failed"
    assert agent.session_state == state_before  # nothing half-applied
    return info.value, failed


def test_no_key_and_no_base_url_names_the_fix():
    agent = Agent("a", model=OpenAIChat("gpt-5-mini"), session_state={"n": 1})
    error, _ = run_failing(agent, ModelAuthenticationError)
    assert (
        "set OPENAI_API_KEY (or pass api_key=), or give base_url= the address of an OpenAI-compatible server"
        in str(error)
    )
    assert "…" not in str(error)


def test_a_rejected_key_is_one_line(monkeypatch):
    with OpenAIServer(api_key="sk-right") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
        error, _ = run_failing(Agent("a", model=model(server)), ModelAuthenticationError)
    assert "HTTP 401" in str(error) and "set OPENAI_API_KEY" in str(error)
    assert "sk-wrong" not in str(error)


def test_a_rejected_api_key_argument_says_so_not_the_environment_variable():
    with OpenAIServer(api_key="sk-right") as server:
        wrong = OpenAIChat(
            "gpt-test", base_url=server.url, api_key="sk-wrong-given", stream=False, max_retries=0
        )
        error, _ = run_failing(Agent("a", model=wrong), ModelAuthenticationError)
    assert "check the api_key given to the model" in str(error) and "OPENAI_API_KEY" not in str(error)
    assert "sk-wrong-given" not in str(error)


def test_unknown_model(server):
    server.add(Reply(status=404, error="The model `gpt-nope` does not exist", code="model_not_found"))
    error, _ = run_failing(Agent("a", model=model(server)), ModelNotFoundError)
    assert "'gpt-test' was not found" in str(error) and server.url in str(error)


def test_rate_limit_after_the_clients_retries(server):
    server.add(Reply(status=429, error="Rate limit reached", repeat=True, headers={"retry-after-ms": "5"}))
    error, _ = run_failing(Agent("a", model=model(server, max_retries=2)), ModelRateLimitError)
    assert len(server.requests) == 3  # the first try and two retries
    assert "after 2 retries" in str(error) and "Rate limit reached" in str(error)


def test_server_error(server):
    server.add(Reply(status=500, error="boom\nsecond line", repeat=True))
    error, _ = run_failing(Agent("a", model=model(server)), ModelError)
    assert "HTTP 500" in str(error) and "boom" in str(error) and "second line" not in str(error)


def test_timeout(server):
    server.add(Reply(text="late", delay=1.5))
    error, _ = run_failing(Agent("a", model=model(server, timeout=0.2)), ModelConnectionError)
    assert "did not answer within 0.2 s" in str(error)


def test_unreachable_server_names_the_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    url = f"http://127.0.0.1:{port}/v1"
    error, _ = run_failing(
        Agent("a", model=OpenAIChat("m", base_url=url, max_retries=0)), ModelConnectionError
    )
    assert f"cannot reach the model server at {url}" in str(error)


def test_context_too_long(server):
    server.add(
        Reply(
            status=400,
            error="This model's maximum context length is 8 tokens",
            code="context_length_exceeded",
        )
    )
    error, _ = run_failing(Agent("a", model=model(server)), ContextLengthError)
    assert "context window" in str(error)


def test_the_key_never_reaches_the_record(monkeypatch):
    secret = "sk-test-SECRET-4f9a0c7d1e"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with OpenAIServer(api_key=secret) as server:
        server.add(Reply(tool_calls=[("add", {"a": 1, "b": 1})]), Reply(text="2"))
        agent = Agent("a", model=OpenAIChat("gpt-test", base_url=server.url, max_retries=0), tools=[add])
        agent.run("1+1?")
        assert server.requests[0].headers["authorization"] == f"Bearer {secret}"  # it was used
    dumped = EVENTS_ADAPTER.dump_json(agent.history[-1].events).decode()
    assert "model_requested" in dumped and "model_responded" in dumped
    assert secret not in dumped and "sk-test-SECRET" not in dumped
    assert secret not in repr(agent.model) and secret not in json.dumps(agent.observe("x").request)


def test_environment_base_url_and_resolution(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    server.add(Reply(text="from env"))
    agent = Agent("a")
    assert agent.model.label == "openai:gpt-5-mini" and agent.model.origin == "environment"
    assert agent.run("hi").content == "from env"
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


def test_model_resolution_order(monkeypatch):
    assert resolve_model(None).origin == "offline fallback"
    explicit = resolve_model("openai:gpt-4.1-mini")
    assert explicit.label == "openai:gpt-4.1-mini" and explicit.origin == "explicit"
    assert resolve_model("openai-responses:o4-mini").label == "openai-responses:o4-mini"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert resolve_model(None).origin == "environment"
    scripted = ScriptedModel(["hi"])
    set_default_model(scripted)
    try:
        chosen = resolve_model(None)
        assert chosen is scripted and chosen.origin == "default"
        assert resolve_model("offline").origin == "explicit"
    finally:
        set_default_model(None)
    with pytest.raises(ConfigurationError, match="names no model"):
        resolve_model("openai:")
    with pytest.raises(ValueError, match="unknown model 'gpt-5'"):
        set_default_model("gpt-5")
