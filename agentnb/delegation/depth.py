"""How deep delegations may go: each agent's ``max_delegation_depth``, the smallest on a chain
applying to everything below it.

A chain of agents delegating to agents (as tools, team members, handoffs) without an end would
run until the interpreter's stack gives out, failing somewhere deep with a ``RecursionError``.
The limit stops it first, at the delegation that would go too deep, with an error result that
says where and how to change it.
"""

from __future__ import annotations

from typing import Any

from ..errors import DelegationError
from ..run.executor import ParentRun

DEFAULT_MAX_DELEGATION_DEPTH = 16
"""How many delegations deep a run below an agent may be, unless its ``max_delegation_depth`` says."""


def depth_limit(parent: ParentRun, agent: Any) -> int:
    """The deepest a run below ``parent`` (a run of ``agent``) may be: the agent's own
    ``max_delegation_depth``, or a smaller one set on an agent above it."""
    own = getattr(agent, "max_delegation_depth", DEFAULT_MAX_DELEGATION_DEPTH)
    return own if parent.depth_limit is None else min(own, parent.depth_limit)


def check_depth(parent: ParentRun, agent: Any, member: Any) -> int:
    """The limit for ``member``'s run below ``parent``; a DelegationError when that run would be
    deeper than it."""
    limit = depth_limit(parent, agent)
    depth = len(parent.path)
    if depth <= limit:
        return limit
    path = (*parent.path, member.name)
    chain = " ▸ ".join(path if len(path) <= 5 else (*path[:2], "…", *path[-2:]))
    raise DelegationError(
        f"delegating to {member.name!r} would start a run {depth} delegations deep ({chain}), past "
        f"max_delegation_depth={limit} (the smallest set on the agents of this chain); answer without "
        "delegating further, or raise max_delegation_depth on the agents of the chain"
    )


__all__ = ["DEFAULT_MAX_DELEGATION_DEPTH", "check_depth", "depth_limit"]
