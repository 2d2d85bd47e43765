"""Results and comparison: frames, the pass gate, pairing by case id and repeat, flips with the turn comparison, paired statistics."""

from __future__ import annotations

from math import comb

import pytest
from evals_helpers import shop

from agentnb import ScriptedModel, tool_call
from agentnb.errors import EvalAssertionError
from agentnb.evals import Case, check, load_run
from agentnb.evals.report.eval_comparison import bootstrap_interval, mcnemar_exact


def test_mcnemar_exact_is_the_two_sided_binomial_on_discordant_pairs():
    # 1 pass→fail and 6 fail→pass: p = 2 · P(X ≤ 1), X ~ Bin(7, 1/2).
    assert mcnemar_exact(1, 6) == pytest.approx(2 * (comb(7, 0) + comb(7, 1)) / 2**7)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(3, 3) == 1.0
    assert bootstrap_interval([1.0, 0.0, 1.0, 0.0], seed=3) == bootstrap_interval(
        [1.0, 0.0, 1.0, 0.0], seed=3
    )
    low, high = bootstrap_interval([1.0] * 10)
    assert low == high == 1.0


def _sweets_model(refuse: bool) -> ScriptedModel:
    def answer(request):
        message = request.last_user_message
        if request.tool_results():
            return "Added."
        if refuse and "Never add sweets" in (request.system_prompt or "") and message in ("candy", "cake"):
            return "No sweets."
        return tool_call("add_item", item=message)

    return ScriptedModel(answer)


def test_compare_a_fork_with_its_parent(tmp_path):
    parent = shop(model=_sweets_model(refuse=True))
    items = ["milk", "candy", "tea", "cake", "bread"]
    cases = [Case(i, id=i) for i in items] + [Case("jam", id="only-base")]
    checks = [check.called("add_item", name="added"), check.state("/items", contains=["milk"], name="milk")]
    base = parent.evaluate(cases, checks, name="base", folder=tmp_path)
    fork = parent.fork("shop_v2")
    fork.instructions = "You keep a shopping list. Never add sweets."
    cand = fork.evaluate(cases[:5] + [Case("rice", id="only-cand")], checks, name="v2", folder=tmp_path)
    cmp = cand.compare(base)
    assert (
        len(cmp.pairs) == 5
        and cmp.only_baseline == [("only-base", 0)]
        and cmp.only_candidate == [("only-cand", 0)]
    )
    flips = cmp.flips("added")
    assert [(f.case_id, f.before, f.after) for f in flips] == [("candy", True, False), ("cake", True, False)]
    assert flips[0].reason_after == "add_item was never called"
    why = cmp.explain("candy")
    assert any("instructions" in c for c in why.causes)  # the turn comparison names the edited section
    added = next(s for s in cmp.summaries if s.check == "added")
    assert (added.pass_to_fail, added.fail_to_pass, added.paired) == (2, 0, 5)
    assert added.p_value == pytest.approx(mcnemar_exact(2, 0)) == 0.5
    text = cmp.text()
    assert (
        "candy · added pass→fail: add_item was never called" in text
        and "why:" in text
        and "unpaired: 1 only in base, 1 only in v2" in text
    )
    with pytest.raises(EvalAssertionError, match="2 case\\(s\\) went from pass to fail on added"):
        cmp.assert_no_regressions("added")
    summary = cmp.summary()
    assert list(summary["check"]) == ["all checks", "added", "milk"]


def test_pairs_by_repeat_too(tmp_path):
    agent = shop()
    a = agent.evaluate(
        [Case("milk", id="m")], [check.called("add_item")], name="a", folder=tmp_path, repeat=2
    )
    b = agent.evaluate(
        [Case("milk", id="m")], [check.called("add_item")], name="b", folder=tmp_path, repeat=3
    )
    cmp = b.compare(a)
    assert [(x.case.id, x.repeat) for x, _ in cmp.pairs] == [("m", 0), ("m", 1)] and cmp.only_candidate == [
        ("m", 2)
    ]


def test_frames_gate_and_record(tmp_path):
    agent = shop()
    run = agent.evaluate(
        [Case("milk", id="m", expected="milk"), Case("candy", id="c", expected="candy")],
        [check.state("/items", contains=check.EXPECTED, name="stored")],
        name="frames",
        folder=tmp_path,
    )
    frame = run.frame()
    assert list(frame.columns[:7]) == ["case_id", "repeat", "input", "answer", "status", "passed", "stored"]
    assert frame["stored"].tolist() == [True, False]
    long = run.checks()
    assert (
        long.loc[1, "reason"].startswith("/items = []")
        and long.loc[0, "evidence"] == '{"path": "/items", "value": ["milk"]}'
    )
    calls = run.tool_calls()
    assert list(calls.columns[:3]) == ["case_id", "repeat", "turn"] and calls["answered_by"].tolist() == [
        "tool",
        "guard",
    ]
    states = run.states()
    assert states.loc[0, "case_id"] == "m" and states.loc[0, "items"] == ["milk"]
    run.assert_passed(0.5)
    with pytest.raises(
        EvalAssertionError, match=r"frames: 50% of 2 run\(s\) passed every check, below 100% — c: stored fail"
    ):
        run.assert_passed()
    text = run.text()
    assert text.splitlines()[0].startswith(
        "evaluation frames · 2 run(s) of 2 case(s) · 1 passed (50%) · 0 error(s)"
    )
    assert 'c · stored · fail: /items = [], lacks ["candy"]' in text
    # The record is escaped: an answer with markup stays text.
    evil = shop(model=ScriptedModel(lambda r: "<img src=x onerror=alert(1)>")).evaluate(
        [Case("x")], [check.answer_equals("y")], name="evil", folder=tmp_path
    )
    assert "<img" not in evil.html() and "&lt;img" in evil.html()


def test_a_stored_run_reads_back_and_rescores(tmp_path):
    agent = shop()
    agent.evaluate([Case("milk", id="m")], [check.called("add_item")], name="stored", folder=tmp_path)
    back = load_run("stored", folder=tmp_path)
    assert back.rows[0].turns[0].content == "Done: added milk" and back.check_names == ["called:add_item"]
    rescored = load_run("stored", folder=tmp_path, checks=[check.not_called("add_item")])
    assert rescored.rate() == 0.0
