"""What one run is given when its turn is made: the agent's side (``TurnSetup``), a delegated
run's place in the tree (``Delegated``, ``Lineage``, and the ``RunStarted`` that names it), and
what stands in for the model where a recording holds the answer (``Replay``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..events import (
    ContextRetrieved,
    Decision,
    Event,
    OutputChecked,
    PromptSection,
    PromptTokens,
    RunStarted,
    ToolCallFinished,
)
from ..history.records import TurnRecord
from ..messages import ToolCall
from ..models.base import Model, ModelResponse
from ..state.tracking import StateTracker
from ..tools import Tool
from ..tools.run_context import RunContext
from .gate import Gate
from .observe import Prepared
from .output import OutputSignature, OutputSpec


class Replay(Protocol):
    """What stands in for the model where a recording holds the answer (``recording.Recording``)."""

    def answer(
        self, record: TurnRecord, call: int, payload: dict[str, Any], model: Model
    ) -> ModelResponse | None:
        """The recorded answer to this request, or None to ask the model (may raise on drift)."""

    def answered(self, record: TurnRecord, call: int, response: ModelResponse) -> None:
        """What the model answered live."""

    def output_asked(self, record: TurnRecord, asked: OutputSignature | None, model: Model) -> None:
        """What the run asks its answer to be (None: no output type), before its first model
        call (may raise on drift)."""

    def checked(self, record: TurnRecord, attempt: OutputChecked, model: Model) -> None:
        """An answer was checked against the output type (may raise when the recording's
        verdict on the same attempt differs)."""

    def finish(self, record: TurnRecord) -> None:
        """The turn ended (before RunFinished / RunFailed)."""

    def decided(self, record: TurnRecord, decisions: Sequence[Decision]) -> None:
        """A paused turn goes on with these decisions (may raise when they differ from the
        recorded ones: a drift)."""

    def tool_result(self, record: TurnRecord, tool_call: ToolCall) -> ToolCallFinished | None:
        """The recorded outcome of a call to a tool outside the process (an MCP server), or None
        to call it."""


@dataclass
class TurnSetup:
    """What a run needs from its agent, handed over once."""

    model: Model
    """Who answers."""
    prepare: Callable[[RunContext, Callable[[ContextRetrieved], None]], Prepared]
    """The Observe step (context retrievals go to the callback)."""
    emit: Callable[[Event], None]
    """Where every event goes (the agent's subscribers)."""
    hooks: list[Callable[..., Any]] = field(default_factory=list)
    """Tool hooks, outermost first."""
    max_tool_iterations: int = 10
    """Rounds of tool calls allowed before the run fails."""
    model_options: Mapping[str, Any] = field(default_factory=dict)
    """Extra request options."""
    parse_output: Callable[[str | None], Any] | None = None
    """Parses the final answer into ``record.output`` (an output formatter), if any."""
    replay: Replay | None = None
    """Answers from a recording where it holds them."""
    overwrite_state: bool = False
    """A run's ``session_state`` replaces the state instead of merging into it."""
    count_tokens: Callable[[Prepared], PromptTokens | None] | None = None
    """Counts the prompt again with the model's own tokenizer (None when it has none) at the end
    of a turn whose counts were estimated before it was there (the local server starts with the
    turn's first call)."""
    lineage: Lineage | None = None
    """Where this run sits in a tree of delegations (None: a top-level run)."""
    emit_child: Callable[[Event], None] = lambda event: None
    """Where the events of runs this one delegates to go live (``subscribe(children=True)``)."""
    before_end: Callable[[StateTracker], None] | None = None
    """Called with the run's tracker just before its end event goes out (a delegation gives the
    member its own state back there, before the member's session saves it)."""
    output: OutputSpec | None = None
    """What the answer must be (``output_type``), if anything."""
    output_mode: str = "text"
    """How it is asked for with this model: native, tool, prompted (or text: nothing)."""
    handoff_to: str | None = None
    """The handoff tool that answers this run without a model call: an earlier handoff left
    another agent in charge of the conversation."""
    gate: Gate | None = None
    """What stops the run for a person (approvals, questions, external calls, breakpoints)."""
    tools: Callable[[RunContext, Callable[[ContextRetrieved], None]], Sequence[Tool]] | None = None
    """The tools a paused run offers when it goes on (the Observe step's, the prompt not
    rendered again; the retrieval tools' events go to the callback)."""


@dataclass(frozen=True)
class Delegated:
    """How a delegated run differs from a top-level one, given when its turn is made (so the
    turn is complete when made: nothing is rewired after)."""

    lineage: Lineage
    """Its place in the run tree."""
    outward: Callable[[Event], None]
    """Where its events, and those of the runs below it, go live up the tree."""
    before_end: Callable[[StateTracker], None]
    """Called with its tracker just before its end event goes out."""
    user_sections: tuple[PromptSection, ...] = ()
    """Its user message's parts, labelled by what produced them (the team's blocks, the task)."""
    earlier_sections: tuple[PromptSection, ...] = ()
    """The earlier messages it was given, labelled (a handoff's history)."""


def run_started(record: TurnRecord, run_id: str, lineage: Lineage | None) -> RunStarted:
    """A run's first event, naming its place in the run tree (a top-level run's path is itself)."""
    place: dict[str, Any] = {"path": (record.agent,)}
    if lineage is not None:
        place = {
            "parent_run_id": lineage.parent_run_id,
            "parent_tool_call_id": lineage.parent_tool_call_id,
            "path": lineage.path,
            "depth": len(lineage.path) - 1,
        }
    return RunStarted(
        run_id=run_id,
        agent=record.agent,
        turn=record.index,
        message=record.message,
        model=record.model,
        at=record.started_at,
        **place,
    )


def continuation_id(run_id: str) -> str:
    """The id of the call that gives run ``run_id`` to the agent an earlier handoff left in
    charge (no model made it)."""
    return f"handoff_{run_id}"


@dataclass(frozen=True)
class Lineage:
    """A delegated run's place in the run tree."""

    parent_run_id: str
    """The run whose tool call started this one."""
    parent_tool_call_id: str
    """That tool call's id."""
    path: tuple[str, ...]
    """Agent names from the top-level run down to this one."""
    depth_limit: int | None = None
    """The deepest a run below this one may be (the smallest ``max_delegation_depth`` above)."""


__all__ = ["Delegated", "Lineage", "Replay", "TurnSetup", "continuation_id", "run_started"]
