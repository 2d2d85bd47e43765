"""One tool call, start to finish: lookup, argument checks, the hook chain, outputs to state,
and a result or a clear error for the model.

Nothing a tool call does can end the run: an unknown tool, malformed or invalid arguments, a
tool or hook that raises, a state left invalid — each becomes that call's error result (the
model reads it and may try again) and the call's state changes are rolled back.

A call the run's gate stops (``run.gate``) does not run: ``pending`` names what it waits for,
and once a person decided, ``run(..., decision=...)`` runs it (as asked, or with their
arguments), or ends it with their rejection or answer.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import PartError, StateKeyError, StateTypeError, ToolArgumentsError
from ..events import CauseKind, Decision, PendingCall, StateCause, ToolCallFinished
from ..messages import Part, ToolCall
from ..state.tracking import Authors, StateTracker
from ..tools import AGENTIC_TOOL, Tool, result_parts, result_text, run_chain
from ..tools.run_context import RunContext
from ..tools.tool import DELEGATION
from ..util.text import shorten
from .finish import Finish
from .gate import Gate


@dataclass
class ParentRun:
    """What a delegation needs from the run whose tool call starts it."""

    run_id: str
    """The parent run's id."""
    path: tuple[str, ...]
    """Agent names from the top-level run down to the parent."""
    emit_child: Callable[[Any], None] = lambda event: None
    """Where a child run's events go live (the parent agent's ``children=True`` subscribers)."""
    depth_limit: int | None = None
    """The deepest a run below may be, as set above the parent (None: the parent is at the top)."""
    went_before: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    """For a paused run going on: the child runs each waiting delegation started before the
    pause, by its tool call id (one that waits goes on; one that ended is not run again)."""


class Site(Protocol):
    """A delegation in progress (``delegation.DelegationSite``): the executor opens it before the
    hook chain, and settles it after, on the parent's thread and in call order."""

    children: list[Any]
    """The child runs' records, in call order, once they ran."""
    live: bool
    """Whether the members ran on the parent's own state (their writes are already there)."""
    tool_call_id: str
    """The delegate call's id."""

    def settle(self, state: Any, tracker: StateTracker, writers: dict[str, str]) -> Settled:
        """Apply what comes up to the parent's state."""


@dataclass(frozen=True)
class Settled:
    """What settling a delegation gave."""

    refused: str | None = None
    """Why what came up was refused (a conflict); None when it was applied."""
    answer: str | None = None
    """The member's answer, when it answers for the whole run (route mode, a handoff)."""


@dataclass(frozen=True)
class CallOutcome:
    """What one tool call hands back to its run."""

    finished: ToolCallFinished | None
    """Its end event: the result the model reads, or the error (None: it waits, see ``waiting``)."""
    children: tuple[Any, ...] = ()
    """The records of the child runs a delegation started, in call order: the run adopts them."""
    answer: str | None = None
    """A delegation's answer for the whole run (route mode, a handoff): no more model calls."""
    waiting: tuple[Any, ...] = ()
    """A delegation's child runs that paused for a person: the call has no result yet, and its
    run pauses too (their pending items are its own)."""
    parts: tuple[Part, ...] = ()
    """The result's text, images and files, when the tool returned images or files (the tool
    message carries them; the end event describes them)."""


@dataclass
class Batch:
    """The tool calls of one model response that run together."""

    writers: dict[str, str] = field(default_factory=dict)
    """State path -> the member whose merge wrote it, for conflicts between sibling delegations."""


class ToolExecutor:
    """Runs the tool calls of one run."""

    def __init__(
        self,
        tools: Mapping[str, Tool],
        hooks: list[Callable[..., Any]],
        ctx: RunContext,
        tracker: StateTracker,
        recorded: Callable[[ToolCall], ToolCallFinished | None] | None = None,
        parent: ParentRun | None = None,
        gate: Gate | None = None,
    ) -> None:
        self.tools = tools
        self.hooks = hooks
        self.ctx = ctx
        self.tracker = tracker
        self.recorded = recorded
        """Looks up a recorded outcome for tools outside the process (see ``run.setup.Replay``)."""
        self.parent = parent
        """The run these calls belong to, for the delegations among them."""
        self.gate = gate
        """What stops a call for a person (None: nothing does)."""

    def pending(self, tool_call: ToolCall, call: int) -> PendingCall | None:
        """What the call waits for before it may run, or None to run it now. A call that cannot
        run (no such tool, arguments that do not fit) does not wait: its error goes to the model."""
        tool = self.tools.get(tool_call.name)
        if self.gate is None or tool is None or not self.gate.may_stop(tool):
            return None
        checked = self.check_call(tool_call, Finish(self.ctx.run_id, call, tool_call))
        if isinstance(checked, ToolCallFinished):
            return None
        tool, arguments = checked
        return self.gate.tool_item(tool, arguments, tool_call, call, self.ctx)

    def is_delegation(self, name: str) -> bool:
        """Whether the tool ``name`` starts a child run (agent as tool, team member, handoff)."""
        tool = self.tools.get(name)
        return tool is not None and tool.delegation is not None

    def side_by_side(self, calls: Sequence[ToolCall]) -> list[bool]:
        """Which calls of a batch run concurrently (in the order given; all False: one after
        another). The ``copy`` / ``none`` delegations, when there is another call to run beside
        them: ordinary calls and ``live`` delegations (which share the parent's state) run in
        order on the parent's thread meanwhile. Not when two delegations may go to one member (or
        to a member not known before the call: a broadcast, a bad ``member_id``)."""
        none = [False] * len(calls)
        if len(calls) < 2 or self.parent is None:
            return none
        delegations = [self.tools[c.name].delegation if c.name in self.tools else None for c in calls]
        members = [d.member_key(c) for d, c in zip(delegations, calls) if d is not None]
        if None in members or len(set(members)) < len(members):
            return none
        together = [d is not None and d.parallel_key(c) is not None for d, c in zip(delegations, calls)]
        return together if any(together) else none

    def source_of(self, name: str) -> str | None:
        """Where the tool ``name`` comes from when not from Python here (an MCP server)."""
        return getattr(self.tools.get(name), "source", None)

    def schedule(self, calls: Sequence[ToolCall]) -> list[ToolCall]:
        """The order a batch of calls runs in: the model's, except that a call reading a state
        key (``inputs_from_state``, or a ``State`` parameter) runs after the calls of the batch
        that write it (Haystack's read-after-write rule; a cycle runs in the model's order), and
        handoffs run after the other calls."""
        if len(calls) < 2:
            return list(calls)
        io = [self._state_io(c) for c in calls]
        pending = list(range(len(calls)))
        order: list[int] = []
        while pending:
            ready = [j for j in pending if not any(i != j and _overlap(io[j][0], io[i][1]) for i in pending)]
            for j in ready or pending[:1]:
                pending.remove(j)
                order.append(j)
        # Handoffs last (OpenAI): the agent handed to sees what the response's other calls did.
        return sorted((calls[j] for j in order), key=self._is_handoff)

    def _is_handoff(self, tool_call: ToolCall) -> bool:
        tool = self.tools.get(tool_call.name)
        return tool is not None and tool.delegation is not None and tool.delegation.kind == "handoff"

    def _state_io(self, tool_call: ToolCall) -> tuple[set[str] | None, set[str] | None]:
        """(keys read, keys written) by a call; None: every key."""
        tool = self.tools.get(tool_call.name)
        if tool is None:
            return set(), set()
        if "state" in tool.injected.values():
            return None, None
        try:
            sent = tool_call.parsed_arguments()
        except ValueError:
            sent = {}
        sent = sent if isinstance(sent, dict) else {}
        reads = {key for key, param in (tool.inputs_from_state or {}).items() if param not in sent}
        return reads, set(tool.outputs_to_state or {})

    def run(
        self, tool_call: ToolCall, call: int, batch: Batch | None = None, decision: Decision | None = None
    ) -> CallOutcome:
        """Run one call (after a person's ``decision``, when its run paused for one); its state
        changes wait in ``tracker.pending``."""
        if decision is not None and decision.verdict in ("rejected", "answered"):
            return CallOutcome(self._decided(tool_call, call, decision))
        asked = tool_call.arguments
        if decision is not None and decision.verdict == "edited":
            tool_call = ToolCall(
                tool_call.id, tool_call.name, json.dumps(decision.arguments, ensure_ascii=False)
            )
        if self.is_delegation(tool_call.name) and self.parent is not None:
            done = Finish(self.ctx.run_id, call, tool_call, decision, asked)
            return self.settle_delegation(
                *self._open(done, tool_call, self.tracker.snapshot), batch or Batch()
            )
        done = Finish(self.ctx.run_id, call, tool_call, decision, asked)
        return CallOutcome(self._run(done, tool_call), parts=done.parts)

    def _decided(self, tool_call: ToolCall, call: int, decision: Decision) -> ToolCallFinished:
        """A call a person rejected (the model reads why), or answered (their answer is its
        result, put into the state by the tool's ``outputs_to_state`` as theirs)."""
        done = Finish(self.ctx.run_id, call, tool_call, decision)
        if decision.verdict == "rejected":
            return done.rejected(decision.reason or "")
        value = decision.value
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        checked = self.check_call(tool_call, done)
        if isinstance(checked, ToolCallFinished):
            return checked
        tool = checked[0]
        start = self.tracker.snapshot
        try:
            self._apply_outputs(tool, value, tool_call.id, kind="person")
            changed = self.tracker.changed_since(start)
            if self.ctx.state.has_schema:
                self.ctx.state.validate(changed)
        except (StateKeyError, StateTypeError) as exc:
            self.tracker.rollback(start)
            message = f"the answer to {tool.name!r} left the state invalid: {exc}. The state was not changed."
            return done.failed("state_error", message)
        return done.ok(text, (), answered_by="person", changed_keys=tuple(changed))

    def _open(
        self, done: Finish, tool_call: ToolCall, snapshot: Any
    ) -> tuple[Any, Any, ToolCallFinished | None]:
        """A delegation up to its child run's end; nothing of the parent's state is touched."""
        checked = self.check_call(tool_call, done)
        if isinstance(checked, ToolCallFinished):
            return done, None, checked
        return self.delegate(done, *checked, tool_call, snapshot)

    def delegate(
        self,
        done: Finish,
        tool: Tool,
        arguments: dict[str, Any],
        tool_call: ToolCall,
        snapshot: Any,
        on_link: Callable[[str, str], Any] | None = None,
    ) -> tuple[Any, Any, None]:
        """A checked delegation's chain, its child run inside (on any thread)."""
        assert tool.delegation is not None  # run() sends only delegating tools here
        site = tool.delegation.open(self.parent, self.ctx, tool_call.id, snapshot)
        outcome = run_chain(
            tool, arguments, self.hooks_of(tool), self.ctx, on_link=on_link, extra={DELEGATION: site}
        )
        return done, (tool, site, outcome), None

    def hooks_of(self, tool: Tool) -> list[Callable[..., Any]]:
        """The hooks a call of ``tool`` goes through: the agent's, else the tool's own (Agno)."""
        return self.hooks or tool.tool_hooks or []

    def settle_delegation(
        self, done: Finish, opened: Any, failed: ToolCallFinished | None, batch: Batch
    ) -> CallOutcome:
        """A delegation's end, on the parent's thread: its child runs handed back for the run to
        adopt, its changes applied."""
        if failed is not None:
            return CallOutcome(failed)
        tool, site, outcome = opened
        steps = tuple(outcome.steps)
        children = tuple(site.children)
        waiting = tuple(child for child in children if child.status == "paused")
        if waiting:  # a member waits for a person: so does this call, with nothing settled
            if site.live:  # what the members wrote on the way is theirs
                for child in waiting:
                    self.tracker.checkpoint(
                        StateCause(
                            kind="merge", name=child.agent, tool_call_id=site.tool_call_id, via=child.path
                        )
                    )
            return CallOutcome(None, children, waiting=waiting)
        extra: dict[str, Any] = {"child_run_id": children[0].run_id if children else None}
        if len(children) > 1:
            extra["child_run_ids"] = tuple(c.run_id for c in children)
        if not site.live:  # what the parent's hooks wrote around the delegation is theirs
            self.tracker.checkpoint(StateCause(kind="tool", name=tool.name, tool_call_id=site.tool_call_id))
        if outcome.error is not None:
            kind, error = _blame(tool, outcome.error, outcome.error_source)
            return CallOutcome(done.failed(kind, error, hooks=steps, answered_by=None, **extra), children)
        start = self.tracker.snapshot
        settled = site.settle(self.ctx.state, self.tracker, batch.writers) if children else Settled()
        if settled.refused is not None:
            failed = done.failed(
                "merge_conflict", settled.refused, hooks=steps, answered_by=outcome.answered_by, **extra
            )
            return CallOutcome(failed, children, settled.answer)
        changed = tuple(self.tracker.changed_since(start))
        finished = done.ok(
            result_text(outcome.result), steps, answered_by=outcome.answered_by, changed_keys=changed, **extra
        )
        return CallOutcome(finished, children, settled.answer)

    def _run(self, done: Finish, tool_call: ToolCall) -> ToolCallFinished:
        edited_by = done.edited_by
        checked = self.check_call(tool_call, done)
        if isinstance(checked, ToolCallFinished):
            return checked
        tool, arguments = checked
        done.base["source"] = getattr(tool, "source", None)
        recorded = (
            self.recorded(tool_call)
            if self.recorded is not None and getattr(tool, "outside_process", False)
            else None
        )
        if recorded is not None:
            # The server's answer as recorded: the hooks run as Python does, the server is not asked.
            tool = _Recorded.stand_in(tool, recorded)
            done.base["replayed"] = True
        start = self.tracker.snapshot
        authors = Authors(self.tracker, lambda link: self._cause(tool, tool_call.id, link, edited_by))
        # The agent's hooks replace a tool's own (``@tool(tool_hooks=...)``), as in Agno.
        hooks = self.hooks or tool.tool_hooks or []
        outcome = run_chain(tool, arguments, hooks, self.ctx, on_link=authors.on_link if hooks else None)
        steps = tuple(outcome.steps)
        if outcome.error is not None:
            self.tracker.rollback(start)
            if isinstance(outcome.error, _Recorded):
                assert recorded is not None  # only the recorded stand-in raises _Recorded
                return done.ok(recorded.result, steps, error=recorded.error, error_kind=recorded.error_kind)
            return done.failed(
                *_blame(tool, outcome.error, outcome.error_source), hooks=steps, answered_by=None
            )
        authors.close()
        try:
            text, parts = result_parts(outcome.result)
        except PartError as exc:
            self.tracker.rollback(start)
            message = f"tool {tool.name!r} returned what cannot be sent to the model: {exc}"
            return done.failed("tool_error", message, hooks=steps, answered_by=outcome.answered_by)
        try:
            self._apply_outputs(tool, outcome.result, tool_call.id, edited_by=edited_by)
            changed = self.tracker.changed_since(start)
            if self.ctx.state.has_schema:
                self.ctx.state.validate(changed)
        except (StateKeyError, StateTypeError) as exc:
            self.tracker.rollback(start)
            message = f"tool {tool.name!r} left the state invalid: {exc}. The state was not changed."
            return done.failed("state_error", message, hooks=steps, answered_by=outcome.answered_by)
        if not parts:
            return done.ok(text, steps, answered_by=outcome.answered_by, changed_keys=tuple(changed))
        return done.with_parts(
            text, parts, steps, answered_by=outcome.answered_by, changed_keys=tuple(changed)
        )

    def check_call(self, tool_call: ToolCall, done: Finish) -> tuple[Tool, dict[str, Any]] | ToolCallFinished:
        """The tool and its checked arguments, or the call's error: no such tool, arguments that
        are not JSON, arguments that do not fit the schema."""
        if tool_call.problem is not None:
            available = ", ".join(sorted(self.tools)) or "(none)"
            return done.failed("malformed_call", f"{tool_call.problem}. Available tools: {available}.")
        tool = self.tools.get(tool_call.name)
        if tool is None:
            available = ", ".join(sorted(self.tools)) or "(none)"
            return done.failed(
                "unknown_tool", f"there is no tool named {tool_call.name!r}. Available tools: {available}."
            )
        try:
            raw = tool_call.parsed_arguments()
        except ValueError as exc:
            why = (
                f"{exc.msg} at position {exc.pos}"
                if isinstance(exc, json.JSONDecodeError)
                else shorten(str(exc), 200)
            )
            return done.failed(
                "malformed_arguments",
                f"the arguments for {tool.name!r} are not valid JSON ({why}). "
                "Send a JSON object matching the tool's parameters.",
            )
        try:
            return tool, tool.validate_arguments(raw, self.ctx.state)
        except ToolArgumentsError as exc:
            return done.failed(
                "invalid_arguments",
                f"invalid arguments for {tool.name!r}: {exc}. Fix the arguments and call the tool again.",
            )

    @staticmethod
    def _cause(tool: Tool, tool_call_id: str, link: str, edited_by: str | None = None) -> StateCause:
        if link == "tool":
            kind: CauseKind = "agentic" if tool.name == AGENTIC_TOOL else "tool"
            return StateCause(kind=kind, name=tool.name, tool_call_id=tool_call_id, edited_by=edited_by)
        return StateCause(kind="hook", name=link, tool_call_id=tool_call_id, edited_by=edited_by)

    def _apply_outputs(
        self,
        tool: Tool,
        result: Any,
        tool_call_id: str,
        *,
        kind: CauseKind = "output",
        edited_by: str | None = None,
    ) -> None:
        """Put the result into state by ``outputs_to_state``: an entry without ``source`` takes
        the whole result, whatever it is (SPEC 1.6; Haystack merges dict results only); one with
        a ``source`` takes that key of a dict result, and is skipped when there is none (Haystack)."""
        state = self.ctx.state
        for key, spec in (tool.outputs_to_state or {}).items():
            source = spec.get("source")
            if source is not None and not (isinstance(result, dict) and source in result):
                continue
            handler = spec.get("handler")
            state.set(key, result if source is None else result[source], handler_override=handler)
            used = handler or (state.handler_for(key) if state.has_schema else None)
            self.tracker.checkpoint(
                StateCause(
                    kind=kind,
                    name=tool.name,
                    tool_call_id=tool_call_id,
                    handler=getattr(used, "__name__", None) if used else None,
                    edited_by=edited_by,
                )
            )


def _blame(tool: Tool, exc: BaseException, source: str | None) -> tuple[str, str]:
    """The error kind and text of a tool or hook that raised."""
    who = f"tool {tool.name!r}" if source == "tool" else f"hook {source!r}"
    kind = "tool_error" if source == "tool" else "hook_error"
    if isinstance(exc, (StateKeyError, StateTypeError)):
        kind = "state_error"
    return kind, f"{exc} ({type(exc).__name__} raised by {who})" if str(
        exc
    ) else f"{type(exc).__name__} raised by {who}"


class _Recorded(Exception):
    """A recorded failure, raised by a stand-in tool so the call fails with the recorded text."""

    @staticmethod
    def stand_in(tool: Tool, recorded: ToolCallFinished) -> Tool:
        """``tool`` answering with ``recorded``'s result (or failing with its error)."""

        def answer(**arguments: Any) -> str:
            if recorded.error is not None:
                raise _Recorded(recorded.error)
            return recorded.result

        return dataclasses.replace(
            tool, function=answer, outputs_to_state={}, inputs_from_state={}, injected={}
        )


def _overlap(reads: set[str] | None, writes: set[str] | None) -> bool:
    """Whether a call reading ``reads`` depends on one writing ``writes`` (None: every key)."""
    if reads is None:
        return writes is None or bool(writes)
    if writes is None:
        return bool(reads)
    return bool(reads & writes)


__all__ = ["Batch", "CallOutcome", "ParentRun", "Settled", "Site", "ToolExecutor"]
