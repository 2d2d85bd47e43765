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

from ..messages import parse_arguments
from ..state.diff import tokens as pointer_tokens
from ..util.text import shorten
from .attachments import figures_html, part_line, turn_bytes, user_parts

if TYPE_CHECKING:
    from ..events import Decision, OutputChecked, PendingCall, PromptSection, PromptTokens
    from ..state.diff import Change
    from .records import TurnRecord

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
    """A call's arguments as short text: parsed as the executor parses them, or (what it could
    not parse: malformed, too deep, an integer too long) the raw text, cut."""
    try:
        return value_text(parse_arguments(arguments))
    except ValueError:
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


ATTEMPT_ROWS = 10
"""Attempts listed in a turn record before the rest are counted."""


def output_head(turn: TurnRecord) -> str | None:
    """A typed turn's output line: ``output: Invoice · tool · 2 attempts`` (None: no output type)."""
    attempts = turn.attempts
    if not attempts:
        return None
    last = attempts[-1]
    count = f"{len(attempts)} attempt{'s' if len(attempts) != 1 else ''}"
    return f"output: {last.output_type or 'output'} · {last.mode} · {count}"


def attempt_text(attempt: OutputChecked) -> str:
    """One attempt in one line: ``attempt 2 ✓ {...the output...}`` or ``attempt 1 ✗ /total: ...``."""
    if attempt.ok:
        return f"attempt {attempt.attempt} ✓ {value_text(attempt.output)}"
    errors = "; ".join(
        (f"{e.get('path')}: " if e.get("path") else "")
        + (f"[{e['validator']}] " if e.get("validator") else "")
        + str(e.get("message"))
        for e in attempt.errors[:3]
    )
    more = f" (+{len(attempt.errors) - 3} more)" if len(attempt.errors) > 3 else ""
    return f"attempt {attempt.attempt} ✗ {shorten(errors, VALUE_LIMIT)}{more}"


def _attempt_lines(turn: TurnRecord) -> list[str]:
    attempts = turn.attempts
    lines = [attempt_text(a) for a in attempts[:ATTEMPT_ROWS]]
    if len(attempts) > ATTEMPT_ROWS:
        lines.append(f"… {len(attempts) - ATTEMPT_ROWS} more attempt(s)")
    return lines


CUT_MARK = "answer cut at the token limit"
"""How a record marks an answer the model stopped at ``max_tokens`` (``finish_reason: length``)."""


def turn_text(turn: TurnRecord, show_error: bool = True) -> str:
    """The turn as deterministic plain text (``show_error=False`` leaves out why it failed, for
    a cell that shows the error itself)."""
    lines = [f"{turn.agent} · turn {turn.number} · {turn.status} · model {turn.model}"]
    lines.append(f"user: {turn.message}")
    lines.extend(f"  + {part_line(p)}" for p in user_parts(turn))
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
            lines.extend(f"     + {part_line(p)}" for p in call.attachments)
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
    output_line = output_head(turn)
    if output_line is not None:
        lines.append(output_line)
        lines.extend(f"  {line}" for line in _attempt_lines(turn))
    if turn.status == "failed" and show_error:
        lines.append(f"failed: {turn.error}")
    elif turn.status == "ok":
        lines.append(f"answer: {turn.content or ''}")
        if turn.truncated:
            lines.append(f"({CUT_MARK})")
    elif turn.status == "paused":
        lines.append(f"paused: {PAUSED_NOTE}")
        lines.extend(f"  {line}" for line in pending_lines(turn))
    return "\n".join(lines)


PAUSED_NOTE = "waits for a person — decide each item (approve / reject / answer), then continue_run()"
"""What a paused turn's record says under it."""


def pending_lines(turn: TurnRecord) -> list[str]:
    """What a paused turn waits for, one line per item (the items of its members too): its id,
    kind, the call, the member's path, why, and the decision taken so far."""
    lines: list[str] = []
    for run in turn.walk():
        pause = run.pause
        if run.status != "paused" or pause is None:
            continue
        lines.extend(pending_line(item, pause.decisions.get(item.id)) for item in pause.items)
    return lines


def pending_line(item: PendingCall, decided: Decision | None = None) -> str:
    """One pending item in one line: ``[id] kind: call [member path] — reason → verdict``."""
    what = f"{item.tool}({value_text(item.arguments)})" if item.tool else f"model call {item.call + 1}"
    where = f" [{' ▸ '.join(item.path)}]" if len(item.path) > 1 else ""
    state = f" → {decided.verdict}" if decided is not None else ""
    return f"[{item.id}] {item.kind}: {what}{where} — {item.reason}{state}"


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
        parsed = parse_arguments(arguments)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not parsed:
        return f'<code style="{_BLOCK}">{_e(_arguments_text(arguments))}</code>'
    lines = "\n".join(f"{name}: {value_text(value)}" for name, value in parsed.items())
    return f'<code style="{_BLOCK}">{_e(lines)}</code>'


def _calls_html(turn: TurnRecord, found: dict[str, bytes]) -> str:
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
            result += figures_html(call.attachments, found)
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


def _output_html(turn: TurnRecord) -> str:
    """The output line and each attempt (a failed one marked), escaped."""
    head = output_head(turn)
    if head is None:
        return ""
    items = []
    for attempt, line in zip(turn.attempts, _attempt_lines(turn)):
        colour = "" if attempt.ok else f";color:{_COLOUR['error']}"
        items.append(
            f'<li data-ok="{str(attempt.ok).lower()}" style="text-align:left">'
            f'<code style="background:none;{_WRAP}{colour}">{_e(line)}</code></li>'
        )
    if len(turn.attempts) > ATTEMPT_ROWS:
        items.append(f'<li style="{_MUTED}">{_e(_attempt_lines(turn)[-1])}</li>')
    return (
        f'<div class="agentnb-record-output"><b>{_e(head)}</b></div>'
        f'<ul class="agentnb-record-attempts" style="margin:2px 0;padding-left:1.5em">{"".join(items)}</ul>'
    )


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
    found = turn_bytes([turn])  # the images' bytes, for their thumbnails
    parts.append(figures_html(user_parts(turn), found))
    tokens_line = tokens_text(turn.prompt)
    if tokens_line:
        parts.append(f'<div class="agentnb-record-tokens"><b>prompt tokens:</b> {_e(tokens_line)}</div>')
    if turn.tool_calls:
        parts.append(_calls_html(turn, found))
    if turn.children:
        parts.append(f"<div><b>delegations ({len(turn.children)}):</b></div>{_delegations_html(turn)}")
    parts.append(_changes_html(turn))
    parts.append(_output_html(turn))
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
    elif turn.status == "paused":
        items = "".join(f"<li><code>{_e(line)}</code></li>" for line in pending_lines(turn))
        parts.append(
            f'<div class="agentnb-record-pending"><b>paused:</b> {_e(PAUSED_NOTE)}'
            f'<ul style="margin:2px 0">{items}</ul></div>'
        )
    parts.append("</div>")
    return "".join(parts)


# What the comparison's record shares with the turn's (``history.comparison``).
escape = _e
BLOCK_STYLE, COLOURS, MUTED_STYLE = _BLOCK, _COLOUR, _MUTED

__all__ = [
    "BLOCK_STYLE",
    "COLOURS",
    "MUTED_STYLE",
    "escape",
    "RECORD_CSS_CLASS",
    "attempt_text",
    "output_head",
    "change_text",
    "path_change_text",
    "path_label",
    "count_text",
    "pending_line",
    "pending_lines",
    "tokens_text",
    "turn_html",
    "turn_text",
    "value_text",
]
