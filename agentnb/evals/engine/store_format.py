"""What an evaluation's store holds, and what keeps a file's content from being it.

``manifest.json`` is an object with ``format`` (``FORMAT``), the ``cases`` evaluated (each with its
``id``), how many times each was run (``repeat``) and the ``checks`` (each with its ``name``).
Each line of ``cases.jsonl`` is one finished (case, repeat), as ``CaseRow.to_dict`` writes it: its
``case``, ``repeat``, ``status`` (``STATUSES``), and lists of ``turns`` (turn records),
``verdicts`` (check and status), ``judge_calls`` and ``earlier_errors``; an agent that delegates
(a team's members, agents as tools, handoff targets) adds ``delegates``: each one's turn records,
by its path below the agent (``helper``, ``desk/analyst``). A ``*_problem`` function
says in a few words what a parsed file is not, or None when it is what the store writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ...errors import EvalCaseError
from ...events import Usage
from ...util.text import one_line
from ..cases import Case

FORMAT = 1
"""The store's format version (in the manifest)."""
STATUSES = ("ok", "invalid", "error", "paused")
"""A stored line's status: the case ran to its end (ok), a turn's answers never matched its
output type (invalid), a turn did not finish (error), or a turn waits for a person (paused)."""
SCORED = ("ok", "invalid")
"""The statuses of a case its checks score (the others did not run to an end they can judge)."""
VERDICTS = ("pass", "fail", "error")
"""A stored verdict's status."""
TURN_KEYS = ("index", "run_id", "agent", "message", "model", "status")
"""What a stored turn record must hold (the rest has defaults)."""
USAGE_KEYS = frozenset(f.name for f in dataclasses.fields(Usage))
"""What a stored turn's usage may hold."""


def manifest_problem(data: Any) -> str | None:
    """What keeps ``data`` from being a manifest of this format, or None."""
    if not isinstance(data, dict):
        return f"it is a JSON {type(data).__name__}, not an object"
    if data.get("format") != FORMAT:
        return f"it says format {data.get('format')!r:.40}"
    cases = data.get("cases")
    if not isinstance(cases, list) or not all(isinstance(c, dict) and _is_id(c.get("id")) for c in cases):
        return "'cases' must be a list of cases, each with its 'id'"
    repeat = data.get("repeat")
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        return f"'repeat' must be a whole number >= 1, got {repeat!r:.40}"
    checks = data.get("checks", [])
    if not isinstance(checks, list) or not all(isinstance(c, dict) and _is_id(c.get("name")) for c in checks):
        return "'checks' must be a list of checks, each with its 'name'"
    return _case_problem(cases)


def line_problem(row: Any) -> str | None:
    """What keeps a parsed line from being a finished (case, repeat) as the store writes it, or None."""
    if not isinstance(row, dict):
        return f"it is a JSON {type(row).__name__}, not an object"
    case = row.get("case")
    if not isinstance(case, dict) or not _is_id(case.get("id")):
        return "'case' must be an object with the case's 'id' (and its input or messages)"
    if not _is_count(row.get("repeat")):
        return f"'repeat' must be a whole number >= 0, got {row.get('repeat')!r:.40}"
    if row.get("status") not in STATUSES:
        return f"'status' must be one of {', '.join(STATUSES)}, got {row.get('status')!r:.40}"
    for name in ("turns", "verdicts", "judge_calls", "earlier_errors"):
        if not isinstance(row.get(name, []), list):
            return f"'{name}' must be a list, got a JSON {type(row[name]).__name__}"
    for name in ("error", "error_type"):
        if not isinstance(row.get(name), (str, type(None))):
            return f"'{name}' must be text or null, got a JSON {type(row[name]).__name__}"
    if not _is_count(row.get("retries", 0)) or not _is_number(row.get("wall_ms", 0)):
        return "'retries' must be a whole number >= 0 and 'wall_ms' a number"
    if not all(isinstance(call, dict) for call in row.get("judge_calls", [])):
        return "'judge_calls' must be a list of objects (request, model, answer)"
    for verdict in row.get("verdicts", []):
        if (
            not isinstance(verdict, dict)
            or not _is_id(verdict.get("check"))
            or verdict.get("status") not in VERDICTS
        ):
            return "'verdicts' must be a list of objects, each with its 'check' and a 'status' of pass, fail or error"
    for number, turn in enumerate(row.get("turns", []), 1):
        problem = _turn_problem(turn)
        if problem is not None:
            return f"turn {number} {problem}"
    return _delegates_problem(row.get("delegates", {})) or _case_problem([case])


def _delegates_problem(delegates: Any) -> str | None:
    if not isinstance(delegates, dict) or not all(
        _is_id(path) and isinstance(turns, list) for path, turns in delegates.items()
    ):
        return "'delegates' must be an object of lists of turn records, by the delegate's path"
    for path, turns in delegates.items():
        for number, turn in enumerate(turns, 1):
            problem = _turn_problem(turn)
            if problem is not None:
                return f"delegate {path!r:.40} turn {number} {problem}"
    return None


def _case_problem(cases: list[Mapping[str, Any]]) -> str | None:
    for data in cases:
        try:
            Case.from_dict(data)
        except EvalCaseError as exc:
            return f"case {data.get('id')!r:.40} does not load: {exc}"
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            return f"case {data.get('id')!r:.40} does not load: {type(exc).__name__}: {one_line(exc)}"
    return None


def _turn_problem(turn: Any) -> str | None:
    """What keeps ``turn`` from being what ``TurnRecord.from_dict`` reads (checked by its shape:
    building the record would freeze its states, which costs more than reading the line)."""
    if not isinstance(turn, dict):
        return f"is a JSON {type(turn).__name__}, not a turn record"
    absent = [key for key in TURN_KEYS if key not in turn]
    if absent:
        return f"has no {', '.join(map(repr, absent))} (a turn record has {', '.join(TURN_KEYS)})"
    usage = turn.get("usage", {})
    if not isinstance(usage, dict) or not set(usage) <= USAGE_KEYS:
        return f"has a 'usage' that is not an object of {', '.join(sorted(USAGE_KEYS))}"
    for name in ("state_start", "state_before", "state_after"):
        if not isinstance(turn.get(name), (dict, type(None))):
            return f"has a {name!r} that is not an object"
    for name in ("events", "messages"):
        items = turn.get(name, [])
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            return f"has {name!r} that is not a list of objects"
    return None


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


__all__ = [
    "FORMAT",
    "SCORED",
    "STATUSES",
    "TURN_KEYS",
    "USAGE_KEYS",
    "VERDICTS",
    "line_problem",
    "manifest_problem",
]
