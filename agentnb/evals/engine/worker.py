"""One (case, repeat) on a fresh agent: what runs in the pool, here or on another machine.

``CaseTask`` pickles (the agent's definition as data, the model, the case and its recorded
turns); ``run_case`` builds a fresh agent from the definition — never the live one — runs the
case's turns, and returns a ``CaseOutcome`` of plain data. A recorded case replays: a model call
whose request equals the recorded one is answered from the recording (as a notebook's recording
does), so a finished case costs no model call and keeps its recorded durations and tokens.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...agent import Agent
from ...definition import AgentDefinition
from ...errors import AgentRunError, OutputValidationError, ReplayDriftError
from ...history.history import TurnRecord
from ...messages import Message
from ...models import ScriptedModel
from ...models.base import Model
from ...models.replay import ReplayModel, drift_report
from ...sessions.part_drift import part_changes
from ...sessions.recording import REPLAY_ENV, RERECORD, TurnReplay
from ...state.state import deep_merge
from ...util.text import one_line
from ..cases import Case
from ..decisions import decide
from .limiter import CallStats, GuardedModel, Limiter
from .parts import held, known_parts, receive
from .tree import Delegate, fresh_delegates


def evaluated(agent: Agent) -> AgentDefinition:
    """What an evaluation ships of an agent: its definition as configured now, without its model
    (each case runs on the evaluation's) or its state (each case starts from its own)."""
    return AgentDefinition.of(agent, configured=True).without("model", "chat_generator", "session_state")


def case_agent(definition: AgentDefinition, model: Model, case: Case) -> Agent:
    """A fresh agent for ``case``: the definition, its state deep-merged with the case's."""
    state = copy.deepcopy(case.start.state if case.start is not None else definition.initial_state)
    if case.state:
        state = deep_merge(state, copy.deepcopy(dict(case.state)))
    agent: Agent = definition.build(model=model, session_state=state)
    if case.start is not None and case.start.messages:
        known = known_parts(case.start.messages)
        agent.state.messages[:] = [Message.from_openai(dict(m), known) for m in case.start.messages]
    return agent


_SHARED: dict[str, Model] = {}
_SHARED_LOCK = threading.Lock()


def _shared_key(model: Model) -> str:
    """What makes two copies of a server model the same model (its settings; a hash of its key)."""
    settings = {k: v for k, v in vars(model).items() if not k.startswith("_") and k != "origin"}
    secret = getattr(model, "_api_key", None)
    digest = hashlib.sha1(secret.encode()).hexdigest()[:12] if isinstance(secret, str) else None
    return json.dumps(
        [type(model).__module__, type(model).__qualname__, settings, digest], sort_keys=True, default=repr
    )


def case_model(model: Model) -> Model:
    """The model a case runs on: a scripted or replay model cloned (each case starts its script
    afresh; cases never interleave one list of steps); a server model shared by every case of
    this process — on another machine each task brings its own copy, and the first copy with the
    same settings is used, so its client and connections serve every case there."""
    if getattr(model, "kind", None) == "openai":
        key = _shared_key(model)
        with _SHARED_LOCK:
            return _SHARED.setdefault(key, model)
    if isinstance(model, ScriptedModel):
        return ScriptedModel(
            model._function if model._function is not None else list(model.steps),
            name=model.name,
            stream=model.streaming,
            native_output=model.native,
        )
    if isinstance(model, ReplayModel):
        clone = copy.copy(model)
        clone.position, clone.drifts = 0, []
        return clone
    return model


@dataclass
class CaseTask:
    """What one (case, repeat) needs, picklable (it may run on another machine)."""

    definition: AgentDefinition
    """The agent's definition (``evaluated``)."""
    model: Model
    """The agent's model (the evaluation's copy; cloned per case where it keeps a script)."""
    case: Case
    """The case."""
    repeat: int
    """Which repeat (0 = the first)."""
    recorded: list[dict[str, Any]] | None = None
    """The turns a finished run of this (case, repeat) recorded, to replay from."""
    mode: str = "auto"
    """Replay mode (``AGENTNB_REPLAY``): auto, strict or live."""
    blobs: dict[str, bytes] = field(default_factory=dict)
    """The bytes of the images and files its recorded turns and conversation refer to, by hash,
    for a task sent to another process (``parts.held``)."""
    delegates: tuple[Delegate, ...] = ()
    """The agents the agent delegates to, each built afresh for the case (``tree``; in this
    process only)."""
    stands_for: int = 0
    """The ``id`` of the evaluated agent itself (where a delegate's handoff back goes)."""
    recorded_delegates: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Each delegate's turns in the finished run recorded, by its path, to replay from."""


@dataclass
class CaseOutcome:
    """What one (case, repeat) did, as plain data."""

    case_id: str
    repeat: int
    turns: list[dict[str, Any]]
    """Its turn records (``TurnRecord.to_dict()``), in order."""
    status: str
    """ok (every turn answered), invalid (a turn's answers never matched its output type: it
    failed with ``OutputValidationError``, every attempt in its record), paused (a turn waits for
    a decision the case does not give) or error (a turn did not finish)."""
    error: str | None = None
    """Why it did not finish, in one line."""
    error_type: str | None = None
    """The exception's class name."""
    replayed: bool = False
    """Whether it went exactly as recorded (no model call outside this process was made)."""
    stats: CallStats = field(default_factory=CallStats)
    """Model calls, retries and 429s."""
    wall_ms: float = 0.0
    """Wall-clock time this run of it took (replayed or not)."""
    records: list[TurnRecord] | None = field(default=None, repr=False)
    """The turn records themselves (in process only; another machine sends ``turns``)."""
    blobs: dict[str, bytes] = field(default_factory=dict, repr=False)
    """The bytes of the images and files ``turns`` refer to, by hash, when run without
    ``records`` (another process: ``parts.held``)."""
    delegates: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Each delegate's turn records (``TurnRecord.to_dict()``), by its path (``Delegate.path``)."""
    delegate_records: dict[str, list[TurnRecord]] | None = field(default=None, repr=False)
    """The delegates' turn records themselves (in process only)."""


class CaseReplay(TurnReplay):
    """The loop's replay for one case: the recorded turns answer matching requests."""

    def __init__(
        self, turns: list[TurnRecord], mode: str, *, recorded: bool | None = None, who: str = ""
    ) -> None:
        super().__init__(turns, mode)
        if not (bool(turns) if recorded is None else recorded):
            self.cut = 0  # nothing recorded: the case runs live
        self.who = who
        """Whose turns these are, for messages (``"delegate 'helper', "``; the agent's: empty)."""

    def detach(self) -> None:
        """Nothing to stop following (the agent's ``detach_session`` calls it)."""

    def _drift(
        self, index: int, call: int, recorded: dict[str, Any], payload: dict[str, Any], model: Model
    ) -> None:
        if self.mode == "strict" and model.external:
            where = f"{self.who}turn {index + 1}, model call {call + 1}"
            report = drift_report(recorded, payload, where, limit=24)
            head, _, diff = report.partition("\n")
            parts = part_changes(recorded, payload)
            changed = f": {'; '.join(parts)}" if parts else ""
            raise ReplayDriftError(f"{head}{changed}; {_refused(model)}\n{diff}")
        self.cut = index

    def _output_drift(self, index: int, change: str, model: Model) -> None:
        """The case's output type, mode or validators (or a validator's verdict) differ from the
        recorded run's: under strict replay that is a drift, named; else the case runs live."""
        if self.mode == "strict" and model.external:
            raise ReplayDriftError(
                f"replay drift at {self.who}turn {index + 1}: the output differs from the recorded run "
                f"({change}); {_refused(model)}"
            )
        self.cut = index

    def _past_end(self, index: int, model: Model) -> None:
        """A turn the recorded run did not have (a delegate asked once more than then): under
        strict replay that is a drift, named; else it runs live."""
        if self.mode == "strict" and model.external:
            raise ReplayDriftError(
                f"{self.who}turn {index + 1} is past the end of the recorded run (it holds "
                f"{len(self.turns)} turn(s)); {_refused(model)}"
            )

    @property
    def whole(self) -> bool:
        """Whether every turn went exactly as recorded."""
        return self.cut is None and self.mode != "live"


def _refused(model: Model) -> str:
    return f"strict replay ({REPLAY_ENV}=strict) does not call {model.label}; {RERECORD}"


def run_case(
    task: CaseTask,
    limiter: Limiter | None = None,
    *,
    keep_records: bool = False,
    limiter_for: Callable[[Model], Limiter | None] | None = None,
) -> CaseOutcome:
    """Run one (case, repeat) on a fresh agent (and fresh copies of the agents it delegates to,
    whose models go through ``limiter_for``'s limits); never raises for what the agent does."""
    started = time.perf_counter()
    stats = CallStats()
    model = GuardedModel(case_model(task.model), limiter, stats)
    case = task.case
    error: BaseException | None = None
    receive(task.blobs, task)
    agent: Agent | None = None
    delegates: dict[str, Agent] = {}
    waiting: str | None = None
    try:
        agent, delegates = _case_tree(
            task, model, lambda m: GuardedModel(case_model(m), limiter_for(m) if limiter_for else None, stats)
        )
        waiting = _run_turns(agent, case)
    except AgentRunError as exc:
        error = exc
    except Exception as exc:  # a definition that does not build, a message the agent refuses
        error = exc
    turns = [t.to_dict() for t in agent.history] if agent is not None else []
    failed = next((t for t in turns if t["status"] not in ("ok", "paused")), None)
    if error is not None and failed is not None:
        message, kind = failed["error"], _failed_type(agent.history if agent is not None else [], error)
    elif error is not None:
        message, kind = one_line(error), type(error).__name__
    else:
        message, kind = waiting, None
    return CaseOutcome(
        case_id=case.id,
        repeat=task.repeat,
        turns=turns,
        status=_status(error, waiting),
        error=message,
        error_type=kind,
        replayed=bool(task.recorded)
        and agent is not None
        and all(
            _as_recorded(a, task.recorded if a is agent else task.recorded_delegates.get(path))
            for path, a in {"": agent, **delegates}.items()
        ),
        stats=stats,
        wall_ms=(time.perf_counter() - started) * 1000,
        records=list(agent.history) if keep_records and agent is not None else None,
        blobs={} if keep_records else held(turns),
        delegates={path: [t.to_dict() for t in d.history] for path, d in delegates.items()},
        delegate_records={path: list(d.history) for path, d in delegates.items()} if keep_records else None,
    )


def _case_tree(
    task: CaseTask, model: Model, model_for: Callable[[Model], Model]
) -> tuple[Agent, dict[str, Agent]]:
    """The case's agent and fresh copies of the agents it delegates to (by path), each replaying
    its own turns of the recorded run."""
    agent = case_agent(task.definition, model, task.case)
    agent.recording = CaseReplay(_records(task.recorded), task.mode)
    delegates = fresh_delegates(agent, task.stands_for, task.delegates, model_for) if task.delegates else {}
    for path, delegate in delegates.items():
        delegate.recording = CaseReplay(
            _records(task.recorded_delegates.get(path)),
            task.mode,
            recorded=bool(task.recorded),
            who=f"delegate {path!r}, ",
        )
    return agent, delegates


def _records(turns: list[dict[str, Any]] | None) -> list[TurnRecord]:
    return [TurnRecord.from_dict(t) for t in turns or ()]


def _as_recorded(agent: Agent, recorded: list[dict[str, Any]] | None) -> bool:
    """Whether ``agent`` ran its recorded turns exactly (none, when it recorded none)."""
    count = len(recorded or ())
    return len(agent.history) == count and (count == 0 or agent.recording.whole)


def _status(error: BaseException | None, waiting: str | None) -> str:
    if isinstance(error, OutputValidationError):  # the case ran; its answers failed the type
        return "invalid"
    return "error" if error is not None else "paused" if waiting is not None else "ok"


def _run_turns(agent: Agent, case: Any) -> str | None:
    """The case's turns, each pause decided by the case's next decisions; what a pause still
    waits for when the case gives no decision for it (None: every turn answered)."""
    left = list(case.decisions or ())
    for message in case.turns:
        result = agent.run(message)
        while result.status == "paused":
            waiting = [item for item in result.pending if not item.decided]
            if len(waiting) > len(left):
                listed = ", ".join(repr(item) for item in waiting[len(left) :])
                return f"paused: no decision given for {listed}"
            for item in waiting:
                decide(item, left.pop(0))
            result = agent.continue_run()
    return None


def _failed_type(history: Any, error: BaseException) -> str:
    from ...events import RunFailed

    for turn in history:
        for event in turn.events:
            if isinstance(event, RunFailed):
                return event.error_type
    return type(error).__name__


__all__ = ["CaseOutcome", "CaseReplay", "CaseTask", "case_agent", "case_model", "evaluated", "run_case"]
