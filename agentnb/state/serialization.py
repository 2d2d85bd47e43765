"""Types, functions and values as plain data, the way Haystack's ``State.to_dict`` writes them.

A type is its text (``int``, ``list[str]``, ``int | None``, ``list[agentnb.messages.Message]``),
a function its dotted path (``agentnb.state.merge_lists``), a value a JSON value plus a schema
that says which objects to rebuild (``{"type": "agentnb.messages.Message"}`` for an object with
``to_dict`` / ``from_dict``). Reading them back imports the modules they name, so
``from_*`` is for data you trust (a pipeline you wrote), never for a file from elsewhere.
"""

from __future__ import annotations

import builtins
import importlib
import re
import typing
from collections.abc import Callable
from functools import reduce
from typing import Any

from ..errors import ConfigurationError

_TOKEN = re.compile(r"\s*([A-Za-z_][\w.]*|\[|\]|,|\|)")
_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (type(None), "null"))


def type_to_str(tp: Any) -> str:
    """The text of a type: builtins by name, other classes by dotted path, generics as written."""
    if tp is type(None):
        return "None"
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__name__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__qualname__}"
    return str(tp)


def type_from_str(text: str) -> Any:
    """The type ``type_to_str`` wrote (imports the modules of the classes it names)."""
    tokens = _TOKEN.findall(text)
    if "".join(tokens) != re.sub(r"\s+", "", text):
        raise ConfigurationError(f"cannot read the type {text!r}")
    tp, rest = _parse_union(tokens)
    if rest:
        raise ConfigurationError(f"cannot read the type {text!r}: unexpected {rest[0]!r}")
    return tp


def _parse_union(tokens: list[str]) -> tuple[Any, list[str]]:
    members = []
    while True:
        tp, tokens = _parse_one(tokens)
        members.append(tp)
        if not tokens or tokens[0] != "|":
            return reduce(lambda a, b: a | b, members) if len(members) > 1 else members[0], tokens
        tokens = tokens[1:]


def _parse_one(tokens: list[str]) -> tuple[Any, list[str]]:
    if not tokens or not re.match(r"[A-Za-z_]", tokens[0]):
        raise ConfigurationError(f"cannot read a type at {' '.join(tokens) or 'the end'!r}")
    base, tokens = _named(tokens[0]), tokens[1:]
    if not tokens or tokens[0] != "[":
        return base, tokens
    args, tokens = [], tokens[1:]
    while True:
        arg, tokens = _parse_union(tokens)
        args.append(arg)
        if tokens[:1] == [","]:
            tokens = tokens[1:]
            continue
        if tokens[:1] != ["]"]:
            raise ConfigurationError("cannot read a type: a '[' is not closed")
        return base[tuple(args) if len(args) > 1 else args[0]], tokens[1:]


def _named(name: str) -> Any:
    if name == "None":
        return type(None)
    if "." not in name:
        found = getattr(builtins, name, None)
        if not isinstance(found, type):
            raise ConfigurationError(f"{name!r} is not a built-in type")
        return found
    return import_dotted(name)


def import_dotted(path: str) -> Any:
    """The object at a dotted path (``package.module.Class`` or ``module.function``)."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                found = getattr(found, attr)
        except AttributeError:
            break
        return found
    raise ConfigurationError(f"cannot import {path!r}")


def callable_to_str(function: Callable[..., Any], what: str) -> str:
    """A module-level function's dotted path (``what`` names it in the error for any other)."""
    qualname = getattr(function, "__qualname__", "")
    if not qualname or "<" in qualname:
        raise ConfigurationError(
            f"{what} is {function!r}, which has no importable name; use a module-level function"
        )
    return f"{function.__module__}.{qualname}"


def value_to_data(value: Any) -> tuple[dict[str, Any], Any]:
    """(schema, JSON value) for ``value``; raises TypeError for a value that cannot be written."""
    for tp, name in _JSON_TYPES:
        if isinstance(value, tp):
            return {"type": name}, value
    if isinstance(value, (list, tuple)):
        parts = [value_to_data(v) for v in value]
        schema: dict[str, Any] = {"type": "array"}
        if parts:
            schema["items"] = parts[0][0]
        return schema, [data for _, data in parts]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        props = {k: value_to_data(v) for k, v in value.items()}
        return {"type": "object", "properties": {k: s for k, (s, _) in props.items()}}, {
            k: d for k, (_, d) in props.items()
        }
    if callable(getattr(value, "to_dict", None)) and callable(getattr(type(value), "from_dict", None)):
        return {"type": type_to_str(type(value))}, value.to_dict()
    raise TypeError(
        f"cannot write a {type(value).__name__} as data (only JSON values and objects with to_dict / from_dict)"
    )


def value_from_data(schema: dict[str, Any], data: Any) -> Any:
    """The value ``value_to_data`` wrote."""
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items", {})
        return [value_from_data(items, v) for v in data]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: value_from_data(props.get(k, {}), v) for k, v in data.items()}
    if isinstance(kind, str) and "." in kind:
        return import_dotted(kind).from_dict(data)
    return data


__all__ = [
    "callable_to_str",
    "import_dotted",
    "type_from_str",
    "type_to_str",
    "value_from_data",
    "value_to_data",
]
