"""The HTML of an evaluation's results grid and of a comparison's grid of paired cases, and the
case pickers beside them.

Everything is computed here in Python and escaped: nothing from a model, a tool or the state
becomes markup. A grid scrolls inside its own box under a header that stays in sight, so a
400-case run keeps the filters and the case picker above it within reach; ✓ / ✗ / ! are
coloured from the JupyterLab theme; a long reason is cut at a word with an ellipsis, whole in its
tooltip.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..evals import CaseRow, EvalComparison, EvalRun

FILTERS = ("all", "failed", "errored", "flaky")
"""The results grid's filters."""
COMPARE_FILTERS = ("all", "flipped", "pass→fail", "fail→pass")
"""The comparison grid's filters."""
MARK = {"pass": "✓", "fail": "✗", "error": "!"}
REASON_CUT = 60
"""Characters of a reason a grid cell shows (the tooltip has it whole)."""
GRID_CLASS = "agentnb-eval-grid"
ALL = "all checks"

# One style sheet per grid, scoped by its class (ipywidgets' HTML takes it as it is). Colours,
# fonts and borders come from the theme, so dark mode works.
STYLE = (
    "<style>"
    f".{GRID_CLASS}{{max-height:24em;overflow:auto;border:1px solid var(--jp-border-color2,#ccc);"
    "font-size:var(--jp-ui-font-size1,13px);line-height:1.5;color:var(--jp-content-font-color1,inherit)}"
    f".{GRID_CLASS}.anb-grid-whole{{max-height:none;display:inline-block;max-width:100%}}"
    f".{GRID_CLASS} table{{border-collapse:collapse;min-width:100%}}"
    f".{GRID_CLASS} th,.{GRID_CLASS} td{{text-align:left;vertical-align:top;padding:2px 8px;"
    "white-space:nowrap;border-bottom:1px solid var(--jp-border-color3,#eee)}"
    f".{GRID_CLASS} th{{position:sticky;top:0;z-index:1;background:var(--jp-layout-color2,#eee);"
    "font-weight:600}"
    f".{GRID_CLASS} .anb-mark{{font-weight:700}}"
    f".{GRID_CLASS} .anb-mark-pass{{color:var(--jp-success-color1,#2e7d32)}}"
    f".{GRID_CLASS} .anb-mark-fail{{color:var(--jp-error-color1,#c62828)}}"
    f".{GRID_CLASS} .anb-mark-error{{color:var(--jp-warn-color1,#e65100)}}"
    f".{GRID_CLASS} tr.anb-flipped td{{background:var(--jp-layout-color2,#f5f5f5)}}"
    f".{GRID_CLASS} .anb-flip{{font-weight:700;text-decoration:underline}}"
    f".{GRID_CLASS} .anb-grid-empty{{padding:4px 8px}}"
    "</style>"
)


def cut_words(text: str, limit: int = REASON_CUT) -> str:
    """``text`` on one line, cut at the last word that fits in ``limit`` characters, with an
    ellipsis (a word longer than the limit is cut inside)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space >= limit // 3 else head).rstrip(" ,;:") + "…"


def mark_html(status: str, title: str = "") -> str:
    """✓ / ✗ / ! coloured by status, with its reason as tooltip."""
    tip = f' title="{escape(title)}"' if title else ""
    return f'<span class="anb-mark anb-mark-{escape(status)}" aria-label="{escape(status)}"{tip}>{MARK[status]}</span>'


def _reason_html(reason: str) -> str:
    cut = cut_words(reason)
    return f'<span title="{escape(reason)}">{escape(cut)}</span>' if cut != reason else escape(reason)


def _table(head: list[str], rows: list[str], nothing: str, box: str = GRID_CLASS) -> str:
    if not rows:
        return f'{STYLE}<div class="{box}"><div class="anb-grid-empty">{escape(nothing)}</div></div>'
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    table = f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'{STYLE}<div class="{box}">{table}</div>'


def _label(row: CaseRow) -> str:
    return row.case.id + (f" #{row.repeat + 1}" if row.repeat else "")


def run_filter(run: EvalRun, show: str) -> Callable[[CaseRow], bool]:
    """Which rows the results grid keeps for the filter ``show`` (see ``FILTERS``)."""
    outcomes: dict[str, set[Any]] = {}
    for row in run.rows:
        outcomes.setdefault(row.case.id, set()).add(row.passed)
    keep: dict[str, Callable[[CaseRow], bool]] = {
        "all": lambda r: True,
        "failed": lambda r: r.scored and r.passed is not True,
        "errored": lambda r: not r.scored,
        "flaky": lambda r: len(outcomes[r.case.id]) > 1,
    }
    return keep[show]


def grid_html(run: EvalRun, show: str = "all") -> str:
    """The results grid as escaped HTML: a row per (case, repeat), a column per check with its
    mark and reason, filtered (all, failed, errored, flaky)."""
    keep = run_filter(run, show)
    rows = []
    for row in (r for r in run.rows if keep(r)):
        status = (
            escape(row.status) if row.status == "ok" else _reason_html(f"{row.status}: {row.error or ''}")
        )
        cells = [escape(row.case.id), str(row.repeat + 1), status]
        for check in run.check_names:
            verdict = row.verdict(check)
            cells.append(
                ""
                if verdict is None
                else f"{mark_html(verdict.status, verdict.reason)} {_reason_html(verdict.reason)}"
            )
        rows.append(
            f'<tr data-case="{escape(row.case.id)}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
        )
    return _table(["case", "repeat", "status", *run.check_names], rows, f"no {show} case")


def case_options(run: EvalRun, show: str = "all") -> list[tuple[str, tuple[str, int]]]:
    """The grid's cases as (label, (case id, repeat)) for the picker, filtered as the grid is."""
    keep = run_filter(run, show)
    return [
        (f"{_label(row)}  {' '.join(MARK[v.status] for v in row.verdicts)}", (row.case.id, row.repeat))
        for row in run.rows
        if keep(row)
    ]


# -- a comparison ----------------------------------------------------------------------------


def _passed(row: CaseRow, check: str) -> bool:
    if check == ALL:
        return row.passed is True
    verdict = row.verdict(check)
    return verdict is not None and verdict.status == "pass"


def _reason(row: CaseRow, check: str) -> str:
    if row.status != "ok":
        return f"{row.status}: {row.error or ''}"
    if check == ALL:
        bad = [v for v in row.verdicts if v.status != "pass"]
        return "; ".join(f"{v.check}: {v.reason}" for v in bad) or "every check passed"
    verdict = row.verdict(check)
    return verdict.reason if verdict is not None else "not scored"


def flip_kind(cmp: EvalComparison, pair: tuple[CaseRow, CaseRow]) -> str | None:
    """ "pass→fail" or "fail→pass" for a pair whose verdict on every check together flipped, else
    "flipped" for one where a single check flipped, else None."""
    a, b = pair
    before, after = _passed(a, ALL), _passed(b, ALL)
    if before != after:
        return "pass→fail" if before else "fail→pass"
    if any(_passed(a, c) != _passed(b, c) for c in cmp.check_names):
        return "flipped"
    return None


def _keep_pair(kind: str | None, show: str) -> bool:
    if show == "all":
        return True
    if show == "flipped":
        return kind is not None
    return kind == show


def _pair_cell(a: CaseRow, b: CaseRow, check: str) -> str:
    before, after = _passed(a, check), _passed(b, check)
    marks = [mark_html("pass" if p else "fail", _reason(r, check)) for p, r in ((before, a), (after, b))]
    if before == after:
        return f"{marks[0]} {marks[1]}"
    arrow = "pass→fail" if before else "fail→pass"
    return f'<span class="anb-flip" title="{arrow}">{marks[0]} → {marks[1]}</span>'


def _why(cmp: EvalComparison, a: CaseRow, b: CaseRow) -> str:
    """Each check that flipped, and the failing side's reason."""
    out = []
    for check in cmp.check_names:
        before, after = _passed(a, check), _passed(b, check)
        if before != after:
            out.append(
                f"{check} {'fail→pass' if after else 'pass→fail'}: {_reason(a if after else b, check)}"
            )
    if not out and a.status != b.status:  # one side errored
        out.append(_reason(a if a.status != "ok" else b, ALL))
    return "; ".join(out)


def comparison_grid_html(cmp: EvalComparison, show: str = "all") -> str:
    """The paired cases as escaped HTML: a row per (case, repeat) with the baseline's and the
    candidate's marks per check, flips marked, and why a flipped case changed."""
    rows = []
    for pair in cmp.pairs:
        kind = flip_kind(cmp, pair)
        if not _keep_pair(kind, show):
            continue
        a, b = pair
        cells = [escape(a.case.id), str(a.repeat + 1), escape(kind or "")]
        cells += [_pair_cell(a, b, check) for check in [ALL, *cmp.check_names]]
        why = _why(cmp, a, b) if kind else ""
        cells.append(_reason_html(why) if why else "")
        css = ' class="anb-flipped"' if kind else ""
        rows.append(
            f'<tr data-case="{escape(a.case.id)}"{css}>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
        )
    head = ["case", "repeat", "flip", f"{ALL} ({cmp.baseline.name} → {cmp.candidate.name})", *cmp.check_names]
    return _table([*head, "why: each flip, and the failing side's reason"], rows, f"no {show} case")


def comparison_options(cmp: EvalComparison, show: str = "all") -> list[tuple[str, tuple[str, int]]]:
    """The paired cases as (label, (case id, repeat)) for the picker, filtered as the grid is."""
    out = []
    for pair in cmp.pairs:
        kind = flip_kind(cmp, pair)
        if _keep_pair(kind, show):
            out.append((f"{_label(pair[0])}  {kind or '='}", (pair[0].case.id, pair[0].repeat)))
    return out


def summary_html(cmp: EvalComparison) -> str:
    """The rates per check, both sides, with the flips each way and the paired test."""
    rows = [
        f"<tr><td>{escape(s.check)}</td><td>{s.baseline_rate:.0%}</td><td>{s.candidate_rate:.0%}</td>"
        f"<td>{s.pass_to_fail}</td><td>{s.fail_to_pass}</td><td>{s.p_value:.3g}</td></tr>"
        for s in cmp.summaries
    ]
    head = ["check", cmp.baseline.name, cmp.candidate.name, "pass→fail", "fail→pass", "McNemar p"]
    return _table(head, rows, "no check in common", f"{GRID_CLASS} anb-grid-whole")


__all__ = [
    "COMPARE_FILTERS",
    "FILTERS",
    "case_options",
    "comparison_grid_html",
    "comparison_options",
    "cut_words",
    "flip_kind",
    "grid_html",
    "mark_html",
    "run_filter",
    "summary_html",
]
