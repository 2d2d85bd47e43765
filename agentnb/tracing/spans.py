"""Spans from a run's outline, with ids derived from the run ids.

A run becomes one trace (or, for a delegated run, a subtree under its parent's delegate tool
span): ``invoke_agent`` at the root, ``chat`` per model call, ``execute_tool`` per tool call with
a span per hook and per retrieval made through it, and ``retrieval`` per passive retrieval.
Every span is started and ended with its recorded times, so a live run and a recording exported
later give the same spans with the same ids.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..events import RunFailed
from ..util.version import __version__
from . import attributes as at
from . import conventions as sc
from .bounds import finish
from .content import scrub
from .outline import RunOutline, ToolRun, parent_of
from .parts import request_parts, tool_parts, user_parts

_LOCK = threading.Lock()  # ids are handed to the SDK's tracer through one generator at a time


def trace_id_of(run_id: str) -> int:
    """The trace id of a run of its own (not delegated): 128 bits derived from its run id."""
    return int.from_bytes(hashlib.sha256(f"agentnb-trace/{run_id}".encode()).digest()[:16], "big") or 1


def span_id_of(run_id: str, key: str) -> int:
    """The span id of one span of a run (``key`` names it within the run: ``run``, ``chat:0``,
    ``tool:<id>``, ...): 64 bits derived from the run id and the key."""
    return int.from_bytes(hashlib.sha256(f"agentnb-span/{run_id}/{key}".encode()).digest()[:8], "big") or 1


class DerivedIds:
    """An id generator that hands out the ids set on it just before each span starts (the SDK's
    tracer asks its generator for every new span's ids)."""

    def __init__(self) -> None:
        self.span_id = 1
        """The id the next span gets."""
        self.trace_id = 1
        """The trace id the next root span gets."""

    def generate_span_id(self) -> int:
        """The id set for the next span."""
        return self.span_id

    def generate_trace_id(self) -> int:
        """The trace id set for the next root span."""
        return self.trace_id

    def is_trace_id_random(self) -> bool:
        """Derived ids are not random (W3C trace-context level 2's random flag stays off)."""
        return False


_tracers: weakref.WeakKeyDictionary[Any, tuple[Any, DerivedIds | None]] = weakref.WeakKeyDictionary()


def tracer_for(provider: Any) -> tuple[Any, DerivedIds | None]:
    """A tracer of ``provider`` whose ids agentnb chooses (when it is the SDK's; another
    implementation keeps its own ids), made once per provider."""
    try:
        found = _tracers.get(provider)
    except TypeError:  # a provider that takes no weak reference: a tracer each time
        found = None
    if found is not None:
        return found
    tracer = provider.get_tracer("agentnb", __version__, schema_url=sc.SCHEMA_URL)
    ids = None
    if hasattr(tracer, "id_generator"):
        ids = DerivedIds()
        tracer.id_generator = ids
    with contextlib.suppress(TypeError):  # a provider that takes no weak reference: not kept
        _tracers[provider] = (tracer, ids)
    return tracer, ids


class SpanWriter:
    """Writes one run's spans to a tracer."""

    def __init__(
        self,
        tracer: Any,
        ids: DerivedIds | None,
        run: RunOutline,
        settings: at.SpanSettings,
        trace_id: int,
        nested: bool = False,
        parent: Any = None,
    ) -> None:
        self.tracer, self.ids, self.run, self.settings, self.trace_id = tracer, ids, run, settings, trace_id
        self.nested = nested
        """Whether the run goes under its parent's delegate tool span (the parent is traced too)."""
        self.parent = parent
        """The span the run was started under (an application's, an evaluation case's), if any:
        a run of its own goes under it."""
        assert run.started is not None
        self.run_id = run.started.run_id
        self.hidden = run.prompt.hidden_keys if run.prompt is not None else ()

    def write(self) -> None:
        """Start and end every span of the run, the root last."""
        run, settings = self.run, self.settings
        started = run.started
        assert started is not None
        parent_run_id, parent_tool_call_id = parent_of(started)
        context = None
        if (
            self.nested and parent_run_id and parent_tool_call_id
        ):  # a delegation: under the delegate tool's span
            parent = trace.SpanContext(
                self.trace_id,
                span_id_of(parent_run_id, f"tool:{parent_tool_call_id}"),
                False,
                trace.TraceFlags(trace.TraceFlags.SAMPLED),
            )
            context = trace.set_span_in_context(trace.NonRecordingSpan(parent))
        elif self.parent is not None:
            context = trace.set_span_in_context(trace.NonRecordingSpan(self.parent))
        else:  # a trace of its own, whatever span is current on the thread that writes it
            context = trace.set_span_in_context(trace.INVALID_SPAN)
        content = settings.content
        first = run.calls[0].requested if run.calls else None
        attrs = {
            **at.run_attributes(run, settings, parent_run_id, getattr(started, "path", None)),
            **user_parts(first.request if first is not None else None),
            **at.run_end_attributes(run, content),
            **at.state_attributes(run.states, self.hidden, content),
        }
        with _LOCK:
            root = self._start(
                f"{sc.INVOKE_AGENT} {started.agent}", "run", context, SpanKind.INTERNAL, attrs, run.start
            )
            inside = trace.set_span_in_context(root)
            for retrieval in run.retrievals:
                self._retrieval(retrieval, inside)
            for chat in run.calls:
                self._chat(chat, inside, started.model)
            for tool in run.tools:
                self._tool(tool, inside)
            for pause in run.pauses:
                root.add_event(*at.pause_event(pause), timestamp=max(run.start, int(pause.at * 1e9)))
            if isinstance(run.outcome, RunFailed):
                root.set_status(Status(StatusCode.ERROR, self._text(at.run_error(run.outcome, content))))
            root.end(end_time=run.end)

    def _start(
        self, name: str, key: str, context: Any, kind: SpanKind, attrs: Mapping[str, Any], start: int
    ) -> Any:
        if self.ids is not None:
            self.ids.trace_id, self.ids.span_id = self.trace_id, span_id_of(self.run_id, key)
        attrs = finish(attrs, self.settings.redactor)
        return self.tracer.start_span(name, context=context, kind=kind, attributes=attrs, start_time=start)

    def _text(self, text: str) -> str:
        """A status description as it leaves: without the model's credentials."""
        return scrub(self.settings.redactor.text(text))

    def _retrieval(self, retrieval: Any, context: Any) -> None:
        event = retrieval.event
        attrs = at.retrieval_attributes(event, self.settings.content)
        span = self._start(
            f"{sc.RETRIEVAL} {event.label}", retrieval.key, context, SpanKind.INTERNAL, attrs, retrieval.start
        )
        span.end(end_time=retrieval.end)

    def _chat(self, chat: Any, context: Any, label: str) -> None:
        provider = at.provider_of(label)
        kind = SpanKind.CLIENT if provider in at.NETWORK_PROVIDERS else SpanKind.INTERNAL
        attrs = at.chat_attributes(chat, label, self.settings)
        attrs.update(request_parts(chat.requested.request if chat.requested else None))
        outcome = self.run.outcome
        failed = outcome if chat.responded is None and isinstance(outcome, RunFailed) else None
        if chat.responded is not None:
            attrs.update(at.chat_end_attributes(chat.responded, self.settings.content))
        elif failed is not None:  # the run failed during this call
            attrs[sc.ERROR_TYPE] = failed.error_type
        span = self._start(f"{sc.CHAT} {attrs[sc.REQUEST_MODEL]}", chat.key, context, kind, attrs, chat.start)
        if failed is not None:
            span.set_status(Status(StatusCode.ERROR, self._text(at.run_error(failed, self.settings.content))))
        span.end(end_time=chat.end)

    def _tool(self, tool: ToolRun, context: Any) -> None:
        started = tool.started
        assert started is not None
        content = self.settings.content
        attrs = {
            **at.tool_attributes(tool, self.settings),
            **tool_parts(tool.finished),
            **at.state_attributes(tool.states, self.hidden, content),
        }
        span = self._start(
            f"{sc.EXECUTE_TOOL} {started.name}", tool.key, context, SpanKind.INTERNAL, attrs, tool.start
        )
        error = at.tool_error(tool, content)
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, self._text(error)))
        elif tool.finished is None and isinstance(self.run.outcome, RunFailed):
            span.set_status(Status(StatusCode.ERROR, self._text(at.run_error(self.run.outcome, content))))
        inner = trace.set_span_in_context(span)
        hook_spans = []
        for hook in tool.hooks:  # each hook calls the next link: nested, outermost first
            assert hook.step is not None
            attrs = {
                **at.hook_attributes(hook, content),
                **at.state_attributes(hook.states, self.hidden, content),
            }
            hook_span = self._start(
                f"agentnb.hook {hook.step.name}", hook.key, inner, SpanKind.INTERNAL, attrs, hook.start
            )
            raised = at.hook_error(hook, content)
            if raised is not None:
                hook_span.set_status(Status(StatusCode.ERROR, self._text(raised)))
            hook_spans.append((hook_span, hook.end))
            inner = trace.set_span_in_context(hook_span)
        for retrieval in tool.retrievals:
            self._retrieval(retrieval, trace.set_span_in_context(span))
        for hook_span, end in reversed(hook_spans):
            hook_span.end(end_time=end)
        span.end(end_time=tool.end)


def start_root(
    provider: Any,
    key: str,
    name: str,
    attrs: Mapping[str, Any],
    start: int,
    links: Any = (),
    settings: Any = None,
) -> Any:
    """Start a span of a trace of its own that is not a run's (an evaluation case's), its ids
    derived from ``key``; its attributes redacted and bounded."""
    tracer, ids = tracer_for(provider)
    redactor = settings.redactor if settings is not None else None
    context = trace.set_span_in_context(trace.INVALID_SPAN)
    with _LOCK:
        if ids is not None:
            ids.trace_id, ids.span_id = trace_id_of(key), span_id_of(key, "root")
        return tracer.start_span(
            name,
            context=context,
            kind=SpanKind.INTERNAL,
            attributes=finish(attrs, redactor),
            start_time=start,
            links=links,
        )


def write_run(
    provider: Any,
    run: RunOutline,
    settings: at.SpanSettings,
    trace_id: int,
    nested: bool = False,
    parent: Any = None,
) -> None:
    """Write one run's spans through ``provider``'s tracer; ``nested``: a delegated run whose
    parent is traced, in ``trace_id`` under the parent's delegate tool span; else under
    ``parent`` (a span context) when given, else a trace of its own."""
    tracer, ids = tracer_for(provider)
    SpanWriter(tracer, ids, run, settings, trace_id, nested, parent).write()


__all__ = ["DerivedIds", "SpanWriter", "span_id_of", "start_root", "trace_id_of", "tracer_for", "write_run"]
