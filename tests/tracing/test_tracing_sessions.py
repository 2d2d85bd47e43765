"""A trace has one session: a team's members are filed in the team's, a turn started under an
application's span goes under it, and a session set in the OpenTelemetry context (OpenInference's
``using_session`` key) files the turn there."""

from __future__ import annotations

from opentelemetry import context as otel_context

from agentnb import Agent, ScriptedModel, Team, tool_call
from agentnb.tracing.spans import span_id_of


def search(q: str) -> str:
    """Search."""
    return f"found {q}"


def test_a_teams_trace_is_in_the_teams_session_members_spans_included(provider):
    tp, spans = provider
    researcher = Agent(
        "researcher", model=ScriptedModel([tool_call("search", q="otel"), "notes on otel"]), tools=[search]
    )
    writer = Agent("writer", model=ScriptedModel(["a draft"]))
    lead = ScriptedModel(
        [
            tool_call("delegate_task_to_member", member_id="researcher", task="research otel"),
            tool_call("delegate_task_to_member", member_id="writer", task="write it"),
            "Done.",
        ]
    )
    team = Team("team", members=[researcher, writer], model=lead, mode="coordinate", tracer_provider=tp)
    team.run("write about otel")
    assert len({s.context.trace_id for s in spans.all}) == 1
    assert {researcher.session_id, writer.session_id}.isdisjoint({team.session_id})
    sessions = {
        (s.attributes.get("gen_ai.conversation.id"), s.attributes.get("session.id"))
        for s in spans.all
        if s.name.startswith(("invoke_agent", "chat"))
    }
    assert sessions == {(team.session_id, team.session_id)}
    assert spans.one("invoke_agent researcher").attributes["session.id"] == team.session_id


def test_a_turn_started_under_an_applications_span_goes_under_it_in_the_contexts_session(provider):
    tp, spans = provider
    tracer = tp.get_tracer("the-app")
    agent = Agent("helper", ScriptedModel(["hello"]), tracer_provider=tp)
    token = otel_context.attach(otel_context.set_value("session.id", "web-session-7"))
    try:
        with tracer.start_as_current_span("handle request") as request:
            agent.run("hi")
    finally:
        otel_context.detach(token)
    root = spans.one("invoke_agent helper")
    assert root.parent.span_id == request.get_span_context().span_id
    assert root.context.trace_id == request.get_span_context().trace_id
    assert root.context.span_id == span_id_of(agent.history[-1].run_id, "run")
    assert root.attributes["session.id"] == root.attributes["gen_ai.conversation.id"] == "web-session-7"
    assert spans.one("chat scripted").parent.span_id == root.context.span_id
