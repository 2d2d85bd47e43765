"""The agents an evaluated agent delegates to (a team's members, agents as tools, handoff targets,
at any depth: ``recorded_tree``), rebuilt fresh for each case as the agent itself is: a case never
runs the notebook's own agents (their turns, their recordings), two cases running at once never
share one, and each delegate replays by its own recorded turns, as in a notebook's recording.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...agent import Agent
from ...definition import AgentDefinition
from ...models.base import Model
from ...sessions.recorded_tree import recorded_tree
from .limiter import quiet_copy


@dataclass
class Delegate:
    """One agent of an evaluated agent's tree, as each case builds it again."""

    path: str
    """Where it is in the tree, below the evaluated agent: ``helper``, ``desk/analyst``."""
    stands_for: int
    """The ``id`` of the agent it is a copy of (the one the definitions delegate to)."""
    definition: AgentDefinition
    """Its definition as configured now."""
    model: Model
    """Its model (the evaluation's copy: the client's own retries off)."""


def delegates_of(agent: Agent) -> tuple[Delegate, ...]:
    """The agents ``agent`` delegates to, at any depth, each as a case builds it."""
    tree = recorded_tree(agent, agent.name)
    prefix = f"{agent.name}/"
    return tuple(
        Delegate(
            path.removeprefix(prefix),
            id(member),
            AgentDefinition.of(member, configured=True),
            quiet_copy(member.model),
        )
        for path, member in tree.items()
        if member is not agent
    )


def fresh_delegates(
    root: Agent, stands_for: int, delegates: tuple[Delegate, ...], model_for: Callable[[Model], Model]
) -> dict[str, Agent]:
    """Build each of ``delegates`` afresh (its definition, its initial state, ``model_for`` its
    model) and make ``root`` (the case's copy of the agent whose ``id`` is ``stands_for``) and
    each of them delegate to the copies, never to the agents they were copied from. Returns
    the copies by path."""
    fresh: dict[str, Agent] = {}
    for delegate in delegates:
        definition = delegate.definition
        options: dict[str, Any] = {"model": model_for(delegate.model)}
        if definition.initial_state is not None:
            options["session_state"] = copy.deepcopy(definition.initial_state)
        fresh[delegate.path] = definition.build(**options)
    swap: Mapping[int, Agent] = {
        stands_for: root,
        **{delegate.stands_for: fresh[delegate.path] for delegate in delegates},
    }
    for agent in (root, *fresh.values()):
        agent.replace_delegates(swap)
    return fresh


__all__ = ["Delegate", "delegates_of", "fresh_delegates"]
