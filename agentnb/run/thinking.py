"""Think, as a part of a ``Turn``: one model call — its request and response events, the answer
from the recording where it holds it, else from the model as it streams (its text as
``TextDelta`` events and, for a typed run, the output so far as ``OutputDelta`` events)."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any

from ..errors import AgentRunError
from ..events import Event, ModelRequested, ModelResponded, TextDelta, Usage
from ..history.records import TurnRecord
from ..messages import BinaryPart, Message
from ..messages.wire import parts_by_hash
from ..models.base import ArgumentsDelta, ModelRequest, ModelResponse, text_chunks
from ..tools.run_context import RunContext
from .answers import Attempts
from .partial import PartialOutput
from .setup import TurnSetup


class Thinking:
    """The Think phase of a turn (mixed into ``loop.Turn``)."""

    setup: TurnSetup
    record: TurnRecord
    ctx: RunContext
    attempts: Attempts | None
    _usage: Usage
    _model_calls: int
    _parts: dict[str, BinaryPart]
    _emit: Callable[[Event], Event]
    _notify: Callable[[Event], None]
    _fail: Callable[[BaseException], Iterator[Event]]

    def _streams(self, setup: TurnSetup, run_id: str) -> None:
        """What the run's model calls stream besides text: a typed run's output so far (native and
        tool modes), from the output tools' arguments in tool mode."""
        spec, attempts = setup.output, self.attempts
        self._partial = (
            PartialOutput(spec, setup.output_mode, run_id)
            if spec is not None and attempts is not None and setup.output_mode in ("native", "tool")
            else None
        )
        """The typed output while it streams (``OutputDelta``): native and tool modes only."""
        self._watched = frozenset(attempts.tool_names) if attempts is not None else frozenset()
        """The output tools (tool mode), whose arguments the model streams to ``_partial``."""

    def _request(
        self,
        wire: list[dict[str, Any]],
        schemas: list[dict[str, Any]],
        call: int,
        edit: Mapping[str, Any] | None = None,
    ) -> Generator[Event, None, ModelResponse | None]:
        """One model call (Think): its request and response events; the response, or None when
        it failed (the run has failed then). ``edit``: what a person changed at a breakpoint
        before it (their messages carry on as the run's conversation)."""
        setup, run_id = self.setup, self.ctx.run_id
        tools, options = schemas, dict(setup.model_options)
        if edit:
            if "messages" in edit:
                wire[:] = [dict(m) for m in edit["messages"]]
                self.ctx.messages[:] = [Message.from_openai(m, self._parts) for m in wire]
                self._parts = parts_by_hash(self.ctx.messages)
            tools, options = list(edit.get("tools", tools)), dict(edit.get("options", options))
        request = ModelRequest(
            messages=list(wire),
            tools=tools,
            options=options,
            parts=self._parts,
            stream_arguments=self._watched,
        )
        try:
            payload = setup.model.payload(request)
            yield self._emit(ModelRequested(run_id=run_id, call=call, request=payload, at=time.time()))
            started = time.perf_counter()
            response = yield from self._think(request, call, payload)
        except Exception as exc:
            yield from self._fail(exc)
            return None
        self._model_calls += 1
        self._usage = self._usage + response.usage
        yield self._emit(
            ModelResponded(
                run_id=run_id,
                call=call,
                content=response.content,
                tool_calls=response.tool_calls,
                finish_reason=response.finish_reason,
                usage=response.usage,
                duration_ms=(time.perf_counter() - started) * 1000,
                response=response.raw,
            )
        )
        return response

    def _think(
        self, request: ModelRequest, call: int, payload: dict[str, Any]
    ) -> Generator[Event, None, ModelResponse]:
        """Ask the model (or the recording), streaming its text as TextDelta events; returns the
        response."""
        model, replay = self.setup.model, self.setup.replay
        if replay is not None and call == 0:  # first, whether the recording asked for this output
            replay.output_asked(self.record, self.attempts.signature if self.attempts else None, model)
        recorded = replay.answer(self.record, call, payload, model) if replay is not None else None
        stream: Iterable[str | ArgumentsDelta | ModelResponse] = (
            model.stream(request) if recorded is None else [*text_chunks(recorded.content), recorded]
        )
        response: ModelResponse | None = None
        partial = self._partial
        if partial is not None:
            partial.reset()
        for item in stream:
            if isinstance(item, ModelResponse):
                response = item
            elif partial is not None:  # a typed run: its output so far, besides the text
                if type(item) is str and item:
                    yield self._emit(TextDelta(run_id=self.ctx.run_id, call=call, text=item))
                delta = partial.feed(item, call)
                if delta is not None:
                    self._notify(delta)  # like TextDelta, not kept in the record
                    yield delta
            elif item:  # text: a run without a typed output asks for no arguments
                yield self._emit(TextDelta(run_id=self.ctx.run_id, call=call, text=item))  # type: ignore[arg-type]
        if response is None:
            raise AgentRunError(f"model {model.label} returned no response")
        delta = partial.end(response, call) if partial is not None else None
        if delta is not None:
            self._notify(delta)
            yield delta
        if replay is not None and recorded is None:
            replay.answered(self.record, call, response)
        return response


__all__ = ["Thinking"]
