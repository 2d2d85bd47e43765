"""State modules: what ``state_dict()`` / ``load_state_dict()`` mean for agents, states,
toolkits and histories, and the per-turn deltas that keep autosave O(change).

Any object with ``state_dict()`` and ``load_state_dict(d)`` can be saved in a session
(AgentScope's ``StateModule`` contract). ``StateModule`` gives user classes
``register_state(attr)`` for that; Agent, State, Toolkit and History expose the same methods.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import top_level_key
from .codec import encode

if TYPE_CHECKING:
    from ..agent import Agent
    from ..history import History, TurnRecord
    from ..messages import Message

_REGISTRY_ATTR = "_agentnb_registered_state"


def register_state(
    obj: Any,
    attr_name: str,
    custom_to_json: Callable[[Any], Any] | None = None,
    custom_from_json: Callable[[Any], Any] | None = None,
) -> None:
    """Save ``obj.<attr_name>`` with the object's state (AgentScope's ``register_state``)."""
    if not isinstance(attr_name, str) or not attr_name.isidentifier():
        raise ValueError(f"register_state needs an attribute name, got {attr_name!r}")
    if not hasattr(obj, attr_name):
        raise AttributeError(
            f"{type(obj).__name__} has no attribute {attr_name!r}; set it before register_state"
        )
    registry = obj.__dict__.setdefault(_REGISTRY_ATTR, {})
    registry[attr_name] = (custom_to_json, custom_from_json)


def registered_state(obj: Any) -> dict[str, Any]:
    """The registered attributes' values (nested state modules as their state_dict)."""
    out: dict[str, Any] = {}
    for name, (to_json, _) in obj.__dict__.get(_REGISTRY_ATTR, {}).items():
        value = getattr(obj, name)
        if to_json is not None:
            value = to_json(value)
        elif _is_module(value):
            value = value.state_dict()
        out[name] = value
    return out


def load_registered(obj: Any, data: dict[str, Any], strict: bool = True) -> None:
    registry = obj.__dict__.get(_REGISTRY_ATTR, {})
    for name, (_, from_json) in registry.items():
        if name not in data:
            if strict:
                raise KeyError(
                    f"the saved state of {type(obj).__name__} has no {name!r}; it has {sorted(data)} "
                    f"(pass strict=False to keep the current value)"
                )
            continue
        value = data[name]
        current = getattr(obj, name, None)
        if from_json is not None:
            setattr(obj, name, from_json(value))
        elif _is_module(current):
            current.load_state_dict(value)
        else:
            setattr(obj, name, value)


def _is_module(value: Any) -> bool:
    return callable(getattr(value, "state_dict", None)) and callable(getattr(value, "load_state_dict", None))


class StateModule:
    """Base for user classes saved in sessions: call ``self.register_state("attr")``."""

    def register_state(
        self,
        attr_name: str,
        custom_to_json: Callable[[Any], Any] | None = None,
        custom_from_json: Callable[[Any], Any] | None = None,
    ) -> None:
        register_state(self, attr_name, custom_to_json, custom_from_json)

    def state_dict(self) -> dict[str, Any]:
        return registered_state(self)

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        load_registered(self, state_dict, strict)


# -- messages and turns -----------------------------------------------------------------------


def message_to_dict(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def message_from_dict(data: dict[str, Any]) -> Message:
    from ..messages import Message, ToolCall

    return Message(
        role=data["role"],
        content=data.get("content"),
        tool_calls=tuple(ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in data.get("tool_calls") or ()),
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name"),
    )


def top_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Top-level changes from ``before`` to ``after``: ``{"set": {...}, "unset": [...]}``."""
    if before is after:
        return {"set": {}, "unset": []}
    changed = {
        k: v
        for k, v in after.items()
        if k not in before or before[k] is not v and (type(before[k]) is not type(v) or before[k] != v)
    }
    return {"set": changed, "unset": [k for k in before if k not in after]}


def apply_diff(base: dict[str, Any], diff: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    out.update(diff.get("set") or {})
    for key in diff.get("unset") or ():
        out.pop(key, None)
    return out


def turn_entry(turn: TurnRecord, prev_after: dict[str, Any], *, first: bool = False) -> dict[str, Any]:
    """A turn as stored in a history: its states as patches, so N turns of a big state
    cost N changes on disk, not N copies.

    The loop records every state change as a StateChanged event, those before the prompt was
    rendered (user edits, run keywords) and those after; so, except for the first turn (whose
    state before is the initial state, not a change), the changed keys come from the events
    and nothing is compared key by key."""
    data = turn.to_dict()
    data.pop("state_before")
    data.pop("state_after")
    split = None if first else _changed_keys_by_phase(turn)
    if split is None:
        data["state_before_patch"] = top_diff(prev_after, turn.state_before)
        data["state_after_patch"] = top_diff(turn.state_before, turn.state_after)
    else:
        data["state_before_patch"] = keys_diff(turn.state_before, split[0])
        data["state_after_patch"] = keys_diff(turn.state_after, split[1])
    return data


def keys_diff(after: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``top_diff`` when the changed keys are already known."""
    keys = list(dict.fromkeys(keys))
    return {"set": {k: after[k] for k in keys if k in after}, "unset": [k for k in keys if k not in after]}


def _changed_keys_by_phase(turn: TurnRecord) -> tuple[list[str], list[str]] | None:
    """Top-level keys changed before and after the prompt was rendered; None when the turn
    has no rendered prompt or a change replaced the whole state."""
    before: list[str] = []
    after: list[str] = []
    target = before
    rendered = False
    for event in turn.events:
        if event.kind == "prompt_rendered":
            target, rendered = after, True
        elif event.kind == "state_changed":
            for op in event.patch:
                key = top_level_key(op["path"])
                if key is None:
                    return None
                target.append(key)
    return (before, after) if rendered else None


def finished_turns(history: History) -> list[TurnRecord]:
    """Turns that ended; a running turn is saved by the next save after it ends."""
    turns = list(history)
    if not turns or turns[-1].status != "running":
        return turns  # the usual case, without walking the history
    for i, turn in enumerate(turns):
        if turn.status == "running":
            return turns[:i]
    return turns


def history_state_dict(history: History) -> dict[str, Any]:
    entries = []
    prev: dict[str, Any] = {}
    for i, turn in enumerate(finished_turns(history)):
        entries.append(turn_entry(turn, prev, first=i == 0))
        prev = turn.state_after
    return {"turns": entries}


def history_from_state_dict(data: dict[str, Any]) -> list[TurnRecord]:
    from ..history import TurnRecord

    turns = []
    prev: dict[str, Any] = {}
    for i, entry in enumerate(data.get("turns") or []):
        entry = dict(entry)
        before = apply_diff(prev, entry.pop("state_before_patch", {}))
        after = apply_diff(before, entry.pop("state_after_patch", {}))
        entry.setdefault("state_before", before)
        entry.setdefault("state_after", after)
        turn = TurnRecord.from_dict(entry)
        turn.index = i
        turns.append(turn)
        prev = turn.state_after
    return turns


# -- agents -----------------------------------------------------------------------------------


def agent_top(agent: Agent) -> dict[str, Any]:
    return {
        "kind": "agentnb.Agent",
        "name": agent.name,
        "session_id": agent.session_id,
        "model": agent.model.label,
        "registered": registered_state(agent),
    }


def agent_state_dict(agent: Agent) -> dict[str, Any]:
    """The agent's whole state: data, conversation, turns (with every request/response)."""
    return {
        **agent_top(agent),
        "state": dict(agent.state.data),
        "messages": [message_to_dict(m) for m in agent.state.messages],
        "history": history_state_dict(agent.history),
    }


def load_agent_state_dict(agent: Agent, data: dict[str, Any], strict: bool = True) -> None:
    """Restore what ``agent_state_dict`` saved into an agent built by the same code."""
    turns = history_from_state_dict(data.get("history") or {})
    messages = [message_from_dict(m) for m in data.get("messages") or []]
    agent.state.replace_data(copy.deepcopy(data.get("state") or {}))
    agent.state.messages[:] = messages
    agent.history.clear()
    for turn in turns:
        agent.history.append(turn)
    # The next turn's StateChanged diff starts from the state the last turn left.
    agent._last_state = copy.deepcopy(turns[-1].state_after) if turns else None
    if isinstance(data.get("session_id"), str):
        agent.session_id = data["session_id"]
    load_registered(agent, data.get("registered") or {}, strict)


@dataclass
class AgentCursor:
    """What a session last stored for one agent, to write only what changed since."""

    owner: Any
    """A weak reference to the agent."""
    turns: int
    """Finished turns on disk."""
    last_turn: Any
    """The last saved TurnRecord (to notice a history that was replaced)."""
    state: dict[str, Any]
    """The state data as saved (values not shared with the live state)."""
    messages: list[Any]
    """The conversation as saved."""
    top: dict[str, Any] = field(default_factory=dict)
    """Small top-level fields as saved (encoded)."""


def agent_cursor(agent: Agent, prefix: str) -> AgentCursor:
    done = finished_turns(agent.history)
    return AgentCursor(
        owner=weakref.ref(agent),
        turns=len(done),
        last_turn=done[-1] if done else None,
        state=copy.deepcopy(agent.state.data),
        messages=list(agent.state.messages),
        top=encode(agent_top(agent), prefix),
    )


def agent_delta(
    agent: Agent, cursor: AgentCursor | None, prefix: str, *, after_turn: bool = False
) -> list[dict[str, Any]] | None:
    """Encoded ``delta`` operations since ``cursor`` (updated in place); None when a full
    replace is needed (no cursor, another agent object, or a history that was rewritten).

    ``after_turn``: the save comes right as a turn ended (autosave), so the state changed only
    through the turns since the cursor, whose change records name the keys: no need to compare
    the whole state with the last save."""
    if cursor is None or cursor.owner() is not agent:
        return None
    history = agent.history
    if len(history) < cursor.turns or (cursor.turns and history[cursor.turns - 1] is not cursor.last_turn):
        return None
    done = finished_turns(history)
    ops: list[dict[str, Any]] = []
    if len(done) > cursor.turns:
        prev = done[cursor.turns - 1].state_after if cursor.turns else {}
        entries = []
        for i in range(cursor.turns, len(done)):
            entries.append(encode(turn_entry(done[i], prev, first=i == 0), f"{prefix}.history.turns[{i}]"))
            prev = done[i].state_after
        ops.append({"op": "splice", "path": ["history", "turns"], "keep": None, "append": entries})
    live = agent.state.data
    keys = [top_level_key(op["path"]) for turn in done[cursor.turns :] for c in turn.state_changes for op in c.patch]
    if after_turn and len(done) > cursor.turns and history[-1] is done[-1] and None not in keys:
        diff = keys_diff(live, keys)  # type: ignore[arg-type]
    else:
        diff = top_diff(cursor.state, live)
    if diff["set"] or diff["unset"]:
        diff["set"] = {k: copy.deepcopy(v) for k, v in diff["set"].items()}
        encoded = encode(diff["set"], f"{prefix}.state")
        ops.append({"op": "merge", "path": ["state"], "set": encoded, "unset": diff["unset"]})
    messages = agent.state.messages
    known = len(cursor.messages)
    if known <= len(messages) and (known == 0 or messages[known - 1] is cursor.messages[-1]):
        keep = known  # the conversation only grew (the usual case): no need to walk it
    else:
        keep = 0
        limit = min(len(messages), known)
        while keep < limit and (messages[keep] is cursor.messages[keep] or messages[keep] == cursor.messages[keep]):
            keep += 1
    if keep < len(cursor.messages) or keep < len(messages):
        added = encode([message_to_dict(m) for m in messages[keep:]], f"{prefix}.messages")
        # A conversation that only grew is appended; one that was cut is rewritten from there.
        kept: int | None = None if keep == len(cursor.messages) else keep
        ops.append({"op": "splice", "path": ["messages"], "keep": kept, "append": added})
    top = encode(agent_top(agent), prefix)
    top_changes = top_diff(cursor.top, top)
    if top_changes["set"]:
        ops.append({"op": "merge", "path": [], "set": top_changes["set"], "unset": []})
    # Only now that everything encoded: move the cursor.
    state = dict(cursor.state)
    for key in diff["unset"]:
        state.pop(key, None)
    state.update(diff["set"])
    cursor.state = state
    cursor.messages = list(messages)
    cursor.turns = len(done)
    cursor.last_turn = done[-1] if done else None
    cursor.top = top
    return ops
