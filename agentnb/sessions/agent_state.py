"""An agent as a state module: what it saves (state, conversation, every turn), how it loads,
and the deltas that keep a per-turn save O(change). Used by ``Agent.state_dict`` and friends;
sessions see only the protocol of ``agentnb.state.modules``."""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..history.history import History, turn_entries
from ..history.records import TurnRecord
from ..messages import Message
from ..state import diff
from ..state.frozen import EMPTY, FrozenMap
from ..state.modules import check_registered, load_registered, merge, registered_state, splice

KIND = "agentnb.Agent"
"""The ``kind`` an agent's saved state carries."""


def top_fields(agent: Any) -> dict[str, Any]:
    """The small top-level fields of an agent's saved state (with handoffs: who is in charge)."""
    fields = {
        "kind": KIND,
        "name": agent.name,
        "session_id": agent.session_id,
        "model": agent.model.label,
        "registered": registered_state(agent),
    }
    if getattr(agent, "handoffs", None):
        fields["in_charge"] = agent.in_charge.name if agent.in_charge is not None else None
    return fields


def state_dict(agent: Any) -> dict[str, Any]:
    """The agent's whole state: data, conversation, turns (with every request/response)."""
    return {
        **top_fields(agent),
        "state": dict(agent.state.data),
        "messages": [m.to_dict() for m in agent.state.messages],
        "history": agent.history.state_dict(),
    }


def prepare_load(agent: Any, data: Mapping[str, Any], strict: bool = True) -> Callable[[], None]:
    """Read and check what ``state_dict`` saved, changing nothing (raises as a load would), and
    return the function that puts it into ``agent``: a tree of agents loads all or nothing."""
    # A module saved without a history (a plain state module's shape) has no turns; one saved
    # with a history of the wrong shape is an error, never an empty history.
    history = History.from_state_dict(data["history"]) if "history" in data else History()
    messages = [Message.from_dict(m) for m in data.get("messages") or []]
    values = data.get("state") or {}
    agent.state.check_data(values)
    registered = dict(data.get("registered") or {})
    check_registered(agent, registered, strict)
    session_id, name = data.get("session_id"), data.get("name")

    def load() -> None:
        # A state saved as the last turn left it shares that turn's frozen copy (compared, not trusted).
        last = history[-1].frozen_after if len(history) and history[-1].status != "running" else None
        agent.state.load_data(values, image=last)
        agent.state.messages[:] = messages
        agent.history.adopt(history)
        if isinstance(session_id, str):
            agent.session_id = session_id
        if isinstance(name, str):
            agent.name = name  # AgentScope's agents keep their name as state
        load_registered(agent, registered, strict)
        if getattr(agent, "handoffs", None):
            in_charge = data.get("in_charge")
            agent.in_charge = next((h.agent for h in agent.handoffs if h.agent.name == in_charge), None)

    return load


def load_state_dict(agent: Any, data: Mapping[str, Any], strict: bool = True) -> None:
    """Restore what ``state_dict`` saved into an agent built by the same code."""
    prepare_load(agent, data, strict)()


@dataclass(frozen=True)
class Cursor:
    """What a session last stored of one agent, to write only what changed since."""

    owner: Any
    """A weak reference to the agent."""
    turns: int
    """Finished turns stored."""
    last_turn: TurnRecord | None
    """The last stored turn (to notice a history that was replaced)."""
    paused: int | None
    """The first stored turn that was paused when stored (it is stored again once it goes on,
    or is abandoned); None when none was."""
    state: FrozenMap
    """The state data as stored (frozen: shared with the turn records, not with the live state)."""
    messages: list[Message]
    """The conversation as stored."""
    top: dict[str, Any]
    """The small top-level fields as stored."""


def cursor(agent: Any) -> Cursor:
    """A cursor for what the agent holds now (after a save or a load)."""
    history = agent.history
    done = history.finished_count()
    return Cursor(
        owner=weakref.ref(agent),
        turns=done,
        last_turn=history[done - 1] if done else None,
        paused=_first_paused(history, max(0, done - 1), done),
        state=agent.state.frozen(),
        messages=list(agent.state.messages),
        top=top_fields(agent),
    )


def empty_cursor(agent: Any) -> Cursor:
    """A cursor for nothing stored: the next delta writes every turn, key and message as new."""
    return Cursor(
        owner=weakref.ref(agent), turns=0, last_turn=None, paused=None, state=EMPTY, messages=[], top={}
    )


def _first_paused(history: History, start: int, stop: int) -> int | None:
    """The first of turns ``start`` to ``stop`` that is paused (None: none is). Only the last
    turn of a history can be paused: a new turn ends the paused one."""
    return next((i for i in range(start, stop) if history[i].status == "paused"), None)


def delta(agent: Any, since: Any, *, after_turn: bool = False) -> tuple[list[dict[str, Any]], Cursor] | None:
    """Ops for what changed since ``since`` and the cursor after them; None when a whole save
    is needed (no cursor, another agent, or a history that was rewritten).

    ``after_turn``: the save comes right as a turn ended (autosave), so the state changed only
    through the turns since the cursor, whose change records name the keys: nothing else is
    compared with the last save."""
    if not isinstance(since, Cursor) or since.owner() is not agent:
        return None
    history: History = agent.history
    if len(history) < since.turns or (since.turns and history[since.turns - 1] is not since.last_turn):
        return None
    done = history.finished_count()
    # A turn stored while it was paused is stored again: it went on, or was abandoned.
    first = since.turns if since.paused is None else min(since.paused, since.turns)
    new_turns = history[first:done]
    ops: list[dict[str, Any]] = []
    if new_turns:
        prev = history[first - 1].frozen_after if first else EMPTY
        entries = turn_entries(new_turns, prev, start=first)
        ops.append(splice(["history", "turns"], entries, first if first < since.turns else None))
    live = agent.state.data
    keys = [k for turn in new_turns for k in turn.changed_keys()]
    whole = any(op["path"] == "" for turn in new_turns for c in turn.state_changes for op in c.patch)
    stored_state = agent.state.frozen()
    if after_turn and new_turns and done == len(history) and not whole and since.state is not EMPTY:
        state_delta = diff.keys_diff(live, keys)
    else:
        # Both frozen: what the state shares with the last save is not compared.
        changed = stored_state.changed_keys(since.state)
        state_delta = diff.top_diff(
            {k: since.state[k] for k in changed if k in since.state},
            {k: live[k] for k in changed if k in live},
        )
    if state_delta["set"] or state_delta["unset"]:
        state_delta["set"] = {k: copy.deepcopy(v) for k, v in state_delta["set"].items()}
        ops.append(merge(["state"], state_delta["set"], state_delta["unset"]))
    messages = agent.state.messages
    known = len(since.messages)
    if known <= len(messages) and (known == 0 or messages[known - 1] is since.messages[-1]):
        keep = known  # the conversation only grew (the usual case): no need to walk it
    else:
        keep = 0
        limit = min(len(messages), known)
        while keep < limit and (
            messages[keep] is since.messages[keep] or messages[keep] == since.messages[keep]
        ):
            keep += 1
    if keep < len(since.messages) or keep < len(messages):
        # A conversation that only grew is appended; one that was cut is rewritten from there.
        ops.append(
            splice(["messages"], [m.to_dict() for m in messages[keep:]], None if keep == known else keep)
        )
    top = top_fields(agent)
    top_changes = diff.top_diff(since.top, top)
    if top_changes["set"]:
        ops.append(merge([], top_changes["set"]))
    after = Cursor(
        owner=since.owner,
        turns=done,
        last_turn=history[done - 1] if done else None,
        paused=_first_paused(history, first, done),
        state=stored_state,
        messages=list(messages),
        top=top,
    )
    return ops, after


__all__ = [
    "KIND",
    "Cursor",
    "cursor",
    "delta",
    "empty_cursor",
    "load_state_dict",
    "prepare_load",
    "state_dict",
    "top_fields",
]
