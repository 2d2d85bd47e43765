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
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..errors import ConfigurationError, ModelRetry
from ..tools import Tool

OutputMode = Literal["auto", "native", "tool", "prompted"]
OUTPUT_MODES = ("auto", "native", "tool", "prompted")
DEFAULT_TOOL = "final_result"
TEXT_LIMIT = 2000
"""Characters of a checked answer kept in its event (the rest is in the messages)."""
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.S)
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


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


@dataclasses.dataclass(frozen=True)
class Member:
    """One shape the answer may take (a union has one per member)."""

    name: str
    """The type's name (the schema's and the tool's)."""
    schema: dict[str, Any]
    """Its JSON schema (an object: a non-object type is wrapped as ``{"response": ...}``)."""
    wrapped: bool
    """Whether the schema wraps the type under ``response``."""
    validate: Callable[[Any], Any]
    """JSON data -> the typed value; raises ``_Invalid`` with the errors."""
    to_data: Callable[[Any], Any]
    """The typed value -> JSON data."""


class _Invalid(Exception):
    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__(errors)
        self.errors = errors


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
        self.text = output_type is str
        """Plain text: nothing to ask for or check."""
        self.members: tuple[Member, ...] = () if self.text else _members(output_type)
        self.name = "text" if self.text else _type_name(output_type)
        if not self.text:
            self.strict_schema, self.strict_problems = strict_schema(self._one_schema())

    # -- what is asked for ------------------------------------------------------------------

    def _one_schema(self) -> dict[str, Any]:
        """The schema of the whole type (a union as ``anyOf`` its members), as an object."""
        if len(self.members) == 1:
            return self.members[0].schema
        return {
            "type": "object",
            "properties": {"response": {"anyOf": [_unwrapped(m) for m in self.members]}},
            "required": ["response"],
            "additionalProperties": False,
        }

    def resolve(self, model: Any) -> str:
        """The mode used with ``model``: ``auto`` is native where the model supports it, else tool."""
        if self.text:
            return "text"
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

    def tools(self) -> list[Tool]:
        """``tool`` mode: the tools the model answers with (one per member of a union)."""
        return [
            Tool(
                name=self.tool_name_of(member),
                description=f"Give your final answer ({member.name}) by calling this tool with it.",
                parameters=member.schema,
                function=_never_called,
            )
            for member in self.members
        ]

    def tool_name_of(self, member: Member) -> str:
        if len(self.members) == 1:
            return self.tool_name
        return f"{self.tool_name}_{_NAME.sub('_', member.name)}"[:64]

    def prompt_section(self) -> tuple[str, str]:
        """``prompted`` mode: the (source, text) section that asks for the schema."""
        schema = json.dumps(self._one_schema(), ensure_ascii=False, sort_keys=True)
        text = (
            "\n<output_format>\nAnswer with one JSON object, and nothing else, that matches this JSON "
            f"schema:\n{schema}\n</output_format>\n"
        )
        return f"output_type ({self.name})", text

    def fingerprint(self) -> str:
        """What the output asks for, as a short hash (a recording names a change as drift)."""
        parts = [
            self.name,
            json.dumps(self._one_schema(), sort_keys=True, default=str) if not self.text else "",
        ]
        parts += self.validator_names()
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    def validator_names(self) -> list[str]:
        """The output validators by name (a callable object by its class: never an address)."""
        return [getattr(v, "__qualname__", None) or type(v).__qualname__ for v in self.validators]

    def signature(self, mode: str) -> OutputSignature:
        """What a run asks its answer to be with ``mode``, as a recording keeps and compares it."""
        return OutputSignature(self.name, mode, self.fingerprint(), tuple(self.validator_names()))

    # -- checking -----------------------------------------------------------------------------

    def check_text(self, text: str | None, ctx: Any) -> Checked:
        """An answer given as text (native and prompted modes; a tool-mode model that wrote it)."""
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
        except _Invalid as exc:
            return Checked(False, errors=tuple(exc.errors))
        except RecursionError:
            return Checked(False, errors=({"path": "", "message": "the answer is nested too deeply"},))
        for validator, name in zip(self.validators, self.validator_names()):
            try:
                value = _call_validator(validator, value, ctx)
            except ModelRetry as retry:
                return Checked(False, errors=({"path": "", "message": str(retry), "validator": name},))
        return Checked(True, value, member.to_data(value))


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


def asked(spec: OutputSpec | None, model: Any) -> Asked:
    """How ``model`` is asked for ``spec``'s output (nothing for no spec, or plain text)."""
    if spec is None:
        return Asked("text")
    mode = spec.resolve(model)
    if mode == "native":
        return Asked(mode, spec.native_options(model) or {})
    if mode == "tool":
        return Asked(mode, tools=tuple(spec.tools()))
    if mode == "prompted":
        return Asked(mode, trailing=(spec.prompt_section(),))
    return Asked(mode)


def _never_called(**arguments: Any) -> str:
    raise ConfigurationError("an output tool is taken by the run, never called")  # pragma: no cover


def _call_validator(validator: Callable[..., Any], value: Any, ctx: Any) -> Any:
    """``fn(output)`` or ``fn(output, run_context)``; it returns the output, changed or not."""
    params = list(inspect.signature(validator).parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    result = validator(value, ctx) if len(positional) >= 2 else validator(value)
    return value if result is None else result


def _type_name(tp: Any) -> str:
    if isinstance(tp, dict):
        return _NAME.sub("_", str(tp.get("title") or "output"))[:64]
    name = getattr(tp, "__name__", None)
    if isinstance(name, str) and typing.get_origin(tp) is None:
        return _NAME.sub("_", name)[:64]
    return _NAME.sub("_", _spelled(tp))[:64].strip("_") or "output"


def _spelled(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is None:
        return getattr(tp, "__name__", repr(tp))
    args = "_".join(_spelled(a) if not isinstance(a, str) else a for a in typing.get_args(tp))
    return f"{getattr(origin, '__name__', 'output')}_{args}"


def _union_members(tp: Any) -> list[Any] | None:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args if len(args) > 1 else None
    return None


def _members(tp: Any) -> tuple[Member, ...]:
    if isinstance(tp, dict):
        return (_schema_member(tp),)
    parts = _union_members(tp)
    if parts is not None and all(_is_object_type(p) for p in parts):
        return tuple(_typed_member(p) for p in parts)
    return (_typed_member(tp),)


def _is_object_type(tp: Any) -> bool:
    return dataclasses.is_dataclass(tp) or typing.is_typeddict(tp) or hasattr(tp, "model_json_schema")


def _typed_member(tp: Any) -> Member:
    from pydantic import TypeAdapter, ValidationError

    try:
        adapter: Any = TypeAdapter(tp)
        schema = adapter.json_schema()
    except Exception as exc:
        raise ConfigurationError(
            f"output_type {tp!r} has no JSON schema ({type(exc).__name__}: {exc}); give a pydantic model, a "
            "dataclass, a TypedDict, list[...], Literal[...], an Enum, a union of those, a JSON-schema dict or str"
        ) from None
    wrapped = schema.get("type") != "object" or "properties" not in schema
    if wrapped:
        defs = schema.pop("$defs", None)
        schema = {"type": "object", "properties": {"response": schema}, "required": ["response"]}
        if defs:
            schema["$defs"] = defs

    def validate(data: Any) -> Any:
        try:
            return adapter.validate_python(data)
        except ValidationError as exc:
            raise _Invalid(
                [{"path": "".join(f"/{p}" for p in e["loc"]), "message": e["msg"]} for e in exc.errors()]
            ) from None

    return Member(
        _type_name(tp), schema, wrapped, validate, lambda value: adapter.dump_python(value, mode="json")
    )


def _schema_member(schema: dict[str, Any]) -> Member:
    import fastjsonschema

    try:
        check = fastjsonschema.compile(schema)
    except Exception as exc:  # fastjsonschema raises its own for a schema it cannot compile
        raise ConfigurationError(f"output_type is a JSON schema that is not valid: {exc}") from None
    wrapped = schema.get("type") != "object"
    shown = (
        {"type": "object", "properties": {"response": schema}, "required": ["response"]}
        if wrapped
        else schema
    )

    def validate(data: Any) -> Any:
        try:
            return check(data)
        except fastjsonschema.JsonSchemaValueException as exc:
            path = "".join(f"/{p}" for p in (exc.path or [])[1:])
            raise _Invalid([{"path": path, "message": exc.message}]) from None

    return Member(_type_name(schema), dict(shown), wrapped, validate, lambda value: value)


def _unwrapped(member: Member) -> dict[str, Any]:
    return member.schema["properties"]["response"] if member.wrapped else member.schema


def strict_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``schema`` as OpenAI's strict mode takes it (every field required, no other fields) and
    what keeps it from being strict (free-form objects, fields that may be left out)."""
    problems: list[str] = []

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, list):
            return [walk(item, path) for item in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v, f"{path}/{k}") for k, v in node.items()}
        if out.get("type") == "object" or "properties" in out:
            props = out.get("properties")
            extra = out.get("additionalProperties")
            if not props:
                problems.append(
                    f"{path or '/'} is an object with free keys (a dict): strict needs named fields"
                )
            elif isinstance(extra, dict) or extra is True:
                problems.append(f"{path or '/'} allows other keys: strict needs additionalProperties false")
            else:
                missing = [k for k in props if k not in out.get("required", [])]
                if missing:
                    problems.append(
                        f"{path or '/'}: {', '.join(missing)} may be left out (a default); "
                        "strict needs every field required"
                    )
                out["additionalProperties"] = False
        return out

    return walk(schema, ""), tuple(problems)


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
