"""An evaluation's progress as it runs: counts, pass rates per check, tokens, the in-flight limits."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

Sink = Callable[["Progress"], Any]


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running evaluation."""

    name: str
    """The evaluation's name."""
    total: int
    """(case, repeat) runs in all."""
    done: int = 0
    """Runs finished (ok or error)."""
    running: int = 0
    """Runs in flight now."""
    errors: int = 0
    """Runs that ended in an error."""
    retries: int = 0
    """Model calls tried again (429, 5xx, timeouts) and runs re-run (``retry_errors``)."""
    replayed: int = 0
    """Runs answered from the recording."""
    skipped: int = 0
    """Runs not started (``max_errors`` stopped the evaluation)."""
    passes: tuple[tuple[str, int, int], ...] = ()
    """(check, passed, judged) for each check."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    """Dollars so far where a price is known."""
    limits: tuple[tuple[str, int, int], ...] = ()
    """(model, in-flight limit now, cuts by 429) for each model."""
    elapsed_s: float = 0.0
    """Seconds since the evaluation started."""
    finished: bool = False
    """Whether the evaluation has ended."""

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (None before the first run finishes)."""
        live_done = self.done - self.replayed
        if self.finished or live_done <= 0:
            return None
        return self.elapsed_s / max(self.done, 1) * (self.total - self.done - self.skipped)

    def line(self) -> str:
        """One line: done / total, running, errors, retries, pass rate per check, tokens, limits, time left."""
        parts = [
            f"{self.name}: {self.done}/{self.total} done",
            f"{self.running} running",
            f"{self.errors} error(s)",
            f"{self.retries} retr{'y' if self.retries == 1 else 'ies'}",
        ]
        if self.replayed:
            parts.append(f"{self.replayed} replayed")
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        for check, passed, judged in self.passes:
            parts.append(f"{check} {passed}/{judged}")
        parts.append(
            f"{self.input_tokens + self.output_tokens:,} tokens"
            + (f" ${self.cost:.4f}" if self.cost is not None else "")
        )
        for model, limit, cuts in self.limits:
            parts.append(f"{model} limit {limit}" + (f" (cut {cuts}×)" if cuts else ""))
        eta = self.eta_s
        if eta is not None:
            parts.append(f"~{eta:.0f} s left")
        return " · ".join(parts)


@dataclass
class Tracker:
    """Counts updated by the pool's threads; ``snapshot()`` for the display."""

    name: str
    total: int
    checks: list[str]
    limits: Callable[[], tuple[tuple[str, int, int], ...]] = lambda: ()
    price: tuple[float, float] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _start: float = field(default_factory=time.monotonic)
    _state: Progress | None = None
    _passes: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._state = Progress(self.name, self.total, cost=0.0 if self.price else None)
        self._passes = {c: [0, 0] for c in self.checks}

    def started(self) -> None:
        """A run took its slot."""
        self._bump(running=1)

    def retried(self, count: int = 1) -> None:
        """A run was re-run, or a call tried again."""
        self._bump(retries=count)

    def skipped(self) -> None:
        """A run was not started."""
        self._bump(skipped=1)

    def finished(
        self, *, error: bool, replayed: bool, verdicts: list[Any], tokens: tuple[int, int], retries: int
    ) -> None:
        """A run ended (its line is on disk)."""
        with self._lock:
            for verdict in verdicts:
                counts = self._passes.setdefault(verdict.check, [0, 0])
                if verdict.status != "error":
                    counts[1] += 1
                    counts[0] += verdict.status == "pass"
            state = self._state
            assert state is not None
            cost = state.cost
            if self.price is not None and cost is not None:
                cost += (tokens[0] * self.price[0] + tokens[1] * self.price[1]) / 1e6
            self._state = replace(
                state,
                done=state.done + 1,
                running=state.running - 1,
                errors=state.errors + error,
                replayed=state.replayed + replayed,
                retries=state.retries + retries,
                input_tokens=state.input_tokens + tokens[0],
                output_tokens=state.output_tokens + tokens[1],
                cost=cost,
            )

    def _bump(self, **counts: int) -> None:
        with self._lock:
            state = self._state
            assert state is not None
            self._state = replace(state, **{k: getattr(state, k) + v for k, v in counts.items()})

    def snapshot(self, *, finished: bool = False) -> Progress:
        """The progress now."""
        with self._lock:
            state = self._state
            assert state is not None
            passes = tuple((c, p, j) for c, (p, j) in self._passes.items())
        return replace(
            state,
            passes=passes,
            limits=self.limits(),
            elapsed_s=time.monotonic() - self._start,
            finished=finished,
        )


__all__ = ["Progress", "Sink", "Tracker"]
