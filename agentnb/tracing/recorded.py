"""Export after the fact: a recorded history's turns as spans, with their recorded times and ids
derived from their run ids (the same recording exported twice gives the same ids, and the same
spans a live run wrote)."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ConfigurationError
from ..events import Event, RunStarted
from . import live
from .content import capture_from_env
from .handoff import handoff_for
from .live import _check_provider, _global_provider, _session_id, settings_for
from .outline import outline
from .spans import trace_id_of, write_run


def export(
    history: Any,
    tracer_provider: Any = None,
    *,
    capture_content: bool | None = None,
    session_id: str | None = None,
    flush_timeout: float | None = 30.0,
) -> list[str]:
    """Write the finished turns of ``history`` as spans to ``tracer_provider`` (default: an
    agent's own, else the one ``instrument()`` was given, else the global one) and flush them. ``history`` is an agent,
    its ``history``, a list of turn records, or a session (a ``SessionBase`` or a folder such as
    a notebook's ``.agentnb``: every agent stored in it, or ``session_id``'s). Returns the trace
    ids written, as 32 hex digits, one per turn."""
    provider = _provider(
        tracer_provider if tracer_provider is not None else getattr(history, "tracer_provider", None)
    )
    content = capture_from_env() if capture_content is None else bool(capture_content)
    handoff = handoff_for(provider)
    written: list[str] = []
    for agent, conversation, turns in _sources(history, session_id):
        settings = settings_for(agent, content, conversation)
        for events in turns:
            written.extend(_write(handoff, provider, events, settings))
    handoff.submit()
    if flush_timeout is not None:
        handoff.wait(flush_timeout)
    return written


def _provider(given: Any) -> Any:
    if given is not None:
        _check_provider(given)
        return given
    instrumented = live._instrumented
    provider = (instrumented.provider if instrumented is not None else None) or _global_provider()
    if provider is None:
        raise ConfigurationError(
            "export needs a tracer provider: pass tracer_provider=, call agentnb.tracing.instrument(provider), "
            "or set OpenTelemetry's global provider"
        )
    return provider


def _write(handoff: Any, provider: Any, events: list[Event], settings: Any) -> list[str]:
    """One turn's events (its own run and any delegated runs inside it) as spans."""
    by_run: dict[str, list[Event]] = {}
    for event in events:
        by_run.setdefault(event.run_id, []).append(event)
    trace_of: dict[str, int] = {}
    written = []
    for run_id, run_events in by_run.items():  # a parent's RunStarted comes before its members'
        started = run_events[0]
        if not isinstance(started, RunStarted) or len(run_events) < 2:
            continue
        parent = getattr(started, "parent_run_id", None)
        nested = isinstance(parent, str) and parent in trace_of  # its parent is in this export too
        trace_of[run_id] = trace_of[parent] if isinstance(parent, str) and nested else trace_id_of(run_id)
        run = outline(run_events)
        if run.outcome is None:
            continue  # a turn that never ended has no spans to give
        handoff.submit(functools.partial(write_run, provider, run, settings, trace_of[run_id], nested))
        if not nested:
            written.append(f"{trace_of[run_id]:032x}")
    return written


def _sources(history: Any, session_id: str | None) -> Iterable[tuple[Any, str | None, list[list[Event]]]]:
    """(agent or None, conversation id, each finished turn's events) for whatever was given."""
    turns = getattr(history, "history", None)
    if turns is not None and hasattr(history, "run"):  # an agent
        yield history, session_id or _session_id(history), _turn_events(turns)
        return
    if isinstance(history, (str, os.PathLike)) or _is_session(history):
        yield from _from_session(history, session_id)
        return
    if isinstance(history, Iterable) and not isinstance(history, (str, bytes, Mapping)):
        yield None, session_id, _turn_events(history)
        return
    raise ConfigurationError(
        "export takes an agent, its history, a list of turn records or a session (a folder or "
        f"SessionBase), got {type(history).__name__}"
    )


def _turn_events(turns: Iterable[Any]) -> list[list[Event]]:
    """Each finished turn's events, followed by those of the runs its delegations started (a turn
    that runs, or waits for a person, is not finished: it is written once it is)."""
    out = []
    for turn in turns:
        if not hasattr(turn, "events") or getattr(turn, "status", "ok") in ("running", "paused"):
            continue
        out.append(_with_children(turn))
    return out


def _with_children(turn: Any) -> list[Event]:
    events = list(turn.events)
    seen = {event.run_id for event in events}
    for child in getattr(turn, "children", None) or ():  # a turn's delegated runs (teams)
        if getattr(child, "run_id", None) not in seen:
            events.extend(_with_children(child))
    return events


def _is_session(value: Any) -> bool:
    from ..sessions import SessionBase

    return isinstance(value, SessionBase)


def _from_session(
    session: Any, session_id: str | None
) -> Iterable[tuple[Any, str | None, list[list[Event]]]]:
    """Each stored agent of a session as a bare agent holding its recorded turns."""
    from ..agent import Agent
    from ..sessions import JSONSession

    if not _is_session(session):
        if not os.path.isdir(session):
            raise ConfigurationError(
                f"no recorded session at {os.fspath(session)!r}: give a folder of JSON sessions "
                "(a notebook's .agentnb folder) or a SessionBase"
            )
        session = JSONSession(session)
    names = [session_id] if session_id else _stored_ids(session)
    if not names:
        raise ConfigurationError(f"{session!r} holds no recorded session here; pass session_id= to name one")
    for name in names:
        agent = Agent(name)
        session.load_session_state_sync(name, allow_not_exist=False, agent=agent)
        yield agent, name, _turn_events(agent.history)


def _stored_ids(session: Any) -> list[str]:
    """The session ids a JSON session folder holds (``<id>.json`` snapshots, ``<id>.jsonl`` logs)."""
    folder = getattr(session, "save_dir", None)
    if folder is None:
        return []
    ids = {
        name.rsplit(".", 1)[0]
        for name in os.listdir(folder)
        if name.endswith((".json", ".jsonl")) and ".turns-" not in name
    }
    return sorted(ids)


__all__ = ["export"]
