"""A case's judge calls: the recorded ones, and how to make new ones.

Re-scoring, or re-running a finished case, answers a judge request equal to a recorded one from
the recording: an unchanged judge costs nothing, a changed rubric calls the model only for
itself. Live judge calls go through the same per-model in-flight limit as the agent's calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import EvalCheckError
from ...models.base import Model, ModelRequest
from .limiter import CallStats, GuardedModel, Limiter
from .worker import case_model


@dataclass
class JudgeCalls:
    """A case's judge calls: the recorded ones, and how to make new ones."""

    recorded: list[dict[str, Any]] = field(default_factory=list)
    """Judge calls stored with the case (request payload, model, answer)."""
    default_model: Model | None = None
    """The model a judge without ``model=`` asks (the agent's)."""
    limiter_for: Callable[[Model], Limiter | None] | None = None
    """The in-flight limit of a model (None: no limit)."""
    prepare: Callable[[Model], Model] | None = None
    """The evaluation's copy of a judge's model (the client's own retries off)."""
    mode: str = "auto"
    """Replay mode: strict refuses a judge call that is not recorded."""
    used: list[dict[str, Any]] = field(default_factory=list)
    """Every judge call this scoring used, replayed or live (what the store keeps)."""
    live: int = 0
    """Judge calls made to a model this time."""
    stats: CallStats = field(default_factory=CallStats)
    """Retries and 429s of the live judge calls."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def ask(self, check: str, model: Model, request: ModelRequest) -> tuple[str, bool]:
        """The answer to ``request`` (recorded if an equal request is; else asked live), and whether it was replayed."""
        if self.prepare is not None:
            model = self.prepare(model)
        payload = model.payload(request)
        for call in self.recorded:
            if call.get("model") == model.label and call.get("request") == payload:
                self._keep(call)
                return call.get("content") or "", True
        if self.mode == "strict" and model.external:
            raise EvalCheckError(
                f"judge {check}: its request is not in the recording and strict replay "
                f"(AGENTNB_REPLAY=strict) does not call {model.label}"
            )
        limiter = self.limiter_for(model) if self.limiter_for is not None else None
        response = GuardedModel(case_model(model), limiter, self.stats).complete(request)
        usage = response.usage
        call = {
            "check": check,
            "model": model.label,
            "request": payload,
            "content": response.content or "",
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
        }
        with self._lock:
            self.live += 1
        self._keep(call)
        return call["content"], False

    def _keep(self, call: dict[str, Any]) -> None:
        with self._lock:
            if call not in self.used:
                self.used.append(call)


__all__ = ["JudgeCalls"]
