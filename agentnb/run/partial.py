"""Typed output while it streams in: the answer's JSON so far (native mode: the text; tool mode:
the output tool's arguments) parsed leniently and validated partially, as ``OutputDelta`` events.

Parsing is pydantic-core's partial JSON parser (``from_json(..., allow_partial="trailing-strings")``):
what has arrived of each string, list and object. A number at the very end of the text may still
grow (``12`` of ``125``), so it is left out until something follows it: each delta of an answer
extends the one before (its strings grow, its lists and objects gain items).

Validation is pydantic's ``experimental_allow_partial`` on that data: a list's (or a dict's) last
item is left out while it does not validate yet, so ``list[Invoice]`` validates item by item; an
object (a pydantic model, a dataclass, a ``TypedDict``) validates once all its required fields
are there and valid. Where that fails, and always for a JSON-schema dict (which has no partial
validation), the delta carries the raw partial data instead (``validated=False``). The delta of
the whole answer (``complete=True``) is validated fully, as the check will validate it.

Each piece is read when the next one comes (the whole answer at the end), so an answer that
arrives in one piece (a model that does not stream) gives no delta and costs nothing more. A
long answer is read again each time it has grown by an eighth (at most 256 characters), not at
every piece, so that the work stays linear in its length.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic_core import from_json

from ..events import OutputDelta
from ..models.base import ArgumentsDelta, ModelResponse
from .output import OutputSpec
from .output_schema import Member

_FENCE_START = re.compile(r"\s*```(?:json)?[ \t]*\n")
"""A native answer some models put in a code fence (the check takes it out too)."""
_TRAILING_NUMBER = re.compile(r"[-+0-9.eE]+$")
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOTHING: Any = object()
STEP = 256
"""The most characters an answer grows by between two parses of it."""


class PartialOutput:
    """One run's typed output as it streams, answer after answer (``reset`` at each model call)."""

    def __init__(self, spec: OutputSpec, mode: str, run_id: str) -> None:
        self.spec, self.mode, self.run_id = spec, mode, run_id
        self._tools = {spec.tool_name_of(m): m for m in spec.members} if mode == "tool" else {}
        self.reset()

    def reset(self) -> None:
        """A new answer begins (a new model call)."""
        self._pieces: list[str] = []
        self._length = 0
        self._fed = 0
        self._parsed = 0
        self._last: Any = _NOTHING
        self._call: int | None = None
        self._tool: str | None = None

    def feed(self, item: str | ArgumentsDelta, call: int) -> OutputDelta | None:
        """The next piece of the answer (text, or an output tool's arguments so far): the output
        as of the piece before it, when that is due and changed, else None. One piece behind, so
        that an answer that comes in one piece (not streamed) is only read once, whole."""
        if isinstance(item, str):
            if self.mode != "native" or not item:
                return None
            delta = self._due(call)
            self._pieces.append(item)
            self._length += len(item)
        else:
            if self._call is None:  # the first output call is the answer; any other is not taken
                self._call, self._tool = item.index, item.name
            elif item.index != self._call:
                return None
            delta = self._due(call)
            self._pieces[:] = [item.arguments]
            self._length = len(item.arguments)
        self._fed += 1
        return delta

    def end(self, response: ModelResponse, call: int) -> OutputDelta | None:
        """The whole answer, once it streamed (nothing for one that came in one piece, or gave
        no output)."""
        if self._fed < 2:
            return None
        if self.mode == "native":
            return self._delta(response.content or "", call, complete=True)
        answer = next((c for c in response.tool_calls if c.name in self._tools), None)
        if answer is None:
            return None
        self._tool = answer.name
        return self._delta(answer.arguments, call, complete=True)

    def _due(self, call: int) -> OutputDelta | None:
        """The output as of the pieces so far, if it has grown enough since it was last read."""
        if not self._length or self._length < self._parsed + min(self._parsed // 8, STEP):
            return None
        self._parsed = self._length
        return self._delta("".join(self._pieces), call, complete=False)

    def _delta(self, text: str, call: int, complete: bool) -> OutputDelta | None:
        data = _parsed(text, complete)
        if data is _NOTHING:
            return None
        members = [self._tools[self._tool]] if self._tool in self._tools else list(self.spec.members)
        if len(members) > 1 or members[0].wrapped:
            if not isinstance(data, dict) or "response" not in data:
                return None  # nothing of the output yet
            data = data["response"]
        if data == self._last and not complete:
            return None
        self._last = data
        output, validated = _validated(members, data, complete)
        return OutputDelta(
            run_id=self.run_id,
            call=call,
            mode=self.mode,
            output_type=self.spec.name,
            data=data,
            output=output,
            validated=validated,
            complete=complete,
            tool=self._tool,
        )


def _parsed(text: str, complete: bool) -> Any:
    """The JSON data so far in ``text`` (``_NOTHING`` when none can be read yet)."""
    fence = _FENCE_START.match(text)
    if fence is not None:
        text = text[fence.end() :]
    if not complete:
        number = _TRAILING_NUMBER.search(text)
        if number is not None and '"' not in _STRINGS.sub("", text[: number.start()]):
            text = text[: number.start()]  # a number at the end may still grow (outside a string)
    try:
        return from_json(text, allow_partial="trailing-strings")
    except ValueError:  # nothing readable yet, or not JSON at all (the check says so at the end)
        return _NOTHING


def _validated(members: list[Member], data: Any, complete: bool) -> tuple[Any, bool]:
    """``data`` as the output type (the first member it validates as, partially while it
    streams), else ``data`` itself, and whether it validated."""
    for member in members:
        validate = member.validate if complete else member.validate_partial
        if validate is None:
            continue
        try:
            return validate(data), True
        except Exception:  # ValidationError, or Invalid: not (yet) a value of this member
            continue
    return data, False


__all__ = ["STEP", "PartialOutput"]
