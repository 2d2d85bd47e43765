"""The turns the inspector follows while they run, and how their queued events become a batch.

The inspector queues each event as it is (``outbox.py``); nothing is built per event. When the
queue goes out, ``Batcher`` makes each event into its compact form and encodes the batch once.
A running turn's state changes feed its ``ChangeLog`` there, and the turn's change summary is
computed once per batch: it rides on the batch's last state change of that turn (as of the
last checkpoint, the state every patch so far led to), or, when the run ended, on its
``run_finished`` / ``run_failed`` item (as of the turn's final state). The browser applies a
batch's items at once, so it shows the same summaries as if every state change carried one.

A batch from a loop of quick turns holds many whole turns. Each one that began and ended in the
batch, with more items after it, goes out as its History row only (``wire.ROW``): nothing of it
is compacted but that row, and no change summary is computed for it; the browser fetches its
events when it is selected, as for any turn it holds only as a row. The turn after such a row
brings the state it started from on its ``run_started`` item (the browser holds no state of the
turn before it to start from).

``Batcher`` runs under the outbox's lock on whichever thread flushes (the run's, the flush thread
while a slow step runs or after a run's end was held back, or whoever sends the next message),
possibly after the next turn has begun: it reads only what does not change under it — the
events, which are the turn's record, their patches (copies, never the live state), the record's
frozen states (a finished turn's final state among them) and, for a turn still running, the
frozen state of its last checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..events import Event, PromptRendered, RunFailed, RunFinished, RunPaused, RunStarted, StateChanged
from ..state.diff import ChangeLog
from . import run_tree, wire
from .compact_events import compact_event
from .compact_prompt import compact_tokens
from .compact_state import compact_changes, summarize_changes
from .history_row import turn_summary
from .lazy import lazy_form
from .outbox import Text, encode

if TYPE_CHECKING:
    from ..agent import Agent
    from ..history.history import TurnRecord

NO_CHANGES: Mapping[str, Any] = {"keys": [], "paths": [], "more": 0}
"""The change summary of a turn that wrote nothing (only ever encoded, never changed)."""


class Run:
    """One turn the inspector follows while it runs."""

    __slots__ = ("turn", "run_id", "record", "text", "log", "prompt")

    def __init__(self, turn: int, run_id: str, record: TurnRecord | None) -> None:
        self.turn = turn
        """Its index in the agent's history."""
        self.run_id = run_id
        self.record = record
        """Its record in the history (None if it could not be found)."""
        self.text: list[str] = []
        """Text streamed so far, as chunks (joined only for a snapshot)."""
        self.log: ChangeLog | None = None
        """Its state changes so far, as the batches sent so far carried them."""
        self.prompt: PromptRendered | None = None
        """The prompt it was sent with (a prompt counted again at the end sends its new counts)."""

    def seen(self, record: TurnRecord) -> None:
        """Followed from the middle of the run: the changes it made before are in its record."""
        log = self.log = ChangeLog(record.frozen_start)
        for change in record.state_changes:
            log.add(change.patch, change.cause.label())


class Batcher:
    """Makes a batch's body from its queued items: events (of the runs in ``runs``, by run id)
    and streamed ``Text``."""

    def __init__(self, agent: Agent, runs: dict[str, Run]) -> None:
        self.agent = agent
        self.runs = runs
        """The runs followed, by run id: the subscriber adds each at its start, a batch drops it
        once it has sent its end."""
        self.finished: tuple[TurnRecord, Mapping[str, Any]] | None = None
        """The change summary of the turn that finished last, as its end item carried it."""

    def __call__(self, items: list[Any]) -> tuple[bytes, int]:
        out: list[dict[str, Any]] = []
        owed: dict[Run, dict[str, Any]] = {}  # a running turn -> its last state change here
        runs = self.runs
        items, rows = _fold(items, runs)
        row_turns = {run.turn for run in rows}
        for event in items:
            if type(event) is Text:
                out.append(event.item())
                continue
            run = runs[event.run_id]
            if run in rows:  # only its end is left
                assert run.record is not None  # (_fold takes only runs with a record)
                out.append({wire.TURN_INDEX: run.turn, wire.ROW: turn_summary(run.record)})
                del runs[event.run_id]
                continue
            kind = type(event)
            body = compact_event(event)
            entry = {wire.TURN_INDEX: run.turn, wire.EVENT_BODY: body}
            if kind is StateChanged:
                log = run.log
                if log is None and run.record is not None:
                    log = run.log = ChangeLog(run.record.frozen_start)
                if log is not None:
                    log.add(event.patch, event.cause.label())
                    owed[run] = body
            elif kind is PromptRendered:
                run.prompt = event
            elif kind is RunFinished or kind is RunFailed:
                owed.pop(run, None)  # the end carries the final summary
                self._end(run, body)
                del runs[event.run_id]
            elif kind is RunPaused:  # it may go on (RunResumed, the same run id): still followed
                owed.pop(run, None)
                self._end(run, body)
            elif kind is RunStarted and run.turn - 1 in row_turns and run.record is not None:
                # The turn before went out as a row: the browser has no state to start from.
                entry[wire.STATE], stubs = lazy_form(run.record.state_start)
                if stubs:
                    entry[wire.STUBS] = stubs
            out.append(entry)
        for run, body in owed.items():
            if run.log is not None:
                body[wire.CHANGES] = self._so_far(run.log)
        return encode({wire.ITEMS: out}), len(out)

    def _so_far(self, log: ChangeLog) -> Mapping[str, Any]:
        """A running turn's changes up to its last checkpoint (the frozen state it left)."""
        image = self.agent.state.journal.image
        after = image if image is not None else self.agent.session_state
        paths = log.paths(after)
        return summarize_changes(log.keys(after, paths), paths)

    def _end(self, run: Run, body: dict[str, Any]) -> None:
        """A run's end: the turn's change summary, whether it was replayed, and its prompt's
        counts if they were counted again."""
        record = run.record
        if record is None:
            return
        log = run.log
        if log is None:
            done = NO_CHANGES
        else:
            # The record's final state, not the live one: the next turn may have begun.
            after = record.frozen_after
            paths = log.paths(after)
            done = summarize_changes(log.keys(after, paths), paths)
        self.finished = (record, done)
        body[wire.CHANGES] = done
        body["replayed"] = record.replayed
        if record.children:  # a turn that delegated: its tree of runs (ipython/run_tree.py)
            body[run_tree.RUN_TREE] = run_tree.run_tree(record)
        prompt = record.prompt
        if prompt is not None and prompt is not run.prompt:
            # Counted again at the end (the tokenizer came up during the turn): the new counts.
            body["prompt_tokens"] = compact_tokens(prompt.tokens)

    def changes(self, record: TurnRecord) -> Mapping[str, Any]:
        """What ``record`` changed, for a snapshot or a turn reply: so far while it runs; for the
        turn that finished last, the summary its end carried; else computed once more."""
        if record.status == "running":
            image = self.agent.state.journal.image
            return compact_changes(record.changes(image if image is not None else self.agent.session_state))
        finished = self.finished
        if finished is not None and finished[0] is record:
            return finished[1]
        log = ChangeLog(record.frozen_start)
        for change in record.state_changes:
            log.add(change.patch, change.cause.label())
        after = record.frozen_after
        paths = log.paths(after)  # once, for the keys too (``record.changes()`` computes them twice)
        done = summarize_changes(log.keys(after, paths), paths)
        self.finished = (record, done)
        return done


def _fold(items: list[Any], runs: Mapping[str, Run]) -> tuple[list[Any], set[Run]]:
    """The turns of ``items`` to send as their History rows — begun and ended among them, with
    more items after them (the latest turn of a batch goes out whole) — and ``items`` with each
    of those turns cut down to its end (a run's items are consecutive: an agent runs one turn
    at a time)."""
    rows: set[Run] = set()
    ends: dict[str, int] = {}
    spans: list[tuple[int, int]] = []
    last = len(items) - 1
    for at in range(last, -1, -1):
        event = items[at]
        kind = type(event)
        if kind is RunStarted:
            end = ends.get(event.run_id)
            if end is not None:
                rows.add(runs[event.run_id])
                spans.append((at, end))
        elif (
            (kind is RunFinished or kind is RunFailed) and at < last and runs[event.run_id].record is not None
        ):
            ends[event.run_id] = at
    if not spans:
        return items, rows
    kept: list[Any] = []
    start = 0
    for first, end in reversed(spans):
        kept += items[start:first]
        kept.append(items[end])
        start = end + 1
    kept += items[start:]
    return kept, rows


def follow(event: Event, history: Sequence[TurnRecord]) -> Run | None:
    """The ``Run`` of a turn the inspector has not followed yet: one starting now, or (subscribed
    in the middle of a run) the history's last turn; None for a run not in the history."""
    if isinstance(event, RunStarted):
        turn = event.turn
        record = history[turn] if 0 <= turn < len(history) and history[turn].run_id == event.run_id else None
        return Run(turn, event.run_id, record)
    if not len(history) or history[-1].run_id != event.run_id:
        return None
    record = history[-1]
    run = Run(record.index, event.run_id, record)
    run.seen(record)
    return run


__all__ = ["NO_CHANGES", "Batcher", "Run", "follow"]
