"""Agent: configuration, plus run / observe / fork / snapshot / restore / reset.

The agent holds what it was given and delegates: the Observe step to ``observe``, a run to
``loop.Turn`` (with ``tracking`` and ``executor``), saving to ``agent_state`` through the
state-module protocol. Keyword names follow Agno and Haystack so code from either ports by
changing imports.
"""

from __future__ import annotations

import copy
import os
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from . import slots
from .context import ContextProviders
from .definition import AgentDefinition
from .delegation.depth import DEFAULT_MAX_DELEGATION_DEPTH
from .delegation.tools import Handoff, agent_tool, as_handoff, check_handoffs, handoff_tool
from .errors import ConfigurationError
from .events import Event
from .formatters import FormatSettings
from .history.history import History
from .messages import Part
from .messages.wire import parts_by_hash
from .model_spec import resolve_model
from .models.base import Model, ModelRequest
from .run.continuing import Continuing
from .run.gate import check_approval, check_breakpoints
from .run.observe import Observation, prepare, render_prompt
from .run.output import asked
from .run.prompt import PromptOption, PromptOptions, RenderedPrompt
from .run.runs import Runs, check_message, message_parts
from .run.turns import TurnMaking
from .run.typed_output import TypedOutput
from .sessions.persistence import Persistence
from .sessions.time_travel import AgentSnapshot, TimeTravel
from .state.edits import StateEdit
from .state.state import State, replace_values
from .tools import AGENTIC_TOOL, Tool, builtin, check_hook, collect_tools, update_session_state_tool
from .tools.run_context import RunContext

Subscriber = Callable[[Event], Any]


class Agent(Runs, TurnMaking, Continuing, TypedOutput, TimeTravel, Persistence):
    """An LLM agent with state, tools, hooks and a recorded history of turns."""

    __agentnb_inject__ = "agent"
    """A tool parameter annotated ``Agent`` receives the agent (tools.schema.INJECT_MARKER)."""

    system_message = PromptOption()
    description = PromptOption()
    role = PromptOption()
    instructions = PromptOption()
    markdown = PromptOption()
    add_name_to_context = PromptOption()
    add_datetime_to_context = PromptOption()
    datetime_format = PromptOption()
    expected_output = PromptOption()
    additional_context = PromptOption()
    use_instruction_tags = PromptOption()
    add_session_state_to_context = PromptOption()
    session_state_format = PromptOption()
    resolve_in_context = PromptOption()
    hide_state_keys = PromptOption()

    def __init__(
        self,
        name: str | None = None,
        model: Model | str | None = None,
        *,
        chat_generator: Model | None = None,
        instructions: str | list[str] | Callable[..., Any] | None = None,
        description: str | None = None,
        system_message: str | Callable[..., Any] | None = None,
        role: str | None = None,
        session_state: Mapping[str, Any] | None = None,
        state_schema: Mapping[str, Any] | None = None,
        add_session_state_to_context: bool = False,
        session_state_format: str = "repr",
        enable_agentic_state: bool = False,
        overwrite_db_session_state: bool = False,
        resolve_in_context: bool = True,
        hide_state_keys: Iterable[str] | str | None = None,
        markdown: bool = False,
        add_name_to_context: bool = False,
        add_datetime_to_context: bool = False,
        datetime_format: str | None = None,
        expected_output: str | None = None,
        additional_context: str | None = None,
        use_instruction_tags: bool = False,
        tools: Iterable[Any] | None = None,
        tool_hooks: Iterable[Callable[..., Any]] | None = None,
        max_tool_iterations: int = 10,
        max_delegation_depth: int = DEFAULT_MAX_DELEGATION_DEPTH,
        dependencies: Mapping[str, Any] | None = None,
        add_dependencies_to_context: bool = False,
        add_history_to_context: bool = False,
        num_history_runs: int | None = 3,
        model_options: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        session: Any = None,
        db: Any = None,
        fresh: bool = False,
        context_providers: Iterable[Any] | None = None,
        memories: Iterable[Any] | None = None,
        retrievers: Iterable[Any] | None = None,
        prompt_template: str | list[str] | None = None,
        output_fields: Mapping[str, str] | Iterable[str] | None = None,
        formatter: Any = None,
        output_formatter: Any = None,
        formatters: Any = None,
        hide_unused_fields: bool = False,
        handoffs: Iterable[Any] | None = None,
        tracer_provider: Any = None,
        output_type: Any = None,
        output_mode: str = "auto",
        output_retries: int = 1,
        output_tool_name: str = "final_result",
        output_validators: Iterable[Callable[..., Any]] | None = None,
        output_to_state: str | None = None,
        output_schema: Any = None,
        structured_model: Any = None,
        approval: Callable[..., Any] | None = None,
        break_before: Iterable[str] | str | None = None,
        ask_user: bool = False,
    ) -> None:
        # What the agent was made from, so that it can be built again (``definition``).
        self._made = AgentDefinition.made(type(self), locals())
        self.name = name or "agent"
        if chat_generator is not None and model is not None:
            raise ConfigurationError("give model= or chat_generator= (Haystack's name for it), not both")
        self.model = resolve_model(model if chat_generator is None else chat_generator)
        self.prompt = PromptOptions(
            **{option: self._made.options[option] for option in PromptOptions.names()}
        )
        """How the system prompt is assembled (each option is also an attribute of the agent)."""
        self._set_state(session_state, state_schema, enable_agentic_state, overwrite_db_session_state)
        self.tools = tools or []
        self.approval = check_approval(approval)
        """``fn(tool_name, arguments, run_context)``: truthy (a str: the reason) pauses before the call."""
        self.breakpoints = check_breakpoints(break_before)
        """Where each run stops to be stepped through (``break_before``): model, tool, tool:NAME."""
        self.ask_user = bool(ask_user)
        """Offer the ``ask_user(question)`` tool: its call pauses the run for a person's answer."""
        self._set_run_options(
            tool_hooks,
            max_tool_iterations,
            max_delegation_depth,
            dependencies,
            add_dependencies_to_context,
            add_history_to_context,
            num_history_runs,
            model_options,
        )
        self.session_id = session_id or os.urandom(6).hex()
        self.history = History()
        self.recording: Any = None
        """The notebook recording this agent replays from and writes to (``attach_recording``)."""
        self._autosave: Any = None
        """Where this agent is saved after every turn (``attach_session``), alone or with its tree."""
        self._subscribers: tuple[Subscriber, ...] = ()
        """Called for every event of this agent's runs (a tuple, replaced on change: an event
        goes to the subscribers there were when it was emitted)."""
        self._child_subscribers: tuple[Subscriber, ...] = ()
        """Called for every event of the runs below this agent's."""
        self.handoffs: list[Handoff] = [as_handoff(h) for h in (handoffs or ())]
        check_handoffs(self.name, self.handoffs)
        """The agents this one can hand the conversation to (``transfer_to_<name>`` tools)."""
        self._handoff_tools: dict[int, tuple[Handoff, Tool]] = {}
        self.in_charge: Agent | None = None
        """The agent a handoff gave the conversation to: it answers this agent's next turns."""
        self._lock = threading.Lock()
        self._edits: list[StateEdit] = []
        self._edit_listeners: list[Callable[[StateEdit, bool], Any]] = []
        self._parent: weakref.ref[Agent] | None = None
        self.tracer_provider = tracer_provider
        self.forked_at: int | None = None
        """For a fork: how many of its turns it took from its parent (see ``fork``)."""
        # MASFactory's spellings (memories=, retrievers=) are the same kind of object.
        self.context_providers = ContextProviders(
            [*(context_providers or ()), *(memories or ()), *(retrievers or ())], agent=self
        )
        self.format = FormatSettings.build(
            prompt_template=prompt_template,
            formatter=formatter,
            output_formatter=output_formatter,
            formatters=formatters,
            output_fields=output_fields,
            hide_unused_fields=hide_unused_fields,
        )
        self._set_output(
            output_type,
            output_schema,
            structured_model,
            output_mode,
            output_retries,
            output_tool_name,
            output_validators,
            output_to_state,
        )
        self._open_session(session, db, fresh)

    def _set_state(
        self,
        session_state: Mapping[str, Any] | None,
        state_schema: Mapping[str, Any] | None,
        enable_agentic_state: bool,
        overwrite_db_session_state: bool,
    ) -> None:
        if session_state is not None and not isinstance(session_state, Mapping):
            raise ConfigurationError(
                f"session_state must be a dict, got {type(session_state).__name__}: {session_state!r}"
            )
        self.state = State(schema=state_schema, data=session_state)
        self.state_schema = dict(state_schema) if state_schema is not None else None
        """The state schema as given (``agent.state.schema`` has the defaults filled in)."""
        self._initial_state = copy.deepcopy(self.state.data)
        self.enable_agentic_state = bool(enable_agentic_state)
        self.overwrite_db_session_state = bool(overwrite_db_session_state)
        """A run's ``session_state=`` replaces the whole state instead of merging into it (Agno)."""

    def _set_run_options(
        self,
        tool_hooks: Iterable[Callable[..., Any]] | None,
        max_tool_iterations: int,
        max_delegation_depth: int,
        dependencies: Mapping[str, Any] | None,
        add_dependencies_to_context: bool,
        add_history_to_context: bool,
        num_history_runs: int | None,
        model_options: Mapping[str, Any] | None,
    ) -> None:
        self.tool_hooks: list[Callable[..., Any]] = list(tool_hooks or [])
        for hook in self.tool_hooks:
            check_hook(hook)
        self.max_tool_iterations = _whole_number("max_tool_iterations", max_tool_iterations)
        self.max_delegation_depth = _whole_number("max_delegation_depth", max_delegation_depth)
        """How many delegations deep the runs below this agent's may go (the smallest on a chain wins)."""
        self.dependencies: dict[str, Any] = dict(dependencies or {})
        """Values for ``{name}`` placeholders and tools (a callable is called at each run's start)."""
        self.add_dependencies_to_context = bool(add_dependencies_to_context)
        """Append the dependencies as JSON to the user message (Agno's ``<additional context>``)."""
        self.add_history_to_context = bool(add_history_to_context)
        self.num_history_runs = (
            None
            if num_history_runs is None
            else _whole_number("num_history_runs", num_history_runs, " or None (all)")
        )
        self.model_options: dict[str, Any] = dict(model_options or {})

    def _open_session(self, session: Any, db: Any, fresh: bool) -> None:
        if session is not None and db is not None:
            raise ConfigurationError("give session= or db= (Agno's name for it), not both")
        if session is not None:  # restores a saved session, then saves after every turn
            self.attach_session(session, fresh=fresh)
        elif db is not None:  # Agno: a session of its own per agent, unless session_id= names one
            self.attach_session(db, self.session_id, fresh=fresh)

    # -- state ----------------------------------------------------------------------------

    @property
    def session_state(self) -> dict[str, Any]:
        """The live state dict (without messages). Changes made here show as 'user' changes."""
        return self.state.data

    @session_state.setter
    def session_state(self, value: Mapping[str, Any]) -> None:
        self.state.replace_data(copy.deepcopy(dict(value)))

    def get_session_state(self) -> dict[str, Any]:
        """A copy of the state now (Agno's ``get_session_state``)."""
        return copy.deepcopy(self.state.data)

    def update_session_state(self, session_state_updates: Mapping[str, Any]) -> dict[str, Any]:
        """Set these keys (each replaced whole, as Agno does) and return a copy of the state."""
        if not isinstance(session_state_updates, Mapping):
            raise ConfigurationError(
                f"session_state_updates must be a dict, got {type(session_state_updates).__name__}"
            )
        with self._running():
            for key, value in session_state_updates.items():
                self.state.set(key, copy.deepcopy(value), handler_override=replace_values)
        return self.get_session_state()

    # -- events ---------------------------------------------------------------------------

    def subscribe(
        self, callback: Subscriber, *, children: bool | Literal["only"] = False
    ) -> Callable[[], None]:
        """Call ``callback(event)`` for every event of every run; returns an unsubscribe function.
        ``children=True``: also every event of the runs its delegations start, at any depth
        (each carries its ``run_id``; a child's RunStarted names its parent); ``"only"``: those
        and not this agent's own."""
        if children not in (False, True, "only"):
            raise ConfigurationError(f"subscribe(children=...) takes True, False or 'only'; got {children!r}")
        if children is not False:
            self._child_subscribers = (*self._child_subscribers, callback)
        if children != "only":
            self._subscribers = (*self._subscribers, callback)

        def unsubscribe() -> None:
            self._subscribers = _without(self._subscribers, callback)
            self._child_subscribers = _without(self._child_subscribers, callback)

        return unsubscribe

    @property
    def definition(self) -> AgentDefinition:
        """What this agent is made from, as data (picklable): ``definition.build(name)`` makes
        another like it; ``AgentDefinition.of(agent, configured=True)`` also keeps the options
        set on it since it was made."""
        return AgentDefinition.of(self)

    @property
    def tracer_provider(self) -> Any:
        """The OpenTelemetry tracer provider this agent's turns are traced to (``agentnb.tracing``),
        if any; kept as configuration only."""
        return self._tracer_provider

    @tracer_provider.setter
    def tracer_provider(self, provider: Any) -> None:
        if provider is not None and not callable(getattr(provider, "get_tracer", None)):
            raise ConfigurationError(
                "tracer_provider must be an OpenTelemetry TracerProvider (with get_tracer), "
                f"got {type(provider).__name__}"
            )
        self._tracer_provider = provider
        if provider is not None:
            switch = slots.tracing_switch.get()
            if switch is not None:
                switch()

    def _notify_children(self, event: Event) -> None:
        """An event of a run below one of this agent's (for ``children=True`` subscribers)."""
        for callback in self._child_subscribers:
            try:
                callback(event)
            except Exception as exc:  # a broken viewer must never break a run
                warnings.warn(f"agentnb: event subscriber {callback!r} failed: {exc}", stacklevel=2)

    def _notify(self, event: Event) -> None:
        for callback in self._subscribers:
            try:
                callback(event)
            except Exception as exc:  # a broken viewer must never break a run
                warnings.warn(f"agentnb: event subscriber {callback!r} failed: {exc}", stacklevel=2)
        for observer in slots.agent_observers.items:  # (the tuple itself: no call per event)
            try:
                observer(self, event)
            except Exception as exc:
                warnings.warn(f"agentnb: event observer {observer!r} failed: {exc}", stacklevel=2)

    # -- observe --------------------------------------------------------------------------

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools the model is offered (``all_tools()``); set it to change the agent's own."""
        return tuple(self.all_tools())

    @tools.setter
    def tools(self, tools: Iterable[Any]) -> None:
        self._tools: list[Tool] = collect_tools(tools)

    def add_tool(self, tool: Any) -> None:
        """Offer one more tool (a function, Tool or Toolkit), as Agno's ``add_tool``."""
        self.tools = [*self._tools, tool]

    def all_tools(self) -> list[Tool]:
        """The tools the model is offered: the agent's, plus the built-in ones enabled
        (``update_session_state``; ``ask_user``; ``list_context_sources`` / ``retrieve_context``
        when a context provider is active)."""
        tools = list(self._tools)
        if self.enable_agentic_state and not any(t.name == AGENTIC_TOOL for t in tools):
            tools.append(update_session_state_tool())
        if self.ask_user and not any(t.name == builtin.ASK_USER_TOOL for t in tools):
            tools.append(builtin.ask_user_tool())
        tools.extend(self.context_providers.tools(taken=[t.name for t in tools]))
        for spec in self.handoffs:  # built once per handoff: a tool's schema is compiled when it is made
            made = self._handoff_tools.get(id(spec))
            if made is None or made[0] is not spec:
                made = self._handoff_tools[id(spec)] = (spec, handoff_tool(self, spec))
            tools.append(made[1])
        return tools

    def leading_sections(self, ctx: RunContext) -> list[tuple[str, str]]:
        """Sections that open the system prompt before the agent's own (a team's members)."""
        return []

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        state: str = "none",
        inputs_from_state: Mapping[str, str] | None = None,
        outputs_to_state: Mapping[str, Mapping[str, Any]] | None = None,
        memory: str = "per-call",
        requires_approval: bool | Callable[..., Any] = False,
    ) -> Tool:
        """This agent as a tool of another: the caller keeps control and gets this agent's
        answer as the tool's result; the run is a child of the caller's. ``state``: ``"none"``
        (only ``inputs_from_state`` {parent key: my key} go down and ``outputs_to_state``
        {parent key: {"source": my key or "answer", "handler": fn?}} come up), ``"copy"`` (a deep
        copy goes down, the paths I changed come up) or ``"live"`` (the caller's state itself).
        ``memory``: ``"per-call"`` (a fresh conversation each call) or ``"member"`` (my earlier
        runs in context). ``requires_approval``: a person approves each call first (as a tool's;
        ``needs_approval`` in the OpenAI SDK); a call of one of my own tools that needs one
        pauses the caller's run too."""
        return agent_tool(
            self,
            name,
            description,
            state=state,
            inputs_from_state=inputs_from_state,
            outputs_to_state=outputs_to_state,
            memory=memory,
            requires_approval=requires_approval,
        )

    def agent_in_charge(self) -> Agent:
        """The agent that answers this one's next turn: itself, or where handoffs led."""
        agent: Agent = self
        seen = {id(agent)}
        while agent.in_charge is not None and id(agent.in_charge) not in seen:
            agent = agent.in_charge
            seen.add(id(agent))
        return agent

    def render_prompt(self, ctx: RunContext | None = None, tools: list[Tool] | None = None) -> RenderedPrompt:
        """The system prompt from the current state, with its assembly."""
        ctx = ctx or RunContext.for_agent(self, "observe")
        return render_prompt(self, ctx, self.all_tools() if tools is None else tools)

    def observe(
        self,
        message: str | Mapping[str, Any] | Sequence[Any],
        *,
        dependencies: Mapping[str, Any] | None = None,
    ) -> Observation:
        """What the model would receive for ``message`` — without calling it. ``message`` may
        be a dict of input fields (MASFactory) for a ``prompt_template``, or a list of text,
        images and files as ``run`` takes (the request names each image and file by its hash).
        Passive context providers are queried; ``.context`` holds what each returned."""
        parts: tuple[Part, ...] = ()
        if isinstance(message, (list, tuple)):
            message, parts = message_parts(message)
        message = check_message(message)
        how = asked(self._output_spec(), self.model)
        ctx = RunContext.for_agent(self, "observe", dependencies)
        prepared = prepare(self, message, ctx, trailing=how.trailing, parts=parts)
        request = ModelRequest(
            messages=[m.to_openai() for m in prepared.messages],
            tools=[t.schema() for t in (*prepared.tools, *how.tools)],
            options={**self.model_options, **how.options},
            parts=parts_by_hash(prepared.messages),
        )
        return Observation(prepared, self.model.payload(request))

    # -- run (run / iter_run / arun / print_response come from runs.Runs) -------------------

    def reset(self) -> None:
        """Back to the state the agent was defined with: no conversation, no turns, nobody else
        in charge."""
        super().reset()
        self.in_charge = None

    # -- display --------------------------------------------------------------------------

    def __repr__(self) -> str:
        tools = ", ".join(t.name for t in self.all_tools())
        return (
            f"Agent({self.name!r}, model={self.model.label}, tools=[{tools}], "
            f"turns={len(self.history)}, state keys={list(self.state.data)})"
        )


def _whole_number(option: str, value: Any, alternative: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"{option} must be a whole number >= 0{alternative}, got {value!r}")
    return value


def _without(subscribers: tuple[Subscriber, ...], callback: Subscriber) -> tuple[Subscriber, ...]:
    """``subscribers`` without its first ``callback`` (subscribed twice, it is called twice until
    unsubscribed twice)."""
    for i, listed in enumerate(subscribers):
        if listed is callback:
            return subscribers[:i] + subscribers[i + 1 :]
    return subscribers


__all__ = ["Agent", "AgentSnapshot"]
