"""Autosave: an agent saves its session after every turn (and when a turn pauses for a person)
and restores it when re-created — with the agents it delegates to (a team's members, agents as
tools, handoff targets), each a module of the same session, as a recording holds them
(``recorded_tree``)."""

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
from .recorded_tree import recorded_tree, takes_over


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
    covered_by: Any = None
    """The agent whose autosave saves this one with it (a delegate's); None: its own."""
    covers: tuple[tuple[Any, Autosave], ...] = ()
    """The agents saved with this one, and their entries (``covered_by`` this one's agent)."""

    def where(self) -> str:
        """Where it is saved, for messages (and to tell two places apart)."""
        return self.session.describe(self.session_id)


def _unsubscribed() -> None:
    """A delegate's entry stops nothing of its own: its tree's root saves it."""


def attach(agent: Any, session: Any, session_id: str | None, *, fresh: bool, module: str) -> bool:
    """Restore ``agent`` and the agents it delegates to from ``session`` (unless ``fresh``) —
    all of them or, when one cannot be loaded, none — and save them after each of its turns,
    each a module of the session (``<module>/<delegate>``). A delegate saved with another
    agent's tree in another session stays saved there."""
    if isinstance(session, (str, os.PathLike)):
        session = JSONSession(session)
    if not isinstance(session, SessionBase):
        raise TypeError(
            f"session= takes a JSONSession, a SQLiteSession or a folder path, got {type(session).__name__}"
        )
    session_id = check_session_id(session_id or agent.name)
    place = session.describe(session_id)
    tree = recorded_tree(agent, module)
    saved = {
        path: member
        for path, member in tree.items()
        if member is agent or takes_over(getattr(member, "_autosave", None), place, tree)
    }
    # Loaded first, all or nothing: a session that cannot be loaded leaves every agent of the
    # tree as it was, still saved where it was.
    restored = False if fresh else session.load_session_state_sync(session_id, **saved)
    agent.detach_session()
    delegates = [(path, member) for path, member in saved.items() if member is not agent]
    for _, member in delegates:
        own = getattr(member, "_autosave", None)
        if own is not None and own.covered_by is None:
            member._detach_autosave()  # its own session: the tree's root saves it from now on
    if not fresh and not restored:
        for name in saved:
            session.start_empty(session_id, name)
    covers = tuple(
        (member, Autosave(session, session_id, path, _unsubscribed, covered_by=agent))
        for path, member in delegates
    )
    for member, entry in covers:
        member._autosave = entry
    # After its own turn an agent's state changed only through that turn's recorded changes; a
    # delegate's also by what delegations put in and took back, so a tree is compared whole.
    after_turn = len(saved) == 1

    def save_after_turn(event: Any) -> None:
        if not isinstance(event, (RunFinished, RunFailed, RunPaused)):
            return
        # A delegate attached elsewhere since (its own session, another tree's) is saved there.
        kept = {id(member) for member, entry in covers if member._autosave is entry}
        modules = {path: m for path, m in saved.items() if m is agent or id(m) in kept}
        try:
            session.append_session_state_sync(session_id, _after_turn=after_turn, **modules)
        except (SessionError, OSError) as exc:
            # A failed save must not fail the turn; the next turn's save retries everything.
            warnings.warn(f"agentnb: could not save session {session_id!r}: {exc}", stacklevel=2)

    agent._autosave = Autosave(session, session_id, module, agent.subscribe(save_after_turn), covers=covers)
    return restored
