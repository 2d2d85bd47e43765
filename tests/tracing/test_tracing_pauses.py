"""A paused turn that goes on is one trace: its run's span carries the pause and the resume as
events (ids, kinds, tools, verdicts; never the arguments or the person's reasons)."""

from __future__ import annotations

from agentnb import Agent, ScriptedModel, tool, tool_call, tracing


@tool(requires_approval=True)
def charge(customer: str, amount: int) -> str:
    """Charge a customer."""
    return f"charged {customer} {amount}"


def test_a_pause_and_its_resume_are_events_of_the_runs_span(provider):
    tp, spans = provider
    agent = Agent(
        "pay",
        ScriptedModel([[tool_call("charge", customer="bob", amount=50)], "done"]),
        tools=[charge],
        tracer_provider=tp,
    )
    paused = agent.run("charge bob")
    assert spans.all == []  # nothing is written while the run waits
    (item,) = paused.pending
    item.reject("secret reason 7Q")
    agent.continue_run()
    assert spans.tree() == [
        ("invoke_agent pay", [("chat scripted", []), ("execute_tool charge", []), ("chat scripted", [])])
    ]
    root = spans.one("invoke_agent pay")
    events = [(e.name, dict(e.attributes)) for e in root.events]
    assert events == [
        (
            "agentnb.run.paused",
            {
                "agentnb.pending.ids": (item.id,),
                "agentnb.pending.kinds": ("approval",),
                "agentnb.pending.tools": ("charge",),
            },
        ),
        (
            "agentnb.run.resumed",
            {
                "agentnb.decision.ids": (item.id,),
                "agentnb.decision.verdicts": ("rejected",),
                "agentnb.decision.by": ("person",),
            },
        ),
    ]
    assert root.start_time <= root.events[0].timestamp <= root.events[1].timestamp <= root.end_time
    assert "7Q" not in str(events)


def test_an_exported_recording_of_a_paused_turn_has_the_same_events(provider):
    tp, spans = provider
    agent = Agent("pay", ScriptedModel([tool_call("charge", customer="ann", amount=1), "ok"]), tools=[charge])
    agent.run("charge ann").pending[0].approve()
    agent.continue_run()
    tracing.export(agent, tracer_provider=tp)
    names = [e.name for e in spans.one("invoke_agent pay").events]
    assert names == ["agentnb.run.paused", "agentnb.run.resumed"]


def test_a_turn_still_paused_is_not_exported(provider):
    tp, spans = provider
    agent = Agent("pay", ScriptedModel([tool_call("charge", customer="ann", amount=1)]), tools=[charge])
    agent.run("charge ann")
    assert tracing.export(agent, tracer_provider=tp) == [] and spans.all == []
