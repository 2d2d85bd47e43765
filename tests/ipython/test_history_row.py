"""A turn's History row (``agentnb/ipython/history_row.py``): its counts come from one pass over the
turn's events that passes over the kinds it does not count. Whatever mix of events a turn holds,
each count agrees with what the record's own accessors say of the turn."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent, DocumentContext, ScriptedModel, tool, tool_call
from agentnb.errors import ScriptedModelExhaustedError
from agentnb.history.history import TurnRecord
from agentnb.ipython.history_row import turn_summary


def flaky(n: int) -> str:
    """Check a number (odd ones fail)."""
    if n % 2:
        raise ValueError(f"{n} is odd")
    return f"{n} is even"


@tool(requires_approval=True)
def charge(customer: str, amount: int, session_state) -> str:
    """Charge a customer's card."""
    session_state["charged"].append([customer, amount])
    return f"charged {customer} {amount}"


def counted(record: TurnRecord) -> dict[str, Any]:
    """The row's counts as the record's accessors give them."""
    prompt = record.prompt
    tokens = None if prompt is None else prompt.tokens
    state = [] if prompt is None or tokens is None else [
        n for s, n in zip(prompt.sections, tokens.sections) if s.source == "session_state"
    ]  # fmt: skip
    answers = [c.response for c in record.model_calls if c.response is not None]
    kinds = [type(e).__name__ for e in record.events]
    out = {
        "tool_calls": len(record.tool_calls),
        "failed_tool_calls": sum(t.error is not None for t in record.tool_calls),
        "context": len(record.context),
        "context_blocks": sum(len(c.blocks) for c in record.context),
        "finish_reason": answers[-1].finish_reason if answers else None,
        "prompt_tokens": None if tokens is None else tokens.total,
        "state_tokens": sum(state) if state else None,
        "tokens_exact": None if tokens is None else tokens.exact,
    }
    if "RunPaused" in kinds:
        out["pauses"], out["resumed"] = kinds.count("RunPaused"), kinds.count("RunResumed")
    return out


def busy_turns() -> list[TurnRecord]:
    """Turns holding every kind of event a row counts, and the kinds it passes over between them."""
    faq = DocumentContext(
        {"returns": "Returns are accepted within 30 days."}, label="FAQ", passive=False, active=True
    )
    aisles = DocumentContext(["Milk is in aisle 3.", "Eggs are in aisle 5."], label="AISLES", top_k=2)
    steps = [
        tool_call("retrieve_context", source="FAQ", query="returns"),
        [tool_call("flaky", n=1), tool_call("flaky", n=2)],
        tool_call("flaky", n=3),
        "Done.",
        "Hello.",
    ]
    shop = Agent(
        "shop",
        ScriptedModel(steps),
        instructions="Help the shopper.",
        tools=[flaky],
        context_providers=[faq, aisles],
        session_state={"items": ["milk"]},
        add_session_state_to_context=True,
    )
    shop.run("where is the milk, and the returns policy?")
    shop.run("hello")
    with pytest.raises(ScriptedModelExhaustedError):
        shop.run("one more")  # a prompt, a request and no answer

    def pay_answer(request: Any) -> Any:  # one charge per call: bob's, then ann's
        last = request.messages[-1]
        if last["role"] != "tool":
            return tool_call("charge", customer="bob", amount=5)
        return tool_call("charge", customer="ann", amount=7) if "bob" in last["content"] else "Charged."

    pay = Agent("pay", ScriptedModel(pay_answer), tools=[charge], session_state={"charged": []})
    pay.run("bob and ann")
    pay.pending[0].approve()
    pay.continue_run()  # pauses again, for ann's charge
    pay.pending[0].reject("not today")
    pay.continue_run()
    pay.run("bob again")  # paused
    pay.run("bob once more")  # leaves the paused turn behind, and pauses itself
    return [*shop.history, *pay.history]


def test_a_history_row_counts_what_the_records_accessors_count() -> None:
    turns = busy_turns()
    kinds = {type(e).__name__ for t in turns for e in t.events}
    # Every kind a row reads is there, among kinds it passes over.
    assert {
        "ModelRequested", "ModelResponded", "ToolCallFinished", "PromptRendered",
        "ContextRetrieved", "RunPaused", "RunResumed", "RunStarted", "StateChanged", "ToolCallStarted",
    } <= kinds  # fmt: skip
    for record in turns:
        row = turn_summary(record)
        assert {k: row[k] for k in counted(record)} == counted(record), record.index
        assert "routed" not in row  # each turn asked a model itself
    rows = [turn_summary(t) for t in turns]
    first = rows[0]
    assert (first["tool_calls"], first["failed_tool_calls"], first["context"]) == (4, 2, 2)
    assert first["finish_reason"] == "stop"  # the last answer's, not the first call's "tool_calls"
    assert first["state_tokens"] is not None and first["state_tokens"] < first["prompt_tokens"]
    assert rows[2]["status"] == "failed" and rows[2]["finish_reason"] is None
    assert [(r["status"], r.get("pauses"), r.get("resumed")) for r in rows[3:]] == [
        ("ok", 2, 2),
        ("failed", 1, 0),
        ("paused", 1, 0),
    ]


def test_a_turn_without_a_prompt_or_an_answer_has_an_empty_row() -> None:
    record = TurnRecord(index=0, run_id="r", agent="a", message="m" * 400, model="scripted", status="failed")
    row = turn_summary(record)
    assert len(row["message"]) == 300 and row["content"] is None
    assert (
        {k: row[k] for k in counted(record)}
        == counted(record)
        == {
            "tool_calls": 0,
            "failed_tool_calls": 0,
            "context": 0,
            "context_blocks": 0,
            "finish_reason": None,
            "prompt_tokens": None,
            "state_tokens": None,
            "tokens_exact": None,
        }
    )
