"""The Observe → Think → Act loop as a plain generator of events.

Observe: the agent renders the system prompt from the state at the start of the run and builds
the messages. Think: the model answers with text or tool calls. Act: each tool call runs through
the hook chain; its result (or a clear error) goes back to the model as a ``role=tool`` message.
The loop ends on a final answer, or fails after ``max_tool_iterations`` rounds of tool calls.

Every state change is diffed (RFC 6902 JSON patch) and attributed to whoever made it: a tool, a
hook, the agentic ``update_session_state`` tool, an ``outputs_to_state`` handler, a run keyword
argument, or the user (between turns).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import time
from collections.abc import Iterator, Mapping, MutableMapping, MutableSequence
from typing import TYPE_CHECKING, Any

from .errors import AgentRunError, MaxToolIterationsError, StateKeyError, StateTypeError, ToolArgumentsError, one_line
from .events import (
    Event,
    ModelRequested,
    ModelResponded,
    PromptRendered,
    RunFailed,
    RunFinished,
    RunStarted,
    StateCause,
    StateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from .history import TurnRecord
from .messages import Message, ToolCall
from .models.base import ModelRequest, ModelResponse
from .run_context import RunContext
from .tools import Tool, result_text, run_chain

if TYPE_CHECKING:
    from .agent import Agent

AGENTIC_TOOL = "update_session_state"
_MISSING = object()


def _dump_any(value: Any) -> str:
    # jsonpatch serialises values to compare list items; objects that are not JSON (dataclasses,
    # custom classes) compare by their attributes instead of failing the run.
    return json.dumps(value, sort_keys=True, default=lambda o: getattr(o, "__dict__", None) or repr(o))


@functools.cache
def _patch_class() -> Any:
    # jsonpatch is only needed for changes the fast path cannot express: loaded on first use.
    import jsonpatch

    class _Patch(jsonpatch.JsonPatch):
        json_dumper = staticmethod(_dump_any)

    return _Patch


def _key_changes(before: dict[str, Any], after: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """Top-level keys removed, added and changed (in the order jsonpatch visits them)."""
    removed = [k for k in before if k not in after]
    added = [k for k in after if k not in before]
    # ``==`` says 1 == 1.0 == True; JSON does not, so a value that changed type counts as changed.
    changed = [
        k for k in before if k in after and (before[k] != after[k] or type(before[k]) is not type(after[k]))
    ]
    return removed, added, changed


def _escape(key: Any) -> str:
    return "/" + str(key).replace("~", "~0").replace("/", "~1")


class _Slow(Exception):
    """The change needs jsonpatch's matching (items moved, or replaced inside a list)."""


def _dict_patch(
    before: dict[str, Any], after: dict[str, Any], removed: list[Any], added: list[Any], changed: list[Any]
) -> list[dict[str, Any]]:
    """``state_patch`` for two dicts, in time proportional to what changed: equal values
    produce no operation, so only the others are looked at. The operations are the ones
    jsonpatch gives for the whole dicts."""
    ops: list[dict[str, Any]] = []
    kinds: set[str] = set()
    try:
        _diff_keys(ops, kinds, "", before, after, removed, added, changed)
        # jsonpatch turns a removal and an addition of the same value into a move; with only
        # additions or only removals (plus replacements) there is nothing to pair.
        if len(kinds) < 2:
            return ops
    except _Slow:
        pass
    keep_before, keep_after = {*removed, *changed}, {*added, *changed}
    sub_before = {k: v for k, v in before.items() if k in keep_before}
    sub_after = {k: v for k, v in after.items() if k in keep_after}
    return copy.deepcopy(_patch_class().from_diff(sub_before, sub_after).patch)


def _diff_keys(
    ops: list[dict[str, Any]],
    kinds: set[str],
    path: str,
    before: dict[Any, Any],
    after: dict[Any, Any],
    removed: list[Any],
    added: list[Any],
    changed: list[Any],
) -> None:
    # Same order as jsonpatch: removed keys, added keys, then the common keys.
    for key in removed:
        kinds.add("remove")
        ops.append({"op": "remove", "path": path + _escape(key)})
    for key in added:
        kinds.add("add")
        ops.append({"op": "add", "path": path + _escape(key), "value": copy.deepcopy(after[key])})
    for key in changed:
        _diff_value(ops, kinds, path + _escape(key), before[key], after[key])


def _diff_value(ops: list[dict[str, Any]], kinds: set[str], path: str, old: Any, new: Any) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        _diff_keys(ops, kinds, path, old, new, *_key_changes(old, new))
    elif isinstance(old, list) and isinstance(new, list):
        n, m = len(old), len(new)
        if n == m or not _same_items(old[:m], new) if m < n else not _same_items(old, new[:n]):
            raise _Slow
        if m > n:
            kinds.add("add")
            ops.extend({"op": "add", "path": f"{path}/{i}", "value": copy.deepcopy(new[i])} for i in range(n, m))
        else:
            kinds.add("remove")
            ops.extend({"op": "remove", "path": f"{path}/{m}"} for _ in range(n - m))
    elif (isinstance(old, MutableMapping) and isinstance(new, MutableMapping)) or (
        isinstance(old, MutableSequence) and isinstance(new, MutableSequence)
    ):
        raise _Slow
    else:
        try:
            same = _dump_any(old) == _dump_any(new)
        except (TypeError, ValueError, RecursionError):
            raise _Slow from None
        if not same:
            ops.append({"op": "replace", "path": path, "value": copy.deepcopy(new)})


def _same_items(a: list[Any], b: list[Any]) -> bool:
    """Equal as JSON, like jsonpatch compares list items (1 and True differ)."""
    try:
        return a == b and _dump_any(a) == _dump_any(b)
    except (TypeError, ValueError, RecursionError):
        raise _Slow from None


class Turn:
    """One run of an agent. Iterate ``events()``; the record is in ``.record``."""

    def __init__(
        self,
        agent: Agent,
        message: str | Mapping[str, Any],
        state_values: dict[str, Any],
        dependencies: dict[str, Any] | None,
    ) -> None:
        self.agent = agent
        self.input = message
        # A dict of input fields (MASFactory style) is recorded as its JSON text.
        self.message = message if isinstance(message, str) else json.dumps(dict(message), ensure_ascii=False, default=str)
        self.state_values = state_values
        self.run_id = os.urandom(6).hex()
        self.state = agent.state
        self.ctx = RunContext(
            run_id=self.run_id,
            session_state=self.state.data,
            state=self.state,
            agent=agent,
            dependencies={**agent.dependencies, **(dependencies or {})},
            session_id=agent.session_id,
            turn=len(agent.history),
        )
        self.record = TurnRecord(
            index=len(agent.history),
            run_id=self.run_id,
            agent=agent.name,
            message=self.message,
            model=agent.model.label,
            started_at=time.time(),
        )
        self._snap: dict[str, Any] = {}
        self._pending: list[Event] = []
        self._usage = Usage()
        self._model_calls = 0
        self._tool_calls = 0
        self._start = 0.0
        self.error: BaseException | None = None
        """Why the run failed, once it has."""

    # -- state bookkeeping ----------------------------------------------------------------

    def _checkpoint(self, cause: StateCause) -> None:
        """Emit a StateChanged for whatever changed since the last checkpoint."""
        data = self.state.data
        snap = self._snap
        if data == snap:
            return
        removed, added, changed = _key_changes(snap, data)
        patch = _dict_patch(snap, data, removed, added, changed)
        # Snapshots are never mutated, so the new one shares the unchanged values of the last
        # one: a checkpoint copies what changed, not the whole state.
        fresh = {*added, *changed}
        self._snap = {k: copy.deepcopy(v) if k in fresh else snap[k] for k, v in data.items()}
        if patch:
            self._pending.append(StateChanged(run_id=self.run_id, patch=tuple(patch), cause=cause))

    def _flush(self) -> Iterator[Event]:
        pending, self._pending = self._pending, []
        yield from pending

    def _emit(self, event: Event) -> Event:
        if not isinstance(event, TextDelta):
            self.record.events.append(event)
        self.agent._notify(event)
        return event

    # -- the loop -------------------------------------------------------------------------

    def events(self) -> Iterator[Event]:
        agent = self.agent
        self._start = time.perf_counter()
        agent.history.append(self.record)
        yield self._emit(
            RunStarted(
                run_id=self.run_id,
                agent=agent.name,
                turn=self.record.index,
                message=self.message,
                model=agent.model.label,
                at=self.record.started_at,
            )
        )
        self._snap = agent._last_state if agent._last_state is not None else copy.deepcopy(self.state.data)
        self.record.state_start = self._snap
        self._checkpoint(StateCause(kind="user"))
        try:
            for key, value in self.state_values.items():
                self.state.set(key, value)
                self._checkpoint(StateCause(kind="run_kwarg", name=key))
        except (StateKeyError, StateTypeError) as exc:
            yield from map(self._emit, self._flush())
            yield from self._fail(exc)
            return
        yield from map(self._emit, self._flush())
        # Snapshots are never mutated (checkpoints replace them), so records can share them.
        self.record.state_before = self._snap

        try:
            prepared = agent._prepare(self.input, self.ctx, on_context=lambda event: self._pending.append(event))
        except Exception as exc:  # a failing context provider or instructions callable
            yield from self._fail(exc)
            return
        for retrieved in prepared.context:
            yield self._emit(retrieved)
        yield self._emit(
            PromptRendered(
                run_id=self.run_id,
                system_prompt=prepared.system_prompt,
                sections=prepared.sections,
                user_prompt=prepared.user_prompt,
                notes=prepared.notes,
            )
        )
        messages: list[Message] = list(prepared.messages)
        wire = [m.to_openai() for m in messages]  # shared, never mutated: each request copies the list
        tools = {t.name: t for t in prepared.tools}
        schemas = [t.schema() for t in prepared.tools]
        limit = agent.max_tool_iterations
        call = 0
        while True:
            request = ModelRequest(messages=list(wire), tools=schemas, options=dict(agent.model_options))
            try:
                payload = agent.model.payload(request)
            except Exception as exc:
                yield from self._fail(exc)
                return
            yield self._emit(ModelRequested(run_id=self.run_id, call=call, request=payload, at=time.time()))
            started = time.perf_counter()
            response: ModelResponse | None = None
            try:
                for item in agent.model.stream(request):
                    if isinstance(item, ModelResponse):
                        response = item
                    elif item:
                        yield self._emit(TextDelta(run_id=self.run_id, call=call, text=item))
                if response is None:
                    raise AgentRunError(f"model {agent.model.label} returned no response")
            except Exception as exc:
                yield from self._fail(exc)
                return
            self._model_calls += 1
            self._usage = self._usage + response.usage
            yield self._emit(
                ModelResponded(
                    run_id=self.run_id,
                    call=call,
                    content=response.content,
                    tool_calls=response.tool_calls,
                    finish_reason=response.finish_reason,
                    usage=response.usage,
                    duration_ms=(time.perf_counter() - started) * 1000,
                    response=response.raw,
                )
            )
            messages.append(Message.assistant(response.content, response.tool_calls))
            wire.append(messages[-1].to_openai())
            if not response.tool_calls:
                break
            if call >= limit:
                self.record.messages = messages
                yield from self._fail(
                    MaxToolIterationsError(
                        f"agent {agent.name!r} stopped: the model still asked for tools after "
                        f"{limit} round(s) of tool calls (max_tool_iterations={limit}). Raise "
                        f"max_tool_iterations, or look at agent.history[-1].tool_calls for a loop."
                    )
                )
                return
            for tool_call in response.tool_calls:
                yield self._emit(
                    ToolCallStarted(
                        run_id=self.run_id,
                        call=call,
                        tool_call_id=tool_call.id,
                        name=tool_call.name,
                        arguments=tool_call.arguments,
                        at=time.time(),
                    )
                )
                finished = self._act(tool_call, tools, call)
                yield from map(self._emit, self._flush())
                yield self._emit(finished)
                self._tool_calls += 1
                messages.append(Message.tool(tool_call, finished.result))
                wire.append(messages[-1].to_openai())
            call += 1

        self.record.messages = messages
        self.state.set("messages", messages)
        self._checkpoint(StateCause(kind="user"))
        yield from map(self._emit, self._flush())
        duration = (time.perf_counter() - self._start) * 1000
        self.record.status = "ok"
        self.record.content = messages[-1].content
        output_formatter = agent.format.output_formatter
        if output_formatter is not None:
            self.record.output = output_formatter.parse(self.record.content, list(agent.format.output_fields))
        self.record.usage = self._usage
        self.record.duration_ms = duration
        self.record.state_after = self._snap
        agent._last_state = self._snap
        yield self._emit(
            RunFinished(
                run_id=self.run_id,
                content=self.record.content,
                usage=self._usage,
                duration_ms=duration,
                model_calls=self._model_calls,
                tool_calls=self._tool_calls,
            )
        )

    def _fail(self, exc: BaseException) -> Iterator[Event]:
        duration = (time.perf_counter() - self._start) * 1000
        error = one_line(exc)
        self.record.status = "failed"
        self.record.error = error
        self.record.usage = self._usage
        self.record.duration_ms = duration
        self.record.state_after = copy.deepcopy(self.state.data)
        self.agent._last_state = self.record.state_after
        self.error = exc
        yield self._emit(
            RunFailed(
                run_id=self.run_id,
                error=error,
                error_type=type(exc).__name__,
                usage=self._usage,
                duration_ms=duration,
            )
        )

    # -- act --------------------------------------------------------------------------------

    def _act(self, tool_call: ToolCall, tools: dict[str, Tool], call: int) -> ToolCallFinished:
        started = time.perf_counter()
        base = dict(run_id=self.run_id, call=call, tool_call_id=tool_call.id, name=tool_call.name, arguments=tool_call.arguments)

        def failed(kind: str, error: str, **extra: Any) -> ToolCallFinished:
            return ToolCallFinished(
                **base,
                result=f"Error: {error}",
                error=error,
                error_kind=kind,
                duration_ms=(time.perf_counter() - started) * 1000,
                **extra,
            )

        tool = tools.get(tool_call.name)
        if tool is None:
            available = ", ".join(sorted(tools)) or "(none)"
            return failed("unknown_tool", f"there is no tool named {tool_call.name!r}. Available tools: {available}.")
        try:
            raw = tool_call.parsed_arguments()
        except json.JSONDecodeError as exc:
            return failed(
                "malformed_arguments",
                f"the arguments for {tool.name!r} are not valid JSON ({exc.msg} at position {exc.pos}). "
                f"Send a JSON object matching the tool's parameters.",
            )
        try:
            arguments = tool.validate_arguments(raw)
        except ToolArgumentsError as exc:
            return failed(
                "invalid_arguments",
                f"invalid arguments for {tool.name!r}: {exc}. Fix the arguments and call the tool again.",
            )

        start_snap = self._snap
        author = _Authors(self, tool, tool_call.id)
        hooks = self.agent.tool_hooks
        outcome = run_chain(tool, arguments, hooks, self.ctx, on_link=author.on_link if hooks else None)
        if outcome.error is None:
            author.close()
            try:
                self._apply_outputs(tool, outcome.result, tool_call.id)
                changed = self._changed_keys(start_snap)
                if self.state.has_schema:
                    self.state.validate(changed)
            except (StateKeyError, StateTypeError, ToolArgumentsError) as exc:
                self._rollback(start_snap)
                return failed(
                    "state_error",
                    f"tool {tool.name!r} left the state invalid: {exc}. The state was not changed.",
                    hooks=tuple(outcome.steps),
                    answered_by=outcome.answered_by,
                )
            return ToolCallFinished(
                **base,
                result=result_text(outcome.result),
                hooks=tuple(outcome.steps),
                answered_by=outcome.answered_by,
                changed_keys=tuple(changed),
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        self._rollback(start_snap)
        exc = outcome.error
        source = outcome.error_source
        who = f"tool {tool.name!r}" if source == "tool" else f"hook {source!r}"
        kind = "tool_error" if source == "tool" else "hook_error"
        if isinstance(exc, (StateKeyError, StateTypeError)):
            kind = "state_error"
        return failed(
            kind,
            f"{exc} ({type(exc).__name__} raised by {who})" if str(exc) else f"{type(exc).__name__} raised by {who}",
            hooks=tuple(outcome.steps),
            answered_by=None,
        )

    def _apply_outputs(self, tool: Tool, result: Any, tool_call_id: str) -> None:
        for key, spec in tool.outputs_to_state.items():
            source = spec.get("source")
            if source is None:
                value = result
            elif isinstance(result, dict):
                if source not in result:
                    raise ToolArgumentsError(
                        f"outputs_to_state[{key!r}] reads {source!r} from the result, which has "
                        f"keys {sorted(result)}"
                    )
                value = result[source]
            else:
                raise ToolArgumentsError(
                    f"outputs_to_state[{key!r}] reads {source!r} from the result, but the tool "
                    f"returned {type(result).__name__}; return a dict"
                )
            handler = spec.get("handler")
            self.state.set(key, value, handler_override=handler)
            used = handler or (self.state.handler_for(key) if self.state.has_schema else None)
            self._checkpoint(
                StateCause(
                    kind="output",
                    name=tool.name,
                    tool_call_id=tool_call_id,
                    handler=getattr(used, "__name__", None) if used else None,
                )
            )

    def _changed_keys(self, before: dict[str, Any]) -> list[str]:
        """Top-level keys changed since the snapshot ``before``. Checkpoints share unchanged
        values between snapshots, so identity tells what changed without comparing values."""
        snap = self._snap
        keys = [k for k, v in snap.items() if before.get(k, _MISSING) is not v]
        keys += [k for k in before if k not in snap]
        return keys

    def _rollback(self, snapshot: dict[str, Any]) -> None:
        """Undo a failed tool call's changes: a call's state changes apply whole or not at all."""
        self._pending = [e for e in self._pending if not isinstance(e, StateChanged)]
        self.state.data.clear()
        self.state.data.update(copy.deepcopy(snapshot))
        self._snap = snapshot


class _Authors:
    """Attributes state changes inside a hook chain to the link whose code made them."""

    def __init__(self, turn: Turn, tool: Tool, tool_call_id: str) -> None:
        self.turn = turn
        self.tool = tool
        self.tool_call_id = tool_call_id
        self.stack: list[str] = []

    def cause(self, link: str) -> StateCause:
        if link == "tool":
            kind = "agentic" if self.tool.name == AGENTIC_TOOL else "tool"
            return StateCause(kind=kind, name=self.tool.name, tool_call_id=self.tool_call_id)
        return StateCause(kind="hook", name=link, tool_call_id=self.tool_call_id)

    def on_link(self, what: str, link: str) -> None:
        if what == "enter":
            if self.stack:
                self.turn._checkpoint(self.cause(self.stack[-1]))
            self.stack.append(link)
        else:
            self.turn._checkpoint(self.cause(link))
            if self.stack and self.stack[-1] == link:
                self.stack.pop()

    def close(self) -> None:
        # Without hooks no boundary was reported: everything belongs to the tool.
        self.turn._checkpoint(self.cause("tool"))


__all__ = ["Turn"]
