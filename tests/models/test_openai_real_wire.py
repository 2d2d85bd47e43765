"""What OpenAI's real API does that a plain scripted answer does not: an unknown model answered
with HTTP 400 ``model_not_found``, reasoning items between tool calls (sent back within the turn),
answers cut at the token limit. Each through the real ``openai`` client against the scripted
server of ``openai_server.py`` on 127.0.0.1, which answers with OpenAI's own shapes (the
reasoning items, ``output_tokens_details``, ``status: incomplete``) and rejects what OpenAI
rejects (a reasoning item it never gave out, or one sent back without its encrypted content
when responses are not stored)."""

from __future__ import annotations

import pytest
from openai_server import OpenAIServer, Reply
from test_openai_responses import lookup

from agentnb import Agent
from agentnb.errors import ModelConnectionError, ModelNotFoundError
from agentnb.history.render import CUT_MARK, turn_html, turn_text
from agentnb.models import OpenAIChat, OpenAIResponses
from agentnb.models.replay import ReplayModel
from agentnb.sessions import JSONSession


def responses(server: OpenAIServer, **options) -> OpenAIResponses:
    options.setdefault("max_retries", 0)
    return OpenAIResponses("gpt-5-mini", base_url=server.url, **options)


def chat(server: OpenAIServer, **options) -> OpenAIChat:
    options.setdefault("max_retries", 0)
    return OpenAIChat("gpt-5-mini", base_url=server.url, **options)


def types(body: dict) -> list[str]:
    return [item.get("type", "message") for item in body["input"]]


# -- an unknown model ------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [responses, chat], ids=["responses", "chat"])
def test_model_not_found_with_http_400_is_model_not_found_error(server, make):
    # OpenAI's Responses API answers an unknown model with 400, not 404; the body's code says it.
    server.add(
        Reply(status=400, error="The requested model 'gpt-5.2-proo' does not exist.", code="model_not_found")
    )
    agent = Agent("a", model=make(server))
    with pytest.raises(ModelNotFoundError) as caught:
        agent.run("hi")
    text = str(caught.value)
    assert "HTTP 400" in text and "gpt-5.2-proo' does not exist" in text
    assert text.endswith("check the model name and base_url")


def test_a_plain_http_400_is_not_model_not_found(server):
    server.add(Reply(status=400, error="Invalid value for 'temperature'.", code="invalid_value"))
    with pytest.raises(Exception) as caught:
        Agent("a", model=responses(server)).run("hi")
    assert not isinstance(caught.value, ModelNotFoundError)
    assert "HTTP 400" in str(caught.value)


# -- reasoning items between tool calls -------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_reasoning_items_go_back_with_the_function_calls_of_the_turn(server, stream):
    server.add(
        Reply(
            reasoning="The user wants Oslo's weather; call lookup.",
            tool_calls=[("lookup", {"city": "Oslo"})],
            usage=(30, 40),
            reasoning_tokens=32,
        ),
        Reply(reasoning="", text="Sunny in Oslo.", usage=(60, 12), reasoning_tokens=4),
    )
    agent = Agent("w", model=responses(server, stream=stream), tools=[lookup])
    result = agent.run("Weather in Oslo?")

    assert result.content == "Sunny in Oslo." and server.problems == []
    second = server.requests[1].body
    # The reasoning item comes back right before the function call it led to, as given out.
    assert types(second) == ["message", "reasoning", "function_call", "function_call_output"]
    item = second["input"][1]
    assert item["id"] == "rs_1"
    assert item["summary"] == [
        {"type": "summary_text", "text": "The user wants Oslo's weather; call lookup."}
    ]
    assert "include" not in second  # stored responses: the id is enough
    # The Request tab shows the payload as sent: reasoning included.
    assert agent.history[-1].model_calls[1].request["input"][1] == item
    # Reasoning tokens are counted, per call and for the turn.
    assert agent.history[-1].model_calls[0].response.usage.reasoning_tokens == 32
    assert result.usage.reasoning_tokens == 36 and result.usage.output_tokens == 52
    # The inspector is sent the count with the turn's usage (its token tooltip names it).
    from agentnb.ipython.compact_events import compact_usage
    from agentnb.ipython.history_row import turn_summary

    assert turn_summary(agent.history[-1])["usage"] == {
        "input": 90,
        "output": 52,
        "estimated": False,
        "reasoning": 36,
    }
    assert "reasoning" not in compact_usage(agent.history[-1].model_calls[0].response.usage.__class__())


@pytest.mark.parametrize("stream", [True, False])
def test_without_storage_reasoning_comes_back_encrypted(server, stream):
    server.add(
        Reply(
            reasoning="Two cities: two lookups.",
            tool_calls=[("lookup", {"city": "Oslo"}), ("lookup", {"city": "Rome"})],
        ),
        Reply(reasoning="Now Rome again.", tool_calls=[("lookup", {"city": "Rome"})]),
        Reply(text="Sunny in both."),
    )
    agent = Agent(
        "w", model=responses(server, stream=stream, request_options={"store": False}), tools=[lookup]
    )
    result = agent.run("Weather in Oslo and Rome?")

    assert result.content == "Sunny in both."
    assert server.problems == []  # the server checks each item's encrypted content
    for request in server.requests:
        assert request.body["store"] is False and request.body["include"] == ["reasoning.encrypted_content"]
    third = server.requests[2].body["input"]
    reasoning = [item for item in third if item.get("type") == "reasoning"]
    assert [item["id"] for item in reasoning] == ["rs_1", "rs_2"]
    assert all(item["encrypted_content"] == server.reasoning[item["id"]] for item in reasoning)
    assert types(server.requests[2].body) == [
        "message",
        "reasoning",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
        "reasoning",
        "function_call",
        "function_call_output",
    ]


def test_a_users_own_include_is_kept_beside_the_reasoning(server):
    server.add(Reply(text="hi"))
    options = {"store": False, "include": ["message.output_text.logprobs"]}
    Agent("w", model=responses(server, request_options=options)).run("hi")
    assert server.requests[0].body["include"] == [
        "message.output_text.logprobs",
        "reasoning.encrypted_content",
    ]


def test_reasoning_stays_within_its_turn(server):
    server.add(
        Reply(reasoning="Look it up.", tool_calls=[("lookup", {"city": "Oslo"})]),
        Reply(text="Sunny in Oslo."),
        Reply(text="You are welcome."),
    )
    agent = Agent("w", model=responses(server), tools=[lookup], add_history_to_context=True)
    agent.run("Weather in Oslo?")
    agent.run("Thanks!")
    assert server.problems == []
    assert "reasoning" not in types(server.requests[2].body)
    assert "function_call" in types(
        server.requests[2].body
    )  # the earlier turn is there, without its reasoning


def test_a_reasoning_turn_replays_without_drift_and_reloads(server, tmp_path):
    server.add(
        Reply(reasoning="Look it up.", tool_calls=[("lookup", {"city": "Oslo"})], reasoning_tokens=7),
        Reply(text="Sunny in Oslo."),
    )
    agent = Agent(
        "w",
        model=responses(server, request_options={"store": False}),
        tools=[lookup],
        session=JSONSession(tmp_path),
    )
    agent.run("Weather in Oslo?")
    # Offline, from the record: the rebuilt request (reasoning included) matches the recorded one.
    replayed = Agent("w", model=ReplayModel.from_history(agent.history), tools=[lookup])
    assert replayed.run("Weather in Oslo?").content == "Sunny in Oslo."
    restored = Agent("w", model=responses(server), tools=[lookup], session=JSONSession(tmp_path))
    assert restored.history[-1].usage.reasoning_tokens == 7


def test_chat_completions_reasoning_tokens_are_counted(server):
    from agentnb.models.openai_chat import chat_response

    raw = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": 5,
            "completion_tokens": 20,
            "completion_tokens_details": {"reasoning_tokens": 16},
        },
    }
    assert chat_response(raw).usage.reasoning_tokens == 16


# -- an answer cut at the token limit ----------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("make", [responses, chat], ids=["responses", "chat"])
def test_an_answer_cut_at_the_token_limit_says_so(server, tmp_path, make, stream):
    server.add(Reply(text="The three reasons are: first, the", finish="length"))
    agent = Agent("a", model=make(server, stream=stream, max_tokens=8), session=JSONSession(tmp_path))
    result = agent.run("Give three reasons.")

    assert result.content == "The three reasons are: first, the"
    assert result.finish_reason == "length" and result.truncated
    assert agent.history[-1].finish_reason == "length" and agent.history[-1].truncated
    assert f"({CUT_MARK})" in turn_text(agent.history[-1])
    assert CUT_MARK in turn_html(agent.history[-1]) and CUT_MARK in result._repr_html_()
    # The record says so after the session is loaded again.
    restored = Agent("a", model=make(server), session=JSONSession(tmp_path))
    assert restored.history[-1].truncated and CUT_MARK in turn_html(restored.history[-1])


@pytest.mark.parametrize("make", [responses, chat], ids=["responses", "chat"])
def test_a_whole_answer_is_not_marked(server, make):
    server.add(Reply(text="Done."))
    result = Agent("a", model=make(server)).run("hi")
    assert result.finish_reason == "stop" and not result.truncated
    assert CUT_MARK not in turn_html(result.turn) and CUT_MARK not in turn_text(result.turn)


# -- connections ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [responses, chat], ids=["responses", "chat"])
def test_whole_answers_keep_their_connection_for_the_next_call(server, make):
    """A JSON answer read to its end leaves its connection in the client's pool: three turns (one
    with a tool call) go over one connection, not one TCP (and TLS) handshake per model call."""
    server.add(
        Reply(tool_calls=[("lookup", {"city": "Oslo"})]),
        Reply(text="sunny"),
        Reply(text="a"),
        Reply(text="b"),
    )
    agent = Agent("w", model=make(server, stream=False), tools=[lookup])
    for message in ("weather in Oslo?", "and then?", "and now?"):
        agent.run(message)
    assert len(server.requests) == 4
    assert len({r.peer for r in server.requests}) == 1


@pytest.mark.parametrize("make", [responses, chat], ids=["responses", "chat"])
def test_a_deadline_drops_the_connection_it_gave_up_on(server, make):
    """An answer given up at the deadline does not leave its half-read connection for the next call."""
    server.add(Reply(text="late", delay=1.5), Reply(text="on time"))
    agent = Agent("w", model=make(server, stream=False, timeout=0.5))
    with pytest.raises(ModelConnectionError, match="did not answer within 0.5 s"):
        agent.run("first")
    assert agent.run("second").content == "on time"
    assert server.requests[0].peer != server.requests[1].peer


def _answer_in_child(url: str, out) -> None:
    model = OpenAIChat("gpt-5-mini", base_url=url, max_retries=0, stream=False, timeout=20)
    out.put(Agent("child", model=model).run("from the child").content)


def test_a_forked_child_reads_its_own_answers(server):
    """A process forked after model calls (a process pool's worker) starts without the parent's
    idle reader threads, and its own calls are read."""
    import multiprocessing

    server.add(Reply(text="parent"), Reply(text="child"))
    assert (
        Agent("p", model=chat(server, stream=False)).run("first").content == "parent"
    )  # leaves an idle reader
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_answer_in_child, args=(server.url, out))
    child.start()
    try:
        assert out.get(timeout=30) == "child"
    finally:
        child.join(10)
        if child.is_alive():
            child.kill()


@pytest.mark.parametrize("make", [responses, chat], ids=["responses", "chat"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_request_options_reach_the_server_as_the_sdk_sends_them(server, make, stream):
    """The body goes out as it is recorded; ``extra_headers`` / ``extra_query`` / ``extra_body``
    / ``timeout`` are the client's request options (a header, the query string, body fields, the
    time limit), never body fields of their own — as ``create(**body)`` sends them."""
    import openai

    server.add(Reply(text="one"), Reply(text="two"))
    options = {
        "extra_headers": {"X-Trace": "t-1"},
        "extra_query": {"api-version": "7"},
        "extra_body": {"seed": 11},
        "timeout": 30,
        "metadata": {"k": "v"},
    }
    agent = Agent("o", model=make(server, stream=stream, request_options=options))
    assert agent.run("hi").content == "one"
    ours = server.requests[-1]
    assert ours.headers["x-trace"] == "t-1" and ours.path.endswith("?api-version=7")
    assert ours.body["seed"] == 11 and ours.body["metadata"] == {"k": "v"}
    assert not {"extra_headers", "extra_query", "extra_body", "timeout"} & set(ours.body)
    assert ours.headers["authorization"] == "Bearer not-needed"
    assert "x-stainless-raw-response" in ours.headers

    # The SDK's own create() with the request as recorded sends the same.
    from agentnb.events import ModelRequested

    recorded = next(e.request for e in agent.history[-1].events if isinstance(e, ModelRequested))
    client = openai.OpenAI(base_url=server.url, api_key="not-needed", max_retries=0)
    api = client.responses if make is responses else client.chat.completions
    with api.with_streaming_response.create(**recorded) as answer:  # the record keeps create()'s keywords
        answer.read()
    theirs = server.requests[-1]
    assert theirs.body == ours.body and theirs.path == ours.path and theirs.headers["x-trace"] == "t-1"
