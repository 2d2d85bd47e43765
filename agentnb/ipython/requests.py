"""What the inspector answers when its views ask: the browser's requests, handled in the kernel.

A view asks for what it does not hold (a whole turn, a run of the turn's tree, part of a large
state, older History rows, a model request's payload, a typed turn's schema and retries, an
image's thumbnail or original: ``images.py``), for a
preview of the next prompt, for an edit of the state or its undo, for two turns side by side, and
— from a paused turn's cards — for a decision, or a check of arguments being typed
(``card_decisions.py``). Each request is answered with
one message; a request that fails is answered with an ``error`` message naming it, never left
without an answer (the view would wait for it). ``Requests`` is the ``Inspector``'s part that
does this (``inspector.py`` keeps the following of events, the batches and the snapshot).
"""

from __future__ import annotations

import contextlib
import json
import pathlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import AgentnbError, StateEditError
from ..util.text import one_line
from . import pending_cards, run_tree, wire
from .card_decisions import check_arguments, decide
from .compact_events import compact_event
from .compact_prompt import compact_prompt
from .compact_state import turn_state
from .comparing import comparable_agents, comparison_message, default_pair
from .images import image_reply
from .lazy import decode_pointer, find, lazy_form, size_of
from .output_view import NEED_OUTPUT, output_message

if TYPE_CHECKING:
    from ..agent import Agent
    from ..history.history import TurnRecord
    from .live import Batcher
    from .outbox import Outbox
    from .static_outputs import StaticOutputs

STATIC = pathlib.Path(__file__).parent / "static"
"""The front end's built files."""


class Requests:
    """The browser's requests to an ``Inspector`` (a base class of it), and their answers."""

    if TYPE_CHECKING:
        agent: Agent
        _by_agent: ClassVar[Any]
        _outbox: Outbox
        _batcher: Batcher
        _outputs: StaticOutputs
        _preview_message: str | None

        def send(self, content: dict[str, Any], buffers: list[bytes] | None = None) -> None: ...

        def snapshot(self, absorb: bool = False) -> bytes: ...

        def _rows(self, content: Mapping[str, Any]) -> bytes: ...

        def _post(self, message: dict[str, Any]) -> None: ...

        def _after_cell(self, _result: Any = None) -> None: ...

        def _cards(self) -> None: ...

    def _next_message(self) -> str:
        """What a preview after an edit shows: the message last previewed, else the last turn's."""
        if self._preview_message is not None:
            return self._preview_message
        history = self.agent.history
        return history[-1].message if len(history) else ""

    def _preview(self, text: str) -> dict[str, Any]:
        observation = self.agent.observe(text)
        return {
            wire.KIND: wire.PREVIEW,
            wire.MESSAGE: text,
            **compact_prompt(observation),
            wire.REQUEST: observation.request,
            wire.EDITS: len(self.agent.state_edits),
        }

    def _edit(self, content: Mapping[str, Any]) -> dict[str, Any] | None:
        """Apply an edit from the browser; a refusal goes back as ``edit_failed``."""
        path = content.get(wire.PATH)
        try:
            if not isinstance(path, str):
                raise StateEditError("an edit needs a path (a key name or a JSON pointer)")
            if content.get(wire.OP) == "remove":
                self.agent.remove_state(path)
            else:
                raw = content.get(wire.VALUE)
                if not isinstance(raw, str):
                    raise StateEditError("an edit needs a value (JSON text)")
                try:
                    value = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise StateEditError(f"not JSON: {exc.msg} at position {exc.pos}") from None
                self.agent.edit_state(path, self._keep_float(path, value))
        except (AgentnbError, ValueError, TypeError, KeyError) as exc:
            return {wire.KIND: wire.EDIT_FAILED, wire.PATH: path, wire.TEXT: one_line(exc)}
        return None  # the agent's edit listener sends the result

    def _keep_float(self, path: str, value: Any) -> Any:
        """A whole number written where the state holds a float stays a float (50.0 edited to 80
        is 80.0), as the tree showed it."""
        if type(value) is not int or not path.startswith("/"):
            return value
        try:
            old = find(self.agent.session_state, decode_pointer(path))
        except (LookupError, TypeError, ValueError):
            return value
        return float(value) if type(old) is float else value

    def _compare(self, content: Mapping[str, Any]) -> dict[str, Any]:
        agents = comparable_agents(self.agent, type(self)._by_agent.keys())
        left, right = content.get(wire.LEFT), content.get(wire.RIGHT)
        if not (isinstance(left, Mapping) and isinstance(right, Mapping)):
            left, right = default_pair(self.agent, agents, content.get(wire.TURN_INDEX))
        return comparison_message(agents, left, right)

    def _on_msg(self, _widget: Any, content: Mapping[str, Any], _buffers: Any) -> None:
        kind = content.get(wire.KIND)
        try:
            reply = self._answer(kind, content)
        except Exception as exc:  # a bad request must not leave the view waiting silently
            reply = {wire.KIND: wire.ERROR, wire.TEXT: f"{kind}: {type(exc).__name__}: {exc}"}
        if reply is not None:
            self._post(reply)

    def _answer(self, kind: Any, content: Mapping[str, Any]) -> dict[str, Any] | None:
        if kind == wire.FRONT_END:
            # The front end itself, for a page that cannot fetch it from the server extension.
            self.send(
                {wire.KIND: wire.FRONT_END},
                [(STATIC / "inspector.js").read_bytes(), (STATIC / "inspector.css").read_bytes()],
            )
            return None
        if kind == wire.VIEWING:
            self._outputs.viewed()
            return None
        if kind == wire.SYNC:
            self._outbox.post({wire.KIND: wire.SNAPSHOT}, self.snapshot())
            return None
        if kind == wire.NEED_TURN:
            record = self._record(content.get(wire.TURN_INDEX))
            state, stubs = lazy_form(turn_state(record, self.agent))
            reply = {
                wire.KIND: wire.TURN,
                wire.TURN_INDEX: record.index,
                wire.EVENTS: [compact_event(e) for e in record.events],
                wire.CHANGES: self._batcher.changes(record),
                wire.STATE: state,
                wire.STUBS: stubs,
            }
            if record.children:
                reply[run_tree.RUN_TREE] = run_tree.run_tree(record)
            return reply
        if kind == run_tree.NEED_RUN:
            return run_tree.run_message(
                self._record(content.get(wire.TURN_INDEX)), str(content.get(run_tree.RUN_ID)), self.agent
            )
        if kind == wire.NEED_SUBTREE:
            return self._subtree(content)
        if kind == wire.NEED_ROWS:
            self._outbox.post({wire.KIND: wire.ROWS}, self._rows(content))
            return None
        if kind == wire.NEED_REQUEST:
            record = self._record(content.get(wire.TURN_INDEX))
            call = content.get(wire.CALL)
            calls = {c.index: c for c in record.model_calls}
            if call not in calls:
                raise LookupError(f"turn {record.index} has no model call {call!r}")
            return {
                wire.KIND: wire.REQUEST,
                wire.TURN_INDEX: record.index,
                wire.CALL: call,
                wire.REQUEST: calls[call].request,
            }
        if kind == wire.NEED_IMAGE:
            reply, picture = image_reply(self.agent, content)
            self._outbox.post({wire.KIND: wire.IMAGE}, reply, picture)
            return None
        if kind == wire.PREVIEW:
            text = content.get(wire.MESSAGE)
            if not isinstance(text, str):
                raise TypeError("a preview needs a message (text)")
            self._preview_message = text
            return self._preview(text)
        if kind == wire.EDIT:
            return self._edit(content)
        if kind == wire.UNDO:
            self.agent.undo_edit()
            return None  # the agent's edit listener sends the result
        if kind == wire.COMPARE:
            return self._compare(content)
        if kind == pending_cards.DECIDE:
            return self._decide(content)
        if kind == pending_cards.CHECK:
            return check_arguments(self.agent, content)
        if kind == NEED_OUTPUT:
            return output_message(self._record(content.get(wire.TURN_INDEX)))
        raise ValueError(f"unknown message kind {kind!r}")

    def _decide(self, content: Mapping[str, Any]) -> dict[str, Any] | None:
        """A decision from a pending card (``card_decisions.py``): refused, it goes back to the
        card; taken, every view's cards show it, and once nothing is left undecided the turn
        goes on here, followed live like any run."""
        ticket = content.get(pending_cards.TICKET)
        try:
            item = decide(self.agent, content)
        except AgentnbError as exc:
            return {
                wire.KIND: pending_cards.DECIDE_FAILED,
                pending_cards.ITEM: content.get(pending_cards.ITEM),
                pending_cards.TICKET: ticket,
                wire.TEXT: one_line(exc),
            }
        left = sum(1 for other in self.agent.pending if not other.decided)
        decision = item.decision
        assert decision is not None
        self._post(
            {
                wire.KIND: pending_cards.DECIDED,
                pending_cards.ITEM: item.id,
                pending_cards.TICKET: ticket,
                pending_cards.VERDICT: decision.verdict,
                wire.TEXT: f"{left} other item(s) still wait for a decision" if left else "the turn goes on",
            }
        )
        self._cards()
        if left:
            return None
        # A run that fails raises here; its turn says why (the inspector follows it like any run).
        with contextlib.suppress(AgentnbError):
            self.agent.continue_run()
        self._after_cell()  # a new view starts from the turn as it went on
        return None

    def _subtree(self, content: Mapping[str, Any]) -> dict[str, Any]:
        """Part of a state the browser holds only in part (see ``wire.SUBTREE``)."""
        path, start, turn = content.get(wire.PATH), content.get(wire.FROM, 0), content.get(wire.TURN_INDEX)
        if not isinstance(path, str) or not isinstance(start, int) or start < 0:
            raise TypeError("need_subtree takes a path (a JSON pointer) and from (a child number, 0 or more)")
        live = bool(content.get(wire.LIVE))
        run_id = content.get(run_tree.RUN_ID)  # a run of the turn's tree, picked in Runs
        # Without a turn: the state before the first one, which is the state now.
        if live or turn is None:
            state = self.agent.session_state
        else:
            state = (
                turn_state(self._record(turn), self.agent)
                if run_id is None
                else run_tree.run_state(self._record(turn), str(run_id), self.agent)
            )
        node = find(state, decode_pointer(path))
        whole = bool(content.get(wire.WHOLE))
        reply = {
            wire.KIND: wire.SUBTREE,
            wire.PATH: path,
            wire.TURN_INDEX: turn,
            wire.LIVE: live,
            wire.FROM: 0 if whole else start,
            wire.WHOLE: whole,
            wire.SIZE: size_of(node),
        }
        if run_id is not None:
            reply[run_tree.RUN_ID] = run_id
        if whole:
            reply[wire.VALUE] = node
        else:
            reply[wire.VALUE], stubs = lazy_form(node, path, start)
            stubs.pop(path, None)  # the reply's size says how much of the node is still to come
            reply[wire.STUBS] = stubs
        return reply

    def _record(self, index: Any) -> TurnRecord:
        history = self.agent.history
        if not isinstance(index, int) or not 0 <= index < len(history):
            raise LookupError(f"there is no turn {index!r}; the agent has {len(history)} turn(s)")
        return history[index]


__all__ = ["Requests"]
