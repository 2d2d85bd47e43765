"""ScriptedModel: a deterministic offline model for demos and tests.

Each step is a final answer (``str``), a ``tool_call(name, **arguments)``, a list of tool calls
(parallel calls), or a callable ``(request) -> step``. ``ScriptedModel(fn)`` with a single
callable answers every request with it. Every request received is kept in ``.requests``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..errors import ConfigurationError, ScriptedModelExhaustedError
from ..events import Usage
from ..messages import ToolCall
from ..util.fastinit import fast_init
from .base import ArgumentsDelta, Model, ModelRequest, ModelResponse, text_chunks
from .tokens import content_tokens, estimate_tokens


@fast_init
@dataclass(frozen=True)
class ToolCallSpec:
    """A tool call a ScriptedModel will make."""

    name: str
    """The tool to call."""
    arguments: dict[str, Any]
    """Its arguments (sent as JSON)."""
    raw_arguments: str | None = None
    """Send this text verbatim instead (e.g. malformed JSON, to test error handling)."""
    id: str | None = None
    """A fixed call id; generated when None."""

    def arguments_text(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False)


def tool_call(
    name: str, /, *, raw_arguments: str | None = None, id: str | None = None, **arguments: Any
) -> ToolCallSpec:
    """A scripted tool call: ``tool_call("add", a=1, b=2)``."""
    return ToolCallSpec(name=name, arguments=arguments, raw_arguments=raw_arguments, id=id)


Step: TypeAlias = str | ToolCallSpec | list | tuple | Callable[[ModelRequest], Any]


class ScriptedModel(Model):
    """A model that answers from a script. Labelled ``scripted`` everywhere."""

    kind = "scripted"

    def __init__(
        self,
        steps: Iterable[Step] | Callable[[ModelRequest], Any] = (),
        *,
        name: str | None = None,
        stream: bool = True,
        native_output: bool = False,
    ) -> None:
        if callable(steps) and not isinstance(steps, (list, tuple)):
            self._function: Callable[[ModelRequest], Any] | None = steps
            self.steps: list[Step] = []
        else:
            self._function = None
            self.steps = list(steps)
        self.name = name
        self.streaming = stream
        """Whether answers arrive word by word (as TextDelta events) or in one piece."""
        self.native = native_output
        """Whether it takes structured output natively (as Chat Completions' ``response_format``),
        so typed output's ``auto`` mode asks it that way; else with the output tool."""
        self.requests: list[ModelRequest] = []
        self._next = 0

    @property
    def label(self) -> str:
        return f"scripted:{self.name}" if self.name else "scripted"

    def native_output(self, name: str, schema: dict[str, Any], strict: bool) -> dict[str, Any] | None:
        if not self.native:
            return None
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": strict},
            }
        }

    @property
    def remaining(self) -> int:
        """Steps not used yet (0 for a function-driven model)."""
        return len(self.steps) - self._next

    def add(self, *steps: Step) -> ScriptedModel:
        """Append steps (handy between notebook cells)."""
        self.steps.extend(steps)
        return self

    def stream(self, request: ModelRequest) -> Iterator[str | ArgumentsDelta | ModelResponse]:
        index = len(self.requests)
        self.requests.append(request)
        if self._function is not None:
            step: Any = self._function(request)
        else:
            if self._next >= len(self.steps):
                raise ScriptedModelExhaustedError(
                    f"ScriptedModel has no reply left for request {index + 1}: it was given "
                    f"{len(self.steps)} step(s). Add steps (model.add(...)), or pass a function "
                    f"(request) -> reply to answer every request."
                )
            step = self.steps[self._next]
            self._next += 1
        while callable(step) and not isinstance(step, ToolCallSpec):
            step = step(request)
        content, calls = self._interpret(step, index)
        if content:
            if self.streaming:
                yield from text_chunks(content)
            else:
                yield content
        if self.streaming and request.stream_arguments:
            for position, call in enumerate(calls):
                if call.name in request.stream_arguments:
                    so_far = ""
                    for piece in text_chunks(call.arguments):
                        so_far += piece
                        yield ArgumentsDelta(position, call.name, so_far)
        usage = Usage(
            input_tokens=sum(content_tokens(m.get("content")) for m in request.messages),
            output_tokens=estimate_tokens(content) + sum(estimate_tokens(c.arguments) for c in calls),
            estimated=True,
        )
        raw: dict[str, Any] = {"content": content}
        if calls:
            raw["tool_calls"] = [c.to_openai() for c in calls]
        yield ModelResponse(
            content=content,
            tool_calls=calls,
            finish_reason="tool_calls" if calls else "stop",
            usage=usage,
            raw=raw,
        )

    def _interpret(self, step: Any, index: int) -> tuple[str | None, tuple[ToolCall, ...]]:
        if isinstance(step, str):
            return step, ()
        specs = (
            [step]
            if isinstance(step, ToolCallSpec)
            else list(step)
            if isinstance(step, (list, tuple))
            else None
        )
        if not specs or not all(isinstance(s, ToolCallSpec) for s in specs):
            raise ConfigurationError(
                f"ScriptedModel step {index + 1} must be a str, tool_call(...), a list of "
                f"tool_call(...) or a function returning one of those; got {step!r}"
            )
        calls = tuple(
            ToolCall(id=s.id or f"call_{index}_{i}", name=s.name, arguments=s.arguments_text())
            for i, s in enumerate(specs)
        )
        return None, calls
