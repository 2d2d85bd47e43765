"""Two evaluations case by case: pairs by (case id, repeat), flips, unpaired cases, paired statistics.

For pass/fail the paired test is the exact McNemar test (a two-sided binomial test on the
discordant pairs); for scores a seeded bootstrap interval of the mean paired difference. A case
that flipped is explained by the existing turn comparison (``agentnb.history.compare.compare_turns``):
which prompt section, request, tool call or state key made the difference. Its record (text and
escaped HTML) is deterministic, as a run's is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from html import escape
from math import comb
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ...errors import EvalAssertionError, EvalCheckError
from ...history.compare import Comparison, compare_turns
from ..viewers import inspect_case
from .case_row import CaseRow

if TYPE_CHECKING:
    import pandas

ALL = "all checks"
"""The name the comparison gives to "every check passed"."""
FLIPS_SHOWN = 10
"""Flips listed in a comparison's record (``flips()`` has them all)."""


class Scored(Protocol):
    """What a comparison reads of a run (an ``EvalRun``)."""

    name: str
    rows: list[CaseRow]
    check_names: list[str]


RunT = TypeVar("RunT", bound=Scored)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` pass→fail and ``c`` fail→pass pairs."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    p = 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, p)


def bootstrap_interval(
    diffs: list[float], *, seed: int = 0, rounds: int = 2000, level: float = 0.95
) -> tuple[float, float]:
    """A seeded percentile bootstrap interval of the mean of ``diffs``."""
    if not diffs:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    low = means[int((1 - level) / 2 * rounds)]
    high = means[min(rounds - 1, int((1 + level) / 2 * rounds))]
    return (low, high)


@dataclass(frozen=True)
class Flip:
    """A paired case whose verdict changed."""

    case_id: str
    repeat: int
    check: str
    before: bool
    """Passed in the baseline."""
    after: bool
    """Passed in the candidate."""
    reason_before: str
    reason_after: str


@dataclass(frozen=True)
class CheckSummary:
    """One check compared over the paired runs."""

    check: str
    baseline_rate: float
    candidate_rate: float
    pass_to_fail: int
    fail_to_pass: int
    p_value: float
    """Exact McNemar."""
    interval: tuple[float, float]
    """Bootstrap interval of the paired difference of the pass rate (seeded)."""
    paired: int


class EvalComparison(Generic[RunT]):
    """A candidate run against a baseline run (``run.compare(baseline)``)."""

    def __init__(self, baseline: RunT, candidate: RunT, *, seed: int = 0) -> None:
        self.baseline, self.candidate, self.seed = baseline, candidate, seed
        # A row missing from its store (load_run) has nothing to compare: it is unpaired.
        left = {(r.case.id, r.repeat): r for r in baseline.rows if r.status != "missing"}
        right = {(r.case.id, r.repeat): r for r in candidate.rows if r.status != "missing"}
        self.pairs: list[tuple[CaseRow, CaseRow]] = [(left[k], right[k]) for k in left if k in right]
        self.only_baseline: list[tuple[str, int]] = [k for k in left if k not in right]
        """(case id, repeat) runs only the baseline has."""
        self.only_candidate: list[tuple[str, int]] = [k for k in right if k not in left]
        """(case id, repeat) runs only the candidate has."""
        self.check_names = [c for c in candidate.check_names if c in baseline.check_names]
        self.summaries = [self._summary(c) for c in [ALL, *self.check_names]]

    def _passed(self, row: CaseRow, check: str) -> bool:
        if check == ALL:
            return row.passed is True
        verdict = row.verdict(check)
        return verdict is not None and verdict.status == "pass"

    def _summary(self, check: str) -> CheckSummary:
        before = [self._passed(a, check) for a, _ in self.pairs]
        after = [self._passed(b, check) for _, b in self.pairs]
        down = sum(x and not y for x, y in zip(before, after))
        up = sum(y and not x for x, y in zip(before, after))
        n = len(self.pairs)
        diffs = [float(y) - float(x) for x, y in zip(before, after)]
        return CheckSummary(
            check,
            sum(before) / n if n else 0.0,
            sum(after) / n if n else 0.0,
            down,
            up,
            mcnemar_exact(down, up),
            bootstrap_interval(diffs, seed=self.seed),
            n,
        )

    def flips(self, check: str = ALL) -> list[Flip]:
        """The paired runs whose ``check`` verdict changed (pass→fail first), in case order."""
        if check != ALL and check not in self.check_names:
            raise EvalCheckError(
                f"both runs must have check {check!r}; they share {', '.join(self.check_names) or 'none'}"
            )
        out = []
        for a, b in self.pairs:
            x, y = self._passed(a, check), self._passed(b, check)
            if x != y:
                out.append(Flip(a.case.id, a.repeat, check, x, y, _reason(a, check), _reason(b, check)))
        return sorted(out, key=lambda f: (f.after, 0))

    def explain(self, case_id: str, repeat: int = 0, *, turn: int | None = None) -> Comparison:
        """The turn comparison of a paired case (its last turn, or ``turn``): why the two runs differ."""
        pair = next(((a, b) for a, b in self.pairs if a.case.id == str(case_id) and a.repeat == repeat), None)
        if pair is None:
            raise KeyError(f"case {case_id!r} repeat {repeat} is not in both runs")
        a, b = pair
        if not a.turns or not b.turns:
            raise EvalCheckError(
                f"case {case_id!r} has no turn on one side (it errored before its first turn)"
            )
        index = -1 if turn is None else turn - 1
        return compare_turns(a.turns[index], b.turns[index])

    def inspect(self, case_id: str, repeat: int = 0) -> Any:
        """The inspector on the candidate's case, its Compare tab on the baseline's same case (a cell
        ending with it shows it)."""
        return inspect_case(self, case_id, repeat)

    def summary(self) -> pandas.DataFrame:
        """One row per check: rates, flips each way, p-value (exact McNemar), bootstrap interval, paired count."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "check": s.check,
                    "baseline": s.baseline_rate,
                    "candidate": s.candidate_rate,
                    "pass_to_fail": s.pass_to_fail,
                    "fail_to_pass": s.fail_to_pass,
                    "p_value": s.p_value,
                    "diff_low": s.interval[0],
                    "diff_high": s.interval[1],
                    "paired": s.paired,
                }
                for s in self.summaries
            ]
        )

    def assert_no_regressions(self, check: str = ALL) -> None:
        """Raise ``EvalAssertionError`` if any paired run went from pass to fail on ``check``."""
        down = [f for f in self.flips(check) if f.before and not f.after]
        if down:
            raise EvalAssertionError(
                f"{len(down)} case(s) went from pass to fail on {check}: "
                + "; ".join(f"{f.case_id}: {f.reason_after}" for f in down[:5])
            )

    def text(self) -> str:
        """The comparison as deterministic plain text."""
        return "\n".join(_record_lines(self))

    def html(self) -> str:
        """The comparison as deterministic, escaped HTML."""
        return (
            '<div class="agentnb-eval-compare"><pre>'
            + escape("\n".join(_record_lines(self)))
            + "</pre></div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        return self.text()


def _reason(row: CaseRow, check: str) -> str:
    if not row.scored:
        return f"error: {row.error}"
    if check == ALL:
        bad = [v for v in row.verdicts if v.status != "pass"]
        said = [f"{v.check}: {v.reason}" for v in bad[:2]]
        if row.status == "invalid":
            said.insert(0, f"invalid: {row.error}")
        return "; ".join(said) or "every check passed"
    verdict = row.verdict(check)
    return verdict.reason if verdict is not None else "not scored"


def _record_lines(cmp: EvalComparison[Any]) -> list[str]:
    lines = [f"{cmp.candidate.name} vs {cmp.baseline.name} · {len(cmp.pairs)} paired run(s)"]
    if cmp.only_baseline or cmp.only_candidate:
        lines.append(
            f"unpaired: {len(cmp.only_baseline)} only in {cmp.baseline.name}, "
            f"{len(cmp.only_candidate)} only in {cmp.candidate.name}"
        )
    for s in cmp.summaries:
        lines.append(
            f"  {s.check}: {s.baseline_rate:.0%} → {s.candidate_rate:.0%} · "
            f"{s.pass_to_fail} pass→fail, {s.fail_to_pass} fail→pass · "
            f"McNemar exact p={s.p_value:.3g} · diff 95% CI [{s.interval[0]:+.2f}, {s.interval[1]:+.2f}]"
        )
    flips = [f for check in (cmp.check_names or [ALL]) for f in cmp.flips(check)]
    if flips:
        lines.append("flips:")
        explained: set[tuple[str, int]] = set()
        for f in flips[:FLIPS_SHOWN]:
            arrow = "pass→fail" if f.before else "fail→pass"
            why = f.reason_after if f.before else f.reason_before
            lines.append(f"  {f.case_id}{f' #{f.repeat + 1}' if f.repeat else ''} · {f.check} {arrow}: {why}")
            if (f.case_id, f.repeat) in explained:
                continue
            explained.add((f.case_id, f.repeat))
            try:
                causes = cmp.explain(f.case_id, f.repeat).causes
            except Exception:
                causes = ()
            if causes:
                lines.append(f"    why: {causes[0]}")
    return lines


__all__ = [
    "ALL",
    "FLIPS_SHOWN",
    "CheckSummary",
    "EvalComparison",
    "Flip",
    "Scored",
    "bootstrap_interval",
    "mcnemar_exact",
]
