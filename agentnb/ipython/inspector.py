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

from ..events import Event, RunFailed, RunFinished, RunStarted, StateChanged, TextDelta
from . import wire
from .record import static_view
from .compact import (
    compact_changes,
    compact_event,
    compact_section,
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
        self.on_msg(self._on_msg)
        self._unsubscribe = agent.subscribe(self._on_event)

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
        body = compact_event(event)
        record = self._record_of(event.run_id)
        if record is not None and isinstance(event, (StateChanged, RunFinished, RunFailed)):
            body[wire.CHANGES] = self._changes(record)
        if record is not None and isinstance(event, (RunFinished, RunFailed)):
            body["replayed"] = record.replayed
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
        return message

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
            observation = self.agent.observe(text)
            return {
                wire.KIND: wire.PREVIEW,
                wire.MESSAGE: text,
                "sections": [compact_section(s) for s in observation.sections],
                "user_prompt": observation.user_prompt,
                "notes": list(observation.notes),
                wire.REQUEST: jsonable(observation.request),
            }
        raise ValueError(f"unknown message kind {kind!r}")

    def _record(self, index: Any) -> TurnRecord:
        history = self.agent.history
        if not isinstance(index, int) or not 0 <= index < len(history):
            raise LookupError(f"there is no turn {index!r}; the agent has {len(history)} turn(s)")
        return history[index]


__all__ = ["Inspector"]
