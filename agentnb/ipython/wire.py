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
  preview   what the model would receive for a message (``agent.observe``), on request, and
            again after every edit of the state (for the last message previewed, else the last
            turn's message), so the next prompt shows an edit at once.
  edited    the state was edited by hand (from the browser or Python): the pending edits and
            the live state (whole when small, else a patch against the last turn's state).
  edit_failed  an edit was refused (bad JSON, a path that is not there, a schema violation);
            ``path`` and ``text`` say where and why.
  comparison  two turns side by side (``agentnb.compare``), the agents to choose from, and
            which turns were compared.
  error     a request from the browser could not be served; ``text`` says why.

Browser → kernel:
  sync      send a snapshot (the browser noticed a gap in ``seq``).
  need_turn send turn ``turn``.
  need_request  send the payload of call ``call`` of turn ``turn``.
  preview   observe ``message`` without calling the model.
  edit      set ``path`` to the JSON text ``value``, or with ``op`` "remove" remove it.
  undo      take back the last edit.
  compare   compare ``left`` with ``right`` (each ``{"agent": name, "turn": index}``); without
            them, the default pair for the selected ``turn`` (a fork beside its parent, else
            the turn before).
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
EDITED = "edited"
EDIT_FAILED = "edit_failed"
COMPARISON = "comparison"
ERROR = "error"

# browser -> kernel
SYNC = "sync"
NEED_TURN = "need_turn"
NEED_REQUEST = "need_request"
EDIT = "edit"
UNDO = "undo"
COMPARE = "compare"

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

EDITS = "edits"
"""The edits made by hand since the last turn (snapshot and ``edited``), oldest first."""
LIVE_STATE = "live_state"
"""The state with those edits (snapshot and ``edited``, when small enough)."""
LIVE_PATCH = "live_patch"
"""The edited state as a patch against the last turn's state (``edited``, for a large state)."""
PATH = "path"
"""A JSON pointer into the state (``edit``, ``edit_failed``)."""
VALUE = "value"
"""The JSON text of an edit's new value."""
OP = "op"
"""``set`` or ``remove`` (``edit``)."""
LEFT = "left"
"""The left side of a comparison: ``{"agent": name, "turn": index}``."""
RIGHT = "right"
"""The right side of a comparison."""

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
    "EDITED": EDITED,
    "EDIT_FAILED": EDIT_FAILED,
    "COMPARISON": COMPARISON,
    "ERROR": ERROR,
    "SYNC": SYNC,
    "NEED_TURN": NEED_TURN,
    "NEED_REQUEST": NEED_REQUEST,
    "EDIT": EDIT,
    "UNDO": UNDO,
    "COMPARE": COMPARE,
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
    "EDITS": EDITS,
    "LIVE_STATE": LIVE_STATE,
    "LIVE_PATCH": LIVE_PATCH,
    "PATH": PATH,
    "VALUE": VALUE,
    "OP": OP,
    "LEFT": LEFT,
    "RIGHT": RIGHT,
    "TRAIT_AGENT": TRAIT_AGENT,
    "TRAIT_MODEL": TRAIT_MODEL,
    "TRAIT_SNAPSHOT": TRAIT_SNAPSHOT,
}
"""Every name above, as the browser's ``WIRE`` object spells it (checked by a test)."""
