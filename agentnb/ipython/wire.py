"""The inspector's wire protocol: every message kind and key in one place.

The kernel and the browser talk through anywidget custom messages (``widget.send`` /
``model.send``) and one synced trait. Each message is a small dict whose kind sits under
``KIND``. From the kernel, its body travels as one binary buffer of UTF-8 JSON (see
``outbox.py``), whose keys the browser merges into the message. The browser's copy of these names
lives in ``js/wire.js`` (``const WIRE = {...}``); a test checks the two agree, so a rename here
that is not made there fails the suite.

The synced trait ``TRAIT_SNAPSHOT`` holds a snapshot (as UTF-8 JSON bytes), refreshed when the
widget is displayed and after each cell that changed something: a new view renders from it at
once, without asking the kernel (which may be busy running queued cells), then applies the event
items numbered after it.

Two concepts keep their wire names beside their code, each checked against its front-end module
the same way: a paused turn's pending cards (``pending_cards.CARD_WIRE``, ``js/pending.js``) and
a typed turn's output (``output_view.OUTPUT_WIRE``, ``js/outputs.js``); the run tree's are in
``run_tree.TREE_WIRE``.

A large state travels lazily (``lazy.py``): where a snapshot, a turn or the edited state carries
one, ``stubs`` lists its placeholders as ``{pointer: full size}``, and the browser asks for
those parts (``need_subtree``) when it shows them.

Kernel → browser:
  snapshot  everything a fresh view needs: the last turns' summary rows (``turns``, from turn
            ``turns_from`` to the last; older rows come with ``rows``), the selected turn's
            events, state and change summary, and the event counter ``seq`` it is current to.
  batch     the items numbered ``seq`` to ``last``, in order: ``items``, each the compact
            event ``e`` of turn ``turn``, or a whole turn as its History row ``row``; the browser
            applies them to what it holds (a state change carries its JSON patch, never the
            whole state; a batch's last state change of a turn, and a run's end, also carry the
            turn's change summary so far). A turn that began and ended in the batch, with more
            items after it, comes as its row only, and the ``run_started`` item of the turn
            after it carries the ``state`` it starts from (lazily, with ``stubs``). Sent every
            ``outbox.FLUSH_SECONDS`` while events come, before any other message, and at a
            run's end if no batch went out in the last ``outbox.FLUSH_SECONDS``.
  rows      summary rows ``turns`` of the turns from ``turns_from`` on, sent when the browser
            asks for rows older than the ones it holds (History).
  turn      a turn's events, state and change summary, sent when the browser asks for it (time
            travel).
  subtree   part of a state a view holds only in part: the children of ``path`` from ``from``
            on (lazily again), or with ``whole`` the whole value there, and its ``size``; for
            turn ``turn``'s state, or with ``live`` the state as it is now.
  request   one model call's payload, sent when the browser asks for it (Request tab).
  preview   what the model would receive for a message (``agent.observe``), on request, and
            again after every edit of the state (for the last message previewed, else the last
            turn's message), so the next prompt shows an edit at once.
  edited    the state was edited by hand (from the browser or Python): the pending edits and
            the live state (whole when small, else a patch against the last turn's state).
  edit_failed  an edit was refused (bad JSON, a path that is not there, a schema violation);
            ``path`` and ``text`` say where and why.
  comparison  two turns side by side (``agentnb.history.compare``), the agents to choose from, and
            which turns were compared.
  error     a request from the browser could not be served; ``text`` says why.
  image     the picture of image ``sha256`` (a thumbnail, or with ``full`` the original) as the
            message's second buffer, with its ``media_type``, ``width``, ``height`` and ``size``;
            or, without a picture, ``text`` saying why (not an image, a missing blob, a hash
            that is not one), and with ``later`` that its bytes come when the running turn ends.

Browser → kernel:
  sync      send a snapshot (the browser noticed a gap in ``seq``).
  need_turn send turn ``turn``.
  need_rows send the summary rows of the turns before turn ``before`` (a page of them).
  need_subtree  send the ``subtree`` at ``path`` (``from``, ``whole``) of turn ``turn``'s state,
            or with ``live`` of the state now.
  need_request  send the payload of call ``call`` of turn ``turn``.
  need_image  send the ``image`` ``sha256`` (a thumbnail; with ``full`` the original), looked for
            first among the parts of turn ``turn`` (``images.py``).
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
BATCH = "batch"
TURN = "turn"
ROWS = "rows"
SUBTREE = "subtree"
REQUEST = "request"
PREVIEW = "preview"
EDITED = "edited"
EDIT_FAILED = "edit_failed"
COMPARISON = "comparison"
ERROR = "error"
IMAGE = "image"

# browser -> kernel
SYNC = "sync"
NEED_TURN = "need_turn"
NEED_ROWS = "need_rows"
NEED_SUBTREE = "need_subtree"
NEED_REQUEST = "need_request"
NEED_IMAGE = "need_image"
EDIT = "edit"
UNDO = "undo"
COMPARE = "compare"

# keys
SEQ = "seq"
"""Running number of event items (a batch's first; a snapshot's last applied); a gap makes the
browser ask for a snapshot."""
LAST = "last"
"""The number of a batch's last item."""
ITEMS = "items"
"""A batch's items, in order: ``{"turn": index, "e": compact event}`` each, or ``{"turn":
index, "row": summary row}`` for a whole turn sent as its History row."""
ROW = "row"
"""A batch item's History row of a whole turn, in place of its events (see ``batch``)."""
TURN_INDEX = "turn"
"""The turn a message is about (0-based index in ``agent.history``)."""
CALL = "call"
"""A model call within a turn (0-based)."""
EVENTS = "events"
"""A turn's compact events, in order."""
EVENT_BODY = "e"
"""The compact event of a batch item."""
STATE = "state"
"""A turn's state, lazily (snapshot and turn replies; a batch's ``run_started`` item after a row:
the state the turn starts from)."""
STUBS = "stubs"
"""The placeholders of a lazy state or subtree: ``{pointer: full size}`` (children of a
container sent in part or empty, characters of a string sent as its head)."""
SUMMARIES = "turns"
"""Summary rows of consecutive turns (snapshot and ``rows``)."""
TURNS_FROM = "turns_from"
"""The turn of the first row in ``turns`` (snapshot and ``rows``)."""
BEFORE = "before"
"""``need_rows``: the rows wanted end just before this turn."""
LIVE_TEXT = "live_text"
"""Text streamed so far in the running turn (snapshot only)."""
MESSAGE = "message"
"""The user's message of a preview request."""
TEXT = "text"
"""Human-readable text of an ``error`` message."""
CHANGES = "changes"
"""What a turn changed in the state, as ``agentnb.state.diff`` summarises it: ``{"keys": [...],
"paths": [...], "more": N}``, each change ``{"path", "key", "how", "authors", "old", "new"}``
with old and new as short JSON text (null where there is no value)."""

EDITS = "edits"
"""The edits made by hand since the last turn (snapshot and ``edited``), oldest first."""
LIVE_STATE = "live_state"
"""The state with those edits, lazily (snapshot and ``edited``, when small or without a turn
to patch against)."""
LIVE_STUBS = "live_stubs"
"""The placeholders of ``live_state``."""
LIVE_PATCH = "live_patch"
"""The edited state as a patch against the last turn's state (``edited``, for a large state)."""
PATH = "path"
"""A JSON pointer into the state (``edit``, ``edit_failed``)."""
VALUE = "value"
"""The JSON text of an edit's new value (``edit``); the part of the state sent (``subtree``)."""
FROM = "from"
"""The first child a ``subtree`` holds (children already held are not sent again)."""
SIZE = "size"
"""The full size of a ``subtree``'s node: children of a container, characters of a string."""
WHOLE = "whole"
"""Send the whole value at a path, not just its next children (to edit it, or a long string)."""
LIVE = "live"
"""A ``subtree`` of the state as it is now (the edited state), not of a turn's."""
OP = "op"
"""``set`` or ``remove`` (``edit``)."""
LEFT = "left"
"""The left side of a comparison: ``{"agent": name, "turn": index}``."""
RIGHT = "right"
"""The right side of a comparison."""
SHA256 = "sha256"
"""The hash of the image asked for (``need_image``) or sent (``image``)."""
FULL = "full"
"""The original image, not its thumbnail (``need_image``, ``image``)."""
MEDIA_TYPE = "media_type"
"""The type of the picture an ``image`` message carries (PNG, JPEG, GIF or WEBP only)."""
WIDTH = "width"
"""An image's width in pixels (the original's, for a thumbnail too)."""
HEIGHT = "height"
"""An image's height in pixels."""
LATER = "later"
"""An ``image`` whose bytes are not held until its running turn ends: ask again then."""
STATIC_IMAGES = "static_images"
"""The last turn's images as a saved notebook shows them (snapshot): ``[{"line", "url"}]``, each
a small thumbnail as a ``data:`` URL, for the static view ``js/saved.js`` writes at a save."""

# synced traits (small, rarely changing)
TRAIT_AGENT = "agent_name"
TRAIT_MODEL = "model_info"
TRAIT_SNAPSHOT = "view_snapshot"
"""The synced trait holding the latest snapshot (see the module docstring)."""
FRONT_END = "front_end"
"""The front end asks for itself (js and css as the reply's two buffers): static/loader.js."""
VIEWING = "viewing"
"""A view of the widget rendered in a front end (which keeps the static view current at save):
the kernel stops refreshing the static view its outputs carry."""
TRAIT_ID = "widget_id"
"""The widget's own model id (the front end finds its model's comm with it)."""
TRAIT_CHECKS = "case_checks"
"""The synced trait of an evaluation case's inspector: its verdicts as JSON (the Checks tab)."""
TRAIT_TAB = "open_tab"
"""The synced trait naming the tab a view opens on (an evaluation case's inspector: checks or
compare); the Prompt tab when absent."""

WIRE: dict[str, str] = {
    "KIND": KIND,
    "SNAPSHOT": SNAPSHOT,
    "BATCH": BATCH,
    "TURN": TURN,
    "ROWS": ROWS,
    "SUBTREE": SUBTREE,
    "REQUEST": REQUEST,
    "PREVIEW": PREVIEW,
    "EDITED": EDITED,
    "EDIT_FAILED": EDIT_FAILED,
    "COMPARISON": COMPARISON,
    "ERROR": ERROR,
    "IMAGE": IMAGE,
    "SYNC": SYNC,
    "NEED_TURN": NEED_TURN,
    "NEED_ROWS": NEED_ROWS,
    "NEED_SUBTREE": NEED_SUBTREE,
    "NEED_REQUEST": NEED_REQUEST,
    "NEED_IMAGE": NEED_IMAGE,
    "EDIT": EDIT,
    "UNDO": UNDO,
    "COMPARE": COMPARE,
    "SEQ": SEQ,
    "LAST": LAST,
    "ITEMS": ITEMS,
    "ROW": ROW,
    "TURN_INDEX": TURN_INDEX,
    "CALL": CALL,
    "EVENTS": EVENTS,
    "EVENT_BODY": EVENT_BODY,
    "STATE": STATE,
    "STUBS": STUBS,
    "SUMMARIES": SUMMARIES,
    "TURNS_FROM": TURNS_FROM,
    "BEFORE": BEFORE,
    "LIVE_TEXT": LIVE_TEXT,
    "MESSAGE": MESSAGE,
    "TEXT": TEXT,
    "CHANGES": CHANGES,
    "EDITS": EDITS,
    "LIVE_STATE": LIVE_STATE,
    "LIVE_STUBS": LIVE_STUBS,
    "LIVE_PATCH": LIVE_PATCH,
    "PATH": PATH,
    "VALUE": VALUE,
    "FROM": FROM,
    "SIZE": SIZE,
    "WHOLE": WHOLE,
    "LIVE": LIVE,
    "OP": OP,
    "LEFT": LEFT,
    "RIGHT": RIGHT,
    "SHA256": SHA256,
    "FULL": FULL,
    "MEDIA_TYPE": MEDIA_TYPE,
    "WIDTH": WIDTH,
    "HEIGHT": HEIGHT,
    "LATER": LATER,
    "STATIC_IMAGES": STATIC_IMAGES,
    "TRAIT_AGENT": TRAIT_AGENT,
    "TRAIT_MODEL": TRAIT_MODEL,
    "TRAIT_SNAPSHOT": TRAIT_SNAPSHOT,
    "TRAIT_ID": TRAIT_ID,
    "FRONT_END": FRONT_END,
    "VIEWING": VIEWING,
    "TRAIT_CHECKS": TRAIT_CHECKS,
    "TRAIT_TAB": TRAIT_TAB,
}
"""Every name above, as the browser's ``WIRE`` object spells it (checked by a test)."""
