"""Tracing agents as they run: ``instrument()`` for every agent, ``Agent(tracer_provider=…)``
for one.

The observer collects each run's events as they come (with the time each arrived); when the run
ends it hands them to the provider's handoff (``handoff.py``), whose worker thread writes the
run's spans, with the times the events recorded, and flushes: the turn never waits for the
exporter. A run started under a span (an application's, an evaluation case's) goes under it; a
delegated run goes under its parent's delegate tool span, in its parent's session.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import Event, OutputDelta, RunFailed, RunFinished, RunStarted, TextDelta
from .handoff import flush, handoff_for

if TYPE_CHECKING:
    from .attributes import SpanSettings

MAX_OPEN_RUNS = 1_000
"""Runs collected at once; the oldest is dropped past this (a run never ended gives no spans)."""


@dataclass
class _Instrumentation:
    """What ``instrument()`` set for every agent."""

    provider: Any = None
    """The tracer provider given (None: the global one, looked up at each run)."""
    capture_content: bool | None = None
    """Content on or off (None: from the environment variable)."""


@dataclass
class _LiveRun:
    """A run being traced."""

    provider: Any
    """Where its spans go."""
    settings: SpanSettings
    """What they carry."""
    trace_id: int
    """Its trace (its own, or its parent run's for a delegation)."""
    events: list[Event] = field(default_factory=list)
    """Its events so far."""
    stamps: list[int] = field(default_factory=list)
    """When each arrived (ns since the epoch)."""
    nested: bool = False
    """A delegated run whose parent run is traced: its spans go under the parent's tool span."""
    parent: Any = None
    """The span context the run was started under (not for a delegated run), if any."""


_instrumented: _Instrumentation | None = None
_runs: dict[str, _LiveRun] = {}
_trace_of: dict[str, int] = {}  # run id -> trace id, for delegated runs that start under it
_lock = threading.Lock()


def configure(tracer_provider: Any = None, capture_content: bool | None = None) -> None:
    """What ``instrument()`` sets: the provider every agent without its own traces to."""
    global _instrumented
    _check_provider(tracer_provider)
    _instrumented = _Instrumentation(tracer_provider, capture_content)


def uninstrument() -> None:
    """Stop tracing agents that have no ``tracer_provider`` of their own."""
    global _instrumented
    _instrumented = None


def is_instrumented() -> bool:
    """Whether ``instrument()`` is in force."""
    return _instrumented is not None


def _check_provider(provider: Any) -> None:
    if provider is not None and not callable(getattr(provider, "get_tracer", None)):
        from ..errors import ConfigurationError

        raise ConfigurationError(
            f"tracer_provider must be an OpenTelemetry TracerProvider (with get_tracer), got {type(provider).__name__}"
        )


def observe(agent: Any, event: Event) -> None:
    """The observer the core calls with every event of every agent."""
    if isinstance(event, (TextDelta, OutputDelta)):  # streaming: the spans take the whole answer
        return
    if isinstance(event, RunStarted):
        _start(agent, event)
        return
    live = _runs.get(event.run_id)
    if live is None:
        return
    live.events.append(event)
    live.stamps.append(time.time_ns())
    if isinstance(event, (RunFinished, RunFailed)):
        with _lock:
            _runs.pop(event.run_id, None)
        _finish(live)


def route(agent: Any, parent: _LiveRun | None = None) -> tuple[Any, bool | None] | None:
    """Where an agent's run is traced and whether with content: the agent's own provider, else
    its traced parent run's, else the one ``instrument()`` gave (or the global one); None: not
    traced."""
    provider = getattr(agent, "tracer_provider", None)
    capture = _instrumented.capture_content if _instrumented is not None else None
    if provider is None and parent is not None:  # a member of a traced team is traced with it
        provider, capture = parent.provider, parent.settings.content
    if provider is None and _instrumented is not None:
        provider = _instrumented.provider or _global_provider()
    if provider is None:
        return None
    _check_provider(provider)
    return provider, capture


def _start(agent: Any, event: RunStarted) -> None:
    parent_run_id = getattr(event, "parent_run_id", None)
    parent = _runs.get(parent_run_id) if parent_run_id else None
    routed = route(agent, parent)
    if routed is None:
        return
    provider, capture = routed
    # What builds spans loads with the first traced run (import agentnb stays light).
    from opentelemetry import context as otel_context
    from opentelemetry import trace

    from .spans import trace_id_of

    parent_trace = _trace_of.get(parent_run_id or "")  # None: no parent, or one not traced
    ambient = None
    session_id = _session_id(agent)
    if parent_trace is None:  # a run of its own goes under the span current where it started
        current = trace.get_current_span().get_span_context()
        ambient = current if current.is_valid else None
        given = otel_context.get_value(OI_SESSION_KEY)  # OpenInference's using_session(), an evaluation's
        session_id = str(given) if given else session_id
    elif parent is not None:  # a trace has one session: the team's
        session_id = parent.settings.session_id
    settings = settings_for(agent, capture, session_id, parent.settings.secrets if parent is not None else ())
    trace_id = parent_trace or (ambient.trace_id if ambient is not None else trace_id_of(event.run_id))
    with _lock:
        _trace_of[event.run_id] = trace_id
        while len(_trace_of) > 10_000:  # only runs still able to have delegations matter
            _trace_of.pop(next(iter(_trace_of)))
        _runs[event.run_id] = _LiveRun(
            provider, settings, trace_id, [event], [time.time_ns()], parent_trace is not None, ambient
        )
        while len(_runs) > MAX_OPEN_RUNS:  # runs abandoned mid-way (an iter_run not read to its end)
            _runs.pop(next(iter(_runs)))


OI_SESSION_KEY = "session.id"
"""The OpenTelemetry context key OpenInference's ``using_session`` sets (agentnb's evaluations
set it too): a run started under it is filed in that session."""


def trace_of(run_id: str) -> int | None:
    """The trace a live run's spans went to, if it was traced here."""
    return _trace_of.get(run_id)


def settings_for(
    agent: Any, capture: bool | None, session_id: str | None, inherited: tuple[str, ...] = ()
) -> SpanSettings:
    """What an agent's runs' spans carry: content or not, the session, its tools, the
    credentials to redact (its model's, and ``inherited`` ones), the model's server."""
    from .attributes import SpanSettings
    from .content import capture_from_env

    model = getattr(agent, "model", None)
    tools = _tools(agent)
    return SpanSettings(
        content=capture_from_env() if capture is None else bool(capture),
        session_id=session_id,
        tool_descriptions={t.name: t.description for t in tools if getattr(t, "description", None)},
        tool_parameters={
            t.name: t.parameters for t in tools if isinstance(getattr(t, "parameters", None), dict)
        },
        secrets=(*_secrets(model), *inherited),
        server=_server(model),
    )


def _finish(live: _LiveRun) -> None:
    def write() -> None:
        from .outline import outline
        from .spans import write_run

        run = outline(live.events, live.stamps)
        write_run(live.provider, run, live.settings, live.trace_id, live.nested, live.parent)

    handoff_for(live.provider).submit(write)


def _global_provider() -> Any:
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    # Until an application sets one, the global provider is a proxy whose spans go nowhere.
    return None if type(provider).__name__ in ("ProxyTracerProvider", "NoOpTracerProvider") else provider


def _session_id(agent: Any) -> str | None:
    """The conversation the agent's turns belong to: the session they are recorded or saved
    under (as an export of that session names it), else the agent's own session id."""
    for kept in (getattr(agent, "recording", None), getattr(agent, "_autosave", None)):
        if kept is not None and getattr(kept, "session_id", None):
            return str(kept.session_id)
    session_id = getattr(agent, "session_id", None)
    return str(session_id) if session_id else None


def _tools(agent: Any) -> list[Any]:
    try:
        return list(agent.all_tools())
    except Exception:  # an agent-like object without tools
        return []


def _secrets(model: Any) -> tuple[str, ...]:
    """The credentials a model is configured with (its own ``credentials()``, as its redactor
    uses them)."""
    credentials = getattr(model, "credentials", None)
    if not callable(credentials):
        return ()
    try:
        return tuple(s for s in credentials() if isinstance(s, str))
    except Exception:
        return ()


def _server(model: Any) -> tuple[str, int | None] | None:
    """The host and port a model talks to (from its base URL; OpenAI's when it has none)."""
    resolved = getattr(model, "resolved_base_url", None)
    if not callable(resolved) or getattr(model, "kind", None) not in ("openai", "local"):
        return None
    try:
        url = resolved() or "https://api.openai.com/v1"
        parts = urllib.parse.urlsplit(url)
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except (TypeError, ValueError):
        return None
    return (parts.hostname, port) if parts.hostname else None


__all__ = [
    "flush",
    "configure",
    "is_instrumented",
    "observe",
    "route",
    "settings_for",
    "trace_of",
    "uninstrument",
]
