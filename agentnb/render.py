"""A turn as a static, deterministic summary: plain text and escaped HTML.

This is what a ``%%chat`` cell leaves behind and what a ``RunResult`` shows in a notebook, so a
saved notebook reads well on GitHub / nbviewer and nbval can compare it run after run. Hence:
no timestamps, durations, run ids or memory addresses, and every piece of text that came from a
model, a tool or the state goes through ``html.escape`` — nothing in it can become live HTML.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

from .text import shorten

if TYPE_CHECKING:
    from .compare import Comparison, LineRow
    from .diff import Change
    from .events import PromptRendered, PromptTokens
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
    key = change.key
    if change.how == "added":
        values = value_text(change.new)
    elif change.how == "removed":
        values = f"{value_text(change.old)} (removed)"
    else:
        values = f"{value_text(change.old)} → {value_text(change.new)}"
    return f"{_SIGN[change.how]} {key}: {values}"


def count_text(tokens: PromptTokens, count: int | None) -> str:
    """A token count as shown: ``42``, or ``≈42`` when estimated (``?`` when unknown)."""
    return "?" if count is None else f"{'' if tokens.exact else '≈'}{count}"


def tokens_text(prompt: PromptRendered | None) -> str | None:
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
    parts.append(f"user message {count_text(tokens, tokens.user)}")
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
                lines.append(f"{head} -> error [{call.error_kind}]: {call.error}")
            else:
                lines.append(f"{head} -> {value_text(call.result)}")
            if call.hooks:
                lines.append(f"     hooks: {_hooks_text(call)}; answered by: {call.answered_by or '-'}")
            if call.changed_keys:
                lines.append(f"     changed: {', '.join(call.changed_keys)}")
    if turn.children:
        lines.append(f"delegations ({len(turn.children)}):")
        lines.extend(delegation_lines(turn, "  "))
    changes = turn.changes().keys
    if changes:
        lines.append("state:")
        for change in changes:
            lines.append(f"  {change_text(change)}  (by {', '.join(change.authors)})")
    if turn.status == "failed" and show_error:
        lines.append(f"failed: {turn.error}")
    elif turn.status == "ok":
        lines.append(f"answer: {turn.content or ''}")
        if turn.truncated:
            lines.append(f"({CUT_MARK})")
    return "\n".join(lines)


def delegation_line(child: TurnRecord) -> str:
    """One delegation in one line: member, task, answer (or error), state changes, tokens."""
    outcome = f"answer: {shorten(child.content or '', 120)!r}" if child.status == "ok" else f"failed: {child.error}"
    changes = "; ".join(f"{change_text(c)} (by {', '.join(c.authors)})" for c in child.changes().keys) or "none"
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
        items.append(f"<li><details open><summary>{line}</summary>{inner}</details></li>" if inner else f"<li>{line}</li>")
    return f'<ul class="agentnb-record-delegations">{"".join(items)}</ul>' if items else ""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def turn_html(turn: TurnRecord, show_error: bool = True) -> str:
    """The turn as deterministic HTML; every text from a model, tool or state is escaped."""
    parts = [
        # tex2jax_ignore / mathjax_ignore: a "$" in an answer is a dollar, not TeX.
        f'<div class="{RECORD_CSS_CLASS} tex2jax_ignore mathjax_ignore" data-status="{_e(turn.status)}" '
        'style="border-left:3px solid #8aa4c8;padding:4px 10px;font-size:13px">',
        f"<div><b>{_e(turn.agent)}</b> · turn {turn.number} · {_e(turn.status)} · "
        f"model <code>{_e(turn.model)}</code></div>",
        f'<div class="agentnb-record-user"><b>user:</b> {_e(turn.message)}</div>',
    ]
    tokens = tokens_text(turn.prompt)
    if tokens:
        parts.append(f'<div class="agentnb-record-tokens"><b>prompt tokens:</b> {_e(tokens)}</div>')
    calls = turn.tool_calls
    if calls:
        parts.append(
            f'<table class="agentnb-record-calls"><caption style="text-align:left">tool calls '
            f"({len(calls)})</caption><tr><th>#</th><th>tool</th><th>arguments</th><th>result</th>"
            "<th>hooks</th><th>answered by</th><th>changed</th></tr>"
        )
        for number, call in enumerate(calls, 1):
            if call.error is not None:
                result = f'<span class="agentnb-error">error [{_e(call.error_kind)}]: {_e(call.error)}</span>'
            else:
                result = f"<code>{_e(value_text(call.result))}</code>"
            parts.append(
                f"<tr><td>{number}</td><td><code>{_e(call.name)}</code>{' <i>' + _e(call.source) + '</i>' if call.source else ''}</td>"
                f"<td><code>{_e(_arguments_text(call.arguments))}</code></td><td>{result}</td>"
                f"<td>{_e(_hooks_text(call)) or '-'}</td><td>{_e(call.answered_by or '-')}</td>"
                f"<td>{_e(', '.join(call.changed_keys)) or '-'}</td></tr>"
            )
        parts.append("</table>")
    if turn.children:
        parts.append(f"<div><b>delegations ({len(turn.children)}):</b></div>{_delegations_html(turn)}")
    changes = turn.changes().keys
    if changes:
        parts.append('<div><b>state:</b></div><ul class="agentnb-record-state">')
        for change in changes:
            parts.append(
                f'<li data-change="{change.how}"><code>{_e(change_text(change))}</code> '
                f"<i>(by {_e(', '.join(change.authors))})</i></li>"
            )
        parts.append("</ul>")
    if turn.status == "failed" and show_error:
        parts.append(f'<div class="agentnb-error"><b>failed:</b> {_e(turn.error)}</div>')
    elif turn.status == "ok":
        parts.append(
            f'<div class="agentnb-record-answer"><b>answer:</b> '
            f'<span style="white-space:pre-wrap">{_e(turn.content or "")}</span></div>'
        )
        if turn.truncated:
            parts.append(f'<div class="agentnb-record-cut agentnb-error">({CUT_MARK})</div>')
    parts.append("</div>")
    return "".join(parts)


# -- two turns side by side (agentnb.compare) ----------------------------------------------------

COMPARE_CSS_CLASS = "agentnb-compare"
"""The class of a comparison record's outer ``<div>``."""

_MARK = {"same": "=", "changed": "~", "removed": "-", "added": "+"}
_SIDES = {"removed": "only left", "added": "only right"}

DIFF_LINES = 40
"""Changed lines shown per section or request in a comparison record; the rest are counted."""


def _pair_text(tokens: tuple[PromptTokens | None, PromptTokens | None], left: int | None, right: int | None) -> str:
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
        lines.append(f"  {_MARK[section.how]} {section.source}{where}: {_pair_text(c.tokens, section.left_tokens, section.right_tokens)}")
        if section.how == "changed":
            lines.extend(_changed_lines(section.rows, "      "))
    lines.append("requests:")
    for request in c.requests:
        what = {"same": "the same", "changed": "differs in " + ", ".join(request.parts)}.get(request.how, _SIDES.get(request.how, ""))
        lines.append(f"  {_MARK[request.how]} call {request.call}: {what}")
    if c.tool_calls:
        lines.append("tool calls:")
        for call in c.tool_calls:
            pair = {"same": call.left, "changed": f"{call.left}  |  {call.right}"}.get(call.how) or f"{call.left or call.right} ({_SIDES[call.how]})"
            lines.append(f"  {_MARK[call.how]} {call.number}. {pair}")
    if c.delegations:
        lines.append("delegations:")
        lines.extend(_changed_lines(c.delegations, "  ") if any(r.how != "same" for r in c.delegations) else ["  = the same"])
    lines.append("state after:")
    for key in c.state:
        hidden = " [hidden from the model]" if key.hidden else ""
        if key.how == "same":
            lines.append(f"  = {key.key}: {key.left}{hidden}")
        elif key.how == "changed":
            below = f" (at {', '.join(key.paths)})" if key.paths else ""
            lines.append(f"  ~ {key.key}: {key.left} → {key.right}{below}{hidden}")
        else:
            lines.append(f"  {_MARK[key.how]} {key.key}: {key.left if key.how == 'removed' else key.right} ({_SIDES[key.how]}){hidden}")
    lines.append(f"answer left: {c.answers[0] or ''}")
    lines.append(f"answer right: {c.answers[1] or ''}")
    return "\n".join(lines)


_TD = ' style="text-align:left;vertical-align:top"'
_CODE_TD = ' style="text-align:left;vertical-align:top;white-space:pre-wrap;font-family:monospace"'
_WRAP_TD = ' style="text-align:left;vertical-align:top;white-space:pre-wrap"'


def _rows_html(rows: tuple[LineRow, ...], limit: int = DIFF_LINES) -> str:
    """A text diff as rows of the comparison table: a sign, then the left and the right line."""
    out = []
    shown = 0
    for row in rows:
        if row.how != "same":
            shown += 1
            if shown > limit:
                continue
        sign = "" if row.how == "same" else _MARK[row.how]
        out.append(
            f'<tr class="agentnb-compare-line" data-how="{row.how}"><td{_TD}>{sign}</td>'
            f'<td{_CODE_TD}>{_e(row.left if row.left is not None else "")}</td>'
            f'<td{_CODE_TD}>{_e(row.right if row.right is not None else "")}</td></tr>'
        )
    if shown > limit:
        out.append(f'<tr><td{_TD}></td><td colspan="2"{_TD}><i>… {shown - limit} more changed line(s)</i></td></tr>')
    return "".join(out)


def comparison_html(c: Comparison) -> str:
    """Two turns side by side as deterministic HTML; every text from a model, tool or state is
    escaped."""
    head = f"<tr><th{_TD}></th><th{_TD}>{_e(c.left)}</th><th{_TD}>{_e(c.right)}</th></tr>"
    parts = [
        f'<div class="{COMPARE_CSS_CLASS} tex2jax_ignore mathjax_ignore" '
        'style="border-left:3px solid #c8a48a;padding:4px 10px;font-size:13px">',
        f"<div><b>compare</b> {_e(c.left)} ↔ {_e(c.right)}</div>",
    ]
    why = [f"<li>{_e(x)}</li>" for x in c.causes] or ["<li>nothing differs in what was sent</li>"]
    parts.append(f'<div class="agentnb-compare-why"><b>why:</b><ul>{"".join(why)}</ul></div>')
    if c.effects:
        parts.append(f'<div class="agentnb-compare-effects"><b>what came of it:</b><ul>{"".join(f"<li>{_e(x)}</li>" for x in c.effects)}</ul></div>')
    parts.append(f'<table class="agentnb-compare-table" style="border-collapse:collapse">{head}')
    parts.append(f"<tr><td{_TD}><b>prompt tokens</b></td><td{_TD}>{_e(_counter_text(c.tokens[0]))}</td><td{_TD}>{_e(_counter_text(c.tokens[1]))}</td></tr>")
    for section in c.sections:
        a, b = c.tokens
        counts = (count_text(a, section.left_tokens) if a else "?", count_text(b, section.right_tokens) if b else "?")
        parts.append(
            f'<tr data-how="{section.how}"><td{_TD}>{_MARK[section.how]} <code>{_e(section.source)}</code></td>'
            f"<td{_TD}>{_e(counts[0])} tok</td><td{_TD}>{_e(counts[1])} tok</td></tr>"
        )
        if section.how != "same":
            parts.append(_rows_html(section.rows))
    for request in c.requests:
        what = ", ".join(request.parts) if request.how == "changed" else {"same": "the same"}.get(request.how, _SIDES.get(request.how, ""))
        parts.append(f'<tr data-how="{request.how}"><td{_TD}>{_MARK[request.how]} request {request.call}</td><td colspan="2"{_TD}>{_e(what)}</td></tr>')
    for call in c.tool_calls:
        parts.append(
            f'<tr data-how="{call.how}"><td{_TD}>{_MARK[call.how]} tool call {call.number}</td>'
            f"<td{_TD}><code>{_e(call.left or '-')}</code></td><td{_TD}><code>{_e(call.right or '-')}</code></td></tr>"
        )
    for key in c.state:
        hidden = " <i>(hidden from the model)</i>" if key.hidden else ""
        parts.append(
            f'<tr data-how="{key.how}"><td{_TD}>{_MARK[key.how]} state <code>{_e(key.key)}</code>{hidden}</td>'
            f"<td{_TD}><code>{_e(key.left if key.left is not None else '-')}</code></td>"
            f"<td{_TD}><code>{_e(key.right if key.right is not None else '-')}</code></td></tr>"
        )
    if c.delegations:
        how = "changed" if any(r.how != "same" for r in c.delegations) else "same"
        parts.append(f'<tr data-how="{how}"><td{_TD}>{_MARK[how]} delegations</td><td colspan="2"{_TD}>{"the same" if how == "same" else ""}</td></tr>')
        if how != "same":
            parts.append(_rows_html(c.delegations))
    parts.append(
        f'<tr class="agentnb-compare-answer"><td{_TD}>answer</td>'
        f'<td{_WRAP_TD}>{_e(c.answers[0] or "")}</td><td{_WRAP_TD}>{_e(c.answers[1] or "")}</td></tr>'
    )
    parts.append("</table></div>")
    return "".join(parts)


__all__ = [
    "COMPARE_CSS_CLASS",
    "RECORD_CSS_CLASS",
    "change_text",
    "comparison_html",
    "comparison_text",
    "count_text",
    "tokens_text",
    "turn_html",
    "turn_text",
    "value_text",
]
