"""An evaluation's results: ``EvalRun`` (rows, frames, gates, re-scoring, comparison) and ``CaseRow``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import slots
from ..errors import EvalAssertionError, EvalCheckError, EvalStoreError
from ..history.history import TurnRecord
from ..util.extras import install_line
from .cases import Case
from .checks import CaseView, Check, Verdict, as_checks, run_checks
from .judge import JudgeCalls
from .store import EvalStore

if TYPE_CHECKING:
    import pandas

    from .compare import EvalComparison
    from .plan import Plan
    from .progress import Progress
    from .worker import CaseOutcome


@dataclass
class CaseRow:
    """One (case, repeat) of a run: its turns, verdicts and what it cost."""

    case: Case
    repeat: int
    status: str
    """ok, or error (a turn did not finish)."""
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
        )

    @property
    def passed(self) -> bool | None:
        """Whether every check passed (None when the case errored or a check could not apply)."""
        if self.status != "ok" or any(v.status == "error" for v in self.verdicts):
            return None
        return all(v.status == "pass" for v in self.verdicts)

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

    def to_dict(self, turns: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The store's line for this row."""
        return {
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
        )

    def view(self, judge_calls: JudgeCalls | None = None) -> CaseView:
        """What a check sees of this row."""
        return CaseView(self.case, self.repeat, self.turns, self.status, self.error, judge_calls)


class EvalRun:
    """The results of ``agent.evaluate``: one row per (case, repeat), in the cases' order."""

    def __init__(
        self,
        name: str,
        rows: list[CaseRow],
        check_names: list[str],
        *,
        checks: list[Check] | None = None,
        store: EvalStore | None = None,
        plan: Plan | None = None,
        progress: Progress | None = None,
        model: Any = None,
        limiter_for: Callable[[Any], Any] | None = None,
        judge_model: Callable[[Any], Any] | None = None,
        price: tuple[float, float] | None = None,
    ) -> None:
        self.name = name
        self.price = price
        """(input, output) dollars per million tokens of the agent's model, where known."""
        self.rows = rows
        self.check_names = check_names
        self.check_list = checks or []
        self.store = store
        self.plan = plan
        self.progress = progress
        self.model = model
        self.stopped: str | None = None
        """Why the run stopped early (``max_errors``), if it did."""
        self.judge_live = 0
        """Judge calls made live by ``rescore``."""
        self.definition: Any = None
        """The agent's definition the run was made from (to show a case in the inspector)."""
        self._limiter_for = limiter_for
        self._judge_model = judge_model

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Any:
        return iter(self.rows)

    def case(self, case_id: str, repeat: int = 0) -> CaseRow:
        """The row of case ``case_id`` (and ``repeat``)."""
        for row in self.rows:
            if row.case.id == str(case_id) and row.repeat == repeat:
                return row
        raise KeyError(f"run {self.name!r} has no case {case_id!r} repeat {repeat}")

    # -- numbers --------------------------------------------------------------------------------

    def rate(self, check: str | None = None) -> float:
        """The share of runs that passed ``check`` (default: every check); errors count as not passed."""
        if not self.rows:
            return 0.0
        if check is None:
            return sum(r.passed is True for r in self.rows) / len(self.rows)
        if check not in self.check_names:
            raise EvalCheckError(
                f"run {self.name!r} has no check {check!r}; it has {', '.join(self.check_names) or 'none'}"
            )
        return sum((v := r.verdict(check)) is not None and v.status == "pass" for r in self.rows) / len(
            self.rows
        )

    def rates(self) -> dict[str, float]:
        """The pass rate of each check."""
        return {c: self.rate(c) for c in self.check_names}

    @property
    def errors(self) -> list[CaseRow]:
        """The rows whose case did not finish."""
        return [r for r in self.rows if r.status != "ok"]

    def assert_passed(self, min_rate: float = 1.0, *, check: str | None = None) -> None:
        """Raise ``EvalAssertionError`` (an AssertionError) when the pass rate is below ``min_rate``."""
        rate = self.rate(check)
        if rate + 1e-12 < min_rate:
            failing = [r for r in self.rows if not _passed(r, check)]
            detail = "; ".join(f"{r.case.id}: {_why(r, check)}" for r in failing[:5])
            raise EvalAssertionError(
                f"{self.name}: {rate:.0%} of {len(self.rows)} run(s) passed {check or 'every check'}, "
                f"below {min_rate:.0%} — {detail}"
            )

    # -- frames ---------------------------------------------------------------------------------

    def frame(self) -> pandas.DataFrame:
        """One row per (case, repeat): id, input, answer, status, passed, a column per check, tokens,
        cost, duration, replayed, retries."""
        import pandas as pd

        price = self.price
        records = []
        for r in self.rows:
            given, taken = r.tokens
            record: dict[str, Any] = {
                "case_id": r.case.id,
                "repeat": r.repeat,
                "input": r.case.text,
                "answer": r.answer,
                "status": r.status,
                "passed": r.passed,
            }
            for check in self.check_names:
                verdict = r.verdict(check)
                record[check] = None if verdict is None else verdict.passed
            cost = None if price is None else (given * price[0] + taken * price[1]) / 1e6
            record.update(
                input_tokens=given,
                output_tokens=taken,
                cost=cost,
                duration_ms=round(r.duration_ms, 3),
                replayed=r.replayed,
                retries=r.retries,
                error=r.error,
            )
            records.append(record)
        return pd.DataFrame(records)

    def checks(self) -> pandas.DataFrame:
        """Every verdict, long form: case_id, repeat, check, status, passed, reason, evidence (JSON), score."""
        import pandas as pd

        records = [
            {
                "case_id": r.case.id,
                "repeat": r.repeat,
                "check": v.check,
                "status": v.status,
                "passed": v.passed,
                "reason": v.reason,
                "evidence": json.dumps(v.evidence, ensure_ascii=False, default=str)
                if v.evidence is not None
                else None,
                "score": v.score,
            }
            for r in self.rows
            for v in r.verdicts
        ]
        return pd.DataFrame(
            records, columns=["case_id", "repeat", "check", "status", "passed", "reason", "evidence", "score"]
        )

    def tool_calls(self) -> pandas.DataFrame:
        """Every tool call of every case (``History.tool_calls()``'s columns), case id and repeat in front."""
        from ..history.frames import tool_calls_frame

        return self._concat(tool_calls_frame)

    def states(self) -> pandas.DataFrame:
        """The state after each turn of each case, case id and repeat in front."""
        from ..history.frames import states_frame

        return self._concat(lambda turns: states_frame(turns).reset_index())

    def _concat(self, make: Callable[[list[TurnRecord]], Any]) -> pandas.DataFrame:
        import pandas as pd

        parts = []
        for r in self.rows:
            part = make(r.turns)
            part.insert(0, "repeat", r.repeat)
            part.insert(0, "case_id", r.case.id)
            parts.append(part)
        empty = make([])
        empty.insert(0, "repeat", [])
        empty.insert(0, "case_id", [])
        return pd.concat(parts, ignore_index=True) if parts else empty

    # -- re-scoring and comparing ------------------------------------------------------------------

    def rescore(self, checks: Any) -> EvalRun:
        """The same stored turns scored by ``checks``: no agent call; an unchanged judge replays."""
        new_checks = as_checks(checks)
        rows, live = [], 0
        for r in self.rows:
            calls = JudgeCalls(
                recorded=list(r.judge_calls),
                default_model=self.model,
                limiter_for=self._limiter_for,
                prepare=self._judge_model,
            )
            verdicts = run_checks(new_checks, r.view(calls))
            row = CaseRow(
                r.case,
                r.repeat,
                r.status,
                r.turns,
                verdicts,
                r.error,
                r.error_type,
                calls.used,
                r.replayed,
                r.retries,
                r.earlier_errors,
                r.wall_ms,
            )
            if calls.live and self.store is not None:
                self.store.append(row.to_dict())
            live += calls.live
            rows.append(row)
        if self.store is not None:
            self.store.close()
        run = EvalRun(
            self.name,
            rows,
            [c.name for c in new_checks],
            checks=new_checks,
            store=self.store,
            plan=self.plan,
            progress=self.progress,
            model=self.model,
            limiter_for=self._limiter_for,
            judge_model=self._judge_model,
            price=self.price,
        )
        run.judge_live = live
        run.definition = self.definition
        return run

    def compare(self, baseline: EvalRun, *, seed: int = 0) -> EvalComparison:
        """This run against ``baseline``, case by case (see ``agentnb.evals.compare``)."""
        from .compare import compare_runs

        return compare_runs(baseline, self, seed=seed)

    # -- display -------------------------------------------------------------------------------

    def inspect(self, case_id: str, repeat: int = 0) -> Any:
        """The inspector on case ``case_id``: its turns, and its verdicts in the Checks tab (a cell
        ending with it shows it)."""
        return _inspect(self, case_id, repeat)

    def text(self) -> str:
        """The static record as deterministic plain text."""
        from .record import run_text

        return run_text(self)

    def html(self) -> str:
        """The static record as deterministic, escaped HTML."""
        from .record import run_html

        return run_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        return f"EvalRun({self.name!r}, {len(self.rows)} run(s), {self.rate():.0%} passed, {len(self.errors)} error(s))"


def _passed(row: CaseRow, check: str | None) -> bool:
    """Whether ``row`` passed every check (``check`` None) or that one."""
    if check is None:
        return row.passed is True
    verdict = row.verdict(check)
    return verdict is not None and verdict.status == "pass"


def _why(row: CaseRow, check: str | None) -> str:
    if row.status != "ok":
        return f"error: {row.error}"
    for verdict in row.verdicts:
        if (check is None or verdict.check == check) and verdict.status != "pass":
            return f"{verdict.check} {verdict.status}: {verdict.reason}"
    return "not scored"


def _inspect(target: Any, case_id: str, repeat: int) -> Any:
    inspect = slots.case_inspector.get()
    if inspect is None:
        raise EvalCheckError(
            f"showing a case needs the notebook: %load_ext agentnb ({install_line('notebook')})"
        )
    return inspect(target, str(case_id), repeat)


def load_run(name: str, folder: str | Path | None = None, checks: Iterable[Any] | None = None) -> EvalRun:
    """A stored evaluation read back (its last line of each (case, repeat)), without running anything."""
    from ..sessions import find_notebook_path
    from .store import check_name

    root = Path(folder) if folder is not None else find_notebook_path(None).session_dir
    store = EvalStore(root / "evals" / check_name(name))
    manifest = store.read_manifest()
    if manifest is None:
        raise EvalStoreError(
            f"no evaluation {name!r} in {store.folder.parent}; run agent.evaluate(..., name={name!r}) first"
        )
    rows = [CaseRow.from_dict(line) for line in store.rows().values()]
    names = [c["name"] for c in manifest.get("checks") or []]
    run = EvalRun(name, rows, names, store=store)
    return run.rescore(checks) if checks is not None else run


__all__ = ["CaseRow", "EvalRun", "load_run"]
