"""Checks on a case's typed output (``output_type``): ``check.output("/total", equals=...)``
reads the last turn's output at a JSON pointer, ``check.attempts(at_most=n)`` bounds the answers
each turn needed. Both read the ``OutputChecked`` events, so re-scoring a stored run works; a
case whose answers never matched its type (status ``invalid``) fails them, saying why."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from ...errors import EvalCheckError
from ...state.diff import MISSING, json_equal, lookup
from ..cases import plain
from .base import EXPECTED, CaseView, Check, Verdict, resolve


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(plain(value), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_data(value: Any) -> Any:
    """An expected value as JSON data: a pydantic model, a dataclass or an enum as the output
    data of that type would be."""
    if hasattr(value, "model_dump") and not isinstance(value, type):
        return as_data(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return as_data(dataclasses.asdict(value))
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {k: as_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_data(v) for v in value]
    return plain(value)


class _Output(Check):
    def __init__(self, pointer: str, equals: Any, name: str) -> None:
        self.pointer, self.equals, self.name = pointer, equals, name

    def evaluate(self, view: CaseView) -> Verdict:
        if not view.turns:
            return Verdict(self.name, "fail", "the case has no turn", None)
        turn = view.turns[-1]
        attempts = turn.attempts
        if not attempts:
            raise EvalCheckError(
                f"{self.name}: turn {turn.number} asked for no output_type; give the agent output_type=T"
            )
        if not any(a.ok for a in attempts):
            return Verdict(
                self.name,
                "fail",
                f"no answer matched {attempts[-1].output_type or 'the output type'} in {len(attempts)} "
                f"attempt(s): {_why_not(attempts)}",
                {"attempts": [{"attempt": a.attempt, "errors": list(a.errors)} for a in attempts]},
            )
        data = turn.output_data
        want = as_data(resolve(self.equals, view, self.name, "equals="))
        found = lookup(data, self.pointer)
        if found is MISSING:
            return Verdict(self.name, "fail", f"the output has nothing at {self.pointer}", {"output": data})
        same = json_equal(found, want)
        return Verdict(
            self.name,
            "pass" if same else "fail",
            f"{self.pointer or 'the output'} is {_short(found)}"
            + ("" if same else f", expected {_short(want)}"),
            {"value": found},
        )


def output(pointer: str = "", equals: Any = EXPECTED, *, name: str | None = None) -> Check:
    """The last turn's typed output holds ``equals`` at the JSON pointer ``pointer`` (``/total``,
    ``/items/0/sku``; ``""``: the whole output); default: the case's expected value (a pydantic
    model or dataclass compares as its data). A turn whose answers all failed fails it, naming
    each attempt's validation errors; a turn with no output type is an error."""
    if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
        raise EvalCheckError(
            f"output: {pointer!r} is not a JSON pointer; write it like '/total' or '/items/0/sku' "
            "('' is the whole output)"
        )
    return _Output(pointer, equals, name or f"output:{pointer or '/'}")


class _Attempts(Check):
    def __init__(self, at_most: int | None, at_least: int | None, name: str) -> None:
        self.at_most, self.at_least, self.name = at_most, at_least, name

    def evaluate(self, view: CaseView) -> Verdict:
        counts = {t.number: len(t.attempts) for t in view.turns if t.attempts}
        unmatched = {t.number for t in view.turns if t.attempts and not any(a.ok for a in t.attempts)}
        if not counts:
            raise EvalCheckError(f"{self.name}: no turn of the case asked for an output_type")
        over = {n: c for n, c in counts.items() if self.at_most is not None and c > self.at_most}
        under = {n: c for n, c in counts.items() if self.at_least is not None and c < self.at_least}
        evidence = {"attempts": {str(n): c for n, c in counts.items()}}
        if over or under:
            turn, count = next(iter({**over, **under}.items()))
            bound = f"at most {self.at_most}" if turn in over else f"at least {self.at_least}"
            none = " (none matched)" if turn in unmatched else ""
            return Verdict(
                self.name, "fail", f"turn {turn} took {count} attempt(s){none}, expected {bound}", evidence
            )
        shown = ", ".join(
            f"turn {n}: {c}" + (" (none matched)" if n in unmatched else "") for n, c in counts.items()
        )
        return Verdict(self.name, "pass", f"attempts per turn: {shown}", evidence)


def _why_not(attempts: list[Any]) -> str:
    """Each attempt's validation errors, on one line."""
    return "; ".join(
        f"attempt {a.attempt}: "
        + ", ".join(f"{e.get('path') or '(answer)'} {e.get('message')}" for e in a.errors)
        for a in attempts
    )


def attempts(at_most: int | None = None, *, at_least: int | None = None, name: str | None = None) -> Check:
    """Every turn with an output type took at most ``at_most`` answers (1: no retry), and at
    least ``at_least`` if given; an answer counts whether or not it matched."""
    for label, bound in (("at_most", at_most), ("at_least", at_least)):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int) or bound < 1):
            raise EvalCheckError(f"attempts: {label} must be a whole number >= 1, got {bound!r}")
    if at_most is None and at_least is None:
        raise EvalCheckError("attempts: give at_most=n (or at_least=n)")
    return _Attempts(at_most, at_least, name or "attempts")


__all__ = ["as_data", "attempts", "output"]
