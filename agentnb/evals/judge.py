"""Judges: a model asked whether a case's answer meets a pass/fail rubric, its calls recorded.

A judge's request (rubric, the case's input, expected value and answer) and the model's answer
are kept with the case's stored line. Re-scoring, or re-running a finished case, answers a judge
request equal to a recorded one from the recording: an unchanged judge costs nothing, a changed
rubric calls the model only for itself. Live judge calls go through the same per-model in-flight
limit as the agent's calls.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import EvalCheckError
from ..models.base import Model, ModelRequest
from .checks import CaseView, Check, Verdict
from .limiter import CallStats, GuardedModel, Limiter
from .worker import case_model

INSTRUCTIONS = (
    "You grade one reply of an AI assistant against a rubric.\n"
    "Rubric: {rubric}\n\n"
    "Answer with PASS or FAIL as the first word, then one short sentence saying why."
)


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


class Judge(Check):
    """Asks a model whether the answer meets ``rubric`` (see ``judge``)."""

    def __init__(self, rubric: str, model: Model | None, name: str) -> None:
        self.rubric, self.model, self.name = rubric, model, name

    def fingerprint(self) -> str:
        import hashlib

        return hashlib.sha1(f"{self.rubric}|{self.model.label if self.model else ''}".encode()).hexdigest()[
            :12
        ]

    def request(self, view: CaseView) -> ModelRequest:
        """What the judge is sent for ``view``."""
        parts = [f"Input:\n{_text(view.input)}"]
        if view.expected is not None:
            parts.append(f"Expected:\n{_text(view.expected)}")
        parts.append(f"Reply:\n{view.answer or ''}")
        return ModelRequest(
            messages=[
                {"role": "system", "content": INSTRUCTIONS.format(rubric=self.rubric)},
                {"role": "user", "content": "\n\n".join(parts)},
            ]
        )

    def evaluate(self, view: CaseView) -> Verdict:
        calls = view.judge_calls
        if calls is None:
            raise EvalCheckError(
                f"judge {self.name} runs inside an evaluation (agent.evaluate / run.rescore)"
            )
        model = self.model or calls.default_model
        if model is None:
            raise EvalCheckError(f"judge {self.name} has no model; give check.judge(rubric, model=...)")
        text, replayed = calls.ask(self.name, model, self.request(view))
        words = text.strip().split(None, 1)
        first = words[0].strip(".:*!,").upper() if words else ""
        reason = (words[1].strip().splitlines() or [""])[0] if len(words) > 1 else ""
        evidence = {"model": model.label, "answer": text, "replayed": replayed}
        if first not in ("PASS", "FAIL"):
            return Verdict(
                self.name,
                "error",
                f"the judge's answer does not start with PASS or FAIL: {text[:80]!r}",
                evidence,
            )
        return Verdict(self.name, "pass" if first == "PASS" else "fail", reason or first.lower(), evidence)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def judge(rubric: str, *, model: Model | str | None = None, name: str = "judge") -> Check:
    """A model asked whether the answer meets ``rubric`` (say what passes; it answers PASS or FAIL
    and why). ``model`` defaults to the agent's; its calls are recorded with the case."""
    if not isinstance(rubric, str) or not rubric.strip():
        raise EvalCheckError(
            "judge: give the rubric as text, e.g. judge('The reply confirms every item added.')"
        )
    if isinstance(model, str):
        from ..model_spec import resolve_model

        model = resolve_model(model)
    return Judge(rubric.strip(), model, name)


__all__ = ["INSTRUCTIONS", "Judge", "JudgeCalls", "judge"]
