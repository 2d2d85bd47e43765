"""Pausing for a person and going on, as a part of a ``Turn``: the run stops before a call (its
place kept on the record: ``history.pause.Pause``) and, once a person decided, the same run goes
on from there — in this process or, from a saved session, in another."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..events import (
    ContextRetrieved,
    Event,
    ModelResponded,
    PendingCall,
    RunPaused,
    RunResumed,
    ToolCallFinished,
    Usage,
)
from ..events.parts import USER_CAUSE
from ..history.pause import Pause, Stop
from ..history.records import TurnRecord
from ..messages import ToolCall
from ..models.base import REASONING_KEY
from ..state.tracking import StateTracker
from ..tools import Tool
from ..tools.run_context import RunContext
from .pending import pending_calls
from .setup import TurnSetup


class Pausing:
    """Where a turn stops for a person and how it goes on (mixed into ``loop.Turn``)."""

    setup: TurnSetup
    record: TurnRecord
    ctx: RunContext
    tracker: StateTracker
    _direct: str | None
    _context_messages: slice
    _start: float
    _usage: Usage
    _model_calls: int
    _tool_calls: int
    _emit: Callable[[Event], Event]

    if TYPE_CHECKING:  # the turn's own steps (loop.Turn has them)

        def _close(self, state_after: Any, *, ended: bool = True) -> None: ...

        def _fail(self, exc: BaseException) -> Iterator[Event]: ...

        def _finish(self) -> Iterator[Event]: ...

        def _think_and_act(
            self, tools: Sequence[Tool], context: list[ContextRetrieved], pause: Pause | None = None
        ) -> Generator[Event, None, bool]: ...

    def _stop_before_model(
        self, wire: list[dict[str, Any]], schemas: list[dict[str, Any]], call: int
    ) -> Iterator[Event]:
        """A breakpoint before model call ``call``: the run pauses with the request about to go."""
        assert self.setup.gate is not None
        request = {"messages": list(wire), "tools": list(schemas), "options": dict(self.setup.model_options)}
        item = self.setup.gate.model_item(self.ctx, call, request)
        yield from self._pause((item,), "model", call, wire)

    def _stop_before_tools(
        self, waiting: Sequence[tuple[ToolCall, PendingCall | None]], call: int, wire: list[dict[str, Any]]
    ) -> Iterator[Event]:
        """Calls of a response wait for a person (their own items, or a member's): the run pauses."""
        items = tuple(item for _, item in waiting if item is not None)
        yield from self._pause(items, "tools", call, wire, tuple(c for c, _ in waiting))

    def _pause(
        self,
        items: tuple[PendingCall, ...],
        stop: Stop,
        call: int,
        wire: list[dict[str, Any]],
        waiting: tuple[ToolCall, ...] = (),
    ) -> Iterator[Event]:
        """The run stops here, keeping on its record what it needs to go on (``Pause``); nothing
        blocks: ``continue_run()`` carries it on, in this process or another."""
        record, tracker = self.record, self.tracker
        tracker.checkpoint(USER_CAUSE)
        for change in tracker.drain():
            yield self._emit(change)
        context = self._context_messages
        waiting_ids = {c.id for c in waiting}
        delegated: dict[str, tuple[str, ...]] = {}
        for child in record.children:  # the runs the waiting delegations started, kept by name
            started = child.started
            key = started.parent_tool_call_id if started is not None else None
            if key in waiting_ids:
                delegated[key] = (*delegated.get(key, ()), child.run_id)
        record.status = "paused"
        record.pause = Pause(
            items=items,
            stop=stop,
            call=call,
            messages=tuple(self.ctx.messages),
            context=(context.start, context.stop),
            waiting=waiting,
            reasoning={i: m[REASONING_KEY] for i, m in enumerate(wire) if REASONING_KEY in m},
            delegated=delegated,
            direct=self._direct,
            duration_ms=(time.perf_counter() - self._start) * 1000,
        )
        self._close(tracker.snapshot, ended=False)
        if self.setup.before_end is not None:
            self.setup.before_end(tracker)
        yield self._emit(
            RunPaused(
                run_id=self.ctx.run_id,
                items=pending_calls(record),
                usage=record.usage,
                duration_ms=record.duration_ms,
                at=time.time(),
            )
        )

    def _resumed(self, pause: Pause) -> Iterator[Event]:
        """A paused run goes on: the person's decisions, what they changed in the state
        meanwhile, then Think and Act from where it stopped; the same record all along."""
        record, events = self.record, self.record.events
        self._start = time.perf_counter() - pause.duration_ms / 1000
        record.status = "running"  # its pause stays until it ends: it names the runs that wait
        if self.setup.lineage is not None:
            self.tracker.via = self.setup.lineage.path
        self._usage = record.usage
        self._model_calls = sum(1 for e in events if type(e) is ModelResponded)
        self._tool_calls = sum(1 for e in events if type(e) is ToolCallFinished)
        decisions = tuple(pause.decisions[item.id] for item in pause.items)
        yield self._emit(RunResumed(run_id=self.ctx.run_id, decisions=decisions, at=time.time()))
        self.tracker.checkpoint(USER_CAUSE)
        for change in self.tracker.drain():
            yield self._emit(change)
        self.ctx.messages[:] = pause.messages
        self._context_messages = slice(*pause.context)
        self._direct = pause.direct
        context: list[ContextRetrieved] = []
        try:
            if self.setup.replay is not None:
                self.setup.replay.decided(record, decisions)
            assert self.setup.tools is not None, "a run goes on only where its turn was made to"
            tools = self.setup.tools(self.ctx, context.append)
        except Exception as exc:  # a changed decision under strict replay, a failing tool list
            yield from self._fail(exc)
            return
        finished = yield from self._think_and_act(tools, context, pause)
        if finished:
            yield from self._finish()

    def _wire(self, pause: Pause | None) -> list[dict[str, Any]]:
        """The run's messages in the wire format (with the reasoning items a paused run kept)."""
        wire = [m.to_openai() for m in self.ctx.messages]
        if pause is not None:
            for index, items in pause.reasoning.items():
                if index < len(wire):
                    wire[index] = {**wire[index], REASONING_KEY: items}
        return wire

    @staticmethod
    def _edited_request(pause: Pause) -> Mapping[str, Any] | None:
        """What the person changed in the model request a breakpoint stopped (None: nothing)."""
        decision = pause.decisions.get(pause.items[0].id) if pause.items else None
        return decision.request if decision is not None and decision.verdict == "edited" else None


__all__ = ["Pausing"]
