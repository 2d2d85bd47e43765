"""Typed output: what a run's answer must be (``Agent(output_type=T)``), how the model is asked
for it, and how an answer is checked.

``T`` is a pydantic model, a dataclass, a ``TypedDict``, ``list[...]``, ``Literal[...]``, an
``Enum``, a union of those, a JSON-schema dict, or ``str`` (plain text, nothing checked). The
model is asked in one of three ways (``output_mode``):

- ``native``: the API's structured output (Chat Completions ``response_format``, the Responses
  API's ``text.format``), with the schema made strict where the type allows it;
- ``tool``: a ``final_result`` tool the model calls to answer (one tool per member of a union),
  beside the agent's own tools;
- ``prompted``: the schema in the system prompt, for servers with neither.

``auto`` takes native where the model supports it, else tool. An answer that does not validate
goes back to the model with the errors (paths and messages) for another attempt, up to
``output_retries``; output validators may ask for one too (``ModelRetry``). Nothing half-valid is
ever passed on: when the attempts run out the run fails with ``OutputValidationError``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import re
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..errors import AgentRunError, ConfigurationError, ModelRetry
from ..tools import Tool
from .output_schema import (
    NAME,
    Invalid,
    Member,
    members,
    strict_schema,
    type_name,
    unenveloped,
    union_members,
    unwrapped,
)

OutputMode = Literal["auto", "native", "tool", "prompted"]
OUTPUT_MODES = ("auto", "native", "tool", "prompted")
DEFAULT_TOOL = "final_result"
TEXT_LIMIT = 2000
"""Characters of a checked answer kept in its event (the rest is in the messages)."""
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.S)


@dataclasses.dataclass(frozen=True)
class Checked:
    """One answer checked against the output type."""

    ok: bool
    """Whether it is a valid output (and every validator took it)."""
    value: Any = None
    """The typed output, when ok."""
    data: Any = None
    """The output as JSON data, when ok (what sessions and the state keep)."""
    errors: tuple[dict[str, str], ...] = ()
    """What is wrong: ``{"path": "/items/0/price", "message": "..."}`` each (an output
    validator's ``ModelRetry`` has no path and names the ``validator``)."""

    def retry_text(self, how: str) -> str:
        """What the model is told to try again."""
        lines = [f"- {e['path'] or '(the answer)'}: {e['message']}" for e in self.errors]
        return "Your answer does not match the required output:\n" + "\n".join(lines) + f"\n{how}"


class OutputSpec:
    """What a run's answer must be, and how it is asked for and checked."""

    def __init__(
        self,
        output_type: Any,
        mode: str = "auto",
        retries: int = 1,
        tool_name: str = DEFAULT_TOOL,
        validators: Sequence[Callable[..., Any]] = (),
        to_state: str | None = None,
    ) -> None:
        if mode not in OUTPUT_MODES:
            raise ConfigurationError(f"output_mode must be one of {', '.join(OUTPUT_MODES)}; got {mode!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ConfigurationError(f"output_retries must be a whole number >= 0, got {retries!r}")
        if not isinstance(tool_name, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,48}", tool_name):
            raise ConfigurationError(
                f"output_tool_name must be 1-48 letters, digits, '_' or '-', got {tool_name!r}"
            )
        for fn in validators:
            if not callable(fn):
                raise ConfigurationError(
                    f"an output validator must be a function (output, run_context); got {fn!r}"
                )
        if to_state is not None and (not isinstance(to_state, str) or not to_state):
            raise ConfigurationError(f"output_to_state must be a state key (a str), got {to_state!r}")
        self.type = output_type
        self.mode = mode
        self.retries = retries
        self.tool_name = tool_name
        self.validators = tuple(validators)
        self.to_state = to_state
        if inspect.isroutine(output_type):
            raise ConfigurationError(
                f"output_type {getattr(output_type, '__name__', output_type)!r} is a function; give a type "
                "(a pydantic model, a dataclass, ...) and call the function on result.output, or check the "
                "output with an output validator"
            )
        self.text = output_type is str
        """Plain text: nothing to ask for; only the output validators check it."""
        output_type = unenveloped(output_type)
        parts = union_members(output_type) or []
        self.text_allowed = self.text or str in parts
        """A text answer is the output (``str``, or a union with ``str``: the model answers in
        text or calls an output tool, in tool mode only)."""
        rest = [p for p in parts if p is not str]
        answered_by = rest[0] if len(rest) == 1 else typing.Union[tuple(rest)] if rest else output_type  # noqa: UP007
        self.members: tuple[Member, ...] = () if self.text else members(answered_by)
        self.name = "text" if self.text else type_name(output_type)
        self._tools: tuple[Tool, ...] | None = None
        self._fingerprint: str | None = None
        if not self.text:
            self.strict_schema, self.strict_problems = strict_schema(self._one_schema())

    # -- what is asked for ------------------------------------------------------------------

    def _one_schema(self) -> dict[str, Any]:
        """The schema of the whole type (a union as ``anyOf`` its members), as an object."""
        if len(self.members) == 1:
            return self.members[0].schema
        return {
            "type": "object",
            "properties": {"response": {"anyOf": [unwrapped(m) for m in self.members]}},
            "required": ["response"],
            "additionalProperties": False,
        }

    def resolve(self, model: Any) -> str:
        """The mode used with ``model``: ``auto`` is native where the model supports it, else tool."""
        if self.text:
            return "text"
        if self.text_allowed and not self.text:
            if self.mode not in ("auto", "tool"):
                raise ConfigurationError(
                    f"output_type {self.name} allows plain text: the model writes text or calls an output "
                    f"tool, which needs output_mode='tool' (or 'auto'), not {self.mode!r}"
                )
            return "tool"
        if self.mode == "auto":
            return "native" if self.native_options(model) is not None else "tool"
        if self.mode == "native" and self.native_options(model) is None:
            raise ConfigurationError(
                f"output_mode='native': {model.label} has no structured output here; "
                "use output_mode='tool' or 'prompted' (or 'auto')"
            )
        return self.mode

    def native_options(self, model: Any) -> dict[str, Any] | None:
        """The request options asking ``model`` for the schema natively (None: it cannot)."""
        strict = not self.strict_problems
        schema = self.strict_schema if strict else self._one_schema()
        ask = getattr(model, "native_output", None)
        return ask(self.name, schema, strict) if ask is not None else None

    def checks_answers(self) -> bool:
        """Whether answers are checked at all: a typed output always, plain text only by the
        output validators, if there are any."""
        return not self.text or bool(self.validators)

    def tools(self) -> list[Tool]:
        """``tool`` mode: the tools the model answers with (one per member of a union), each
        described by its type's own description (a docstring) where it has one. Made once: a
        tool compiles its schema's validator, which costs more than a turn."""
        if self._tools is None:
            self._tools = tuple(
                Tool(
                    name=self.tool_name_of(member),
                    description=f"Give your final answer ({member.name}) by calling this tool with it."
                    + (
                        f" {member.schema['description']}"
                        if isinstance(member.schema.get("description"), str)
                        else ""
                    ),
                    parameters=member.schema,
                    function=_never_called,
                )
                for member in self.members
            )
        return list(self._tools)

    def tool_name_of(self, member: Member) -> str:
        if len(self.members) == 1:
            return self.tool_name
        return f"{self.tool_name}_{NAME.sub('_', member.name)}"[:64]

    def prompt_section(self) -> tuple[str, str]:
        """``prompted`` mode: the (source, text) section that asks for the schema."""
        schema = json.dumps(self._one_schema(), ensure_ascii=False, sort_keys=True)
        text = (
            "\n<output_format>\nAnswer with one JSON object, and nothing else, that matches this JSON "
            f"schema:\n{schema}\n</output_format>\n"
        )
        return f"output_type ({self.name})", text

    def fingerprint(self) -> str:
        """What the output asks for, as a short hash (a recording names a change as drift);
        hashed once: a spec's type and validators never change."""
        if self._fingerprint is None:
            parts = [
                self.name,
                json.dumps(self._one_schema(), sort_keys=True, default=str) if not self.text else "",
            ]
            parts += self.validator_names()
            self._fingerprint = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
        return self._fingerprint

    def validator_names(self) -> list[str]:
        """The output validators by name (a callable object by its class: never an address)."""
        return [getattr(v, "__qualname__", None) or type(v).__qualname__ for v in self.validators]

    def signature(self, mode: str) -> OutputSignature:
        """What a run asks its answer to be with ``mode``, as a recording keeps and compares it."""
        return OutputSignature(self.name, mode, self.fingerprint(), tuple(self.validator_names()))

    # -- checking -----------------------------------------------------------------------------

    def check_text(self, text: str | None, ctx: Any) -> Checked:
        """An answer given as text (native and prompted modes; a tool-mode model that wrote it;
        the output itself when the type allows plain text)."""
        if self.text_allowed:
            return self._validated(text or "", _as_is, ctx)
        body = (text or "").strip()
        fenced = _FENCE.match(body)
        if fenced:
            body = fenced.group(1).strip()
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            why = (
                f"{exc.msg} at position {exc.pos}"
                if isinstance(exc, json.JSONDecodeError)
                else type(exc).__name__
            )
            return Checked(False, errors=({"path": "", "message": f"not valid JSON ({why})"},))
        if len(self.members) == 1:
            return self._check(self.members[0], data, ctx)
        if isinstance(data, dict) and set(data) == {"response"}:
            data = data["response"]
        return self._first_valid(data, ctx)

    def check_call(self, name: str, arguments: str, ctx: Any) -> Checked:
        """An answer given as a call of an output tool."""
        member = next((m for m in self.members if self.tool_name_of(m) == name), None)
        if member is None:  # the caller only sends output tools here
            raise ConfigurationError(f"{name!r} is not an output tool")
        try:
            data = json.loads(arguments or "{}")
        except (ValueError, RecursionError) as exc:
            why = (
                f"{exc.msg} at position {exc.pos}"
                if isinstance(exc, json.JSONDecodeError)
                else type(exc).__name__
            )
            return Checked(
                False, errors=({"path": "", "message": f"the arguments are not valid JSON ({why})"},)
            )
        return self._check(member, data, ctx)

    def _first_valid(self, data: Any, ctx: Any) -> Checked:
        errors: list[dict[str, str]] = []
        for member in self.members:
            checked = self._check(member, {"response": data} if member.wrapped else data, ctx)
            if checked.ok:
                return checked
            errors.extend({**e, "path": f"{member.name}{e['path']}"} for e in checked.errors)
        return Checked(False, errors=tuple(errors))

    def _check(self, member: Member, data: Any, ctx: Any) -> Checked:
        if member.wrapped:
            if not isinstance(data, dict) or "response" not in data:
                return Checked(False, errors=({"path": "", "message": 'expected {"response": ...}'},))
            data = data["response"]
        try:
            value = member.validate(data)
        except Invalid as exc:
            # Paths as the model sees them: a wrapped type's value sits under "response".
            prefix = "/response" if member.wrapped else ""
            return Checked(False, errors=tuple({**e, "path": prefix + e["path"]} for e in exc.errors))
        except RecursionError:
            return Checked(False, errors=({"path": "", "message": "the answer is nested too deeply"},))
        return self._validated(value, member.to_data, ctx)

    def _validated(self, value: Any, to_data: Callable[[Any], Any], ctx: Any) -> Checked:
        """``value`` through the output validators: accepted (as data: ``to_data(value)``) or
        sent back with a validator's reason."""
        for validator, name in zip(self.validators, self.validator_names()):
            try:
                value = _call_validator(validator, value, ctx)
            except ModelRetry as retry:
                return Checked(False, errors=({"path": "", "message": str(retry), "validator": name},))
            except Exception as exc:
                raise AgentRunError(
                    f"output validator {name} raised {type(exc).__name__}: {exc}; an output validator "
                    "returns the output or raises ModelRetry('why') to ask the model again"
                ) from exc
        return Checked(True, value, to_data(value))


@dataclasses.dataclass(frozen=True)
class OutputSignature:
    """What a run asked its answer to be: recorded with each attempt, compared on replay so that
    a changed output type, mode or set of validators is named as drift."""

    output_type: str
    """The type's name."""
    mode: str
    """native, tool or prompted."""
    fingerprint: str
    """``OutputSpec.fingerprint()``: the name, the schema and the validators, hashed."""
    validators: tuple[str, ...] = ()
    """The output validators' names, in order."""

    def change_from(self, recorded: OutputSignature) -> str | None:
        """What differs from ``recorded``, in words (None: nothing)."""
        changes = []
        if recorded.output_type != self.output_type:
            changes.append(f"output_type {recorded.output_type} → {self.output_type}")
        if recorded.mode != self.mode:
            changes.append(f"output_mode {recorded.mode} → {self.mode}")
        if recorded.validators != self.validators:
            changes.append(
                f"output validators {', '.join(recorded.validators) or 'none'} → "
                f"{', '.join(self.validators) or 'none'}"
            )
        if not changes and recorded.fingerprint != self.fingerprint:
            changes.append(f"the schema of output_type {self.output_type} changed")
        return "; ".join(changes) or None


@dataclasses.dataclass(frozen=True)
class Asked:
    """How one model is asked for a run's output."""

    mode: str
    """native, tool, prompted, or text (no output type)."""
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Request options (native: the schema)."""
    tools: tuple[Tool, ...] = ()
    """Tools the model answers with (tool mode)."""
    trailing: tuple[tuple[str, str], ...] = ()
    """System-prompt sections (prompted mode)."""


NOTHING_ASKED = Asked("text")
"""A run without an output type (one object: most turns have none, and this is their hot path)."""


def asked(spec: OutputSpec | None, model: Any) -> Asked:
    """How ``model`` is asked for ``spec``'s output (nothing for no spec, or plain text)."""
    if spec is None:
        return NOTHING_ASKED
    mode = spec.resolve(model)
    if mode == "native":
        return Asked(mode, spec.native_options(model) or {})
    if mode == "tool":
        return Asked(mode, tools=tuple(spec.tools()))
    if mode == "prompted":
        return Asked(mode, trailing=(spec.prompt_section(),))
    return Asked(mode)


def _as_is(value: Any) -> Any:
    return value


def _never_called(**arguments: Any) -> str:
    raise ConfigurationError("an output tool is taken by the run, never called")  # pragma: no cover


def _call_validator(validator: Callable[..., Any], value: Any, ctx: Any) -> Any:
    """``fn(output)`` or ``fn(output, run_context)`` — or pydantic-ai's ``fn(ctx: RunContext,
    output)``, told by its first parameter's annotation; it returns the output, changed or not."""
    params = list(inspect.signature(validator).parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 2:
        result = validator(value)
    elif _is_run_context(positional[0].annotation):
        result = validator(ctx, value)
    else:
        result = validator(value, ctx)
    return value if result is None else result


def _is_run_context(annotation: Any) -> bool:
    """Whether a parameter is annotated as a run context (``RunContext``, ``RunContext[None]``,
    as a name or a string)."""
    if isinstance(annotation, str):
        return re.match(r"(\w+\.)*RunContext\b", annotation.strip()) is not None
    return getattr(typing.get_origin(annotation) or annotation, "__name__", None) == "RunContext"


__all__ = [
    "DEFAULT_TOOL",
    "Asked",
    "asked",
    "OUTPUT_MODES",
    "Checked",
    "Member",
    "OutputMode",
    "OutputSignature",
    "OutputSpec",
    "strict_schema",
]
