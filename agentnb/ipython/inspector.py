"""The live inspector: an anywidget that follows an agent's events.

``Inspector.for_agent(agent)`` returns the one inspector of an agent; displaying it in several
cells shows several views of the same widget. The kernel side keeps almost nothing: it
subscribes to the agent, turns each event into a small JSON-safe dict and sends it as a custom
message. The browser keeps the turns it has seen and applies each event to them — a state change
arrives as its JSON patch with the turn's change summary so far (computed here, by
``agentnb.diff``), never as the whole state. A snapshot (turn summaries, the last turn, its
state) sits in a synced trait, refreshed when the widget is displayed and after each turn, so a
new view renders at once even while the kernel is busy with queued cells. Other whole turns and
model request payloads are sent only when the browser asks for them (time travel, the Request
tab), so a long history or a large state costs little per update.

The front end is built from the ES modules in ``js/`` (at the repository root) into
``static/inspector.js`` (``make js``); its styles are ``static/inspector.css``; the wire names
both sides use are in ``wire.py``; the compact forms of events and summaries in ``compact.py``.
"""

from __future__ import annotations

import json
import pathlib
import time
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import anywidget
import traitlets

from ..compare import compare_turns
from ..diff import make_patch
from ..errors import AgentnbError, StateEditError
from ..events import Event, PromptRendered, RunFailed, RunFinished, RunStarted, StateChanged, TextDelta
from ..text import one_line
from . import wire
from .record import static_view
from .compact import (
    compact_changes,
    compact_comparison,
    compact_edit,
    compact_event,
    compact_prompt,
    compact_tokens,
    json_text,
    jsonable,
    model_info,
    turn_state,
    turn_summary,
)

if TYPE_CHECKING:
    from ..agent import Agent
    from ..history import TurnRecord

STATIC = pathlib.Path(__file__).parent / "static"

TEXT_FLUSH_SECONDS = 0.05
"""Streamed text is sent at most this often (and always before the next other event)."""

TRAIT_STATE_BYTES = 64_000
"""After a turn the snapshot trait carries the state only up to this size (as JSON), so a large
state is not resent every turn; a view asks for it when it shows it. A display always carries it."""


class Inspector(anywidget.AnyWidget):
    """A live view of one agent: prompt, request, tool calls, state, context and history of its
    turns."""

    _esm = STATIC / "inspector.js"
    _css = STATIC / "inspector.css"

    agent_name = traitlets.Unicode("").tag(sync=True)
    """The agent's name (header)."""
    model_info = traitlets.Dict().tag(sync=True)
    """The agent's model: label, kind (scripted/replay/local/openai) and origin, if any."""
    view_snapshot = traitlets.Dict().tag(sync=True)
    """The latest snapshot (see ``snapshot``), for views created from now on."""

    _by_agent: ClassVar[weakref.WeakKeyDictionary[Any, Inspector]] = weakref.WeakKeyDictionary()

    def __init__(self, agent: Agent, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.agent = agent
        self.agent_name = agent.name
        self.model_info = model_info(agent)
        self.seq = 0
        """Number of event messages sent so far."""
        self.messages_sent = 0
        """Custom messages sent to the browser (all kinds)."""
        self.bytes_sent = 0
        """Their total size as JSON."""
        self.last_message_bytes = 0
        """Size of the last message sent, as JSON."""
        self._turn_of: dict[str, int] = {}
        self._live_text: dict[str, list[str]] = {}
        """Text streamed so far per running turn, as chunks (joined only for a snapshot)."""
        self._pending: tuple[str, int, str] | None = None  # (run_id, call, text) not sent yet
        self._last_flush = 0.0
        self._finished_changes: tuple[TurnRecord, dict[str, Any]] | None = None
        self._prompts: dict[str, PromptRendered] = {}
        """The prompt each running turn was sent with (a turn recounted at its end sends the new counts)."""
        self._preview_message: str | None = None
        """The message last previewed in the browser: previews after an edit use it."""
        self.on_msg(self._on_msg)
        self._unsubscribe = agent.subscribe(self._on_event)
        self._unsubscribe_edits = agent.on_edit(self._on_edit)

    @classmethod
    def for_agent(cls, agent: Agent) -> Inspector:
        """The inspector of ``agent``, created on first use."""
        inspector = cls._by_agent.get(agent)
        if inspector is None or inspector.agent is not agent:
            inspector = cls(agent)
            cls._by_agent[agent] = inspector
        return inspector

    def __repr__(self) -> str:
        # Deterministic text/plain for nbval: no memory address, nothing that changes per run.
        return f"Inspector(agent={self.agent.name!r}, turns={len(self.agent.history)})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # The trait update goes out before the display message, so the view this display
        # creates starts from the agent as it is now.
        self.publish_snapshot()
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            # Where the live view cannot render (GitHub, nbconvert HTML, an untrusted notebook),
            # the same output shows this static view instead.
            data["text/html"] = static_view(self.agent)
        return bundle

    def close(self) -> None:
        """Stop following the agent and close the widget."""
        self._unsubscribe()
        self._unsubscribe_edits()
        if Inspector._by_agent.get(self.agent) is self:
            del Inspector._by_agent[self.agent]
        super().close()

    # -- kernel -> browser ----------------------------------------------------------------

    def _post(self, message: dict[str, Any]) -> None:
        message = self._count(message)
        self.send(message)

    def _count(self, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` made plain JSON, counted as sent."""
        try:
            # One encoding both checks that the message is plain JSON and measures it.
            size = len(json.dumps(message, separators=(",", ":"), allow_nan=False))
        except (TypeError, ValueError):
            message = jsonable(message)  # a state value that is not JSON: sent as its repr
            size = len(json.dumps(message, separators=(",", ":")))
        self.messages_sent += 1
        self.bytes_sent += size
        self.last_message_bytes = size
        return message

    def publish_snapshot(self, *, state_limit: int | None = None) -> None:
        """Put a fresh snapshot in the synced trait; with ``state_limit``, leave out a state
        larger than that (in bytes of JSON)."""
        self.view_snapshot = self._count(self.snapshot(state_limit=state_limit))

    def _on_event(self, event: Event) -> None:
        """Subscriber: send what this event changed, nothing more."""
        if isinstance(event, TextDelta):
            self._live_text.setdefault(event.run_id, []).append(event.text)
            pending = self._pending
            if pending is not None and (pending[0] != event.run_id or pending[1] != event.call):
                self._flush_text()
                pending = None
            self._pending = (event.run_id, event.call, (pending[2] if pending else "") + event.text)
            if time.monotonic() - self._last_flush >= TEXT_FLUSH_SECONDS:
                self._flush_text()
            return
        self._flush_text()
        if isinstance(event, RunStarted):
            self._turn_of[event.run_id] = event.turn
            info = model_info(self.agent)
            if info != self.model_info:
                self.model_info = info
        elif isinstance(event, (RunFinished, RunFailed)):
            self._live_text.pop(event.run_id, None)
        if isinstance(event, PromptRendered):
            self._prompts[event.run_id] = event
        body = compact_event(event)
        record = self._record_of(event.run_id)
        if record is not None and isinstance(event, (StateChanged, RunFinished, RunFailed)):
            body[wire.CHANGES] = self._changes(record)
        sent_prompt = self._prompts.pop(event.run_id, None) if isinstance(event, (RunFinished, RunFailed)) else None
        if record is not None and isinstance(event, (RunFinished, RunFailed)):
            body["replayed"] = record.replayed
            prompt = record.prompt
            if prompt is not None and prompt is not sent_prompt:
                # Counted again at the end (the tokenizer came up during the turn): the new counts.
                body["prompt_tokens"] = compact_tokens(prompt.tokens)
        self._send_event(event.run_id, body)
        if isinstance(event, (RunFinished, RunFailed)):
            self.publish_snapshot(state_limit=TRAIT_STATE_BYTES)

    def _flush_text(self) -> None:
        self._last_flush = time.monotonic()
        if self._pending is None:
            return
        run_id, call, text = self._pending
        self._pending = None
        self._send_event(run_id, {"kind": "text_delta", "call": call, "text": text})

    def _send_event(self, run_id: str, body: dict[str, Any]) -> None:
        turn = self._turn_index(run_id)
        if turn is None:
            return
        self.seq += 1
        self._post({wire.KIND: wire.EVENT, wire.SEQ: self.seq, wire.TURN_INDEX: turn, wire.EVENT_BODY: body})

    def _turn_index(self, run_id: str) -> int | None:
        turn = self._turn_of.get(run_id)
        if turn is None:
            # Subscribed in the middle of a run: find it in the history.
            for record in reversed(self.agent.history):
                if record.run_id == run_id:
                    turn = self._turn_of[run_id] = record.index
                    break
        return turn

    def _record_of(self, run_id: str) -> TurnRecord | None:
        index = self._turn_index(run_id)
        history = self.agent.history
        if index is None or not 0 <= index < len(history) or history[index].run_id != run_id:
            return None
        return history[index]

    def _changes(self, record: TurnRecord) -> dict[str, Any]:
        """What ``record`` changed, for the wire: so far (against the live state) while it runs;
        for a finished turn computed once (its run_finished message and the snapshot after it)."""
        if record.status == "running":
            return compact_changes(record.changes(self.agent.session_state))
        if self._finished_changes is None or self._finished_changes[0] is not record:
            self._finished_changes = (record, compact_changes(record.changes()))
        return self._finished_changes[1]

    def snapshot(self, *, state_limit: int | None = None) -> dict[str, Any]:
        """What a fresh view needs: every turn's summary, the last turn in full (events, change
        summary, state). With ``state_limit``, a state larger than that (as JSON) is left out."""
        self._flush_text()
        history = self.agent.history
        message: dict[str, Any] = {
            wire.KIND: wire.SNAPSHOT,
            wire.SEQ: self.seq,
            wire.SUMMARIES: [turn_summary(t) for t in history],
        }
        if len(history):
            last = history[-1]
            state = turn_state(last, self.agent)
            message[wire.TURN_INDEX] = last.index
            message[wire.EVENTS] = [compact_event(e) for e in last.events]
            message[wire.CHANGES] = self._changes(last)
            message[wire.LIVE_TEXT] = "".join(self._live_text.get(last.run_id, ()))
        else:
            state = self.agent.session_state
        text = json_text(state)
        if state_limit is None or len(text) <= state_limit:
            message[wire.STATE] = json.loads(text)
        if self.agent.state_edits:
            message.update(self._live(state_limit))
        return message

    # -- edits by hand ----------------------------------------------------------------------

    def _live(self, state_limit: int | None = TRAIT_STATE_BYTES) -> dict[str, Any]:
        """The pending edits and the state with them: whole when small (or when there is no turn
        to patch against), else as a patch against the last turn's state."""
        live = self.agent.session_state
        out: dict[str, Any] = {wire.EDITS: [compact_edit(e) for e in self.agent.state_edits]}
        history = self.agent.history
        text = json_text(live)
        if not len(history) or history[-1].status == "running" or state_limit is None or len(text) <= state_limit:
            out[wire.LIVE_STATE] = json.loads(text)
        else:
            out[wire.LIVE_PATCH] = jsonable(make_patch(history[-1].state_after, live))
            out[wire.TURN_INDEX] = history[-1].index
        return out

    def _on_edit(self, _edit: Any, _undone: bool) -> None:
        """An edit (from the browser or from Python): send the edited state, then what the
        model would receive next."""
        self._post({wire.KIND: wire.EDITED, **self._live()})
        try:
            preview = self._preview(self._next_message())
        except Exception as exc:  # a failing instructions callable or context provider
            preview = {wire.KIND: wire.ERROR, wire.TEXT: f"preview: {type(exc).__name__}: {exc}"}
        self._post(preview)

    def _next_message(self) -> str:
        """What a preview after an edit shows: the message last previewed, else the last turn's."""
        if self._preview_message is not None:
            return self._preview_message
        history = self.agent.history
        return history[-1].message if len(history) else ""

    def _preview(self, text: str) -> dict[str, Any]:
        observation = self.agent.observe(text)
        return {
            wire.KIND: wire.PREVIEW,
            wire.MESSAGE: text,
            **compact_prompt(observation),
            wire.REQUEST: jsonable(observation.request),
            wire.EDITS: len(self.agent.state_edits),
        }

    def _edit(self, content: Mapping[str, Any]) -> dict[str, Any] | None:
        """Apply an edit from the browser; a refusal goes back as ``edit_failed``."""
        path = content.get(wire.PATH)
        try:
            if not isinstance(path, str):
                raise StateEditError("an edit needs a path (a key name or a JSON pointer)")
            if content.get(wire.OP) == "remove":
                self.agent.remove_state(path)
            else:
                raw = content.get(wire.VALUE)
                if not isinstance(raw, str):
                    raise StateEditError("an edit needs a value (JSON text)")
                try:
                    value = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise StateEditError(f"not JSON: {exc.msg} at position {exc.pos}") from None
                self.agent.edit_state(path, value)
        except (AgentnbError, ValueError, TypeError, KeyError) as exc:
            return {wire.KIND: wire.EDIT_FAILED, wire.PATH: path, wire.TEXT: one_line(exc)}
        return None  # the agent's edit listener sends the result

    # -- two turns side by side ---------------------------------------------------------------

    def _compare(self, content: Mapping[str, Any]) -> dict[str, Any]:
        agents = self._agents()
        left, right = content.get(wire.LEFT), content.get(wire.RIGHT)
        if not (isinstance(left, Mapping) and isinstance(right, Mapping)):
            left, right = self._default_pair(content.get(wire.TURN_INDEX))
        a, b = (self._side(side, agents) for side in (left, right))
        comparison = compare_turns(a[0].history[a[1]], b[0].history[b[1]])
        return {
            wire.KIND: wire.COMPARISON,
            "comparison": compact_comparison(comparison),
            "agents": [{"name": name, "turns": len(agent.history), "parent": agent.parent.name if agent.parent else None} for name, agent in agents.items()],
            wire.LEFT: {"agent": a[0].name, "turn": a[1]},
            wire.RIGHT: {"agent": b[0].name, "turn": b[1]},
        }

    def _agents(self) -> dict[str, Agent]:
        """The agents a comparison can pick from: this one, its parent, the agents with an
        inspector and those in the notebook's namespace, by name."""
        found: dict[str, Agent] = {self.agent.name: self.agent}
        candidates = [self.agent.parent, *Inspector._by_agent.keys(), *_namespace_agents()]
        for agent in candidates:
            if agent is not None and agent.name not in found:
                found[agent.name] = agent
        return found

    def _default_pair(self, selected: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """A fork beside its parent at the same turn; a parent beside its newest fork; else the
        selected turn beside the one before it."""
        agent = self.agent
        count = len(agent.history)
        if not count:
            raise LookupError(f"agent {agent.name!r} has no turns to compare yet")
        index = selected if isinstance(selected, int) and 0 <= selected < count else count - 1
        parent = agent.parent
        if parent is not None and len(parent.history):
            return {"agent": parent.name, "turn": min(index, len(parent.history) - 1)}, {"agent": agent.name, "turn": index}
        forks = [a for a in self._agents().values() if a.parent is agent and len(a.history)]
        if forks:
            fork = forks[-1]
            return {"agent": agent.name, "turn": index}, {"agent": fork.name, "turn": min(index, len(fork.history) - 1)}
        return {"agent": agent.name, "turn": max(0, index - 1)}, {"agent": agent.name, "turn": index}

    def _side(self, side: Mapping[str, Any], agents: Mapping[str, Agent]) -> tuple[Agent, int]:
        name, turn = side.get("agent"), side.get("turn")
        agent = agents.get(name) if isinstance(name, str) else None
        if agent is None:
            raise LookupError(f"there is no agent {name!r} to compare; known: {', '.join(agents)}")
        count = len(agent.history)
        if not isinstance(turn, int) or not 0 <= turn < count or agent.history[turn].status == "running":
            raise LookupError(f"agent {agent.name!r} has no finished turn {turn!r} (it has {count} turn(s))")
        return agent, turn

    # -- browser -> kernel ----------------------------------------------------------------

    def _on_msg(self, _widget: Any, content: Mapping[str, Any], _buffers: Any) -> None:
        kind = content.get(wire.KIND)
        try:
            reply = self._answer(kind, content)
        except Exception as exc:  # a bad request must not leave the view waiting silently
            reply = {wire.KIND: wire.ERROR, wire.TEXT: f"{kind}: {type(exc).__name__}: {exc}"}
        if reply is not None:
            self._post(reply)

    def _answer(self, kind: Any, content: Mapping[str, Any]) -> dict[str, Any] | None:
        if kind == wire.SYNC:
            return self.snapshot()
        if kind == wire.NEED_TURN:
            record = self._record(content.get(wire.TURN_INDEX))
            state = turn_state(record, self.agent)
            return {
                wire.KIND: wire.TURN,
                wire.TURN_INDEX: record.index,
                wire.EVENTS: [compact_event(e) for e in record.events],
                wire.CHANGES: self._changes(record),
                wire.STATE: jsonable(state),
            }
        if kind == wire.NEED_REQUEST:
            record = self._record(content.get(wire.TURN_INDEX))
            call = content.get(wire.CALL)
            calls = {c.index: c for c in record.model_calls}
            if call not in calls:
                raise LookupError(f"turn {record.index} has no model call {call!r}")
            return {
                wire.KIND: wire.REQUEST,
                wire.TURN_INDEX: record.index,
                wire.CALL: call,
                wire.REQUEST: jsonable(calls[call].request),
            }
        if kind == wire.PREVIEW:
            text = content.get(wire.MESSAGE)
            if not isinstance(text, str):
                raise TypeError("a preview needs a message (text)")
            self._preview_message = text
            return self._preview(text)
        if kind == wire.EDIT:
            return self._edit(content)
        if kind == wire.UNDO:
            self.agent.undo_edit()
            return None  # the agent's edit listener sends the result
        if kind == wire.COMPARE:
            return self._compare(content)
        raise ValueError(f"unknown message kind {kind!r}")

    def _record(self, index: Any) -> TurnRecord:
        history = self.agent.history
        if not isinstance(index, int) or not 0 <= index < len(history):
            raise LookupError(f"there is no turn {index!r}; the agent has {len(history)} turn(s)")
        return history[index]


def _namespace_agents() -> list[Agent]:
    """Agents bound in the running IPython shell's namespace (none outside IPython)."""
    from IPython import get_ipython

    from ..agent import Agent

    shell = get_ipython()
    if shell is None:
        return []
    return [v for k, v in list(shell.user_ns.items()) if isinstance(v, Agent) and not k.startswith("_")]


__all__ = ["Inspector"]
