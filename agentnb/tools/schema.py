"""JSON schemas for tools, from a function's signature and docstring (through pydantic).

Two sets of rules, one per peer whose examples agentnb runs:

- Agno's (``Tool.from_function``, ``@tool``, Toolkits): an untyped parameter is a string (seed
  001's schemas), ``Optional[X]`` is shown as ``X``, a docstring's ``(type)`` stays in the
  parameter's description, and a tool without parameters says ``"required": []``.
- Haystack's (``create_tool_from_function``): an untyped parameter is an error, and
  ``Optional[X]`` stays ``anyOf [X, null]``.

Both: ``Annotated[T, "text"]`` describes the parameter, a ``Callable`` parameter is left out,
and the parameters agentnb fills at call time are hidden from the model (``injected_params``).
"""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from ..errors import ToolDefinitionError

if TYPE_CHECKING:
    from pydantic import BaseModel

INJECTED_PARAMS = ("run_context", "agent", "session_state", "dependencies", "team")
"""Parameter names filled by agentnb at call time and hidden from the model (``team`` only when
untyped: agentnb has no teams, so it is None, as Agno passes it to an agent's tools)."""

INJECT_MARKER = "__agentnb_inject__"
"""A class attribute naming what a parameter annotated with that class receives (State: the live
``state``; Agent: the ``agent``), so injection by type needs no import of those classes."""

_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object"}
_VALUE_KEYS = ("default", "enum", "const", "examples")
"""Schema keys whose values are data, not schemas (a 'title' inside them is not a schema title)."""
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def type_hints(function: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    """The function's resolved type hints, with their ``Annotated`` metadata."""
    try:
        return typing.get_type_hints(function, include_extras=True)
    except Exception:
        pass
    # Some hint names a class that is not a module global (e.g. defined inside a function):
    # resolve each one against the globals and the function's closure, and say which failed.
    target = inspect.unwrap(getattr(function, "__func__", function))
    namespace = dict(getattr(target, "__globals__", {}))
    with suppress(TypeError, ValueError):
        namespace.update(inspect.getclosurevars(target).nonlocals)
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


def _without_none(annotation: Any) -> Any:
    """``X`` for ``Optional[X]`` / ``X | None``; the annotation itself otherwise."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def _injected_kind(name: str, annotation: Any) -> str | None:
    """What agentnb passes to a parameter at call time, or None when the model fills it."""
    if name in INJECTED_PARAMS and (name != "team" or annotation in (inspect.Parameter.empty, Any, object)):
        return name
    kind = getattr(_without_none(annotation), INJECT_MARKER, None)
    return kind if isinstance(kind, str) else None


def injected_params(function: Callable[..., Any], hints: dict[str, Any] | None = None) -> dict[str, str]:
    """{parameter: what it receives} for the parameters agentnb fills (by name or by type)."""
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return {}
    if hints is None:
        try:
            hints = typing.get_type_hints(function)
        except Exception:  # an unresolvable hint: injection by name still works
            hints = {}
    out = {}
    for pname in params:
        kind = _injected_kind(pname, hints.get(pname, inspect.Parameter.empty))
        if kind is not None:
            out[pname] = kind
    return out


def _is_callable_type(annotation: Any) -> bool:
    target = _without_none(annotation)
    return target is collections.abc.Callable or typing.get_origin(target) is collections.abc.Callable


def schema_for(
    function: Callable[..., Any], tool_name: str, hidden: set[str], *, haystack: bool = False
) -> tuple[dict[str, Any], type[BaseModel], dict[str, str], str | None]:
    """(JSON schema, pydantic model of the arguments, injected parameters, description)."""
    import docstring_parser
    from pydantic import ConfigDict, Field, create_model

    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"cannot read the signature of tool {tool_name!r}: {exc}") from None
    hints = type_hints(function, tool_name)
    doc = docstring_parser.parse(inspect.getdoc(function) or "")
    param_docs = {p.arg_name: _param_doc(p, haystack) for p in doc.params if p.description}
    description = "\n".join(x for x in (doc.short_description, doc.long_description) if x) or None

    fields: dict[str, Any] = {}
    untyped: dict[str, Any] = {}
    injected = injected_params(function, hints)
    for pname, param in sig.parameters.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if pname == "self" or pname in injected or pname in hidden:
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        annotation, note = _annotation_and_note(hints.get(pname, inspect.Parameter.empty))
        if _is_callable_type(annotation):
            continue  # a callback cannot come from the model (Haystack leaves it out too)
        if annotation is inspect.Parameter.empty:
            if haystack:
                raise ToolDefinitionError(
                    f"parameter {pname!r} of tool {tool_name!r} has no type hint; create_tool_from_function "
                    f"needs one for every parameter (Tool.from_function takes an untyped parameter as a string)"
                )
            untyped[pname] = default
            annotation = Any
        fields[pname] = (annotation, Field(default, description=note or param_docs.get(pname)))
    try:
        model = create_model(
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
    return _finish(schema, untyped, param_docs, haystack), model, injected, description


def _param_doc(param: Any, haystack: bool) -> str:
    # Agno keeps a docstring's "(str)" in front of the description; Haystack does not.
    return (
        param.description if haystack or not param.type_name else f"({param.type_name}) {param.description}"
    )


def _annotation_and_note(annotation: Any) -> tuple[Any, str | None]:
    """``(T, "text")`` for ``Annotated[T, "text"]`` (the first string is the description)."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *extras = typing.get_args(annotation)
        return base, next((e for e in extras if isinstance(e, str)), None)
    return annotation, None


def _finish(
    schema: dict[str, Any], untyped: dict[str, Any], param_docs: dict[str, str], haystack: bool
) -> dict[str, Any]:
    """pydantic's schema as the model sees it: no titles, properties first, the peer's rules."""
    schema = _strip_titles(schema)
    schema.pop("additionalProperties", None)
    properties = schema.pop("properties", {})
    for pname, default in untyped.items():
        # No annotation: tell the model the type of the default (a string when there is none),
        # as the seeds' schemas show, but accept any JSON value.
        prop: dict[str, Any] = {"type": _JSON_TYPES.get(type(default), "string")}
        if default is not ... and default is not None:
            prop["default"] = default
        if pname in param_docs:
            prop["description"] = param_docs[pname]
        properties[pname] = prop
    if not haystack:
        properties = {name: _drop_null(prop) for name, prop in properties.items()}
    ordered: dict[str, Any] = {"type": "object", "properties": properties}
    required = schema.pop("required", [])
    if required or (not properties and not haystack):
        ordered["required"] = required
    schema.pop("type", None)
    ordered.update(schema)
    return ordered


def _drop_null(prop: dict[str, Any]) -> dict[str, Any]:
    """Agno shows ``Optional[X]`` as ``X``: the ``null`` branch of an ``anyOf`` goes."""
    branches = prop.get("anyOf")
    if not isinstance(branches, list) or {"type": "null"} not in branches:
        return prop
    rest = [b for b in branches if b != {"type": "null"}]
    others = {k: v for k, v in prop.items() if k != "anyOf"}
    return {**rest[0], **others} if len(rest) == 1 else {"anyOf": rest, **others}


def _strip_titles(node: Any, schema_map: bool = False) -> Any:
    """Drop pydantic's ``title`` keys; ``schema_map``: ``node`` maps names to schemas
    (``properties``, ``$defs``), so a parameter named ``title`` or ``default`` stays."""
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    if not isinstance(node, dict):
        return node
    if schema_map:
        return {k: _strip_titles(v) for k, v in node.items()}
    return {
        k: v if k in _VALUE_KEYS else _strip_titles(v, k in _SCHEMA_MAPS)
        for k, v in node.items()
        if not (k == "title" and isinstance(v, str))
    }


__all__ = ["INJECTED_PARAMS", "INJECT_MARKER", "injected_params", "schema_for", "type_hints"]
