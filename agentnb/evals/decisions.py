"""What a person decides when an evaluated case's turn pauses (``Case(..., decisions=[...])``):
each pending item takes the next decision, in order, so approval paths can be evaluated. A pause
with no decision left ends the case with the status ``paused`` (not an error)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import EvalCaseError

VERBS = ("approve", "reject", "answer", "edit")
"""What a decision may do: approve (as asked, or with ``{arguments}``), reject with a reason,
answer (a question or an external call), edit a model request at a breakpoint."""

FORMS = (
    '"approve", {"approve": {...arguments}}, {"reject": "why"}, {"answer": value} or {"edit": {...request}}'
)


def check_decisions(decisions: Any, case_id: str) -> tuple[Any, ...]:
    """The decisions of a case, checked (JSON data, one entry per pending item, in order)."""
    if isinstance(decisions, (str, Mapping)) or not isinstance(decisions, Sequence):
        raise EvalCaseError(f"case {case_id or '?'}: decisions must be a list, one per pending item: {FORMS}")
    checked = []
    for number, decision in enumerate(decisions, 1):
        where = f"case {case_id or '?'}: decision {number}"
        if decision == "approve":
            checked.append(decision)
            continue
        if not isinstance(decision, Mapping) or len(decision) != 1 or next(iter(decision)) not in VERBS:
            raise EvalCaseError(f"{where} is {decision!r:.80}; a decision is {FORMS}")
        verb, value = next(iter(decision.items()))
        if verb == "reject" and not (isinstance(value, str) and value.strip()):
            raise EvalCaseError(f"{where}: reject takes the reason the model reads, a non-empty str")
        if verb in ("approve", "edit") and not isinstance(value, Mapping):
            raise EvalCaseError(
                f"{where}: {verb} takes a dict ({'arguments' if verb == 'approve' else 'request'})"
            )
        try:
            checked.append(json.loads(json.dumps({verb: value})))
        except (TypeError, ValueError):
            raise EvalCaseError(f"{where}: its value must be JSON data") from None
    return tuple(checked)


def decide(item: Any, decision: Any) -> None:
    """Take ``decision`` about a pending item (DecisionError when its kind does not take it)."""
    if decision == "approve":
        item.approve()
        return
    verb, value = next(iter(decision.items()))
    if verb == "approve":
        item.approve(arguments=value)
    elif verb == "reject":
        item.reject(value)
    elif verb == "answer":
        item.answer(value)
    else:
        item.edit(request=value)


__all__ = ["FORMS", "VERBS", "check_decisions", "decide"]
