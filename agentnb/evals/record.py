"""The static record of an evaluation and of a comparison: deterministic text and escaped HTML.

It holds what does not change when a finished evaluation replays — counts, rates per check,
failing cases with their reasons, top errors, flips — and never times or what replayed, so a
notebook re-run offline leaves the same bytes for nbval to compare.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .compare import EvalComparison
    from .results import EvalRun

FAILING_SHOWN = 10
"""Failing runs listed in a record (the frame has them all)."""


def _head(run: EvalRun) -> str:
    cases = len({r.case.id for r in run.rows})
    passed = sum(r.passed is True for r in run.rows)
    given = sum(r.tokens[0] for r in run.rows)
    taken = sum(r.tokens[1] for r in run.rows)
    text = (
        f"evaluation {run.name} · {len(run.rows)} run(s) of {cases} case(s) · "
        f"{passed} passed ({run.rate():.0%}) · {len(run.errors)} error(s) · {given + taken:,} tokens"
    )
    if run.stopped:
        text += f" · {run.stopped}"
    return text


def _failing(run: EvalRun) -> list[tuple[str, str, str, str]]:
    out = []
    for r in run.rows:
        label = r.case.id + (f" #{r.repeat + 1}" if r.repeat else "")
        if r.status != "ok":
            out.append((label, "—", "error", r.error or ""))
            continue
        for v in r.verdicts:
            if v.status != "pass":
                out.append((label, v.check, v.status, v.reason))
    return out


def _errors(run: EvalRun) -> list[tuple[int, str]]:
    counts = Counter(f"{r.error_type}: {r.error}" for r in run.errors)
    return sorted(((n, e) for e, n in counts.items()), key=lambda x: (-x[0], x[1]))[:5]


def run_text(run: EvalRun) -> str:
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


def run_html(run: EvalRun) -> str:
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


def _comparison_lines(cmp: EvalComparison) -> list[str]:
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
    flips = [f for check in (cmp.check_names or ["all checks"]) for f in cmp.flips(check)]
    if flips:
        lines.append("flips:")
        explained: set[tuple[str, int]] = set()
        for f in flips[:FAILING_SHOWN]:
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


def comparison_text(cmp: EvalComparison) -> str:
    """The comparison's record as plain text."""
    return "\n".join(_comparison_lines(cmp))


def comparison_html(cmp: EvalComparison) -> str:
    """The comparison's record as escaped HTML."""
    lines = _comparison_lines(cmp)
    return '<div class="agentnb-eval-compare"><pre>' + escape("\n".join(lines)) + "</pre></div>"


__all__ = ["comparison_html", "comparison_text", "run_html", "run_text"]
