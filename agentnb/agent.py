"""Agent: configuration plus run / observe. The loop itself lives in ``loop.py``."""

from __future__ import annotations

import contextlib
import copy
import datetime
import inspect
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import AgentnbError, AgentRunError, ConfigurationError
from .events import ContextRetrieved, Event, PromptSection, ToolCallFinished, Usage
from .history import History, TurnRecord
from .loop import Turn
from .messages import Message
from .models import resolve_model
from .models.base import Model, ModelRequest
from .prompt import RenderedPrompt, render_system_prompt, resolve_template
from .run_context import RunContext
from .state import MESSAGES_KEY, State, render_state
from .tools import Tool, check_hook, collect_tools, update_session_state_tool

if TYPE_CHECKING:
    from .formatters import ParsedOutput

Subscriber = Callable[[Event], Any]


@dataclass(frozen=True)
class Prepared:
    """What the model will receive for a run (the Observe step)."""

    system_prompt: str
    sections: tuple[PromptSection, ...]
    notes: tuple[str, ...]
    user_prompt: str
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...]
    context: tuple[ContextRetrieved, ...] = ()
    """What each passive context provider returned for this turn."""


class Observation(tuple):
    """``system_prompt, user_prompt, messages = agent.observe(msg)``, plus ``.tools``,
    ``.sections`` (the prompt's assembly) and ``.request`` (the payload that would be sent)."""

    system_prompt: str
    user_prompt: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    sections: tuple[PromptSection, ...]
    notes: tuple[str, ...]
    request: dict[str, Any]
    context: list[ContextRetrieved]

    def __new__(cls, prepared: Prepared, request: dict[str, Any]) -> Observation:
        messages = [m.to_openai() for m in prepared.messages]
        self = super().__new__(cls, (prepared.system_prompt, prepared.user_prompt, messages))
        self.system_prompt = prepared.system_prompt
        self.user_prompt = prepared.user_prompt
        self.messages = messages
        self.tools = [t.schema() for t in prepared.tools]
        self.sections = prepared.sections
        self.notes = prepared.notes
        self.request = request
        self.context = list(prepared.context)
        return self

    def __repr__(self) -> str:
        return (
            f"Observation(system_prompt={self.system_prompt!r}, user_prompt={self.user_prompt!r}, "
            f"{len(self.messages)} messages, tools={[t['function']['name'] for t in self.tools]})"
        )


@dataclass
class RunResult:
    """What a run produced. ``result["key"]`` reads the state (``result["messages"]`` too)."""

    content: str | None
    """The final answer."""
    messages: list[Message]
    """The run's messages (system, user, assistant, tool)."""
    tool_calls: list[ToolCallFinished]
    """Every tool call of the run, with results, errors and hooks."""
    events: list[Event]
    """Every event of the run (text deltas excluded)."""
    state: dict[str, Any]
    """The state after the run: the turn record's snapshot (not the live state), so read it
    and do not change it; ``agent.session_state`` is the live one."""
    usage: Usage = field(default_factory=Usage)
    turn: TurnRecord | None = field(default=None, repr=False)

    def __getitem__(self, key: str) -> Any:
        if key == MESSAGES_KEY:
            return self.messages
        if key not in self.state:
            raise KeyError(f"{key!r} is not in the state; keys: {sorted(self.state)}")
        return self.state[key]

    def __contains__(self, key: object) -> bool:
        return key == MESSAGES_KEY or key in self.state

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __str__(self) -> str:
        return self.content or ""

    @property
    def output(self) -> ParsedOutput | None:
        """The answer parsed by the agent's output formatter (None without one):
        ``result.output["field"]``; ``.ok`` / ``.error`` / ``.raw`` when it did not parse."""
        return self.turn.output if self.turn is not None else None

    def _repr_html_(self) -> str | None:
        """The turn's static record in a notebook (see agentnb.render)."""
        from .render import turn_html

        return turn_html(self.turn) if self.turn is not None else None

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        from .render import turn_text

        printer.text(turn_text(self.turn) if self.turn is not None else repr(self))


class RunStream:
    """The events of a run, as they happen. After iterating, ``.result`` holds the RunResult;
    a failed run raises ``AgentRunError`` at the end of the iteration."""

    def __init__(self, agent: Agent, turn: Turn) -> None:
        self._agent = agent
        self._turn = turn
        self.result: RunResult | None = None

    def __iter__(self) -> Iterator[Event]:
        with self._agent._running():
            yield from self._turn.events()
        self.result = self._agent._result(self._turn)
        if self._turn.error is not None:
            err = self._turn.error
            wrapped = _as_run_error(err, self.result)
            if wrapped is err:
                raise err
            raise wrapped from err


class Agent:
    """An LLM agent with state, tools, hooks and a recorded history of turns.

    Keyword names follow Agno and Haystack so code from either ports by changing imports.
    """

    def __init__(
        self,
        name: str | None = None,
        model: Model | str | None = None,
        *,
        instructions: str | list[str] | Callable[..., Any] | None = None,
        description: str | None = None,
        system_message: str | None = None,
        role: str | None = None,
        session_state: Mapping[str, Any] | None = None,
        state_schema: Mapping[str, Any] | None = None,
        add_session_state_to_context: bool = False,
        session_state_format: str = "repr",
        enable_agentic_state: bool = False,
        resolve_in_context: bool = True,
        markdown: bool = False,
        add_name_to_context: bool = False,
        add_datetime_to_context: bool = False,
        expected_output: str | None = None,
        additional_context: str | None = None,
        use_instruction_tags: bool = False,
        tools: Iterable[Any] | None = None,
        tool_hooks: Iterable[Callable[..., Any]] | None = None,
        max_tool_iterations: int = 10,
        dependencies: Mapping[str, Any] | None = None,
        add_history_to_context: bool = False,
        num_history_runs: int = 3,
        model_options: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        session: Any = None,
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
    ) -> None:
        self.name = name or "agent"
        self.model = resolve_model(model)
        self.instructions = instructions
        self.description = description
        self.system_message = system_message
        self.role = role
        if session_state is not None and not isinstance(session_state, Mapping):
            raise ConfigurationError(
                f"session_state must be a dict, got {type(session_state).__name__}: {session_state!r}"
            )
        self.state = State(schema=state_schema, data=session_state)
        self.add_session_state_to_context = bool(add_session_state_to_context)
        if session_state_format not in ("repr", "json"):
            raise ConfigurationError(
                f"session_state_format must be 'repr' (Agno's str(dict)) or 'json'; got {session_state_format!r}"
            )
        self.session_state_format = session_state_format
        self.enable_agentic_state = bool(enable_agentic_state)
        self.resolve_in_context = bool(resolve_in_context)
        self.markdown = bool(markdown)
        self.add_name_to_context = bool(add_name_to_context)
        self.add_datetime_to_context = bool(add_datetime_to_context)
        self.expected_output = expected_output
        self.additional_context = additional_context
        self.use_instruction_tags = bool(use_instruction_tags)
        self.tools: list[Tool] = collect_tools(tools)
        self.tool_hooks: list[Callable[..., Any]] = list(tool_hooks or [])
        for hook in self.tool_hooks:
            check_hook(hook)
        if not isinstance(max_tool_iterations, int) or max_tool_iterations < 0:
            raise ConfigurationError(
                f"max_tool_iterations must be a whole number >= 0, got {max_tool_iterations!r}"
            )
        self.max_tool_iterations = max_tool_iterations
        self.dependencies: dict[str, Any] = dict(dependencies or {})
        self.add_history_to_context = bool(add_history_to_context)
        self.num_history_runs = num_history_runs
        self.model_options: dict[str, Any] = dict(model_options or {})
        self.session_id = session_id or os.urandom(6).hex()
        self.history = History()
        self._last_state: dict[str, Any] | None = None
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()
        # Context providers and formatters load with the first agent, not with `import agentnb`.
        from .context import ContextProviders
        from .formatters import FormatSettings

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
        if session is not None:  # restores a saved session, then saves after every turn
            self.attach_session(session, fresh=fresh)

    # -- state ----------------------------------------------------------------------------

    @property
    def session_state(self) -> dict[str, Any]:
        """The live state dict (without messages). Changes made here show as 'user' changes."""
        return self.state.data

    @session_state.setter
    def session_state(self, value: Mapping[str, Any]) -> None:
        self.state.replace_data(copy.deepcopy(dict(value)))

    # -- events ---------------------------------------------------------------------------

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(event)`` for every event of every run; returns an unsubscribe function."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _notify(self, event: Event) -> None:
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception as exc:  # a broken viewer must never break a run
                warnings.warn(f"agentnb: event subscriber {callback!r} failed: {exc}", stacklevel=2)

    # -- observe --------------------------------------------------------------------------

    def all_tools(self) -> list[Tool]:
        """The tools the model is offered: the agent's, plus the built-in ones enabled
        (``update_session_state``; ``list_context_sources`` / ``retrieve_context`` when a
        context provider is active)."""
        tools = list(self.tools)
        if self.enable_agentic_state and not any(t.name == "update_session_state" for t in tools):
            tools.append(update_session_state_tool())
        tools.extend(self.context_providers.tools(taken=[t.name for t in tools]))
        return tools

    def render_prompt(self, ctx: RunContext | None = None, tools: list[Tool] | None = None) -> RenderedPrompt:
        """The system prompt from the current state, with its assembly."""
        ctx = ctx or self._context()
        variables = [("session_state", self.state.data), ("dependencies", ctx.dependencies)]
        tools = self.all_tools() if tools is None else tools
        shows_state = self.add_session_state_to_context and self.system_message is None
        return render_system_prompt(
            system_message=self.system_message,
            description=self.description,
            role=self.role,
            instructions=self._instructions(ctx),
            markdown=self.markdown,
            name=self.name,
            add_name_to_context=self.add_name_to_context,
            datetime_text=str(datetime.datetime.now()) if self.add_datetime_to_context else None,
            tool_instructions=[t.instructions for t in tools if t.instructions],
            expected_output=self.expected_output,
            additional_context=self.additional_context,
            add_session_state_to_context=self.add_session_state_to_context,
            session_state_text=render_state(self.state.data, self.session_state_format) if shows_state else None,
            resolve_in_context=self.resolve_in_context,
            variables=variables,
            use_instruction_tags=self.use_instruction_tags,
        )

    def _instructions(self, ctx: RunContext) -> list[str]:
        value = self.instructions
        if callable(value):
            available = {"agent": self, "run_context": ctx, "session_state": ctx.session_state}
            params = inspect.signature(value).parameters
            value = value(**{k: v for k, v in available.items() if k in params})
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        return [str(v) for v in value]

    def _prepare(
        self,
        message: str | Mapping[str, Any],
        ctx: RunContext,
        on_context: Callable[[ContextRetrieved], None] | None = None,
    ) -> Prepared:
        tools = self.all_tools()
        rendered = self.render_prompt(ctx, tools)
        variables = [("session_state", self.state.data), ("dependencies", ctx.dependencies)]
        text = message if isinstance(message, str) else None
        if text is not None and self.resolve_in_context:
            text, _ = resolve_template(text, variables)
        from .context import ContextQuery

        context: list[ContextRetrieved] = []
        if text is not None and not self.format.structured and not self.context_providers.passive:
            # The plain chat path: the user's message goes out as it is.
            user_prompt = text
            query = ContextQuery(text, inputs={"message": text}, agent=self.name)
        else:
            inputs = {"message": text} if text is not None else dict(message)

            def resolve(template: str, values: Mapping[str, Any]) -> tuple[str, set[str]]:
                out, found = resolve_template(template, [("input", values), *variables])
                return out, {p.name for p in found if p.source == "input"}

            from .context import CONTEXT_KEY, render_context
            from .formatters import ParagraphFormatter, build_payload

            payload = build_payload(self.format, inputs, text, resolve)
            query = ContextQuery(payload.query_text, inputs=payload.inputs, agent=self.name)
            context = self.context_providers.retrieve_passive(query, ctx.run_id)
            fields = dict(payload.fields)
            context_text = render_context([(c.label, c.blocks) for c in context])
            if context_text:
                fields[CONTEXT_KEY] = context_text
            user_prompt = (self.format.input_formatter or ParagraphFormatter()).dump(fields)
        self.context_providers.bind(ctx.run_id, query, on_context)
        messages: list[Message] = []
        if rendered.text:
            messages.append(Message.system(rendered.text))
        if self.add_history_to_context:
            for turn in self.history[-self.num_history_runs - 1 :]:
                if turn.run_id != ctx.run_id:
                    messages.extend(m for m in turn.messages if m.role != "system")
        messages.append(Message.user(user_prompt))
        return Prepared(
            system_prompt=rendered.text,
            sections=rendered.sections,
            notes=rendered.notes,
            user_prompt=user_prompt,
            messages=tuple(messages),
            tools=tuple(tools),
            context=tuple(context),
        )

    def _context(self, dependencies: Mapping[str, Any] | None = None) -> RunContext:
        return RunContext(
            run_id="observe",
            session_state=self.state.data,
            state=self.state,
            agent=self,
            dependencies={**self.dependencies, **(dependencies or {})},
            session_id=self.session_id,
            turn=len(self.history),
        )

    def observe(
        self, message: str | Mapping[str, Any], *, dependencies: Mapping[str, Any] | None = None
    ) -> Observation:
        """What the model would receive for ``message`` — without calling it. ``message`` may
        be a dict of input fields (MASFactory) for a ``prompt_template``. Passive context
        providers are queried; ``.context`` holds what each returned."""
        _check_message(message)
        prepared = self._prepare(message, self._context(dependencies))
        request = ModelRequest(
            messages=[m.to_openai() for m in prepared.messages],
            tools=[t.schema() for t in prepared.tools],
            options=dict(self.model_options),
        )
        return Observation(prepared, self.model.payload(request))

    # -- run ------------------------------------------------------------------------------

    def iter_run(
        self, message: str | Mapping[str, Any], *, dependencies: Mapping[str, Any] | None = None, **state_values: Any
    ) -> RunStream:
        """Run a turn, yielding its events as they happen (see RunStream)."""
        _check_message(message)
        return RunStream(self, Turn(self, message, state_values, dict(dependencies or {})))

    def run(
        self,
        message: str | Mapping[str, Any],
        *,
        on_event: Subscriber | None = None,
        dependencies: Mapping[str, Any] | None = None,
        **state_values: Any,
    ) -> RunResult:
        """Run one turn: extra keyword arguments go into the state first (Haystack style).

        Works in a plain script and inside a running event loop (a Jupyter kernel). A run
        that ends without an answer raises ``AgentRunError``; its ``.result`` and
        ``agent.history[-1]`` keep everything it did.
        """
        stream = self.iter_run(message, dependencies=dependencies, **state_values)
        for event in stream:
            if on_event is not None:
                on_event(event)
        assert stream.result is not None
        return stream.result

    async def arun(
        self,
        message: str | Mapping[str, Any],
        *,
        on_event: Subscriber | None = None,
        dependencies: Mapping[str, Any] | None = None,
        **state_values: Any,
    ) -> RunResult:
        """``run`` for async code; the turn runs in a worker thread so the event loop stays free."""
        import asyncio

        return await asyncio.to_thread(
            self.run, message, on_event=on_event, dependencies=dependencies, **state_values
        )

    @contextlib.contextmanager
    def _running(self) -> Iterator[None]:
        if not self._lock.acquire(blocking=False):
            raise ConfigurationError(f"agent {self.name!r} is already running a turn; wait for it to finish")
        try:
            yield
        finally:
            self._lock.release()

    def _result(self, turn: Turn) -> RunResult:
        record = turn.record
        return RunResult(
            content=record.content,
            messages=list(record.messages),
            tool_calls=record.tool_calls,
            events=list(record.events),
            state=record.state_after,
            usage=record.usage,
            turn=record,
        )

    # -- display --------------------------------------------------------------------------

    def __repr__(self) -> str:
        tools = ", ".join(t.name for t in self.all_tools()) or "-"
        return (
            f"Agent({self.name!r}, model={self.model.label}, tools=[{tools}], "
            f"turns={len(self.history)}, state keys={list(self.state.data)})"
        )

    # -- sessions -------------------------------------------------------------------------

    def register_state(self, attr_name: str, custom_to_json: Any = None, custom_from_json: Any = None) -> None:
        """Also save ``self.<attr_name>`` in sessions (AgentScope's ``register_state``)."""
        from .sessions.modules import register_state

        register_state(self, attr_name, custom_to_json, custom_from_json)

    def state_dict(self) -> dict[str, Any]:
        """State, conversation and every finished turn (with each model request and response)
        as plain data: what a session saves under this agent's module name."""
        from .sessions.modules import agent_state_dict

        return copy.deepcopy(agent_state_dict(self))

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> None:
        """Restore what ``state_dict()`` returned into this agent (built by the same code)."""
        from .sessions.modules import load_agent_state_dict

        load_agent_state_dict(self, dict(state_dict), strict)

    def attach_session(
        self, session: Any, session_id: str | None = None, *, fresh: bool = False, module: str = "agent"
    ) -> bool:
        """Save to ``session`` after every turn, restoring what it holds first (unless
        ``fresh=True``). ``session`` is a SessionBase or a folder for a JSONSession;
        ``session_id`` defaults to the agent's name. Returns whether a session was restored."""
        from .sessions.autosave import attach

        return attach(self, session, session_id, fresh=fresh, module=module)


def _check_message(message: Any) -> None:
    if isinstance(message, str):
        return
    if isinstance(message, Mapping) and all(isinstance(k, str) for k in message):
        return
    raise ConfigurationError(
        f"the message must be a str (or a dict of input fields for a prompt_template), "
        f"got {type(message).__name__}"
    )


def _as_run_error(err: BaseException, result: RunResult) -> BaseException:
    """agentnb's own errors are raised as they are (with ``.result`` attached); anything else
    is wrapped in AgentRunError."""
    if isinstance(err, AgentnbError):
        err.result = result  # type: ignore[attr-defined]
        return err
    return AgentRunError(f"{type(err).__name__}: {err}", result)
