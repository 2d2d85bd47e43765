"""Typed output while it streams: the real ``openai`` client against a loopback server, Chat
Completions and the Responses API. ``iter_run`` yields ``OutputDelta`` events in order, each
extending the one before, the last the whole answer equal to ``result.output``; in native mode
(the text) and in tool mode (the output tool's arguments), through a retry and beside another
tool; none for a run without a structured output type."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from openai_server import Reply
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).parents[1] / "reliability"))
from hostile_server import HostileServer, chunk, events, responses_object  # noqa: E402

from agentnb import Agent  # noqa: E402
from agentnb.events import OutputDelta, TextDelta, ToolCallFinished  # noqa: E402
from agentnb.models import OpenAIChat, OpenAIResponses  # noqa: E402
from agentnb.models.base import ArgumentsDelta, ModelRequest  # noqa: E402


class Line(BaseModel):
    sku: str
    qty: int


class Invoice(BaseModel):
    vendor: str
    total: float
    lines: list[Line]


INVOICE = {
    "vendor": "ACME GmbH",
    "total": 1250.75,
    "lines": [{"sku": "A-1", "qty": 12}, {"sku": "B-22", "qty": 3}],
}


def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: ACME GmbH"


MODELS = {
    "chat": lambda server, **kw: OpenAIChat("gpt-test", base_url=server.url, max_retries=0, **kw),
    "responses": lambda server, **kw: OpenAIResponses("gpt-test", base_url=server.url, max_retries=0, **kw),
}


def extends(before: Any, after: Any) -> bool:
    """Whether ``after`` is ``before`` with more arrived: strings longer, lists and objects with
    more items (each earlier one extended), anything else the same."""
    if isinstance(before, dict):
        return isinstance(after, dict) and all(k in after and extends(v, after[k]) for k, v in before.items())
    if isinstance(before, list):
        return (
            isinstance(after, list)
            and len(before) <= len(after)
            and all(extends(b, a) for b, a in zip(before, after))
        )
    if isinstance(before, str):
        return isinstance(after, str) and after.startswith(before)
    return before == after


def deltas_of(events: list[Any], call: int | None = None) -> list[OutputDelta]:
    return [e for e in events if isinstance(e, OutputDelta) and (call is None or e.call == call)]


def assert_streamed(deltas: list[OutputDelta], whole: Any) -> None:
    """Several deltas, each extending the one before, only the last one complete (the whole answer)."""
    assert len(deltas) >= 4, [d.data for d in deltas]
    for before, after in zip(deltas, deltas[1:]):
        assert extends(before.data, after.data), (before.data, after.data)
    assert [d.complete for d in deltas] == [False] * (len(deltas) - 1) + [True]
    assert deltas[-1].data == whole
    # Until its required fields are all there, the output is the raw data.
    assert not [d for d in deltas if d.validated and isinstance(whole, dict) and set(d.data) != set(whole)]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_native_answers_stream_as_output_deltas_ending_with_the_output(server, api):
    server.add(Reply(text=json.dumps(INVOICE), pieces=12))
    agent = Agent("x", MODELS[api](server), output_type=Invoice, output_mode="native")
    events = list(agent.iter_run("extract the invoice"))
    deltas = deltas_of(events)
    assert_streamed(deltas, INVOICE)
    turn = agent.history[-1]
    assert deltas[-1].validated and deltas[-1].output == turn.output == Invoice(**INVOICE)
    assert {(d.mode, d.output_type, d.tool, d.call) for d in deltas} == {("native", "Invoice", None, 0)}
    # Partial vendors and SKUs show as they arrive; a number waits until it is whole.
    seen = [d.data for d in deltas]
    assert any(0 < len(d.get("vendor", "")) < len("ACME GmbH") for d in seen)
    assert all(d.get("total") in (None, 1250.75) for d in seen)
    assert all(line.get("qty") in (None, 12, 3) for d in seen for line in d.get("lines", []))
    # Each delta comes right after the text that made it, and none is kept in the record.
    text = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(t.text for t in text) == json.dumps(INVOICE)
    assert events.index(deltas[0]) > events.index(text[0])
    assert not [e for e in turn.events if isinstance(e, OutputDelta)]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_tool_mode_streams_the_output_tools_arguments_beside_another_tool_and_through_a_retry(server, api):
    bad = {**INVOICE, "total": "lots"}
    server.add(
        Reply(tool_calls=[("lookup", {"order": "A-1"})]),
        Reply(tool_calls=[("final_result", bad)], pieces=10),
        Reply(tool_calls=[("final_result", INVOICE)], pieces=10),
    )
    agent = Agent("x", MODELS[api](server), tools=[lookup], output_type=Invoice, output_mode="tool")
    events = list(agent.iter_run("extract the invoice of order A-1"))
    result = agent.history[-1]
    assert result.status == "ok" and result.output == Invoice(**INVOICE)
    assert deltas_of(events, 0) == []  # the other tool's arguments are not the output
    first, second = deltas_of(events, 1), deltas_of(events, 2)
    assert_streamed(first, bad)
    assert_streamed(second, INVOICE)
    assert not first[-1].validated and first[-1].output == bad  # it does not validate: the raw data
    assert second[-1].validated and second[-1].output == result.output
    assert {d.tool for d in first + second} == {"final_result"}
    # The refused answer's deltas all come before its check, the retry's after it.
    refused = next(
        e for e in events if isinstance(e, ToolCallFinished) and e.name == "final_result" and e.error
    )
    assert events.index(first[-1]) < events.index(refused) < events.index(second[0])
    assert server.problems == []


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_list_output_validates_item_by_item_as_it_streams(server, api):
    lines = [{"sku": f"S-{n}", "qty": n} for n in range(1, 5)]
    server.add(Reply(text=json.dumps({"response": lines}), pieces=20))
    agent = Agent("x", MODELS[api](server), output_type=list[Line], output_mode="native")
    deltas = deltas_of(list(agent.iter_run("the lines")))
    assert_streamed(deltas, lines)  # the {"response": ...} envelope is taken off
    validated = [d.output for d in deltas if d.validated]
    counts = [len(v) for v in validated]
    assert counts == sorted(counts) and counts[-1] == 4 and len(set(counts)) >= 3
    assert all(isinstance(item, Line) for v in validated for item in v)  # the half-arrived item left out
    assert deltas[-1].output == agent.history[-1].output == [Line(**line) for line in lines]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_no_output_deltas_without_a_structured_output_type(server, api):
    server.add(
        Reply(tool_calls=[("lookup", {"order": "A-1"})], pieces=6),
        Reply(text='{"vendor": "ACME"}', pieces=6),
        Reply(text='{"vendor": "ACME"}', pieces=6),
    )
    plain = Agent("plain", MODELS[api](server), tools=[lookup])
    assert deltas_of(list(plain.iter_run("hi"))) == []
    text = Agent("text", MODELS[api](server), output_type=str, output_validators=[lambda s: s])
    assert deltas_of(list(text.iter_run("hi"))) == []
    assert server.problems == []


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_an_answer_that_is_no_json_gives_no_deltas_and_is_retried(server, api):
    server.add(Reply(text="Sure! The vendor is ACME.", pieces=6), Reply(text=json.dumps(INVOICE), pieces=6))
    agent = Agent("x", MODELS[api](server), output_type=Invoice, output_mode="native")
    events = list(agent.iter_run("extract"))
    assert deltas_of(events, 0) == []
    assert deltas_of(events, 1)[-1].output == agent.history[-1].output == Invoice(**INVOICE)


def test_an_echoed_key_never_shows_in_the_streamed_arguments(server):
    key = "sk-test-0123456789abcdef"
    server.add(Reply(tool_calls=[("final_result", {**INVOICE, "vendor": f"ACME {key} GmbH"})], pieces=15))
    model = OpenAIChat("gpt-test", base_url=server.url, api_key=key, max_retries=0)
    agent = Agent("x", model, output_type=Invoice, output_mode="tool")
    deltas = deltas_of(list(agent.iter_run("extract")))
    assert len(deltas) >= 4
    assert not [d for d in deltas if "sk-test" in json.dumps(d.data)]  # not even the start of it
    assert deltas[-1].data["vendor"] == "ACME [redacted] GmbH"


def streamed(model: Any, watched: frozenset[str]) -> list[Any]:
    request = ModelRequest(
        messages=[{"role": "user", "content": "go"}],
        tools=[{"type": "function", "function": {"name": "final_result", "parameters": {"type": "object"}}}],
        stream_arguments=watched,
    )
    return list(model.stream(request))


def test_a_chat_stream_breaking_the_protocol_gives_deltas_only_for_the_calls_that_can_run():
    answer = events(
        chunk({"tool_calls": [{"index": "zero", "id": "c0", "function": {"name": "final_result"}}]}),
        chunk({"tool_calls": [{"index": "zero", "function": {"arguments": '{"a": 1}'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "c1", "function": {"name": ["final_result"]}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"b": 2}'}}]}),
        chunk(
            {"tool_calls": [{"index": 2, "id": "c2", "function": {"name": "final_result", "arguments": ""}}]}
        ),
        chunk({"tool_calls": [{"index": 2, "function": None}]}),
        chunk({"tool_calls": [{"index": 2, "function": {"arguments": {"vendor": "ACME"}}}]}),  # an object
        chunk({}, "tool_calls"),
    )
    with HostileServer(answer) as server:
        model = OpenAIChat("m", base_url=server.url, api_key="k", max_retries=0)
        items = streamed(model, frozenset({"final_result"}))
        plain = streamed(model, frozenset())
    deltas = [i for i in items if isinstance(i, ArgumentsDelta)]
    assert deltas == [ArgumentsDelta(2, "final_result", '{"vendor": "ACME"}')]
    assert len(items[-1].tool_calls) == 3  # the broken calls are kept, each with its problem
    assert not [i for i in plain if isinstance(i, ArgumentsDelta)]  # not asked for: none


def test_a_responses_stream_breaking_the_protocol_gives_deltas_only_for_the_calls_that_can_run():
    done = responses_object(
        [{"type": "function_call", "call_id": "c2", "name": "final_result", "arguments": '{"v": 1}'}]
    )
    added = "response.output_item.added"
    delta = "response.function_call_arguments.delta"
    answer = events(
        {"type": added, "output_index": "0", "item": {"type": "function_call", "name": "final_result"}},
        {"type": delta, "output_index": [0], "delta": '{"a"'},  # not a number: never a key
        {"type": added, "output_index": 1, "item": {"type": "function_call", "name": {"n": 1}}},
        {"type": delta, "output_index": 1, "delta": '{"b": 2}'},
        {"type": added, "output_index": 2, "item": {"type": "function_call", "name": "final_result"}},
        {"type": delta, "output_index": 2, "delta": 7},  # not text
        {"type": delta, "output_index": 2, "delta": '{"v": 1}'},
        {"type": "response.completed", "response": done},
        done=False,
    )
    with HostileServer(answer) as server:
        model = OpenAIResponses("m", base_url=server.url, api_key="k", max_retries=0)
        items = streamed(model, frozenset({"final_result"}))
    assert [i for i in items if isinstance(i, ArgumentsDelta)] == [
        ArgumentsDelta(1, "final_result", '{"v": 1}')
    ]
    assert items[-1].tool_calls[0].arguments == '{"v": 1}'
