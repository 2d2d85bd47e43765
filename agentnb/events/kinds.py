"""The events a run emits, one frozen dataclass per kind (the ``kind`` field tells which), and
the ``Event`` union of them all (a typed run's answers' events are in ``output.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..messages import ToolCall
from ..util.fastinit import fast_init
from .output import OutputChecked, OutputDelta
from .parts import ContextBlock, HookStep, PromptSection, PromptTokens, StateCause, Usage


@fast_init
@dataclass(frozen=True, kw_only=True)
class RunStarted:
    """A run began."""

    kind: Literal["run_started"] = "run_started"
    """Always ``"run_started"``: what kind of event this is."""
    run_id: str
    """Unique id of the run."""
    agent: str
    """The agent's name."""
    turn: int
    """Index of this turn in the agent's history (0-based)."""
    message: str
    """The user's message."""
    model: str
    """The model's label (scripted / replay / local / openai:...)."""
    at: float = 0.0
    """Wall-clock time (epoch seconds)."""
    parent_run_id: str | None = None
    """The run whose tool call started this one (a delegation); None for a top-level run."""
    parent_tool_call_id: str | None = None
    """The parent's tool call that started this run (its ToolCallFinished has ``child_run_id``)."""
    path: tuple[str, ...] = ()
    """Agent names from the top-level run down to this one, e.g. ``("team", "researcher")``."""
    depth: int = 0
    """How many delegations deep this run is (0 = top level)."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class PromptRendered:
    """The system prompt was rendered for a run (once per run, from the state at its start)."""

    kind: Literal["prompt_rendered"] = "prompt_rendered"
    """Always ``"prompt_rendered"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    system_prompt: str
    """The final system prompt."""
    sections: tuple[PromptSection, ...] = ()
    """Its assembly, in order."""
    user_prompt: str = ""
    """The user message as sent."""
    user_sections: tuple[PromptSection, ...] = ()
    """The user message's parts, when something other than the user wrote them: a delegated
    run's task and the blocks its team added (``<member_interaction_context>``,
    ``<team_history_context>``), each with the option that produced it."""
    earlier_sections: tuple[PromptSection, ...] = ()
    """Messages sent with the user message that it did not write, one section each, labelled by
    what put them there (a handoff's history, after its ``input_filter``: the conversation before
    the user message, then the run so far after it)."""
    notes: tuple[str, ...] = ()
    """Options that were set but had no effect on the prompt, and why."""
    hidden_keys: tuple[str, ...] = ()
    """State keys kept out of the prompt (``hide_state_keys``): in no block, filling no placeholder."""
    unused_keys: tuple[str, ...] = ()
    """State keys the model saw nowhere: no placeholder and no ``<session_state>`` block used them."""
    tokens: PromptTokens | None = None
    """What the prompt costs in tokens, by section (``agentnb.models.tokens``)."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class ModelRequested:
    """A request is about to go to the model."""

    kind: Literal["model_requested"] = "model_requested"
    """Always ``"model_requested"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    call: int
    """Index of the model call within the run (0-based)."""
    request: dict[str, Any]
    """The payload exactly as sent (no credentials)."""
    at: float = 0.0
    """Wall-clock time (epoch seconds)."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class TextDelta:
    """A piece of streamed text."""

    kind: Literal["text_delta"] = "text_delta"
    """Always ``"text_delta"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    call: int
    """Index of the model call within the run (0-based)."""
    text: str
    """The new piece of text."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class ModelResponded:
    """The model answered one request."""

    kind: Literal["model_responded"] = "model_responded"
    """Always ``"model_responded"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    call: int
    """Index of the model call within the run (0-based)."""
    content: str | None = None
    """Text of the reply, if any."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls requested."""
    finish_reason: str | None = None
    """Why the model stopped: stop, tool_calls, length, ..."""
    usage: Usage = field(default_factory=Usage)
    """Token counts of this call."""
    duration_ms: float = 0.0
    """Time from the request until the answer was complete."""
    response: dict[str, Any] = field(default_factory=dict)
    """The response as received, for the record and for replay."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class ToolCallStarted:
    """A tool call is about to run."""

    kind: Literal["tool_call_started"] = "tool_call_started"
    """Always ``"tool_call_started"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    call: int
    """Index of the model call within the run (0-based)."""
    tool_call_id: str
    """The id the model gave the call."""
    name: str
    """The tool\'s name as the model wrote it."""
    arguments: str
    """Arguments exactly as the model sent them."""
    source: str | None = None
    """Where the tool comes from when not from Python here (``mcp:<server>``)."""
    at: float = 0.0
    """Wall-clock time (epoch seconds)."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class ToolCallFinished:
    """A tool call finished, with a result or an error (both go back to the model)."""

    kind: Literal["tool_call_finished"] = "tool_call_finished"
    """Always ``"tool_call_finished"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    call: int
    """Index of the model call within the run (0-based)."""
    tool_call_id: str
    """The id the model gave the call."""
    name: str
    """The tool\'s name as the model wrote it."""
    arguments: str
    """Arguments exactly as the model sent them."""
    result: str
    """The text returned to the model (the error message when the call failed); for a result
    with images or files, its text, or a line naming each when it has none."""
    error: str | None = None
    """Why the call failed, if it did."""
    error_kind: str | None = None
    """unknown_tool, malformed_call, malformed_arguments, invalid_arguments, hook_error, tool_error, state_error."""
    attachments: tuple[dict[str, Any], ...] = ()
    """The images and files the result holds, described (type, sha256, media_type, size, name,
    detail, width, height: ``agentnb.messages.describe``); never their bytes, which the tool
    message of the turn's messages holds."""
    hooks: tuple[HookStep, ...] = ()
    """The hooks the call went through, outermost first."""
    answered_by: str | None = None
    """'tool', or the name of the hook that answered without calling the tool."""
    changed_keys: tuple[str, ...] = ()
    """Top-level state keys this call changed."""
    source: str | None = None
    """Where the tool comes from when not from Python here (``mcp:<server>``)."""
    replayed: bool = False
    """Whether the result was taken from the notebook's recording instead of calling the tool."""
    duration_ms: float = 0.0
    """Time the call took, hooks included."""
    child_run_id: str | None = None
    """For a delegation (agent as tool, team member, handoff): the run it started."""
    child_run_ids: tuple[str, ...] = ()
    """When one delegation started several runs (``delegate_task_to_members``): all of them,
    in member order (``child_run_id`` is the first)."""
    decision: str | None = None
    """What a person decided about the call while its run was paused: ``approved``, ``edited``
    (approved with other arguments: ``arguments`` are theirs), ``rejected`` or ``answered`` (the
    result is theirs); None when nothing paused it."""
    model_arguments: str | None = None
    """The arguments as the model sent them, when a person edited them (``decision == "edited"``)."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class StateChanged:
    """The state changed; ``patch`` is an RFC 6902 JSON patch from the old to the new state."""

    kind: Literal["state_changed"] = "state_changed"
    """Always ``"state_changed"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    patch: tuple[dict[str, Any], ...]
    """JSON-patch operations (op, path, value)."""
    cause: StateCause
    """Who made the change."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class RunFinished:
    """A run ended with a final answer."""

    kind: Literal["run_finished"] = "run_finished"
    """Always ``"run_finished"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    content: str | None
    """The final answer."""
    usage: Usage = field(default_factory=Usage)
    """Token counts of this run's own model calls, summed (never its children's)."""
    usage_total: Usage | None = None
    """``usage`` plus every descendant run's (delegations); None in records made before
    delegations existed, where it equals ``usage``."""
    duration_ms: float = 0.0
    """Time the whole run took."""
    model_calls: int = 0
    """How many model calls the run made."""
    tool_calls: int = 0
    """How many tool calls the run made."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class RunFailed:
    """A run ended without a final answer."""

    kind: Literal["run_failed"] = "run_failed"
    """Always ``"run_failed"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    error: str
    """One line saying what went wrong and how to fix it."""
    error_type: str
    """The exception's class name."""
    usage: Usage = field(default_factory=Usage)
    """Token counts of this run's own model calls made before it failed."""
    usage_total: Usage | None = None
    """``usage`` plus every descendant run's; None in older records (equal to ``usage``)."""
    duration_ms: float = 0.0
    """Time until it failed."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class ContextRetrieved:
    """A context provider was queried: passively while the user turn was assembled, or by the
    model through the ``retrieve_context`` tool (then it comes just before that call's
    ToolCallFinished)."""

    kind: Literal["context_retrieved"] = "context_retrieved"
    """Always ``"context_retrieved"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    label: str
    """The provider's label (for a tool call: the source name the model used)."""
    provider: str = ""
    """The provider's class name."""
    query: str = ""
    """The query text the provider received."""
    top_k: int = 8
    """How many blocks were asked for (0 = all)."""
    blocks: tuple[ContextBlock, ...] = ()
    """The blocks returned, in order (text, score, source, metadata)."""
    rendered: str = ""
    """The blocks as the model sees them: ``[Context]`` then ``(LABEL) text`` lines."""
    via: Literal["passive", "tool"] = "passive"
    """passive: injected into the user payload's CONTEXT field; tool: retrieve_context."""
    duration_ms: float = 0.0
    """Time the provider took."""


PendingKind = Literal["approval", "question", "external", "breakpoint"]
"""Why a paused run waits: a call that needs approval, the model's question to the person
(``ask_user``), a call whose result the person supplies (``external=True``), or a breakpoint
(``break_before``) before a tool call or a model call."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class PendingCall:
    """One thing a paused run waits for a person to decide."""

    id: str
    """A short id, stable across restarts (``%agentnb approve NAME ID``)."""
    kind: PendingKind
    """approval, question, external or breakpoint."""
    tool: str | None
    """The tool called (None for a breakpoint before a model call)."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """The arguments as the model sent them, decoded."""
    reason: str = ""
    """Why the run stopped here: the rule that asked for a person, or the model's question."""
    path: tuple[str, ...] = ()
    """Agent names from the top-level run down to the run that paused (a team member's path)."""
    run_id: str = ""
    """The run that paused."""
    call: int = 0
    """Which model call of that run asked for the tool call (or is about to be made)."""
    tool_call_id: str | None = None
    """The model's id of the call (None for a breakpoint before a model call)."""
    parameters: dict[str, Any] | None = None
    """The tool's JSON schema: edited arguments are checked against it."""
    request: dict[str, Any] | None = None
    """For a breakpoint before a model call: the request about to go, as ``{"messages": [...],
    "tools": [...], "options": {...}}`` (OpenAI Chat Completions messages)."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class Decision:
    """What a person decided about one pending item."""

    id: str
    """The pending item's id."""
    verdict: Literal["approved", "edited", "rejected", "answered"]
    """approved (as it was), edited (other arguments, or another model request), rejected,
    answered (a question's answer, or an external call's result)."""
    arguments: dict[str, Any] | None = None
    """The arguments the call runs with, when edited."""
    request: dict[str, Any] | None = None
    """The model request sent instead, when a breakpoint's request was edited (only the keys
    given: messages, tools, options)."""
    reason: str | None = None
    """Why it was rejected: the model reads it as the call's result."""
    value: Any = None
    """The answer (JSON data), when answered."""
    by: str = "person"
    """Who decided."""
    at: float = 0.0
    """Wall-clock time (epoch seconds)."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class RunPaused:
    """A run stopped at a known point to wait for a person; ``continue_run()`` carries it on."""

    kind: Literal["run_paused"] = "run_paused"
    """Always ``"run_paused"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    items: tuple[PendingCall, ...] = ()
    """What it waits for: its own items and those of the delegations it waits on, each with its
    path."""
    usage: Usage = field(default_factory=Usage)
    """Token counts of this run's own model calls so far."""
    duration_ms: float = 0.0
    """Time the run has taken so far (the pauses not counted)."""
    at: float = 0.0
    """Wall-clock time (epoch seconds)."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class RunResumed:
    """A paused run goes on with the person's decisions (the same run: the same ``run_id``)."""

    kind: Literal["run_resumed"] = "run_resumed"
    """Always ``"run_resumed"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    decisions: tuple[Decision, ...] = ()
    """The decisions about this run's own pending items, in their order."""
    at: float = 0.0
    """Wall-clock time (epoch seconds)."""


Event: TypeAlias = (
    RunStarted
    | PromptRendered
    | ContextRetrieved
    | ModelRequested
    | TextDelta
    | ModelResponded
    | ToolCallStarted
    | ToolCallFinished
    | StateChanged
    | OutputChecked
    | OutputDelta
    | RunFinished
    | RunFailed
    | RunPaused
    | RunResumed
)
"""Any event (the ``kind`` field tells which)."""


__all__ = [
    "ContextRetrieved",
    "Decision",
    "Event",
    "ModelRequested",
    "ModelResponded",
    "OutputChecked",
    "OutputDelta",
    "PendingCall",
    "PendingKind",
    "PromptRendered",
    "RunFailed",
    "RunFinished",
    "RunPaused",
    "RunResumed",
    "RunStarted",
    "StateChanged",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
]
