"""What the inspector's pending cards show: one card per item a paused turn waits for.

A card carries the item as the core names it (``agentnb.run.pending``: id, kind, tool,
arguments, reason, the member's path, a breakpoint's request), the tool's schema (an edit of the
arguments is checked against it as it is typed) and the decision taken so far; what led to the
call is its run's, said once for the items of one response: the state of the run that waits, as
it was when it paused, and the messages the model had been sent (the earlier turns' left out).
Everything is data: the browser shows it as text.

The cards travel as one ``pending`` message (``pending_message``): in the snapshot while the last
turn is paused, after the ``run_paused`` item when a turn pauses, and again whenever a decision is
taken (from a card, or in Python: checked after each cell). A card is shown while its turn is the
last one, paused the same number of times as the message says (``pauses``): a turn that went on
and paused again brings a new message.

Wire names for these live here (``CARD_WIRE``), apart from ``wire.py``; ``js/pending.js`` spells
them the same way (a test checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..events import RunPaused
from ..history.render import pending_line
from ..run.pending import PendingItem, pending_items
from . import wire
from .compact_state import preview_text

if TYPE_CHECKING:
    from ..agent import Agent
    from ..history.records import TurnRecord

PENDING = "pending"
"""kernel → browser: the cards of the paused last turn (``items``; none when nothing waits)."""
DECIDE = "decide"
"""browser → kernel: decide ``item`` of turn ``turn`` (run ``run_id``): ``verdict`` approve,
edit (with ``arguments`` or a breakpoint's ``request``, as JSON text), reject (with ``reason``) or
answer (with ``answer``, text); ``ticket`` names the view's request in the reply."""
DECIDED = "decided"
"""kernel → browser: the decision was taken (``item``, ``verdict``, ``text`` says what follows)."""
DECIDE_FAILED = "decide_failed"
"""kernel → browser: the decision was refused; ``text`` says why (decided already, not paused any
more, arguments that do not fit the schema, an unknown item)."""
CHECK = "check_arguments"
"""browser → kernel: check ``arguments`` (JSON text) for ``item`` against its tool's schema."""
CHECKED = "arguments_checked"
"""kernel → browser: the check of ``arguments`` for ``item``: ``text`` is why they do not fit, or
null when they do."""
ITEMS = "items"
"""The cards of a ``pending`` message, in the order the items wait."""
RUNS = "runs"
"""What led each waiting run's items to wait (its state and prompt), by run id: said once for
the several items of one response."""
PAUSES = "pauses"
"""How many times the turn had paused when the message was made (1 the first time)."""
ITEM = "item"
"""A pending item's id."""
VERDICT = "verdict"
"""approve, edit, reject or answer (``decide``); the core's verdict (``decided``)."""
ARGUMENTS = "arguments"
"""The arguments a call runs with instead, as JSON text (``decide``, ``check_arguments``)."""
REQUEST = "request"
"""A breakpoint's model request sent instead, as JSON text (``decide``)."""
REASON = "reason"
"""Why a call is rejected: the model reads it (``decide``)."""
ANSWER = "answer"
"""A question's answer, or an external call's result, as text (``decide``)."""
TICKET = "ticket"
"""The view's own number for a request; its reply carries it back."""
RUN_ID = "run_id"
"""The paused run (the top-level one) a message is about."""

CARD_WIRE: dict[str, str] = {
    "PENDING": PENDING,
    "DECIDE": DECIDE,
    "DECIDED": DECIDED,
    "DECIDE_FAILED": DECIDE_FAILED,
    "CHECK": CHECK,
    "CHECKED": CHECKED,
    "ITEMS": ITEMS,
    "RUNS": RUNS,
    "PAUSES": PAUSES,
    "ITEM": ITEM,
    "VERDICT": VERDICT,
    "ARGUMENTS": ARGUMENTS,
    "REQUEST": REQUEST,
    "REASON": REASON,
    "ANSWER": ANSWER,
    "TICKET": TICKET,
    "RUN_ID": RUN_ID,
}
"""Every name above, as ``js/pending.js``'s ``CARD_WIRE`` spells it (checked by a test)."""

STATE_TEXT = 4000
"""Characters of the state a card shows (compact JSON, cut)."""

MESSAGE_TEXT = 2000
"""Characters of each message of the prompt a card shows."""


def pending_message(agent: Agent) -> dict[str, Any]:
    """The ``pending`` message of ``agent``: the cards of its paused last turn (no items when
    its last turn is not paused)."""
    history = agent.history
    record = history[-1] if len(history) else None
    if record is None or record.status != "paused":
        return {wire.KIND: PENDING, ITEMS: []}
    items = pending_items(record)
    waiting = {item.call.run_id for item in items}
    return {
        wire.KIND: PENDING,
        wire.TURN_INDEX: record.index,
        RUN_ID: record.run_id,
        PAUSES: pauses(record),
        ITEMS: [card(item) for item in items],
        RUNS: {run.run_id: _led_to(run) for run in record.walk() if run.run_id in waiting},
    }


def pauses(record: TurnRecord) -> int:
    """How many times the turn has paused so far."""
    return sum(1 for event in record.events if type(event) is RunPaused)


def decisions_key(agent: Agent) -> tuple[str, int, int] | None:
    """What the cards of ``agent`` depend on beyond its events: the paused turn and how many of
    its items are decided (None when nothing waits)."""
    history = agent.history
    record = history[-1] if len(history) else None
    if record is None or record.status != "paused":
        return None
    decided = sum(1 for item in pending_items(record) if item.decided)
    return (record.run_id, pauses(record), decided)


def card(item: PendingItem) -> dict[str, Any]:
    """One pending item as its card shows it (what led to it is its run's, in ``RUNS``)."""
    call = item.call
    decision = item.decision
    out: dict[str, Any] = {
        "id": call.id,
        "kind": call.kind,
        "tool": call.tool,
        "arguments": call.arguments,
        "reason": call.reason,
        "path": list(call.path),
        "run_id": call.run_id,
        "call": call.call,
        "parameters": call.parameters,
        "request": call.request,
        "line": pending_line(call, decision),
        "decision": None,
    }
    if decision is not None:
        out["decision"] = {
            "verdict": decision.verdict,
            "arguments": decision.arguments,
            "reason": decision.reason,
            "value": decision.value,
            "by": decision.by,
        }
    return out


def _led_to(run: TurnRecord) -> dict[str, Any]:
    """What led a paused run's items to wait, shown on their cards: the run's state as it paused
    (compact JSON, cut), and the messages the model had been sent (chat format, each cut)
    without the earlier turns' (sent as context), with how many of those were left out."""
    out: dict[str, Any] = {"state": preview_text(run.state_after, STATE_TEXT), "prompt": [], "earlier": 0}
    pause = run.pause
    if pause is None:
        return out
    start, stop = pause.context
    shown = [m for i, m in enumerate(pause.messages) if not start <= i < stop]
    messages = []
    for message in shown:
        data = message.to_openai()
        content = data.get("content")
        if isinstance(content, str) and len(content) > MESSAGE_TEXT:
            data["content"] = content[: MESSAGE_TEXT - 1] + "…"
        messages.append(data)
    out["prompt"], out["earlier"] = messages, stop - start
    return out


__all__ = ["CARD_WIRE", "card", "decisions_key", "pauses", "pending_message"]
