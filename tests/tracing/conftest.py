"""Tracing test helpers: a private SDK provider with the in-memory exporter, and the span tree."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from span_tree import Spans

from agentnb import tracing


@pytest.fixture
def provider() -> Iterator[tuple[TracerProvider, Spans]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, Spans(exporter)
    provider.shutdown()


@pytest.fixture(autouse=True)
def _not_instrumented(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no instrument() in force and no content switch from outside."""
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    tracing.uninstrument()
    yield
    tracing.uninstrument()
