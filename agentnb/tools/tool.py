"""Tools: a function the model can call (``Tool``, ``@tool``, ``create_tool_from_function``).

A tool's JSON schema comes from the function's signature and docstring (see ``schema.py``).
Parameters named ``run_context``, ``agent``, ``session_state``, ``dependencies``, ``team`` and
``self``, those annotated ``State`` or ``Agent``, and those filled from state
(``inputs_from_state``) are injected at call time and are not shown to the model. Arguments from
the model are validated before the call.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..errors import ToolArgumentsError, ToolDefinitionError, ToolInvocationError
from ..util.text import shorten
from .checks import (
    check_inputs_from_state,
    check_outputs_to_state,
    check_with_schema,
    param_required,
    schema_validator,
    validation_message,
)
from .hooks import check_hook
from .run_context import RunContext, run_sync
from .schema import injected_params, schema_for

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..state.state import State

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]+")
"""What the OpenAI API (and Agno) accept as a tool name."""


DELEGATION = "delegation"
"""What a delegating tool's function is given its call's site as: ``Tool(injected={param:
DELEGATION})``. Only the executor has it, for the call it runs."""


class Delegating(Protocol):
    """What a delegating tool declares (``agentnb.delegation.Delegation`` is the one kind): which
    member a call goes to, and the site of one call, which runs the member."""

    @property
    def kind(self) -> str:
        """Which configuration made it: as_tool, team or handoff (a handoff runs after its
        response's other calls)."""

    def member_key(self, tool_call: Any) -> str | None:
        """The member a call goes to (None: not known before the call)."""

    def parallel_key(self, tool_call: Any) -> str | None:
        """The member a call goes to, for running sibling calls together (None: never together)."""

    def open(self, parent: Any, ctx: RunContext, tool_call_id: str, snapshot: Any) -> Any:
        """The site of one call (run_context, the parent run, the state snapshot of its batch)."""


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
    inputs_from_state: dict[str, str] | None = None
    """{state_key: parameter_name}: values injected from state when the model sent none."""
    outputs_to_state: dict[str, dict[str, Any]] | None = None
    """{state_key: {"source": result_key?, "handler": fn?}}: where a dict result goes in state."""
    args_model: type[BaseModel] | None = dataclasses.field(default=None, repr=False)
    """pydantic model validating the model's arguments (from_function tools)."""
    injected: dict[str, str] = dataclasses.field(default_factory=dict)
    """{parameter: what it receives} for the parameters agentnb fills (see RunContext.injectable)."""
    instructions: str | None = None
    """Extra text for the system prompt (``@tool(instructions=...)`` or a Toolkit's)."""
    tool_hooks: list[Callable[..., Any]] | None = None
    """This tool's own hooks (``@tool(tool_hooks=[...])``); an agent's ``tool_hooks`` replace them."""
    delegation: Delegating | None = dataclasses.field(default=None, compare=False)
    """How a call of this tool starts a child run (an agent as a tool, a team's delegate, a
    handoff; ``agentnb.delegation``); None for an ordinary tool. The executor opens the call's
    delegation site and hands it to the function as its ``delegation`` injected value."""
    member: Any = dataclasses.field(default=None, compare=False, repr=False)
    """The agent a delegating tool runs (``as_tool``, a handoff), if it is one agent."""
    requires_approval: bool | Callable[..., Any] = False
    """A person approves each call before it runs: True, or ``fn(arguments, run_context) ->
    bool`` (code decides per call, never the model; a str it returns is the reason shown). The
    run pauses before the call (``result.status == "paused"``); Agno's ``requires_confirmation``
    and the OpenAI SDK's ``needs_approval`` mean the same."""
    external: bool = False
    """The call is never run here: the run pauses and a person supplies its result
    (``item.answer(result)``); Agno's ``external_execution``."""
    _validator: Callable[[Any], Any] | None = dataclasses.field(default=None, repr=False, compare=False)
    _built: ClassVar[bool] = False
    """True once the tool is built (set on the instance at the end of ``__post_init__``; asked
    without reading ``__dict__``, which would keep CPython from storing its fields inline, and
    make every read of them slower)."""

    def __setattr__(self, name: str, value: Any) -> None:
        # A schema assigned after the tool was built applies (Haystack: ``tool.parameters = {...}``):
        # the validator is compiled again (an invalid schema fails here); a tool made from a
        # function checks the new schema first, then converts with its signature's model.
        if name == "parameters" and self._built:
            validator = schema_validator(value)
            object.__setattr__(self, "parameters", value)
            object.__setattr__(self, "_validator", validator)
            return
        object.__setattr__(self, name, value)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _TOOL_NAME.fullmatch(self.name):
            raise ToolDefinitionError(
                f"tool name {self.name!r} is not valid: use letters, digits, underscores and hyphens"
            )
        if not callable(self.function):
            raise ToolDefinitionError(f"tool {self.name!r}: function {self.function!r} is not callable")
        self.inputs_from_state = check_inputs_from_state(self.name, self.inputs_from_state, self.function)
        self.outputs_to_state = check_outputs_to_state(self.name, self.outputs_to_state)
        if not self.injected:
            self.injected = injected_params(self.function)
        if self.args_model is None and self._validator is None:
            self._validator = schema_validator(self.parameters)  # an invalid schema fails here, not at a call
        if self.tool_hooks is not None:
            self.tool_hooks = list(self.tool_hooks)
            for hook in self.tool_hooks:
                check_hook(hook)
        if not isinstance(self.requires_approval, bool) and not callable(self.requires_approval):
            raise ToolDefinitionError(
                f"tool {self.name!r}: requires_approval must be True, False or a function "
                f"(arguments, run_context) -> bool; got {self.requires_approval!r}"
            )
        object.__setattr__(self, "_built", True)

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        inputs_from_state: Mapping[str, str] | None = None,
        outputs_to_state: Mapping[str, Mapping[str, Any]] | None = None,
        instructions: str | None = None,
        tool_hooks: list[Callable[..., Any]] | None = None,
        requires_approval: bool | Callable[..., Any] = False,
        external: bool = False,
    ) -> Tool:
        """A tool whose schema is derived from ``function``'s signature and docstring (Agno's
        rules: an untyped parameter is a string, ``Optional[X]`` is shown as ``X``)."""
        made = _from_function(
            cls,
            function,
            name,
            description,
            inputs_from_state or {},
            outputs_to_state or {},
            instructions,
            tool_hooks,
            False,
        )
        if requires_approval is False and not external:
            return made
        return dataclasses.replace(made, requires_approval=requires_approval, external=external)

    def __set_name__(self, owner: type, name: str) -> None:
        # A @tool on a method: remember the attribute, so each instance keeps one bound Tool.
        self.__dict__["_attribute"] = name

    def __get__(self, instance: Any, owner: type | None = None) -> Tool:
        """``instance.method`` for a ``@tool`` on a method: the tool bound to that instance."""
        if instance is None or not _takes_self(self.function):
            return self
        bound = dataclasses.replace(self, function=types.MethodType(self.function, instance))
        attribute = self.__dict__.get("_attribute")
        if attribute is not None and isinstance(getattr(instance, "__dict__", None), dict):
            instance.__dict__[attribute] = bound
        return bound

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (a decorated function stays usable)."""
        return self.function(*args, **kwargs)

    @property
    def __name__(self) -> str:
        """The tool's name, so code that lists tools as functions (``t.__name__``) ports."""
        return self.name

    def schema(self) -> dict[str, Any]:
        """The tool as sent to the model (OpenAI Chat Completions format)."""
        function: dict[str, Any] = {"name": self.name}
        if self.description:
            function["description"] = self.description
        function["parameters"] = self.parameters
        return {"type": "function", "function": function}

    @property
    def tool_spec(self) -> dict[str, Any]:
        """Name, description and parameters (Haystack's ``Tool.tool_spec``)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def validate_arguments(self, arguments: Any, state: State | None = None) -> dict[str, Any]:
        """The model's arguments checked against the schema, in the model's order; raises
        ToolArgumentsError. With ``state``, an explicit schema is checked with the
        ``inputs_from_state`` values filled in (Haystack injects, then calls)."""
        if not isinstance(arguments, dict):
            raise ToolArgumentsError(
                f"arguments must be a JSON object, got {type(arguments).__name__}: {shorten(repr(arguments), 200)}"
            )
        if self.args_model is not None:
            from pydantic import ValidationError

            if self._validator is not None:  # a schema assigned since (see __setattr__)
                check_with_schema(self._validator, {**self._state_inputs(arguments, state), **arguments})
            try:
                validated = self.args_model.model_validate(arguments)
            except ValidationError as exc:
                raise ToolArgumentsError(validation_message(exc)) from None
            return {k: getattr(validated, k) for k in arguments}
        if self._validator is None:
            self._validator = schema_validator(self.parameters)
        check_with_schema(self._validator, {**self._state_inputs(arguments, state), **arguments})
        return dict(arguments)

    def _state_inputs(self, arguments: Mapping[str, Any], state: State | None) -> dict[str, Any]:
        """The parameters ``inputs_from_state`` fills: those the model left out that the state has."""
        if state is None:
            return {}
        return {
            param: state.get(key)
            for key, param in (self.inputs_from_state or {}).items()
            if param not in arguments and state.has(key)
        }

    def call(
        self, arguments: Mapping[str, Any], ctx: RunContext, extra: Mapping[str, Any] | None = None
    ) -> Any:
        """Call the function with the model's arguments plus injected values and state inputs;
        await it if async, consume it if a generator (its items joined as text, as Agno does).
        ``extra`` adds injectable values of this call only (a delegation's site)."""
        kwargs = {**self._state_inputs(arguments, ctx.state), **arguments}
        for state_key, param in (self.inputs_from_state or {}).items():
            if param not in kwargs and param_required(self.function, param):
                raise ToolArgumentsError(
                    f"tool {self.name!r} reads parameter {param!r} from state key {state_key!r} "
                    f"(inputs_from_state), but the state has no {state_key!r} yet"
                )
        values = ctx.injectable() if extra is None else {**ctx.injectable(), **extra}
        kwargs.update({param: values.get(kind) for param, kind in self.injected.items()})
        return _collected(self.function(**kwargs))

    def invoke(self, **kwargs: Any) -> Any:
        """Call the function with exactly these arguments (Haystack's ``Tool.invoke``)."""
        try:
            return _collected(self.function(**kwargs))
        except Exception as exc:
            raise ToolInvocationError(
                f"Failed to invoke Tool `{self.name}` with parameters {kwargs}. Error: {exc}"
            ) from exc


def _collected(value: Any) -> Any:
    if inspect.isgenerator(value):
        return "".join(str(item) for item in value)
    if inspect.isasyncgen(value):
        return run_sync(_join_async(value))
    return run_sync(value)


async def _join_async(items: Any) -> str:
    return "".join([str(item) async for item in items])


def _takes_self(function: Callable[..., Any]) -> bool:
    if not inspect.isfunction(function):
        return False
    return next(iter(inspect.signature(function).parameters), None) == "self"


def _from_function(
    cls: type[Tool],
    function: Callable[..., Any],
    name: str | None,
    description: str | None,
    inputs_from_state: Mapping[str, str] | None,
    outputs_to_state: Mapping[str, Mapping[str, Any]] | None,
    instructions: str | None,
    tool_hooks: list[Callable[..., Any]] | None,
    haystack: bool,
) -> Tool:
    if isinstance(function, Tool):
        return function
    if not callable(function):
        raise ToolDefinitionError(f"cannot make a tool from {function!r}: it is not callable")
    tool_name = name or getattr(function, "__name__", None)
    if not tool_name or tool_name == "<lambda>":
        raise ToolDefinitionError("a lambda needs a name: Tool.from_function(fn, name='...')")
    hidden = set((inputs_from_state or {}).values()) if isinstance(inputs_from_state, Mapping) else set()
    parameters, args_model, injected, doc_description = schema_for(
        function, tool_name, hidden, haystack=haystack
    )
    return cls(
        name=tool_name,
        description=description if description is not None else doc_description,
        parameters=parameters,
        function=function,
        inputs_from_state=inputs_from_state,  # type: ignore[arg-type]  # a Mapping: __post_init__ checks it into a dict
        outputs_to_state=outputs_to_state,  # type: ignore[arg-type]  # likewise
        args_model=args_model,
        injected=injected,
        instructions=instructions,
        tool_hooks=tool_hooks,
    )


def create_tool_from_function(
    function: Callable[..., Any],
    name: str | None = None,
    description: str | None = None,
    inputs_from_state: Mapping[str, str] | None = None,
    outputs_to_state: Mapping[str, Mapping[str, Any]] | None = None,
) -> Tool:
    """A tool from ``function`` by Haystack's rules: every parameter needs a type hint, and
    ``Optional[X]`` stays ``anyOf [X, null]`` in the schema."""
    return _from_function(
        Tool, function, name, description, inputs_from_state, outputs_to_state, None, None, True
    )


_TOOL_OPTIONS = (
    "add_instructions",
    "description",
    "external",
    "external_execution",
    "inputs_from_state",
    "instructions",
    "name",
    "needs_approval",
    "outputs_to_state",
    "requires_approval",
    "requires_confirmation",
    "requires_user_input",
    "tool_hooks",
    "user_input_fields",
)


def tool(
    function: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    inputs_from_state: Mapping[str, str] | None = None,
    outputs_to_state: Mapping[str, Mapping[str, Any]] | None = None,
    instructions: str | None = None,
    add_instructions: bool = True,
    tool_hooks: list[Callable[..., Any]] | None = None,
    requires_approval: bool | Callable[..., Any] = False,
    external: bool = False,
    **aliases: Any,
) -> Any:
    """Turn a function into a Tool: ``@tool`` or ``@tool(name=..., outputs_to_state=...)``.

    ``instructions`` go into the system prompt (unless ``add_instructions=False``);
    ``tool_hooks`` wrap this tool's calls when the agent has no hooks of its own.
    ``requires_approval`` (True, or ``fn(arguments, run_context) -> bool``) pauses the run before
    each call for a person to approve, edit or reject it; ``external=True`` pauses it for a person
    to supply the result. Agno's ``requires_confirmation`` / ``requires_user_input`` (with
    ``user_input_fields``) / ``external_execution`` and the OpenAI SDK's ``needs_approval`` are
    the same options by their names."""
    requires_approval = _approval_alias(requires_approval, aliases)
    if aliases.pop("external_execution", False):
        external = True
    if aliases:
        raise ToolDefinitionError(
            f"Invalid tool configuration arguments: {set(aliases)}. Valid arguments are: {list(_TOOL_OPTIONS)}"
        )

    def wrap(fn: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            fn,
            name=name,
            description=description,
            inputs_from_state=inputs_from_state,
            outputs_to_state=outputs_to_state,
            instructions=instructions if add_instructions else None,
            tool_hooks=tool_hooks,
            requires_approval=requires_approval,
            external=external,
        )

    return wrap(function) if function is not None else wrap


def _approval_alias(requires_approval: Any, aliases: dict[str, Any]) -> Any:
    """``requires_approval`` from the peers' names for it: the OpenAI SDK's ``needs_approval``
    (True or a function), Agno's ``requires_confirmation`` and ``requires_user_input`` (a person
    gives the arguments: ``item.approve(arguments=...)``; ``user_input_fields`` names them)."""
    needs = aliases.pop("needs_approval", None)
    confirm = aliases.pop("requires_confirmation", False)
    user_input = aliases.pop("requires_user_input", False)
    fields = aliases.pop("user_input_fields", None)
    if needs is not None:
        requires_approval = needs
    if confirm:
        requires_approval = True
    if user_input or fields:
        named = f": {', '.join(fields)}" if fields else ""
        reason = f"a person gives the arguments{named} (item.approve(arguments={{...}}))"

        def needs_input(arguments: Any, run_context: Any) -> str:
            return reason

        requires_approval = needs_input
    return requires_approval


__all__ = ["Tool", "create_tool_from_function", "tool"]
