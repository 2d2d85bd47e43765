"""Act, as a part of a ``Turn``: one response's tool calls through the executor, in the model's
order (read-after-write first), some delegations side by side (``parallel``), each result back
into the conversation; the calls a person must decide first wait, the others run."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from typing import Any

from ..events import ContextRetrieved, Event, PendingCall, ToolCallStarted
from ..history.pause import Pause
from ..history.records import TurnRecord
from ..messages import BinaryPart, Message, ToolCall
from ..messages.wire import parts_by_hash
from ..state.tracking import StateTracker
from ..tools import Tool
from ..tools.run_context import RunContext
from .executor import CallOutcome, ParentRun, ToolExecutor
from .parallel import Running
from .setup import TurnSetup

Waiting = tuple[ToolCall, PendingCall | None]
"""A call that waits for a person, with what it waits for (None: a member it delegated to waits)."""


class Acting:
    """The Act phase of a turn (mixed into ``loop.Turn``)."""

    setup: TurnSetup
    record: TurnRecord
    ctx: RunContext
    tracker: StateTracker
    _direct: str | None
    _delegated: bool
    _tool_calls: int
    _emit: Callable[[Event], Event]
    _parts: dict[str, BinaryPart]

    def _executor(self, tools: Sequence[Tool], pause: Pause | None = None) -> ToolExecutor:
        setup, record, run_id = self.setup, self.record, self.ctx.run_id
        replay = setup.replay
        recorded = (lambda tool_call: replay.tool_result(record, tool_call)) if replay is not None else None
        path = setup.lineage.path if setup.lineage is not None else (record.agent,)
        went_before: dict[str, tuple[TurnRecord, ...]] = {}
        if pause is not None:  # the delegations that wait: the runs they started before the pause
            by_id = {child.run_id: child for child in record.children}
            for key, started in pause.delegated.items():
                went_before[key] = tuple(by_id[i] for i in started if i in by_id)
        limit = setup.lineage.depth_limit if setup.lineage is not None else None
        parent = ParentRun(run_id, path, setup.emit_child, limit, went_before)
        by_name = {t.name: t for t in tools}
        return ToolExecutor(by_name, setup.hooks, self.ctx, self.tracker, recorded, parent, setup.gate)

    def _act(
        self,
        executor: ToolExecutor,
        calls: Sequence[ToolCall],
        call: int,
        context: list[ContextRetrieved],
        wire: list[dict[str, Any]],
        pause: Pause | None = None,
    ) -> Generator[Event, None, list[Waiting]]:
        """Run one response's tool calls: in the model's order (read-after-write first); its
        ``copy`` / ``none`` delegations side by side on one snapshot while the other calls run in
        order, every result applied in call order. A call the gate stops for a person does not
        run; the others run first. Returns the calls that wait, in call order, each with what it
        waits for (None: a delegation whose member waits). A paused run (``pause``) runs the calls
        that waited, one after another, with the person's decisions."""
        if pause is not None:
            return (yield from self._act_decided(executor, calls, call, context, wire, pause))
        stopped = {}
        for tool_call in calls:
            item = executor.pending(tool_call, call)
            if item is not None:
                stopped[tool_call.id] = item
        batch = executor.schedule([c for c in calls if c.id not in stopped] if stopped else calls)
        together = executor.side_by_side(batch)
        waited: set[str] = set()
        if not any(together):
            for tool_call in batch:
                yield self._emit(self._started(executor, tool_call, call))
                outcome = executor.run(tool_call, call)
                if (yield from self._after(tool_call, outcome, context, wire)):
                    waited.add(tool_call.id)
        else:
            for tool_call, now in zip(batch, together):  # these start now, side by side
                if now:
                    yield self._emit(self._started(executor, tool_call, call))
            running = Running(executor, batch, together, call)
            try:
                for tool_call, now in zip(batch, together):
                    if now:
                        outcome = running.finish(tool_call)
                    else:  # an ordinary call (or a live delegation): in order, on this thread
                        yield self._emit(self._started(executor, tool_call, call))
                        outcome = running.run(tool_call)
                    if (yield from self._after(tool_call, outcome, context, wire)):
                        waited.add(tool_call.id)
            finally:
                running.close()
        if not stopped and not waited:
            return []
        return [(c, stopped.get(c.id)) for c in calls if c.id in stopped or c.id in waited]

    def _act_decided(
        self,
        executor: ToolExecutor,
        calls: Sequence[ToolCall],
        call: int,
        context: list[ContextRetrieved],
        wire: list[dict[str, Any]],
        pause: Pause,
    ) -> Generator[Event, None, list[Waiting]]:
        """The calls a paused run waited on, in order: each of its own items as the person
        decided (run as asked, with their arguments, rejected, answered); each delegation whose
        member waited goes on (its member continues)."""
        own = {item.tool_call_id: item for item in pause.items}
        waiting: list[Waiting] = []
        for tool_call in calls:
            item = own.get(tool_call.id)
            if item is not None:  # it never started: it starts now
                yield self._emit(self._started(executor, tool_call, call))
            decision = pause.decisions.get(item.id) if item is not None else None
            outcome = executor.run(tool_call, call, decision=decision)
            if (yield from self._after(tool_call, outcome, context, wire)):
                waiting.append((tool_call, None))
        return waiting

    def _started(self, executor: ToolExecutor, tool_call: ToolCall, call: int) -> ToolCallStarted:
        source = executor.source_of(tool_call.name)
        return ToolCallStarted(
            run_id=self.ctx.run_id,
            call=call,
            tool_call_id=tool_call.id,
            name=tool_call.name,
            arguments=tool_call.arguments,
            source=source,
            at=time.time(),
        )

    def _after(
        self,
        tool_call: ToolCall,
        outcome: CallOutcome,
        context: list[ContextRetrieved],
        wire: list[dict[str, Any]],
    ) -> Generator[Event, None, bool]:
        """A call's end: the child runs it started become this run's, then the context it
        retrieved, its state changes, its result. Returns True when it has no result yet: a
        member it delegated to waits for a person."""
        if outcome.children:
            self._delegated = True
            known = self.record.children
            for child in outcome.children:
                if not any(run is child for run in known):  # (a delegation going on after a pause: known)
                    self.record.adopt(child)
        if outcome.answer is not None:  # a member answered for this run (route mode, a handoff)
            self._direct = outcome.answer
        for retrieved in context:
            yield self._emit(retrieved)
        context.clear()
        for change in self.tracker.drain():
            yield self._emit(change)
        finished = outcome.finished
        if finished is None:
            return True
        yield self._emit(finished)
        self._tool_calls += 1
        message = Message.tool(tool_call, outcome.parts or finished.result)
        if outcome.parts:  # what the run's next requests refer to
            self._parts.update(parts_by_hash((message,)))
        self.ctx.messages.append(message)
        wire.append(message.to_openai())
        return False


__all__ = ["Acting"]
