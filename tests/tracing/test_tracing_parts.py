"""Images and files on spans, over a real OTLP receiver: each part's type, media type, size and
hash on the run, chat and tool spans, never its bytes (content captured or not), and a call of
many images within the SDK's 128 attributes a span."""

from __future__ import annotations

import base64
import hashlib
import random

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otlp_receiver import OTLPReceiver

from agentnb import Agent, ScriptedModel, tool_call, tracing
from agentnb.messages import FilePart, ImagePart
from agentnb.messages.png import encode_png
from agentnb.tracing.parts import LISTED

_RANDOM = random.Random(39)
PHOTO = encode_png(bytes(_RANDOM.randrange(256) for _ in range(3 * 40 * 30)), 40, 30, 3)
CHART = encode_png(bytes(_RANDOM.randrange(256) for _ in range(3 * 20 * 20)), 20, 20, 3)
PDF = b"%PDF-1.4\n" + bytes(_RANDOM.randrange(256) for _ in range(600)) + b"\n%%EOF\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def plot() -> ImagePart:
    """Draw the chart."""
    return ImagePart(CHART, name="chart.png")


def traced(receiver: OTLPReceiver, monkeypatch: pytest.MonkeyPatch, content: bool) -> Agent:
    if content:
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.endpoint)))
    model = ScriptedModel([tool_call("plot"), "Both charts agree."])
    return Agent("charts", model, tools=[plot], tracer_provider=provider)


@pytest.mark.parametrize("content", [False, True])
def test_spans_carry_each_part_s_kind_type_size_and_hash_never_its_bytes(monkeypatch, content):
    with OTLPReceiver() as receiver:
        agent = traced(receiver, monkeypatch, content)
        agent.run(["Compare this photo and the report with your chart.", PHOTO, FilePart(PDF, name="r.pdf")])
        assert tracing.flush(timeout=30)
    spans = {s.name: s for s in receiver.spans}
    root, tool = spans["invoke_agent charts"], spans["execute_tool plot"]
    first, second = sorted((s for s in receiver.spans if s.name == "chat scripted"), key=lambda s: s.start)
    assert {k: v for k, v in root.attributes.items() if k.startswith("agentnb.parts.")} == {
        "agentnb.parts.count": 2,
        "agentnb.parts.bytes": len(PHOTO) + len(PDF),
        "agentnb.parts.types": ("image", "file"),
        "agentnb.parts.media_types": ("image/png", "application/pdf"),
        "agentnb.parts.sizes": (len(PHOTO), len(PDF)),
        "agentnb.parts.sha256": (sha(PHOTO), sha(PDF)),
    }
    assert first.attributes["agentnb.parts.sha256"] == (sha(PHOTO), sha(PDF))
    assert second.attributes["agentnb.parts.sha256"] == (sha(PHOTO), sha(PDF), sha(CHART))  # the tool's too
    assert tool.attributes["agentnb.parts.sha256"] == (sha(CHART),)
    assert tool.attributes["agentnb.parts.sizes"] == (len(CHART),)
    assert ("gen_ai.input.messages" in first.attributes) is content
    for body in receiver.bodies:
        for data in (PHOTO, CHART, PDF):
            assert data[40:80] not in body and base64.b64encode(data)[40:80] not in body


def test_a_call_of_many_images_lists_some_counts_all_and_stays_within_the_attribute_limit(monkeypatch):
    images = [encode_png(bytes([n]) * 12, 2, 2, 3) for n in range(60)]
    with OTLPReceiver() as receiver:
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.endpoint)))
        Agent("charts", ScriptedModel(["Sixty charts."]), tracer_provider=provider).run(["Look:", *images])
        assert tracing.flush(timeout=30)
    chat = next(s for s in receiver.spans if s.name == "chat scripted")
    assert chat.dropped_attributes == 0 and len(chat.attributes) < 128
    assert chat.attributes["agentnb.parts.count"] == 60
    assert chat.attributes["agentnb.parts.omitted"] == 60 - LISTED
    assert chat.attributes["agentnb.parts.sha256"] == tuple(sha(i) for i in images[:LISTED])
    assert chat.attributes["agentnb.parts.bytes"] == sum(len(i) for i in images)


def test_a_run_without_parts_carries_no_part_attributes(provider):
    tracer_provider, spans = provider
    Agent("plain", ScriptedModel(["ok"]), tracer_provider=tracer_provider).run("hello")
    tracing.flush(timeout=30)
    assert spans.all and not any(k.startswith("agentnb.parts.") for s in spans.all for k in s.attributes)
