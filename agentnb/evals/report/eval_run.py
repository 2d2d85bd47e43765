"""An evaluation's results: ``EvalRun`` — its rows, numbers, frames, gate, re-scoring, comparison —
and its static record.

The record holds what does not change when a finished evaluation replays — counts, rates per
check, failing cases with their reasons, top errors — and never times or what replayed, so a
notebook re-run offline leaves the same bytes for nbval to compare.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from ...errors import EvalAssertionError, EvalCheckError
from ...history.frames import states_frame, tool_calls_frame
from ...history.history import TurnRecord
from ..checks.base import Check, as_checks, run_checks
from ..engine.judge_calls import JudgeCalls
from ..engine.plan import Plan
from ..engine.progress import Progress
from ..engine.store import EvalStore
from ..viewers import inspect_case
from .case_row import CaseRow
from .eval_comparison import EvalComparison

if TYPE_CHECKING:
    import pandas

FAILING_SHOWN = 10
"""Failing runs listed in a record (the frame has them all)."""


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
        return [r for r in self.rows if r.status == "error"]

    @property
    def invalid(self) -> list[CaseRow]:
        """The rows whose case failed because a turn's answers never matched its output type
        (scored, and not passed: each turn's record has every attempt)."""
        return [r for r in self.rows if r.status == "invalid"]

    @property
    def missing(self) -> list[CaseRow]:
        """The rows the store had no readable line for (``load_run``): each ``error`` says why."""
        return [r for r in self.rows if r.status == "missing"]

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
        return self._concat(tool_calls_frame)

    def states(self) -> pandas.DataFrame:
        """The state after each turn of each case, case id and repeat in front."""
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

    def compare(self, baseline: EvalRun, *, seed: int = 0) -> EvalComparison[EvalRun]:
        """This run against ``baseline``, case by case (see ``EvalComparison``)."""
        return EvalComparison(baseline, self, seed=seed)

    # -- display -------------------------------------------------------------------------------

    def inspect(self, case_id: str, repeat: int = 0) -> Any:
        """The inspector on case ``case_id``: its turns, and its verdicts in the Checks tab (a cell
        ending with it shows it)."""
        return inspect_case(self, case_id, repeat)

    def text(self) -> str:
        """The static record as deterministic plain text."""
        return _record_text(self)

    def html(self) -> str:
        """The static record as deterministic, escaped HTML (nothing from a model is markup)."""
        return _record_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        missing = f", {len(self.missing)} missing" if self.missing else ""
        return (
            f"EvalRun({self.name!r}, {len(self.rows)} run(s), {self.rate():.0%} passed, "
            f"{len(self.errors)} error(s){missing})"
        )


def _passed(row: CaseRow, check: str | None) -> bool:
    """Whether ``row`` passed every check (``check`` None) or that one."""
    if check is None:
        return row.passed is True
    verdict = row.verdict(check)
    return verdict is not None and verdict.status == "pass"


def _why(row: CaseRow, check: str | None) -> str:
    if row.status != "ok":
        return f"{row.status}: {row.error}"
    for verdict in row.verdicts:
        if (check is None or verdict.check == check) and verdict.status != "pass":
            return f"{verdict.check} {verdict.status}: {verdict.reason}"
    return "not scored"


# -- the static record ----------------------------------------------------------------------------


def _head(run: EvalRun) -> str:
    cases = len({r.case.id for r in run.rows})
    passed = sum(r.passed is True for r in run.rows)
    given = sum(r.tokens[0] for r in run.rows)
    taken = sum(r.tokens[1] for r in run.rows)
    text = (
        f"evaluation {run.name} · {len(run.rows)} run(s) of {cases} case(s) · "
        f"{passed} passed ({run.rate():.0%}) · {len(run.errors)} error(s) · {given + taken:,} tokens"
    )
    if run.invalid:
        text += f" · {len(run.invalid)} with no valid output"
    if run.missing:
        text += f" · {len(run.missing)} missing from the store"
    if run.stopped:
        text += f" · {run.stopped}"
    return text


def _failing(run: EvalRun) -> list[tuple[str, str, str, str]]:
    out = []
    for r in run.rows:
        label = r.case.id + (f" #{r.repeat + 1}" if r.repeat else "")
        if r.status != "ok":
            out.append((label, "—", r.status, r.error or ""))
            if r.status != "invalid":  # an invalid case was scored: its checks say more
                continue
        for v in r.verdicts:
            if v.status != "pass":
                out.append((label, v.check, v.status, v.reason))
    return out


def _errors(run: EvalRun) -> list[tuple[int, str]]:
    counts = Counter(f"{r.error_type}: {r.error}" for r in run.errors)
    return sorted(((n, e) for e, n in counts.items()), key=lambda x: (-x[0], x[1]))[:5]


def _record_text(run: EvalRun) -> str:
    """The evaluation's record as plain text."""
    lines = [_head(run)]
    if run.check_names:
        width = max(len(c) for c in run.check_names)
        for check in run.check_names:
            passed = sum((v := r.verdict(check)) is not None and v.status == "pass" for r in run.rows)
            lines.append(f"  {check:<{width}}  {passed}/{len(run.rows)}  {run.rate(check):.0%}")
    failing = _failing(run)
    if failing:
        lines.append(f"not passed ({len(failing)}):")
        lines += [
            f"  {case} · {check} · {status}: {reason}"
            for case, check, status, reason in failing[:FAILING_SHOWN]
        ]
        if len(failing) > FAILING_SHOWN:
            lines.append(f"  … {len(failing) - FAILING_SHOWN} more (run.checks())")
    errors = _errors(run)
    if errors:
        lines.append("top errors:")
        lines += [f"  {n}× {e}" for n, e in errors]
    return "\n".join(lines)


def _record_html(run: EvalRun) -> str:
    """The evaluation's record as escaped HTML (nothing from a model is markup)."""
    parts = [f'<div class="agentnb-eval"><p><b>{escape(_head(run))}</b></p>']
    if run.check_names:
        parts.append("<table><tr><th>check</th><th>passed</th><th>rate</th></tr>")
        for check in run.check_names:
            passed = sum((v := r.verdict(check)) is not None and v.status == "pass" for r in run.rows)
            parts.append(
                f"<tr><td>{escape(check)}</td><td>{passed}/{len(run.rows)}</td><td>{run.rate(check):.0%}</td></tr>"
            )
        parts.append("</table>")
    failing = _failing(run)
    if failing:
        # Left-aligned: notebooks right-align table cells, which scatters sentences; the case,
        # check and verdict on one line each.
        left = ' style="text-align:left"'
        whole = ' style="text-align:left;white-space:nowrap"'
        head = "".join(f"<th{left}>{h}</th>" for h in ("case", "check", "verdict", "reason"))
        parts.append(f"<p>not passed ({len(failing)}):</p><table><tr>{head}</tr>")
        for row in failing[:FAILING_SHOWN]:
            cells = [f"<td{whole}>{escape(cell)}</td>" for cell in row[:3]] + [
                f"<td{left}>{escape(row[3])}</td>"
            ]
            parts.append("<tr>" + "".join(cells) + "</tr>")
        parts.append("</table>")
        if len(failing) > FAILING_SHOWN:
            parts.append(f"<p>… {len(failing) - FAILING_SHOWN} more (run.checks())</p>")
    errors = _errors(run)
    if errors:
        parts.append(
            "<p>top errors:</p><ul>" + "".join(f"<li>{n}× {escape(e)}</li>" for n, e in errors) + "</ul>"
        )
    parts.append("</div>")
    return "".join(parts)


__all__ = ["FAILING_SHOWN", "EvalRun"]
