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
    from .diff import Change
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


def turn_text(turn: TurnRecord, show_error: bool = True) -> str:
    """The turn as deterministic plain text (``show_error=False`` leaves out why it failed, for
    a cell that shows the error itself)."""
    lines = [f"{turn.agent} · turn {turn.number} · {turn.status} · model {turn.model}"]
    lines.append(f"user: {turn.message}")
    calls = turn.tool_calls
    if calls:
        lines.append(f"tool calls ({len(calls)}):")
        for number, call in enumerate(calls, 1):
            head = f"  {number}. {call.name}({_arguments_text(call.arguments)})"
            if call.error is not None:
                lines.append(f"{head} -> error [{call.error_kind}]: {call.error}")
            else:
                lines.append(f"{head} -> {value_text(call.result)}")
            if call.hooks:
                lines.append(f"     hooks: {_hooks_text(call)}; answered by: {call.answered_by or '-'}")
            if call.changed_keys:
                lines.append(f"     changed: {', '.join(call.changed_keys)}")
    changes = turn.changes().keys
    if changes:
        lines.append("state:")
        for change in changes:
            lines.append(f"  {change_text(change)}  (by {', '.join(change.authors)})")
    if turn.status == "failed" and show_error:
        lines.append(f"failed: {turn.error}")
    elif turn.status == "ok":
        lines.append(f"answer: {turn.content or ''}")
    return "\n".join(lines)


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
                f"<tr><td>{number}</td><td><code>{_e(call.name)}</code></td>"
                f"<td><code>{_e(_arguments_text(call.arguments))}</code></td><td>{result}</td>"
                f"<td>{_e(_hooks_text(call)) or '-'}</td><td>{_e(call.answered_by or '-')}</td>"
                f"<td>{_e(', '.join(call.changed_keys)) or '-'}</td></tr>"
            )
        parts.append("</table>")
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
    parts.append("</div>")
    return "".join(parts)


__all__ = ["RECORD_CSS_CLASS", "change_text", "turn_html", "turn_text", "value_text"]
