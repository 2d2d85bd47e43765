"""The Observe → Think → Act loop of one run, as a plain generator of events.

Observe: the prompt is rendered from the state at the start of the run (``observe.prepare``).
Think: the model answers with text or tool calls. Act: each tool call runs through the hook
chain (``executor.ToolExecutor``); its result, or a clear error, goes back to the model as a
``role=tool`` message. The loop ends on a final answer, or fails after ``max_tool_iterations``
rounds of tool calls. Every state change is attributed to whoever made it (``tracking``).

A run may also pause (``pausing``): before a call a person must decide (the response's other
calls run first) or at a breakpoint; ``events()`` of a turn made for a paused record goes on from
there, the same run in the same record.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..errors import AgentRunError, MaxToolIterationsError, StateKeyError, StateTypeError
from ..events import (
    ContextRetrieved,
    Event,
    OutputChecked,
    PromptRendered,
    RunFailed,
    RunFinished,
    StateCause,
    TextDelta,
    ToolCallFinished,
    Usage,
)
from ..events.parts import NO_USAGE, USER_CAUSE
from ..history.pause import Pause
from ..history.records import TurnRecord
from ..messages import BinaryPart, Message, ToolCall
from ..messages.wire import parts_by_hash
from ..models.base import REASONING_KEY, ModelResponse
from ..state.tracking import StateTracker
from ..tools import Tool
from ..tools.run_context import RunContext
from ..util.text import one_line
from .acting import Acting
from .answers import Answered, Attempts
from .executor import ToolExecutor
from .observe import Prepared
from .pausing import Pausing
from .setup import TurnSetup, continuation_id, run_started
from .thinking import Thinking


class Turn(Acting, Pausing, Thinking):
    """One run. Iterate ``events()``; afterwards ``.record`` holds everything and ``.error``
    says why it failed, if it did."""

    def __init__(
        self,
        setup: TurnSetup,
        record: TurnRecord,
        ctx: RunContext,
        tracker: StateTracker,
        state_values: Mapping[str, Any],
        session_state: Mapping[str, Any] | None = None,
    ) -> None:
        self.setup, self.record, self.ctx, self.tracker = setup, record, ctx, tracker
        self.state_values = state_values
        self.session_state = session_state
        self.error: BaseException | None = None
        self._usage, self._model_calls, self._tool_calls, self._start = NO_USAGE, 0, 0, 0.0
        self._context_messages = slice(0, 0)
        self._prepared: Prepared | None = None
        self._direct: str | None = None
        self._delegated = record.pause is not None
        """Whether this run has child runs (a delegation ended in it, or it goes on after a pause
        that may hold some): until then its children's usage is nothing, read for free."""
        self._answer: Answered | None = None
        """The accepted answer to the run's output type."""
        self._parts: dict[str, BinaryPart] = {}
        """The images and files of the run's messages, by hash (what its requests refer to)."""
        replay = setup.replay
        self.attempts: Attempts | None = (
            Attempts(
                setup.output,
                setup.output_mode,
                ctx.run_id,
                ctx,
                (lambda check: replay.checked(record, check, setup.model)) if replay is not None else None,
                [e for e in record.events if type(e) is OutputChecked],  # before a pause
            )
            if setup.output is not None and setup.output.checks_answers()
            else None
        )
        """The answers checked against the run's output type (None: a run without one)."""
        self._streams(setup, ctx.run_id)
        # ``_emit`` runs for every event: the record's event list (a lazy field) and the emit, read once.
        self._record_event, self._notify = record.events.append, setup.emit

    @property
    def usage_total(self) -> Usage:
        """What this run used with the runs it delegated to (their ``usage_total``)."""
        usage = self.record.usage
        if not self._delegated:  # (a Usage is frozen: the same one serves as both)
            return usage
        return sum((child.usage_total for child in self.record.children), usage)

    def _emit(self, event: Event) -> Event:
        if type(event) is not TextDelta:
            self._record_event(event)
        self._notify(event)
        return event

    def events(self) -> Iterator[Event]:
        """The run, event by event: start (the inputs into the state), Observe (the prompt),
        then Think and Act until a final answer, then the end — or, for a paused run going on,
        from where it stopped. Whatever stops it — an error of the run's own machinery (a tool's
        error is the model's to read, never this), an interrupt, its events no longer read — ends
        it failed, with RunFailed: no run is left running."""
        try:
            pause = self.record.pause
            yield from (self._resumed(pause) if pause is not None else self._phases())
        except Exception as exc:
            if self.record.status != "running":
                raise
            yield from self._fail(exc)
        except BaseException as exc:  # nothing more may be yielded: ended, then passed on
            if self.record.status == "running":
                stop = AgentRunError(f"agent {self.record.agent!r} stopped mid-run ({type(exc).__name__})")
                for _ in self._fail(stop):
                    pass
            raise

    def _phases(self) -> Iterator[Event]:
        self._start = time.perf_counter()
        lineage = self.setup.lineage
        if lineage is not None:
            self.tracker.via = lineage.path
        yield self._emit(run_started(self.record, self.ctx.run_id, lineage))
        self.record.state_start = self.tracker.snapshot
        self.tracker.checkpoint(USER_CAUSE)
        try:
            self._put_inputs()
        except (StateKeyError, StateTypeError) as exc:
            for change in self.tracker.drain():
                yield self._emit(change)
            yield from self._fail(exc)
            return
        # State changes are emitted inline, not through a generator of their own: a turn
        # drains several times, and this is its hot path.
        for change in self.tracker.drain():
            yield self._emit(change)
        self.record.state_before = self.tracker.snapshot
        context: list[ContextRetrieved] = []
        try:
            prepared = self.setup.prepare(self.ctx, context.append)
        except Exception as exc:  # a failing context provider or instructions callable
            yield from self._fail(exc)
            return
        yield from self._observed(prepared)
        finished = yield from self._think_and_act(prepared.tools, context)
        if finished:
            yield from self._finish()

    def _observed(self, prepared: Prepared) -> Iterator[Event]:
        """What Observe found and the prompt it rendered; the run's messages start there."""
        for retrieved in prepared.context:
            yield self._emit(retrieved)
        self._prepared = prepared
        yield self._emit(
            PromptRendered(
                run_id=self.ctx.run_id,
                system_prompt=prepared.system_prompt,
                sections=prepared.sections,
                user_prompt=prepared.user_prompt,
                user_sections=prepared.user_sections,
                earlier_sections=prepared.earlier_sections,
                notes=prepared.notes,
                hidden_keys=prepared.hidden_keys,
                unused_keys=prepared.unused_keys,
                tokens=prepared.tokens,
            )
        )
        self.ctx.messages[:] = prepared.messages
        # The earlier turns sent as context belong to those turns: this turn keeps its own.
        start = 1 if prepared.system_prompt else 0
        self._context_messages = slice(start, start + prepared.history)

    def _think_and_act(
        self, tools: Sequence[Tool], context: list[ContextRetrieved], pause: Pause | None = None
    ) -> Generator[Event, None, bool]:
        """Ask the model, run the tool calls it asks for, again, until it answers (returns True)
        or the run fails or pauses for a person (False). A paused run (``pause``) goes on where
        it stopped: the calls that waited, or the model call that waited."""
        setup, messages = self.setup, self.ctx.messages
        wire = self._wire(pause)  # shared, never mutated: each request copies the list
        self._parts = parts_by_hash(messages)  # once: the tool results that add parts add them here
        executor = self._executor(tools, pause)
        attempts = self.attempts
        schemas = [t.schema() for t in tools]
        if attempts is not None:
            schemas += [t.schema() for t in attempts.tools]
        call = pause.call if pause is not None else 0
        continuing = setup.handoff_to if pause is None else None
        while True:
            if pause is not None and pause.stop == "tools":  # the calls that waited, decided
                asked = next(m for m in reversed(messages) if m.role == "assistant").tool_calls
                finals = [c for c in asked if c.name in attempts.tool_names] if attempts is not None else []
                verdict = yield from self._acted(executor, pause.waiting, finals, call, context, wire, pause)
                pause = None
            else:
                if continuing is not None:  # the agent in charge answers: no model call of this one's
                    response: ModelResponse | None = ModelResponse(
                        tool_calls=(
                            ToolCall(id=continuation_id(self.ctx.run_id), name=continuing, arguments="{}"),
                        )
                    )
                    continuing = None
                elif pause is not None:  # the model call that waited, as the person left it
                    response = yield from self._request(wire, schemas, call, self._edited_request(pause))
                    pause = None
                elif setup.gate is not None and setup.gate.before_model:
                    yield from self._stop_before_model(wire, schemas, call)
                    return False
                else:
                    response = yield from self._request(wire, schemas, call)
                if response is None:
                    return False
                messages.append(Message.assistant(response.content, response.tool_calls))
                wire.append(messages[-1].to_openai())
                if response.tool_calls and response.reasoning:  # sent back within the turn (Responses API)
                    wire[-1] = {**wire[-1], REASONING_KEY: response.reasoning}
                calls = response.tool_calls
                final_names = attempts.tool_names if attempts is not None else set()
                finals = [c for c in calls if c.name in final_names]
                if not calls or (finals and len(finals) == len(calls)):
                    if attempts is None:
                        return True
                    answered = (
                        attempts.from_calls(finals, call)
                        if finals
                        else attempts.from_text(response.content, call)
                    )
                    verdict = yield from self._answered(answered, wire)
                    if verdict is not None:
                        return verdict
                    call += 1
                    continue
                if call >= setup.max_tool_iterations:
                    yield from self._fail(self._too_many_rounds())
                    return False
                others = tuple(c for c in calls if c not in finals)
                verdict = yield from self._acted(executor, others, finals, call, context, wire, None)
            if verdict is not None:
                return verdict
            call += 1
            if self._direct is not None:  # a member answered for this run
                messages.append(Message.assistant(self._direct))
                return True

    def _acted(
        self,
        executor: ToolExecutor,
        calls: Sequence[ToolCall],
        finals: Sequence[ToolCall],
        call: int,
        context: list[ContextRetrieved],
        wire: list[dict[str, Any]],
        pause: Pause | None,
    ) -> Generator[Event, None, bool | None]:
        """One response's tool calls, then the answer among them (output tool calls): None to
        ask the model again, True when the run answered, False when it failed or paused (some
        calls wait for a person; the other calls ran first)."""
        waiting = yield from self._act(executor, calls, call, context, wire, pause)
        if waiting:
            yield from self._stop_before_tools(waiting, call, wire)
            return False
        attempts = self.attempts
        if finals and attempts is not None and self._direct is None:
            # The other calls of the answer ran first (the model asked for them), then the answer.
            return (yield from self._answered(attempts.from_calls(list(finals), call), wire))
        return None

    def _answered(
        self, answered: Answered, wire: list[dict[str, Any]]
    ) -> Generator[Event, None, bool | None]:
        """An answer checked against the output type: True (the run ends with it), False (the
        run failed: no attempts left) or None (the model is asked again)."""
        for event in answered.events:
            if type(event) is ToolCallFinished:
                self._tool_calls += 1
            yield self._emit(event)
        for message in answered.messages:
            self.ctx.messages.append(message)
            wire.append(message.to_openai())
        if answered.verdict == "accepted":
            self._answer = answered
            return True
        if answered.verdict == "failed":
            assert answered.error is not None
            yield from self._fail(answered.error)
            return False
        return None

    def _too_many_rounds(self) -> MaxToolIterationsError:
        limit = self.setup.max_tool_iterations
        return MaxToolIterationsError(
            f"agent {self.record.agent!r} stopped: the model still asked for tools after {limit} round(s) of "
            f"tool calls (max_tool_iterations={limit}). Raise max_tool_iterations, or look at "
            f"agent.history[-1].tool_calls for a loop."
        )

    def _finish(self) -> Iterator[Event]:
        """The final answer: the run's own messages into the state, the record closed, the end."""
        record, tracker, setup = self.record, self.tracker, self.setup
        answer = self._answer
        if answer is not None and self.attempts is not None:
            self.attempts.to_state(answer, self.ctx.state, tracker)
        self.ctx.state.set("messages", self._own_messages())
        tracker.checkpoint(USER_CAUSE)
        for change in tracker.drain():
            yield self._emit(change)
        last = self.ctx.messages[-1]
        content = last.content
        # A message of parts (a tuple) is recorded as its text.
        record.status, record.content = "ok", content if content.__class__ is not tuple else last.text  # type: ignore[assignment]  # not a tuple: a str or None
        if answer is not None and answer.checked is not None:
            record.content, record.output = answer.text, answer.checked.value
        elif setup.parse_output is not None:
            record.output = setup.parse_output(record.content)
        self._close(tracker.snapshot)
        if setup.before_end is not None:
            setup.before_end(tracker)
        yield self._emit(
            RunFinished(
                run_id=self.ctx.run_id,
                content=record.content,
                usage=record.usage,
                usage_total=self.usage_total,
                duration_ms=record.duration_ms,
                model_calls=self._model_calls,
                tool_calls=self._tool_calls,
            )
        )

    def _put_inputs(self) -> None:
        """The run's inputs into the state: ``session_state`` (deep-merged, Agno; or replacing
        the state with ``overwrite_db_session_state``), then the keyword arguments (Haystack)."""
        state, tracker = self.ctx.state, self.tracker
        if self.session_state:
            if self.setup.overwrite_state:
                state.replace_data(copy.deepcopy(dict(self.session_state)))
            else:
                state.merge_data(self.session_state)
            tracker.checkpoint(StateCause(kind="run_kwarg", name="session_state"))
        for key, value in self.state_values.items():
            state.set(key, value)
            tracker.checkpoint(StateCause(kind="run_kwarg", name=key))

    def _own_messages(self) -> list[Message]:
        """This turn's messages: its system prompt, the user's message and what followed."""
        messages, context = self.ctx.messages, self._context_messages
        return messages[: context.start] + messages[context.stop :]

    def _close(self, state_after: Mapping[str, Any], *, ended: bool = True) -> None:
        """The record as the run leaves it: when it ended, or (``ended=False``) paused."""
        self.record.messages = self._own_messages()
        self.record.usage = self._usage
        self.record.duration_ms = (time.perf_counter() - self._start) * 1000
        self.record.state_after = state_after
        self._recount()
        if ended:
            self.record.pause = None
            if self.setup.replay is not None:
                self.setup.replay.finish(self.record)

    def _recount(self) -> None:
        """Estimated counts are counted again once the model's tokenizer is there (the local
        server starts with the turn's first call); the turn's PromptRendered is replaced."""
        prepared, count = self._prepared, self.setup.count_tokens
        if (
            prepared is None
            or count is None
            or prepared.tokens is None
            or prepared.tokens.exact
            or not self._model_calls
        ):
            return
        tokens = count(prepared)
        if tokens is None or not tokens.exact:
            return
        events = self.record.events
        for i, event in enumerate(events):
            if isinstance(event, PromptRendered):
                events[i] = replace(event, tokens=tokens)
                break

    def _fail(self, exc: BaseException) -> Iterator[Event]:
        self.error = exc
        self.record.status, self.record.error = "failed", one_line(exc)
        self.tracker.checkpoint(USER_CAUSE)
        for change in self.tracker.drain():
            yield self._emit(change)
        self._close(self.tracker.snapshot)
        if self.setup.before_end is not None:
            self.setup.before_end(self.tracker)
        yield self._emit(
            RunFailed(
                run_id=self.ctx.run_id,
                error=self.record.error,
                error_type=type(exc).__name__,
                usage=self.record.usage,
                usage_total=self.usage_total,
                duration_ms=self.record.duration_ms,
            )
        )


__all__ = ["Turn"]
