"""RunContext (what tools and hooks may ask for) and running coroutines from sync code."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..messages import Message
    from ..state.state import State


@dataclass
class RunContext:
    """What a run shares with its tools and hooks (Agno's ``RunContext``)."""

    run_id: str
    """Unique id of the run."""
    session_state: dict[str, Any]
    """The live state dict: tools may read and mutate it."""
    state: State
    """The State object (typed access: get / set / has)."""
    agent: Any = None
    """The agent running."""
    dependencies: dict[str, Any] = field(default_factory=dict)
    """Run dependencies (also usable in instruction templates)."""
    session_id: str | None = None
    """The agent's session id."""
    turn: int = 0
    """Index of the turn in the agent's history."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Free-form metadata for this run."""
    messages: list[Message] = field(default_factory=list)
    """The run's messages so far (system, user, assistant, tool), as the model saw them."""

    def injectable(self) -> dict[str, Any]:
        """What a tool, hook or callable option may ask for by parameter name (or, for
        ``state`` and ``agent``, by type): ``team`` is None, as Agno passes it to an agent's."""
        return {
            "run_context": self,
            "agent": self.agent,
            "session_state": self.session_state,
            "dependencies": self.dependencies,
            "state": self.state,
            "team": None,
        }

    @classmethod
    def for_agent(
        cls, agent: Any, run_id: str, dependencies: Mapping[str, Any] | None = None, turn: int | None = None
    ) -> RunContext:
        """The context of a run of ``agent`` (its state, session, dependencies, turn number: the
        next one, or ``turn`` for a paused run going on)."""
        return cls(
            run_id=run_id,
            session_state=agent.state.data,
            state=agent.state,
            agent=agent,
            dependencies={**agent.dependencies, **(dependencies or {})},
            session_id=agent.session_id,
            turn=len(agent.history) if turn is None else turn,
        )


def call_with(function: Callable[..., Any], available: Mapping[str, Any]) -> Any:
    """Call ``function`` with the values its signature asks for (sync or async)."""
    params = inspect.signature(function).parameters
    return run_sync(function(**{k: v for k, v in available.items() if k in params}))


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
