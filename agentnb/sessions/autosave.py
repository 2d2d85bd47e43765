"""Autosave: an agent saves its session after every turn (and when a turn pauses for a person)
and restores it when re-created."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
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


def attach(
    agent: Any,
    session: Any,
    session_id: str | None,
    *,
    fresh: bool,
    module: str,
    modules: Mapping[str, Any] | None = None,
) -> bool:
    """Restore ``agent`` from ``session`` (unless ``fresh``) and save it after each of its turns;
    ``modules`` (a team's tree: ``{module: agent, "<module>/<member>": member, ...}``) are
    restored and saved together, all of them in one session."""
    if isinstance(session, (str, os.PathLike)):
        session = JSONSession(session)
    if not isinstance(session, SessionBase):
        raise TypeError(
            f"session= takes a JSONSession, a SQLiteSession or a folder path, got {type(session).__name__}"
        )
    session_id = check_session_id(session_id or agent.name)
    saved = dict(modules) if modules is not None else {module: agent}
    # Loaded first, all or nothing: a session that cannot be loaded leaves the agent (and a
    # team's members) as they were, still saved where they were.
    restored = False if fresh else session.load_session_state_sync(session_id, **saved)
    agent.detach_session()
    if not fresh and not restored:
        for name in saved:
            session.start_empty(session_id, name)
    # After its own turn an agent's state changed only through that turn's recorded changes; a
    # member's also by what its team's delegations put in and took back, so it is compared whole.
    after_turn = len(saved) == 1

    def save_after_turn(event: Any) -> None:
        if not isinstance(event, (RunFinished, RunFailed, RunPaused)):
            return
        try:
            session.append_session_state_sync(session_id, _after_turn=after_turn, **saved)
        except (SessionError, OSError) as exc:
            # A failed save must not fail the turn; the next turn's save retries everything.
            warnings.warn(f"agentnb: could not save session {session_id!r}: {exc}", stacklevel=2)

    agent._autosave = Autosave(session, session_id, module, agent.subscribe(save_after_turn))
    return restored
