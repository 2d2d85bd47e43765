"""An agent's output options, as a part of ``Agent``: ``output_type`` (or Agno's
``output_schema``, AgentScope's ``structured_model``), its mode, retries, tool name, validators
and state key, checked when given and turned into one ``OutputSpec`` per setting."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ConfigurationError
from .output import OutputSpec

_SPECS: dict[tuple[Any, ...], OutputSpec] = {}
"""Output specs by setting, shared by every agent: a spec's schema, validator and output tools
cost more than a turn to make, and an evaluation or ``agent.map`` builds a fresh agent from the
same definition for each case. A spec never changes once made."""
_SPECS_KEPT = 64


class TypedOutput:
    """An agent's output options (mixed into ``Agent``): ``output_type`` and how it is asked
    for, checked and kept."""

    format: Any

    def _set_output(
        self,
        output_type: Any,
        output_schema: Any,
        structured_model: Any,
        mode: str,
        retries: int,
        tool_name: str,
        validators: Iterable[Callable[..., Any]] | None,
        to_state: str | None,
    ) -> None:
        given = [
            (n, v)
            for n, v in (
                ("output_type", output_type),
                ("output_schema", output_schema),
                ("structured_model", structured_model),
            )
            if v is not None
        ]
        if len(given) > 1:
            raise ConfigurationError(
                f"give the output type once: {' and '.join(n for n, _ in given)} are the same option "
                "(output_schema is Agno's name, structured_model AgentScope's)"
            )
        self.output_type: Any = given[0][1] if given else None
        """What a run's answer must be (``result.output`` is then the validated value)."""
        if self.output_type is not None and self.format.output_fields:
            raise ConfigurationError(
                "give output_type= or output_fields=, not both (output_type validates the answer)"
            )
        self.output_mode, self.output_retries, self.output_tool_name = mode, retries, tool_name
        self.output_validators: list[Callable[..., Any]] = list(validators or [])
        self.output_to_state = to_state
        self._output_spec(None)  # a bad option fails here, not at the first run

    @property
    def output_schema(self) -> Any:
        """Agno's name for ``output_type``."""
        return self.output_type

    def output_validator(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: ``fn(output)`` or ``fn(output, run_context)`` checks every typed output after
        it validated; it returns the output (changed or not) or raises ``ModelRetry("why")``."""
        self.output_validators.append(fn)
        return fn

    def _output_spec(self, output_type: Any = None) -> OutputSpec | None:
        """The output this run asks for (its own type, else the agent's), built once per setting
        (and shared with every agent of the same setting)."""
        tp = output_type if output_type is not None else self.output_type
        if tp is None and self.output_validators:
            tp = str  # validators check a plain answer too (pydantic-ai's default output is text)
        if tp is None:
            return None
        validators = tuple(self.output_validators)
        # A type and the validators by identity (a spec kept holds them alive: an id in the key is
        # never another object's); a JSON-schema dict by its content, which may be edited.
        key = (
            json.dumps(tp, sort_keys=True, default=repr) if isinstance(tp, dict) else id(tp),
            self.output_mode,
            self.output_retries,
            self.output_tool_name,
            tuple(map(id, validators)),
            self.output_to_state,
        )
        cached = _SPECS.get(key)
        if cached is not None and (cached.type is tp or isinstance(tp, dict)):
            return cached
        spec = OutputSpec(
            tp, self.output_mode, self.output_retries, self.output_tool_name, validators, self.output_to_state
        )
        if len(_SPECS) >= _SPECS_KEPT:
            _SPECS.clear()
        _SPECS[key] = spec
        return spec


__all__ = ["TypedOutput"]
