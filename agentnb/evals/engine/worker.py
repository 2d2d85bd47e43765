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


class CaseReplay(TurnReplay):
    """The loop's replay for one case: the recorded turns answer matching requests."""

    def __init__(self, turns: list[TurnRecord], mode: str) -> None:
        super().__init__(turns, mode)
        if not turns:
            self.cut = 0

    def detach(self) -> None:
        """Nothing to stop following (the agent's ``detach_session`` calls it)."""

    def _drift(
        self, index: int, call: int, recorded: dict[str, Any], payload: dict[str, Any], model: Model
    ) -> None:
        if self.mode == "strict" and model.external:
            report = drift_report(recorded, payload, f"turn {index + 1}, model call {call + 1}", limit=24)
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
                f"replay drift at turn {index + 1}: the output differs from the recorded run ({change}); "
                f"{_refused(model)}"
            )
        self.cut = index

    @property
    def whole(self) -> bool:
        """Whether every turn went exactly as recorded."""
        return self.cut is None and self.mode != "live"


def _refused(model: Model) -> str:
    return f"strict replay ({REPLAY_ENV}=strict) does not call {model.label}; {RERECORD}"


def run_case(task: CaseTask, limiter: Limiter | None = None, *, keep_records: bool = False) -> CaseOutcome:
    """Run one (case, repeat) on a fresh agent; never raises for what the agent does."""
    started = time.perf_counter()
    stats = CallStats()
    model = GuardedModel(case_model(task.model), limiter, stats)
    case = task.case
    error: BaseException | None = None
    receive(task.blobs, task)
    recorded = [TurnRecord.from_dict(t) for t in task.recorded] if task.recorded else []
    replay = CaseReplay(recorded, task.mode)
    agent: Agent | None = None
    waiting: str | None = None
    try:
        agent = case_agent(task.definition, model, case)
        agent.recording = replay
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
        replayed=bool(recorded) and replay.whole and len(turns) == len(recorded),
        stats=stats,
        wall_ms=(time.perf_counter() - started) * 1000,
        records=list(agent.history) if keep_records and agent is not None else None,
        blobs={} if keep_records else held(turns),
    )


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
