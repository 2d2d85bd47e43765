"""Delegations: a tool call that starts a child run.

An agent as a tool, a team's ``delegate_task_to_member(s)`` and a handoff's ``transfer_to_<name>``
are all this one mechanism. The executor opens a ``DelegationSite`` before the tool's hook chain;
the tool's function runs the member (``run_members``) with lineage (its RunStarted names the
parent run and tool call); after the chain, on the parent's thread and in call order, the site
settles what comes up into the parent's state. How state crosses the boundary is the
delegation's ``state`` mode (SPEC §3):

- ``copy``: the member runs on a deep copy of the parent's state (taken from the snapshot of the
  batch, so sibling delegations see the same one), its own private keys layered under it; on
  return only the paths it changed under the parent's keys are applied, each attributed to the
  member's tool or hook that made it (``StateCause(kind="merge", via=...)``).
- ``live``: the member runs on the parent's state object; its writes happen as it makes them.
- ``none``: only ``inputs_from_state`` keys go down, only ``outputs_to_state`` keys come up,
  through the parent's handlers.

Keys the parent did not give stay in the member's private state and never go up.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..errors import ConfigurationError, DelegationError
from ..events import Event, PromptSection, RunFailed, RunFinished, StateCause
from ..history.records import TurnRecord
from ..messages import Message
from ..run.executor import ParentRun
from ..run.loop import Lineage
from ..run.observe import count_added
from ..run.runs import RunInput
from ..state.diff import apply_patch, make_patch, tokens, top_level_key
from ..state.frozen import thaw
from ..state.state import replace_values
from ..state.tracking import StateTracker
from ..tools.run_context import RunContext

StateMode = Literal["none", "copy", "live"]
MemoryMode = Literal["per-call", "member"]
STATE_MODES = ("none", "copy", "live")
MEMORY_MODES = ("per-call", "member")
ANSWER_SOURCES = ("answer", "last_message")
"""``outputs_to_state`` sources meaning the member's final answer (Haystack says last_message)."""

_CURRENT: contextvars.ContextVar[DelegationSite | None] = contextvars.ContextVar(
    "agentnb_delegation", default=None
)


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
    earlier_sections: tuple[PromptSection, ...] = ()
    """Those messages as the member's prompt labels them (one section each, with what put it there)."""
    label: str = ""
    """The task as the leader wrote it (for interaction blocks and records)."""
    state_values: Mapping[str, Any] = field(default_factory=dict)
    """Values put into the member's state for this run (its instructions' placeholders the
    caller filled, as Haystack's AgentTool)."""


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
        return None if self.state == "live" else self.member_key(tool_call)

    def open(self, parent: ParentRun, ctx: RunContext, tool_call_id: str, snapshot: Any) -> DelegationSite:
        """The site of one delegate call (what the executor opens before the hook chain)."""
        return DelegationSite(self, parent, ctx, tool_call_id, snapshot)


@dataclass
class ChildRun:
    """A member run and what it brings up."""

    member: str
    """The member's name."""
    record: TurnRecord
    """Its record (a turn of the member's own history)."""
    ops: list[tuple[dict[str, Any], StateCause]] = field(default_factory=list)
    """``copy``: each operation on the parent's keys with the member-side author that made it."""
    outputs: list[tuple[str, Any, Any]] = field(default_factory=list)
    """``none``: (parent key, value, handler) for each ``outputs_to_state`` entry that has a value."""
    after: dict[str, Any] = field(default_factory=dict)
    """The member's state at its end (for merge handlers)."""


def current_site() -> DelegationSite:
    """The delegation in progress (a delegate tool's function runs inside one)."""
    site = _CURRENT.get()
    if site is None:
        raise DelegationError(
            "a delegate tool runs only as a tool call of an agent's run (the executor opens its delegation)"
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
        self.runs: list[ChildRun] = []
        self._assignments: list[Assignment] = []

    @property
    def live(self) -> bool:
        """Whether the members run on the parent's own state (nothing to merge)."""
        return self.delegation.state == "live"

    @property
    def children(self) -> list[TurnRecord]:
        """The child runs' records, in call order."""
        return [run.record for run in self.runs]

    @contextlib.contextmanager
    def activate(self) -> Iterator[None]:
        token = _CURRENT.set(self)
        try:
            yield
        finally:
            _CURRENT.reset(token)

    # -- running members ---------------------------------------------------------------------

    def run_members(self, assignments: Sequence[Assignment]) -> list[TurnRecord]:
        """Run each assignment as a child run: concurrently when there are several (each on the
        same snapshot); the results are kept in the order given."""
        if (
            len(assignments) == 1
            or len({id(a.member) for a in assignments}) < len(assignments)
            or self.delegation.state == "live"
        ):
            runs = [self._run(a) for a in assignments]
        else:
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(assignments)) as pool:
                futures = [pool.submit(contextvars.copy_context().run, self._run, a) for a in assignments]
                runs = [f.result() for f in futures]
        self.runs.extend(runs)
        self._assignments.extend(assignments)
        return [run.record for run in runs]

    def _run(self, assignment: Assignment) -> ChildRun:
        member, mode = assignment.member, self.delegation.state
        if any(name == member.name for name in self.parent.path):
            raise DelegationError(
                f"{member.name!r} is already running in this turn ({' ▸ '.join(self.parent.path)}); "
                "an agent cannot delegate to itself or to the agent that delegated to it"
            )
        with member._running():
            kept_history = member.add_history_to_context
            if self.delegation.memory is not None:
                member.add_history_to_context = self.delegation.memory == "member"
            own_state = member.state
            private = thaw(own_state.frozen())
            given: set[str] = set()
            run = ChildRun(member.name, None)  # type: ignore[arg-type]  # its record is set once the turn exists
            if mode == "live":
                member.state = self.ctx.state
                kept_messages = list(self.ctx.state.messages)
            else:
                given, view = self._view(member, private)
                own_state.replace_data(view)
            restored = False

            def restore(tracker: StateTracker | None) -> None:
                # Before the child's end event goes out (a member's session saves on it), the
                # member is given back its own state: what it saves is never the parent's.
                nonlocal restored
                if restored:
                    return
                restored = True
                member.add_history_to_context = kept_history
                if mode == "live":
                    self.ctx.state.messages[:] = kept_messages
                    member.state = own_state
                elif tracker is not None:
                    run.after = thaw(tracker.snapshot)
                    passed = given | set(assignment.state_values)  # values for this run only
                    own_state.replace_data(
                        {
                            **{k: v for k, v in run.after.items() if k not in passed},
                            **{k: private[k] for k in passed if k in private},
                        }
                    )
                    own_state.frozen(consume=True)
                else:
                    own_state.replace_data(private)
                    own_state.frozen(consume=True)

            try:
                run.record = self._turn(member, assignment, restore)
            finally:
                restore(None)
            if mode != "live":
                self._collect(run, given, private)
        return run

    def _view(self, member: Any, private: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
        """(the parent's keys given, the member's state for the run)."""
        parent = thaw(self.snapshot)
        schema = member.state.schema if member.state.has_schema else None
        if self.delegation.state == "copy":
            down = {k: v for k, v in parent.items() if schema is None or k in schema}
        else:
            down = {m: parent[p] for p, m in self.delegation.inputs_from_state.items() if p in parent}
        return set(down), {**private, **copy.deepcopy(down)}

    def _turn(
        self, member: Any, assignment: Assignment, before_end: Callable[[StateTracker], None]
    ) -> TurnRecord:
        turn = member._new_turn(
            RunInput(assignment.task, earlier=assignment.earlier, state_values=dict(assignment.state_values))
        )
        # The run starts from the state just put in place, not from the member's last turn.
        turn.tracker = StateTracker(member.state, turn.ctx.run_id, None)
        turn.setup.lineage = Lineage(self.parent.run_id, self.tool_call_id, (*self.parent.path, member.name))
        outward = self.parent.emit_child
        own = turn.setup.emit

        def emit(event: Event) -> None:
            if isinstance(event, (RunFinished, RunFailed)) and event.run_id == turn.ctx.run_id:
                before_end(turn.tracker)
            own(event)
            member._notify_children(event)
            outward(event)

        def emit_child(event: Event) -> None:
            member._notify_children(event)
            outward(event)

        turn.setup.emit, turn.setup.emit_child = emit, emit_child
        if assignment.sections or assignment.earlier_sections:
            prepare = turn.setup.prepare

            def labelled(ctx: RunContext, on_context: Any) -> Any:
                # What the team added, labelled by what produced it, and counted like the rest.
                prepared = replace(
                    prepare(ctx, on_context),
                    user_sections=assignment.sections,
                    earlier_sections=assignment.earlier_sections,
                )
                return replace(prepared, tokens=count_added(member, prepared))

            turn.setup.prepare = labelled
        for _ in turn.events():
            pass
        return turn.record

    def _collect(self, run: ChildRun, given: set[str], private: dict[str, Any]) -> None:
        """What comes up: ``copy``, the member's changes to the parent's keys with their
        authors; ``none``, the values of ``outputs_to_state``."""
        record = run.record
        if record.status != "ok":
            return
        if self.delegation.state == "copy":
            before = {k: v for k, v in record.state_start.items() if k in given}
            after = {k: v for k, v in run.after.items() if k in given}
            changes = record.state_changes
            for op in make_patch(before, after):
                run.ops.append((op, _author(op["path"], changes, record.path)))
            return
        for key, spec in self.delegation.outputs_to_state.items():
            source = spec.get("source")
            if source is None or source in ANSWER_SOURCES:
                value = record.content
            elif source in run.after:
                value = run.after[source]
            else:
                continue
            run.outputs.append((key, value, spec.get("handler")))

    # -- settling (the parent's thread, call order) -----------------------------------------------

    def settle(self, state: Any, tracker: StateTracker, writers: dict[str, str]) -> str | None:
        """Apply what each child run brings up; the text of a refusal (a conflict) or None."""
        for assignment, run in zip(self._assignments, self.runs):
            if self.delegation.on_answer is not None:
                self.delegation.on_answer(self.ctx, assignment, run.record)
        ok = [run for run in self.runs if run.record.status == "ok"]
        if self.delegation.respond_directly and ok:
            self.parent.respond(ok[-1].record.content or "")
        for run in self.runs:
            if run.record.status != "ok":
                continue
            cause = StateCause(
                kind="merge", name=run.member, tool_call_id=self.tool_call_id, via=run.record.path
            )
            if self.delegation.state == "live":
                tracker.checkpoint(cause)
            elif self.delegation.state == "none":
                for key, value, handler in run.outputs:
                    state.set(key, value, handler_override=handler)
                    used = handler or (state.handler_for(key) if state.has_schema else None)
                    tracker.checkpoint(
                        replace(
                            cause,
                            via=(*run.record.path, f"output:{key}"),
                            handler=getattr(used, "__name__", None),
                        )
                    )
            else:
                refused = self._merge(run, state, tracker, writers, cause)
                if refused is not None:
                    return refused
        return None

    def _merge(
        self, run: ChildRun, state: Any, tracker: StateTracker, writers: dict[str, str], cause: StateCause
    ) -> str | None:
        handlers = _explicit_handlers(self.ctx.agent)
        combined: dict[str, Any] = {}
        for op, _ in run.ops:
            other = next((w for p, w in writers.items() if w != run.member and _related(p, op["path"])), None)
            if other is None:
                continue
            key = top_level_key(op["path"]) or ""
            if key not in handlers:
                return _conflict_text(run, other, op["path"], key)
            combined[key] = handlers[key]
        start, pending = tracker.snapshot, list(tracker.pending)
        try:
            for key, handler in combined.items():
                state.set(key, copy.deepcopy(run.after.get(key)), handler_override=handler)
                tracker.checkpoint(replace(cause, handler=getattr(handler, "__name__", None)))
            for chain, ops in _groups(
                [(op, author) for op, author in run.ops if top_level_key(op["path"]) not in combined]
            ):
                current: dict[Any, Any] = {
                    k: thaw(tracker.snapshot.get(k))
                    for k in dict.fromkeys(top_level_key(op["path"]) for op in ops)
                    if k in state.data
                }
                patched = apply_patch(current, ops)
                for key, value in patched.items():
                    state.set(key, value, handler_override=replace_values)
                for key in current.keys() - patched.keys():
                    state.data.pop(key, None)
                tracker.checkpoint(replace(cause, via=chain))
        except Exception as exc:  # a patch that no longer applies (a sibling reshaped a list)
            tracker.rollback(start)
            tracker.pending = pending  # the siblings' merges before this one stand, with their events
            other = next(iter(set(writers.values()) - {run.member}), "an earlier delegation")
            return _conflict_text(
                run, other, run.ops[0][0]["path"], top_level_key(run.ops[0][0]["path"]) or "", why=str(exc)
            )
        for op, _ in run.ops:
            writers.setdefault(op["path"], run.member)
        return None


def _author(path: str, changes: Sequence[Any], run_path: tuple[str, ...]) -> StateCause:
    """The member-side change that last wrote ``path`` (or a path around or under it)."""
    for change in reversed(changes):
        if any(_related(op["path"], path) for op in change.patch):
            return change.cause
    return StateCause(kind="user", via=run_path)


def _chain(cause: StateCause) -> tuple[str, ...]:
    """The delegation chain of a member-side change, for the merge that carries it up."""
    return cause.via if cause.kind == "merge" else (*cause.via, cause.label())


def _groups(
    ops: list[tuple[dict[str, Any], StateCause]],
) -> list[tuple[tuple[str, ...], list[dict[str, Any]]]]:
    """Consecutive operations with one author, together."""
    out: list[tuple[tuple[str, ...], list[dict[str, Any]]]] = []
    for op, author in ops:
        chain = _chain(author)
        if out and out[-1][0] == chain:
            out[-1][1].append(op)
        else:
            out.append((chain, [op]))
    return out


def _related(a: str, b: str) -> bool:
    """Whether one JSON pointer is the other or lies under it."""
    ta, tb = tokens(a), tokens(b)
    n = min(len(ta), len(tb))
    return ta[:n] == tb[:n]


def _explicit_handlers(agent: Any) -> dict[str, Any]:
    """The merge handlers the parent's state schema declares (defaults do not count)."""
    schema = getattr(agent, "state_schema", None) or {}
    return {
        k: v["handler"] for k, v in schema.items() if isinstance(v, Mapping) and callable(v.get("handler"))
    }


def _conflict_text(run: ChildRun, other: str, path: str, key: str, why: str = "") -> str:
    extra = f" ({why})" if why else ""
    if other.startswith("tool:"):  # a call of the response run while the member ran (executor.Running)
        both = (
            f"{run.member!r} and the {other[5:]!r} call before it both changed {path} in one response "
            f"({run.member!r} ran beside that call, on the state from before it)"
        )
    else:
        both = f"{run.member!r} and {other!r} both changed {path} in delegations of one response"
    return (
        f"{both}{extra}; "
        f"the changes of {run.member!r} were not merged (they stay in its own run, its turn {run.record.number}). "
        f"Give {key!r} a merge handler (state_schema={{{key!r}: {{'type': ..., 'handler': fn}}}}), "
        f"or delegate these tasks one at a time."
    )


__all__ = [
    "Assignment",
    "ChildRun",
    "Delegation",
    "DelegationSite",
    "MemoryMode",
    "StateMode",
    "current_site",
]
