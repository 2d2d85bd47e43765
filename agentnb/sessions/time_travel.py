"""Time travel and tinkering, as a part of ``Agent``: snapshots, a fork from any turn, edits of the
state by hand between turns (each undoable), and two turns compared side by side.

``TimeTravel`` is mixed into ``agentnb.agent.Agent``; it uses the agent's state, history and
run lock, and builds a fork as ``type(self)(name, **definition)``.
"""

from __future__ import annotations

import copy
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError
from ..history.compare import compare_turns
from ..history.comparison import Comparison
from ..history.records import TurnRecord
from ..messages import Message
from ..state.diff import MISSING
from ..state.edits import StateEdit, edit, undo


@dataclass(frozen=True)
class AgentSnapshot:
    """An agent's state, conversation and turns at one moment (``agent.snapshot()``)."""

    state: dict[str, Any]
    """The state data (a deep copy)."""
    messages: tuple[Message, ...]
    """The conversation."""
    turns: tuple[TurnRecord, ...]
    """The turns (records are never changed once finished, so they are shared)."""


class TimeTravel:
    """Snapshots, forks, edits and comparisons of an agent (mixed into ``Agent``)."""

    name: str
    state: Any
    history: Any
    model: Any
    definition: Any
    _initial_state: dict[str, Any]
    _edits: list[StateEdit]
    _edit_listeners: list[Callable[[StateEdit, bool], Any]]
    _parent: weakref.ref[Any] | None
    forked_at: int | None
    _running: Callable[[], Any]

    def snapshot(self) -> AgentSnapshot:
        """A copy of the state, the conversation and the turns, to ``restore`` later."""
        return AgentSnapshot(copy.deepcopy(self.state.data), tuple(self.state.messages), _kept(self.history))

    def restore(self, snapshot: AgentSnapshot) -> None:
        """Put the agent back as it was at ``snapshot`` (checked against the state schema)."""
        with self._running():
            self.state.replace_data(copy.deepcopy(snapshot.state))
            self.state.messages[:] = list(snapshot.messages)
            self.history.replace(snapshot.turns)

    def reset(self) -> None:
        """Back to the state the agent was defined with: no conversation, no turns."""
        self.restore(AgentSnapshot(self._initial_state, (), ()))

    def snapshot_at(self, turn: int) -> AgentSnapshot:
        """The agent as it was at the end of turn ``turn`` (numbered from 1, as shown): the state
        that turn ended with, the conversation up to it, and the turns up to it."""
        history = self.history
        number = _turn_number(turn, len(history), f"agent {self.name!r}")
        record = history[number - 1]
        if record.status == "running":
            raise ConfigurationError(
                f"turn {number} of agent {self.name!r} is still running; fork from it once it has ended"
            )
        turns = _kept(history[:number])
        # The conversation grows by each successful turn's own messages (loop.Turn), in order.
        messages = tuple(m for t in turns if t.status == "ok" for m in t.messages)
        return AgentSnapshot(copy.deepcopy(record.state_after), messages, turns)

    def fork(self, name: str | None = None, *, turn: int | None = None) -> Any:
        """A new agent with the same definition and a copy of this one's state, conversation
        and turns — as they are now, or as they were at the end of turn ``turn`` (1 = the first)
        — that goes its own way from there. ``forked.parent`` is this agent. When this agent is
        recorded (a notebook's ``%%agent``, ``attach_recording``), the fork is recorded in the
        same place under its own name, replaying as this agent's recording does (its mode:
        ``strict`` under nbval)."""
        forked = self._forked(name or f"{self.name}_fork", turn)
        recording = getattr(self, "recording", None)
        if recording is not None:
            # Recorded beside its parent, under its own name (as %agentnb fork does).
            forked.attach_recording(recording.session, forked.name, mode=recording.mode)
        return forked

    def _forked(self, name: str, turn: int | None) -> Any:
        """The fork ``fork`` makes, not recorded yet (a team's fork forks its members this way:
        they are recorded with it)."""
        snapshot = self.snapshot() if turn is None else self.snapshot_at(turn)
        forked = self.definition.build(name)
        forked.model = self.model
        forked.restore(snapshot)
        forked._parent = weakref.ref(self)
        forked.forked_at = len(snapshot.turns)
        return forked

    @property
    def parent(self) -> Any:
        """The agent this one was forked from (while it exists), else None."""
        return self._parent() if self._parent is not None else None

    # -- edits by hand between turns ----------------------------------------------------------

    @property
    def state_edits(self) -> tuple[StateEdit, ...]:
        """The edits made with ``edit_state`` / ``remove_state`` since the last turn, oldest
        first; the next turn records them as changes by ``user``."""
        return tuple(self._edits)

    def edit_state(self, path: str, value: Any) -> StateEdit:
        """Set a state key (``"budget"``) or a path below one (``"/items/0"``, ``"/items/-"`` to
        append) to ``value``, checked against the state schema; ``undo_edit()`` takes it back.
        The next turn sees it as a change by ``user``; ``observe()`` shows the prompt it makes."""
        return self._edit(path, copy.deepcopy(value))

    def remove_state(self, path: str) -> StateEdit:
        """Remove a state key or a path below one (undoable, like ``edit_state``)."""
        return self._edit(path, MISSING)

    def undo_edit(self) -> StateEdit:
        """Take back the last edit made since the last turn; returns it."""
        if not self._edits:
            raise ConfigurationError(f"agent {self.name!r} has no edit to undo since its last turn")
        with self._running():
            done = self._edits.pop()
            undo(self.state, done)
        self._notify_edit(done, undone=True)
        return done

    def on_edit(self, callback: Callable[[StateEdit, bool], Any]) -> Callable[[], None]:
        """Call ``callback(edit, undone)`` after each edit and undo; returns an unsubscribe function."""
        self._edit_listeners.append(callback)
        return lambda: self._edit_listeners.remove(callback) if callback in self._edit_listeners else None

    def _edit(self, path: str, value: Any) -> StateEdit:
        with self._running():
            done = edit(self.state, path, value)
            self._edits.append(done)
        self._notify_edit(done, undone=False)
        return done

    def _notify_edit(self, done: StateEdit, *, undone: bool) -> None:
        for callback in list(self._edit_listeners):
            try:
                callback(done, undone)
            except Exception as exc:  # a broken viewer must never break an edit
                warnings.warn(f"agentnb: edit listener {callback!r} failed: {exc}", stacklevel=3)

    # -- two turns side by side ----------------------------------------------------------------

    def compare(
        self, other: Any = None, *, turn: int | None = None, other_turn: int | None = None
    ) -> Comparison:
        """This agent's turn ``turn`` (default: its last) beside ``other``'s turn ``other_turn``
        (default: its last) — or, without ``other``, beside this agent's own turn
        ``other_turn``: system prompt by section, requests, tool calls, state, answers, and why
        they differ. Displays as a static record."""
        if other is None and other_turn is None:
            raise ConfigurationError(
                "compare with another agent (agent.compare(fork)) or another turn (agent.compare(turn=2, other_turn=3))"
            )
        right = self if other is None else other
        return compare_turns(self.turn_record(turn), right.turn_record(other_turn))

    def turn_record(self, turn: int | None = None) -> TurnRecord:
        """Turn ``turn`` (1 = the first; default: the last), finished."""
        history = self.history
        number = _turn_number(
            len(history) if turn is None and len(history) else turn if turn is not None else 1,
            len(history),
            f"agent {self.name!r}",
        )
        record = history[number - 1]
        if record.status == "running":
            raise ConfigurationError(
                f"turn {number} of agent {self.name!r} is still running; compare it once it has ended"
            )
        return record


def _turn_number(turn: Any, count: int, whose: str) -> int:
    """A turn number as shown (1 = the first), checked against ``count`` turns."""
    if isinstance(turn, bool) or not isinstance(turn, int):
        raise ConfigurationError(f"turn must be a turn number (1 = the first), got {turn!r}")
    if not 1 <= turn <= count:
        have = f"turns 1 to {count}" if count else "no turns yet"
        raise ConfigurationError(f"{whose} has no turn {turn}: it has {have} (turns are numbered from 1)")
    return turn


def _kept(turns: Any) -> tuple[TurnRecord, ...]:
    """Turns as a snapshot keeps them: shared, but for a paused one (continued in place), copied."""
    return tuple(t.own_copy() if t.status == "paused" else t for t in turns)


__all__ = ["AgentSnapshot", "TimeTravel"]
