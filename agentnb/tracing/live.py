"""Tracing agents as they run: ``instrument()`` for every agent, ``Agent(tracer_provider=…)``
for one.

The observer collects each run's events as they come (with the time each arrived) and writes
the run's spans when it ends, with the times the events recorded; then it asks the provider to
flush, on a thread of its own, so the spans go out as the turn ends and a slow or unreachable
collector never holds a turn up (it is reported once).
"""

from __future__ import annotations

import atexit
import threading
import time
import warnings
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import slots
from ..events import Event, RunFailed, RunFinished, RunStarted, TextDelta

if TYPE_CHECKING:
    from .attributes import SpanSettings

MAX_OPEN_RUNS = 1_000
"""Runs collected at once; the oldest is dropped past this (a run never ended gives no spans)."""

SLOW_FLUSH_S = 2.0
"""A flush that takes longer than this is reported (once): the collector is slow or unreachable."""


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


_instrumented: _Instrumentation | None = None
_runs: dict[str, _LiveRun] = {}
_trace_of: dict[str, int] = {}  # run id -> trace id, for delegated runs that start under it
_lock = threading.Lock()


def instrument(tracer_provider: Any = None, capture_content: bool | None = None) -> None:
    """Trace every agent's turns to ``tracer_provider`` (default: the global provider, which
    agentnb never sets). ``capture_content`` puts prompts, messages, tool arguments and results
    on the spans; None reads ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``."""
    global _instrumented
    _check_provider(tracer_provider)
    _instrumented = _Instrumentation(tracer_provider, capture_content)
    switch_on()


def switch_on() -> None:
    """Have the core call ``observe`` with every event (from the first traced agent on; until
    then a turn costs nothing here)."""
    slots.agent_observers.add(observe)


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
    if isinstance(event, TextDelta):
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


def _start(agent: Any, event: RunStarted) -> None:
    parent_run_id = getattr(event, "parent_run_id", None)
    parent = _runs.get(parent_run_id) if parent_run_id else None
    provider = getattr(agent, "tracer_provider", None)
    capture = _instrumented.capture_content if _instrumented is not None else None
    if provider is None and parent is not None:  # a member of a traced team is traced with it
        provider, capture = parent.provider, parent.settings.content
    if provider is None and _instrumented is not None:
        provider = _instrumented.provider or _global_provider()
    if provider is None:
        return
    _check_provider(provider)
    # What builds spans loads with the first traced run (import agentnb stays light).
    from .attributes import SpanSettings
    from .content import capture_from_env
    from .spans import trace_id_of

    settings = SpanSettings(
        content=capture_from_env() if capture is None else bool(capture),
        session_id=_session_id(agent),
        tool_descriptions=_descriptions(agent),
    )
    parent_trace = _trace_of.get(parent_run_id or "")  # None: no parent, or one not traced
    trace_id = parent_trace or trace_id_of(event.run_id)
    with _lock:
        _trace_of[event.run_id] = trace_id
        while len(_trace_of) > 10_000:  # only runs still able to have delegations matter
            _trace_of.pop(next(iter(_trace_of)))
        _runs[event.run_id] = _LiveRun(
            provider, settings, trace_id, [event], [time.time_ns()], parent_trace is not None
        )
        while len(_runs) > MAX_OPEN_RUNS:  # runs abandoned mid-way (an iter_run not read to its end)
            _runs.pop(next(iter(_runs)))


def _finish(live: _LiveRun) -> None:
    from .outline import outline
    from .spans import write_run

    write_run(live.provider, outline(live.events, live.stamps), live.settings, live.trace_id, live.nested)
    flusher_for(live.provider).request()


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


def _descriptions(agent: Any) -> dict[str, str]:
    try:
        return {t.name: t.description for t in agent.all_tools() if getattr(t, "description", None)}
    except Exception:  # an agent-like object without tools
        return {}


class Flusher:
    """Flushes one provider on a daemon thread when asked; ``wait()`` waits for what was asked."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self._asked = 0
        self._done = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._warned = False

    def request(self) -> None:
        """Ask for a flush now (returns at once)."""
        if not callable(getattr(self.provider, "force_flush", None)):
            return
        with self._cond:
            self._asked += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="agentnb-trace-flush", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every flush asked for so far is done; False when ``timeout`` ran out."""
        with self._cond:
            asked = self._asked
            return self._cond.wait_for(lambda: self._done >= asked, timeout)

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._asked > self._done)
                target = self._asked
            started = time.perf_counter()
            try:
                self.provider.force_flush()
            except Exception as exc:
                self._warn(f"flushing spans failed: {type(exc).__name__}: {exc}")
            took = time.perf_counter() - started
            if took > SLOW_FLUSH_S:
                self._warn(
                    f"handing a turn's spans to the exporter took {took:.1f} s; is the collector reachable?"
                )
            with self._cond:
                self._done = target
                self._cond.notify_all()

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"agentnb.tracing: {message} Turns do not wait for it; spans keep going out in the background.",
                RuntimeWarning,
                stacklevel=1,
            )


_flushers: weakref.WeakKeyDictionary[Any, Flusher] = weakref.WeakKeyDictionary()
_kept_flushers: dict[int, Flusher] = {}  # providers that take no weak reference, by id


def flusher_for(provider: Any) -> Flusher:
    """The provider's flusher (one per provider, kept no longer than the provider)."""
    with _lock:
        try:
            flusher = _flushers.get(provider)
            if flusher is None:
                flusher = _flushers[provider] = Flusher(provider)
        except TypeError:  # not weakly referenceable, or not hashable
            flusher = _kept_flushers.get(id(provider))
            if flusher is None or flusher.provider is not provider:
                flusher = _kept_flushers[id(provider)] = Flusher(provider)
        return flusher


def flush(timeout: float | None = None) -> bool:
    """Wait until the spans of every finished turn have been handed to the exporters (at most
    ``timeout`` seconds); False when it ran out."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with _lock:
        flushers = [*_flushers.values(), *_kept_flushers.values()]
    for flusher in flushers:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not flusher.wait(left):
            return False
    return True


atexit.register(flush, 5.0)

__all__ = ["Flusher", "flush", "instrument", "is_instrumented", "observe", "uninstrument"]
