"""Saving and recording an agent, as a part of ``Agent``: the state-module protocol sessions save
through, a session saved after every turn, and a notebook's recording."""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import Any

from ..delegation.tools import with_member
from ..errors import ConfigurationError
from ..state.modules import register_state
from . import agent_state
from .recorded_tree import naming, recorded_tree, take_over, takes_over


class Persistence:
    """Sessions and recordings of an agent (mixed into ``Agent``)."""

    name: str
    history: Any
    recording: Any
    handoffs: list[Any]
    _tools: list[Any]
    _running: Callable[[], Any]
    all_tools: Callable[[], list[Any]]

    tree_words = ("agent", "delegate")
    """What errors call this agent and the agents recorded with it."""

    def register_state(
        self, attr_name: str, custom_to_json: Any = None, custom_from_json: Any = None
    ) -> None:
        """Also save ``self.<attr_name>`` in sessions (AgentScope's ``register_state``)."""
        register_state(self, attr_name, custom_to_json, custom_from_json)

    def state_dict(self) -> dict[str, Any]:
        """State, conversation and every finished turn (with each model request and response)
        as plain data: what a session saves under this agent's module name."""
        return copy.deepcopy(agent_state.state_dict(self))

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> None:
        """Restore what ``state_dict()`` returned into this agent (built by the same code)."""
        agent_state.load_state_dict(self, state_dict, strict)

    def prepare_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> Callable[[], None]:
        """Check what ``load_state_dict`` would load, changing nothing, and return the function
        that loads it (sessions load a team's agents all or nothing this way)."""
        return agent_state.prepare_load(self, state_dict, strict)

    def state_cursor(self, *, empty: bool = False) -> Any:
        """What a session just stored of this agent, or (``empty``) nothing (see ``agentnb.state.modules``)."""
        return agent_state.empty_cursor(self) if empty else agent_state.cursor(self)

    def state_delta(
        self, cursor: Any, *, after_turn: bool = False
    ) -> tuple[list[dict[str, Any]], Any] | None:
        """What changed since ``cursor``, as ops, and the cursor after them (see ``agentnb.state.modules``)."""
        return agent_state.delta(self, cursor, after_turn=after_turn)

    def delegates(self) -> list[Any]:
        """The agents this one's runs delegate to: its agents as tools and its handoff targets
        (a team adds its members), recorded with it (``agentnb.sessions.recorded_tree``)."""
        return [t.member for t in self.all_tools() if t.member is not None]

    def replace_delegates(self, swap: Mapping[int, Any]) -> None:
        """Delegate to other agents: each agent this one delegates to that ``swap`` maps (by
        ``id``) is replaced by the agent it maps to — in its agents as tools and its handoffs (a
        team: its members too). An evaluation runs each case on a fresh copy of the whole tree
        this way."""
        self.handoffs = [
            dataclasses.replace(h, agent=swap[id(h.agent)]) if id(h.agent) in swap else h
            for h in self.handoffs
        ]
        self._tools = [
            with_member(t, swap[id(t.member)])
            if t.member is not None
            and id(t.member) in swap
            and getattr(t.delegation, "kind", None) == "as_tool"
            else t
            for t in self._tools
        ]

    def attach_recording(
        self,
        session: Any,
        session_id: str | None = None,
        *,
        fresh: bool = False,
        module: str = "agent",
        mode: str | None = None,
    ) -> Any:
        """Replay from and record to ``session`` (a SessionBase or a folder for a JSONSession),
        as a notebook does with the folder beside it: the agent keeps its own definition and
        state; a turn whose requests match the recording is answered from it; a turn that
        differs goes live and replaces the recording from there (see ``agentnb.sessions.recording``).
        The agents it delegates to are recorded with it, each a module of its own
        (``<module>/<name>``), unless another agent's recording in another session covers one
        already. Every one's turns are read before any is attached. ``fresh=True`` ignores what
        the session holds. Returns the ``Recording``."""
        with naming(self, module, "or pass fresh=True to record afresh"):
            recording = self._read_recording(session, session_id, fresh=fresh, module=module, mode=mode)
            tree = recorded_tree(self, module)
            covered = [
                (
                    agent,
                    agent._read_recording(
                        recording.session, recording.session_id, fresh=fresh, module=path, mode=mode
                    ),
                )
                for path, agent in tree.items()
                if agent is not self and takes_over(agent.recording, recording.where(), tree)
            ]
        self.detach_session()
        recording.attach(self)
        self.recording = recording
        for agent, own in covered:
            if agent.recording is not None:
                agent.recording.detach()
            own.covered_by = self
            own.attach(agent)
            agent.recording = own
        recording.covers = covered
        return recording

    def _read_recording(
        self, session: Any, session_id: str | None, *, fresh: bool, module: str, mode: str | None
    ) -> Any:
        """The ``Recording`` of this agent in ``session``, its turns read (nothing attached yet)."""
        from . import JSONSession, SessionBase
        from .base import check_session_id
        from .recording import Recording

        if isinstance(session, (str, os.PathLike)):
            session = JSONSession(session)
        if not isinstance(session, SessionBase):
            raise ConfigurationError(
                f"a recording goes into a JSONSession, a SQLiteSession or a folder, got {type(session).__name__}"
            )
        return Recording(
            session, check_session_id(session_id or self.name), module=module, mode=mode, fresh=fresh
        )

    def resume(self) -> int:
        """Take over everything the recording holds (state, conversation, turns) without
        running anything, and continue it from there — for this agent and the agents recorded
        with it, all of them or, when one cannot be loaded, none. Returns the number of turns
        taken over."""
        recording = self.recording
        if recording is None:
            raise ConfigurationError(
                f"agent {self.name!r} has no recording to resume; attach_recording(...) first"
            )
        place = (recording.session, recording.session_id)
        tree = {
            agent.recording.module: agent
            for agent in recorded_tree(self, recording.module).values()
            if agent.recording is not None and (agent.recording.session, agent.recording.session_id) == place
        }
        with naming(self, recording.module, "or run the notebook again without resuming (its turns replay)"):
            take_over(recording, tree)
        return len(self.history)

    def modules(self, name: str | None = None) -> dict[str, Any]:
        """This agent and every agent it delegates to at any depth (a team's members, agents as
        tools, handoff targets) as named state modules of one session: ``{"desk": desk,
        "desk/helper": helper, ...}`` (AgentScope's ``save_session_state(**modules)`` shape), as
        a recording and ``session=`` save them; ``name`` replaces the agent's name as the root."""
        return recorded_tree(self, name or self.name)

    def detach_session(self) -> None:
        """Stop saving after every turn and stop replaying (what attach_session / attach_recording
        set up), for the agents recorded or saved with this one too."""
        self._detach_autosave()
        recording = self.recording
        if recording is not None:
            recording.detach()
            self.recording = None
            for agent, covered in recording.covers:
                if agent.recording is covered:
                    covered.detach()
                    agent.recording = None

    def _detach_autosave(self) -> None:
        """Stop saving after every turn (``attach_session``), for the agents saved with this one too."""
        autosave = getattr(self, "_autosave", None)
        if autosave is None:
            return
        autosave.unsubscribe()
        self._autosave = None
        for agent, covered in autosave.covers:
            if getattr(agent, "_autosave", None) is covered:
                agent._autosave = None

    def attach_session(
        self, session: Any, session_id: str | None = None, *, fresh: bool = False, module: str = "agent"
    ) -> bool:
        """Save to ``session`` after every turn, restoring what it holds first (unless
        ``fresh=True``), with the agents this one delegates to (a team's members, agents as
        tools, handoff targets): each a module of the session (``<module>/<name>``, as
        ``modules()``), all of them restored or, when one cannot be loaded, none (a
        ``SessionModuleError`` naming it). A delegate saved with another agent's session stays
        there. ``session`` is a SessionBase or a folder for a JSONSession; ``session_id``
        defaults to the agent's name. What ``session=`` and ``db=`` do. Returns whether a
        session was restored."""
        from .autosave import attach

        with naming(self, module, "or pass fresh=True to start afresh"):
            return attach(self, session, session_id, fresh=fresh, module=module)


__all__ = ["Persistence"]
