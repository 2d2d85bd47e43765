"""JSON schemas for tools: from a function's signature and docstring (pydantic), and checks of
arguments against them (pydantic for function tools, fastjsonschema for explicit schemas)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ToolArgumentsError, ToolDefinitionError

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

INJECTED_PARAMS = ("run_context", "agent", "session_state", "dependencies")
"""Parameter names filled by agentnb at call time and hidden from the model."""

_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object"}


def param_names(function: Callable[..., Any]) -> set[str]:
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return set()


def param_required(function: Callable[..., Any], param: str) -> bool:
    try:
        p = inspect.signature(function).parameters.get(param)
    except (TypeError, ValueError):
        return True
    return p is not None and p.default is inspect.Parameter.empty


def schema_for(
    function: Callable[..., Any], tool_name: str, hidden: set[str]
) -> tuple[dict[str, Any], type[BaseModel], tuple[str, ...], str | None]:
    import docstring_parser
    from pydantic import ConfigDict, Field, create_model

    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"cannot read the signature of tool {tool_name!r}: {exc}") from None
    hints = _type_hints(function, tool_name)
    doc = docstring_parser.parse(inspect.getdoc(function) or "")
    param_docs = {p.arg_name: p.description for p in doc.params if p.description}
    description = "\n".join(x for x in (doc.short_description, doc.long_description) if x) or None

    fields: dict[str, Any] = {}
    untyped: dict[str, Any] = {}
    injected: list[str] = []
    missing = hidden - set(sig.parameters)
    if missing:
        raise ToolDefinitionError(
            f"inputs_from_state of tool {tool_name!r} names {sorted(missing)}, which are not "
            f"parameters of {getattr(function, '__name__', function)!r}"
        )
    for pname, param in sig.parameters.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if pname == "self":
            continue
        if pname in INJECTED_PARAMS:
            injected.append(pname)
            continue
        if pname in hidden:
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        annotation = hints.get(pname, inspect.Parameter.empty)
        if annotation is inspect.Parameter.empty:
            untyped[pname] = default
            annotation = Any
        fields[pname] = (annotation, Field(default, description=param_docs.get(pname)))
    try:
        model = create_model(  # type: ignore[call-overload]
            f"{tool_name}_arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
            **fields,
        )
        schema = model.model_json_schema()
    except Exception as exc:
        raise ToolDefinitionError(
            f"cannot build a JSON schema for tool {tool_name!r}: {exc}. Use JSON-friendly type "
            f"hints (str, int, float, bool, list[...], dict[...], Literal, pydantic models)"
        ) from None
    schema = _strip_titles(schema)
    schema.pop("additionalProperties", None)
    schema.setdefault("properties", {})
    for pname, default in untyped.items():
        # No annotation: tell the model the type of the default (a string when there is none),
        # as the seeds' schemas show, but accept any JSON value.
        prop: dict[str, Any] = {"type": _JSON_TYPES.get(type(default), "string")}
        if default is not ... and default is not None:
            prop["default"] = default
        if pname in param_docs:
            prop["description"] = param_docs[pname]
        schema["properties"][pname] = prop
    ordered = {"type": "object", "properties": schema.pop("properties")}
    if schema.get("required"):
        ordered["required"] = schema.pop("required")
    schema.pop("type", None)
    ordered.update(schema)
    return ordered, model, tuple(injected), description


def _type_hints(function: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function)
    except Exception:
        pass
    # Some hint names a class that is not a module global (e.g. defined inside a function):
    # resolve each one against the globals and the function's closure, and say which failed.
    target = inspect.unwrap(getattr(function, "__func__", function))
    namespace = dict(getattr(target, "__globals__", {}))
    try:
        namespace.update(inspect.getclosurevars(target).nonlocals)
    except (TypeError, ValueError):
        pass
    hints = {}
    for pname, annotation in getattr(target, "__annotations__", {}).items():
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)  # the function's own annotation text
            except Exception as exc:
                raise ToolDefinitionError(
                    f"cannot resolve the type hint {annotation!r} of {pname!r} in tool {tool_name!r} "
                    f"({exc}); define that type at module level (or in the notebook) before the tool"
                ) from None
        hints[pname] = annotation
    return hints


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: _strip_titles(v)
            for k, v in node.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def validation_message(exc: ValidationError) -> str:
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

    try:
        return fastjsonschema.compile(schema)
    except fastjsonschema.JsonSchemaDefinitionException as exc:
        raise ToolDefinitionError(f"the parameters are not a valid JSON schema: {exc}") from None


def check_with_schema(validator: Callable[[Any], Any], arguments: dict[str, Any]) -> None:
    """Raise ToolArgumentsError naming the argument and the problem when ``arguments`` do not fit."""
    import fastjsonschema

    try:
        validator(arguments)
    except fastjsonschema.JsonSchemaValueException as exc:
        where = exc.name[len("data") :].lstrip(".") if exc.name else ""
        message = exc.message[len(exc.name) :].strip() if exc.name and exc.message.startswith(exc.name) else exc.message
        raise ToolArgumentsError(f"{where or '(arguments)'}: {message}") from None


def check_inputs_from_state(tool_name: str, mapping: Any) -> dict[str, str]:
    if not mapping:
        return {}
    if not isinstance(mapping, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
    ):
        raise ToolDefinitionError(
            f"inputs_from_state of tool {tool_name!r} must map state keys to parameter names, "
            f"e.g. {{'documents': 'documents'}}; got {mapping!r}"
        )
    return dict(mapping)


def check_outputs_to_state(tool_name: str, mapping: Any) -> dict[str, dict[str, Any]]:
    if not mapping:
        return {}
    if not isinstance(mapping, Mapping):
        raise ToolDefinitionError(
            f"outputs_to_state of tool {tool_name!r} must be a dict like "
            f"{{'state_key': {{'source': 'result_key'}}}}; got {mapping!r}"
        )
    out = {}
    for key, spec in mapping.items():
        if not isinstance(spec, Mapping) or set(spec) - {"source", "handler"}:
            raise ToolDefinitionError(
                f"outputs_to_state[{key!r}] of tool {tool_name!r} must be a dict with optional "
                f"'source' and 'handler'; got {spec!r}"
            )
        if "handler" in spec and spec["handler"] is not None and not callable(spec["handler"]):
            raise ToolDefinitionError(
                f"outputs_to_state[{key!r}]['handler'] of tool {tool_name!r} must be a function"
            )
        out[key] = dict(spec)
    return out


__all__ = [
    "INJECTED_PARAMS",
    "check_inputs_from_state",
    "check_outputs_to_state",
    "param_names",
    "param_required",
    "schema_for",
    "check_with_schema",
    "schema_validator",
    "validation_message",
]
