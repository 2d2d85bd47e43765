"""The tool calls of one response when some delegations run side by side (``loop.Turn._act``).

The ``copy`` / ``none`` delegations the executor picks (``ToolExecutor.side_by_side``) start
together, each on the snapshot of the caller's state the response began with, on threads of
their own; the other calls (ordinary tools, ``live`` delegations) run in order on the caller's
thread meanwhile. Every result is taken, and every merge applied, in call order, so a re-run is
the same whichever member finishes first.

When the caller has tool hooks they run around each delegation on that delegation's thread, and
they write the caller's state: they take turns (``Baton``) in an order fixed in advance — the
hooks' code before each member, in call order; then each call's end (the hooks' code after its
member and its settling, or an ordinary call whole), in call order.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from ..events import StateCause, ToolCallFinished
from ..messages import ToolCall
from ..tools import Tool
from .executor import Batch, CallOutcome, ToolExecutor
from .finish import Finish


class Running:
    """One response's tool calls with some delegations running side by side: those started on
    one snapshot at once, the other calls run in order on the parent's thread (``run``), and
    each result taken in call order (``finish``), its changes applied then. A path a call
    changed before a delegation's merge (a sibling's merge, or a call run meanwhile: the
    delegation did not see it) and the delegation changed too is a conflict, as between
    siblings."""

    def __init__(
        self, executor: ToolExecutor, calls: Sequence[ToolCall], together: Sequence[bool], call: int
    ) -> None:
        self.executor, self.call, self.batch = executor, call, Batch()
        self.position = {id(tool_call): i for i, tool_call in enumerate(calls)}
        snapshot = executor.tracker.snapshot
        # Checked here, on the parent's thread (a check may read the parent's state).
        opened: dict[int, Any] = {}
        for i, (tool_call, now) in enumerate(zip(calls, together)):
            if now:
                done = Finish(executor.ctx.run_id, call, tool_call)
                checked = executor.check_call(tool_call, done)
                opened[i] = (
                    (done, None, checked)
                    if isinstance(checked, ToolCallFinished)
                    else (done, checked, tool_call)
                )
        started = [i for i, (_, checked, _) in opened.items() if checked is not None]
        # Hooks of the caller around the delegations write its state: they take turns (``Baton``).
        hooked = any(executor.hooks_of(opened[i][1][0]) for i in started)
        self.baton: Baton | None = Baton() if hooked else None
        self.ends = len(started)
        """Slots of the baton before the calls' ends: one per delegation started (its hooks' part
        before its member runs), in call order; then one per call (its end), in call order."""
        self.held: int | None = None
        """The slot the parent's thread holds for the call it handed over last (passed on at the next)."""
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(started)))
        self.futures: dict[int, concurrent.futures.Future[Any]] = {}
        self.failed: dict[int, tuple[Any, None, ToolCallFinished]] = {}
        for i, (done, checked, rest) in opened.items():
            if checked is None:
                self.failed[i] = (done, None, rest)
                continue
            work: Callable[..., Any] = (
                executor.delegate
                if self.baton is None
                else self._taking_turns(started.index(i), self.ends + i)
            )
            self.futures[i] = self.pool.submit(
                partial(contextvars.copy_context().run, work, done, *checked, rest, snapshot)
            )

    def _taking_turns(self, before: int, end: int) -> Callable[..., Any]:
        """A delegation whose hooks write the caller's state one at a time: its hooks' code before
        its member runs in slot ``before``, the code after (and its settling) in slot ``end``."""
        baton, executor = self.baton, self.executor
        assert baton is not None

        def run(
            done: Finish, tool: Tool, arguments: dict[str, Any], tool_call: ToolCall, snapshot: Any
        ) -> Any:
            where = {"in": False, "out": False}
            cause = StateCause(kind="tool", name=tool.name, tool_call_id=tool_call.id)

            def handed_over() -> None:
                where["in"] = True
                executor.tracker.checkpoint(cause)  # what its hooks wrote before, in this slot
                baton.give(before)

            def on_link(what: str, link: str) -> None:
                if link != "tool":
                    return
                if what == "enter" and not where["in"]:
                    handed_over()
                elif what == "exit" and where["in"] and not where["out"]:
                    where["out"] = True
                    baton.take(end)

            baton.take(before)
            try:
                return executor.delegate(done, tool, arguments, tool_call, snapshot, on_link)
            finally:
                if not where["in"]:  # answered or stopped by a hook: the member never ran
                    handed_over()
                if not where["out"]:
                    baton.take(end)
            # Its end slot is passed on by the parent's thread, once it settled the call.

        return run

    def finish(self, tool_call: ToolCall) -> CallOutcome:
        """A delegation started together: wait for its run, then settle it (call order)."""
        self._pass()
        i = self.position[id(tool_call)]
        future = self.futures.get(i)
        if future is None:
            self._take(self.ends + i)
            return self.executor.settle_delegation(*self.failed[i], self.batch)
        opened: tuple[Finish, Any, None] = future.result()
        self.held = self.ends + i if self.baton is not None else None  # taken by its thread
        return self.executor.settle_delegation(*opened, self.batch)

    def run(self, tool_call: ToolCall) -> CallOutcome:
        """Another call, run now on the parent's thread; the paths it changes are noted, so a
        delegation merged after it that changed one of them too is refused."""
        self._pass()
        self._take(self.ends + self.position[id(tool_call)])
        tracker = self.executor.tracker
        seen = len(tracker.pending)
        outcome = self.executor.run(tool_call, self.call, self.batch)
        for event in tracker.pending[seen:]:  # (a rollback leaves none of its own)
            for op in event.patch:
                self.batch.writers.setdefault(op["path"], f"tool:{tool_call.name}")
        return outcome

    def _take(self, slot: int) -> None:
        if self.baton is not None:
            self.baton.take(slot)
            self.held = slot

    def _pass(self) -> None:
        """The call handed over last is settled and its events are out: the next may go."""
        if self.baton is not None and self.held is not None:
            self.baton.give(self.held)
            self.held = None

    def close(self) -> None:
        """Wait for every thread (a batch cut short still ends its child runs)."""
        if self.baton is not None:
            self.baton.drop()  # nothing waits for a turn that will not come
        self.pool.shutdown(wait=True)


class Baton:
    """Slots taken one at a time in a fixed order: the threads of one response's calls touch the
    caller's state only while holding theirs, so what they write comes in the same order on every
    run, whichever member finishes first."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._turn = 0
        self._dropped = False

    def take(self, slot: int) -> None:
        """Wait until ``slot`` comes."""
        with self._cond:
            self._cond.wait_for(lambda: self._dropped or self._turn == slot)

    def give(self, slot: int) -> None:
        """``slot`` is done: the next one may go."""
        with self._cond:
            if self._turn == slot:
                self._turn = slot + 1
                self._cond.notify_all()

    def drop(self) -> None:
        """Stop the order (the batch ended, or was cut short)."""
        with self._cond:
            self._dropped = True
            self._cond.notify_all()


__all__ = ["Baton", "Running"]
