"""Sending a wire body through the ``openai`` client and reading the answer's bytes under a deadline.

The ``openai`` client sends the request (auth, retries, HTTP errors): ``RawAnswer`` posts the
body as it is and leaves the answer unread. The answer's bytes are read here, in a reader thread
(kept for the next call), so that a server trickling one byte at a time or sending keep-alive
pings forever cannot hold a run past its ``timeout``: the caller waits at most until the
deadline, then shuts the connection down. A stream's chunks are handed over as they come; a
whole body (no stream) at once, when it has all arrived.

A client that makes one attempt per request (``max_retries=0``: an evaluation's, ``agent.map``'s)
reads in the caller's own thread instead, with no hand-over: the client's timeout bounds the wait
for the answer's head (one attempt), and one watchdog thread shared by all calls shuts a
connection down at its deadline, which ends a body that trickles or pings.
"""

from __future__ import annotations

import heapq
import itertools
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, suppress
from typing import Any

from ..errors import ModelResponseError
from ..util.text import one_line

MAX_ANSWER_BYTES = 32 << 20
"""A longer answer is refused (no model answer is this large; a broken server can be)."""


class DeadlineError(Exception):
    """The whole answer did not arrive before the deadline."""


class CutError(Exception):
    """The connection broke while the answer's body was being read."""


_REQUEST_OPTIONS = {
    "extra_headers": "headers",
    "extra_query": "params",
    "extra_body": "extra_json",
    "timeout": "timeout",
}
"""The ``create()`` keywords that are not body fields, and the client's request option each is."""


class RawAnswer:
    """``client.post(path)`` of a wire body as it is, its answer left unread: what
    ``with_streaming_response.create(**body)`` gives, without the SDK walking the body against
    its typed parameters first (half the client's time per call, for a body that is already
    plain JSON). Auth, retries, HTTP errors and the connection pool are the client's, as before."""

    def __init__(self, client: Any, path: str, body: dict[str, Any]) -> None:
        self._client, self._path, self._body = client, path, body
        self.http_response: Any = None

    def __enter__(self) -> RawAnswer:
        data = {k: v for k, v in self._body.items() if k not in _REQUEST_OPTIONS}
        options: dict[str, Any] = {}
        for key, option in _REQUEST_OPTIONS.items():
            if self._body.get(key) is not None:
                options[option] = self._body[key]
        options["headers"] = {
            **(options.get("headers") or {}),
            "X-Stainless-Raw-Response": "stream",
        }  # leave the body unread
        self.http_response = self._client.post(
            self._path, cast_to=_http_response_class(), body=data, options=options
        )
        return self

    def iter_bytes(self) -> Iterator[bytes]:
        return self.http_response.iter_bytes()

    def __exit__(self, *exc: Any) -> None:
        self.http_response.close()


def _http_response_class() -> type:
    """The HTTP library's response class the ``openai`` client returns as it is (``httpx2`` in
    recent releases, ``httpx`` before)."""
    try:
        import httpx2

        return httpx2.Response
    except ImportError:
        import httpx

        return httpx.Response


# -- reading the bytes under a deadline --------------------------------------------------------


class _Readers:
    """The daemon threads that read answers, kept between calls (starting a thread for every
    model call cost more than the rest of the call's own work); one leaves after idling
    ``IDLE`` seconds."""

    IDLE = 30.0

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        """Threads waiting for a job that no caller has claimed yet."""

    def run(self, job: Callable[[], None]) -> None:
        """Run ``job`` on an idle reader, or on a new one."""
        with self._lock:
            start = not self._idle
            if not start:
                self._idle -= 1
        self._jobs.put(job)
        if start:
            threading.Thread(target=self._serve, daemon=True, name="agentnb-model-answer").start()

    def _serve(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.IDLE)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # nobody has claimed this thread: leave
                        self._idle -= 1
                        return
                continue  # claimed just now: its job is on the way
            job()
            with self._lock:
                self._idle += 1


_READERS = _Readers()


class _Watchdog:
    """One daemon thread that calls each guarded call's ``cancel`` at its deadline, unless the
    call released its guard first (the calls that read in their own thread)."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, list[Any]]] = []
        """(deadline, order, [cancel]) by deadline; a released guard's cancel is None."""
        self._order = itertools.count()
        self._live = 0
        self._started = False

    def guard(self, deadline: float, cancel: Callable[[], None]) -> list[Any]:
        """Call ``cancel`` at ``deadline`` (monotonic) unless ``release`` comes first."""
        entry: list[Any] = [cancel]
        with self._wake:
            if len(self._due) > 64 and len(self._due) > 2 * self._live:  # mostly released: compact
                self._due = [item for item in self._due if item[2][0] is not None]
                heapq.heapify(self._due)
            heapq.heappush(self._due, (deadline, next(self._order), entry))
            self._live += 1
            if not self._started:
                self._started = True
                threading.Thread(target=self._serve, daemon=True, name="agentnb-model-deadline").start()
            elif self._due[0][2] is entry:  # sooner than what the thread waits for
                self._wake.notify()
        return entry

    def release(self, entry: list[Any]) -> None:
        """The call ended before its deadline."""
        with self._wake:
            if entry[0] is not None:
                entry[0] = None
                self._live -= 1

    def _serve(self) -> None:
        while True:
            with self._wake:
                while self._due and self._due[0][2][0] is None:
                    heapq.heappop(self._due)
                if not self._due:
                    self._wake.wait()
                    continue
                left = self._due[0][0] - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                entry = heapq.heappop(self._due)[2]
                cancel, entry[0] = entry[0], None
                self._live -= 1
            cancel()


_WATCHDOG = _Watchdog()


def _forked() -> None:
    # A forked child has only the thread that forked: the parent's readers and watchdog are not there.
    global _READERS, _WATCHDOG
    _READERS = _Readers()
    _WATCHDOG = _Watchdog()


os.register_at_fork(after_in_child=_forked)


def read_answer(
    open_response: Callable[[], AbstractContextManager[Any]], seconds: float, *, one_attempt: bool = False
) -> tuple[str, Iterator[bytes]]:
    """Send the request and return (content type, body chunks); everything, retries included,
    must arrive within ``seconds`` or ``DeadlineError`` is raised. ``one_attempt``: the client
    does not retry, so the caller's thread reads (see the module's text)."""
    deadline = time.monotonic() + seconds
    if one_attempt:
        return _read_here(open_response, deadline)
    items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    cancelled: list[bool] = []  # [True] once the caller gave up
    responses: list[Any] = []

    def work() -> None:
        try:
            with open_response() as response:
                responses.append(response.http_response)
                if cancelled:
                    return
                kind = response.http_response.headers.get("content-type", "")
                streamed = "text/event-stream" in kind
                if streamed:
                    items.put(("head", kind))
                body: list[bytes] = []
                size = 0
                try:
                    for chunk in response.iter_bytes():
                        if cancelled:
                            return
                        if streamed:
                            items.put(("data", chunk))
                            continue
                        size += len(chunk)
                        if size > MAX_ANSWER_BYTES:
                            raise ModelResponseError(
                                f"sent an answer longer than {MAX_ANSWER_BYTES >> 20} MB"
                            )
                        body.append(chunk)
                except ModelResponseError:
                    raise
                except Exception as exc:  # the client wraps errors while sending, not while reading
                    raise CutError(one_line(exc)[:200]) from exc
            # A whole body is handed over at once: one wake-up of the caller, not one per chunk.
            items.put(("end", None) if streamed else ("whole", (kind, body)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            items.put(("error", exc))

    def cancel() -> None:
        cancelled.append(True)
        for response in responses:
            _shut_down(response)

    _READERS.run(work)
    try:
        what, value = _next(items, deadline)
    except BaseException:
        cancel()
        raise
    if what == "error":
        raise value
    if what == "whole":
        kind, body = value
        return str(kind), iter(body)
    return str(value), _chunks(items, deadline, cancel)


def _read_here(
    open_response: Callable[[], AbstractContextManager[Any]], deadline: float
) -> tuple[str, Iterator[bytes]]:
    """``read_answer`` in the caller's thread, the watchdog shutting the connection down at the
    deadline (the client's own timeout ends a wait for the head)."""
    fired: list[bool] = []
    responses: list[Any] = []

    def cancel() -> None:
        fired.append(True)
        for response in responses:
            _shut_down(response)

    guard = _WATCHDOG.guard(deadline, cancel)
    opened = ExitStack()
    try:
        response = opened.enter_context(open_response())
        responses.append(response.http_response)
        if fired or time.monotonic() > deadline:
            raise DeadlineError
        kind = str(response.http_response.headers.get("content-type", ""))
        chunks = _guarded(response.iter_bytes(), fired)
        if "text/event-stream" in kind:
            return kind, _streamed_here(chunks, opened, guard, fired)
        body = list(chunks)
    except BaseException as exc:
        opened.close()
        _WATCHDOG.release(guard)
        if fired and not isinstance(exc, DeadlineError):
            raise DeadlineError from None
        raise
    opened.close()
    _WATCHDOG.release(guard)
    if fired:
        raise DeadlineError
    return kind, iter(body)


def _guarded(chunks: Iterator[bytes], fired: list[bool]) -> Iterator[bytes]:
    """The body's chunks read here: a read that breaks is ``CutError`` (``DeadlineError`` once
    the watchdog shut the connection down), and the size is limited."""
    size = 0
    while True:
        try:
            chunk = next(chunks, None)
        except Exception as exc:  # the client wraps errors while sending, not while reading
            if fired:
                raise DeadlineError from None
            raise CutError(one_line(exc)[:200]) from exc
        if chunk is None:
            return
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise ModelResponseError(f"sent an answer longer than {MAX_ANSWER_BYTES >> 20} MB")
        yield chunk


def _streamed_here(
    chunks: Iterator[bytes], opened: ExitStack, guard: list[Any], fired: list[bool]
) -> Iterator[bytes]:
    """A stream read here, closed and released when it ends or is given up on."""
    try:
        yield from chunks
        if fired:
            raise DeadlineError
    finally:
        opened.close()
        _WATCHDOG.release(guard)


def _next(items: queue.SimpleQueue[tuple[str, Any]], deadline: float) -> tuple[str, Any]:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineError
    try:
        return items.get(timeout=remaining)
    except queue.Empty:
        raise DeadlineError from None


def _chunks(
    items: queue.SimpleQueue[tuple[str, Any]], deadline: float, cancel: Callable[[], None]
) -> Iterator[bytes]:
    size = 0
    ended = False
    try:
        while True:
            what, value = _next(items, deadline)
            if what == "end":
                ended = True  # read to its end and closed: the connection is back in the pool, kept
                return
            if what == "error":
                raise value
            size += len(value)
            if size > MAX_ANSWER_BYTES:
                raise ModelResponseError(f"sent an answer longer than {MAX_ANSWER_BYTES >> 20} MB")
            yield value
    finally:
        if not ended:  # given up on (deadline, too long, the reader stopped): wake and drop the worker
            cancel()


def _shut_down(response: Any) -> None:
    """Wake a worker blocked reading ``response``: shut its socket down (closing it from another
    thread would not wake the read, and could hand the descriptor to someone else)."""
    stream = getattr(response, "extensions", {}).get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


__all__ = ["MAX_ANSWER_BYTES", "CutError", "DeadlineError", "RawAnswer", "read_answer"]
