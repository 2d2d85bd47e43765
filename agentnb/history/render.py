"""A turn as a static, deterministic summary: plain text and escaped HTML.

This is what a ``%%chat`` cell leaves behind and what a ``RunResult`` shows in a notebook, so a
saved notebook reads well on GitHub / nbviewer and nbval can compare it run after run. Hence:
no timestamps, durations, run ids or memory addresses, and every piece of text that came from a
model, a tool or the state goes through ``html.escape`` — nothing in it can become live HTML.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any, Protocol

from ..state.diff import tokens as pointer_tokens
from ..util.text import shorten

if TYPE_CHECKING:
    from ..events import PromptSection, PromptTokens
    from ..state.diff import Change
    from .compare import Comparison, LineRow
    from .history import TurnRecord

RECORD_CSS_CLASS = "agentnb-record"
"""The class of the record's outer ``<div>`` (tests and the inspector look for it)."""

VALUE_LIMIT = 300
"""Longest value text shown in a record before it is cut with an ellipsis."""


def value_text(value: Any, limit: int = VALUE_LIMIT) -> str:
    """A value as short deterministic text (JSON where possible)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=_fallback)
    except (TypeError, ValueError):
        text = _fallback(value)
    return shorten(text, limit)


def _fallback(value: Any) -> str:
    # repr() of an arbitrary object may carry a memory address; the class name never does.
    text = repr(value)
    return f"<{type(value).__name__}>" if " at 0x" in text else text


def _arguments_text(arguments: str) -> str:
    try:
        return value_text(json.loads(arguments)) if arguments.strip() else "{}"
    except json.JSONDecodeError:
        return value_text(arguments)


def _hooks_text(call: Any) -> str:
    return " → ".join(f"{h.name} ({h.outcome})" for h in call.hooks)


_SIGN = {"added": "+", "changed": "~", "removed": "-"}


def change_text(change: Change) -> str:
    """A top-level key's change: ``+ key: new``, ``~ key: old → new`` or ``- key: old (removed)``."""
    return _change_line(change, change.key)


def _change_line(change: Change, label: str) -> str:
    if change.how == "added":
        values = value_text(change.new)
    elif change.how == "removed":
        values = f"{value_text(change.old)} (removed)"
    else:
        values = f"{value_text(change.old)} → {value_text(change.new)}"
    return f"{_SIGN[change.how]} {label}: {values}"


def path_label(path: str) -> str:
    """A JSON pointer as the inspector shows it: ``/cart/items/0`` → ``cart › items › 0``."""
    return " › ".join(pointer_tokens(path)) if path else "(the whole state)"


def path_change_text(change: Change) -> str:
    """One path's change as the inspector lists it: ``+ cart › items › 2: "eggs"``,
    ``~ budget: 50.0 → 35.0`` or ``- cart › coupon: "X" (removed)``."""
    return _change_line(change, path_label(change.path))


CHANGE_ROWS = 20
"""Changed paths listed in a turn record before the rest are counted (as the inspector does)."""


def _shown_changes(turn: TurnRecord) -> tuple[list[Change], int]:
    """The path-level changes a record lists, and how many more there are."""
    paths = turn.changes().paths
    return paths[:CHANGE_ROWS], max(0, len(paths) - CHANGE_ROWS)


def count_text(tokens: PromptTokens, count: int | None) -> str:
    """A token count as shown: ``42``, or ``≈42`` when estimated (``?`` when unknown)."""
    return "?" if count is None else f"{'' if tokens.exact else '≈'}{count}"


class CountedPrompt(Protocol):
    """A prompt with its token counts: a turn's PromptRendered, or an agent's Observation."""

    @property
    def sections(self) -> tuple[PromptSection, ...]: ...

    @property
    def tokens(self) -> PromptTokens | None: ...


def tokens_text(prompt: CountedPrompt | None) -> str | None:
    """What a turn's prompt cost, by section: ``52 (instructions 9 · session_state 31 · user
    message 3) · o200k_base``, with ``≈`` and the reason when estimated; None when not counted."""
    tokens = prompt.tokens if prompt is not None else None
    if prompt is None or tokens is None:
        return None
    by_source: dict[str, int] = {}
    for section, count in zip(prompt.sections, tokens.sections):
        by_source[section.source] = by_source.get(section.source, 0) + count
    parts = [f"{source} {count_text(tokens, count)}" for source, count in by_source.items()]
    if tokens.history:
        parts.append(f"earlier turns {count_text(tokens, tokens.history)}")
    earlier = tokens.earlier_sections
    if earlier:  # a handoff's history, sent before the user message
        parts.append(f"handoff history {count_text(tokens, sum(earlier))}")
    user = f"user message {count_text(tokens, tokens.user)}"
    sections = getattr(prompt, "user_sections", ()) or ()
    if len(sections) > 1 and len(tokens.user_sections) == len(sections):  # what a team added to it
        user += (
            " ("
            + " · ".join(
                f"{s.source} {count_text(tokens, n)}" for s, n in zip(sections, tokens.user_sections)
            )
            + ")"
        )
    parts.append(user)
    if tokens.template is not None:
        parts.append(f"chat template {count_text(tokens, tokens.template)}")
    how = tokens.counter if tokens.exact else f"≈ estimate: {tokens.note}" if tokens.note else "≈ estimate"
    return f"{count_text(tokens, tokens.total)} ({' · '.join(parts)}) · {how}"


CUT_MARK = "answer cut at the token limit"
"""How a record marks an answer the model stopped at ``max_tokens`` (``finish_reason: length``)."""


def turn_text(turn: TurnRecord, show_error: bool = True) -> str:
    """The turn as deterministic plain text (``show_error=False`` leaves out why it failed, for
    a cell that shows the error itself)."""
    lines = [f"{turn.agent} · turn {turn.number} · {turn.status} · model {turn.model}"]
    lines.append(f"user: {turn.message}")
    tokens = tokens_text(turn.prompt)
    if tokens:
        lines.append(f"prompt tokens: {tokens}")
    calls = turn.tool_calls
    if calls:
        lines.append(f"tool calls ({len(calls)}):")
        for number, call in enumerate(calls, 1):
            served = f" [{call.source}]" if call.source else ""
            head = f"  {number}. {call.name}{served}({_arguments_text(call.arguments)})"
            if call.error is not None:
                lines.append(f"{head} -> ✗ error [{call.error_kind}]: {call.error}")
            else:
                lines.append(f"{head} -> {value_text(call.result)}")
            if call.hooks:
                lines.append(f"     hooks: {_hooks_text(call)}; answered by: {call.answered_by or '-'}")
            if call.changed_keys:
                lines.append(f"     changed: {', '.join(call.changed_keys)}")
    if turn.children:
        lines.append(f"delegations ({len(turn.children)}):")
        lines.extend(delegation_lines(turn, "  "))
    changes, more = _shown_changes(turn)
    if changes:
        lines.append("state:")
        for change in changes:
            lines.append(f"  {path_change_text(change)}  (by {', '.join(change.authors)})")
        if more:
            lines.append(f"  … {more} more changed path(s)")
    if turn.status == "failed" and show_error:
        lines.append(f"failed: {turn.error}")
    elif turn.status == "ok":
        lines.append(f"answer: {turn.content or ''}")
        if turn.truncated:
            lines.append(f"({CUT_MARK})")
    return "\n".join(lines)


def delegation_line(child: TurnRecord) -> str:
    """One delegation in one line: member, task, answer (or error), state changes, tokens."""
    outcome = (
        f"answer: {shorten(child.content or '', 120)!r}" if child.status == "ok" else f"failed: {child.error}"
    )
    shown, more = _shown_changes(child)
    changes = "; ".join(f"{path_change_text(c)} (by {', '.join(c.authors)})" for c in shown) or "none"
    if more:
        changes += f"; … {more} more"
    own, total = child.usage.total_tokens, child.usage_total.total_tokens
    estimated = "~" if child.usage.estimated else ""
    return (
        f"▸ {' ▸ '.join(child.path)} · task: {shorten(child.message, 120)!r} · {outcome} · "
        f"state: {changes} · tokens {estimated}{own} own / {estimated}{total} total"
    )


def delegation_lines(turn: TurnRecord, indent: str) -> list[str]:
    """A run's delegations, depth first in call order, one line each, indented by depth."""
    lines: list[str] = []
    for child in turn.children:
        lines.append(indent + delegation_line(child))
        lines.extend(delegation_lines(child, indent + "  "))
    return lines


def _delegations_html(turn: TurnRecord) -> str:
    """The delegations as a nested ``<details>`` tree (escaped)."""
    items = []
    for child in turn.children:
        inner = _delegations_html(child)
        line = _e(delegation_line(child))
        items.append(
            f"<li><details open><summary>{line}</summary>{inner}</details></li>"
            if inner
            else f"<li>{line}</li>"
        )
    return f'<ul class="agentnb-record-delegations">{"".join(items)}</ul>' if items else ""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


# Inline styles, not classes: a notebook's saved HTML carries no stylesheet. Colours are theme
# variables — JupyterLab's, then VS Code's — chosen for a contrast of 4.5:1 or more on both the
# light and the dark theme's background; the fallback is for a light page with neither.
_COLOUR = {
    "added": "var(--jp-success-color0,var(--vscode-gitDecoration-addedResourceForeground,#1b5e20))",
    "removed": "var(--jp-error-color1,var(--vscode-gitDecoration-deletedResourceForeground,#b71c1c))",
    "changed": (
        "var(--jp-mirror-editor-variable-2-color,"
        "var(--vscode-gitDecoration-modifiedResourceForeground,#00366d))"
    ),
    "error": "var(--jp-error-color1,var(--vscode-errorForeground,#b71c1c))",
}
_CELL = "text-align:left;vertical-align:top;padding:2px 8px 2px 0"
_WRAP = "white-space:pre-wrap;overflow-wrap:anywhere"
_BLOCK = "display:inline-block;" + _WRAP  # a value that wraps as one box, not line by line
_MUTED = "color:var(--jp-ui-font-color2,var(--vscode-descriptionForeground,#555))"


def _td(content: str, style: str = "") -> str:
    return f'<td style="{_CELL}{";" + style if style else ""}">{content}</td>'


def _arguments_html(arguments: str) -> str:
    """A call's arguments, one ``name: value`` line each (a long value wraps inside its line)."""
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict) or not parsed:
        return f'<code style="{_BLOCK}">{_e(_arguments_text(arguments))}</code>'
    lines = "\n".join(f"{name}: {value_text(value)}" for name, value in parsed.items())
    return f'<code style="{_BLOCK}">{_e(lines)}</code>'


def _calls_html(turn: TurnRecord) -> str:
    calls = turn.tool_calls
    heads = "".join(
        f'<th style="{_CELL};white-space:nowrap">{h}</th>'
        for h in ("#", "tool", "arguments", "result", "hooks", "answered by", "changed")
    )
    rows = [
        f'<table class="agentnb-record-calls" style="border-collapse:collapse;text-align:left;margin:2px 0">'
        f'<caption style="text-align:left">tool calls ({len(calls)})</caption><tr>{heads}</tr>'
    ]
    for number, call in enumerate(calls, 1):
        source = f" <i>{_e(call.source)}</i>" if call.source else ""
        if call.error is not None:
            result = (
                f'<span class="agentnb-error" style="color:{_COLOUR["error"]};{_WRAP}"><b>✗ error</b> '
                f"[{_e(call.error_kind)}]: {_e(call.error)}</span>"
            )
            mark = (
                f' class="agentnb-record-call-error" data-error="{_e(call.error_kind)}" '
                f'style="box-shadow:inset 3px 0 {_COLOUR["error"]}"'
            )
        else:
            result = f'<code style="{_BLOCK}">{_e(value_text(call.result))}</code>'
            mark = ""
        rows.append(
            f"<tr{mark}>{_td(str(number), 'padding-left:6px')}"
            f"{_td(f'<code>{_e(call.name)}</code>{source}', 'white-space:nowrap')}"
            f"{_td(_arguments_html(call.arguments))}{_td(result)}"
            f"{_td(_e(_hooks_text(call)) or '-')}{_td(_e(call.answered_by or '-'))}"
            f"{_td(_e(', '.join(call.changed_keys)) or '-')}</tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _changes_html(turn: TurnRecord) -> str:
    changes, more = _shown_changes(turn)
    if not changes:
        return ""
    parts = [
        '<div><b>state:</b></div><ul class="agentnb-record-state" style="margin:2px 0;padding-left:1.5em">'
    ]
    for change in changes:
        parts.append(
            f'<li data-change="{change.how}" data-path="{_e(change.path)}" style="text-align:left">'
            f'<code style="color:{_COLOUR[change.how]};background:none;{_WRAP}">{_e(path_change_text(change))}</code> '
            f'<i style="{_MUTED}">(by {_e(", ".join(change.authors))})</i></li>'
        )
    if more:
        parts.append(f'<li style="{_MUTED}">… {more} more changed path(s)</li>')
    parts.append("</ul>")
    return "".join(parts)


def turn_html(turn: TurnRecord, show_error: bool = True) -> str:
    """The turn as deterministic HTML; every text from a model, tool or state is escaped."""
    parts = [
        # tex2jax_ignore / mathjax_ignore: a "$" in an answer is a dollar, not TeX.
        f'<div class="{RECORD_CSS_CLASS} tex2jax_ignore mathjax_ignore" data-status="{_e(turn.status)}" '
        'style="border-left:3px solid var(--jp-brand-color2,#8aa4c8);padding:4px 10px;font-size:13px;text-align:left">',
        f"<div><b>{_e(turn.agent)}</b> · turn {turn.number} · {_e(turn.status)} · "
        f"model <code>{_e(turn.model)}</code></div>",
        f'<div class="agentnb-record-user"><b>user:</b> {_e(turn.message)}</div>',
    ]
    tokens_line = tokens_text(turn.prompt)
    if tokens_line:
        parts.append(f'<div class="agentnb-record-tokens"><b>prompt tokens:</b> {_e(tokens_line)}</div>')
    if turn.tool_calls:
        parts.append(_calls_html(turn))
    if turn.children:
        parts.append(f"<div><b>delegations ({len(turn.children)}):</b></div>{_delegations_html(turn)}")
    parts.append(_changes_html(turn))
    if turn.status == "failed" and show_error:
        parts.append(
            f'<div class="agentnb-error" style="color:{_COLOUR["error"]}"><b>failed:</b> {_e(turn.error)}</div>'
        )
    elif turn.status == "ok":
        parts.append(
            f'<div class="agentnb-record-answer"><b>answer:</b> '
            f'<span style="white-space:pre-wrap">{_e(turn.content or "")}</span></div>'
        )
        if turn.truncated:
            parts.append(f'<div class="agentnb-record-cut agentnb-error">({CUT_MARK})</div>')
    parts.append("</div>")
    return "".join(parts)


# -- two turns side by side (agentnb.history.compare) ----------------------------------------------------

COMPARE_CSS_CLASS = "agentnb-compare"
"""The class of a comparison record's outer ``<div>``."""

_MARK = {"same": "=", "changed": "~", "removed": "-", "added": "+"}
_SIDES = {"removed": "only left", "added": "only right"}

DIFF_LINES = 40
"""Changed lines shown per section or request in a comparison record; the rest are counted."""


def _pair_text(
    tokens: tuple[PromptTokens | None, PromptTokens | None], left: int | None, right: int | None
) -> str:
    a, b = tokens
    return f"{count_text(a, left) if a else '?'} → {count_text(b, right) if b else '?'} tok"


def _changed_lines(rows: tuple[LineRow, ...], indent: str) -> list[str]:
    lines: list[str] = []
    for row in rows:
        if row.how == "same":
            continue
        if row.left is not None:
            lines.append(f"{indent}- {row.left}")
        if row.right is not None:
            lines.append(f"{indent}+ {row.right}")
    if len(lines) > DIFF_LINES:
        lines = lines[:DIFF_LINES] + [f"{indent}… {len(lines) - DIFF_LINES} more changed line(s)"]
    return lines


def _counter_text(tokens: PromptTokens | None) -> str:
    if tokens is None:
        return "not counted"
    return f"{count_text(tokens, tokens.total)} ({tokens.counter if tokens.exact else '≈ estimate'})"


def comparison_text(c: Comparison) -> str:
    """Two turns side by side as deterministic plain text: why they differ, then the system
    prompt by section, the requests, tool calls, state and answers."""
    lines = [f"compare: {c.left}  ↔  {c.right}"]
    if c.same:
        lines.append("the two turns sent and did the same")
    for i, cause in enumerate(c.causes):
        lines.append(("why: " if i == 0 else "     ") + cause)
    for i, effect in enumerate(c.effects):
        lines.append(("what came of it: " if i == 0 else "                 ") + effect)
    lines.append(f"prompt tokens: {_counter_text(c.tokens[0])} → {_counter_text(c.tokens[1])}")
    lines.append("system prompt:")
    for section in c.sections:
        where = f" ({_SIDES[section.how]})" if section.how in _SIDES else ""
        lines.append(
            f"  {_MARK[section.how]} {section.source}{where}: "
            f"{_pair_text(c.tokens, section.left_tokens, section.right_tokens)}"
        )
        if section.how == "changed":
            lines.extend(_changed_lines(section.rows, "      "))
    lines.append("requests:")
    for request in c.requests:
        what = {"same": "the same", "changed": "differs in " + ", ".join(request.parts)}.get(
            request.how, _SIDES.get(request.how, "")
        )
        lines.append(f"  {_MARK[request.how]} call {request.call}: {what}")
    if c.tool_calls:
        lines.append("tool calls:")
        for call in c.tool_calls:
            pair = {"same": call.left, "changed": f"{call.left}  |  {call.right}"}.get(
                call.how
            ) or f"{call.left or call.right} ({_SIDES[call.how]})"
            lines.append(f"  {_MARK[call.how]} {call.number}. {pair}")
    if c.delegations:
        lines.append("delegations:")
        lines.extend(
            _changed_lines(c.delegations, "  ")
            if any(r.how != "same" for r in c.delegations)
            else ["  = the same"]
        )
    lines.append("state after:")
    for key in c.state:
        hidden = " [hidden from the model]" if key.hidden else ""
        if key.how == "same":
            lines.append(f"  = {key.key}: {key.left}{hidden}")
        elif key.how == "changed":
            below = f" (at {', '.join(key.paths)})" if key.paths else ""
            lines.append(f"  ~ {key.key}: {key.left} → {key.right}{below}{hidden}")
        else:
            lines.append(
                f"  {_MARK[key.how]} {key.key}: {key.left if key.how == 'removed' else key.right} "
                f"({_SIDES[key.how]}){hidden}"
            )
    lines.append(f"answer left: {c.answers[0] or ''}")
    lines.append(f"answer right: {c.answers[1] or ''}")
    return "\n".join(lines)


_TD = ' style="text-align:left;vertical-align:top"'
_LABEL_TD = ' style="text-align:left;vertical-align:top;white-space:nowrap;padding-right:10px"'
_HOW_COLOUR = {"changed": _COLOUR["changed"], "added": _COLOUR["added"], "removed": _COLOUR["removed"]}


def _mark(how: str) -> str:
    """The sign of a comparison row (``=``, ``~``, ``+``, ``-``), coloured by what it means."""
    colour = _HOW_COLOUR.get(how)
    sign = _e(_MARK[how])
    return f'<b style="color:{colour}">{sign}</b>' if colour else f'<span style="{_MUTED}">{sign}</span>'


_CODE_TD = ' style="text-align:left;vertical-align:top;white-space:pre-wrap;font-family:monospace"'
_WRAP_TD = ' style="text-align:left;vertical-align:top;white-space:pre-wrap;overflow-wrap:anywhere"'


def _rows_html(rows: tuple[LineRow, ...], limit: int = DIFF_LINES) -> str:
    """A text diff as rows of the comparison table: a sign, then the left and the right line."""
    out = []
    shown = 0
    for row in rows:
        if row.how != "same":
            shown += 1
            if shown > limit:
                continue
        sign = "" if row.how == "same" else _mark(row.how)
        left_style = right_style = _CODE_TD
        if row.how != "same":
            left_style = _CODE_TD[:-1] + f';color:{_COLOUR["removed"]}"'
            right_style = _CODE_TD[:-1] + f';color:{_COLOUR["added"]}"'
        out.append(
            f'<tr class="agentnb-compare-line" data-how="{row.how}"><td{_LABEL_TD}>{sign}</td>'
            f"<td{left_style}>{_e(row.left if row.left is not None else '')}</td>"
            f"<td{right_style}>{_e(row.right if row.right is not None else '')}</td></tr>"
        )
    if shown > limit:
        out.append(
            f'<tr><td{_TD}></td><td colspan="2"{_TD}><i>… {shown - limit} more changed line(s)</i></td></tr>'
        )
    return "".join(out)


def comparison_html(c: Comparison) -> str:
    """Two turns side by side as deterministic HTML; every text from a model, tool or state is
    escaped."""
    head = f"<tr><th{_LABEL_TD}></th><th{_TD}>{_e(c.left)}</th><th{_TD}>{_e(c.right)}</th></tr>"
    parts = [
        f'<div class="{COMPARE_CSS_CLASS} tex2jax_ignore mathjax_ignore" '
        'style="border-left:3px solid var(--jp-warn-color2,#c8a48a);padding:4px 10px;font-size:13px;text-align:left">',
        f"<div><b>compare</b> {_e(c.left)} ↔ {_e(c.right)}</div>",
    ]
    why = [f"<li>{_e(x)}</li>" for x in c.causes] or ["<li>nothing differs in what was sent</li>"]
    parts.append(f'<div class="agentnb-compare-why"><b>why:</b><ul>{"".join(why)}</ul></div>')
    if c.effects:
        parts.append(
            '<div class="agentnb-compare-effects"><b>what came of it:</b>'
            f"<ul>{''.join(f'<li>{_e(x)}</li>' for x in c.effects)}</ul></div>"
        )
    parts.append(f'<table class="agentnb-compare-table" style="border-collapse:collapse">{head}')
    parts.append(
        f"<tr><td{_LABEL_TD}><b>prompt tokens</b></td>"
        f"<td{_TD}>{_e(_counter_text(c.tokens[0]))}</td><td{_TD}>{_e(_counter_text(c.tokens[1]))}</td></tr>"
    )
    for section in c.sections:
        a, b = c.tokens
        counts = (
            count_text(a, section.left_tokens) if a else "?",
            count_text(b, section.right_tokens) if b else "?",
        )
        parts.append(
            f'<tr data-how="{section.how}"><td{_LABEL_TD}>{_mark(section.how)} <code>{_e(section.source)}</code></td>'
            f"<td{_TD}>{_e(counts[0])} tok</td><td{_TD}>{_e(counts[1])} tok</td></tr>"
        )
        if section.how != "same":
            parts.append(_rows_html(section.rows))
    for request in c.requests:
        what = (
            ", ".join(request.parts)
            if request.how == "changed"
            else {"same": "the same"}.get(request.how, _SIDES.get(request.how, ""))
        )
        parts.append(
            f'<tr data-how="{request.how}"><td{_LABEL_TD}>{_mark(request.how)} request {request.call}</td>'
            f'<td colspan="2"{_TD}>{_e(what)}</td></tr>'
        )
    for call in c.tool_calls:
        parts.append(
            f'<tr data-how="{call.how}"><td{_LABEL_TD}>{_mark(call.how)} tool call {call.number}</td>'
            f'<td{_TD}><code style="{_BLOCK}">{_e(call.left or "-")}</code></td>'
            f'<td{_TD}><code style="{_BLOCK}">{_e(call.right or "-")}</code></td></tr>'
        )
    for key in c.state:
        hidden = " <i>(hidden from the model)</i>" if key.hidden else ""
        parts.append(
            f'<tr data-how="{key.how}"><td{_LABEL_TD}>{_mark(key.how)} state <code>{_e(key.key)}</code>{hidden}</td>'
            f'<td{_TD}><code style="{_BLOCK}">{_e(key.left if key.left is not None else "-")}</code></td>'
            f'<td{_TD}><code style="{_BLOCK}">{_e(key.right if key.right is not None else "-")}</code></td></tr>'
        )
    if c.delegations:
        how = "changed" if any(r.how != "same" for r in c.delegations) else "same"
        parts.append(
            f'<tr data-how="{how}"><td{_LABEL_TD}>{_mark(how)} delegations</td>'
            f'<td colspan="2"{_TD}>{"the same" if how == "same" else ""}</td></tr>'
        )
        if how != "same":
            parts.append(_rows_html(c.delegations))
    parts.append(
        f'<tr class="agentnb-compare-answer"><td{_LABEL_TD}>answer</td>'
        f"<td{_WRAP_TD}>{_e(c.answers[0] or '')}</td><td{_WRAP_TD}>{_e(c.answers[1] or '')}</td></tr>"
    )
    parts.append("</table></div>")
    return "".join(parts)


__all__ = [
    "COMPARE_CSS_CLASS",
    "RECORD_CSS_CLASS",
    "change_text",
    "path_change_text",
    "path_label",
    "comparison_html",
    "comparison_text",
    "count_text",
    "tokens_text",
    "turn_html",
    "turn_text",
    "value_text",
]
