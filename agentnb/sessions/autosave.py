"""Autosave: an agent saves its session after every turn (and when a turn pauses for a person)
and restores it when re-created."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import SessionError
from ..events import RunFailed, RunFinished, RunPaused
from .base import SessionBase, check_session_id
from .json_session import JSONSession


@dataclass(frozen=True)
class Autosave:
    """Where an agent saves itself after every turn."""

    session: SessionBase
    """The backend."""
    session_id: str
    """The session the agent is saved as."""
    module: str
    """The module name it is saved under."""
    unsubscribe: Callable[[], None]
    """Stops the autosave."""


def attach(agent: Any, session: Any, session_id: str | None, *, fresh: bool, module: str) -> bool:
    if isinstance(session, (str, os.PathLike)):
        session = JSONSession(session)
    if not isinstance(session, SessionBase):
        raise TypeError(
            f"session= takes a JSONSession, a SQLiteSession or a folder path, got {type(session).__name__}"
        )
    session_id = check_session_id(session_id or agent.name)
    previous: Autosave | None = getattr(agent, "_autosave", None)
    if previous is not None:
        previous.unsubscribe()
    restored = False
    if not fresh:
        restored = session.load_session_state_sync(session_id, **{module: agent})
        if not restored:
            session.start_empty(session_id, module)

    def save_after_turn(event: Any) -> None:
        if not isinstance(event, (RunFinished, RunFailed, RunPaused)):
            return
        try:
            session.append_session_state_sync(session_id, _after_turn=True, **{module: agent})
        except (SessionError, OSError) as exc:
            # A failed save must not fail the turn; the next turn's save retries everything.
            warnings.warn(f"agentnb: could not save session {session_id!r}: {exc}", stacklevel=2)

    agent._autosave = Autosave(session, session_id, module, agent.subscribe(save_after_turn))
    return restored
