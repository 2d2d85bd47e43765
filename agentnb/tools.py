"""Tools from Python functions, Toolkits, argument validation and the tool-hook chain.

A tool's JSON schema comes from the function's signature and docstring through pydantic.
Parameters named ``run_context``, ``agent``, ``session_state``, ``dependencies`` and ``self``,
and those filled from state (``inputs_from_state``), are injected at call time and are not shown
to the model. Arguments from the model are validated before the call.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import sys
import time
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any


from .errors import ToolArgumentsError, ToolDefinitionError
from .events import HookStep
from .run_context import RunContext, run_sync

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

INJECTED_PARAMS = ("run_context", "agent", "session_state", "dependencies")
"""Parameter names filled by agentnb at call time and hidden from the model."""

HOOK_PARAM_NAMES = {
    "function_name": "name",
    "name": "name",
    "function_call": "next",
    "function": "next",
    "func": "next",
    "arguments": "arguments",
    "args": "arguments",
    "run_context": "run_context",
    "agent": "agent",
    "session_state": "session_state",
    "dependencies": "dependencies",
}
"""What a tool hook may receive, by the names in its signature (Agno's ``_build_hook_args``)."""

_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object"}


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

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ToolDefinitionError(
                f"tool name {self.name!r} is not valid: use letters, digits and underscores"
            )
        if not callable(self.function):
            raise ToolDefinitionError(f"tool {self.name!r}: function {self.function!r} is not callable")
        self.inputs_from_state = _check_inputs_from_state(self.name, self.inputs_from_state)
        self.outputs_to_state = _check_outputs_to_state(self.name, self.outputs_to_state)
        if not self.injected:
            self.injected = tuple(p for p in INJECTED_PARAMS if p in _param_names(self.function))

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
        parameters, args_model, injected, doc_description = _schema_for(function, tool_name, hidden)
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
                raise ToolArgumentsError(_validation_message(exc)) from None
            return {k: getattr(validated, k) for k in validated.model_fields_set}
        _validate_with_jsonschema(self.parameters, arguments)
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
            elif _param_required(self.function, param):
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
        from .sessions.modules import register_state

        register_state(self, attr_name, custom_to_json, custom_from_json)

    def state_dict(self) -> dict[str, Any]:
        """The toolkit's registered attributes (its tools come from code, not from the file)."""
        from .sessions.modules import registered_state

        return {"name": self.name, "tools": [t.name for t in self.tools], "registered": registered_state(self)}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        from .sessions.modules import load_registered

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


# --- the hook chain ----------------------------------------------------------------------


@dataclasses.dataclass
class ChainOutcome:
    """What running a tool through its hooks produced."""

    result: Any = None
    error: BaseException | None = None
    error_source: str | None = None
    """'tool' or the hook's name, for the innermost link that raised."""
    steps: list[HookStep] = dataclasses.field(default_factory=list)
    answered_by: str | None = None


def hook_name(hook: Callable[..., Any]) -> str:
    return getattr(hook, "__name__", None) or type(hook).__name__


def check_hook(hook: Any) -> None:
    """Reject a hook that cannot be called or asks for a parameter agentnb cannot give."""
    if not callable(hook):
        raise ToolDefinitionError(f"tool_hooks must be functions; got {hook!r}")
    params = inspect.signature(hook).parameters
    unknown = [
        p.name
        for p in params.values()
        if p.name not in HOOK_PARAM_NAMES
        and p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    ]
    if unknown:
        raise ToolDefinitionError(
            f"tool hook {hook_name(hook)!r} asks for {unknown}; a hook can receive: "
            + ", ".join(sorted(HOOK_PARAM_NAMES))
        )


def run_chain(
    tool: Tool,
    arguments: dict[str, Any],
    hooks: list[Callable[..., Any]],
    ctx: RunContext,
    on_link: Callable[[str, str], Any] | None = None,
) -> ChainOutcome:
    """Call ``tool`` through ``hooks`` (first = outermost), recording what each hook did.

    ``on_link(kind, name)`` is called with ('enter', name) before and ('exit', name) after each
    link's own code runs, so the caller can attribute state changes to the link that made them.
    """
    outcome = ChainOutcome()
    steps: list[HookStep | None] = [None] * len(hooks)
    raised_at: list[str] = []

    def link(index: int, args: dict[str, Any]) -> Any:
        if index == len(hooks):
            if on_link:
                on_link("enter", "tool")
            try:
                value = tool.invoke(args, ctx)
            except BaseException:
                raised_at.append("tool")
                raise
            finally:
                if on_link:
                    on_link("exit", "tool")
            outcome.answered_by = outcome.answered_by or "tool"
            return value
        hook = hooks[index]
        name = hook_name(hook)
        called = False

        def call_next(**kwargs: Any) -> Any:
            nonlocal called
            called = True
            if on_link:
                on_link("exit", name)
            try:
                return link(index + 1, kwargs)
            finally:
                if on_link:
                    on_link("enter", name)

        received = dict(args)
        start = time.perf_counter()
        if on_link:
            on_link("enter", name)
        try:
            value = run_sync(hook(**_hook_kwargs(hook, tool, args, call_next, ctx)))
        except BaseException as exc:
            if not raised_at:
                raised_at.append(name)
            steps[index] = HookStep(
                name=name,
                arguments=received,
                outcome="raised",
                error=f"{type(exc).__name__}: {exc}",
                duration_ms=(time.perf_counter() - start) * 1000,
            )
            raise
        finally:
            if on_link:
                on_link("exit", name)
        if not called and outcome.answered_by is None:
            outcome.answered_by = name
        steps[index] = HookStep(
            name=name,
            arguments=received,
            outcome="passed" if called else "answered",
            result=_short(result_text(value)),
            duration_ms=(time.perf_counter() - start) * 1000,
        )
        return value

    try:
        outcome.result = link(0, dict(arguments))
    except Exception as exc:  # a tool or hook failing is reported to the model, not raised
        outcome.error = exc
        outcome.error_source = raised_at[0] if raised_at else "tool"
    outcome.steps = [s for s in steps if s is not None]
    return outcome


def _hook_kwargs(
    hook: Callable[..., Any],
    tool: Tool,
    args: dict[str, Any],
    call_next: Callable[..., Any],
    ctx: RunContext,
) -> dict[str, Any]:
    values = {
        "name": tool.name,
        "next": call_next,
        "arguments": args,
        "run_context": ctx,
        "agent": ctx.agent,
        "session_state": ctx.session_state,
        "dependencies": ctx.dependencies,
    }
    return {p: values[HOOK_PARAM_NAMES[p]] for p in inspect.signature(hook).parameters if p in HOOK_PARAM_NAMES}


def _short(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- schemas -------------------------------------------------------------------------------


def _param_names(function: Callable[..., Any]) -> set[str]:
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return set()


def _param_required(function: Callable[..., Any], param: str) -> bool:
    try:
        p = inspect.signature(function).parameters.get(param)
    except (TypeError, ValueError):
        return True
    return p is not None and p.default is inspect.Parameter.empty


def _schema_for(
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


def _validation_message(exc: ValidationError) -> str:
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


def _validate_with_jsonschema(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        parts = []
        for err in errors:
            loc = ".".join(str(x) for x in err.path) or "(arguments)"
            parts.append(f"{loc}: {err.message}")
        raise ToolArgumentsError("; ".join(parts))


def _check_inputs_from_state(tool_name: str, mapping: Any) -> dict[str, str]:
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


def _check_outputs_to_state(tool_name: str, mapping: Any) -> dict[str, dict[str, Any]]:
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


# --- built-in tools ------------------------------------------------------------------------

UPDATE_SESSION_STATE_DESCRIPTION = (
    "Update the shared session state. Provide any updates as a dictionary of key-value pairs.\n"
    "Example:\n"
    '    "session_state_updates": {"shopping_list": ["milk", "eggs", "bread"]}'
)


@functools.cache
def update_session_state_tool() -> Tool:
    """Agno's built-in ``update_session_state`` tool (``enable_agentic_state=True``)."""

    def update_session_state(run_context: RunContext, session_state_updates: dict) -> str:
        from .state import replace_values

        for key, value in session_state_updates.items():
            run_context.state.set(key, value, handler_override=replace_values)
        return f"Updated session state: {run_context.session_state}"

    return Tool(
        name="update_session_state",
        description=UPDATE_SESSION_STATE_DESCRIPTION,
        parameters={
            "type": "object",
            "properties": {
                "session_state_updates": {
                    "type": "object",
                    "description": "The updates to apply to the shared session state.",
                }
            },
            "required": ["session_state_updates"],
        },
        function=update_session_state,
    )
