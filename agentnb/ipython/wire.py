"""The inspector's wire protocol: every message kind and key in one place.

The kernel and the browser talk through anywidget custom messages (``widget.send`` /
``model.send``) and one synced trait. Each message is a small dict whose kind sits under
``KIND``. The browser's copy of these names lives in ``js/wire.js`` (``const WIRE = {...}``); a
test checks the two agree, so a rename here that is not made there fails the suite.

The synced trait ``TRAIT_SNAPSHOT`` holds a snapshot, refreshed when the widget is displayed and
after each turn: a new view renders from it at once, without asking the kernel (which may be busy
running queued cells), then applies the events numbered after it.

Kernel → browser:
  snapshot  everything a fresh view needs: one summary per turn, the selected turn's events,
            state and change summary, and the event counter ``seq`` it is current to.
  event     one compact event of a run, numbered ``seq``; the browser applies it to what it holds
            (a state change carries its JSON patch and the turn's change summary so far, never
            the whole state).
  turn      a turn's events, state and change summary, sent when the browser asks for it (time
            travel).
  request   one model call's payload, sent when the browser asks for it (Request tab).
  preview   what the model would receive for a message (``agent.observe``), on request.
  error     a request from the browser could not be served; ``text`` says why.

Browser → kernel:
  sync      send a snapshot (the browser noticed a gap in ``seq``).
  need_turn send turn ``turn``.
  need_request  send the payload of call ``call`` of turn ``turn``.
  preview   observe ``message`` without calling the model.
"""

from __future__ import annotations

KIND = "k"
"""Key of every message that says what kind of message it is."""

# kernel -> browser
SNAPSHOT = "snapshot"
EVENT = "event"
TURN = "turn"
REQUEST = "request"
PREVIEW = "preview"
ERROR = "error"

# browser -> kernel
SYNC = "sync"
NEED_TURN = "need_turn"
NEED_REQUEST = "need_request"

# keys
SEQ = "seq"
"""Running number of event messages; a gap makes the browser ask for a snapshot."""
TURN_INDEX = "turn"
"""The turn a message is about (0-based index in ``agent.history``)."""
CALL = "call"
"""A model call within a turn (0-based)."""
EVENTS = "events"
"""A turn's compact events, in order."""
EVENT_BODY = "e"
"""The compact event inside an ``event`` message."""
STATE = "state"
"""A whole state (snapshot and turn replies only)."""
SUMMARIES = "turns"
"""One summary per turn (snapshot only)."""
LIVE_TEXT = "live_text"
"""Text streamed so far in the running turn (snapshot only)."""
MESSAGE = "message"
"""The user's message of a preview request."""
TEXT = "text"
"""Human-readable text of an ``error`` message."""
CHANGES = "changes"
"""What a turn changed in the state, as ``agentnb.diff`` summarises it: ``{"keys": [...],
"paths": [...], "more": N}``, each change ``{"path", "key", "how", "authors", "old", "new"}``
with old and new as short JSON text (null where there is no value)."""

# synced traits (small, rarely changing)
TRAIT_AGENT = "agent_name"
TRAIT_MODEL = "model_info"
TRAIT_SNAPSHOT = "view_snapshot"
"""The synced trait holding the latest snapshot (see the module docstring)."""

WIRE: dict[str, str] = {
    "KIND": KIND,
    "SNAPSHOT": SNAPSHOT,
    "EVENT": EVENT,
    "TURN": TURN,
    "REQUEST": REQUEST,
    "PREVIEW": PREVIEW,
    "ERROR": ERROR,
    "SYNC": SYNC,
    "NEED_TURN": NEED_TURN,
    "NEED_REQUEST": NEED_REQUEST,
    "SEQ": SEQ,
    "TURN_INDEX": TURN_INDEX,
    "CALL": CALL,
    "EVENTS": EVENTS,
    "EVENT_BODY": EVENT_BODY,
    "STATE": STATE,
    "SUMMARIES": SUMMARIES,
    "LIVE_TEXT": LIVE_TEXT,
    "MESSAGE": MESSAGE,
    "TEXT": TEXT,
    "CHANGES": CHANGES,
    "TRAIT_AGENT": TRAIT_AGENT,
    "TRAIT_MODEL": TRAIT_MODEL,
    "TRAIT_SNAPSHOT": TRAIT_SNAPSHOT,
}
"""Every name above, as the browser's ``WIRE`` object spells it (checked by a test)."""
