"""A person's decision from a pending card, taken in the kernel through the core's own API.

A card sends ``decide`` (``pending_cards.DECIDE``): the item is found among what the paused last
turn waits for, and decided as in Python — ``item.approve()``, ``item.approve(arguments=...)``,
``item.edit(request=...)``, ``item.reject(reason)``, ``item.answer(value)``. Whatever the core
refuses (decided already, a kind that does not take that decision, arguments that do not fit the
tool's schema) comes back to the card in its own words, as do a message that names no known item
and a card whose turn no longer waits (it went on, or a new turn left it behind). Once every item
is decided, the inspector carries the turn on (``agent.continue_run()``) and follows it live.

``check_arguments`` checks an edit of the arguments as it is typed, against the same schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import DecisionError
from ..run.pending import PendingItem
from . import wire
from .pending_cards import (
    ANSWER,
    ARGUMENTS,
    CHECKED,
    ITEM,
    REASON,
    REQUEST,
    RUN_ID,
    TICKET,
    VERDICT,
)

if TYPE_CHECKING:
    from ..agent import Agent

VERDICTS = ("approve", "edit", "reject", "answer")
"""What a card may ask for."""


def find_item(agent: Agent, content: Mapping[str, Any]) -> PendingItem:
    """The pending item a card's message names, of the turn it names; DecisionError when that
    turn no longer waits or has no such item."""
    item_id = content.get(ITEM)
    if not isinstance(item_id, str) or not item_id:
        raise DecisionError("a card's message names its pending item (its id, as text)")
    history = agent.history
    turn = content.get(wire.TURN_INDEX)
    if turn is not None:
        if not isinstance(turn, int) or isinstance(turn, bool) or not 0 <= turn < len(history):
            raise DecisionError(f"{agent.name} has no turn {turn!r}; the card names a turn that is not there")
        named = history[turn]
        why = (
            "a newer turn started since"
            if turn != len(history) - 1
            else f"it is {named.status} now"
            if named.status != "paused"
            else "it is another run now"
            if content.get(RUN_ID) not in (None, named.run_id)
            else None
        )
        if why is not None:
            raise DecisionError(
                f"turn {turn + 1} of {agent.name} no longer waits for a decision ({why}); "
                f"pending item {item_id} cannot be decided"
            )
    items = agent.pending
    if not agent.is_paused:
        raise DecisionError(f"{agent.name} has no paused turn: nothing waits for a decision")
    found = next((item for item in items if item.id == item_id), None)
    if found is None:
        known = ", ".join(item.id for item in items)
        raise DecisionError(f"{agent.name} has no pending item {item_id!r}; the pending items are {known}")
    return found


def decide(agent: Agent, content: Mapping[str, Any]) -> PendingItem:
    """Take the decision a card sent (see the module docstring); DecisionError says why not."""
    item = find_item(agent, content)
    taken = item.decision
    if taken is not None:  # said for a card: another view, or Python, decided it first
        raise DecisionError(
            f"pending item {item.id} ({item.kind}: {item.tool or 'model call'}) was already {taken.verdict} "
            f"by {taken.by}, in another view or in Python: a decision is taken once"
        )
    verdict = content.get(VERDICT)
    if verdict == "approve":
        return item.approve()
    if verdict == "edit":
        if item.tool is None:
            return item.edit(request=_json(content.get(REQUEST), "the request", item))
        return item.approve(arguments=_json(content.get(ARGUMENTS), "the arguments", item))
    if verdict == "reject":
        reason = content.get(REASON)
        return item.reject(reason if isinstance(reason, str) else "")
    if verdict == "answer":
        answer = content.get(ANSWER)
        if not isinstance(answer, str):
            raise DecisionError(f"the answer to pending item {item.id} is text; got {type(answer).__name__}")
        return item.answer(answer)
    raise DecisionError(f"a card decides with one of {', '.join(VERDICTS)}; got {verdict!r}")


def check_arguments(agent: Agent, content: Mapping[str, Any]) -> dict[str, Any]:
    """The ``arguments_checked`` reply: why the arguments typed do not fit the tool's schema, or
    null when they do (nothing is decided)."""
    text = content.get(ARGUMENTS)
    reply = {wire.KIND: CHECKED, ITEM: content.get(ITEM), ARGUMENTS: text, TICKET: content.get(TICKET)}
    try:
        item = find_item(agent, content)
        if item.tool is None:
            raise DecisionError(f"pending item {item.id} is a model call: it has no arguments to check")
        item.check_arguments(_json(text, "the arguments", item))
    except DecisionError as exc:
        reply[wire.TEXT] = str(exc)
    else:
        reply[wire.TEXT] = None
    return reply


def _json(text: Any, what: str, item: PendingItem) -> Any:
    if not isinstance(text, str):
        raise DecisionError(
            f"{what} for pending item {item.id}: JSON text is needed, got {type(text).__name__}"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DecisionError(
            f"{what} for pending item {item.id}: not JSON ({exc.msg} at position {exc.pos})"
        ) from None
    except RecursionError:
        raise DecisionError(f"{what} for pending item {item.id}: nested too deeply") from None


__all__ = ["VERDICTS", "check_arguments", "decide", "find_item"]
