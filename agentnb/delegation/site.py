"""Delegations: a tool call that starts a child run.

An agent as a tool, a team's ``delegate_task_to_member(s)`` and a handoff's ``transfer_to_<name>``
are all this one mechanism. The executor opens a ``DelegationSite`` before the tool's hook chain;
the tool's function runs the member (``run_members``) with lineage (its RunStarted names the
parent run and tool call); after the chain, on the parent's thread and in call order, the site
settles what comes up into the parent's state. How state crosses the boundary is the
delegation's ``state`` mode, one strategy class each (``modes``).
"""

from __future__ import annotations

import concurrent.futures
import contextvars
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ConfigurationError, DelegationError, RunAbortError
from ..events import PromptSection, StateCause
from ..history.records import TurnRecord
from ..messages import Message, Part, TextPart
from ..run.executor import ParentRun, Settled
from ..run.runs import RunInput
from ..run.setup import Delegated, Lineage
from ..state.frozen import thaw
from ..state.tracking import StateTracker
from ..tools.run_context import RunContext
from .depth import check_depth
from .merge import ChildRun
from .modes import MODES, Entered

StateMode = Literal["none", "copy", "live"]
MemoryMode = Literal["per-call", "member"]
STATE_MODES = ("none", "copy", "live")
MEMORY_MODES = ("per-call", "member")


@dataclass(frozen=True)
class Assignment:
    """One member run a delegate tool asks for."""

    member: Any
    """The member agent (or team)."""
    task: str
    """The user message it receives (the task, after any blocks the team added)."""
    sections: tuple[PromptSection, ...] = ()
    """That message's parts and the options that produced them."""
    earlier: tuple[Message, ...] = ()
    """Messages sent before it (a handoff's filtered history)."""
    following: tuple[Message, ...] = ()
    """Messages sent after it (a handoff's run so far)."""
    earlier_sections: tuple[PromptSection, ...] = ()
    """The earlier and following messages as the member's prompt labels them (one section each,
    with what put it there)."""
    label: str = ""
    """The task as the leader wrote it (for interaction blocks and records)."""
    state_values: Mapping[str, Any] = field(default_factory=dict)
    """Values put into the member's state for this run (its instructions' placeholders the
    caller filled, as Haystack's AgentTool)."""
    attachments: tuple[Part, ...] = ()
    """Images and files sent after the task: the user's (a team's members and a handoff's
    target receive what the user sent, as Agno's members receive a run's media)."""


def user_attachments(messages: Sequence[Message]) -> tuple[Part, ...]:
    """The images and files of the last user message of ``messages`` (none when it is text)."""
    return next((m.attachments for m in reversed(messages) if m.role == "user"), ())


@dataclass
class Delegation:
    """How a delegate tool crosses the boundary (``as_tool``, team members, handoffs)."""

    kind: Literal["as_tool", "team", "handoff"]
    """Which configuration made it."""
    state: StateMode = "none"
    """copy / live / none (see the module docstring)."""
    inputs_from_state: dict[str, str] = field(default_factory=dict)
    """``state="none"``: {parent key: member key} given to the member."""
    outputs_to_state: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``state="none"``: {parent key: {"source": member key | "answer", "handler": fn?}}."""
    memory: MemoryMode | None = "per-call"
    """per-call: a fresh conversation each time; member: the member's earlier runs in context;
    None: as the member's own ``add_history_to_context`` says (team members, as Agno)."""
    respond_directly: bool = False
    """The member's answer ends the parent's run as its answer (route mode, handoffs)."""
    member_key: Callable[[Any], str | None] = lambda tool_call: tool_call.name
    """Which member a call goes to (sibling calls to one member run one after another)."""
    on_answer: Callable[[Any, Assignment, TurnRecord], None] | None = None
    """Called with (parent run context, assignment, child record) after each member run."""

    def __post_init__(self) -> None:
        if self.state not in STATE_MODES:
            raise ConfigurationError(
                f"state must be one of {', '.join(map(repr, STATE_MODES))}; got {self.state!r}"
            )
        if self.memory is not None and self.memory not in MEMORY_MODES:
            raise ConfigurationError(f"memory must be 'per-call' or 'member'; got {self.memory!r}")
        for key, spec in self.outputs_to_state.items():
            if not isinstance(spec, Mapping) or set(spec) - {"source", "handler"}:
                raise ConfigurationError(
                    f"outputs_to_state[{key!r}] must be "
                    f"{{'source': member key or 'answer', 'handler': fn?}}; got {spec!r}"
                )
            if spec.get("handler") is not None and not callable(spec["handler"]):
                raise ConfigurationError(
                    f"outputs_to_state[{key!r}]['handler'] must be a function (current, new) -> merged"
                )

    def parallel_key(self, tool_call: Any) -> str | None:
        """The member a call goes to, for running sibling calls together (None: never together)."""
        return None if MODES[self.state].live else self.member_key(tool_call)

    def open(self, parent: ParentRun, ctx: RunContext, tool_call_id: str, snapshot: Any) -> DelegationSite:
        """The site of one delegate call (what the executor opens before the hook chain)."""
        return DelegationSite(self, parent, ctx, tool_call_id, snapshot)


def site_of(site: DelegationSite | None, tool: str) -> DelegationSite:
    """The site a delegate tool's function was given; a clear error when the function is called
    directly instead of as a tool call of a run."""
    if site is None:
        raise DelegationError(
            f"{tool} runs only as a tool call of an agent's run (the executor gives it its delegation); "
            "call the agent instead"
        )
    return site


class DelegationSite:
    """One delegate tool call: the member runs it starts and what they bring up."""

    def __init__(
        self, delegation: Delegation, parent: ParentRun, ctx: RunContext, tool_call_id: str, snapshot: Any
    ) -> None:
        self.delegation, self.parent, self.ctx = delegation, parent, ctx
        self.tool_call_id = tool_call_id
        self.snapshot = snapshot
        self.mode = MODES[delegation.state]
        """How state crosses this delegation's boundary."""
        self.runs: list[ChildRun] = []
        self._assignments: list[Assignment] = []

    @property
    def live(self) -> bool:
        """Whether the members run on the parent's own state (nothing to merge)."""
        return self.mode.live

    @property
    def children(self) -> list[TurnRecord]:
        """The child runs' records, in call order."""
        return [run.done for run in self.runs]

    # -- running members ---------------------------------------------------------------------

    def run_members(self, assignments: Sequence[Assignment]) -> list[TurnRecord]:
        """Run each assignment as a child run: concurrently when there are several (each on the
        same snapshot); the results are kept in the order given."""
        if (
            len(assignments) == 1
            or len({id(a.member) for a in assignments}) < len(assignments)
            or self.mode.live
        ):
            runs = [self._run(a) for a in assignments]
        else:
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(assignments)) as pool:
                futures = [pool.submit(contextvars.copy_context().run, self._run, a) for a in assignments]
                runs = [f.result() for f in futures]
        self.runs.extend(runs)
        self._assignments.extend(assignments)
        return [run.done for run in runs]

    def _run(self, assignment: Assignment) -> ChildRun:
        member = assignment.member
        if any(name == member.name for name in self.parent.path):
            raise DelegationError(
                f"{member.name!r} is already running in this turn ({' ▸ '.join(self.parent.path)}); "
                "an agent cannot delegate to itself or to the agent that delegated to it"
            )
        earlier = next(
            (r for r in self.parent.went_before.get(self.tool_call_id, ()) if r.agent == member.name), None
        )
        if earlier is not None and earlier.status != "paused":
            return self._ran_before(member, earlier)
        limit = check_depth(self.parent, self.ctx.agent, member)
        with member._running():
            kept_history = member.add_history_to_context
            if self.delegation.memory is not None:
                member.add_history_to_context = self.delegation.memory == "member"
            run = ChildRun(member.name)
            entered = self.mode.enter(self, member)
            if earlier is not None:  # it paused for a person: it goes on where it stopped
                self.mode.resume(entered, earlier, assignment)
            left = False

            def leave(tracker: StateTracker | None) -> None:
                # Before the child's end event goes out (a member's session saves on it), the
                # member is given back its own state: what it saves is never the parent's.
                nonlocal left
                if not left:
                    left = True
                    member.add_history_to_context = kept_history
                    self.mode.leave(entered, run, assignment, tracker, self)

            try:
                run.record = self._turn(member, assignment, leave, limit, earlier)
            finally:
                leave(None)
            if run.done.status == "ok":
                self.mode.collect(self, run, entered)
        return run

    def _ran_before(self, member: Any, record: TurnRecord) -> ChildRun:
        """A member run this call started before its parent paused, which ended then: it is not
        run again; what it brings up is taken from its record."""
        run = ChildRun(member.name, record=record, after=thaw(record.frozen_after))
        if record.status == "ok" and not self.live:
            given = set(self.mode.down(self, member, thaw(self.snapshot)))
            self.mode.collect(self, run, Entered(member.state, given=given))
        return run

    def _turn(
        self,
        member: Any,
        assignment: Assignment,
        before_end: Callable[[StateTracker], None],
        limit: int,
        paused: TurnRecord | None = None,
    ) -> TurnRecord:
        delegated = Delegated(
            lineage=Lineage(self.parent.run_id, self.tool_call_id, (*self.parent.path, member.name), limit),
            outward=self.parent.emit_child,
            before_end=before_end,
            user_sections=assignment.sections,
            earlier_sections=assignment.earlier_sections,
        )
        turn = (
            member._continued_turn(delegated, paused)
            if paused is not None
            else member._new_turn(
                RunInput(
                    assignment.task,
                    earlier=assignment.earlier,
                    following=assignment.following,
                    state_values=dict(assignment.state_values),
                    parts=(TextPart(assignment.task), *assignment.attachments)
                    if assignment.attachments
                    else (),
                ),
                delegated,
            )
        )
        for _ in turn.events():
            pass
        if isinstance(turn.error, RunAbortError):  # the developer's bug ends the runs above it too
            raise turn.error
        return turn.record

    # -- settling (the parent's thread, call order) -----------------------------------------------

    def settle(self, state: Any, tracker: StateTracker, writers: dict[str, str]) -> Settled:
        """Apply what each child run brings up: refused at the first conflict."""
        for assignment, run in zip(self._assignments, self.runs):
            if self.delegation.on_answer is not None:
                self.delegation.on_answer(self.ctx, assignment, run.done)
        ok = [run for run in self.runs if run.done.status == "ok"]
        answer = (ok[-1].done.content or "") if self.delegation.respond_directly and ok else None
        for run in self.runs:
            if run.done.status != "ok":
                continue
            cause = StateCause(
                kind="merge", name=run.member, tool_call_id=self.tool_call_id, via=run.done.path
            )
            refused = self.mode.settle(self, run, state, tracker, writers, cause)
            if refused is not None:
                return Settled(refused, answer)
        return Settled(answer=answer)


__all__ = [
    "Assignment",
    "Delegation",
    "DelegationSite",
    "MemoryMode",
    "StateMode",
    "site_of",
]
