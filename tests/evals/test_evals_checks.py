"""Checks over turn records: each verdict with its reason and evidence; a check that cannot apply is an error."""

from __future__ import annotations

import pytest
from evals_helpers import shop

from agentnb import ScriptedModel, tool_call
from agentnb.errors import EvalCheckError
from agentnb.evals import Case, check
from agentnb.evals.checks.base import as_checks


def _run(tmp_path, cases, checks, **options):
    return shop(**options.pop("agent", {})).evaluate(
        cases, checks, name=options.pop("name", "checks"), folder=tmp_path, **options
    )


def test_answer_checks(tmp_path):
    checks = [
        check.answer_contains(),
        check.answer_equals("Done: added milk"),
        check.answer_matches(r"added (\w+)"),
        check.answer_contains(["DONE", "MILK"], ignore_case=True, name="both"),
    ]
    run = _run(
        tmp_path, [Case("milk", id="m", expected="milk"), Case("tea", id="t", expected="coffee")], checks
    )
    m, t = run.case("m"), run.case("t")
    assert [v.status for v in m.verdicts] == ["pass", "pass", "pass", "pass"]
    assert m.verdicts[2].evidence == {"match": "added milk", "at": 6}
    assert (
        t.verdict("answer_contains").status == "fail"
        and "lacks 'coffee'" in t.verdict("answer_contains").reason
    )
    assert "expected 'Done: added milk'" in t.verdict("answer_equals").reason


def test_answer_json_reads_a_field(tmp_path):
    agent = {"model": ScriptedModel(lambda r: '{"total": 3, "items": ["a"]}')}
    run = _run(
        tmp_path,
        [Case("x", expected=3)],
        [check.answer_json("/total"), check.answer_json("/items/0", "b"), check.answer_json("/nope", 1)],
        agent=agent,
    )
    assert [v.status for v in run.rows[0].verdicts] == ["pass", "fail", "fail"]
    assert run.rows[0].verdicts[0].evidence == {"value": 3}
    with pytest.raises(EvalCheckError, match="not a JSON pointer"):
        check.answer_json("total")


def test_called_counts_executions_only_and_names_the_hook_that_answered(tmp_path):
    cases = [
        Case("milk", id="ok"),
        Case("boom", id="raised"),
        Case("candy", id="hooked"),
        Case("fail", id="none"),
    ]
    checks = [
        check.called("add_item", name="ran"),
        check.called("add_item", {"item": "milk"}, name="milk"),
        check.called("add_item", answered_by="guard", name="by_guard"),
        check.not_called("add_item", name="never"),
        check.trajectory(["add_item"], mode="exact"),
    ]
    run = _run(tmp_path, cases, checks)
    ok, raised, hooked, none = (run.case(i) for i in ("ok", "raised", "hooked", "none"))
    assert ok.verdict("ran").status == "pass"
    assert (
        ok.verdict("ran").evidence["arguments"] == {"item": "milk"}
        and ok.verdict("ran").evidence["turn"] == 1
    )
    assert ok.verdict("ran").evidence["answered_by"] == "tool"
    # A call that raised was asked for but did not execute: it does not count.
    assert raised.verdict("ran").status == "fail" and "did not execute" in raised.verdict("ran").reason
    assert raised.verdict("never").status == "pass"
    assert hooked.verdict("by_guard").status == "pass" and ok.verdict("by_guard").status == "fail"
    assert "not with answered by guard" in ok.verdict("by_guard").reason
    assert hooked.verdict("milk").status == "fail" and "not with args" in hooked.verdict("milk").reason
    assert none.verdict("ran").reason == "add_item was never called"
    assert none.verdict("trajectory").status == "fail" and ok.verdict("trajectory").status == "pass"


def test_trajectory_modes(tmp_path):
    steps = [[tool_call("add_item", item="a"), tool_call("add_item", item="b")], "done"]
    agent = {"model": ScriptedModel(steps)}
    checks = [
        check.trajectory(["add_item"], name="in_order"),
        check.trajectory(["add_item"], mode="exact", name="exact"),
        check.trajectory(["add_item", "add_item"], mode="any_order", name="any"),
    ]
    run = _run(tmp_path, [Case("x")], checks, agent=agent)
    assert [v.status for v in run.rows[0].verdicts] == ["pass", "fail", "pass"]
    with pytest.raises(EvalCheckError, match="mode 'fuzzy'"):
        check.trajectory(["a"], mode="fuzzy")


def test_state_and_who_changed_it(tmp_path):
    checks = [
        check.state("/items", ["milk"]),
        check.state("/budget", 10, name="budget"),
        check.changed_by("/items", "tool:add_item", name="by_tool"),
        check.changed_by("/items/0", "add_item", name="bare"),
        check.changed_by("/budget", name="budget_changed"),
        check.changed_by("/items", "hook:guard", name="by_hook"),
    ]
    run = _run(tmp_path, [Case("milk", id="m")], checks)
    row = run.case("m")
    assert row.verdict("state:/items").status == "pass" and row.verdict("state:/items").evidence == {
        "path": "/items",
        "value": ["milk"],
    }
    assert row.verdict("by_tool").status == "pass" and "tool:add_item" in row.verdict("by_tool").reason
    assert (
        row.verdict("by_tool").evidence["authors"] == ["tool:add_item"]
        and row.verdict("by_tool").evidence["turn"] == 1
    )
    assert row.verdict("bare").status == "pass"
    assert (
        row.verdict("budget_changed").status == "fail"
        and row.verdict("budget_changed").reason == "nothing changed /budget"
    )
    assert (
        row.verdict("by_hook").status == "fail"
        and "changed by tool:add_item, not hook:guard" in row.verdict("by_hook").reason
    )


def test_a_check_without_an_expected_value_is_an_error_not_a_pass(tmp_path):
    run = _run(
        tmp_path,
        [Case("milk")],
        [check.answer_contains(), check.state("/items"), check.called("add_item", {"item": check.EXPECTED})],
    )
    assert [v.status for v in run.rows[0].verdicts] == ["error", "error", "error"]
    assert "has none; give expected= on the case" in run.rows[0].verdicts[0].reason
    assert run.rows[0].passed is None


def test_plain_functions_assert_messages_are_reasons(tmp_path):
    def budget_kept(result):
        assert result.state["budget"] > 20, f"budget is {result.state['budget']}"

    def has_items(result):
        return len(result.state["items"]) == 1

    def graded(result):
        return (False, "too short")

    def broken(result):
        return result.nothing

    def bare(result):
        assert result.answer == "x"

    run = _run(tmp_path, [Case("milk")], [budget_kept, has_items, graded, broken, bare])
    verdicts = {v.check: v for v in run.rows[0].verdicts}
    assert verdicts["budget_kept"].status == "fail" and verdicts["budget_kept"].reason == "budget is 10"
    assert verdicts["has_items"].status == "pass"
    assert verdicts["graded"].reason == "too short"
    assert verdicts["broken"].status == "error" and "AttributeError" in verdicts["broken"].reason
    assert verdicts["bare"].status == "fail" and verdicts["bare"].reason.startswith("assert")


def test_check_lists_are_checked():
    with pytest.raises(EvalCheckError, match="two checks are named 'f'"):

        def f(r):
            return None

        as_checks([f, check.that(f)])
    with pytest.raises(EvalCheckError, match="lambda check has no name"):
        as_checks([lambda r: True])
    assert as_checks([check.that(lambda r: True, name="ok")])[0].name == "ok"
    with pytest.raises(EvalCheckError, match="cannot be named 'passed'"):
        as_checks([check.that(lambda r: True, name="passed")])


def test_an_errored_case_is_recorded_and_its_checks_are_errors(tmp_path):
    agent = {"model": ScriptedModel([tool_call("add_item", item="x")] * 20)}
    run = _run(
        tmp_path,
        [Case("x", id="loop")],
        [check.called("add_item")],
        agent={**agent, "max_tool_iterations": 2},
    )
    row = run.rows[0]
    assert row.status == "error" and row.error_type == "MaxToolIterationsError"
    assert row.verdicts[0].status == "error" and "did not finish" in row.verdicts[0].reason


def test_a_judge_is_recorded_and_replays_when_unchanged(tmp_path):
    asked = []

    def judge_model(request):
        asked.append(request.messages[-1]["content"])
        return (
            "PASS it confirms the item"
            if "milk" in request.messages[-1]["content"]
            else "FAIL nothing confirmed"
        )

    judge = check.judge("The reply confirms the item added.", model=ScriptedModel(judge_model, name="judge"))
    run = _run(tmp_path, [Case("milk", id="m"), Case("fail", id="f")], [judge])
    assert [r.verdicts[0].status for r in run] == ["pass", "fail"]
    assert run.case("m").verdicts[0].reason == "it confirms the item"
    assert run.case("m").judge_calls[0]["content"] == "PASS it confirms the item"
    assert any("Reply:\nDone: added milk" in text for text in asked)  # cases run concurrently: any order
    # Offline judges are Python: they answer again. A rubric the judge does not answer PASS/FAIL to is an error.
    odd = check.judge("x", model=ScriptedModel(lambda r: "maybe"), name="odd")
    again = run.rescore([odd])
    assert (
        again.rows[0].verdicts[0].status == "error"
        and "does not start with PASS or FAIL" in again.rows[0].verdicts[0].reason
    )
