"""pandas views of an agent's history: turns, tool calls and the state after each turn.

pandas is imported when a view is asked for, never at ``import agentnb`` time. The turn and
tool-call views have a ``turn`` column (the turn's number as every view shows it: 1 is the first,
``agent.history[turn - 1]``) and fixed columns even
when empty, so code written against one notebook keeps working on another; the state view is
indexed by turn, so a state key named ``turn`` cannot clash with it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING

from ..util.extras import install_line

if TYPE_CHECKING:
    import pandas

    from .records import TurnRecord

TURN_COLUMNS = (
    "turn",
    "message",
    "answer",
    "status",
    "error",
    "model",
    "input_tokens",
    "output_tokens",
    "duration_ms",
    "tool_calls",
    "prompt_tokens",
    "state_tokens",
    "tokens_counted_by",
    "output",
    "attempts",
)
"""Columns of ``History.turns()``. ``prompt_tokens`` is what the prompt cost as counted before
it was sent (system prompt, earlier turns, user message, chat template), ``state_tokens`` the
``<session_state>`` block's part of it (None without one); ``tokens_counted_by`` names the
tokenizer (``o200k_base``, ``llama.cpp (...)``) or says ``estimate``; ``output`` is the typed
output as JSON data (None without an ``output_type`` or when no answer matched it),
``attempts`` the answers checked against the output type (0 without one)."""

TOOL_CALL_COLUMNS = (
    "turn",
    "call",
    "tool_call_id",
    "name",
    "arguments",
    "result",
    "error",
    "error_kind",
    "hooks",
    "answered_by",
    "changed_keys",
    "duration_ms",
    "path",
    "chain",
    "child_run_id",
)
"""Columns of ``History.tool_calls()``; ``call`` is the model call (round) that asked for it;
``path`` is the run's agent path (``team/researcher``: calls made in delegated runs are rows of
the turn that delegated), ``chain`` the path and the tool (``team ▸ researcher ▸ add_item``),
``child_run_id`` the run a delegation started."""

RUN_COLUMNS = (
    "turn",
    "path",
    "agent",
    "run_id",
    "parent_run_id",
    "status",
    "tokens_own",
    "tokens_total",
    "duration_ms",
)
"""Columns of ``History.runs()``: one row per run of the tree (the turn and every delegated run)."""

CHANGE_COLUMNS = ("turn", "path", "op", "pointer", "value", "author", "chain")
"""Columns of ``History.changes()``: one row per state operation of every run of the tree."""


def _pandas() -> ModuleType:
    try:
        import pandas
    except ImportError:
        raise ImportError(
            f"the history's DataFrame views need pandas: pip install pandas (or {install_line('notebook')})"
        ) from None
    return pandas


def turns_frame(turns: Iterable[TurnRecord]) -> pandas.DataFrame:
    """One row per turn: message, answer, status, model, tokens, duration, tool-call count."""
    pd = _pandas()
    rows = [
        {
            "turn": t.number,
            "message": t.message,
            "answer": t.content,
            "status": t.status,
            "error": t.error,
            "model": t.model,
            "input_tokens": t.usage.input_tokens,
            "output_tokens": t.usage.output_tokens,
            "duration_ms": t.duration_ms,
            "tool_calls": len(t.tool_calls),
            **_prompt_tokens(t),
            "output": copy.deepcopy(t.output_data),
            "attempts": len(t.attempts),
        }
        for t in turns
    ]
    return pd.DataFrame(rows, columns=list(TURN_COLUMNS))


def _prompt_tokens(turn: TurnRecord) -> dict[str, object]:
    prompt = turn.prompt
    tokens = prompt.tokens if prompt is not None else None
    if prompt is None or tokens is None:
        return {"prompt_tokens": None, "state_tokens": None, "tokens_counted_by": None}
    state = [n for s, n in zip(prompt.sections, tokens.sections) if s.source == "session_state"]
    return {
        "prompt_tokens": tokens.total,
        "state_tokens": sum(state) if state else None,
        "tokens_counted_by": tokens.counter,
    }


def tool_calls_frame(turns: Iterable[TurnRecord]) -> pandas.DataFrame:
    """One row per tool call: turn, name, arguments as sent, result, error, hooks, duration."""
    pd = _pandas()
    rows = [
        {
            "turn": t.number,
            "call": c.call,
            "tool_call_id": c.tool_call_id,
            "name": c.name,
            "arguments": c.arguments,
            "result": c.result if c.error is None else None,
            "error": c.error,
            "error_kind": c.error_kind,
            "hooks": [h.name for h in c.hooks],
            "answered_by": c.answered_by,
            "changed_keys": list(c.changed_keys),
            "duration_ms": c.duration_ms,
            "path": "/".join(run.path),
            "chain": " ▸ ".join((*run.path, c.name)),
            "child_run_id": c.child_run_id,
        }
        for t in turns
        for run in t.walk()
        for c in run.tool_calls
    ]
    return pd.DataFrame(rows, columns=list(TOOL_CALL_COLUMNS))


def runs_frame(turns: Iterable[TurnRecord]) -> pandas.DataFrame:
    """One row per run of each turn's tree: its path, ids, own and total tokens, duration."""
    pd = _pandas()
    rows = [
        {
            "turn": t.number,
            "path": "/".join(run.path),
            "agent": run.agent,
            "run_id": run.run_id,
            "parent_run_id": run.parent_run_id,
            "status": run.status,
            "tokens_own": run.usage.total_tokens,
            "tokens_total": run.usage_total.total_tokens,
            "duration_ms": run.duration_ms,
        }
        for t in turns
        for run in t.walk()
    ]
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


def changes_frame(turns: Iterable[TurnRecord]) -> pandas.DataFrame:
    """One row per state operation of every run of each turn's tree, with its author and the
    whole delegation chain (``team ▸ researcher ▸ tool:add_item``)."""
    pd = _pandas()
    rows = [
        {
            "turn": t.number,
            "path": "/".join(run.path),
            "op": op["op"],
            "pointer": op["path"],
            "value": copy.deepcopy(op.get("value")),
            "author": change.cause.label(),
            "chain": change.cause.chain(),
        }
        for t in turns
        for run in t.walk()
        for change in run.state_changes
        for op in change.patch
    ]
    return pd.DataFrame(rows, columns=list(CHANGE_COLUMNS))


def states_frame(turns: Iterable[TurnRecord]) -> pandas.DataFrame:
    """The state after each turn, indexed by turn, one column per top-level key (in first-seen
    order); a key absent after a turn is missing (NaN) in that row."""
    pd = _pandas()
    records = list(turns)
    keys: dict[str, None] = {}
    for t in records:
        keys.update(dict.fromkeys(t.state_after))
    # Deep copies: editing a cell of the frame must not edit the recorded history.
    rows = [copy.deepcopy(t.state_after) for t in records]
    index = pd.Index([t.number for t in records], name="turn", dtype="int64")
    return pd.DataFrame(rows, columns=list(keys), index=index, dtype=object)


OUTPUT_COLUMN = "output"
"""The column of ``History.outputs()`` holding an output that is not an object (a list, a
literal, an enum's value)."""


def outputs_frame(turns: Iterable[TurnRecord]) -> pandas.DataFrame:
    """The typed output of each turn that had an ``output_type``, indexed by turn: one column
    per top-level field (in first-seen order; a union's members share the columns they share),
    then ``attempts``, the answers checked. A turn whose answers all failed has its fields
    missing (NaN). Read from the ``OutputChecked`` events, so a loaded session gives the same
    frame. An output that is not an object is one ``output`` column; when the output has a
    field named ``attempts``, the count is ``_attempts``."""
    pd = _pandas()
    rows: list[dict[str, object]] = []
    numbers: list[int] = []
    counts: list[int] = []
    fields: dict[str, None] = {}
    for t in turns:
        attempts = t.attempts
        if not attempts:
            continue
        data = copy.deepcopy(t.output_data)  # editing a cell must not edit the recorded history
        row = data if isinstance(data, dict) else {} if data is None else {OUTPUT_COLUMN: data}
        fields.update(dict.fromkeys(row))
        rows.append(row)
        numbers.append(t.number)
        counts.append(len(attempts))
    index = pd.Index(numbers, name="turn", dtype="int64")
    frame = pd.DataFrame(rows, columns=list(fields), index=index)
    frame["_attempts" if "attempts" in fields else "attempts"] = pd.Series(counts, index=index, dtype="int64")
    return frame


__all__ = [
    "CHANGE_COLUMNS",
    "RUN_COLUMNS",
    "TOOL_CALL_COLUMNS",
    "TURN_COLUMNS",
    "OUTPUT_COLUMN",
    "changes_frame",
    "outputs_frame",
    "runs_frame",
    "states_frame",
    "tool_calls_frame",
    "turns_frame",
]
