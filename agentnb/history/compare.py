"""Two turns side by side — of two agents (a fork and its parent), or two turns of one: what each
sent (system prompt by section, requests), what came of it (tool calls, state, answer), and in
a few lines why they differ.

``compare_turns(left, right)`` works on turn records; ``agent.compare(...)`` picks the turns.
A ``Comparison`` displays as a static text/HTML record (``agentnb.history.render``): deterministic and
escaped, so it reads on GitHub and nbval can compare it.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..state.diff import MISSING, json_equal, make_patch
from .comparison import Comparison, How, KeyDiff, LineRow, RequestDiff, SectionDiff, ToolCallRow
from .records import TurnRecord
from .render import delegation_lines, value_text


def line_rows(left: str | None, right: str | None) -> tuple[LineRow, ...]:
    """Two texts line by line, side by side: equal lines paired, changed lines paired in order,
    the rest on one side only."""
    a = [] if left is None else left.split("\n")
    b = [] if right is None else right.split("\n")
    rows: list[LineRow] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows.extend(LineRow("same", a[i], b[j]) for i, j in zip(range(i1, i2), range(j1, j2)))
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        rows.extend(LineRow("changed", a[i1 + k], b[j1 + k]) for k in range(pairs))
        rows.extend(LineRow("removed", a[i], None) for i in range(i1 + pairs, i2))
        rows.extend(LineRow("added", None, b[j]) for j in range(j1 + pairs, j2))
    return tuple(rows)


def _how(left: Any, right: Any) -> How:
    if left is MISSING:
        return "added"
    if right is MISSING:
        return "removed"
    return "same" if json_equal(left, right) else "changed"


def _sections(left: TurnRecord, right: TurnRecord) -> tuple[SectionDiff, ...]:
    """Sections matched by source, in the order they appear (left's first, then right's own)."""

    def by_source(turn: TurnRecord) -> dict[str, tuple[str, int | None]]:
        prompt = turn.prompt
        if prompt is None:
            return {}
        counts = prompt.tokens.sections if prompt.tokens is not None else ()
        out: dict[str, tuple[str, int | None]] = {}
        for i, section in enumerate(prompt.sections):
            text, tokens = out.get(section.source, ("", 0))
            count = counts[i] if i < len(counts) else None
            out[section.source] = (
                text + section.text,
                None if count is None or tokens is None else tokens + count,
            )
        return out

    a, b = by_source(left), by_source(right)
    out = []
    for source in dict.fromkeys([*a, *b]):
        (ta, ka), (tb, kb) = a.get(source, (MISSING, None)), b.get(source, (MISSING, None))
        # Blank lines around a section are how sections are joined, not what they say.
        ta, tb = (t if t is MISSING else t.strip("\n") for t in (ta, tb))
        rows = line_rows(None if ta is MISSING else ta, None if tb is MISSING else tb)
        out.append(SectionDiff(source, _how(ta, tb), rows, ka, kb))
    return tuple(out)


def _request_parts(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """What differs between two requests, in the order the model reads them: the system prompt,
    the earlier conversation, the user message, this turn's tool round trips, tools, options."""
    parts = []
    (sa, ha, ua, ta), (sb, hb, ub, tb) = _regions(a), _regions(b)
    if _how(sa, sb) != "same":
        parts.append("system prompt")
    if _how(ha, hb) != "same":
        parts.append(f"earlier conversation ({len(ha)} vs {len(hb)} messages)")
    if _how(ua, ub) != "same":
        parts.append("user message")
    if _how(ta, tb) != "same":
        parts.append(f"this turn's tool round trips ({len(ta)} vs {len(tb)} messages)")
    if not json_equal(_tool_names(a), _tool_names(b)):
        parts.append("tools offered")
    elif not json_equal(a.get("tools"), b.get("tools")):
        parts.append("tool schemas")
    for key in dict.fromkeys([*a, *b]):
        if key not in ("messages", "tools") and _how(a.get(key, MISSING), b.get(key, MISSING)) != "same":
            parts.append(f"option {key}")
    return parts


def _regions(request: Mapping[str, Any]) -> tuple[Any, list[Any], Any, list[Any]]:
    """A request's messages as (system prompt, earlier conversation, user message, what followed
    it in this turn)."""
    messages = list(request.get("messages") or [])
    system = messages.pop(0) if messages and messages[0].get("role") in ("system", "developer") else MISSING
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
    if last_user is None:
        return system, [], MISSING, messages
    return system, messages[:last_user], messages[last_user], messages[last_user + 1 :]


def _tool_names(request: Mapping[str, Any]) -> list[str]:
    return [str((t.get("function") or t).get("name")) for t in request.get("tools") or []]


def _requests(left: TurnRecord, right: TurnRecord) -> tuple[RequestDiff, ...]:
    ca, cb = left.model_calls, right.model_calls
    out = []
    for i in range(max(len(ca), len(cb))):
        a = ca[i].request if i < len(ca) else MISSING
        b = cb[i].request if i < len(cb) else MISSING
        how = _how(a, b)
        parts = tuple(_request_parts(a, b)) if how == "changed" else ()
        rows = line_rows(None if a is MISSING else _json(a), None if b is MISSING else _json(b))
        out.append(RequestDiff(i + 1, how, parts, rows))
    return tuple(out)


def _json(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=repr)


def _call_text(call: Any) -> str:
    outcome = f"error: {call.error}" if call.error is not None else value_text(call.result, 120)
    return f"{call.name}({call.arguments}) -> {outcome}"


def _tool_calls(left: TurnRecord, right: TurnRecord) -> tuple[ToolCallRow, ...]:
    a = [_call_text(c) for c in left.tool_calls]
    b = [_call_text(c) for c in right.tool_calls]
    out = []
    for i in range(max(len(a), len(b))):
        x, y = (a[i] if i < len(a) else None), (b[i] if i < len(b) else None)
        how: How = "added" if x is None else "removed" if y is None else "same" if x == y else "changed"
        out.append(ToolCallRow(i + 1, how, x, y))
    return tuple(out)


PATHS_SHOWN = 5
"""Differing paths listed under one changed key."""


def _state(left: TurnRecord, right: TurnRecord) -> tuple[KeyDiff, ...]:
    a, b = left.state_after, right.state_after
    hidden = set(left.prompt.hidden_keys if left.prompt else ()) | set(
        right.prompt.hidden_keys if right.prompt else ()
    )
    out = []
    for key in dict.fromkeys([*a, *b]):
        x, y = a.get(key, MISSING), b.get(key, MISSING)
        how = _how(x, y)
        paths: tuple[str, ...] = ()
        if how == "changed" and isinstance(x, (dict, list)) and type(x) is type(y):
            ops = make_patch({key: x}, {key: y})
            paths = tuple(dict.fromkeys(op["path"] for op in ops))[:PATHS_SHOWN]
        out.append(
            KeyDiff(
                key,
                how,
                None if x is MISSING else value_text(x, 120),
                None if y is MISSING else value_text(y, 120),
                hidden=key in hidden,
                paths=paths,
            )
        )
    return tuple(out)


def _answer(turn: TurnRecord) -> str | None:
    if turn.status == "failed":
        return f"failed: {turn.error}"
    return turn.content


def _keys_text(diffs: Sequence[Any], attr: str = "key") -> str:
    return ", ".join(str(getattr(d, attr)) for d in diffs)


def _causes(
    left: TurnRecord, right: TurnRecord, sections: Sequence[SectionDiff], requests: Sequence[RequestDiff]
) -> list[str]:
    out = []
    if left.message != right.message:
        out.append("the user message differs")
    differing = [s for s in sections if s.how != "same"]
    if differing:
        out.append(f"the system prompt differs in: {_keys_text(differing, 'source')}")
    before_a, before_b = left.state_before, right.state_before
    start = [
        k
        for k in dict.fromkeys([*before_a, *before_b])
        if _how(before_a.get(k, MISSING), before_b.get(k, MISSING)) != "same"
    ]
    if start:
        ua, ub = _unseen(left), _unseen(right)
        unseen = {k for k in start if (k not in before_a or k in ua) and (k not in before_b or k in ub)}
        named = [f"{k} (not in the prompt)" if k in unseen else k for k in start]
        out.append(f"the state the prompt was rendered from differs in: {', '.join(named)}")
    first = requests[0] if requests else None
    if first is not None and first.how == "changed":
        told = ("system prompt", "user message") if left.message != right.message else ("system prompt",)
        rest = [p for p in first.parts if p not in told]
        if rest:
            out.append(f"the first request also differs in: {', '.join(rest)}")
    return out


def _unseen(turn: TurnRecord) -> set[str]:
    """State keys that turn's prompt did not show (hidden, or used by no placeholder or block)."""
    prompt = turn.prompt
    return set(prompt.hidden_keys) | set(prompt.unused_keys) if prompt is not None else set()


def _effects(
    left: TurnRecord, right: TurnRecord, tool_calls: Sequence[ToolCallRow], state: Sequence[KeyDiff]
) -> list[str]:
    out = []
    la, lb = len(left.model_calls), len(right.model_calls)
    answered = [
        i + 1
        for i, (x, y) in enumerate(zip(left.model_calls, right.model_calls))
        if (x.response is None) != (y.response is None)
        or (
            x.response is not None
            and y.response is not None
            and (x.response.content, x.response.tool_calls) != (y.response.content, y.response.tool_calls)
        )
    ]
    if answered:
        out.append(f"the model answered differently from call {answered[0]}")
    if la != lb:
        out.append(f"model calls: {la} vs {lb}")
    calls = [r for r in tool_calls if r.how != "same"]
    if calls:
        out.append(
            f"tool calls differ from call {calls[0].number} ({len(left.tool_calls)} vs {len(right.tool_calls)} in all)"
        )
    keys = [k for k in state if k.how != "same"]
    if keys:
        out.append(f"the state after differs in: {_keys_text(keys)}")
    if _answer(left) != _answer(right):
        out.append("the answers differ")
    return out


def compare_turns(left: TurnRecord, right: TurnRecord) -> Comparison:
    """Two finished turns side by side."""
    sections = _sections(left, right)
    requests = _requests(left, right)
    tool_calls = _tool_calls(left, right)
    state = _state(left, right)
    delegations = _delegations(left, right)
    effects = _effects(left, right, tool_calls, state)
    if any(row.how != "same" for row in delegations):
        effects.append("the delegated runs differ")
    return Comparison(
        left=f"{left.agent} · turn {left.number}",
        right=f"{right.agent} · turn {right.number}",
        sections=sections,
        requests=requests,
        tool_calls=tool_calls,
        state=state,
        answers=(_answer(left), _answer(right)),
        tokens=(left.prompt.tokens if left.prompt else None, right.prompt.tokens if right.prompt else None),
        causes=tuple(_causes(left, right, sections, requests)),
        effects=tuple(effects),
        delegations=delegations,
    )


def _delegations(left: TurnRecord, right: TurnRecord) -> tuple[LineRow, ...]:
    """The trees of delegated runs of two turns, line by line (the static record's lines)."""
    if not (left.children or right.children):
        return ()
    return line_rows("\n".join(delegation_lines(left, "")), "\n".join(delegation_lines(right, "")))


__all__ = [
    "Comparison",
    "KeyDiff",
    "LineRow",
    "RequestDiff",
    "SectionDiff",
    "ToolCallRow",
    "compare_turns",
    "line_rows",
]
