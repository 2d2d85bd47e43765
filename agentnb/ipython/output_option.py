"""``%%agent NAME --output T``: the typed output named in the user's namespace, with its
``--output-mode`` and ``--output-retries``, as the keywords ``Agent`` takes."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from IPython.core.error import UsageError


def is_output_type(value: Any) -> bool:
    """Whether ``value`` can be an ``output_type``: a class, a typing form (``list[X]``,
    ``Literal[...]``, ``A | B``) or a JSON-schema dict."""
    return isinstance(value, (type, dict)) or typing.get_origin(value) is not None


def output_options(args: Any, ns: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``output_type`` / ``output_mode`` / ``output_retries`` from the magic's options ({} when
    none was given); a name that is not defined, or not a type, is a one-line UsageError."""
    spec, mode, retries = args.output, args.output_mode, args.output_retries
    if spec is None:
        if mode is not None or retries is not None:
            raise UsageError(
                f"%%agent {name}: --output-mode and --output-retries go with --output T (the output type)"
            )
        return {}
    if not spec.isidentifier() or spec not in ns:
        raise UsageError(
            f"%%agent {name}: --output {spec}: no variable named {spec!r}; define the type (a pydantic "
            "model, dataclass, TypedDict, ...) in a cell above"
        )
    value = ns[spec]
    if not is_output_type(value):
        raise UsageError(
            f"%%agent {name}: --output {spec} is a {type(value).__name__}, not a type; name a pydantic "
            "model, a dataclass, a TypedDict, list[...], Literal[...], a union or a JSON-schema dict"
        )
    options: dict[str, Any] = {"output_type": value}
    if mode is not None:
        options["output_mode"] = mode
    if retries is not None:
        if retries < 0:
            raise UsageError(f"%%agent {name}: --output-retries must be 0 or more, got {retries}")
        options["output_retries"] = retries
    return options


__all__ = ["is_output_type", "output_options"]
