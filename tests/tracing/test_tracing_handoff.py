"""Turns never wait for the exporter, whatever span processor the user configured: a turn queues
its spans and a worker thread per provider writes them (the user's processors run there) in the
order the turns ended; at exit the queue gets a bounded wait, and what is dropped is said once.
The exporters here are deliberately slow: every assertion is about what had happened when a turn
returned, never about how long anything took."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from otlp_receiver import OTLPReceiver

from agentnb import Agent, ScriptedModel, tool_call, tracing
from agentnb.tracing.spans import span_id_of, trace_id_of


def lookup(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


class SlowExporter(SpanExporter):
    """An exporter whose every export takes up to 10 s unless released (a slow collector); it
    keeps the spans of each export once that export has finished."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.finished: list[ReadableSpan] = []
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.started.set()
        self.release.wait(10)
        with self._lock:
            self.finished.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.release.set()


def _agent(provider: TracerProvider) -> Agent:
    model = ScriptedModel([tool_call("lookup", city="Oslo"), "Sunny.", "Still sunny."])
    return Agent("slow", model, tools=[lookup], tracer_provider=provider)


def test_a_slow_exporter_behind_a_simple_span_processor_holds_no_turn_and_gets_every_span_in_order():
    exporter = SlowExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))  # as notebooks/09_tracing.ipynb does
    agent = _agent(provider)
    agent.run("weather in Oslo?")
    after_first = len(exporter.finished)
    agent.run("and now?")
    after_second = len(exporter.finished)
    # the exporter had finished nothing when either turn returned: no turn waited for it
    assert (after_first, after_second) == (0, 0)
    assert exporter.started.wait(30)  # meanwhile the worker is exporting the first turn's spans
    exporter.release.set()
    assert tracing.flush(timeout=60)
    first, second = (t.run_id for t in agent.history)
    spans = exporter.finished
    # in the order the turns ended: the first turn's four spans, its root last, then the second's
    assert [s.context.trace_id for s in spans] == [trace_id_of(first)] * 4 + [trace_id_of(second)] * 2
    assert [s.name for s in spans[:4]][-1] == "invoke_agent slow" and spans[-1].name == "invoke_agent slow"
    assert sorted(s.name for s in spans[:3]) == ["chat scripted", "chat scripted", "execute_tool lookup"]
    assert {s.parent.span_id for s in spans[:3]} == {span_id_of(first, "run")}
    assert spans[4].parent.span_id == span_id_of(second, "run") and spans[5].parent is None
    provider.shutdown()


def test_a_slow_otlp_collector_holds_no_turn_and_receives_every_span_after_a_flush():
    hold = threading.Event()
    with OTLPReceiver(hold=hold) as receiver:
        provider = TracerProvider()
        provider.add_span_processor(
            SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.endpoint, timeout=30))
        )
        agent = _agent(provider)
        agent.run("weather in Oslo?")
        answered_when_the_turn_returned = receiver.requests
        assert answered_when_the_turn_returned == 0
        assert receiver.arrived.wait(30)  # the first span is on its way, held by the collector
        hold.set()
        assert tracing.flush(timeout=60)
        run_id = agent.history[-1].run_id
        assert sorted(s.name for s in receiver.spans) == [
            "chat scripted",
            "chat scripted",
            "execute_tool lookup",
            "invoke_agent slow",
        ]
        root = next(s for s in receiver.spans if s.parent_span_id is None)
        assert root.span_id == span_id_of(run_id, "run") and root.trace_id == trace_id_of(run_id)
        assert {s.parent_span_id for s in receiver.spans if s is not root} == {root.span_id}
        provider.shutdown()


EXIT_SCRIPT = textwrap.dedent(
    """
    import threading
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    from agentnb import Agent, ScriptedModel


    class Hung(SpanExporter):
        # a collector that never answers
        def export(self, spans):
            threading.Event().wait()
            return SpanExportResult.SUCCESS

        def shutdown(self):
            pass


    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Hung()))
    agent = Agent("exit", ScriptedModel(["one", "two"]), tracer_provider=provider)
    agent.run("a")
    agent.run("b")
    print("both turns returned", flush=True)
    """
)


def test_a_process_exits_with_the_collector_hung_and_says_once_what_it_dropped():
    done = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, timeout=120
    )  # without the bounded wait this never returns
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "both turns returned"
    said = [line for line in done.stderr.splitlines() if "agentnb.tracing: at exit" in line]
    assert len(said) == 1, done.stderr
    assert "the spans of 2 turn(s) still on their way are dropped" in said[0]
