"""A notebook's recording: the session beside the notebook replays the turns it holds.

An agent attached to a recording (``agent.attach_recording(session)``; ``%%agent`` does it with
the folder beside the notebook) starts from its definition, not from the saved state, and runs
its turns as Python does — with one difference: a model call whose request equals the one
recorded for that turn and call is answered from the recording, so re-running a notebook costs no
model call and shows exactly what it showed before. Three cases:

- **unchanged**: every request matches; answers come from the recording (for models outside the
  process: OpenAI, a server, the local model); tools run again; a matched turn keeps its recorded
  durations and token counts, so its record and DataFrames are the same as when it was recorded.
  Nothing is written: the recording already holds it.
- **edited**: a request differs (an edited instruction or message, a changed tool, another model
  option). That turn calls the model, and the recording is replaced from that turn on (the
  turns before it are kept). In strict mode (``AGENTNB_REPLAY=strict``, which the pytest plugin
  sets under nbval), or when the model cannot be called here (no API key), the turn fails instead
  with a short diff naming the turn and the model call.
- **continued**: turns past the end of the recording run live and are appended to it.

In live mode (``AGENTNB_REPLAY=live``, ``attach_recording(..., mode="live")``) nothing is replayed:
every turn calls the model and is written as it ends, the recording replaced from the first turn on.

A turn that paused for a person is recorded as it paused, and again when it went on; the
decisions are part of it (its ``RunResumed`` events). Replayed, the notebook's decision cells
decide again: the same decisions replay; another one is a drift, named as the decision.

Offline models (``ScriptedModel``) are Python, like tools: they always answer live, and a turn
they answer exactly as recorded keeps its recorded timings all the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigurationError, ReplayDriftError
from ..events import (
    Decision,
    Event,
    OutputChecked,
    PromptRendered,
    RunFailed,
    RunFinished,
    RunPaused,
    RunResumed,
    ToolCallFinished,
)
from ..history.records import TurnRecord
from ..messages import ToolCall
from ..models.base import Model, ModelResponse
from ..models.replay import drift_report, response_from_event
from ..run.output import OutputSignature
from ..run.setup import continuation_id
from ..util.replay import MODES, REPLAY_ENV, RERECORD, replay_mode
from . import SessionBase, read_history
from .part_drift import part_changes


class TurnReplay:
    """Where a run stands against a list of recorded turns: the loop's Replay protocol (see
    ``run.setup.Replay``). A turn whose requests match is answered from the recording; from the first
    one that differs (``cut``) the model is called."""

    def __init__(self, turns: list[TurnRecord], mode: str) -> None:
        self.turns: list[TurnRecord] = turns
        """The turns as recorded."""
        self.mode = mode
        """``live``, ``replay`` or ``strict`` (``REPLAY_ENV``)."""
        # Live mode replays nothing: the run replaces the recording from its first turn on.
        self.cut: int | None = 0 if mode == "live" else None
        """The first turn of this run that differs from the recording (from there it is replaced)."""
        self.replayed = 0
        """Model calls answered from the recording so far."""

    def answer(
        self, record: TurnRecord, call: int, payload: dict[str, Any], model: Model
    ) -> ModelResponse | None:
        """The recorded answer to give instead of calling ``model``, or None to call it."""
        index = record.index
        if self.mode == "live" or (self.cut is not None and index >= self.cut):
            return None
        if index >= len(self.turns):
            self._past_end(index, model)
            self.cut = index
            return None
        calls = self.turns[index].model_calls
        recorded = calls[call] if call < len(calls) else None
        if recorded is not None and recorded.response is not None and recorded.request == payload:
            if not model.external:
                return None  # Python answers; answered() checks it answered the same
            self.replayed += 1
            record.replayed = True
            return response_from_event(recorded.response)
        self._drift(index, call, recorded.request if recorded is not None else {}, payload, model)
        return None

    def answered(self, record: TurnRecord, call: int, response: ModelResponse) -> None:
        """What the model answered live: a different answer means the recording ends here."""
        index = record.index
        if self.cut is not None and index >= self.cut or index >= len(self.turns):
            return
        calls = self.turns[index].model_calls
        recorded = calls[call].response if call < len(calls) else None
        if recorded is None or (recorded.content, recorded.tool_calls) != (
            response.content,
            response.tool_calls,
        ):
            self.cut = index

    def finish(self, record: TurnRecord) -> None:
        """The turn ended: one that went exactly as recorded keeps the recorded timings."""
        index = record.index
        if self.mode == "live" or (self.cut is not None and index >= self.cut) or index >= len(self.turns):
            return
        recorded = self.turns[index]
        if len(record.model_calls) != len(recorded.model_calls) or record.status != recorded.status:
            self.cut = index
            return
        adopt_timing(record, recorded)

    def decided(self, record: TurnRecord, decisions: Sequence[Decision]) -> None:
        """A paused turn goes on: its decisions are compared with the recorded ones (in order;
        the items' ids differ from run to run only in their run)."""
        index = record.index
        if self.mode == "live" or (self.cut is not None and index >= self.cut) or index >= len(self.turns):
            return
        nth = sum(1 for e in record.events if isinstance(e, RunResumed)) - 1
        recorded = [e for e in self.turns[index].events if isinstance(e, RunResumed)]
        before = recorded[nth].decisions if 0 <= nth < len(recorded) else None
        if before is None or [_decided(d) for d in before] != [_decided(d) for d in decisions]:
            self._changed_decision(index, before, decisions)

    def _changed_decision(
        self, index: int, recorded: Sequence[Decision] | None, decisions: Sequence[Decision]
    ) -> None:
        """The decisions differ from the recorded ones: raise to refuse it, else the recording ends here."""
        self.cut = index

    def output_asked(self, record: TurnRecord, asked: OutputSignature | None, model: Model) -> None:
        """What this run asks its answer to be against what the recorded turn asked: a changed
        output type, mode or set of validators is a drift (the recording ends here)."""
        recorded = self._recorded(record)
        if recorded is None:
            return
        attempts = recorded.attempts
        was = _signature(attempts[0]) if attempts else None
        if was is None and attempts:
            return  # recorded before attempts named their type: nothing to compare
        change: str | None
        if was is None:
            if asked is None or recorded.status != "ok":
                return  # no output either way, or the recorded turn ended before any answer
            change = f"this run asks for output_type {asked.output_type}, the recorded turn for none"
        elif asked is None:
            change = f"the recorded turn asked for output_type {was.output_type}, this run for none"
        else:
            change = asked.change_from(was)
        if change is not None:
            self._output_drift(record.index, change, model)

    def checked(self, record: TurnRecord, attempt: OutputChecked, model: Model) -> None:
        """This run's verdict on an answer against the recorded turn's verdict on the same
        attempt: a different verdict on the same answer (a validator that changed) is a drift."""
        recorded = self._recorded(record)
        if recorded is None:
            return
        attempts = recorded.attempts
        was = attempts[attempt.attempt - 1] if attempt.attempt <= len(attempts) else None
        if was is None or was.text != attempt.text:
            return  # another answer: the model's answer already ended the recording here
        if (was.ok, was.errors) != (attempt.ok, attempt.errors):
            self._output_drift(
                record.index,
                f"attempt {attempt.attempt} was {_verdict(was)} when recorded, {_verdict(attempt)} now",
                model,
            )

    def _recorded(self, record: TurnRecord) -> TurnRecord | None:
        """The recorded turn this one still follows, if any."""
        index = record.index
        if self.mode == "live" or (self.cut is not None and index >= self.cut) or index >= len(self.turns):
            return None
        return self.turns[index]

    def _output_drift(self, index: int, change: str, model: Model) -> None:
        """The run's output differs from the recorded turn's: raise to refuse it, else the
        recording ends here."""
        self.cut = index

    def tool_result(self, record: TurnRecord, tool_call: ToolCall) -> ToolCallFinished | None:
        """The recorded outcome of this call to a tool outside the process (an MCP server), when
        the turn still follows the recording: the server need not be running to replay it."""
        index = record.index
        if self.mode == "live" or (self.cut is not None and index >= self.cut) or index >= len(self.turns):
            return None
        for call in self.turns[index].tool_calls:
            if (call.tool_call_id, call.name, call.arguments) == (
                tool_call.id,
                tool_call.name,
                tool_call.arguments,
            ):
                return call
        return None

    def _past_end(self, index: int, model: Model) -> None:
        """A turn the recording does not hold is about to call ``model``: raise to refuse it."""

    def _drift(
        self, index: int, call: int, recorded: dict[str, Any], payload: dict[str, Any], model: Model
    ) -> None:
        """A request differs from the recorded one: raise to refuse it, else the recording ends here."""
        self.cut = index


class Recording(TurnReplay):
    """The recorded turns of one agent and where the current run stands against them.

    Plugged into each turn as its replay (see ``run.setup.Replay``) and subscribed to the agent's
    events to write the turns the recording does not hold yet."""

    def __init__(
        self,
        session: SessionBase,
        session_id: str,
        *,
        module: str = "agent",
        mode: str | None = None,
        fresh: bool = False,
    ) -> None:
        self.session = session
        self.session_id = session_id
        self.module = module
        self.mode = replay_mode() if mode is None else mode
        if self.mode not in MODES:
            raise ConfigurationError(f"replay mode {self.mode!r} is not one of {', '.join(MODES)}")
        ignore = getattr(session, "ignore_local_files", None)
        if ignore is not None and self.mode != "strict":  # strict replay writes nothing
            ignore(session_id)
        found = None if fresh else read_history(session, session_id, module)
        super().__init__(list(found) if found is not None else [], self.mode)
        self._written = False
        self._agent: Any = None
        self._unsubscribe: Any = None
        self.covered_by: Any = None
        """The agent whose recording records this one with it (a delegate's); None: its own."""
        self.covers: list[tuple[Any, Recording]] = []
        """The agents recorded with this one's, and their recordings (``recorded_tree``)."""

    @property
    def strict(self) -> bool:
        """Whether a request that differs from the recording fails instead of going live."""
        return self.mode == "strict"

    def where(self) -> str:
        """Where the recording is, for messages."""
        return self.session.describe(self.session_id)

    # -- the agent -------------------------------------------------------------------------

    def attach(self, agent: Any) -> None:
        """Follow ``agent``: write each turn the recording does not hold once it has ended."""
        self.detach()
        self._agent = agent
        self._unsubscribe = agent.subscribe(self._on_event)

    def detach(self) -> None:
        """Stop following the agent."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._agent = self._unsubscribe = None

    def resume(self) -> None:
        """The agent took over the whole recording (``%agentnb resume``): new turns continue it,
        and a turn it holds paused is written again once it goes on."""
        self.cut = next((i for i, t in enumerate(self.turns) if t.status == "paused"), len(self.turns))
        self._written = True

    def _on_event(self, event: Event) -> None:
        if not isinstance(event, (RunFinished, RunFailed, RunPaused)) or self.strict or self._agent is None:
            return
        agent = self._agent
        index = next((t.index for t in reversed(agent.history) if t.run_id == event.run_id), None)
        if index is None or self.cut is None or index < self.cut:
            return  # a turn the recording holds
        if not self._written:
            # The first turn the recording does not hold: replace it with what this run did.
            self.session.save_session_state_sync(self.session_id, **{self.module: agent})
            self._written = True
            drop = getattr(self.session, "drop_unused_blobs", None)
            if drop is not None and self.cut is not None and self.cut < len(self.turns):
                drop()  # the turns replaced may have held the only reference to a figure
        else:
            self.session.append_session_state_sync(self.session_id, _after_turn=True, **{self.module: agent})

    # -- one turn (the loop's Replay protocol) ---------------------------------------------------

    def _past_end(self, index: int, model: Model) -> None:
        if self.strict and model.external:
            raise ReplayDriftError(
                f"turn {index + 1} is past the end of the recording in {self.where()} (it holds "
                f"{len(self.turns)} turn(s)); strict replay ({REPLAY_ENV}=strict) does not call {model.label}; "
                f"{RERECORD}"
            )

    def _output_drift(self, index: int, change: str, model: Model) -> None:
        reason = self._refusal(model)
        if reason is None:
            self.cut = index
            return
        raise ReplayDriftError(
            f"replay drift at turn {index + 1}: the output differs from the recording ({change}) "
            f"in {self.where()}; {reason}"
        )

    def _refusal(self, model: Model) -> str | None:
        """Why a drift may not call ``model`` here (None: it may, and the recording ends)."""
        if self.strict:
            return f"strict replay ({REPLAY_ENV}=strict) does not call {model.label}; {RERECORD}"
        if model.external:
            offline = model.offline_reason()
            if offline:
                return f"{model.label} cannot be called here ({offline})"
        return None

    def _drift(
        self, index: int, call: int, recorded: dict[str, Any], payload: dict[str, Any], model: Model
    ) -> None:
        reason = self._refusal(model)
        if reason is None:
            self.cut = index
            return
        report = drift_report(recorded, payload, f"turn {index + 1}, model call {call + 1}", limit=24)
        head, _, diff = report.partition("\n")
        parts = part_changes(
            recorded, payload
        )  # a changed figure, said in words rather than hashes in a diff
        changed = f": {'; '.join(parts)}" if parts else ""
        raise ReplayDriftError(f"{head} in {self.where()}{changed}; {reason}\n{diff}")

    def _changed_decision(
        self, index: int, recorded: Sequence[Decision] | None, decisions: Sequence[Decision]
    ) -> None:
        if not self.strict:
            self.cut = index
            return
        now = "; ".join(_decision_text(d) for d in decisions) or "none"
        before = (
            "; ".join(_decision_text(d) for d in recorded) or "none"
            if recorded is not None
            else "the turn was still paused"
        )
        raise ReplayDriftError(
            f"turn {index + 1} goes on with other decisions than the recording in {self.where()}: "
            f"recorded {before}; now {now}. Strict replay ({REPLAY_ENV}=strict) stops here; {RERECORD}"
        )


def _decided(decision: Decision) -> tuple[Any, ...]:
    """What a decision is, without its id and time (which differ from run to run)."""
    return (decision.verdict, decision.arguments, decision.request, decision.reason, decision.value)


def _decision_text(decision: Decision) -> str:
    details = {
        "edited": decision.arguments if decision.arguments is not None else decision.request,
        "rejected": decision.reason,
        "answered": decision.value,
    }.get(decision.verdict)
    return decision.verdict if details is None else f"{decision.verdict} {details!r:.80}"


def _signature(attempt: OutputChecked) -> OutputSignature | None:
    if not attempt.fingerprint:
        return None
    return OutputSignature(attempt.output_type, attempt.mode, attempt.fingerprint, attempt.validators)


def _verdict(attempt: OutputChecked) -> str:
    if attempt.ok:
        return "accepted"
    reasons = ", ".join(f"{e.get('path') or '(answer)'}: {e.get('message')}" for e in attempt.errors[:2])
    return f"rejected ({reasons[:160]})"


def adopt_timing(record: TurnRecord, recorded: TurnRecord) -> None:
    """Give ``record`` the times ``recorded`` has (durations, start times, token counts, the
    prompt's token counts by section), event by matching event, so a replayed turn shows
    exactly as it was recorded."""
    record.started_at = recorded.started_at
    record.duration_ms = recorded.duration_ms
    record.usage = recorded.usage
    by_key = dict(zip(_keys(recorded.events), recorded.events))
    record.events[:] = [_timed(e, by_key.get(key)) for e, key in zip(record.events, _keys(record.events))]


def _keys(events: list[Event]) -> list[tuple[Any, ...]]:
    """Each event's key and how many events before it have that key: a turn that paused twice
    has two RunPaused events, each matched with its own."""
    seen: dict[tuple[Any, ...], int] = {}
    out = []
    for event in events:
        key = _key(event)
        seen[key] = seen.get(key, -1) + 1
        out.append((*key, seen[key]))
    return out


def _key(event: Event) -> tuple[Any, ...]:
    call = getattr(event, "call", None)
    tool_call_id = getattr(event, "tool_call_id", None)
    if tool_call_id is not None and tool_call_id == continuation_id(event.run_id):
        tool_call_id = _CONTINUATION  # its id names the run, which differs from run to run
    return (event.kind, call, tool_call_id, getattr(event, "label", None))


_CONTINUATION = "(the call that gives the turn to the agent in charge)"


def _timed(event: Event, recorded: Event | None) -> Event:
    if recorded is None:
        return event
    changes = {
        name: getattr(recorded, name) for name in ("at", "duration_ms", "usage") if hasattr(event, name)
    }
    if (
        isinstance(event, PromptRendered)
        and isinstance(recorded, PromptRendered)
        and recorded.tokens is not None
    ):
        # Counted when it was recorded, with the tokenizer then at hand (a replay may not start one).
        changes["tokens"] = recorded.tokens
    if (
        isinstance(event, RunResumed)
        and isinstance(recorded, RunResumed)
        and len(event.decisions) == len(recorded.decisions)
    ):
        # Decided again as recorded (``decided``): when they were decided is the recording's too.
        changes["decisions"] = tuple(
            dataclasses.replace(d, at=r.at) for d, r in zip(event.decisions, recorded.decisions)
        )
    if (
        isinstance(event, ToolCallFinished)
        and isinstance(recorded, ToolCallFinished)
        and len(event.hooks) == len(recorded.hooks)
    ):
        changes["hooks"] = tuple(
            dataclasses.replace(h, duration_ms=r.duration_ms) for h, r in zip(event.hooks, recorded.hooks)
        )
    return dataclasses.replace(event, **changes)


__all__ = ["MODES", "REPLAY_ENV", "RERECORD", "Recording", "adopt_timing", "replay_mode"]
