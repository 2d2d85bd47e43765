"""Observe: what the model will receive for a message — system prompt, user prompt, messages,
tools — built from an agent's configuration and its state at this moment.

``prepare`` is the first step of every run and all of ``agent.observe()``: the same code, so a
preview is exactly what a run would send. It reads the agent through ``AgentSetup`` (the
attributes it needs), never through the Agent class.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..context import CONTEXT_KEY, ContextProviders, ContextQuery, render_context
from ..events import ContextRetrieved, PromptSection, PromptTokens
from ..formatters import FormatSettings, ParagraphFormatter, build_payload
from ..history.records import TurnRecord
from ..messages import ImagePart, Message, Part, TextPart
from ..models.tokens import count_prompt, count_sections, counter_for, image_tokens
from ..state.state import State, render_state
from ..tools import Tool
from ..tools.run_context import RunContext, call_with
from ..util.fastinit import evolve, fast_init
from .prompt import PromptOptions, RenderedPrompt, TemplateMap, render_system_prompt, resolve_template


class AgentSetup(Protocol):
    """What the Observe step reads from an agent."""

    name: str
    prompt: PromptOptions
    state: State
    history: Sequence[TurnRecord]
    add_history_to_context: bool
    num_history_runs: int | None
    add_dependencies_to_context: bool
    format: FormatSettings
    context_providers: ContextProviders
    model: Any

    def all_tools(self) -> list[Tool]: ...

    def leading_sections(self, ctx: RunContext) -> list[tuple[str, str]]: ...


@fast_init(read_often=True)
@dataclass(frozen=True)
class Prepared:
    """What the model will receive for a run (the Observe step)."""

    system_prompt: str
    """The rendered system prompt."""
    sections: tuple[PromptSection, ...]
    """Its assembly, in order."""
    notes: tuple[str, ...]
    """Options that were set but had no effect, and why."""
    user_prompt: str
    """The user message as sent."""
    messages: tuple[Message, ...]
    """System prompt, earlier turns (when in context) and the user message."""
    tools: tuple[Tool, ...]
    """The tools offered."""
    context: tuple[ContextRetrieved, ...] = ()
    """What each passive context provider returned for this turn."""
    history: int = 0
    """How many of ``messages`` (after the system prompt) are earlier turns sent as context."""
    hidden_keys: tuple[str, ...] = ()
    """State keys kept out of the prompt (``hide_state_keys``)."""
    unused_keys: tuple[str, ...] = ()
    """State keys no placeholder (system prompt or user message) and no block used."""
    tokens: PromptTokens | None = None
    """What the prompt costs in tokens, by section."""
    user_sections: tuple[PromptSection, ...] = ()
    """The user message's parts and the options that produced them (a delegated run's task)."""
    earlier_sections: tuple[PromptSection, ...] = ()
    """Messages sent with the user message that it did not write, labelled by what put them
    there (a handoff's history: the conversation before it and the run so far after it)."""


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
    hidden_keys: tuple[str, ...]
    unused_keys: tuple[str, ...]
    tokens: PromptTokens | None
    user_sections: tuple[PromptSection, ...]

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
        self.hidden_keys = prepared.hidden_keys
        self.unused_keys = prepared.unused_keys
        self.tokens = prepared.tokens
        self.user_sections = prepared.user_sections
        return self

    @property
    def template_map(self) -> TemplateMap:
        """Which key filled each placeholder, which stayed as written, and the unused state keys."""
        return TemplateMap.of(self)

    def __repr__(self) -> str:
        return (
            f"Observation(system_prompt={self.system_prompt!r}, user_prompt={self.user_prompt!r}, "
            f"{len(self.messages)} messages, tools={[t['function']['name'] for t in self.tools]})"
        )


def _resolved(value: Any, ctx: RunContext) -> Any:
    """An option that may be a function of the run (instructions, system_message), called."""
    return call_with(value, ctx.injectable()) if callable(value) else value


def resolve_dependencies(ctx: RunContext) -> None:
    """Call the callable dependencies (sync or async, asking for ``agent`` / ``run_context`` /
    ... by name), once per run, and keep their values in ``ctx.dependencies`` (Agno's rule)."""
    for key, value in list(ctx.dependencies.items()):
        if callable(value):
            ctx.dependencies[key] = call_with(value, ctx.injectable())


def render_prompt(
    agent: AgentSetup, ctx: RunContext, tools: Sequence[Tool], trailing: Sequence[tuple[str, str]] = ()
) -> RenderedPrompt:
    """The system prompt from the agent's options and its state now, with its assembly
    (callable instructions, system message and dependencies are called here); ``trailing``
    (source, text) sections close it (the output format, in prompted mode)."""
    options = agent.prompt
    visible, hidden = visible_state(agent)
    resolve_dependencies(ctx)
    instructions = _resolved(options.instructions, ctx)
    if instructions is None:
        instructions = []
    elif isinstance(instructions, str):
        instructions = [instructions]
    system_message = _resolved(options.system_message, ctx)
    shows_state = options.add_session_state_to_context and system_message is None
    now = datetime.datetime.now() if options.add_datetime_to_context else None
    rendered = render_system_prompt(
        options,
        system_message=None if system_message is None else str(system_message),
        instructions=[str(i) for i in instructions],
        name=agent.name,
        datetime_text=None
        if now is None
        else now.strftime(options.datetime_format)
        if options.datetime_format
        else str(now),
        # A Toolkit's instructions come with each of its tools, and go in once.
        tool_instructions=list(dict.fromkeys(t.instructions for t in tools if t.instructions)),
        session_state_text=render_state(visible, options.session_state_format) if shows_state else None,
        variables=[("session_state", visible), ("dependencies", ctx.dependencies)],
        leading=agent.leading_sections(ctx),
        trailing=trailing,
    )
    notes = [
        f"{{{p.name}}}: left as written, state key {p.name!r} is hidden from the model (hide_state_keys)"
        for p in rendered.placeholders
        if not p.resolved and p.name in hidden
    ]
    return evolve(
        rendered,
        notes=rendered.notes + tuple(dict.fromkeys(notes)),
        hidden_keys=hidden,
        unused_keys=unused_keys(visible, rendered.sections, ()),
    )


def visible_state(agent: AgentSetup) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """The state as the prompt may show it (without the hidden keys), and the hidden keys."""
    data = agent.state.data
    hidden = agent.prompt.hidden_keys(data)
    return ({k: v for k, v in data.items() if k not in hidden} if hidden else data), hidden


def unused_keys(
    visible: Mapping[str, Any], sections: Sequence[PromptSection], used: Iterable[str]
) -> tuple[str, ...]:
    """The visible state keys that no ``<session_state>`` block and no placeholder filled from
    the state (in ``sections`` or among ``used``) put in front of the model."""
    if any(s.source == "session_state" for s in sections):
        return ()
    filled = {p.name for s in sections for p in s.placeholders if p.resolved and p.source == "session_state"}
    filled.update(used)
    # Every turn's PromptRendered keeps this tuple: the same keys give the very same tuple, so a
    # large state's turns do not each keep a copy (and the keys are walked in C, not Python).
    keys = tuple(visible)
    last = _last_unused[0]
    if last is not None and last[0] == keys and last[1] == filled:
        return last[2]
    unused = tuple(k for k in keys if k not in filled)
    _last_unused[0] = (keys, filled, unused)
    return unused


_last_unused: list[tuple[tuple[str, ...], set[str], tuple[str, ...]] | None] = [None]


def prepare(
    agent: AgentSetup,
    message: str | Mapping[str, Any],
    ctx: RunContext,
    on_context: Callable[[ContextRetrieved], None] | None = None,
    preceding: Sequence[Message] = (),
    trailing: Sequence[tuple[str, str]] = (),
    following: Sequence[Message] = (),
    parts: Sequence[Part] = (),
) -> Prepared:
    """Everything the model receives for ``message`` now (see the module docstring);
    ``preceding`` messages (a run's ``messages=[...]``) go just before it, ``following`` ones (a
    handoff's run so far) just after it; ``parts``: the message's text, images and files in
    order, when it carries images or files (``message`` is their text)."""
    tools = agent.all_tools()
    rendered = render_prompt(agent, ctx, tools, trailing)
    user_prompt, query, context, used = _user_prompt(agent, message, ctx)
    if agent.add_dependencies_to_context and ctx.dependencies:
        deps = json.dumps(ctx.dependencies, indent=2, default=str, ensure_ascii=False)
        user_prompt += f"\n\n<additional context>\n{deps}\n</additional context>"
    if agent.context_providers:  # the retrieval tools' query and event sink for this run
        agent.context_providers.bind(ctx.run_id, query, on_context)
    messages: list[Message] = []
    if rendered.text:
        messages.append(Message.system(rendered.text))
    if agent.add_history_to_context:
        for turn in _earlier_turns(agent.history, ctx.run_id, agent.num_history_runs):
            messages.extend(m for m in turn.messages if m.role != "system")
    history = len(messages) - (1 if rendered.text else 0)
    messages.extend(preceding)
    messages.append(Message.user(user_prompt) if not parts else user_message(user_prompt, parts))
    messages.extend(following)
    prepared = Prepared(
        system_prompt=rendered.text,
        sections=rendered.sections,
        notes=rendered.notes,
        user_prompt=user_prompt,
        messages=tuple(messages),
        tools=tuple(tools),
        context=tuple(context),
        history=history,
        hidden_keys=rendered.hidden_keys,
        unused_keys=tuple(k for k in rendered.unused_keys if k not in used) if used else rendered.unused_keys,
    )
    return evolve(prepared, tokens=count_tokens(agent, prepared))


def user_message(user_prompt: str, parts: Sequence[Part]) -> Message:
    """The user message of a message given as parts: the parts as given when the prompt is
    their text as written; else (templates filled, a formatter's fields, dependencies added) the
    prompt's text first, then the images and files in order."""
    text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
    if user_prompt == text:
        return Message(role="user", content=tuple(parts))
    attachments = tuple(p for p in parts if not isinstance(p, TextPart))
    return Message(role="user", content=(TextPart(user_prompt), *attachments))


def tools_going_on(
    agent: AgentSetup, ctx: RunContext, on_context: Callable[[ContextRetrieved], None], message: str
) -> list[Tool]:
    """The tools a paused run offers when it goes on: the agent's now, the retrieval tools tied
    to the run again (the prompt is not rendered again: the run keeps the one it had)."""
    if agent.context_providers:
        agent.context_providers.bind(ctx.run_id, ContextQuery(message, agent=agent.name), on_context)
    return agent.all_tools()


def count_tokens(agent: AgentSetup, prepared: Prepared, *, exact_only: bool = False) -> PromptTokens | None:
    """What ``prepared`` costs with the best counter the agent's model has now (with
    ``exact_only``, None unless that counter is the model's own tokenizer)."""
    counter = counter_for(agent.model)
    if exact_only and not counter.exact:
        return None
    start = 1 if prepared.system_prompt else 0
    history = [m.text for m in prepared.messages[start : start + prepared.history]]
    # Only a counter that knows the chat template needs the messages in the wire format.
    wire = [m.to_openai() for m in prepared.messages] if counter.knows_template else ()
    images = 0
    for message in prepared.messages:  # a plain loop: a text turn makes no call here
        if message.content is not None and message.content.__class__ is not str:
            images += sum(
                image_tokens(p.width, p.height, p.detail)
                for p in message.attachments
                if isinstance(p, ImagePart)
            )
    return count_prompt(
        counter,
        prepared.sections,
        prepared.system_prompt,
        prepared.user_prompt,
        history,
        wire,
        prepared.user_sections,
        prepared.earlier_sections,
        images,
    )


def count_added(agent: AgentSetup, prepared: Prepared) -> PromptTokens | None:
    """``prepared``'s counts with its labelled user-message parts and earlier messages counted
    too, by the same counter (what a delegation adds after ``prepare``; the rest is not counted
    again)."""
    if prepared.tokens is None:
        return None
    counter = counter_for(agent.model)
    return replace(
        prepared.tokens,
        user_sections=count_sections(counter, prepared.user_sections),
        earlier_sections=count_sections(counter, prepared.earlier_sections),
    )


def _user_prompt(
    agent: AgentSetup, message: str | Mapping[str, Any], ctx: RunContext
) -> tuple[str, ContextQuery, list[ContextRetrieved], set[str]]:
    """The user prompt, the query context providers see, what passive providers returned, and
    the state keys its placeholders were filled from."""
    variables = [("session_state", visible_state(agent)[0]), ("dependencies", ctx.dependencies)]
    used: set[str] = set()
    text = message if isinstance(message, str) else None
    if text is not None and agent.prompt.resolve_in_context:
        text, found = resolve_template(text, variables)
        used.update(p.name for p in found if p.source == "session_state")
    if text is not None and not agent.format.structured and not agent.context_providers.passive:
        # The plain chat path: the user's message goes out as it is.
        return text, ContextQuery(text, inputs={"message": text}, agent=agent.name), [], used

    inputs = {"message": text} if isinstance(message, str) else dict(message)

    def resolve(template: str, values: Mapping[str, Any]) -> tuple[str, set[str]]:
        out, found = resolve_template(template, [("input", values), *variables])
        used.update(p.name for p in found if p.source == "session_state")
        return out, {p.name for p in found if p.source == "input"}

    payload = build_payload(agent.format, inputs, text, resolve)
    query = ContextQuery(payload.query_text, inputs=payload.inputs, agent=agent.name)
    context = agent.context_providers.retrieve_passive(query, ctx.run_id)
    fields = dict(payload.fields)
    context_text = render_context([(c.label, c.blocks) for c in context])
    if context_text:
        fields[CONTEXT_KEY] = context_text
    return (agent.format.input_formatter or ParagraphFormatter()).dump(fields), query, context, used


__all__ = [
    "AgentSetup",
    "Observation",
    "Prepared",
    "count_tokens",
    "prepare",
    "render_prompt",
    "unused_keys",
    "visible_state",
]


def _earlier_turns(history: Sequence[TurnRecord], run_id: str, runs: int | None) -> list[TurnRecord]:
    """The last ``runs`` turns that answered (all of them when None), oldest first, found from
    the end: a long history's older turns, which a session may keep on disk, are not read."""
    if runs is not None and runs <= 0:
        return []
    found: list[TurnRecord] = []
    for turn in reversed(history):
        if turn.run_id != run_id and turn.status == "ok":
            found.append(turn)
            if runs is not None and len(found) == runs:
                break
    found.reverse()
    return found
