"""The inspector's messages to the browser: event items batched, every body encoded once.

Each message is a small content dict (its kind, and for a batch the numbers of its first and
last item) and one binary buffer holding its body as UTF-8 JSON, encoded here by
``pydantic_core`` (anything JSON cannot hold becomes text: NaN as "NaN", an object as its repr).
The kernel then encodes only the small dict: a body is never encoded twice, and its size is
known without a second pass.

The events of a run are not sent one by one: each is queued as it is, and the queue goes out as
one ``batch`` message ``FLUSH_SECONDS`` after its first item was queued — a background thread
sends it then (ipykernel's IOPub accepts messages from any thread), so a slow model call or tool
still shows its progress while the cell runs — or before any other message (a reply, a
snapshot), or when a run ends, if no batch went out in the last ``FLUSH_SECONDS``. So a turn on
its own shows at once, while a loop of quick turns sends about twenty batches a second, the last
turn at most ``FLUSH_SECONDS`` after it ended. Only when the queue goes out are the items made
into their compact forms and the batch encoded, once, by the ``render`` function the outbox was
given (under the outbox's lock, on the thread that flushes): a turn's events cost one encoding
per batch, not one per event. Streamed text joins the text item before it, so a fast stream costs
one item per batch; the text of a run below the turn (a team's member) joins that run's text
item of the queue, so members streaming side by side cost one item each per batch.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

from pydantic_core import to_json

from . import wire

FLUSH_SECONDS = 0.05
"""The longest an event waits in the queue (streamed text is sent about this often)."""

Send = Callable[[dict[str, Any], list[bytes]], None]

Render = Callable[[list[Any]], tuple[bytes, int]]
"""Makes the queued items (in order) into a batch's body, ``{"items": [...]}`` as UTF-8 JSON,
and says how many items the body holds (several queued items may become one)."""

Clock = Callable[[], float]
Schedule = Callable[["Outbox", float], None]
"""Asks for ``outbox.timer()`` to be called at a time of the outbox's clock."""


def encode(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON, anything JSON cannot hold as text (NaN as "NaN", an
    object as its repr)."""
    return to_json(value, fallback=repr, inf_nan_mode="strings")


class Text:
    """Streamed text of one model call, joined until the queue is sent."""

    __slots__ = ("turn", "run", "call", "chunks", "member")

    def __init__(
        self, turn: int, run: object, call: int, text: str, member: dict[str, Any] | None = None
    ) -> None:
        self.turn, self.run, self.call, self.chunks, self.member = turn, run, call, [text], member

    def item(self) -> dict[str, Any]:
        """The batch item: a ``text_delta`` event with the text joined; for a run below the turn
        (``member``: its ``run_id`` and ``path``), a ``run_text`` event naming it."""
        if self.member is not None:
            return {
                wire.TURN_INDEX: self.turn,
                wire.EVENT_BODY: {
                    "kind": "run_text",
                    **self.member,
                    "call": self.call,
                    "text": "".join(self.chunks),
                },
            }
        return {
            wire.TURN_INDEX: self.turn,
            wire.EVENT_BODY: {"kind": "text_delta", "call": self.call, "text": "".join(self.chunks)},
        }


class Outbox:
    """Sends one widget's messages in order: event items in batches, other messages after the
    items queued before them."""

    def __init__(
        self, send: Send, render: Render, *, clock: Clock = time.monotonic, schedule: Schedule | None = None
    ) -> None:
        self._send = send
        self._render = render
        # Both replaceable, so tests can drive time instead of waiting for it.
        self._clock = clock
        self._schedule = schedule if schedule is not None else _FLUSHER.schedule
        self._lock = threading.Lock()
        # Appended to without the lock (one append is atomic) and taken from the left under it:
        # an item queued while a batch is built waits for the next one.
        self._items: deque[Any] = deque()
        self._due = 0.0  # when the queue must go out
        self._timed = False  # the flush thread will call ``timer``
        self._sent_at = -math.inf  # when the last batch went out
        self._member_text: dict[object, Text] = {}  # a run below the turn -> its text item queued
        self.seq = 0
        """Items sent so far (the number of the last one)."""
        self.messages = 0
        """Messages sent (all kinds)."""
        self.bytes = 0
        """Bytes of their bodies (the JSON we encoded; the kernel adds its envelope)."""
        self.last_bytes = 0
        """Bytes of the last body sent."""

    def add(self, item: Any) -> None:
        """Queue one item, as it is (``render`` makes it into its compact form at the flush).
        Called for every event: only the first item of a queue takes the lock, to set when the
        queue must go out."""
        items = self._items
        items.append(item)
        if len(items) == 1 or not self._timed:
            with self._lock:
                self._arm()

    def add_text(
        self, turn: int, run: object, call: int, text: str, member: dict[str, Any] | None = None
    ) -> None:
        """Queue streamed text of model call ``call`` of ``run``, joined to the text queued just
        before it for the same call (``member``: ``run`` is a run below turn ``turn``)."""
        with self._lock:
            if member is not None:
                # Runs below the turn may stream side by side: each joins its own item of the queue.
                last = self._member_text.get(run)
                if last is not None and last.call == call:
                    last.chunks.append(text)
                    return
                last = self._member_text[run] = Text(turn, run, call, text, member)
                self._items.append(last)
            else:
                last = self._items[-1] if self._items else None
                if type(last) is Text and last.run is run and last.call == call:
                    last.chunks.append(text)
                    return
                self._items.append(Text(turn, run, call, text))
            if len(self._items) == 1 or not self._timed:
                self._arm()

    def now(self) -> float:
        """The outbox's clock."""
        return self._clock()

    def flush(self) -> int:
        """Send what is queued now; returns the number of the last item sent."""
        with self._lock:
            self._flush()
            return self.seq

    def absorb(self, take: Callable[[list[Any]], bool]) -> int | None:
        """Give the queue to ``take`` instead of sending it, if ``take`` accepts it (a snapshot
        about to be sent covers what it holds): the queue then counts as one item sent, and the
        snapshot goes out as the batch would have. Returns the number of the last item, or None
        when ``take`` refused (the queue is left as it was)."""
        with self._lock:
            items = self._items
            n = len(items)
            if not n:
                return self.seq
            if not take(list(items)[:n]):
                return None
            for _ in range(n):
                items.popleft()
            self.seq += 1
            self._sent_at = self._clock()
            return self.seq

    def ended(self) -> None:
        """A run ended: send the queue now unless a batch went out less than ``FLUSH_SECONDS``
        ago; else it goes out at its deadline (at most ``FLUSH_SECONDS`` from now), or with the
        next message if that comes first."""
        with self._lock:
            if self._clock() - self._sent_at >= FLUSH_SECONDS:
                self._flush()

    def post(self, content: dict[str, Any], body: Any, picture: bytes | None = None) -> None:
        """Send a message (``content`` names its kind) after the items queued so far; ``body``
        is its JSON, or what to encode; ``picture``, an image's bytes, goes as a second buffer."""
        data = body if isinstance(body, bytes) else encode(body)
        with self._lock:
            self._flush()
            self._emit(content, data, picture)

    def _arm(self) -> None:
        # One wake-up of the flush thread per outbox at a time: a queue sent and started again
        # before it fires moves the deadline (``timer``) instead of adding one.
        self._due = self._clock() + FLUSH_SECONDS
        if not self._timed:
            self._timed = True
            self._schedule(self, self._due)

    def timer(self) -> float | None:
        """The flush thread's call: send the queue if its time is up; else when to call again."""
        with self._lock:
            if self._items and self._clock() < self._due:
                return self._due
            self._timed = False
            self._flush()
            return None

    def _flush(self) -> None:
        queue = self._items
        n = len(queue)
        if not n:
            return
        take = queue.popleft
        self._member_text.clear()
        data, count = self._render([take() for _ in range(n)])
        first = self.seq + 1
        self.seq += count
        self._sent_at = self._clock()
        self._emit({wire.KIND: wire.BATCH, wire.SEQ: first, wire.LAST: self.seq}, data)

    def count(self, data: bytes) -> None:
        """Count a message sent another way (a trait update)."""
        self.messages += 1
        self.bytes += len(data)
        self.last_bytes = len(data)

    def _emit(self, content: dict[str, Any], data: bytes, picture: bytes | None = None) -> None:
        self.count(data)
        self._send(content, [data] if picture is None else [data, picture])


class _Flusher:
    """One daemon thread for every outbox: sends each queue when its time is up."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: list[tuple[float, int, weakref.ref[Outbox]]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def schedule(self, outbox: Outbox, at: float) -> None:
        order = next(self._order)
        with self._cond:
            heapq.heappush(self._due, (at, order, weakref.ref(outbox)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="agentnb-inspector-flush", daemon=True)
                self._thread.start()
            elif self._due[0][1] == order:
                self._cond.notify()  # the new deadline comes first: wake the thread to wait less

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._due:
                    self._cond.wait()
                at, _, ref = self._due[0]
                wait = at - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._due)
            outbox = ref()
            if outbox is None:
                continue
            try:
                again = outbox.timer()
            except Exception:  # a closed comm: the view heals the gap with a snapshot
                continue
            if again is not None:
                self.schedule(outbox, again)


_FLUSHER = _Flusher()

__all__ = ["FLUSH_SECONDS", "Outbox", "Render", "Text", "encode"]
