"""Pausing for a person and going on, as a part of ``Agent``: what stops a run
(``break_before``), what a paused turn waits for (``pending``), and ``continue_run`` (Agno's
name), which carries the same turn on with the person's decisions.

``continue_run`` is not ``resume``: ``agent.resume()`` takes over a notebook's recording
(state, conversation, turns); ``continue_run()`` goes on with a paused turn. After a kernel
restart, a notebook does both: ``%agentnb resume NAME`` (the paused turn comes back with the
recording), then ``%agentnb continue NAME``."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..events import Event
from .gate import check_breakpoints
from .pending import PendingItem, pending_items
from .run_result import RunResult, RunStream

if TYPE_CHECKING:
    from .loop import Turn


class Continuing:
    """Pauses and continue_run (mixed into ``Agent``; the agent gives ``_continued_turn``,
    ``_running``, ``history`` and ``breakpoints``)."""

    history: Any
    breakpoints: frozenset[str]

    if TYPE_CHECKING:

        def _continued_turn(self) -> Turn: ...

        def _running(self) -> AbstractContextManager[None]: ...

    def break_before(self, *points: str) -> Continuing:
        """Stop each run before these points, to step through it: ``"model"`` (each model
        call), ``"tool"`` (each tool call) or ``"tool:NAME"``; no points: stop nowhere. The run
        pauses there (``result.status == "paused"``); ``continue_run()`` goes on to the next."""
        self.breakpoints = check_breakpoints(points)
        return self

    @property
    def pending(self) -> list[PendingItem]:
        """What the paused last turn waits for (its members' items too); [] when none is paused."""
        return pending_items(self.history[-1]) if len(self.history) else []

    @property
    def is_paused(self) -> bool:
        """Whether the last turn waits for a person (Agno's name)."""
        return bool(len(self.history)) and self.history[-1].status == "paused"

    def continue_run(
        self, run_response: RunResult | None = None, *, on_event: Callable[[Event], Any] | None = None
    ) -> RunResult:
        """Carry the paused turn on with the person's decisions (Agno's name): the calls that
        waited run (as asked, with the person's arguments), or end with the person's rejection or
        answer, and the run goes on from there; one turn record in the history. Returns its
        result, which may be paused again. Every pending item must be decided first."""
        last = self.history[-1] if len(self.history) else None
        if run_response is not None and (
            not isinstance(run_response, RunResult) or run_response.turn is not last
        ):
            raise ConfigurationError(
                "continue_run(result) takes the result of this agent's paused last turn; "
                "or call continue_run() with no argument"
            )
        stream = RunStream(self._continued_turn, self._running)
        for event in stream:
            if on_event is not None:
                on_event(event)
        assert stream.result is not None
        return stream.result

    def iter_continue_run(self) -> RunStream:
        """``continue_run``, yielding the events as they happen (see RunStream)."""
        return RunStream(self._continued_turn, self._running)

    async def acontinue_run(self, run_response: RunResult | None = None, **kwargs: Any) -> RunResult:
        """``continue_run`` for async code; the turn goes on in a worker thread."""
        import asyncio

        return await asyncio.to_thread(lambda: self.continue_run(run_response, **kwargs))


__all__ = ["Continuing"]
