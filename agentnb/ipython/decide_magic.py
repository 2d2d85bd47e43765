"""``%agentnb approve`` / ``reject`` / ``continue``: a person decides a paused turn's pending items
from a cell, then carries the turn on (``agent.continue_run()``)."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..errors import AgentnbError
from ..util.text import one_line


def approve(workspace: Any, args: Any) -> None:
    """``%agentnb approve NAME [ID] [--all]``."""
    name = args.args[0]
    agent = workspace.agent(name, "%agentnb approve")
    items = _chosen(agent, name, args.args[1:], args.all, "approve")
    answered = [item for item in items if item.kind in ("question", "external")]
    if answered:
        raise UsageError(
            f"%agentnb approve {name}: {answered[0]!r} waits for an answer, not an approval; in Python: "
            "agent.pending[i].answer(value)"
        )
    for item in items:
        _decide(name, "approve", item.approve)
    listed = ", ".join(f"{item.id} ({item.tool or 'model call'})" for item in items)
    print(f"approved {listed}; %agentnb continue {name} carries the turn on")


def reject(workspace: Any, args: Any) -> None:
    """``%agentnb reject NAME [ID] --reason WHY``."""
    name = args.args[0]
    reason = " ".join(args.reason or ()).strip()
    if not reason:
        raise UsageError(f"%agentnb reject {name}: give the reason the model reads: --reason WHY")
    agent = workspace.agent(name, "%agentnb reject")
    (item,) = _chosen(agent, name, args.args[1:], False, "reject")
    _decide(name, "reject", lambda: item.reject(reason))
    print(f"rejected {item.id} ({item.tool}): {reason!r}; %agentnb continue {name} carries the turn on")


def continue_run(workspace: Any, args: Any) -> Any:
    """``%agentnb continue NAME``: the paused turn goes on; its result is the cell's output."""
    name = args.args[0]
    agent = workspace.agent(name, "%agentnb continue")
    try:
        return agent.continue_run()
    except AgentnbError as exc:
        raise UsageError(f"%agentnb continue {name}: {one_line(exc)}") from None


def _chosen(agent: Any, name: str, ids: list[str], every: bool, verb: str) -> list[Any]:
    """The items a decision is about: the one named, every undecided one (``--all``), or the only one."""
    open_items = [item for item in agent.pending if not item.decided]
    if not agent.is_paused:
        raise UsageError(f"%agentnb {verb} {name}: {name} has no paused turn; nothing waits for a decision")
    if ids and every:
        raise UsageError(f"%agentnb {verb} {name}: give an ID or --all, not both")
    if every:
        if not open_items:
            raise UsageError(f"%agentnb {verb} {name}: every pending item is decided already")
        return open_items
    if ids:
        found = [item for item in agent.pending if item.id == ids[0]]
        if not found:
            known = ", ".join(item.id for item in agent.pending)
            raise UsageError(
                f"%agentnb {verb} {name}: no pending item {ids[0]!r}; the pending items are {known}"
            )
        return found
    if len(open_items) != 1:
        listed = ", ".join(repr(item) for item in open_items) or "(none left to decide)"
        raise UsageError(f"%agentnb {verb} {name}: name the item (ID) or give --all; undecided: {listed}")
    return open_items


def _decide(name: str, verb: str, decide: Any) -> None:
    try:
        decide()
    except AgentnbError as exc:
        raise UsageError(f"%agentnb {verb} {name}: {one_line(exc)}") from None


__all__ = ["approve", "continue_run", "reject"]
