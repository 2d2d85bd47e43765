"""What the inspector's Compare tab gets: two finished turns side by side, and the agents it can
pick them from."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..history.compare import compare_turns
from . import wire
from .compact_compare import compact_comparison

if TYPE_CHECKING:
    from ..agent import Agent


def comparable_agents(agent: Agent, others: Iterable[Agent]) -> dict[str, Agent]:
    """The agents a comparison can pick from, by name: ``agent``, its parent, ``others`` (those
    with an inspector) and those in the notebook's namespace."""
    found: dict[str, Agent] = {agent.name: agent}
    for candidate in [agent.parent, *others, *_namespace_agents()]:
        if candidate is not None and candidate.name not in found:
            found[candidate.name] = candidate
    return found


def default_pair(
    agent: Agent, agents: Mapping[str, Agent], selected: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A fork beside its parent at the same turn; a parent beside its newest fork; else the
    selected turn beside the one before it."""
    count = len(agent.history)
    if not count:
        raise LookupError(f"agent {agent.name!r} has no turns to compare yet")
    index = selected if isinstance(selected, int) and 0 <= selected < count else count - 1
    parent = agent.parent
    if parent is not None and len(parent.history):
        return {"agent": parent.name, "turn": min(index, len(parent.history) - 1)}, {
            "agent": agent.name,
            "turn": index,
        }
    forks = [a for a in agents.values() if a.parent is agent and len(a.history)]
    if forks:
        fork = forks[-1]
        return {"agent": agent.name, "turn": index}, {
            "agent": fork.name,
            "turn": min(index, len(fork.history) - 1),
        }
    return {"agent": agent.name, "turn": max(0, index - 1)}, {"agent": agent.name, "turn": index}


def comparison_message(
    agents: Mapping[str, Agent], left: Mapping[str, Any], right: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``comparison`` message for two sides (``{"agent": name, "turn": index}`` each)."""
    a, b = (_side(side, agents) for side in (left, right))
    comparison = compare_turns(a[0].history[a[1]], b[0].history[b[1]])
    return {
        wire.KIND: wire.COMPARISON,
        "comparison": compact_comparison(comparison),
        "agents": [
            {"name": name, "turns": len(agent.history), "parent": agent.parent.name if agent.parent else None}
            for name, agent in agents.items()
        ],
        wire.LEFT: {"agent": a[0].name, "turn": a[1]},
        wire.RIGHT: {"agent": b[0].name, "turn": b[1]},
    }


def _side(side: Mapping[str, Any], agents: Mapping[str, Agent]) -> tuple[Agent, int]:
    name, turn = side.get("agent"), side.get("turn")
    agent = agents.get(name) if isinstance(name, str) else None
    if agent is None:
        raise LookupError(f"there is no agent {name!r} to compare; known: {', '.join(agents)}")
    count = len(agent.history)
    if not isinstance(turn, int) or not 0 <= turn < count or agent.history[turn].status == "running":
        raise LookupError(f"agent {agent.name!r} has no finished turn {turn!r} (it has {count} turn(s))")
    return agent, turn


def _namespace_agents() -> list[Agent]:
    """Agents bound in the running IPython shell's namespace (none outside IPython)."""
    from IPython import get_ipython

    from ..agent import Agent

    shell = get_ipython()
    if shell is None:
        return []
    return [v for k, v in list(shell.user_ns.items()) if isinstance(v, Agent) and not k.startswith("_")]


__all__ = ["comparable_agents", "comparison_message", "default_pair"]
