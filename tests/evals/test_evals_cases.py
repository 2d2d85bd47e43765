"""Cases: the forms they come in, and each (case, repeat) on a fresh agent built from the definition."""

from __future__ import annotations

import asyncio
import json

import pandas as pd
import pytest
from evals_helpers import shop

from agentnb import ScriptedModel, tool_call
from agentnb.errors import EvalCaseError
from agentnb.evals import Case, cases_from_frame, check, load_cases
from agentnb.evals.cases import as_cases


def test_a_case_needs_input_or_messages_and_gets_a_content_id():
    with pytest.raises(EvalCaseError, match="exactly one"):
        Case()
    with pytest.raises(EvalCaseError, match="exactly one"):
        Case("a", messages=["b"])
    with pytest.raises(EvalCaseError, match="state must be a dict"):
        Case("a", state=[1])
    assert Case("milk").id == Case("milk").id != Case("eggs").id
    assert Case("milk", state={"a": 1}).id != Case("milk").id
    assert Case("milk", id=7).id == "7"


def test_duplicate_ids_are_refused_with_both_positions():
    with pytest.raises(EvalCaseError, match="cases 1 and 3 have the same id 'x'"):
        as_cases([Case("a", id="x"), Case("b"), Case("c", id="x")])
    with pytest.raises(EvalCaseError, match="no cases"):
        as_cases([])
    with pytest.raises(EvalCaseError, match="case 2 is a int"):
        as_cases(["a", 3])


def test_cases_from_a_dataframe():
    df = pd.DataFrame(
        {
            "ticket": ["T1", "T2", "T3"],
            "request": ["milk", ["eggs", "bread"], "tea"],
            "want": ["milk", None, "tea"],
            "start": ['{"budget": 3}', None, {"budget": 1}],
        }
    )
    cases = cases_from_frame(df, input="request", id="ticket", expected="want", state="start")
    assert [c.id for c in cases] == ["T1", "T2", "T3"]
    assert cases[0].state == {"budget": 3} and cases[1].state is None and cases[2].state == {"budget": 1}
    assert cases[1].messages == ("eggs", "bread") and cases[1].expected is None
    with pytest.raises(EvalCaseError, match="input='nope' is not a column"):
        cases_from_frame(df, input="nope")
    with pytest.raises(EvalCaseError, match="row 1: the state cell is not JSON"):
        cases_from_frame(pd.DataFrame({"input": ["a"], "s": ["{oops"]}), state="s")
    # A frame with an input column is taken as it is.
    assert [c.input for c in as_cases(pd.DataFrame({"input": ["a", "b"]}))] == ["a", "b"]


def test_cases_from_files(tmp_path):
    (tmp_path / "c.jsonl").write_text(
        '{"id": "a", "input": "milk", "expected": "milk"}\n\n{"input": "tea", "state": {"budget": 2}}\n'
    )
    (tmp_path / "c.csv").write_text('id,input,expected,state\na,milk,milk,"{""budget"": 2}"\nb,tea,,\n')
    (tmp_path / "c.yaml").write_text("cases:\n  - id: a\n    messages: [milk, tea]\n    expected: tea\n")
    jsonl, csv_cases, yaml_cases = (load_cases(tmp_path / n) for n in ("c.jsonl", "c.csv", "c.yaml"))
    assert [c.id for c in jsonl][0] == "a" and jsonl[1].state == {"budget": 2}
    assert csv_cases[0].state == {"budget": 2} and csv_cases[1].expected is None
    assert yaml_cases[0].messages == ("milk", "tea")
    (tmp_path / "bad.jsonl").write_text('{"input": "a"}\n{oops\n')
    with pytest.raises(EvalCaseError, match="bad.jsonl line 2 is not JSON"):
        load_cases(tmp_path / "bad.jsonl")
    # json raises a plain ValueError (no .msg) for an integer too long to convert.
    (tmp_path / "long.jsonl").write_text('{"input": "a", "expected": ' + "9" * 5000 + "}\n")
    with pytest.raises(EvalCaseError, match="long.jsonl line 1 is not JSON .*integer"):
        load_cases(tmp_path / "long.jsonl")
    (tmp_path / "odd.jsonl").write_text('{"inptu": "a"}\n')
    with pytest.raises(EvalCaseError, match="unknown case field"):
        load_cases(tmp_path / "odd.jsonl")
    with pytest.raises(EvalCaseError, match="no case file"):
        load_cases(tmp_path / "missing.jsonl")
    with pytest.raises(EvalCaseError, match="not .txt"):
        (tmp_path / "c.txt").write_text("x")
        load_cases(tmp_path / "c.txt")


def test_each_case_runs_on_a_fresh_agent_never_the_live_one(tmp_path):
    agent = shop()
    agent.run("live one")
    before = agent.get_session_state()
    cases = [Case("milk", id="a", state={"budget": 3}), Case("tea", id="b")]
    run = agent.evaluate(
        cases, [check.state("/items", equals=["milk"], name="items")], name="fresh", folder=tmp_path
    )
    assert agent.get_session_state() == before and len(agent.history) == 1
    assert run.case("a").turns[0].state_after["budget"] == 3  # the case's state deep-merged
    assert run.case("b").turns[0].state_after == {
        "items": ["tea"],
        "budget": 10,
    }  # not the live agent's items
    assert [r.verdicts[0].status for r in run] == ["pass", "fail"]


def test_a_scripted_list_is_cloned_per_case_and_repeat(tmp_path):
    model = ScriptedModel([tool_call("add_item", item="milk"), "first", "second"])
    agent = shop(model=model)
    run = agent.evaluate(
        [Case("x", id="a"), Case("y", id="b")],
        [check.answer_equals("first")],
        name="clone",
        folder=tmp_path,
        repeat=3,
        concurrency=4,
    )
    assert len(run) == 6 and run.rate() == 1.0  # every run started the script afresh
    assert model.remaining == 3  # the agent's own model was never used


def test_a_fork_with_edited_instructions_is_evaluated_as_edited(tmp_path):
    seen = []

    def answer(request):
        seen.append(request.system_prompt)
        return "ok"

    parent = shop(model=ScriptedModel(answer))
    fork = parent.fork("shop_v2")
    fork.instructions = "Never add sweets."
    fork.evaluate([Case("milk")], name="v2", folder=tmp_path)
    assert "Never add sweets." in seen[-1]


def test_multi_turn_and_a_case_from_a_recorded_turn(tmp_path):
    agent = shop()
    agent.run("milk")
    agent.run("tea")
    cases = [Case(messages=["bread", "jam"], id="two"), Case.from_turn(agent, 2, expected="tea")]
    assert cases[1].input == "tea" and cases[1].start.state["items"] == ["milk"]
    run = agent.evaluate(
        cases, [check.state("/items", contains=check.EXPECTED, name="has")], name="turns", folder=tmp_path
    )
    two = run.case("two")
    assert len(two.turns) == 2 and two.turns[-1].state_after["items"] == ["bread", "jam"]
    from_turn = run.case(cases[1].id)
    assert from_turn.turns[0].state_after["items"] == ["milk", "tea"]  # started where turn 1 ended
    assert from_turn.verdicts[0].status == "pass"
    assert two.verdicts[0].status == "error" and "has none" in two.verdicts[0].reason


def test_evaluate_works_inside_a_running_event_loop(tmp_path):
    agent = shop()

    async def inside():
        plain = agent.evaluate(
            [Case("milk")], name="loop", folder=tmp_path
        )  # the kernel's case: a loop is running
        awaited = await agent.aevaluate([Case("tea")], name="aloop", folder=tmp_path)
        return plain, awaited

    plain, awaited = asyncio.run(inside())
    assert plain.rows[0].answer == "Done: added milk" and awaited.rows[0].answer == "Done: added tea"


def test_bad_options_are_one_line_errors(tmp_path):
    from agentnb.errors import ConfigurationError, EvalStoreError

    agent = shop()
    with pytest.raises(ConfigurationError, match="concurrency must be a whole number >= 1"):
        agent.evaluate(["a"], concurrency=0, folder=tmp_path)
    with pytest.raises(ConfigurationError, match="executor must be a concurrent.futures.Executor"):
        agent.evaluate(["a"], executor=object(), folder=tmp_path)
    with pytest.raises(EvalStoreError, match="cannot name a folder"):
        agent.evaluate(["a"], name="../x", folder=tmp_path)


def test_the_store_holds_case_lines(tmp_path):
    agent = shop()
    agent.evaluate([Case("milk", id="a")], name="lines", folder=tmp_path)
    lines = (tmp_path / "evals" / "lines" / "cases.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["case"]["id"] == "a"
    manifest = json.loads((tmp_path / "evals" / "lines" / "manifest.json").read_text())
    assert manifest["agent"] == "shop" and manifest["tools"] == ["add_item"]


def test_the_plan_measures_a_few_plain_cases_and_adds_up_the_rest(monkeypatch):
    """The budget's first-request sizes: cases that differ only in their message are measured on
    a few and then added up, to the same count as building each; a case with its own state, or a
    prompt that changes with the message, is measured."""
    import json

    from agentnb.evals.engine import plan
    from agentnb.evals.engine.plan import RequestChars
    from agentnb.evals.engine.worker import case_agent, evaluated

    agent = shop()
    blueprint = evaluated(agent)
    cases = [
        Case(text, id=f"c{i}")
        for i, text in enumerate(
            ["milk", 'a "quoted" ask', "ünïcödé tea ☕", "x" * 500, "new\nline", "tab\there"]
        )
    ]
    cases.append(Case("with state", id="s", state={"items": ["a", "b", "c"]}))

    def exact(case):
        return len(
            json.dumps(
                case_agent(blueprint, agent.model, case).observe(case.turns[0]).request,
                ensure_ascii=False,
                default=str,
            )
        )

    expected = [exact(c) for c in cases]
    builds = []
    monkeypatch.setattr(
        plan,
        "case_agent",
        lambda definition, model, case: builds.append(case.id) or case_agent(definition, model, case),
    )
    sizes = RequestChars(blueprint, agent.model)
    assert [sizes(c) for c in cases] == expected
    assert builds == [
        "c0",
        "c1",
        "c2",
        "s",
    ]  # three plain cases measured, the rest added up; the state case measured

    # Retrieval on the message changes the prompt with it: every case is measured.
    from agentnb import Agent, ScriptedModel
    from agentnb.context import DocumentContext

    docs = DocumentContext(["milk is white", "tea is hot and ünïcödé", "quoted things"], label="DOCS")
    rag = Agent("rag", model=ScriptedModel(["ok"]), context_providers=[docs])
    rag_blueprint = evaluated(rag)
    expected = [
        len(
            json.dumps(
                case_agent(rag_blueprint, rag.model, c).observe(c.turns[0]).request,
                ensure_ascii=False,
                default=str,
            )
        )
        for c in cases[:5]
    ]
    builds.clear()
    sizes = RequestChars(rag_blueprint, rag.model)
    assert [sizes(c) for c in cases[:5]] == expected
    assert builds == ["c0", "c1", "c2", "c3", "c4"]


def test_a_store_that_cannot_be_written_stops_the_evaluation_with_its_error(tmp_path, monkeypatch):
    import errno

    from agentnb.errors import EvalStoreError
    from agentnb.evals.engine import store

    def full(fileno: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store.os, "fsync", full)
    cases = [Case(f"item{i}", id=f"c{i}") for i in range(12)]
    with pytest.raises(EvalStoreError, match="cannot append to .*cases.jsonl: .*No space left on device"):
        shop().evaluate(cases, name="full", folder=tmp_path, concurrency=4, display=False)
