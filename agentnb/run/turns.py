"""How an agent makes a turn, as a part of ``Agent``: the turn complete when made (a top-level
run, a child run a delegation starts, or a paused run going on), and one turn of an agent at a
time."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, ContinueRunError
from ..events import Event, RunFailed
from ..history.records import TurnRecord, findable
from ..state.tracking import StateTracker
from ..tools.run_context import RunContext
from .gate import Gate
from .loop import Turn
from .observe import Prepared, count_added, count_tokens, prepare, tools_going_on
from .output import OutputSpec, asked
from .pending import pending_items
from .runs import RunInput
from .setup import Delegated, TurnSetup

if TYPE_CHECKING:
    from ..context import ContextProviders
    from ..tools import Tool
    from .prompt import PromptOptions

ABANDONED = "abandoned: a new turn started before this paused one was continued"
"""The error of a paused turn left behind by a new one."""


class TurnMaking:
    """Making an agent's turns (mixed into ``Agent``)."""

    name: str
    model: Any
    state: Any
    history: Any
    format: Any
    recording: Any
    in_charge: Any
    handoffs: list[Any]
    tool_hooks: list[Callable[..., Any]]
    approval: Callable[..., Any] | None
    breakpoints: frozenset[str]
    max_tool_iterations: int
    model_options: dict[str, Any]
    overwrite_db_session_state: bool
    _edits: list[Any]
    _lock: threading.Lock
    _notify: Callable[[Event], None]
    _notify_children: Callable[[Event], None]
    # What the Observe step reads (observe.AgentSetup), given by the agent too.
    prompt: PromptOptions
    add_history_to_context: bool
    num_history_runs: int | None
    add_dependencies_to_context: bool
    context_providers: ContextProviders

    if TYPE_CHECKING:

        def all_tools(self) -> list[Tool]: ...

        def leading_sections(self, ctx: RunContext) -> list[tuple[str, str]]: ...

        def _output_spec(self, output_type: Any = None) -> OutputSpec | None: ...  # TypedOutput's

    def _new_turn(self, inputs: RunInput, delegated: Delegated | None = None) -> Turn:
        """A turn of this agent, complete: a top-level one, or (``delegated``) a child run that
        a delegation starts, with its place in the tree and where its events go."""
        run_id = os.urandom(6).hex()
        self._edits.clear()  # from here they are this turn's changes by "user", not undoable
        ctx = RunContext.for_agent(self, run_id, inputs.dependencies)
        last = self.history[-1] if len(self.history) else None
        if last is not None and last.status == "paused" and delegated is None:
            self._abandon(last)
        # A finished turn's state_after is a snapshot nothing mutates: the next one starts there;
        # a delegated run starts from the state its delegation just put in place.
        start = last.frozen_after if last and last.status != "running" and delegated is None else None
        tracker = StateTracker(self.state, run_id, start)
        record = TurnRecord(
            index=len(self.history),
            run_id=run_id,
            agent=self.name,
            message=inputs.text,
            model=self.model.label,
            started_at=time.time(),
        )
        self.history.append(record)
        if delegated is not None:  # a child run: its parent finds it by its run id
            findable(record)
        setup = self._setup(inputs, delegated, record.message)
        return Turn(setup, record, ctx, tracker, inputs.state_values, inputs.session_state)

    def _continued_turn(self, delegated: Delegated | None = None, record: TurnRecord | None = None) -> Turn:
        """The paused turn going on (the last one; for a delegated run, ``record``), once every
        item it waits for is decided: the same record, run id and conversation."""
        if record is None:
            record = self.paused_turn()
        undecided = [item for item in pending_items(record) if not item.decided]
        if undecided:
            names = ", ".join(repr(item) for item in undecided)
            raise ContinueRunError(
                f"agent {self.name!r}: turn {record.number} still waits for {len(undecided)} decision(s): "
                f"{names}. Decide each (approve(), reject('why'), answer(value)), then continue_run()"
            )
        self._edits.clear()
        ctx = RunContext.for_agent(self, record.run_id, turn=record.index)
        tracker = StateTracker(self.state, record.run_id, record.frozen_after)
        return Turn(self._setup(None, delegated, record.message), record, ctx, tracker, {})

    def paused_turn(self) -> TurnRecord:
        """The turn that waits for a person (the last one); ContinueRunError when there is none."""
        last = self.history[-1] if len(self.history) else None
        if last is None or last.status != "paused" or last.pause is None:
            state = f"its last turn is {last.status}" if last is not None else "it has no turns"
            raise ContinueRunError(
                f"agent {self.name!r} has no paused turn to continue ({state}); a turn pauses when a call "
                "needs a person (requires_approval, ask_user, external, break_before)"
            )
        return last

    def _setup(self, inputs: RunInput | None, delegated: Delegated | None, message: str) -> TurnSetup:
        """What a turn of this agent is given: a new one (``inputs``), or a paused one going on."""
        output = self.format.output_formatter
        fields = list(self.format.output_fields)
        emit, emit_child = self._emits(delegated)
        spec = self._output_spec(inputs.output_type if inputs is not None else None)
        how = asked(spec, self.model)
        path = delegated.lineage.path if delegated is not None else (self.name,)
        return TurnSetup(
            model=self.model,
            prepare=self._preparer(inputs or RunInput(message), delegated, how.trailing),
            emit=emit,
            hooks=self.tool_hooks,
            max_tool_iterations=self.max_tool_iterations,
            model_options={**self.model_options, **how.options} if how.options else self.model_options,
            output=spec,
            output_mode=how.mode,
            parse_output=(lambda content: output.parse(content, fields)) if output is not None else None,
            replay=self.recording,
            overwrite_state=self.overwrite_db_session_state,
            count_tokens=lambda prepared: count_tokens(self, prepared, exact_only=True),
            emit_child=emit_child,
            handoff_to=self._continuing() if inputs is not None else None,
            lineage=delegated.lineage if delegated is not None else None,
            before_end=delegated.before_end if delegated is not None else None,
            gate=Gate(self.approval, self.breakpoints, path),
            tools=lambda run_ctx, on_context: tools_going_on(self, run_ctx, on_context, message),
        )

    def _abandon(self, record: TurnRecord) -> None:
        """A new turn starts while ``record`` waits for a person: it ends there, failed (and the
        runs below it that wait too)."""
        for run in record.walk():
            if run.status != "paused":
                continue
            run.status, run.pause, run.error = "failed", None, ABANDONED
            run.events.append(
                RunFailed(
                    run_id=run.run_id,
                    error=ABANDONED,
                    error_type=ContinueRunError.__name__,
                    usage=run.usage,
                    usage_total=run.usage_total,
                    duration_ms=run.duration_ms,
                )
            )
        self._notify(record.events[-1])

    def _emits(self, delegated: Delegated | None) -> tuple[Callable[[Event], None], Callable[[Event], None]]:
        """Where a turn's events go, and those of the runs it delegates to: this agent's
        subscribers, and for a delegated run also up the tree."""
        if delegated is None:
            return self._notify, self._notify_children
        own, children, outward = self._notify, self._notify_children, delegated.outward

        def emit(event: Event) -> None:
            own(event)
            children(event)
            outward(event)

        def emit_child(event: Event) -> None:
            children(event)
            outward(event)

        return emit, emit_child

    def _preparer(
        self, inputs: RunInput, delegated: Delegated | None, trailing: tuple[tuple[str, str], ...]
    ) -> Callable[..., Prepared]:
        """The turn's Observe step; a delegated run's message parts and earlier messages labelled
        by what produced them (the team's blocks, a handoff's history) and counted like the rest."""

        def prepared(run_ctx: RunContext, on_context: Callable[..., Any]) -> Prepared:
            return prepare(
                self,
                inputs.message,
                run_ctx,
                on_context,
                inputs.earlier,
                trailing,
                inputs.following,
                inputs.parts,
            )

        if delegated is None or not (delegated.user_sections or delegated.earlier_sections):
            return prepared

        def labelled(run_ctx: RunContext, on_context: Callable[..., Any]) -> Prepared:
            done = dataclasses.replace(
                prepared(run_ctx, on_context),
                user_sections=delegated.user_sections,
                earlier_sections=delegated.earlier_sections,
            )
            return dataclasses.replace(done, tokens=count_added(self, done))

        return labelled

    def _continuing(self) -> str | None:
        """The handoff tool that gives this turn to the agent in charge (None: this agent answers)."""
        if self.in_charge is None:
            return None
        spec = next((h for h in self.handoffs if h.agent is self.in_charge), None)
        return spec.tool_name if spec is not None else None

    @property
    def running(self) -> bool:
        """A turn of this agent is running now (on any thread)."""
        return self._lock.locked()

    @contextlib.contextmanager
    def _running(self) -> Iterator[None]:
        if not self._lock.acquire(blocking=False):
            raise ConfigurationError(f"agent {self.name!r} is already running a turn; wait for it to finish")
        try:
            yield
        finally:
            self._lock.release()


__all__ = ["TurnMaking"]
