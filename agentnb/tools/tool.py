"""Tools: a function the model can call (``Tool``, ``@tool``) and groups of them (``Toolkit``).

A tool's JSON schema comes from the function's signature and docstring (see ``schema.py``).
Parameters named ``run_context``, ``agent``, ``session_state``, ``dependencies`` and ``self``,
and those filled from state (``inputs_from_state``), are injected at call time and are not shown
to the model. Arguments from the model are validated before the call.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ToolArgumentsError, ToolDefinitionError
from ..modules import load_registered, register_state, registered_state
from ..run_context import RunContext, run_sync
from .schema import (
    INJECTED_PARAMS,
    check_inputs_from_state,
    check_outputs_to_state,
    param_names,
    param_required,
    schema_for,
    check_with_schema,
    schema_validator,
    validation_message,
)

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclasses.dataclass
class Tool:
    """A function the model can call.

    Build one with ``Tool.from_function(fn)`` / ``@tool``, or Haystack-style with an explicit
    JSON schema: ``Tool(name=..., description=..., parameters={...}, function=fn)``.
    """

    name: str
    """The name the model calls it by."""
    description: str | None
    """What it does (from the docstring)."""
    parameters: dict[str, Any]
    """JSON schema of its arguments, as sent to the model."""
    function: Callable[..., Any]
    """The Python callable."""
    inputs_from_state: dict[str, str] = dataclasses.field(default_factory=dict)
    """{state_key: parameter_name}: values injected from state, hidden from the model."""
    outputs_to_state: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    """{state_key: {"source": result_key?, "handler": fn?}}: where the result goes in state."""
    args_model: type[BaseModel] | None = dataclasses.field(default=None, repr=False)
    """pydantic model validating the model's arguments (from_function tools)."""
    injected: tuple[str, ...] = ()
    """Injected parameter names the function declares."""
    instructions: str | None = None
    """Extra text for the system prompt (from a Toolkit with add_instructions)."""
    _validator: Callable[[Any], Any] | None = dataclasses.field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ToolDefinitionError(
                f"tool name {self.name!r} is not valid: use letters, digits and underscores"
            )
        if not callable(self.function):
            raise ToolDefinitionError(f"tool {self.name!r}: function {self.function!r} is not callable")
        self.inputs_from_state = check_inputs_from_state(self.name, self.inputs_from_state)
        self.outputs_to_state = check_outputs_to_state(self.name, self.outputs_to_state)
        if not self.injected:
            self.injected = tuple(p for p in INJECTED_PARAMS if p in param_names(self.function))

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        inputs_from_state: Mapping[str, str] | None = None,
        outputs_to_state: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Tool:
        """A tool whose schema is derived from ``function``'s signature and docstring."""
        if isinstance(function, Tool):
            return function
        if not callable(function):
            raise ToolDefinitionError(f"cannot make a tool from {function!r}: it is not callable")
        tool_name = name or getattr(function, "__name__", None)
        if not tool_name or tool_name == "<lambda>":
            raise ToolDefinitionError("a lambda needs a name: Tool.from_function(fn, name='...')")
        hidden = set((inputs_from_state or {}).values())
        parameters, args_model, injected, doc_description = schema_for(function, tool_name, hidden)
        return cls(
            name=tool_name,
            description=description if description is not None else doc_description,
            parameters=parameters,
            function=function,
            inputs_from_state=dict(inputs_from_state or {}),
            outputs_to_state={k: dict(v) for k, v in (outputs_to_state or {}).items()},
            args_model=args_model,
            injected=injected,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (a decorated function stays usable)."""
        return self.function(*args, **kwargs)

    @property
    def __name__(self) -> str:  # type: ignore[override]
        """The tool's name, so code that lists tools as functions (``t.__name__``) ports."""
        return self.name

    def schema(self) -> dict[str, Any]:
        """The tool as sent to the model (OpenAI Chat Completions format)."""
        function: dict[str, Any] = {"name": self.name}
        if self.description:
            function["description"] = self.description
        function["parameters"] = self.parameters
        return {"type": "function", "function": function}

    def validate_arguments(self, arguments: Any) -> dict[str, Any]:
        """The model's arguments checked against the schema; raises ToolArgumentsError."""
        if not isinstance(arguments, dict):
            raise ToolArgumentsError(
                f"arguments must be a JSON object, got {type(arguments).__name__}: {arguments!r}"
            )
        if self.args_model is not None:
            from pydantic import ValidationError

            try:
                validated = self.args_model.model_validate(arguments)
            except ValidationError as exc:
                raise ToolArgumentsError(validation_message(exc)) from None
            return {k: getattr(validated, k) for k in validated.model_fields_set}
        if self._validator is None:
            self._validator = schema_validator(self.parameters)
        check_with_schema(self._validator, arguments)
        return dict(arguments)

    def invoke(self, arguments: Mapping[str, Any], ctx: RunContext) -> Any:
        """Call the function with the arguments plus injected values; await it if async."""
        kwargs = dict(arguments)
        for param in self.injected:
            if param == "run_context":
                kwargs[param] = ctx
            elif param == "agent":
                kwargs[param] = ctx.agent
            elif param == "session_state":
                kwargs[param] = ctx.session_state
            elif param == "dependencies":
                kwargs[param] = ctx.dependencies
        for state_key, param in self.inputs_from_state.items():
            if ctx.state.has(state_key):
                kwargs[param] = ctx.state.get(state_key)
            elif param_required(self.function, param):
                raise ToolArgumentsError(
                    f"tool {self.name!r} reads parameter {param!r} from state key {state_key!r} "
                    f"(inputs_from_state), but the state has no {state_key!r} yet"
                )
        return run_sync(self.function(**kwargs))


def tool(
    function: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    inputs_from_state: Mapping[str, str] | None = None,
    outputs_to_state: Mapping[str, Mapping[str, Any]] | None = None,
) -> Any:
    """Turn a function into a Tool: ``@tool`` or ``@tool(name=..., outputs_to_state=...)``."""

    def wrap(fn: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            fn,
            name=name,
            description=description,
            inputs_from_state=inputs_from_state,
            outputs_to_state=outputs_to_state,
        )

    return wrap(function) if function is not None else wrap


class Toolkit:
    """A group of tools: subclass it and ``self.register(self.method)`` in ``__init__``."""

    def __init__(
        self,
        name: str | None = None,
        tools: Iterable[Callable[..., Any]] = (),
        instructions: str | None = None,
        add_instructions: bool = False,
        include_tools: Iterable[str] | None = None,
        exclude_tools: Iterable[str] | None = None,
        **_: Any,
    ) -> None:
        self.name = name or type(self).__name__
        self.instructions = instructions
        self.add_instructions = add_instructions
        self.include_tools = set(include_tools) if include_tools is not None else None
        self.exclude_tools = set(exclude_tools or ())
        self._tools: dict[str, Tool] = {}
        for fn in tools:
            self.register(fn)

    def register(self, function: Callable[..., Any], name: str | None = None) -> Tool:
        """Add a function or bound method as a tool of this toolkit."""
        made = Tool.from_function(function, name=name)
        self._tools[made.name] = made
        return made

    @property
    def tools(self) -> list[Tool]:
        """The registered tools, after include/exclude filters."""
        out = []
        for t in self._tools.values():
            if self.include_tools is not None and t.name not in self.include_tools:
                continue
            if t.name in self.exclude_tools:
                continue
            if self.add_instructions and self.instructions:
                t.instructions = self.instructions
            out.append(t)
        return out

    def register_state(self, attr_name: str, custom_to_json: Any = None, custom_from_json: Any = None) -> None:
        """Save ``self.<attr_name>`` in sessions (AgentScope's ``register_state``)."""
        register_state(self, attr_name, custom_to_json, custom_from_json)

    def state_dict(self) -> dict[str, Any]:
        """The toolkit's registered attributes (its tools come from code, not from the file)."""
        return {"name": self.name, "tools": [t.name for t in self.tools], "registered": registered_state(self)}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        load_registered(self, dict(state_dict.get("registered") or {}), strict)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tools={[t.name for t in self.tools]})"


def collect_tools(items: Iterable[Any] | None) -> list[Tool]:
    """Flatten functions, Tools, Toolkits and lists of them into Tools, rejecting duplicates."""
    out: dict[str, Tool] = {}
    for item in items or ():
        if isinstance(item, Toolkit):
            made = item.tools
        elif isinstance(item, (list, tuple)):
            made = collect_tools(item)
        elif isinstance(item, Tool):
            made = [item]
        elif callable(item):
            made = [Tool.from_function(item)]
        else:
            raise ToolDefinitionError(
                f"tools=[...] accepts functions, Tool and Toolkit objects; got {item!r}"
            )
        for t in made:
            if t.name in out and out[t.name] is not t:
                raise ToolDefinitionError(
                    f"two tools are named {t.name!r}; rename one (Tool.from_function(fn, name=...))"
                )
            out[t.name] = t
    return list(out.values())


def result_text(value: Any) -> str:
    """What the model sees of a tool's return value."""
    if isinstance(value, str):
        return value
    pydantic = sys.modules.get("pydantic")  # a pydantic model can only exist once pydantic is loaded
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


__all__ = ["Tool", "Toolkit", "collect_tools", "result_text", "tool"]
