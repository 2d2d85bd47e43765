"""One (case, repeat) of an evaluation: its turns, verdicts and what it cost, and its line in the store."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ...history.history import TurnRecord
from ..cases import Case
from ..checks.base import CaseView, Verdict
from ..engine.judge_calls import JudgeCalls
from ..engine.store_format import SCORED
from ..engine.worker import CaseOutcome


@dataclass
class CaseRow:
    """One (case, repeat) of a run: its turns, verdicts and what it cost."""

    case: Case
    repeat: int
    status: str
    """ok; invalid (a turn's answers never matched its output type: the case is scored, and
    fails); paused (a turn waits for a decision the case does not give); error (a turn did not
    finish); or missing (the store has no readable line for it: ``error`` says why)."""
    turns: list[TurnRecord]
    """Its turn records (open one in the inspector, compare two)."""
    verdicts: list[Verdict]
    """One per check, in the checks' order."""
    error: str | None = None
    error_type: str | None = None
    judge_calls: list[dict[str, Any]] = field(default_factory=list)
    """The judge calls its verdicts rest on (request, model, answer)."""
    replayed: bool = False
    """Whether it was answered from the recording."""
    retries: int = 0
    """Model calls tried again and runs re-run (``retry_errors``)."""
    earlier_errors: list[str] = field(default_factory=list)
    """The errors of the runs ``retry_errors`` re-ran."""
    wall_ms: float = 0.0
    """Wall-clock time of this run of it (short when replayed)."""
    delegates: dict[str, list[TurnRecord]] = field(default_factory=dict)
    """The turns of the agents it delegated to (fresh copies of a team's members, agents as
    tools, handoff targets), by path (``helper``, ``desk/analyst``): the runs its turns'
    ``children`` are."""

    @classmethod
    def build(
        cls,
        case: Case,
        repeat: int,
        outcome: CaseOutcome,
        turns: list[TurnRecord],
        verdicts: list[Verdict],
        judge_calls: list[dict[str, Any]],
        earlier: list[str],
        *,
        delegates: dict[str, list[TurnRecord]] | None = None,
    ) -> CaseRow:
        """The row of a finished run."""
        return cls(
            case,
            repeat,
            outcome.status,
            turns,
            verdicts,
            outcome.error,
            outcome.error_type,
            list(judge_calls),
            outcome.replayed,
            outcome.stats.retries + len(earlier),
            list(earlier),
            outcome.wall_ms,
            dict(delegates or {}),
        )

    @classmethod
    def missing(cls, case: Case, repeat: int, why: str) -> CaseRow:
        """The row of a (case, repeat) the store has no readable line for; ``why`` says so."""
        return cls(case, repeat, "missing", [], [], why)

    @property
    def passed(self) -> bool | None:
        """Whether every check passed (None when the case errored, is missing, or a check could
        not apply); False for a case whose output never matched its type, whatever its checks say."""
        if self.status == "invalid":
            return False
        if self.status != "ok" or any(v.status == "error" for v in self.verdicts):
            return None
        return all(v.status == "pass" for v in self.verdicts)

    @property
    def scored(self) -> bool:
        """Whether its checks scored it: it ran to its end, or its output never matched its type."""
        return self.status in SCORED

    @property
    def answer(self) -> str | None:
        """The last turn's answer."""
        return self.turns[-1].content if self.turns else None

    @property
    def tokens(self) -> tuple[int, int]:
        """(input, output) tokens of its turns."""
        return sum(t.usage.input_tokens for t in self.turns), sum(t.usage.output_tokens for t in self.turns)

    @property
    def duration_ms(self) -> float:
        """How long its turns took (as recorded, when replayed)."""
        return sum(t.duration_ms for t in self.turns)

    def verdict(self, check: str) -> Verdict | None:
        """The verdict of ``check``, if it was run."""
        return next((v for v in self.verdicts if v.check == check), None)

    def to_dict(
        self,
        turns: list[dict[str, Any]] | None = None,
        delegates: dict[str, list[dict[str, Any]]] | None = None,
    ) -> dict[str, Any]:
        """The store's line for this row (``delegates`` only when it delegated: an agent that
        delegates to none writes the lines it always wrote)."""
        if delegates is None:
            delegates = {path: [t.to_dict() for t in turns] for path, turns in self.delegates.items()}
        line = {
            "case": self.case.to_dict(),
            "repeat": self.repeat,
            "status": self.status,
            "error": self.error,
            "error_type": self.error_type,
            "turns": turns if turns is not None else [t.to_dict() for t in self.turns],
            "verdicts": [v.to_dict() for v in self.verdicts],
            "judge_calls": self.judge_calls,
            "retries": self.retries,
            "earlier_errors": self.earlier_errors,
            "wall_ms": self.wall_ms,
            "at": time.time(),
        }
        if delegates:
            line["delegates"] = delegates
        return line

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseRow:
        """A row from the store's line."""
        return cls(
            Case.from_dict(data["case"]),
            int(data["repeat"]),
            data["status"],
            [TurnRecord.from_dict(t, lazy=True) for t in data.get("turns") or []],
            [Verdict.from_dict(v) for v in data.get("verdicts") or []],
            data.get("error"),
            data.get("error_type"),
            list(data.get("judge_calls") or []),
            True,
            int(data.get("retries") or 0),
            list(data.get("earlier_errors") or []),
            float(data.get("wall_ms") or 0.0),
            {
                path: [TurnRecord.from_dict(t, lazy=True) for t in turns]
                for path, turns in (data.get("delegates") or {}).items()
            },
        )

    def view(self, judge_calls: JudgeCalls | None = None) -> CaseView:
        """What a check sees of this row."""
        return CaseView(self.case, self.repeat, self.turns, self.status, self.error, judge_calls)


__all__ = ["CaseRow"]
