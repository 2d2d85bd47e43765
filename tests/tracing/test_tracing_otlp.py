"""Spans over the wire: the SDK's OTLP/HTTP exporter posting protobuf to a real receiver on
127.0.0.1, and an unreachable collector."""

from __future__ import annotations

import json
import socket
import warnings

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan
from opentelemetry.proto.trace.v1.trace_pb2 import Status as PbStatus
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from otlp_receiver import OTLPReceiver

from agentnb import Agent, ScriptedModel, tool_call, tracing
from agentnb.tracing import handoff
from agentnb.tracing.spans import span_id_of, trace_id_of


def _provider(endpoint: str, **exporter: object) -> TracerProvider:
    provider = TracerProvider(
        resource=Resource.create({"service.name": "agentnb-test", "openinference.project.name": "wire"})
    )
    # a batch processor that would wait a minute: only the flush at the turn's end sends the spans
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, **exporter), schedule_delay_millis=60_000)
    )
    return provider


def lookup(city: str, session_state: dict) -> str:
    """Weather for a city."""
    session_state["last_city"] = city
    return f"sunny in {city}"


def test_a_turn_reaches_a_real_otlp_receiver_as_protobuf_when_it_ends():
    with OTLPReceiver() as receiver:
        provider = _provider(receiver.endpoint)
        agent = Agent(
            "weather",
            ScriptedModel([tool_call("lookup", city="Oslo"), "Sunny."]),
            tools=[lookup],
            tracer_provider=provider,
        )
        agent.run("weather in Oslo?")
        assert tracing.flush(timeout=30)
        run_id = agent.history[-1].run_id
        spans = {s.name: s for s in receiver.spans}
        assert sorted(s.name for s in receiver.spans) == [
            "chat scripted",
            "chat scripted",
            "execute_tool lookup",
            "invoke_agent weather",
        ]
        assert set(receiver.content_types) == {"application/x-protobuf"}
        root, tool = spans["invoke_agent weather"], spans["execute_tool lookup"]
        assert (
            root.trace_id == trace_id_of(run_id)
            and root.span_id == span_id_of(run_id, "run")
            and root.parent_span_id is None
        )
        assert tool.parent_span_id == root.span_id == spans["chat scripted"].parent_span_id
        assert root.kind == PbSpan.SPAN_KIND_INTERNAL and root.status_code == PbStatus.STATUS_CODE_UNSET
        assert root.resource["service.name"] == "agentnb-test" and root.scope == "agentnb"
        assert (
            root.attributes["gen_ai.operation.name"] == "invoke_agent"
            and root.attributes["openinference.span.kind"] == "AGENT"
        )
        chats = sorted((s for s in receiver.spans if s.name == "chat scripted"), key=lambda s: s.start)
        assert [c.attributes["gen_ai.response.finish_reasons"] for c in chats] == [("tool_call",), ("stop",)]
        assert [c.span_id for c in chats] == [span_id_of(run_id, "chat:0"), span_id_of(run_id, "chat:1")]
        # content is off: the state's values are not on the span, only what they are
        assert json.loads(tool.attributes["agentnb.state.patch"]) == [
            {"op": "add", "path": "/last_city", "type": "string", "size": 4}
        ]
        assert tool.attributes["agentnb.state.cause.kind"] == "tool"
        assert root.start <= tool.start <= tool.end <= root.end

        provider.shutdown()


def test_an_unreachable_collector_costs_turns_nothing_and_is_reported_once(monkeypatch):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(handoff, "SLOW_S", 0.5)
    provider = _provider(f"http://127.0.0.1:{port}/v1/traces", timeout=2)
    agent = Agent("offline", ScriptedModel(["one", "two", "three"]), tracer_provider=provider)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answers = [agent.run(m).content for m in ("a", "b", "c")]
        assert tracing.flush(timeout=60)
    assert answers == ["one", "two", "three"]
    assert [h.status for h in agent.history] == ["ok", "ok", "ok"]
    reported = [str(w.message) for w in caught if "agentnb.tracing" in str(w.message)]
    assert len(reported) == 1 and "Turns do not wait" in reported[0]
    provider.shutdown()
