"""Handing finished turns' spans to the exporters, off the turn's thread.

A turn only queues its spans. One worker thread per tracer provider writes them (starting and
ending each span through the provider's tracer, which is where the user's span processors run:
a ``SimpleSpanProcessor`` exports right there), in the order the turns ended, and flushes the
provider once it has caught up. So a slow or unreachable collector never lengthens a turn,
whatever processor was configured; it is reported once. At exit the queue gets ``EXIT_WAIT_S``
seconds to drain; what is left then is dropped, and said once.
"""

from __future__ import annotations

import atexit
import collections
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from typing import Any

SLOW_S = 2.0
"""Handing a batch of turns to the exporter taking longer than this is reported (once): the
collector is slow or unreachable."""

EXIT_WAIT_S = 3.0
"""How long a process waits at exit for spans still queued (then drops them, and says so)."""

MAX_QUEUED = 1_000
"""Turns queued for one provider at most; past this the oldest are dropped (and it is said once)."""

Job = Callable[[], None]


def _warn_once(flag: list[bool], message: str) -> None:
    if not flag[0]:
        flag[0] = True
        warnings.warn(f"agentnb.tracing: {message}", RuntimeWarning, stacklevel=2)


class Handoff:
    """One provider's queue of span-writing jobs and the worker thread that runs them."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self._jobs: collections.deque[Job] = collections.deque()
        self._asked = 0  # jobs (and flushes) asked for so far
        self._done = 0  # of those, how many are done (or dropped)
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._warned = [False]
        self._dropped = 0

    def submit(self, job: Job | None = None) -> None:
        """Queue ``job`` (None: only a flush) and return at once."""
        with self._cond:
            self._asked += 1
            if job is not None:
                self._jobs.append(job)
                if len(self._jobs) > MAX_QUEUED:
                    self._jobs.popleft()
                    self._dropped += 1
                    _warn_once(
                        self._warned,
                        f"the exporter is more than {MAX_QUEUED} turns behind; the oldest turns' spans "
                        "are dropped. Is the collector reachable?",
                    )
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="agentnb-trace-handoff", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def quiet(self) -> None:
        """Say nothing more (the exit's warning has said it)."""
        self._warned[0] = True

    def unfinished(self) -> int:
        """Jobs and flushes asked for and not done yet (the one running included)."""
        with self._cond:
            return self._asked - self._done

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every job asked for so far is written and flushed; False when ``timeout``
        ran out first."""
        with self._cond:
            asked = self._asked
            return self._cond.wait_for(lambda: self._done >= asked, timeout)

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._asked > self._done)
                target = self._asked
                jobs = list(self._jobs)
                self._jobs.clear()
            started = time.perf_counter()
            for job in jobs:
                try:
                    job()
                except Exception as exc:  # a broken exporter or processor must not stop the worker
                    _warn_once(self._warned, f"writing a turn's spans failed: {type(exc).__name__}: {exc}")
            self._flush()
            took = time.perf_counter() - started
            if took > SLOW_S:
                _warn_once(
                    self._warned,
                    f"handing a turn's spans to the exporter took {took:.1f} s; is the collector reachable? "
                    "Turns do not wait for it; spans keep going out in the background.",
                )
            with self._cond:
                self._done = target
                self._cond.notify_all()

    def _flush(self) -> None:
        flush = getattr(self.provider, "force_flush", None)
        if not callable(flush):
            return
        try:
            flush()
        except Exception as exc:
            _warn_once(self._warned, f"flushing spans failed: {type(exc).__name__}: {exc}")


_lock = threading.Lock()
_handoffs: weakref.WeakKeyDictionary[Any, Handoff] = weakref.WeakKeyDictionary()
_kept: dict[int, Handoff] = {}  # providers that take no weak reference, by id
_exit_warned = [False]


def handoff_for(provider: Any) -> Handoff:
    """The provider's handoff (one per provider, kept no longer than the provider)."""
    with _lock:
        try:
            handoff = _handoffs.get(provider)
            if handoff is None:
                handoff = _handoffs[provider] = _new(provider)
        except TypeError:  # not weakly referenceable, or not hashable
            handoff = _kept.get(id(provider))
            if handoff is None or handoff.provider is not provider:
                handoff = _kept[id(provider)] = _new(provider)
        return handoff


def _new(provider: Any) -> Handoff:
    # The SDK's provider registers its shutdown at exit when it is made, before it reaches here;
    # exit handlers run last-in first-out, so the wait (registered again, after this provider)
    # comes before every traced provider's shutdown.
    atexit.unregister(_at_exit)
    atexit.register(_at_exit)
    return Handoff(provider)


def _all() -> list[Handoff]:
    with _lock:
        return [*_handoffs.values(), *_kept.values()]


def flush(timeout: float | None = None) -> bool:
    """Wait until the spans of every finished turn have been handed to the exporters and
    flushed (at most ``timeout`` seconds); False when it ran out."""
    deadline = None if timeout is None else time.monotonic() + timeout
    for handoff in _all():
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not handoff.wait(left):
            return False
    return True


def _at_exit() -> None:
    if flush(EXIT_WAIT_S):
        return
    handoffs = _all()
    left = sum(h.unfinished() for h in handoffs)
    for handoff in handoffs:  # this is the one thing said about it: a slow export still ending stays quiet
        handoff.quiet()
    _warn_once(
        _exit_warned,
        f"at exit the exporter had not taken every span after {EXIT_WAIT_S:g} s: the spans of {left} "
        "turn(s) still on their way are dropped. Is the collector reachable?",
    )


__all__ = ["EXIT_WAIT_S", "MAX_QUEUED", "SLOW_S", "Handoff", "flush", "handoff_for"]
