"""The live inspector: an anywidget that follows an agent's events.

``Inspector.for_agent(agent)`` returns the one inspector of an agent; displaying it in several
cells shows several views of the same widget. The kernel side keeps almost nothing: it subscribes
to the agent and queues each event as it is; the queue goes to the browser as one message every few
tens of milliseconds while events come, and at the end of a run unless one went out just before
(``outbox.py``): a loop of quick turns sends about twenty messages a second, whole turns in them as
their History rows but the latest. The events are made into small JSON-safe dicts and encoded then,
once per batch (``live.py``). The browser keeps the turns it has seen and applies each event to
them — a state change arrives as its JSON patch, never as the whole state, and each batch brings
the turn's change summary so far (computed here, once per batch, by ``agentnb.state.diff``). A snapshot
(the last turns' summary rows, the last turn, its state) sits in a synced trait, refreshed when the
widget is displayed and at the end of a cell that changed something (in a Run All of quick cells at
most every ``pacing.SNAPSHOT_SECONDS`` and once after its last cell, ``pacing.py``), so a new view
renders at once even while the kernel is busy with queued cells. Older summary rows, other whole
turns and model request payloads are sent only when the browser asks for them (History, time
travel, the Request tab), and a large state only as far as it is shown (``lazy.py``), so a long
history or a large state costs little per update.

A paused turn's pending items show as cards at the top of every view (``pending_cards.py``): the
person decides there, the kernel decides through the core's own API and carries the turn on
(``card_decisions.py``), and the views follow it live.

The front end is built from the ES modules in ``js/`` (at the repository root) into
``static/inspector.js`` (``make js``); its styles are ``static/inspector.css``; the wire names
both sides use are in ``wire.py``; the compact forms of events, prompts, state changes and a
request's images in ``compact_events.py``, ``compact_prompt.py``, ``compact_state.py`` and
``compact_parts.py``; a turn's History row in ``history_row.py``; what the kernel answers when a
view asks in ``requests.py``.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import anywidget
import traitlets

from ..events import (
    Event,
    OutputDelta,
    RunFailed,
    RunFinished,
    RunPaused,
    RunStarted,
    TextDelta,
    ToolCallStarted,
)
from ..state.diff import make_patch
from . import pending_cards, run_tree, wire
from .compact_events import compact_event
from .compact_state import compact_edit, turn_state
from .history_row import turn_summary
from .images import static_images
from .lazy import is_small, lazy_form
from .live import Batcher, Run, follow
from .outbox import Outbox, encode
from .pacing import Pace
from .record import static_view
from .requests import STATIC, Requests
from .rows import SummaryRows
from .static_outputs import StaticOutputs

if TYPE_CHECKING:
    from ..agent import Agent


def _loader() -> str:
    """The module each inspector carries (``static/loader.js``): it loads the front end from the
    Jupyter server extension, or from the kernel (``wire.FRONT_END``), so saved widget state holds
    about 3 KB of it per inspector instead of the whole front end."""
    version = hashlib.sha256(
        (STATIC / "inspector.js").read_bytes() + (STATIC / "inspector.css").read_bytes()
    ).hexdigest()[:16]
    return (STATIC / "loader.js").read_text(encoding="utf-8").replace("__VERSION__", version)


def model_info(agent: Agent) -> dict[str, Any]:
    """Label, kind and origin of the agent's model, for the header."""
    model = agent.model
    origin = getattr(model, "origin", None)
    return {
        "label": str(model.label),
        "kind": str(getattr(model, "kind", "model")),
        "origin": None if origin is None else str(origin),
    }


SNAPSHOT_TURNS = 20
"""Turns whose summary rows a snapshot carries (the last ones); older rows are sent on request."""

ROWS_PAGE = 100
"""Summary rows sent per ``need_rows`` request."""

_ENDS = (RunFinished, RunFailed, RunPaused)


class Inspector(Requests, anywidget.AnyWidget):
    """A live view of one agent: prompt, request, tool calls, state, context and history of its
    turns."""

    _esm = _loader()

    agent_name = traitlets.Unicode("").tag(sync=True)
    """The agent's name (header)."""
    model_info = traitlets.Dict().tag(sync=True)
    """The agent's model: label, kind (scripted/replay/local/openai) and origin, if any."""
    view_snapshot = traitlets.Bytes(b"").tag(sync=True)
    """The latest snapshot (see ``snapshot``) as UTF-8 JSON, for views created from now on."""
    widget_id = traitlets.Unicode("").tag(sync=True)
    """This widget's model id: the front end checks its model's connection to the kernel."""
    in_charge = traitlets.Unicode("").tag(sync=True)  # named run_tree.IN_CHARGE
    """The agent a handoff left answering this agent's turns ("" when it answers them itself)."""

    _by_agent: ClassVar[weakref.WeakKeyDictionary[Any, Inspector]] = weakref.WeakKeyDictionary()

    def __init__(self, agent: Agent, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.agent = agent
        self.agent_name = agent.name
        self.model_info = model_info(agent)
        self.widget_id = self.model_id
        self._charge()
        self._runs: dict[str, Run] = {}
        """The runs followed, by run id (until a batch has sent their end)."""
        self._batcher = Batcher(agent, self._runs)
        self._outbox = Outbox(lambda content, buffers: self.send(content, buffers), self._batcher)
        self._model_info = self.model_info
        """The trait's value, read without traitlets at each run's start."""
        self._model_seen = agent.model
        """The model ``_model_info`` was made from."""
        self._stale = False
        """Something changed since the snapshot in the trait was made."""
        self._publishing = threading.RLock()
        """Held while a snapshot is made and published (the timer thread's refresh included)."""
        self._pace = Pace(self._refresh_due, self._outbox.now, aside=self._refresh_aside)
        """When a cell's end refreshes the snapshot (``pacing.py``)."""
        self._rows_kept = SummaryRows()
        """The snapshot's History rows as encoded (``rows.py``)."""
        self._preview_message: str | None = None
        """The message last previewed in the browser: previews after an edit use it."""
        self._cards_sent = pending_cards.decisions_key(agent)
        """What the pending cards the views hold were made from (``pending_cards.decisions_key``)."""
        self.on_msg(self._on_msg)
        self._on_event = self._follower()
        self._unsubscribe = agent.subscribe(self._on_event)
        self._progress = run_tree.Progress(self._runs, self._outbox, self._post)
        self._unsubscribe_children = agent.subscribe(self._progress, children="only")
        self._unsubscribe_edits = agent.on_edit(self._on_edit)
        self._shell = _shell()
        self._outputs = StaticOutputs(self.model_id, self._shell)
        """The outputs ``show`` made (their static view is kept current where no front end renders it)."""
        if self._shell is not None:
            self._shell.events.register("post_run_cell", self._after_cell)

    @classmethod
    def for_agent(cls, agent: Agent) -> Inspector:
        """The inspector of ``agent``, created on first use."""
        inspector = cls._by_agent.get(agent)
        if inspector is None or inspector.agent is not agent:
            inspector = cls(agent)
            cls._by_agent[agent] = inspector
        return inspector

    def __repr__(self) -> str:
        # Deterministic text/plain for nbval: no memory address, nothing that changes per run.
        return f"Inspector(agent={self.agent.name!r}, turns={len(self.agent.history)})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # The trait update goes out before the display message, so the view this display
        # creates starts from the agent as it is now.
        self.publish_snapshot()
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            # Where the live view cannot render (GitHub, nbconvert HTML, an untrusted notebook),
            # the same output shows this static view instead.
            data["text/html"] = static_view(self.agent)
        return bundle

    @property
    def display_id(self) -> str:
        """The display id of the outputs ``show`` makes."""
        return self._outputs.display_id

    def show(self) -> None:
        """Display the inspector under the current cell. Where no front end renders it (a notebook
        run by ``jupyter nbconvert --execute``, papermill, nbclient) the static view the output
        carries is brought up to date after each cell (``static_outputs.py``)."""
        from IPython.display import display

        display(self, display_id=self.display_id)
        self._outputs.displayed(self.agent)

    def _widget_data(self) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_()
        assert bundle is not None  # None only for a widget without a view
        return bundle[0] if isinstance(bundle, tuple) else bundle

    def close(self) -> None:
        """Stop following the agent and close the widget."""
        self._unsubscribe()
        self._unsubscribe_children()
        self._unsubscribe_edits()
        self._pace.cancel()
        if self._shell is not None:
            self._shell.events.unregister("post_run_cell", self._after_cell)
            self._shell = None  # closed once: the widget's __del__ closes it again
        if Inspector._by_agent.get(self.agent) is self:
            del Inspector._by_agent[self.agent]
        super().close()

    # -- kernel -> browser ----------------------------------------------------------------

    @property
    def seq(self) -> int:
        """Event items sent so far (the number of the last one)."""
        return self._outbox.seq

    @property
    def messages_sent(self) -> int:
        """Messages sent to the browser (all kinds, trait updates included)."""
        return self._outbox.messages

    @property
    def bytes_sent(self) -> int:
        """Bytes of their JSON bodies (the kernel adds its envelope)."""
        return self._outbox.bytes

    @property
    def last_message_bytes(self) -> int:
        """Bytes of the last body sent."""
        return self._outbox.last_bytes

    def _post(self, message: dict[str, Any]) -> None:
        """Send ``message`` (a dict with its kind) after the events queued before it."""
        self._outbox.post({wire.KIND: message[wire.KIND]}, message)

    def publish_snapshot(self, absorb: bool = False, on_loop: bool = True) -> None:
        """Put a fresh snapshot in the synced trait (``absorb``: see ``_after_cell``; ``on_loop``
        False: from a thread other than the kernel's main one)."""
        with self._publishing:
            data = self.snapshot(absorb)
            self._outbox.count(data)
            self._stale = False
            self._pace.done(on_loop)
            self.view_snapshot = data

    def _after_cell(self, _result: Any = None) -> None:
        """After a cell that changed something, a view created from now on starts from it: the
        snapshot is refreshed at once, or in a Run All of quick cells a few times a second and
        after its last cell (``pacing.py``).

        Events still queued at a refresh (a run's end held back because a batch went out less
        than ``FLUSH_SECONDS`` before) are not sent as a batch of their own when every run they
        belong to has ended: the snapshot covers them, and open views take it in their place
        (its number is past theirs), so the refresh sends one message.

        In a kernel whose cells no notebook front end runs (``jupyter nbconvert --execute``,
        papermill, nbclient) it is refreshed at once: those keep only the messages of the cell
        running, and save the trait as they got it in the notebook's widget state."""
        self._charge()  # a reset, or a handoff made outside a turn the inspector followed
        self._cards()  # a decision taken in Python
        if self._stale:
            if getattr(self._outputs.shell, "kernel", None) is not None and not self._outputs.rendered():
                self._refresh_due()
            else:
                self._pace.cell_ended()
        self._outputs.refresh(self.agent, self._widget_data)

    def _charge(self) -> None:
        """Say who answers the agent's turns now (a handoff may have left another in charge)."""
        name = self.agent.agent_in_charge().name if getattr(self.agent, "in_charge", None) is not None else ""
        if name != self.in_charge:
            self.in_charge = name

    def _cards(self) -> None:
        """Send the pending cards again when a decision was taken since they were sent."""
        key = pending_cards.decisions_key(self.agent)
        if key != self._cards_sent:
            self._cards_sent = key
            self._post(pending_cards.pending_message(self.agent))

    def _refresh_due(self) -> None:
        if self._stale:
            self.publish_snapshot(absorb=True)

    def _refresh_aside(self) -> bool:
        """The refresh a blocked event loop owes, made from a timer thread (``pacing.py``): only
        while no turn of the agent runs (it reads finished turns only); False if one does."""
        history = self.agent.history
        if self.agent.running or (len(history) and history[-1].status == "running"):
            return False
        if self._stale:
            self.publish_snapshot(absorb=True, on_loop=False)
        return True

    def _absorb(self, items: list[Any]) -> bool:
        """Whether a snapshot can stand for the queued ``items``: each run followed has its end
        among them. If so, those runs are no longer followed."""
        runs = self._runs
        ended = {item.run_id for item in items if isinstance(item, _ENDS)}
        if not ended.issuperset(runs):
            return False
        # An open view merges the snapshot's rows into its own (js/snapshot.js): a turn in the
        # queue older than the snapshot's rows would be missing from it, so such a queue is sent.
        first = len(self.agent.history) - SNAPSHOT_TURNS
        if any(runs[run_id].turn < first for run_id in ended if run_id in runs):
            return False
        for run_id in ended:
            runs.pop(run_id, None)
        return True

    def _follower(self) -> Callable[[Event], None]:
        """The agent's subscriber: it queues each event as it is, and the batch the event goes
        out in is built at the flush. A closure over what it reads: it runs for every event of
        every turn."""
        runs, outbox = self._runs, self._outbox
        add = outbox.add

        def on_event(event: Event) -> None:
            run = runs.get(event.run_id)
            if run is None:
                run = self._follow(event)
                if run is None:
                    return
            if type(event) is TextDelta:  # final classes: identity is the cheapest test
                run.text.append(event.text)
                outbox.add_text(run.turn, run, event.call, event.text)
                return
            kind = type(event)
            if kind is OutputDelta:  # the inspector shows the output once checked (OutputChecked)
                return
            add(event)
            if kind is RunFinished or kind is RunFailed or kind is RunPaused:
                self._stale = True
                outbox.ended()
                self._charge()
                if kind is RunPaused:  # the cards of what the turn waits for, after its pause
                    self._cards()
            elif kind is ToolCallStarted or kind is RunStarted:
                self._progress.own(event)  # type: ignore[arg-type]

        return on_event

    def _follow(self, event: Event) -> Run | None:
        """Start following the run of ``event``; None for a run not in the history."""
        # The snapshot is stale from a run's start (and again from its end: a snapshot may be
        # made while it runs).
        self._stale = True
        run = follow(event, self.agent.history)
        if run is None:
            return None
        self._runs[event.run_id] = run
        if isinstance(event, RunStarted) and (
            self.agent.model is not self._model_seen or event.model != self._model_info["label"]
        ):
            # The header's model: looked at again when the agent's model or its label changed.
            self._model_seen = self.agent.model
            info = model_info(self.agent)
            if info != self._model_info:
                self._model_info = self.model_info = info
        return run

    def snapshot(self, absorb: bool = False) -> bytes:
        """What a fresh view needs, as UTF-8 JSON: the last turns' summary rows (older ones are
        sent on request), the last turn in full (events, change summary, state — lazily, see
        ``lazy.py``). The events queued are sent first, or with ``absorb`` covered by it when
        their runs have all ended (``_after_cell``)."""
        seq = self._outbox.absorb(self._absorb) if absorb else None
        if seq is None:
            seq = self._outbox.flush()
        history = self.agent.history
        count = len(history)
        first = max(0, count - SNAPSHOT_TURNS)
        message: dict[str, Any] = {wire.KIND: wire.SNAPSHOT, wire.SEQ: seq, wire.TURNS_FROM: first}
        if count:
            last = history[-1]
            state = turn_state(last, self.agent)
            message[wire.TURN_INDEX] = last.index
            message[wire.EVENTS] = [compact_event(e) for e in last.events]
            message[wire.CHANGES] = self._batcher.changes(last)
            images = static_images(last) if last.status != "running" else None
            if images:  # their thumbnails, for the static view a save writes (js/saved.js)
                message[wire.STATIC_IMAGES] = images
            if last.children:
                message[run_tree.RUN_TREE] = run_tree.run_tree(last)
            run = self._runs.get(last.run_id)
            message[wire.LIVE_TEXT] = "".join(run.text) if run is not None else ""
            if last.status == "running":  # the runs below it so far (ipython/run_tree.py)
                message[run_tree.LIVE_RUNS] = self._progress.snapshot(last.index)
        else:
            state = self.agent.session_state
        message[wire.STATE], stubs = lazy_form(state)
        if stubs:
            message[wire.STUBS] = stubs
        if self.agent.state_edits:
            message.update(self._live())
        if count and history[-1].status == "paused":
            message[pending_cards.PENDING] = pending_cards.pending_message(self.agent)
        # Only the last turns' rows, as they were encoded once (a finished turn's does not
        # change): the snapshot stays the same size however long the history grows.
        rows = self._rows_kept.snapshot_rows(history, first)
        return b'{"' + wire.SUMMARIES.encode() + b'":[' + rows + b"]," + encode(message)[1:]

    def _rows(self, content: Mapping[str, Any]) -> bytes:
        """Up to ``ROWS_PAGE`` summary rows of the turns before turn ``before`` (``wire.ROWS``)."""
        history = self.agent.history
        before = content.get(wire.BEFORE)
        if not isinstance(before, int) or not 0 < before <= len(history):
            raise LookupError(
                f"need_rows takes before, a turn index from 1 to {len(history)}; got {before!r}"
            )
        first = max(0, before - ROWS_PAGE)
        rows = b",".join([encode(turn_summary(history[i])) for i in range(first, before)])
        head = encode({wire.KIND: wire.ROWS, wire.TURNS_FROM: first})
        return head[:-1] + b',"' + wire.SUMMARIES.encode() + b'":[' + rows + b"]}"

    # -- edits by hand ----------------------------------------------------------------------

    def _live(self) -> dict[str, Any]:
        """The pending edits and the state with them: whole when small (or when there is no turn
        to patch against, then lazily), else as a patch against the last turn's state."""
        live = self.agent.session_state
        out: dict[str, Any] = {wire.EDITS: [compact_edit(e) for e in self.agent.state_edits]}
        history = self.agent.history
        if not len(history) or history[-1].status == "running" or is_small(live):
            out[wire.LIVE_STATE], stubs = lazy_form(live)
            if stubs:
                out[wire.LIVE_STUBS] = stubs
        else:
            out[wire.LIVE_PATCH] = make_patch(history[-1].state_after, live)
            out[wire.TURN_INDEX] = history[-1].index
        return out

    def _on_edit(self, _edit: Any, _undone: bool) -> None:
        """An edit (from the browser or from Python): send the edited state, then what the
        model would receive next."""
        self._stale = True
        self._post({wire.KIND: wire.EDITED, **self._live()})
        try:
            preview = self._preview(self._next_message())
        except Exception as exc:  # a failing instructions callable or context provider
            preview = {wire.KIND: wire.ERROR, wire.TEXT: f"preview: {type(exc).__name__}: {exc}"}
        self._post(preview)


def _shell() -> Any:
    """The running IPython shell, if any."""
    from IPython import get_ipython

    return get_ipython()


__all__ = ["Inspector"]
