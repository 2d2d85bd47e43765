"""A turn's spans through the SDK's in-memory exporter: tree, kinds, attributes, ids, content
switch, credentials, failures, and delegated runs nested under their delegate tool's span."""

from __future__ import annotations

import json
import threading
import warnings

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanProcessor
from opentelemetry.trace import SpanKind, StatusCode

from agentnb import Agent, DocumentContext, ScriptedModel, tool_call, tracing
from agentnb.errors import ConfigurationError
from agentnb.events import RunFinished, RunStarted, ToolCallFinished, ToolCallStarted
from agentnb.tracing import handoff, live
from agentnb.tracing.spans import span_id_of, trace_id_of


def audit(function_name, function_call, arguments, session_state):
    """A hook that passes and records what it saw in the state."""
    session_state.setdefault("audited", []).append(function_name)
    return function_call(**arguments)


def add_item(item: str, session_state: dict) -> str:
    """Put an item in the cart."""
    session_state["cart"].append(item)
    session_state["secret"] = "s3cr3t-value"
    return f"added {item}"


def boom(x: int) -> int:
    """Always fails."""
    raise ValueError("no such x")


def shop_agent(tracer_provider=None, **options) -> Agent:
    model = ScriptedModel(
        [[tool_call("add_item", item="milk"), tool_call("boom", x=1)], "Milk is in the cart."]
    )
    docs = DocumentContext(["Milk is on aisle 3.", "Bread is on aisle 1."], label="STORE")
    return Agent(
        "shop",
        model,
        tools=[add_item, boom],
        tool_hooks=[audit],
        session_state={"cart": [], "secret": ""},
        hide_state_keys=["secret"],
        context_providers=[docs],
        instructions="You keep the cart {cart}.",
        tracer_provider=tracer_provider,
        **options,
    )


def test_a_turn_with_context_tools_hooks_and_a_failing_tool_is_one_trace(provider):
    tp, spans = provider
    agent = shop_agent(tp)
    result = agent.run("add milk")
    run_id = result.run_id if hasattr(result, "run_id") else agent.history[-1].run_id

    assert spans.tree() == [
        (
            "invoke_agent shop",
            [
                ("retrieval STORE", []),
                ("chat scripted", []),
                ("execute_tool add_item", [("agentnb.hook audit", [])]),
                ("execute_tool boom", [("agentnb.hook audit", [])]),
                ("chat scripted", []),
            ],
        )
    ]
    root = spans.one("invoke_agent shop")
    assert {s.context.trace_id for s in spans.all} == {trace_id_of(run_id)}
    assert root.context.span_id == span_id_of(run_id, "run")
    assert root.kind == SpanKind.INTERNAL and root.status.status_code == StatusCode.UNSET
    a = root.attributes
    assert (a["gen_ai.operation.name"], a["gen_ai.agent.name"], a["gen_ai.provider.name"]) == (
        "invoke_agent",
        "shop",
        "agentnb.scripted",
    )
    assert a["openinference.span.kind"] == "AGENT"
    assert a["gen_ai.conversation.id"] == a["session.id"] == agent.session_id
    assert a["agentnb.run_id"] == run_id and a["agentnb.turn"] == 0
    assert (a["agentnb.model_calls"], a["agentnb.tool_calls"]) == (2, 2)
    # run totals never in gen_ai.usage.* on the root (backends sum them over the tree)
    assert not any(k.startswith("gen_ai.usage.") or k.startswith("llm.token_count") for k in a)
    assert a["agentnb.usage.estimated"] is True and a["agentnb.usage.input_tokens"] > 0
    sections = json.loads(a["agentnb.prompt.sections"])
    assert [s["source"] for s in sections] == ["instructions"] and "tokens" in sections[0]
    assert a["agentnb.prompt.hidden_keys"] == ("secret",)
    assert (
        a["agentnb.prompt.tokens.counter"]
        and a["agentnb.prompt.tokens.total"] >= a["agentnb.prompt.tokens.user"] > 0
    )

    chats = spans.named("chat scripted")
    assert [c.attributes["agentnb.call"] for c in chats] == [0, 1]
    first = chats[0].attributes
    assert (
        first["gen_ai.operation.name"],
        first["openinference.span.kind"],
        first["gen_ai.request.model"],
    ) == ("chat", "LLM", "scripted")
    assert first["gen_ai.response.finish_reasons"] == ("tool_call",)  # the conventions' value
    # a scripted model's counts are estimates: marked, and kept out of the provider's fields
    assert first["agentnb.usage.estimated"] is True and "gen_ai.usage.input_tokens" not in first
    assert chats[0].kind == SpanKind.INTERNAL

    retrieval = spans.one("retrieval STORE").attributes
    assert (retrieval["gen_ai.operation.name"], retrieval["openinference.span.kind"]) == (
        "retrieval",
        "RETRIEVER",
    )
    assert retrieval["gen_ai.data_source.id"] == "STORE" and retrieval["agentnb.context.via"] == "passive"
    assert (
        retrieval["agentnb.context.provider"] == "DocumentContext"
        and retrieval["agentnb.context.blocks"] >= 1
    )

    add, failed = spans.one("execute_tool add_item"), spans.one("execute_tool boom")
    t = add.attributes
    assert (t["gen_ai.tool.name"], t["gen_ai.tool.call.id"], t["gen_ai.tool.type"]) == (
        "add_item",
        "call_0_0",
        "function",
    )
    assert (
        t["openinference.span.kind"] == "TOOL" and t["gen_ai.tool.description"] == "Put an item in the cart."
    )
    assert add.context.span_id == span_id_of(run_id, "tool:call_0_0")
    # the tool's state change rides on its span, as RFC 6902 with its cause; hidden keys stay out
    patch = json.loads(t["agentnb.state.patch"])
    assert patch == [{"op": "add", "path": "/cart/0", "type": "string", "size": 4}]  # no value: content
    assert t["agentnb.state.cause.kind"] == "tool" and t["agentnb.state.cause.name"] == "add_item"
    assert "s3cr3t" not in spans.text()
    # the exception's message is content: without capture only its kind and type
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.status.description == "tool_error: ValueError"
    assert failed.attributes["error.type"] == "tool_error"

    hook = spans.children(add)[0]
    h = hook.attributes
    assert (h["agentnb.hook.name"], h["agentnb.hook.outcome"], h["openinference.span.kind"]) == (
        "audit",
        "passed",
        "CHAIN",
    )
    assert json.loads(h["agentnb.state.patch"])[0]["path"] == "/audited"
    assert h["agentnb.state.cause.kind"] == "hook"
    assert add.start_time <= hook.start_time <= hook.end_time <= add.end_time
    assert root.start_time <= spans.one("retrieval STORE").start_time and chats[-1].end_time <= root.end_time


def test_content_only_on_opt_in_and_keys_never(provider, monkeypatch):
    tp, spans = provider
    shop_agent(tp, model_options={"temperature": 0.2, "api_key": "sk-live-abcdefghijklmnop"}).run(
        "add milk, my key is sk-proj-zzzzzzzzzzzzzzzz"
    )
    text = spans.text()
    for content in ("add milk", "Milk is on aisle 3", "added milk", "You keep the cart"):
        assert content not in text
    assert not any(
        k in s.attributes
        for s in spans.all
        for k in ("input.value", "output.value", "gen_ai.input.messages", "gen_ai.tool.call.arguments")
    )
    assert spans.named("chat scripted")[0].attributes["gen_ai.request.temperature"] == 0.2
    assert "sk-live" not in text and "sk-proj" not in text
    spans.clear()

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    shop_agent(tp, model_options={"api_key": "sk-live-abcdefghijklmnop"}).run(
        "add milk, my key is sk-proj-zzzzzzzzzzzzzzzz"
    )
    text = spans.text()
    assert "sk-live" not in text and "sk-proj" not in text and "[redacted]" in text
    root = spans.one("invoke_agent shop").attributes
    assert root["input.value"].startswith("add milk") and root["output.value"] == "Milk is in the cart."
    assert json.loads(root["gen_ai.system_instructions"])[0]["content"].startswith("You keep the cart")
    chat = spans.named("chat scripted")[1].attributes
    messages = json.loads(chat["gen_ai.input.messages"])
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert messages[1]["parts"][0] == {
        "type": "tool_call",
        "id": "call_0_0",
        "name": "add_item",
        "arguments": {"item": "milk"},
    }
    assert (
        messages[2]["parts"][0]["type"] == "tool_call_response"
        and messages[2]["parts"][0]["response"] == "added milk"
    )
    assert chat["llm.input_messages.2.message.tool_calls.0.tool_call.function.name"] == "add_item"
    assert chat["llm.input_messages.0.message.role"] == "system"
    out = json.loads(spans.named("chat scripted")[0].attributes["gen_ai.output.messages"])
    assert out[0]["finish_reason"] == "tool_call" and [p["name"] for p in out[0]["parts"]] == [
        "add_item",
        "boom",
    ]
    tool = spans.one("execute_tool add_item").attributes
    assert (
        json.loads(tool["gen_ai.tool.call.arguments"]) == {"item": "milk"}
        and tool["gen_ai.tool.call.result"] == "added milk"
    )
    assert tool["input.value"] == tool["gen_ai.tool.call.arguments"] and tool["output.value"] == "added milk"
    assert (
        "Milk is on aisle 3."
        in spans.one("retrieval STORE").attributes["retrieval.documents.0.document.content"]
    )
    spans.clear()

    # capture_content= wins over the environment
    tracing.instrument(tp, capture_content=False)
    shop_agent().run("add milk")
    assert "input.value" not in spans.one("invoke_agent shop").attributes


def test_a_failed_run_ends_its_root_and_the_open_chat_span_in_error(provider):
    tp, spans = provider
    agent = Agent("short", ScriptedModel([tool_call("boom", x=1)]), tools=[boom], tracer_provider=tp)
    with pytest.raises(Exception, match="no reply left"):
        agent.run("go")
    assert agent.history[-1].status == "failed"
    root = spans.one("invoke_agent short")
    # without content the failure is its type (its one-line message may quote the model or a tool)
    assert root.status.status_code == StatusCode.ERROR
    assert root.status.description == "ScriptedModelExhaustedError" and "agentnb.error" not in root.attributes
    assert root.attributes["error.type"] == "ScriptedModelExhaustedError"
    chats = spans.named("chat scripted")
    assert [c.status.status_code for c in chats] == [StatusCode.UNSET, StatusCode.ERROR]
    assert chats[1].attributes["error.type"] == "ScriptedModelExhaustedError"
    assert all(root.start_time <= s.start_time <= s.end_time <= root.end_time for s in spans.all)


def test_instrument_traces_every_agent_and_never_sets_the_global_provider(provider):
    tp, spans = provider
    before = trace.get_tracer_provider()
    tracing.instrument(tp)
    assert tracing.is_instrumented()
    Agent("one", ScriptedModel(["a"])).run("hi")
    Agent("two", ScriptedModel(["b"])).run("hi")
    assert [s.name for s in spans.all if s.parent is None] == ["invoke_agent one", "invoke_agent two"]
    assert len({s.context.trace_id for s in spans.all}) == 2  # one trace per turn
    assert trace.get_tracer_provider() is before
    tracing.uninstrument()
    Agent("three", ScriptedModel(["c"])).run("hi")
    assert not spans.named("invoke_agent three")
    # instrument() with no provider uses the global one; unset (a proxy), nothing is traced
    tracing.instrument()
    Agent("four", ScriptedModel(["d"])).run("hi")
    assert not spans.named("invoke_agent four")


def test_an_agents_own_provider_wins_over_instrument(provider):
    tp, spans = provider
    other = TracerProvider()
    tracing.instrument(other)
    Agent("mine", ScriptedModel(["a"]), tracer_provider=tp).run("hi")
    assert spans.one("invoke_agent mine")


def test_untraced_turns_never_call_the_observer_and_a_provider_set_later_traces(provider):
    """``import agentnb`` loads no tracing, and until an agent has a provider (or instrument()
    runs) the core calls no observer; a provider given after construction traces."""
    import subprocess
    import sys

    code = (
        "import sys, agentnb; from agentnb.slots import agent_observers as O; "
        "agentnb.Agent('a', agentnb.ScriptedModel(['x'])).run('hi'); "
        "print(len(list(O)), 'agentnb.tracing' in sys.modules)"
    )
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "0 False"
    )
    tp, spans = provider
    agent = Agent("later", ScriptedModel(["a"]))
    agent.tracer_provider = tp
    agent.run("hi")
    assert spans.one("invoke_agent later")
    with pytest.raises(ConfigurationError, match="tracer_provider must be an OpenTelemetry TracerProvider"):
        agent.tracer_provider = "http://localhost:4318"


def test_a_wrong_provider_is_a_short_error():
    with pytest.raises(ConfigurationError, match="tracer_provider must be an OpenTelemetry TracerProvider"):
        tracing.instrument("http://localhost:4318")
    with pytest.raises(ConfigurationError, match=r"TracerProvider \(with get_tracer\), got str"):
        Agent("a", ScriptedModel(["x"]), tracer_provider="http://localhost:4318")


def test_real_openai_client_counts_are_the_providers_and_the_chat_span_is_a_client_span(provider):
    from agentnb import OpenAIChat
    from tests.openai_server import OpenAIServer, Reply

    tp, spans = provider
    with OpenAIServer(api_key="sk-test-not-a-real-key-123") as server:
        server.add(Reply(tool_calls=[("boom", {"x": 2})], usage=(30, 5)), Reply(text="done", usage=(40, 2)))
        model = OpenAIChat(
            "gpt-test", base_url=server.url, api_key="sk-test-not-a-real-key-123", stream=False, max_retries=0
        )
        Agent("net", model, tools=[boom], tracer_provider=tp, model_options={"temperature": 0}).run("go")
    chat = spans.named("chat gpt-test")
    assert [c.kind for c in chat] == [SpanKind.CLIENT, SpanKind.CLIENT]
    a = chat[0].attributes
    assert (a["gen_ai.provider.name"], a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (
        "openai",
        30,
        5,
    )
    assert a["llm.token_count.total"] == 35 and "agentnb.usage.estimated" not in a
    assert a["gen_ai.response.model"] and a["gen_ai.response.id"]
    root = spans.one("invoke_agent net").attributes
    assert root["agentnb.usage.input_tokens"] == 70 and "agentnb.usage.estimated" not in root
    assert "sk-test-not-a-real-key" not in spans.text()


class _Held(SpanProcessor):
    """A span processor whose flush waits until the test lets it go (a collector that hangs)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.flushes = 0

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        self.flushes += 1
        self.entered.set()
        self.release.wait(30)
        return True


def test_a_hanging_exporter_costs_the_turn_nothing_and_is_reported_once(provider, monkeypatch):
    tp, spans = provider
    held = _Held()
    tp.add_span_processor(held)
    monkeypatch.setattr(handoff, "SLOW_S", 0.0)
    agent = Agent("wait", ScriptedModel(["a", "b"]), tracer_provider=tp)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent.run("one")
        agent.run("two")  # returns while the first flush still hangs
        assert held.entered.wait(30) and not held.release.is_set()
        assert not tracing.flush(timeout=0.05)
        held.release.set()
        assert tracing.flush(timeout=30)
        assert len(spans.named("invoke_agent wait")) == 2
    reported = [w for w in caught if "agentnb.tracing" in str(w.message)]
    assert len(reported) == 1 and "collector reachable" in str(reported[0].message)
    assert held.flushes >= 1


def test_ids_are_derived_from_run_ids():
    assert trace_id_of("abc") == trace_id_of("abc") != trace_id_of("abd")
    assert span_id_of("abc", "run") != span_id_of("abc", "chat:0")
    assert 0 < span_id_of("abc", "run") < 2**64 and 0 < trace_id_of("abc") < 2**128


def _started(run_id: str, agent: str, **parent: object) -> RunStarted:
    """A RunStarted with the parent fields delegations add (parent_run_id, parent_tool_call_id,
    path); made by hand so the nesting is tested whether or not the core has them yet."""
    event = RunStarted(run_id=run_id, agent=agent, turn=0, message="m", model="scripted", at=1000.0)
    for name, value in parent.items():
        object.__setattr__(event, name, value)
    return event


class _Member:
    tracer_provider = None
    session_id = "team-session"
    recording = None

    def all_tools(self) -> list:
        return []


def test_a_delegated_run_nests_under_its_parents_delegate_tool_span(provider):
    tp, spans = provider

    class Lead(_Member):
        tracer_provider = tp

    lead, member = Lead(), _Member()
    call = dict(run_id="P", call=0, tool_call_id="call_d", name="ask_writer", arguments="{}")
    for agent, event in [
        (lead, _started("P", "lead")),
        (lead, ToolCallStarted(**call, at=1000.1)),
        (
            member,
            _started("C", "writer", parent_run_id="P", parent_tool_call_id="call_d", path=("lead", "writer")),
        ),
        (member, RunFinished(run_id="C", content="draft", duration_ms=50)),
        (lead, ToolCallFinished(**call, result="draft", duration_ms=80)),
        (lead, RunFinished(run_id="P", content="done", duration_ms=200)),
    ]:
        live.observe(agent, event)
    assert spans.tree() == [
        ("invoke_agent lead", [("execute_tool ask_writer", [("invoke_agent writer", [])])])
    ]
    child = spans.one("invoke_agent writer")
    assert child.context.trace_id == trace_id_of("P") and child.parent.span_id == span_id_of(
        "P", "tool:call_d"
    )
    assert (
        child.attributes["agentnb.parent_run_id"] == "P" and child.attributes["agentnb.path"] == "lead/writer"
    )
    # a member with no provider of its own is traced with its team
    assert child.attributes["gen_ai.conversation.id"] == "team-session"


@pytest.mark.parametrize(
    ("value", "captured"),
    [
        ("true", True),
        ("SPAN_ONLY", True),
        ("span_and_event", True),
        ("1", True),
        ("false", False),
        ("NO_CONTENT", False),
        ("EVENT_ONLY", False),
        ("", False),
    ],
)
def test_the_content_switch_reads_both_spellings_of_the_environment_variable(monkeypatch, value, captured):
    from agentnb.tracing.content import capture_from_env

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", value)
    assert capture_from_env() is captured


class _Slotted:
    """A provider that takes no weak reference (another implementation wrapping the SDK's)."""

    __slots__ = ("inner", "flushes")

    def __init__(self, inner) -> None:
        self.inner, self.flushes = inner, 0

    def get_tracer(self, *args, **kwargs):
        return self.inner.get_tracer(*args, **kwargs)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        self.flushes += 1
        return self.inner.force_flush(timeout_millis)


def test_a_provider_without_weak_references_is_traced_and_flushed(provider):
    tp, spans = provider
    slotted = _Slotted(tp)
    Agent("slots", ScriptedModel(["a"]), tracer_provider=slotted).run("hi")
    assert tracing.flush(timeout=30) and slotted.flushes == 1
    assert spans.one("invoke_agent slots").attributes["gen_ai.agent.name"] == "slots"


def test_a_member_run_whose_parent_is_not_traced_is_a_trace_of_its_own(provider):
    tp, spans = provider

    class Member(_Member):
        tracer_provider = tp

    for event in [
        _started(
            "C2", "writer", parent_run_id="untraced", parent_tool_call_id="call_x", path=("lead", "writer")
        ),
        RunFinished(run_id="C2", content="draft", duration_ms=5),
    ]:
        live.observe(Member(), event)
    child = spans.one("invoke_agent writer")
    assert child.parent is None and child.context.trace_id == trace_id_of("C2")
    assert child.attributes["agentnb.parent_run_id"] == "untraced"
