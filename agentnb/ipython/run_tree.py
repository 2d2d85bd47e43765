"""What the inspector is sent about a turn's tree of runs: the team turn, its delegations, the
member runs and their own delegations, at any depth.

Everything here is computed from the turn records and their events (lineage on ``RunStarted``,
``child_run_id`` on the delegate call, ``merge`` causes on the parent's state changes), so the
browser only renders it:

- ``run_tree(turn)``: one node per run (path, status, duration, own / total tokens, the
  delegation that started it with its task and the duration of the call that ran it, the ledger
  of what crossed the boundary) nested in call order; ``lanes`` for the delegations of one
  response that ran side by side; ``routed_to`` on a turn the agent in charge answered.
- ``run_message(turn, run_id)``: the ``run`` reply to ``need_run``: one run of the tree in the
  shape of a ``turn`` reply (events, state, change summary), so every tab can be re-scoped to
  it, plus its breadcrumb and its prompt's sections labelled by what produced them (its own
  options, and the task and blocks the team added to its message), each with its tokens. Its
  state goes lazily, as a turn's (``lazy.py``): a ``need_subtree`` naming the ``run_id`` brings
  the rest of it.
- ``Progress``: while a turn runs, its member runs' starts and ends, and their streamed text.

Wire names for these live here (``TREE_WIRE``), apart from ``wire.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..events import (
    ModelRequested,
    ModelResponded,
    PromptRendered,
    PromptSection,
    RunFailed,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from ..history.render import change_text, value_text
from . import wire
from .compact_events import compact_event
from .compact_state import compact_changes, turn_state
from .history_row import routed_run
from .lazy import lazy_form

if TYPE_CHECKING:
    from ..history.history import TurnRecord
    from .outbox import Outbox

RUN_TREE = "run_tree"
"""Key of a snapshot's or turn reply's run tree (only for a turn that delegated)."""
NEED_RUN = "need_run"
"""Browser -> kernel: send run ``run_id`` of turn ``turn`` (a node of its tree)."""
RUN = "run"
"""Kernel -> browser: one run of a turn's tree (see ``run_message``)."""
RUN_ID = "run_id"
"""The run a ``need_run`` / ``run`` message is about."""
IN_CHARGE = "in_charge"
"""The synced trait naming the agent a handoff left answering this agent's turns (header), ""
when it answers them itself. A trait, not a part of the snapshot: a view that took every event
live keeps the snapshot it has, and would never hear of a handoff."""

RUN_PROGRESS = "run_progress"
"""Kernel -> browser, while a turn runs: a run below it started or ended (``Progress``)."""
RUN_TEXT = "run_text"
"""Batch item kind: text a run below the turn streamed (its ``run_id``, ``path``, ``call``, ``text``)."""
LIVE_RUNS = "live_runs"
"""Key of a snapshot taken while a turn runs: the runs below it so far, with their text."""

TREE_WIRE: dict[str, str] = {
    "RUN_TREE": RUN_TREE,
    "NEED_RUN": NEED_RUN,
    "RUN": RUN,
    "RUN_ID": RUN_ID,
    "IN_CHARGE": IN_CHARGE,
    "RUN_PROGRESS": RUN_PROGRESS,
    "RUN_TEXT": RUN_TEXT,
    "LIVE_RUNS": LIVE_RUNS,
}
"""The names above, as the browser spells them."""


def run_tree(turn: TurnRecord) -> dict[str, Any]:
    """The turn and every run below it, nested in call order."""
    return _node(turn, None, None)


def _node(run: TurnRecord, parent: TurnRecord | None, call: ToolCallFinished | None) -> dict[str, Any]:
    calls = {c.tool_call_id: c for c in run.tool_calls}
    starts = {e.tool_call_id: e.at for e in run.events if isinstance(e, ToolCallStarted)}
    children = []
    for child in run.children:
        started = child.started
        via = calls.get(started.parent_tool_call_id or "") if started is not None else None
        children.append(_node(child, run, via))
    node: dict[str, Any] = {
        "run_id": run.run_id,
        "path": list(run.path),
        "agent": run.agent,
        "turn": run.index,
        "status": run.status,
        "error": run.error,
        # As the run's events carry it (the header shows those): one value, formatted once, in
        # the browser (js/format.js ms), so the tree and the header never round it apart.
        "duration_ms": run.duration_ms,
        "tokens_own": run.usage.total_tokens,
        "tokens_total": run.usage_total.total_tokens,
        "estimated": run.usage.estimated,
        "model_calls": len(run.model_calls),
        "tool_calls": [
            {
                "id": c.tool_call_id,
                "name": c.name,
                "error_kind": c.error_kind,
                "child_run_id": c.child_run_id,
                "hooks": [{"name": h.name, "outcome": h.outcome} for h in c.hooks],
                "answered_by": c.answered_by,
            }
            for c in run.tool_calls
        ],
        "children": children,
    }
    if parent is not None:
        node["delegation"] = {
            "tool": call.name if call is not None else None,
            "tool_call_id": call.tool_call_id if call is not None else None,
            "task": run.message,
            "answer": run.content,
            # The parent's tool call that ran it: hooks, the run, and, for delegations of one
            # response run side by side, the wait until its result was taken in call order.
            "call_ms": call.duration_ms if call is not None else None,
        }
        node["ledger"] = ledger(parent, run, call)
    routed = routed_run(run)
    if routed is not None:  # the agent in charge answered: no model call of this run's
        node["routed_to"] = routed.run_id
    lanes = _lanes(run, starts)
    if lanes:
        node["lanes"] = lanes
    return node


def ledger(parent: TurnRecord, child: TurnRecord, call: ToolCallFinished | None) -> dict[str, Any]:
    """What crossed the boundary of one delegation: ``down`` (the state the member started
    from), ``changed`` (its own changes, with authors), ``up`` (what the parent took, each path
    with its whole chain) and ``refused`` (why not, when a merge was refused)."""
    down = [{"key": k, "value": value_text(v, 120)} for k, v in child.state_start.items()]
    changed = [{"text": change_text(c), "authors": list(c.authors)} for c in child.changes().keys]
    up = []
    call_id = call.tool_call_id if call is not None else None
    for change in parent.state_changes:
        cause = change.cause
        if cause.kind == "merge" and cause.tool_call_id == call_id and cause.name == child.agent:
            for op in change.patch:
                up.append(
                    {
                        "op": op["op"],
                        "path": op["path"],
                        "value": value_text(op.get("value"), 120),
                        "chain": cause.chain(),
                    }
                )
    refused = call.error if call is not None and call.error_kind == "merge_conflict" else None
    return {"down": down, "changed": changed, "up": up, "refused": refused}


def _lanes(run: TurnRecord, starts: dict[str, float]) -> list[dict[str, Any]]:
    """The delegations of one response that ran side by side: one lane per member with its model
    and tool calls as bars (ms from the first start), and the order their changes were applied."""
    by_call: dict[int, list[tuple[TurnRecord, ToolCallFinished]]] = {}
    calls = {c.tool_call_id: c for c in run.tool_calls}
    for child in run.children:
        started = child.started
        finished = calls.get(started.parent_tool_call_id or "") if started is not None else None
        if finished is not None:
            by_call.setdefault(finished.call, []).append((child, finished))
    out = []
    for call, children in sorted(by_call.items()):
        if len(children) < 2:
            continue
        origin = min(c.started_at for c, _ in children)
        lanes = []
        for order, (child, finished) in enumerate(children, 1):
            lanes.append(
                {
                    "run_id": child.run_id,
                    "agent": child.agent,
                    "merge_order": order,
                    "conflict": finished.error_kind == "merge_conflict",
                    "start_ms": round((child.started_at - origin) * 1000, 3),
                    "end_ms": round((child.started_at - origin) * 1000 + child.duration_ms, 3),
                    "bars": list(_bars(child.events, origin)),
                }
            )
        out.append({"call": call, "lanes": lanes})
    return out


def _bars(events: Iterable[Any], origin: float) -> Iterable[dict[str, Any]]:
    requested: dict[int, float] = {}
    started: dict[str, float] = {}
    for e in events:
        if isinstance(e, ModelRequested):
            requested[e.call] = e.at
        elif isinstance(e, ModelResponded) and e.call in requested:
            start = (requested[e.call] - origin) * 1000
            yield {
                "kind": "model",
                "label": f"model call {e.call + 1}",
                "start_ms": round(start, 3),
                "end_ms": round(start + e.duration_ms, 3),
                "duration_ms": e.duration_ms,  # as its event says (the bar's title shows it)
            }
        elif isinstance(e, ToolCallStarted):
            started[e.tool_call_id] = e.at
        elif isinstance(e, ToolCallFinished) and e.tool_call_id in started:
            start = (started[e.tool_call_id] - origin) * 1000
            yield {
                "kind": "tool",
                "label": e.name,
                "start_ms": round(start, 3),
                "end_ms": round(start + e.duration_ms, 3),
                "duration_ms": e.duration_ms,
                "error": e.error_kind,
            }


class LiveRun:
    """A run below a turn, followed while the turn runs."""

    __slots__ = (
        "turn",
        "run_id",
        "path",
        "parent",
        "call",
        "order",
        "status",
        "duration_ms",
        "text",
        "member",
    )

    def __init__(self, turn: int, event: RunStarted, call: tuple[int, int] | None) -> None:
        self.turn = turn
        """The turn it is below."""
        self.run_id = event.run_id
        self.path = list(event.path)
        self.parent = event.parent_run_id
        self.call = call[0] if call is not None else None
        """The model call of its parent whose response delegated to it (None: not known)."""
        self.order = call[1] if call is not None else None
        """Where the call that started it is among that response's calls (lanes go in this order)."""
        self.status = "running"
        self.duration_ms: float | None = None
        self.text: list[str] = []
        """Its text streamed so far (for a snapshot taken while it runs)."""
        self.member = {RUN_ID: self.run_id, wire.PATH: self.path}
        """What its ``run_text`` items carry to name it."""

    def item(self) -> dict[str, Any]:
        """As a snapshot lists it (``LIVE_RUNS``)."""
        return {
            RUN_ID: self.run_id,
            wire.PATH: self.path,
            "parent": self.parent,
            "call": self.call,
            "order": self.order,
            "status": self.status,
            "duration_ms": self.duration_ms,
            "text": "".join(self.text),
        }


class Progress:
    """Follows the runs below an agent's turns as they happen (``subscribe(children=True)``), so
    a turn's Runs tab shows its member runs start and end while it runs, and each member's text
    as it streams (the whole tree comes with the turn's end). Start and end go out at once
    (``run_progress``); streamed text is queued like the turn's own (``outbox.add_text``), so it
    goes out with the next batch, joined per run."""

    def __init__(
        self, runs: Mapping[str, Any], outbox: Outbox, post: Callable[[dict[str, Any]], None]
    ) -> None:
        self.runs = runs
        """The agent's own runs followed (run id -> something with its ``turn``)."""
        self.outbox = outbox
        self.post = post
        self.live: dict[str, LiveRun] = {}
        """Runs below the turn running now (or the last one), by run id."""
        self.calls: dict[str, tuple[int, int]] = {}
        """Tool call id -> (the model call whose response made it, its place among that response's
        calls as they started) (this turn's runs)."""
        self.started: dict[tuple[str, int], int] = {}
        """(run id, model call) -> tool calls started so far."""

    def own(self, event: RunStarted | ToolCallStarted) -> None:
        """Take a start of one of the agent's own runs or tool calls (the inspector's subscriber
        passes these on; the rest of its own events are not needed here)."""
        if type(event) is ToolCallStarted:
            self._call_started(event)
        else:  # a new turn: what was kept of the one before goes
            self.calls.clear()
            self.started.clear()
            self.live.clear()

    def __call__(self, event: Any) -> None:
        """Take one event of the runs below the agent's (``subscribe(children="only")``)."""
        kind = type(event)
        if kind is TextDelta:
            live = self.live.get(event.run_id)
            if live is not None:
                live.text.append(event.text)
                self.outbox.add_text(live.turn, live, event.call, event.text, live.member)
            return
        if kind is ToolCallStarted:
            self._call_started(event)
            return
        message = self.message(event)
        if message is not None:
            self.post(message)

    def _call_started(self, event: ToolCallStarted) -> None:
        key = (event.run_id, event.call)
        place = self.started[key] = self.started.get(key, -1) + 1
        self.calls[event.tool_call_id] = (event.call, place)

    def message(self, event: Any) -> dict[str, Any] | None:
        """The ``run_progress`` message for a child run's start or end, else None."""
        if isinstance(event, RunStarted) and event.parent_run_id is not None:
            parent = self.runs.get(event.parent_run_id)
            above = self.live.get(event.parent_run_id)
            turn = parent.turn if parent is not None else above.turn if above is not None else None
            if turn is None:
                return None
            live = self.live[event.run_id] = LiveRun(
                turn, event, self.calls.get(event.parent_tool_call_id or "")
            )
            return {
                wire.KIND: RUN_PROGRESS,
                wire.TURN_INDEX: turn,
                RUN_ID: event.run_id,
                wire.PATH: live.path,
                "parent": live.parent,
                "call": live.call,
                "order": live.order,
                "status": "running",
            }
        if isinstance(event, RunResumed):  # a member's paused run goes on
            resumed = self.live.get(event.run_id)
            if resumed is not None and resumed.status == "paused":
                resumed.status = "running"
            return None
        if isinstance(event, (RunFinished, RunFailed, RunPaused)):
            ended = self.live.get(event.run_id)
            if ended is None or ended.status != "running":
                return None
            ended.status = {RunFinished: "ok", RunFailed: "failed"}.get(type(event), "paused")
            ended.duration_ms = event.duration_ms
            return {
                wire.KIND: RUN_PROGRESS,
                wire.TURN_INDEX: ended.turn,
                RUN_ID: event.run_id,
                "status": ended.status,
                "duration_ms": ended.duration_ms,
            }
        return None

    def snapshot(self, turn: int) -> list[dict[str, Any]]:
        """The runs below turn ``turn`` so far, with their text, for a snapshot taken while it runs."""
        return [live.item() for live in list(self.live.values()) if live.turn == turn]


def find_run(turn: TurnRecord, run_id: str) -> TurnRecord:
    """The run ``run_id`` of a turn's tree."""
    for run in turn.walk():
        if run.run_id == run_id:
            return run
    raise LookupError(f"turn {turn.index + 1} has no run {run_id!r} in its tree")


def run_message(turn: TurnRecord, run_id: str, agent: Any) -> dict[str, Any]:
    """One run of the tree, in the shape of a ``turn`` reply, with its breadcrumb and labelled
    prompt sections."""
    run = find_run(turn, run_id)
    # Lazily, as a turn's: the browser asks for the rest by turn and run (``need_subtree``).
    state, stubs = lazy_form(run_state(turn, run_id, agent))
    return {
        wire.KIND: RUN,
        wire.TURN_INDEX: turn.index,
        RUN_ID: run.run_id,
        wire.PATH: list(run.path),
        "breadcrumb": " ▸ ".join(run.path) + f" (its turn {run.number})",
        wire.EVENTS: [compact_event(e) for e in run.events],
        wire.STATE: state,
        wire.STUBS: stubs,
        wire.CHANGES: compact_changes(run.changes()),
        "sections": prompt_sections(run.prompt),
        # A member run's requests come with it (the Request tab asks the kernel by turn index).
        "requests": {str(c.index): c.request for c in run.model_calls},
    }


def run_state(turn: TurnRecord, run_id: str, agent: Any) -> Any:
    """The state run ``run_id`` of a turn's tree ended with: a member's record keeps the state it
    ran on (its view of the parent's), not its own now."""
    run = find_run(turn, run_id)
    return turn_state(turn, agent) if run is turn else run.state_after


def prompt_sections(prompt: PromptRendered | None) -> list[dict[str, Any]]:
    """The run's prompt as sent, part by part, each with its tokens: the system prompt's sections
    (by option), the messages a handoff gave before the user message, and the user message's
    parts (the task and what the team added, by option)."""
    if prompt is None:
        return []
    tokens = prompt.tokens

    def parts(
        message: str, sections: tuple[PromptSection, ...], counts: tuple[int, ...]
    ) -> list[dict[str, Any]]:
        return [
            {
                "message": message,
                "source": s.source,
                "text": s.text,
                "tokens": counts[i] if i < len(counts) else None,
            }
            for i, s in enumerate(sections)
        ]

    out = parts("system", prompt.sections, tokens.sections if tokens is not None else ())
    out += parts("history", prompt.earlier_sections, tokens.earlier_sections if tokens is not None else ())
    if prompt.user_sections:
        out += parts("user", prompt.user_sections, tokens.user_sections if tokens is not None else ())
    else:
        out.append(
            {
                "message": "user",
                "source": "user message",
                "text": prompt.user_prompt,
                "tokens": tokens.user if tokens is not None else None,
            }
        )
    return out


__all__ = [
    "IN_CHARGE",
    "LIVE_RUNS",
    "NEED_RUN",
    "LiveRun",
    "Progress",
    "RUN",
    "RUN_ID",
    "RUN_PROGRESS",
    "RUN_TEXT",
    "RUN_TREE",
    "TREE_WIRE",
    "find_run",
    "ledger",
    "prompt_sections",
    "run_message",
    "run_state",
    "run_tree",
]
