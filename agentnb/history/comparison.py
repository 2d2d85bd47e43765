"""Two turns side by side, as data and as a static record: ``Comparison`` and what it is made
of, and its deterministic plain text and escaped HTML (as a turn's record, ``render``).

``compare.compare_turns`` makes one; a ``Comparison`` displays itself in a notebook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..events import PromptTokens
from .render import BLOCK_STYLE as _BLOCK
from .render import COLOURS as _COLOUR
from .render import MUTED_STYLE as _MUTED
from .render import count_text
from .render import escape as _e

How = Literal["same", "changed", "removed", "added"]
"""same; changed; removed = only on the left; added = only on the right."""


@dataclass(frozen=True)
class LineRow:
    """One row of a side-by-side text diff."""

    how: How
    left: str | None
    """The left line (None where the right has a line the left lacks)."""
    right: str | None
    """The right line (None where the left has a line the right lacks)."""


@dataclass(frozen=True)
class SectionDiff:
    """One section of the system prompt (matched by the option that produced it)."""

    source: str
    how: How
    rows: tuple[LineRow, ...]
    """The section's lines side by side."""
    left_tokens: int | None = None
    right_tokens: int | None = None


@dataclass(frozen=True)
class RequestDiff:
    """One model call's request on each side."""

    call: int
    """The call's number within the turn (1 = the first)."""
    how: How
    parts: tuple[str, ...]
    """What differs: ``system prompt``, ``message 3 (user)``, ``tools``, ``option temperature``, …"""
    rows: tuple[LineRow, ...]
    """The two payloads as indented JSON, side by side."""


@dataclass(frozen=True)
class ToolCallRow:
    """The n-th tool call of each turn."""

    number: int
    how: How
    left: str | None
    """``name(arguments) -> result`` on the left (None when the left made fewer calls)."""
    right: str | None


@dataclass(frozen=True)
class KeyDiff:
    """One top-level state key at the end of each turn."""

    key: str
    how: How
    left: str | None
    """The value as short JSON text (None where the key is absent)."""
    right: str | None
    hidden: bool = False
    """Kept out of the prompt on either side (``hide_state_keys``)."""
    paths: tuple[str, ...] = ()
    """The JSON pointers below the key that differ (the first few)."""


@dataclass(frozen=True)
class Comparison:
    """Two turns side by side (see the module docstring)."""

    left: str
    """``agent · turn N`` of the left turn."""
    right: str
    sections: tuple[SectionDiff, ...]
    requests: tuple[RequestDiff, ...]
    tool_calls: tuple[ToolCallRow, ...]
    state: tuple[KeyDiff, ...]
    """Every top-level key of the state each turn ended with."""
    answers: tuple[str | None, str | None]
    """The answer (or ``failed: error``) of each side."""
    tokens: tuple[PromptTokens | None, PromptTokens | None]
    """What each prompt cost."""
    causes: tuple[str, ...]
    """What differs in what was sent, first cause first."""
    effects: tuple[str, ...]
    """What differs in what came of it."""
    delegations: tuple[LineRow, ...] = ()
    """The two turns' trees of delegated runs, one line per delegation (member, task, answer,
    state changes, tokens), line by line; empty when neither turn delegated."""

    @property
    def same(self) -> bool:
        """Whether the two turns sent and did the same."""
        return not self.causes and not self.effects

    def text(self) -> str:
        """The comparison as deterministic plain text."""
        return comparison_text(self)

    def html(self) -> str:
        """The comparison as deterministic, escaped HTML."""
        return comparison_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        return self.text()


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
    "DIFF_LINES",
    "Comparison",
    "How",
    "KeyDiff",
    "LineRow",
    "RequestDiff",
    "SectionDiff",
    "ToolCallRow",
    "comparison_html",
    "comparison_text",
]
