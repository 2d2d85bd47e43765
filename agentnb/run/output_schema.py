"""What an output type asks for: its members (a union has one per member), each with its JSON
schema (a non-object type wrapped as ``{"response": ...}``), how JSON data is validated into the
typed value and dumped back, and the schema made strict for OpenAI's strict mode."""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from ..errors import ConfigurationError

NAME = re.compile(r"[^A-Za-z0-9_-]+")
"""What a type's name may not hold (as a schema's and a tool's name)."""


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
    """JSON data -> the typed value; raises ``Invalid`` with the errors."""
    to_data: Callable[[Any], Any]
    """The typed value -> JSON data."""
    validate_partial: Callable[[Any], Any] | None = None
    """JSON data of an answer still streaming -> the typed value so far (pydantic's
    ``experimental_allow_partial``); raises when it is not one yet. None: the type has no
    partial validation (a JSON-schema dict)."""


class Invalid(Exception):
    """An answer that does not validate, with its errors (paths and messages)."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__(errors)
        self.errors = errors


def unenveloped(tp: Any) -> Any:
    """A JSON schema given as OpenAI's ``response_format`` envelope (Agno's ``output_schema``:
    ``{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}``) as the schema
    itself, titled by its name."""
    if not isinstance(tp, dict) or tp.get("type") != "json_schema":
        return tp
    inner = tp.get("json_schema")
    if not isinstance(inner, dict) or not isinstance(inner.get("schema"), dict):
        raise ConfigurationError(
            'output_type is a response_format without a schema; give {"type": "json_schema", '
            '"json_schema": {"name": ..., "schema": {...}}} or the JSON schema itself'
        )
    return {"title": inner.get("name") or "output", **inner["schema"]}


def type_name(tp: Any) -> str:
    """The type's name as a schema and a tool name take it (``list[int]`` → ``list_int``)."""
    if isinstance(tp, dict):
        return NAME.sub("_", str(tp.get("title") or "output"))[:64]
    name = getattr(tp, "__name__", None)
    if isinstance(name, str) and typing.get_origin(tp) is None:
        return NAME.sub("_", name).strip("_")[:64] or "output"
    return NAME.sub("_", _spelled(tp))[:64].strip("_") or "output"


def _spelled(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is None:
        return getattr(tp, "__name__", repr(tp))
    args = "_".join(_spelled(a) if not isinstance(a, str) else a for a in typing.get_args(tp))
    return f"{getattr(origin, '__name__', 'output')}_{args}"


def union_members(tp: Any) -> list[Any] | None:
    """The members of a union of two or more types (``None`` left out), else None."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args if len(args) > 1 else None
    return None


def members(tp: Any) -> tuple[Member, ...]:
    """The shapes an answer of type ``tp`` may take: one per member of a union of object types
    (a pydantic model, a dataclass, a TypedDict), else one."""
    if isinstance(tp, dict):
        return (_schema_member(tp),)
    parts = union_members(tp)
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
            raise Invalid(
                [{"path": "".join(f"/{p}" for p in e["loc"]), "message": e["msg"]} for e in exc.errors()]
            ) from None

    return Member(
        type_name(tp),
        schema,
        wrapped,
        validate,
        lambda value: adapter.dump_python(value, mode="json"),
        lambda data: adapter.validate_python(data, experimental_allow_partial=True),
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
            raise Invalid([{"path": path, "message": exc.message}]) from None

    return Member(type_name(schema), dict(shown), wrapped, validate, lambda value: value)


def unwrapped(member: Member) -> dict[str, Any]:
    """A member's schema without the ``{"response": ...}`` wrapping."""
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
    "Invalid",
    "Member",
    "NAME",
    "members",
    "strict_schema",
    "type_name",
    "union_members",
    "unenveloped",
    "unwrapped",
]
