"""A turn whose tool call carried hostile arguments — nested past the stack, an integer too
long to convert, nested past what the executor accepts — ends cleanly (a ``malformed_arguments``
result); everything that reads that turn afterwards must survive it too: the ``%%chat`` record
(text and HTML), the inspector's summaries, the DataFrames, a comparison and the traces.
Where the text cannot be parsed, it is shown raw and cut."""

from __future__ import annotations

import html
import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentnb import Agent, ScriptedModel, tool_call, tracing
from agentnb.history import render
from agentnb.ipython import compact_events, history_row
from agentnb.messages import MAX_ARGUMENT_DEPTH, parse_arguments

HOSTILE = {
    "list 10,000 deep": "[" * 10_000 + "]" * 10_000,
    "object 10,000 deep": '{"value":' * 10_000 + "1" + "}" * 10_000,
    "5,000-digit integer": '{"value": ' + "9" * 5_000 + "}",
    "past the executor's depth": '{"value": '
    + "[" * (MAX_ARGUMENT_DEPTH + 5)
    + "]" * (MAX_ARGUMENT_DEPTH + 5)
    + "}",
}


def echo(value=None):
    """Return the value."""
    return value


def hostile_turn(arguments: str) -> Agent:
    agent = Agent(
        "fuzz", model=ScriptedModel([tool_call("echo", raw_arguments=arguments), "done"]), tools=[echo]
    )
    agent.run("go")
    (call,) = agent.history[-1].tool_calls
    assert call.error_kind == "malformed_arguments" and agent.history[-1].status == "ok"
    return agent


@pytest.mark.parametrize("arguments", list(HOSTILE.values()), ids=list(HOSTILE))
def test_the_shared_parser_refuses_what_the_executor_refused(arguments):
    with pytest.raises(ValueError):
        parse_arguments(arguments)


@pytest.mark.parametrize("arguments", list(HOSTILE.values()), ids=list(HOSTILE))
def test_the_record_of_a_hostile_call_renders_with_the_raw_text_cut(arguments):
    turn = hostile_turn(arguments).history[-1]
    text, page = render.turn_text(turn), render.turn_html(turn)
    line = next(row for row in text.splitlines() if "echo(" in row)
    # the raw text, as a JSON string, cut at the record's value limit
    raw = json.dumps(arguments)
    shown = raw if len(raw) <= render.VALUE_LIMIT else raw[: render.VALUE_LIMIT - 1] + "…"
    assert f"echo({shown}) -> ✗ error [malformed_arguments]: " in line
    assert html.escape(shown) in page
    assert "done" in text and "done" in page


@pytest.mark.parametrize("arguments", list(HOSTILE.values()), ids=list(HOSTILE))
def test_summaries_frames_and_comparisons_of_a_hostile_call(arguments):
    agent = hostile_turn(arguments)
    turn = agent.history[-1]
    summary = history_row.turn_summary(turn)
    assert summary["status"] == "ok"
    events = [compact_events.compact_event(e) for e in turn.events]
    assert any(e.get("arguments") == arguments for e in events)
    assert agent.history.tool_calls()["arguments"].tolist() == [arguments]
    comparison = agent.compare(turn=1, other_turn=1)
    assert comparison.same and "echo" in comparison.text()


@pytest.mark.parametrize("arguments", list(HOSTILE.values()), ids=list(HOSTILE))
def test_traces_with_content_carry_a_hostile_call_as_written(arguments):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = hostile_turn(arguments)
    tracing.export(agent, provider, capture_content=True)
    spans = exporter.get_finished_spans()
    provider.shutdown()
    (answer,) = [
        s.attributes["gen_ai.output.messages"]
        for s in spans
        if "tool_call" in str((s.attributes or {}).get("gen_ai.output.messages", ""))
    ]
    # the arguments as the model wrote them, a string inside the JSON (cut there when too long)
    assert f'"arguments":{json.dumps(arguments)[:200]}' in answer


def test_the_chat_magics_record_shows_a_hostile_call(shell):
    from IPython.utils.capture import capture_output

    shell.user_ns["fuzz"] = Agent(
        "fuzz",
        model=ScriptedModel([tool_call("echo", raw_arguments=HOSTILE["list 10,000 deep"]), "done"]),
        tools=[echo],
    )
    with capture_output() as captured:
        shell.run_cell_magic("chat", "fuzz", "go")
    assert "Traceback" not in captured.stdout + captured.stderr
    (record,) = [o.data for o in captured.outputs if "tool calls (1):" in o.data.get("text/plain", "")]
    assert '1. echo("[[[[' in record["text/plain"] and "answer: done" in record["text/plain"]
    assert "[[[[" in record["text/html"]
