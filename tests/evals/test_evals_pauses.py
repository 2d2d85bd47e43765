"""Evaluating approval paths: a case carries the person's decisions (``Case(..., decisions=[...])``);
a pause the case gives no decision for is the case's status ``paused``, not an error."""

from __future__ import annotations

import pytest

from agentnb import Agent, ScriptedModel, tool, tool_call
from agentnb.errors import EvalCaseError
from agentnb.evals import Case, check, load_run


@tool(requires_approval=lambda arguments, ctx: arguments["amount"] > 100)
def charge(customer: str, amount: int, session_state) -> str:
    """Charge a customer."""
    session_state.setdefault("charged", []).append([customer, amount])
    return f"charged {customer} {amount}"


def answer(request):
    results = request.tool_results()
    if results:
        return results[-1]["content"]
    customer, amount = request.last_user_message.split()
    return tool_call("charge", customer=customer, amount=int(amount))


def payments() -> Agent:
    return Agent("payments", ScriptedModel(answer), tools=[charge])


CHECKS = [check.called("charge", name="charged"), check.state("/charged", contains=[["bob", 90]], name="bob")]


def test_cases_decide_each_pause_and_an_undecided_pause_is_the_status_paused(tmp_path):
    cases = [
        Case("ann 40", id="small"),  # under the limit: nothing pauses
        Case("bob 250", id="edited", decisions=[{"approve": {"customer": "bob", "amount": 90}}]),
        Case("bob 300", id="refused", decisions=[{"reject": "over the limit"}]),
        Case("carl 500", id="undecided"),
    ]
    run = payments().evaluate(cases, CHECKS, name="pay", folder=tmp_path, retry_errors=2)
    rows = {r.case.id: r for r in run.rows}
    assert {k: r.status for k, r in rows.items()} == {
        "small": "ok",
        "edited": "ok",
        "refused": "ok",
        "undecided": "paused",
    }
    assert rows["edited"].passed is True
    assert rows["refused"].turns[0].content == "Rejected by the person: over the limit"
    assert [v.status for v in rows["refused"].verdicts] == ["fail", "fail"]  # a rejected call never ran
    undecided = rows["undecided"]
    assert (
        undecided.error.startswith("paused: no decision given for <approval ") and "carl" in undecided.error
    )
    assert undecided.earlier_errors == [] and undecided.turns[0].status == "paused"  # not retried
    assert undecided.passed is None
    frame = run.frame()
    assert frame.set_index("case_id").loc["undecided", "status"] == "paused"
    stored = load_run("pay", tmp_path)  # the store's paused line reads back as it was written
    assert stored.case("undecided").status == "paused" and stored.case("undecided").error == undecided.error


def test_a_rerun_replays_the_decided_cases_from_the_store(tmp_path):
    cases = [Case("bob 250", id="edited", decisions=[{"approve": {"customer": "bob", "amount": 90}}])]
    first = payments().evaluate(cases, CHECKS, name="pay", folder=tmp_path)
    again = payments().evaluate(cases, CHECKS, name="pay", folder=tmp_path)
    assert [r.passed for r in first.rows] == [True] == [r.passed for r in again.rows]
    assert again.rows[0].replayed


def test_decisions_are_checked_kept_with_the_case_and_part_of_its_id():
    with pytest.raises(EvalCaseError, match="decision 1 is 'yes'; a decision is"):
        Case("bob 250", decisions=["yes"])
    with pytest.raises(EvalCaseError, match="reject takes the reason the model reads"):
        Case("bob 250", decisions=[{"reject": ""}])
    with pytest.raises(EvalCaseError, match="decisions must be a list"):
        Case("bob 250", decisions="approve")
    case = Case("bob 250", decisions=["approve", {"answer": 60}])
    assert Case.from_dict(case.to_dict()) == case
    assert case.id != Case("bob 250").id == Case("bob 250", decisions=None).id


def test_a_decision_the_pending_item_does_not_take_is_the_cases_error(tmp_path):
    run = payments().evaluate([Case("bob 250", id="x", decisions=[{"answer": 5}])], CHECKS, folder=tmp_path)
    (row,) = run.rows
    assert row.status == "error" and "waits for approval, not an answer" in row.error
