"""Checks: what a case's turn records are judged by, each giving a ``Verdict`` with its reason and evidence.

A check reads what agentnb recorded of the case (``CaseView``): the answer, the tool calls that
*executed* (a call that raised or was refused does not count), the final state and who changed
each path, and — for judges — recorded judge calls. So re-scoring stored runs calls no agent.

A check is a ``Check`` from ``agentnb.evals.check`` or a plain function of the ``CaseView``: it
passes when it returns None or True; ``assert`` failing (its message is the reason) or False
fails it; any other exception is an error. A check that cannot apply (it compares with the
case's ``expected`` and the case has none) is an error, never a pass.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...errors import EvalCheckError
from ...events import ToolCallFinished
from ...history.history import TurnRecord
from ...state.diff import Change
from ...util.text import one_line
from ..cases import Case, plain
from ..engine.judge_calls import JudgeCalls
from ..engine.store_format import SCORED

Status = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class Verdict:
    """One check's verdict on one (case, repeat)."""

    check: str
    """The check's name."""
    status: Status
    """pass, fail, or error (the check could not apply or raised)."""
    reason: str = ""
    """Why, in one line (an assert's message, what was found instead, the judge's words)."""
    evidence: Any = None
    """What it rests on, as data: the tool call that satisfied it, the value found, the judge's answer."""
    score: float | None = None
    """A number a check gave besides pass / fail, if any."""

    @property
    def passed(self) -> bool | None:
        """True / False, or None for an error."""
        return None if self.status == "error" else self.status == "pass"

    def to_dict(self) -> dict[str, Any]:
        """As plain data (what the store keeps)."""
        return {
            "check": self.check,
            "status": self.status,
            "reason": self.reason,
            "evidence": plain(self.evidence),
            "score": self.score,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """The inverse of ``to_dict``."""
        return cls(
            data["check"], data["status"], data.get("reason", ""), data.get("evidence"), data.get("score")
        )


@dataclass
class CaseView:
    """What a check sees of one (case, repeat): its case and its turn records."""

    case: Case
    """The case (``.expected``, ``.input``, ``.state``, ``.metadata``)."""
    repeat: int
    """Which repeat (0 = the first)."""
    turns: list[TurnRecord]
    """Its turns, in order."""
    status: str = "ok"
    """ok; invalid when a turn's answers never matched its output type (its record has every
    attempt); error when a turn did not finish; paused; or missing when the store has no
    readable line for it."""
    error: str | None = None
    """Why it did not finish."""
    judge_calls: JudgeCalls | None = field(default=None, repr=False)
    """Recorded judge calls, and how to make new ones (for ``check.judge``)."""

    @property
    def expected(self) -> Any:
        """The case's expected value (None when it has none)."""
        return self.case.expected

    @property
    def input(self) -> Any:
        """The case's input (or its messages)."""
        return self.case.input if self.case.messages is None else list(self.case.messages)

    @property
    def answer(self) -> str | None:
        """The last turn's answer."""
        return self.turns[-1].content if self.turns else None

    @property
    def state(self) -> Mapping[str, Any]:
        """The state the case ended with (read-only)."""
        return self.turns[-1].state_after if self.turns else {}

    @property
    def all_tool_calls(self) -> list[ToolCallFinished]:
        """Every tool call the model asked for, executed or not, in order."""
        return [call for turn in self.turns for call in turn.tool_calls]

    @property
    def tool_calls(self) -> list[ToolCallFinished]:
        """The tool calls that executed cleanly (no error), in order."""
        return [call for call in self.all_tool_calls if call.error is None]

    def changes(self) -> list[tuple[int, Change]]:
        """Every path the case's turns changed, with the turn number, in order."""
        return [(turn.number, change) for turn in self.turns for change in turn.changes().paths]

    def turn_of(self, call: ToolCallFinished) -> int:
        """The turn number (1 = the first) a tool call belongs to."""
        return next((t.number for t in self.turns if t.run_id == call.run_id), 0)


class Check:
    """A named check; calling it on a ``CaseView`` gives a ``Verdict``."""

    name: str = "check"
    """How its column and verdicts are named."""

    def evaluate(self, view: CaseView) -> Verdict:
        """The verdict on ``view`` (may raise ``EvalCheckError`` when it cannot apply)."""
        raise NotImplementedError

    def fingerprint(self) -> str:
        """What identifies this check's logic (a source hash), for the store's manifest."""
        return hashlib.sha1(repr(vars(self)).encode()).hexdigest()[:12]

    def __call__(self, view: CaseView) -> Verdict:
        try:
            return self.evaluate(view)
        except EvalCheckError as exc:
            return Verdict(self.name, "error", str(exc))
        except Exception as exc:
            return Verdict(self.name, "error", f"{type(exc).__name__}: {one_line(exc)}")

    def __repr__(self) -> str:
        return f"<check {self.name}>"


class FunctionCheck(Check):
    """A plain function as a check: None/True passes, False or a failed ``assert`` fails."""

    def __init__(self, function: Callable[..., Any], name: str | None = None) -> None:
        if not callable(function):
            raise EvalCheckError(
                f"a check must be a function of the case's result, got {type(function).__name__}"
            )
        self.function = function
        self.name = name or getattr(function, "__name__", None) or "check"
        if self.name == "<lambda>":
            raise EvalCheckError(
                "a lambda check has no name; give it one with check.that(lambda r: ..., name='...')"
            )

    def fingerprint(self) -> str:
        try:
            text = inspect.getsource(self.function)
        except (OSError, TypeError):
            code = getattr(self.function, "__code__", None)
            text = repr((code.co_code, code.co_consts)) if code is not None else repr(self.function)
        return hashlib.sha1(text.encode()).hexdigest()[:12]

    def evaluate(self, view: CaseView) -> Verdict:
        try:
            value = self.function(view)
        except AssertionError as exc:
            return Verdict(self.name, "fail", (str(exc).splitlines() or [""])[0] or _assert_line(exc))
        if isinstance(value, Verdict):
            return value
        if value is None or value is True:
            return Verdict(self.name, "pass", "")
        if value is False:
            return Verdict(self.name, "fail", f"{self.name} returned False")
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool):
            return Verdict(self.name, "pass" if value[0] else "fail", str(value[1]))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return Verdict(self.name, "pass" if value > 0 else "fail", f"score {value:g}", score=float(value))
        raise EvalCheckError(
            f"check {self.name} returned {type(value).__name__}; return None/True/False, (passed, reason), "
            "a number, or assert"
        )


def _assert_line(exc: AssertionError) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    return f"assert failed: {last.line}" if last is not None and last.line else "assert failed"


RESERVED = frozenset(
    {
        "case_id",
        "repeat",
        "input",
        "answer",
        "status",
        "passed",
        "input_tokens",
        "output_tokens",
        "cost",
        "duration_ms",
        "replayed",
        "retries",
        "error",
    }
)
"""Column names of ``run.frame()`` a check's column would overwrite."""


def as_checks(checks: Any) -> list[Check]:
    """Checks from a list (or one) of ``Check`` and plain functions; names checked unique."""
    if checks is None:
        return []
    if isinstance(checks, Check) or callable(checks) and not isinstance(checks, (list, tuple)):
        checks = [checks]
    if isinstance(checks, Mapping):
        items = [c if isinstance(c, Check) else FunctionCheck(c, name=n) for n, c in checks.items()]
    elif isinstance(checks, Iterable) and not isinstance(checks, (str, bytes)):
        items = [c if isinstance(c, Check) else FunctionCheck(c) for c in checks]
    else:
        raise EvalCheckError(f"checks must be a list of checks or functions, got {type(checks).__name__}")
    seen: set[str] = set()
    for item in items:
        if item.name in RESERVED:
            raise EvalCheckError(
                f"a check cannot be named {item.name!r}: run.frame() has a column of that name; "
                "give it another (name='...')"
            )
        if item.name in seen:
            raise EvalCheckError(f"two checks are named {item.name!r}; give one another name (name='...')")
        seen.add(item.name)
    return items


def run_checks(checks: list[Check], view: CaseView) -> list[Verdict]:
    """Every check's verdict on ``view`` (a case that did not finish: an error for each; one
    whose output never matched its type is scored, its checks see the failed attempts)."""
    if view.status not in SCORED:
        why = "is missing from the store" if view.status == "missing" else "did not finish"
        return [Verdict(c.name, "error", f"the case {why}: {view.error}") for c in checks]
    return [check(view) for check in checks]


# -- the expected value ----------------------------------------------------------------------------


class _Expected:
    def __repr__(self) -> str:
        return "EXPECTED"


EXPECTED: Any = _Expected()
"""Stands for the case's ``expected`` value in a check's arguments (the default of most)."""


def resolve(value: Any, view: CaseView, check: str, what: str) -> Any:
    """``value``, with ``EXPECTED`` (anywhere in a dict or list) replaced by the case's expected value."""
    if value is EXPECTED:
        if view.case.expected is None:
            raise EvalCheckError(
                f"{check} compares with the case's expected value and case {view.case.id!r} has none; "
                f"give expected= on the case or {what} to the check"
            )
        return view.case.expected
    if isinstance(value, Mapping):
        return {k: resolve(v, view, check, what) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, view, check, what) for v in value]
    return value


def call_evidence(view: CaseView, call: ToolCallFinished) -> dict[str, Any]:
    """A tool call as evidence: turn, name, arguments, who answered."""
    return {
        "turn": view.turn_of(call),
        "call": call.call + 1,
        "tool_call_id": call.tool_call_id,
        "name": call.name,
        "arguments": arguments_of(call),
        "answered_by": call.answered_by,
        "result": call.result[:200],
    }


def arguments_of(call: ToolCallFinished) -> Any:
    """A tool call's arguments as data (the text when it is not JSON)."""
    try:
        return json.loads(call.arguments) if call.arguments else {}
    except ValueError:
        return call.arguments


__all__ = [
    "EXPECTED",
    "CaseView",
    "Check",
    "FunctionCheck",
    "Verdict",
    "as_checks",
    "call_evidence",
    "resolve",
    "run_checks",
]
