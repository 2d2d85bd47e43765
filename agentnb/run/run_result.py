"""What a run hands back: ``RunResult`` (the answer, the state, the record) and ``RunStream``
(the events as they happen)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import AgentnbError, AgentRunError
from ..events import Event, ToolCallFinished, Usage
from ..history.history import StateField
from ..history.records import LazyField, Stored, TurnRecord
from ..history.render import turn_html, turn_text
from ..messages import Message
from ..state.state import MESSAGES_KEY
from ..state.views import view
from .loop import Turn
from .pending import PendingItem, pending_items

if TYPE_CHECKING:
    from ..formatters import ParsedOutput


_FROZEN = "_frozen_state"
"""Where ``RunResult.state`` (a ``StateField``) keeps the frozen state."""


@dataclass
class RunResult:
    """What a run produced. ``result["key"]`` reads the state (``result["messages"]`` too)."""

    content: str | None
    """The final answer."""
    messages: list[Message]
    """The run's messages (system, user, assistant, tool)."""
    tool_calls: LazyField[ToolCallFinished] = LazyField()
    """Every tool call of the run, with results, errors and hooks (picked from the events when
    first read)."""
    events: list[Event] = field(default_factory=list)
    """Every event of the run (text deltas excluded)."""
    state: StateField = StateField()
    """The state after the run, as the turn record keeps it (read-only: ``copy.deepcopy`` it
    to change a copy); ``agent.session_state`` is the live one."""
    usage: Usage = field(default_factory=Usage)
    """Token counts of the run."""
    turn: TurnRecord | None = field(default=None, repr=False)
    """The turn's record (also ``agent.history[-1]``)."""

    @property
    def status(self) -> str:
        """``ok`` (an answer), ``failed``, or ``paused``: the turn waits for a person
        (``pending``; decide each item, then ``agent.continue_run()``)."""
        return self.turn.status if self.turn is not None else "ok"

    @property
    def is_paused(self) -> bool:
        """Whether the turn waits for a person (Agno's name)."""
        return self.status == "paused"

    @property
    def pending(self) -> list[PendingItem]:
        """What the paused turn waits for: each item (id, kind, tool, arguments, reason, and the
        member's path in a team) with ``approve()`` / ``reject(why)`` / ``answer(value)`` /
        ``edit(request=...)``; [] unless paused. The OpenAI SDK calls them ``interruptions``."""
        return pending_items(self.turn) if self.turn is not None else []

    interruptions = pending

    @property
    def member_responses(self) -> list[RunResult]:
        """The results of the runs this one delegated to, in call order (Agno's name)."""
        return [RunResult.of(child) for child in self.turn.children] if self.turn is not None else []

    @classmethod
    def of(cls, record: TurnRecord) -> RunResult:
        """The result of a finished (or failed) turn."""
        return cls(
            content=record.content,
            messages=list(record.messages),
            tool_calls=Stored(partial(getattr, record, "tool_calls")),
            events=list(record.events),
            state=record.frozen_after,
            usage=record.usage,
            turn=record,
        )

    def __getitem__(self, key: str) -> Any:
        if key == MESSAGES_KEY:
            return self.messages
        state = getattr(self, _FROZEN)
        if key not in state:
            raise KeyError(f"{key!r} is not in the state; keys: {sorted(state)}")
        return view(state[key])

    def __contains__(self, key: object) -> bool:
        return key == MESSAGES_KEY or key in getattr(self, _FROZEN)

    def get(self, key: str, default: Any = None) -> Any:
        """The state value under ``key``, or ``default``."""
        return self[key] if key in self else default  # noqa: SIM401  (this is get itself)

    def __str__(self) -> str:
        return self.content or ""

    @property
    def finish_reason(self) -> str | None:
        """Why the model stopped its final answer: ``stop``, ``length`` (cut at the token
        limit), ``content_filter``, ...; None without an answer (``TurnRecord.finish_reason``)."""
        return self.turn.finish_reason if self.turn is not None else None

    @property
    def truncated(self) -> bool:
        """Whether ``content`` was cut at the token limit (``finish_reason == "length"``): raise
        the model's ``max_tokens`` to get the whole answer."""
        return self.finish_reason == "length"

    @property
    def output(self) -> ParsedOutput | None:
        """The answer parsed by the agent's output formatter (None without one):
        ``result.output["field"]``; ``.ok`` / ``.error`` / ``.raw`` when it did not parse."""
        return self.turn.output if self.turn is not None else None

    def _repr_html_(self) -> str | None:
        """The turn's static record in a notebook (see agentnb.history.render)."""
        return turn_html(self.turn) if self.turn is not None else None

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(turn_text(self.turn) if self.turn is not None else repr(self))


class RunStream:
    """The events of a run, as they happen. After iterating, ``.result`` holds the RunResult;
    a failed run raises ``AgentRunError`` at the end of the iteration.

    ``start`` makes the turn when iteration begins (so a stream never iterated leaves no
    record); ``running`` guards against two turns of one agent at once."""

    def __init__(self, start: Callable[[], Turn], running: Callable[[], Any]) -> None:
        self._start = start
        self._running = running
        self.result: RunResult | None = None

    def __iter__(self) -> Iterator[Event]:
        with self._running():
            turn = self._start()
            yield from turn.events()
        self.result = RunResult.of(turn.record)
        if turn.error is not None:
            err = turn.error
            wrapped = as_run_error(err, self.result)
            if wrapped is err:
                raise err
            raise wrapped from err


def as_run_error(err: BaseException, result: RunResult) -> BaseException:
    """agentnb's own errors are raised as they are (with ``.result`` attached); anything else
    is wrapped in AgentRunError."""
    if isinstance(err, AgentnbError):
        err.result = result
        return err
    return AgentRunError(f"{type(err).__name__}: {err}", result)


__all__ = ["RunResult", "RunStream", "as_run_error"]
