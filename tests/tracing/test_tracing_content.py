"""What may leave in a span: without content (the default) no state value and no error message;
with content, no credential of the model's (whatever its shape); and never an unbounded value."""

from __future__ import annotations

import json

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import StatusCode
from otlp_receiver import OTLPReceiver

from agentnb import Agent, OpenAIChat, ScriptedModel, tool_call, tracing
from tests.openai_server import OpenAIServer, Reply

SSN = "078-05-1120"
PASSWORD = "hunter2-correct-horse"


def remember(note: str, session_state: dict) -> str:
    """Keep a note in the state."""
    session_state["note"] = note
    return "kept"


def login(user: str) -> str:
    """Log a user in."""
    raise PermissionError(f"login failed for {user} with password {PASSWORD}")


def wipe(confirm: bool) -> str:
    """Wipe everything."""
    return "wiped"


def guard(function_name, function_call, arguments):
    """Refuses wipe, quoting the user's secret note (a hook's message is content too)."""
    if function_name == "wipe":
        raise ValueError(f"refused: the note says {SSN}")
    return function_call(**arguments)


def _private_turn(provider) -> Agent:
    model = ScriptedModel(
        [
            [
                tool_call("remember", note=f"my SSN is {SSN}"),
                tool_call("login", user="bob"),
                tool_call("wipe", confirm=True),
            ],
            "Done.",
        ]
    )
    agent = Agent(
        "private", model, tools=[remember, login, wipe], tool_hooks=[guard], tracer_provider=provider
    )
    agent.run("keep my note, log bob in, wipe")
    return agent


def test_without_content_state_values_and_error_messages_stay_home(provider):
    tp, spans = provider
    _private_turn(tp)
    text = spans.text()  # every attribute and status description
    for private in (SSN, PASSWORD, "login failed for bob", "refused: the note says"):
        assert private not in text
    remembered = spans.one("execute_tool remember").attributes
    # the operation, its path, the value's type and size: what changed, not what it says
    assert json.loads(remembered["agentnb.state.patch"]) == [
        {"op": "add", "path": "/note", "type": "string", "size": len(f"my SSN is {SSN}")}
    ]
    failed = spans.one("execute_tool login")
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.status.description == "tool_error: PermissionError"
    assert failed.attributes["error.type"] == "tool_error"
    hook = spans.children(spans.one("execute_tool wipe"))[0]
    assert hook.status.status_code == StatusCode.ERROR and hook.status.description == "hook_error: ValueError"
    assert hook.attributes["agentnb.hook.error"] == "ValueError"
    spans.clear()

    tracing.instrument(tp, capture_content=True)  # asked for: the same turn with its content
    _private_turn(None)
    remembered = spans.one("execute_tool remember").attributes
    assert json.loads(remembered["agentnb.state.patch"])[0]["value"] == f"my SSN is {SSN}"
    assert PASSWORD in spans.one("execute_tool login").status.description


PLAIN_KEY = "plainkey-0123456789abcdefXYZ"  # not sk-… shaped: no pattern can know it


def read_config() -> str:
    """The service's configuration (which, carelessly, includes the key)."""
    return f"endpoint=local key={PLAIN_KEY}"


def test_with_content_the_models_own_key_never_leaves_whatever_its_shape(provider):
    tp, spans = provider
    tracing.instrument(tp, capture_content=True)
    with OpenAIServer(api_key=PLAIN_KEY) as server:
        server.add(Reply(tool_calls=[("read_config", {})]), Reply(text=f"Your key is {PLAIN_KEY}."))
        model = OpenAIChat("gpt-test", base_url=server.url, api_key=PLAIN_KEY, stream=False, max_retries=0)
        Agent("config", model, tools=[read_config]).run("what is the configuration?")
    text = spans.text()
    assert PLAIN_KEY not in text
    tool = spans.one("execute_tool read_config").attributes
    assert tool["gen_ai.tool.call.result"] == "endpoint=local key=[redacted]" == tool["output.value"]
    assert spans.one("invoke_agent config").attributes["output.value"] == "Your key is [redacted]."


BIG = 5_000_000


def big_result() -> str:
    """Five megabytes of text."""
    return "x" * BIG


def hoard(session_state: dict) -> str:
    """Puts five megabytes in the state."""
    session_state["blob"] = "y" * BIG
    return "stored"


def _sizes(attributes) -> list[int]:
    return [len(v.encode()) if isinstance(v, str) else 8 for v in attributes.values()]


def test_huge_values_are_cut_and_marked_and_a_turns_batch_stays_under_the_collectors_limit():
    with OTLPReceiver() as receiver:
        provider = TracerProvider()
        provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=receiver.endpoint), schedule_delay_millis=60_000)
        )
        tracing.instrument(provider, capture_content=True)
        model = ScriptedModel([[tool_call("big_result"), tool_call("hoard")], "Done."])
        Agent("huge", model, tools=[big_result, hoard]).run("go")
        assert tracing.flush(timeout=60)
        provider.shutdown()
    assert max(receiver.sizes) < 4 * 1024 * 1024  # the collector's default receive limit
    from agentnb.tracing.bounds import MAX_SPAN_BYTES, MAX_VALUE_BYTES

    for span in receiver.spans:
        assert sum(_sizes(span.attributes)) <= MAX_SPAN_BYTES + 1024  # + the truncated list itself
        assert max(_sizes(span.attributes)) <= MAX_VALUE_BYTES
    spans = {s.name: s for s in receiver.spans}
    tool = spans["execute_tool big_result"].attributes
    assert set(tool["agentnb.truncated"]) == {"gen_ai.tool.call.result", "output.value"}
    assert tool["gen_ai.tool.call.result"].startswith("xxxx")
    assert tool["gen_ai.tool.call.result"].endswith("…[truncated from 5,000,000 bytes]")
    stored = spans["execute_tool hoard"].attributes
    assert "agentnb.state.patch" in stored["agentnb.truncated"]
    assert stored["agentnb.state.patch"].endswith("bytes]")
    chats = [s for s in receiver.spans if s.name == "chat scripted"]
    assert any("gen_ai.input.messages" in c.attributes.get("agentnb.truncated", ()) for c in chats)


def test_a_huge_state_value_without_content_is_its_type_and_size(provider):
    tp, spans = provider
    Agent("hoarder", ScriptedModel([tool_call("hoard"), "ok"]), tools=[hoard], tracer_provider=tp).run("go")
    stored = spans.one("execute_tool hoard").attributes
    assert json.loads(stored["agentnb.state.patch"]) == [
        {"op": "add", "path": "/blob", "type": "string", "size": BIG}
    ]
    assert "agentnb.truncated" not in stored


def test_a_credential_where_a_value_is_cut_leaves_no_piece_of_itself():
    from agentnb.models.credentials import Redactor
    from agentnb.tracing.bounds import MAX_VALUE_BYTES, finish

    for at in (MAX_VALUE_BYTES - 12, MAX_VALUE_BYTES + 4090):  # across the cut, across the first shortening
        value = "a" * at + PLAIN_KEY + "b" * 100_000
        out = finish({"text": value}, Redactor([PLAIN_KEY]))
        assert PLAIN_KEY[:8] not in out["text"] and out["agentnb.truncated"] == ("text",)
        assert out["text"].endswith(f"…[truncated from {len(value):,} bytes]")
        assert len(out["text"].encode()) <= MAX_VALUE_BYTES
