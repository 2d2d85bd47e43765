"""An evaluation's cases as traces: each (case, repeat) is a root span ``evaluate {name}`` with
the evaluation's name and id, the case id, the repeat and the verdicts (attributes and GenAI
``gen_ai.evaluation.result`` events), its turns under it, and every case of one ``evaluate`` call
in one session. Checks' reasons are content."""

from __future__ import annotations

import concurrent.futures
import json

from opentelemetry.trace import StatusCode

from agentnb import Agent, ScriptedModel, tool_call, tracing
from agentnb.evals import Case, check
from agentnb.tracing.spans import span_id_of, trace_id_of


def lookup(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


def _agent(tp) -> Agent:
    model = ScriptedModel([tool_call("lookup", city="Oslo"), "Sunny in Oslo."])
    return Agent("forecaster", model, tools=[lookup], tracer_provider=tp)


CASES = [Case("weather in Oslo?", id="oslo"), Case("weather in Bergen?", id="bergen")]
# the scripted answer names Oslo whatever the case: one check fails, the other passes
CHECKS = [check.answer_contains("Bergen", name="says_bergen"), check.called("lookup", name="looked_up")]


def test_each_case_and_repeat_is_a_trace_with_its_verdicts_and_its_turns_under_it(provider, tmp_path):
    tp, spans = provider
    run = _agent(tp).evaluate(CASES, CHECKS, name="smoke", repeat=2, folder=tmp_path, display=False)
    cases = spans.named("evaluate smoke")
    assert sorted(
        (c.attributes["agentnb.eval.case_id"], c.attributes["agentnb.eval.repeat"]) for c in cases
    ) == [
        ("bergen", 0),
        ("bergen", 1),
        ("oslo", 0),
        ("oslo", 1),
    ]
    eval_ids = {c.attributes["agentnb.eval.id"] for c in cases}
    sessions = {c.attributes["session.id"] for c in cases}
    assert len(eval_ids) == 1 and len(sessions) == 1  # one evaluate() call, one session
    (session,) = sessions
    assert "smoke" in session
    for case_span in cases:
        a = case_span.attributes
        assert case_span.parent is None and a["agentnb.eval.name"] == "smoke"
        assert a["openinference.span.kind"] == "CHAIN" and a["gen_ai.conversation.id"] == session
        row = run.case(a["agentnb.eval.case_id"], repeat=a["agentnb.eval.repeat"])
        assert a["agentnb.eval.passed"] is row.passed
        (turn,) = row.turns
        assert a["agentnb.eval.run_ids"] == (turn.run_id,)
        verdicts = json.loads(a["agentnb.eval.verdicts"])
        assert verdicts == [
            {"check": v.check, "status": v.status} for v in row.verdicts
        ]  # no reasons: content
        events = [e for e in case_span.events if e.name == "gen_ai.evaluation.result"]
        assert [
            (e.attributes["gen_ai.evaluation.name"], e.attributes["gen_ai.evaluation.score.label"])
            for e in events
        ] == [(v.check, v.status) for v in row.verdicts]
        assert json.loads(a["metadata"])["evaluation"] == "smoke"
        # the case's turn is under the case span, in the evaluation's session
        root = next(
            s for s in spans.named("invoke_agent forecaster") if s.attributes["agentnb.run_id"] == turn.run_id
        )
        assert root.parent.span_id == case_span.context.span_id
        assert root.context.trace_id == case_span.context.trace_id != trace_id_of(turn.run_id)
        assert root.attributes["session.id"] == session
        assert not case_span.links
    assert {tuple(v.status for v in row.verdicts) for row in run} == {("fail", "pass")}
    assert {c.attributes["agentnb.eval.passed"] for c in cases} == {False}


def test_with_content_the_reasons_and_the_case_go_on_the_span(provider, tmp_path):
    tp, spans = provider
    tracing.instrument(capture_content=True)  # the agent's own provider, content from instrument()
    _agent(tp).evaluate(CASES[1:], CHECKS[:1], name="explained", folder=tmp_path, display=False)
    (case_span,) = spans.named("evaluate explained")
    (verdict,) = json.loads(case_span.attributes["agentnb.eval.verdicts"])
    assert verdict["status"] == "fail" and verdict["reason"]
    (event,) = case_span.events
    assert event.attributes["gen_ai.evaluation.explanation"] == verdict["reason"]
    assert json.loads(case_span.attributes["input.value"]) == ["weather in Bergen?"]
    assert case_span.attributes["output.value"] == "Sunny in Oslo."


def test_cases_run_on_an_executor_are_linked_from_their_case_span(provider, tmp_path):
    tp, spans = provider
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        run = _agent(tp).evaluate(CASES, CHECKS, name="remote", executor=pool, folder=tmp_path, display=False)
    for case_span in spans.named("evaluate remote"):
        row = run.case(case_span.attributes["agentnb.eval.case_id"])
        (turn,) = row.turns
        (link,) = case_span.links
        assert (link.context.trace_id, link.context.span_id) == (
            trace_id_of(turn.run_id),
            span_id_of(turn.run_id, "run"),
        )


def test_a_failed_case_is_a_span_in_error_without_its_message(provider, tmp_path):
    tp, spans = provider
    agent = Agent(
        "short", ScriptedModel([tool_call("lookup", city="Oslo")]), tools=[lookup], tracer_provider=tp
    )
    agent.evaluate([Case("go", id="only")], CHECKS[:1], name="broken", folder=tmp_path, display=False)
    (case_span,) = spans.named("evaluate broken")
    assert case_span.status.status_code == StatusCode.ERROR
    assert case_span.status.description == case_span.attributes["error.type"] == "ScriptedModelExhaustedError"
    assert case_span.attributes["agentnb.eval.status"] == "error"


def test_an_untraced_evaluation_writes_no_span(provider, tmp_path):
    tp, spans = provider
    Agent("plain", ScriptedModel(["ok"])).evaluate(
        [Case("hi", id="a")], name="quiet", folder=tmp_path, display=False
    )
    assert spans.all == []
