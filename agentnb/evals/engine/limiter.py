"""One in-flight limit per model, shared by every case's agent and judge calls of an evaluation.

A model call takes a slot of its model's ``Limiter`` for as long as it runs. An HTTP 429 cuts
the limit in half (once per burst: 429s that arrive while the model is paused only extend the
pause) and pauses new calls for the server's ``Retry-After``; the call is then tried again. A
5xx answer or a timeout is tried again after a short wait without cutting anything. The limit
grows back by one after as many clean calls as it allows. The ``openai`` client's own retries
are switched off for the evaluation's copy of the model, so every 429 reaches the limiter.

A ``Retry-After`` that says no time to wait — not a number or an HTTP date, negative, NaN — is
treated as absent (the pause or backoff of a call without one); a huge one is cut to the
longest pause.
"""

from __future__ import annotations

import email.utils
import math
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ModelConnectionError, ModelError, ModelRateLimitError
from ...models.base import ArgumentsDelta, Model, ModelRequest, ModelResponse

RATE_LIMIT_TRIES = 12
"""Times one call is tried while the server keeps answering 429."""
TRANSIENT_TRIES = 4
"""Times one call is tried while the server answers 5xx or does not answer in time."""
DEFAULT_PAUSE = 1.0
"""Seconds to pause after a 429 that carries no Retry-After."""
MAX_PAUSE = 120.0
"""The longest Retry-After honoured after a 429 (a larger one is cut to this)."""
TRANSIENT_MAX_PAUSE = 10.0
"""The longest wait before a 5xx or a timeout is tried again: unlike a 429's pause, which every
call to the model shares, each call waits on its own, so a larger Retry-After is cut to this."""


class Limiter:
    """The in-flight limit of one model (see the module docstring)."""

    def __init__(self, label: str, limit: int) -> None:
        self.label = label
        """The model's label."""
        self.ceiling = max(1, int(limit))
        """The limit it starts with and never grows past."""
        self.limit = self.ceiling
        """How many calls may be in flight now."""
        self.in_flight = 0
        """Calls in flight now."""
        self.cuts = 0
        """Times a 429 cut the limit."""
        self.paused_s = 0.0
        """Seconds of pause asked for by Retry-After, in total."""
        self._resume_at = 0.0
        self._clean = 0
        self._cond = threading.Condition()

    def acquire(self) -> None:
        """Wait for a slot (and for the end of a pause)."""
        with self._cond:
            while True:
                wait = self._resume_at - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                elif self.in_flight < self.limit:
                    self.in_flight += 1
                    return
                else:
                    self._cond.wait()

    def release(self, *, clean: bool = True) -> None:
        """Give the slot back; a clean call counts towards growing the limit back."""
        with self._cond:
            self.in_flight -= 1
            if clean and self.limit < self.ceiling:
                self._clean += 1
                if self._clean >= self.limit:
                    self.limit += 1
                    self._clean = 0
            self._cond.notify_all()

    def cut(self, pause: float) -> None:
        """A 429: halve the limit (once per burst) and pause new calls for ``pause`` seconds."""
        pause = min(pause, MAX_PAUSE) if pause >= 0 else DEFAULT_PAUSE  # NaN is not >= 0
        with self._cond:
            now = time.monotonic()
            if now >= self._resume_at:
                self.limit = max(1, self.limit // 2)
                self.cuts += 1
                self._clean = 0
            if now + pause > self._resume_at:
                self.paused_s += now + pause - max(now, self._resume_at)
                self._resume_at = now + pause
            self._cond.notify_all()


@dataclass
class CallStats:
    """What a case's model calls went through."""

    calls: int = 0
    """Requests sent to the model (each try counts)."""
    retries: int = 0
    """Tries after a 429, a 5xx or a timeout."""
    rate_limited: int = 0
    """429s answered."""
    pending_pause: float | None = None
    """A 429 handed back to the driver (no limiter here): the pause it asked for."""


def classify(exc: BaseException) -> tuple[str | None, float | None]:
    """``("rate_limit" | "transient" | None, Retry-After seconds or None)`` for a model error."""
    status, headers = None, None
    cause: BaseException | None = exc
    while cause is not None and status is None:
        status = getattr(cause, "status_code", None)
        headers = getattr(getattr(cause, "response", None), "headers", None)
        cause = cause.__cause__
    after = retry_after(headers)
    if isinstance(exc, ModelRateLimitError) or status == 429:
        return "rate_limit", after
    if isinstance(exc, ModelConnectionError) or (isinstance(status, int) and status >= 500):
        return "transient", after
    return None, None


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), cut to
    ``MAX_PAUSE``; None when neither says a time to wait (see the module docstring)."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        seconds = None if value is None else _seconds(value, scale)
        if seconds is not None:
            return min(seconds, MAX_PAUSE)
    return None


def _seconds(value: str, scale: float) -> float | None:
    """A header's wait in seconds (a number of ``scale``-ths of a second, or an HTTP date), or None."""
    try:
        seconds = float(value) / scale
    except (TypeError, ValueError):
        if scale != 1.0:
            return None
        try:
            seconds = max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError, OverflowError, IndexError):
            return None
    return None if math.isnan(seconds) or seconds < 0 else seconds


class GuardedModel(Model):
    """A model whose calls go through a ``Limiter`` and are tried again after a 429, 5xx or timeout.

    Without a limiter (a case on another machine), a 429 is not waited out here: the call fails
    and ``stats.pending_pause`` tells the driver, which cuts the limit and sends the case again."""

    def __init__(self, inner: Model, limiter: Limiter | None, stats: CallStats) -> None:
        self.inner = inner
        self.limiter = limiter
        self.stats = stats
        self.kind = inner.kind
        self.external = inner.external

    @property
    def label(self) -> str:
        return self.inner.label

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        return self.inner.payload(request)

    def offline_reason(self) -> str | None:
        return self.inner.offline_reason()

    def token_counter(self) -> Any:
        return self.inner.token_counter()

    def native_output(self, name: str, schema: dict[str, Any], strict: bool) -> dict[str, Any] | None:
        # Typed output asks the model underneath: an evaluated agent asks as the agent does.
        return self.inner.native_output(name, schema, strict)

    def stream(self, request: ModelRequest) -> Iterator[str | ArgumentsDelta | ModelResponse]:
        tries = 0
        while True:
            tries += 1
            if self.limiter is not None:
                self.limiter.acquire()
            started, clean = False, False
            try:
                self.stats.calls += 1
                for item in self.inner.stream(request):
                    started = True
                    yield item
                clean = True
                return
            except ModelError as exc:
                kind, after = classify(exc)
                if started or kind is None:
                    raise
                if kind == "rate_limit":
                    self.stats.rate_limited += 1
                    if self.limiter is None:
                        self.stats.pending_pause = DEFAULT_PAUSE if after is None else after
                        raise
                    self.limiter.cut(DEFAULT_PAUSE if after is None else after)
                    if tries >= RATE_LIMIT_TRIES:
                        raise
                else:
                    if tries >= TRANSIENT_TRIES:
                        raise
                    backoff = 0.25 * 2 ** (tries - 1)
                    time.sleep(min(after, TRANSIENT_MAX_PAUSE) if after is not None else backoff)
                self.stats.retries += 1
            finally:
                if self.limiter is not None:
                    self.limiter.release(clean=clean)


def quiet_copy(model: Model) -> Model:
    """The evaluation's copy of an OpenAI model: the client's own retries off (the limiter retries)."""
    if getattr(model, "kind", None) != "openai" or not hasattr(model, "max_retries"):
        return model
    return model.copy(
        max_retries=0, client_options={**getattr(model, "client_options", {}), "max_retries": 0}
    )


__all__ = ["CallStats", "GuardedModel", "Limiter", "classify", "quiet_copy", "retry_after"]
