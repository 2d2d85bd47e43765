"""The values events carry: token usage, the prompt's sections and placeholders and its token
counts, the steps of a tool call's hooks, who changed the state, and a context block.

Like the events (``agentnb.events``), their names and fields are public API.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from ..util.fastinit import fast_init

CauseKind = Literal[
    "tool", "hook", "handler", "agentic", "run_kwarg", "user", "load", "output", "merge", "person"
]


@fast_init
@dataclass(frozen=True)
class ContextBlock:
    """One piece of context a provider returns."""

    text: str
    """The text the model sees."""
    score: float | None = None
    """Relevance score (higher is better), when the provider ranks."""
    source: str | None = None
    """Where it came from: a document id, a row, a turn."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Anything else worth keeping (JSON-able)."""

    def to_dict(self) -> dict[str, Any]:
        """The block as plain data."""
        return dataclasses.asdict(self)


@fast_init
@dataclass(frozen=True, kw_only=True)
class Usage:
    """Token counts of one model call (or a sum of them)."""

    input_tokens: int = 0
    """Prompt tokens."""
    output_tokens: int = 0
    """Completion tokens."""
    estimated: bool = False
    """True when the counts are a length-based estimate (offline models), not a server's."""
    reasoning_tokens: int = 0
    """Of the output tokens, those a reasoning model spent thinking (0 when none or not sent)."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        # A run's usage starts at NO_USAGE: its first model call's usage is the sum, not a copy.
        if other is NO_USAGE:
            return self
        if self is NO_USAGE:
            return other
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            estimated=self.estimated or other.estimated,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


NO_USAGE = Usage()
"""No tokens: the usage a run or record starts with (frozen, so one serves them all)."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class Placeholder:
    """One ``{name}`` in a template section of the system prompt."""

    name: str
    """The placeholder's name."""
    resolved: bool
    """Whether a value was found for it."""
    source: str | None = None
    """Where the value came from: 'session_state', 'dependencies' or 'run'."""
    value: str | None = None
    """The text that replaced it."""
    start: int = 0
    """Offset of the replacement (or the untouched placeholder) in the final prompt."""
    end: int = 0
    """End offset in the final prompt."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class PromptSection:
    """One part of the system prompt and the option that produced it."""

    source: str
    """The option that produced it: system_message, description, instructions, markdown, ..."""
    text: str
    """The section's text as it appears in the final prompt."""
    start: int
    """Offset of the section in the final prompt."""
    end: int
    """End offset in the final prompt."""
    placeholders: tuple[Placeholder, ...] = ()
    """Template placeholders found in this section."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class PromptTokens:
    """What a run's prompt costs in tokens: each system-prompt section, the earlier turns sent as
    context, the user message and the chat template's overhead (``agentnb.models.tokens``)."""

    counter: str
    """What counted: a BPE encoding (``o200k_base``), a server's tokenizer, or ``estimate``."""
    exact: bool
    """Whether the counts are the model's own tokenizer's (False: an estimate)."""
    note: str | None = None
    """Why the counts are an estimate, when they are."""
    sections: tuple[int, ...] = ()
    """Tokens of each section of the system prompt, in order."""
    system: int = 0
    """Tokens of the whole system prompt."""
    history: int = 0
    """Tokens of the earlier turns' messages sent as context."""
    user: int = 0
    """Tokens of the user message."""
    template: int | None = None
    """Tokens the chat template adds around the messages (None when unknown)."""
    user_sections: tuple[int, ...] = ()
    """Tokens of each labelled part of the user message (a delegated run's task and the blocks
    its team added), in order; parts of ``user``, not added to it."""
    earlier_sections: tuple[int, ...] = ()
    """Tokens of each message sent with the user message and labelled (a handoff's history,
    after its ``input_filter``: the conversation before the user message and the run so far
    after it), in order."""
    images: int = 0
    """Tokens of the images in the messages (the user's and the earlier turns'): always an
    estimate, by OpenAI's tile rule (``agentnb.models.tokens.image_tokens``), whatever counted
    the text."""

    @property
    def total(self) -> int:
        """System prompt, history, the labelled messages before the user's, user message, images
        and template overhead together."""
        return (
            self.system
            + self.history
            + sum(self.earlier_sections)
            + self.user
            + self.images
            + (self.template or 0)
        )


@fast_init
@dataclass(frozen=True, kw_only=True)
class HookStep:
    """What one tool hook did during a tool call."""

    name: str
    """The hook function's name."""
    arguments: dict[str, Any]
    """The tool arguments the hook received."""
    outcome: Literal["passed", "answered", "raised"]
    """passed: it called the next link; answered: it returned without calling it; raised."""
    result: str | None = None
    """Text of what the hook returned."""
    error: str | None = None
    """The exception, when it raised."""
    duration_ms: float = 0.0
    """Time spent in the hook, including the links inside it."""
    passed_arguments: dict[str, Any] | None = None
    """The arguments it passed on to the next link, when it called it (None when it did not)."""
    passed_error: str | None = None
    """The exception a later link (a hook further in, or the tool) raised and this hook let
    through, when it passed the call on (its outcome is then "passed", not "raised")."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class StateCause:
    """Who changed the state."""

    kind: CauseKind
    """tool, hook, handler, agentic (update_session_state), run_kwarg, user, load, output, merge,
    person (a value a person supplied: the answer to a paused call, written by ``outputs_to_state``)."""
    name: str | None = None
    """The tool, hook, handler or key involved."""
    tool_call_id: str | None = None
    """The tool call during which the change happened."""
    handler: str | None = None
    """The merge handler that combined old and new values (typed state), if any."""
    via: tuple[str, ...] = ()
    """The delegation chain: the agent path from the root run down to the run where the change
    was made, then (for a ``merge``) the member-side author, e.g. ``("team", "researcher",
    "tool:add_item")``. Empty for a run that is no delegation's child and merges nothing."""
    edited_by: str | None = None
    """Who edited the arguments of the call that made the change, when not the model: "person"
    for a paused call approved with other arguments (``item.approve(arguments=...)``)."""

    def label(self) -> str:
        if self.kind == "merge" and len(self.via) > 1:  # the chain below the run that merged
            text = f"merge:{' ▸ '.join(self.via[1:])}"
            return f"{text} ({self.handler})" if self.handler else text
        text = f"{self.kind}:{self.name}" if self.name else self.kind
        if self.edited_by:
            text = f"{text} [arguments by {self.edited_by}]"
        return f"{text} ({self.handler})" if self.handler else text

    def chain(self) -> str:
        """The whole chain as one line: ``team ▸ researcher ▸ tool:add_item``."""
        if self.kind == "merge":
            return " ▸ ".join(self.via) if self.via else self.label()
        return " ▸ ".join((*self.via, self.label()))


USER_CAUSE = StateCause(kind="user")
"""A change by the user (made between turns, or a run's own messages put in the state as it
ends): one frozen cause that every such change shares."""


__all__ = [
    "CauseKind",
    "ContextBlock",
    "HookStep",
    "NO_USAGE",
    "Placeholder",
    "PromptSection",
    "PromptTokens",
    "StateCause",
    "USER_CAUSE",
    "Usage",
]
