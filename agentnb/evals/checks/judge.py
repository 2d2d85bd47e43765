"""Judges: a model asked whether a case's answer meets a pass/fail rubric, its calls recorded.

A judge's request (rubric, the case's input, expected value and answer) and the model's answer
are kept with the case's stored line; the case's ``JudgeCalls`` (``agentnb.evals.engine.judge_calls``)
answers it from the recording or asks the model.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ...errors import EvalCheckError
from ...models.base import Model, ModelRequest
from .base import CaseView, Check, Verdict

INSTRUCTIONS = (
    "You grade one reply of an AI assistant against a rubric.\n"
    "Rubric: {rubric}\n\n"
    "Answer with PASS or FAIL as the first word, then one short sentence saying why."
)


class Judge(Check):
    """Asks a model whether the answer meets ``rubric`` (see ``judge``)."""

    def __init__(self, rubric: str, model: Model | None, name: str) -> None:
        self.rubric, self.model, self.name = rubric, model, name

    def fingerprint(self) -> str:
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
        from ...model_spec import resolve_model

        model = resolve_model(model)
    return Judge(rubric.strip(), model, name)


__all__ = ["INSTRUCTIONS", "Judge", "judge"]
