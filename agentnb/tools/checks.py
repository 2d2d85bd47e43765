"""Checks of a tool's definition (Haystack's rules for ``inputs_from_state`` /
``outputs_to_state`` and explicit schemas) and of the arguments a model sends (pydantic for
function tools, fastjsonschema for explicit schemas)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ToolArgumentsError, ToolConfigTypeError, ToolDefinitionError

if TYPE_CHECKING:
    from pydantic import ValidationError


def param_required(function: Callable[..., Any], param: str) -> bool:
    try:
        p = inspect.signature(function).parameters.get(param)
    except (TypeError, ValueError):
        return True
    return p is not None and p.default is inspect.Parameter.empty


def _function_params(function: Callable[..., Any]) -> set[str] | None:
    """The names a function can take by keyword; None when it takes any (``**kwargs``) or
    has no readable signature."""
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL}


def check_inputs_from_state(
    tool_name: str, mapping: Any, function: Callable[..., Any]
) -> dict[str, str] | None:
    """``{state_key: parameter}``: keys and values strings, each value a parameter of ``function``."""
    if mapping is None:
        return None
    if not isinstance(mapping, Mapping):
        raise ToolConfigTypeError(
            f"inputs_from_state of tool {tool_name!r} must be a dict {{state_key: parameter_name}}, "
            f"e.g. {{'documents': 'documents'}}; got {type(mapping).__name__}"
        )
    for key, param in mapping.items():
        if not isinstance(key, str):
            raise ToolConfigTypeError(
                f"inputs_from_state keys must be str (state keys), not {type(key).__name__}"
            )
        if not isinstance(param, str):
            raise ToolConfigTypeError(f"inputs_from_state values must be str, not {type(param).__name__}")
    valid = _function_params(function)
    for key, param in mapping.items():
        if valid is not None and param not in valid:
            raise ToolDefinitionError(
                f"inputs_from_state maps {key!r} to unknown parameter {param!r}. Valid parameters are: "
                f"{sorted(valid)} (tool {tool_name!r})."
            )
    return dict(mapping)


def check_outputs_to_state(tool_name: str, mapping: Any) -> dict[str, dict[str, Any]] | None:
    """``{state_key: {"source": result_key?, "handler": fn?}}``."""
    if mapping is None:
        return None
    if not isinstance(mapping, Mapping):
        raise ToolConfigTypeError(
            f"outputs_to_state of tool {tool_name!r} must be a dict like "
            f"{{'state_key': {{'source': 'result_key'}}}}; got {type(mapping).__name__}"
        )
    out = {}
    for key, spec in mapping.items():
        if not isinstance(spec, Mapping):
            raise ToolConfigTypeError(
                f"outputs_to_state configuration for key {key!r} of tool {tool_name!r} must be a dictionary "
                f"with optional 'source' and 'handler'; got {spec!r}"
            )
        if set(spec) - {"source", "handler"}:
            raise ToolDefinitionError(
                f"outputs_to_state[{key!r}] of tool {tool_name!r} has unknown entries "
                f"{sorted(set(spec) - {'source', 'handler'})}; allowed: 'source', 'handler'"
            )
        if "source" in spec and not isinstance(spec["source"], str):
            raise ToolDefinitionError(
                f"outputs_to_state source for key {key!r} of tool {tool_name!r} must be a string"
            )
        if spec.get("handler") is not None and not callable(spec["handler"]):
            raise ToolDefinitionError(
                f"outputs_to_state[{key!r}]['handler'] of tool {tool_name!r} must be a function"
            )
        out[key] = dict(spec)
    return out


def validation_message(exc: ValidationError) -> str:
    """A pydantic error as one line naming each argument and its problem."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(arguments)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unexpected argument"
        elif err["type"] == "missing":
            msg = "required argument missing"
        parts.append(f"{loc}: {msg}")
    return "; ".join(parts)


def schema_validator(schema: dict[str, Any]) -> Callable[[Any], Any]:
    """A compiled validator for an explicit JSON schema (fastjsonschema: it imports in a few
    milliseconds, where ``jsonschema`` pulls in format checkers that take seconds on a first call)."""
    import fastjsonschema

    if not isinstance(schema, Mapping):
        raise ToolConfigTypeError(
            f"the parameters must be a JSON schema (a dict), got {type(schema).__name__}"
        )
    try:
        return fastjsonschema.compile(dict(schema))
    except (fastjsonschema.JsonSchemaDefinitionException, AttributeError, TypeError) as exc:
        raise ToolDefinitionError(f"the parameters are not a valid JSON schema: {exc}") from None


def check_with_schema(validator: Callable[[Any], Any], arguments: dict[str, Any]) -> None:
    """Raise ToolArgumentsError naming the argument and the problem when ``arguments`` do not fit."""
    import fastjsonschema

    try:
        validator(arguments)
    except fastjsonschema.JsonSchemaValueException as exc:
        where = exc.name[len("data") :].lstrip(".") if exc.name else ""
        message = (
            exc.message[len(exc.name) :].strip()
            if exc.name and exc.message.startswith(exc.name)
            else exc.message
        )
        raise ToolArgumentsError(f"{where or '(arguments)'}: {message}") from None


__all__ = [
    "check_inputs_from_state",
    "check_outputs_to_state",
    "check_with_schema",
    "param_required",
    "schema_validator",
    "validation_message",
]
