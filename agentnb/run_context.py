"""RunContext (what tools and hooks may ask for) and running coroutines from sync code."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent import Agent
    from .state import State


@dataclass
class RunContext:
    """What a run shares with its tools and hooks (Agno's ``RunContext``)."""

    run_id: str
    """Unique id of the run."""
    session_state: dict[str, Any]
    """The live state dict: tools may read and mutate it."""
    state: State
    """The State object (typed access: get / set / has)."""
    agent: Agent | None = None
    """The agent running."""
    dependencies: dict[str, Any] = field(default_factory=dict)
    """Run dependencies (also usable in instruction templates)."""
    session_id: str | None = None
    """The agent's session id."""
    turn: int = 0
    """Index of the turn in the agent's history."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Free-form metadata for this run."""


def run_sync(awaitable: Any) -> Any:
    """Wait for a coroutine from sync code, also when this thread already runs an event loop
    (a Jupyter kernel does): then the coroutine runs on its own loop in a worker thread."""
    if not inspect.isawaitable(awaitable):
        return awaitable
    import asyncio
    import concurrent.futures
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _await(awaitable)).result()


async def _await(awaitable: Any) -> Any:
    return await awaitable
