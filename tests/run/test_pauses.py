"""Pausing a turn for a person: what pauses, the pause itself, deciding, and continuing the same run."""

from __future__ import annotations

import asyncio
import json

import pytest

from agentnb import Agent, ScriptedModel, tool, tool_call
from agentnb.errors import ConfigurationError, ContinueRunError, DecisionError, ToolDefinitionError
from agentnb.events import EVENT_ADAPTER, RunPaused, RunResumed


def ledger_tools(calls: list[str]):
    @tool(requires_approval=True)
    def charge(customer: str, amount: int, session_state) -> str:
        """Charge a customer."""
        calls.append(f"charge {customer} {amount}")
        session_state.setdefault("charged", {})[customer] = amount
        return f"charged {customer} {amount}"

    def balance(customer: str) -> str:
        """A customer's balance."""
        calls.append(f"balance {customer}")
        return f"{customer} owes 50"

    return [charge, balance]


def payer(steps, calls, **options) -> Agent:
    return Agent("payer", ScriptedModel(steps), tools=ledger_tools(calls), **options)


def tool_messages(request) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "tool"]


def test_a_call_that_needs_approval_pauses_the_turn_before_it_runs_and_the_others_run_first():
    calls: list[str] = []
    agent = payer(
        [[tool_call("charge", customer="bob", amount=50), tool_call("balance", customer="bob")], "charged"],
        calls,
    )
    result = agent.run("charge bob")
    assert result.status == "paused" and result.is_paused and agent.is_paused
    assert calls == ["balance bob"]  # the call that needs no approval ran; the charge did not
    assert agent.session_state == {}
    (item,) = result.pending
    assert (item.kind, item.tool, item.arguments, item.path) == (
        "approval",
        "charge",
        {"customer": "bob", "amount": 50},
        ("payer",),
    )
    assert item.reason == "charge requires approval" and not item.decided
    assert [e.kind for e in result.events][-3:] == ["tool_call_started", "tool_call_finished", "run_paused"]
    assert [c.name for c in result.tool_calls] == ["balance"]
    paused = result.events[-1]
    assert isinstance(paused, RunPaused) and paused.items == (item.call,)
    assert len(agent.model.requests) == 1 and result.content is None

    item.approve()
    done = agent.continue_run()
    assert done.status == "ok" and done.content == "charged"
    assert calls == ["balance bob", "charge bob 50"] and agent.session_state == {"charged": {"bob": 50}}
    assert len(agent.history) == 1 and done.turn is result.turn  # one record: the same run went on
    kinds = [e.kind for e in done.events]
    assert kinds.count("run_started") == 1 and kinds.count("run_finished") == 1
    assert kinds[kinds.index("run_paused") :] == [
        "run_paused",
        "run_resumed",
        "tool_call_started",
        "state_changed",
        "tool_call_finished",
        "model_requested",
        "model_responded",
        "run_finished",
    ]
    resumed = next(e for e in done.events if isinstance(e, RunResumed))
    assert [(d.id, d.verdict, d.by) for d in resumed.decisions] == [(item.id, "approved", "person")]
    # The model received both results, in the order the calls ran (the one that waited last).
    assert tool_messages(agent.model.requests[1]) == ["bob owes 50", "charged bob 50"]
    assert [c.name for c in done.tool_calls] == ["balance", "charge"]
    assert done.tool_calls[1].decision == "approved"
    assert agent.state.messages[-1].content == "charged"  # the conversation holds the whole turn


def test_code_decides_per_call_never_the_model():
    seen = []

    def big(arguments, run_context) -> bool:
        seen.append((arguments, run_context.agent.name))
        return arguments["amount"] > 100

    def pay(amount: int) -> str:
        return f"paid {amount}"

    agent = Agent(
        "p",
        ScriptedModel([tool_call("pay", amount=20), tool_call("pay", amount=500), "done"]),
        tools=[tool(requires_approval=big)(pay)],
    )
    result = agent.run("pay")
    assert result.status == "paused"
    assert [c.result for c in result.tool_calls] == ["paid 20"]  # the small one ran without asking
    assert seen == [({"amount": 20}, "p"), ({"amount": 500}, "p")]
    assert result.pending[0].arguments == {"amount": 500} and result.pending[0].reason.endswith(
        "asked for approval"
    )


def test_a_rule_gives_its_reason_and_a_rule_that_raises_asks_a_person():
    def reason(arguments, run_context):
        return f"over the limit: {arguments['amount']}"

    def broken(arguments, run_context):
        raise KeyError("limit")

    def pay(amount: int) -> str:
        return "paid"

    def refund(amount: int) -> str:
        return "refunded"

    agent = Agent(
        "p",
        ScriptedModel([[tool_call("pay", amount=7), tool_call("refund", amount=3)], "ok"]),
        tools=[tool(requires_approval=reason)(pay), tool(requires_approval=broken)(refund)],
    )
    items = agent.run("x").pending
    assert [i.reason for i in items] == [
        "over the limit: 7",
        "refund's requires_approval raised KeyError: 'limit'; a person decides instead",
    ]


def test_the_agents_approval_rule_covers_every_tool():
    asked = []

    def rule(tool_name, arguments, run_context):
        asked.append(tool_name)
        return tool_name.startswith("delete")

    def delete_file(path: str) -> str:
        return "deleted"

    def read_file(path: str) -> str:
        return "text"

    agent = Agent(
        "fs",
        ScriptedModel([[tool_call("read_file", path="a"), tool_call("delete_file", path="a")], "ok"]),
        tools=[delete_file, read_file],
        approval=rule,
    )
    result = agent.run("clean up")
    assert asked == ["read_file", "delete_file"]
    assert [i.tool for i in result.pending] == ["delete_file"]
    with pytest.raises(ConfigurationError, match="approval must be a function"):
        Agent("x", ScriptedModel([]), approval="always")


def test_an_edit_is_checked_against_the_schema_and_recorded_as_the_persons():
    calls: list[str] = []
    agent = payer([tool_call("charge", customer="bob", amount=50), "ok"], calls)
    (item,) = agent.run("charge bob").pending
    with pytest.raises(DecisionError, match="do not fit the tool's schema"):
        item.approve(arguments={"customer": "bob", "amount": "a lot"})
    with pytest.raises(DecisionError, match="do not fit"):
        item.approve(arguments={"customer": "bob"})
    assert not item.decided  # a refused edit decides nothing
    item.approve(arguments={"customer": "bob", "amount": 30})
    result = agent.continue_run()
    assert calls == ["charge bob 30"] and agent.session_state == {"charged": {"bob": 30}}
    call = result.tool_calls[0]
    assert (call.decision, json.loads(call.arguments), json.loads(call.model_arguments)) == (
        "edited",
        {"customer": "bob", "amount": 30},
        {"customer": "bob", "amount": 50},
    )
    causes = [c.cause for c in result.turn.state_changes if c.cause.name == "charge"]
    assert [(c.kind, c.edited_by, c.label()) for c in causes] == [
        ("tool", "person", "tool:charge [arguments by person]")
    ]
    # The model's own call keeps its arguments in the conversation; the result is the person's run.
    assert (
        agent.model.requests[1].messages[-2]["tool_calls"][0]["function"]["arguments"] == call.model_arguments
    )
    assert tool_messages(agent.model.requests[1]) == ["charged bob 30"]


def test_a_rejected_call_does_not_run_and_the_model_works_around_it():
    calls: list[str] = []

    def answer(request):
        (result,) = tool_messages(request)[-1:]
        if result.startswith("Rejected"):
            return tool_call("balance", customer="bob")
        return "done"

    agent = payer(
        [tool_call("charge", customer="bob", amount=50), answer, "Bob owes 50; I did not charge."], calls
    )
    agent.run("charge bob").pending[0].reject("ask for the invoice first")
    result = agent.continue_run()
    assert result.status == "ok" and result.content == "Bob owes 50; I did not charge."
    assert calls == ["balance bob"] and agent.session_state == {}
    rejected = result.tool_calls[0]
    assert (rejected.decision, rejected.error_kind, rejected.answered_by) == (
        "rejected",
        "rejected",
        "person",
    )
    assert tool_messages(agent.model.requests[1]) == ["Rejected by the person: ask for the invoice first"]
    assert [c.name for c in result.tool_calls] == ["charge", "balance"]


def test_ask_user_pauses_for_the_persons_answer():
    agent = Agent(
        "helper",
        ScriptedModel(
            [tool_call("ask_user", question="Which card?"), lambda r: f"using {tool_messages(r)[-1]}"]
        ),
        ask_user=True,
    )
    assert "ask_user" in [t.name for t in agent.tools]
    (item,) = agent.run("pay").pending
    assert (item.kind, item.tool, item.reason) == ("question", "ask_user", "Which card?")
    with pytest.raises(DecisionError, match="answered, not approved"):
        item.approve()
    with pytest.raises(DecisionError, match="JSON data"):
        item.answer(object())
    item.answer("the blue one")
    assert agent.continue_run().content == "using the blue one"


def test_an_external_call_takes_the_persons_result_into_the_state_as_theirs():
    @tool(external=True, outputs_to_state={"receipt": {}})
    def send_wire(iban: str, amount: int) -> str:
        """Wire money (done at the bank's desk)."""
        raise AssertionError("an external tool never runs here")

    agent = Agent(
        "bank",
        ScriptedModel([tool_call("send_wire", iban="DE02", amount=9), lambda r: tool_messages(r)[-1]]),
        tools=[send_wire],
    )
    (item,) = agent.run("wire 9").pending
    assert item.kind == "external" and "supplies its result" in item.reason
    with pytest.raises(DecisionError, match="answered, not approved"):
        item.approve()
    item.answer({"ref": "W-1", "ok": True})
    result = agent.continue_run()
    assert result.content == '{"ref": "W-1", "ok": true}'
    assert agent.session_state == {"receipt": {"ref": "W-1", "ok": True}}
    (change,) = [c for c in result.turn.state_changes if c.cause.name == "send_wire"]
    assert (change.cause.kind, change.cause.label()) == ("person", "person:send_wire")
    assert result.tool_calls[0].decision == "answered"


def test_deciding_twice_and_continuing_a_turn_that_is_not_paused_are_clear_errors():
    calls: list[str] = []
    agent = payer([tool_call("charge", customer="bob", amount=50), "ok", "hello"], calls)
    with pytest.raises(ContinueRunError, match="has no paused turn .*it has no turns"):
        agent.continue_run()
    (item,) = agent.run("charge").pending
    with pytest.raises(ContinueRunError, match=r"still waits for 1 decision.*charge"):
        agent.continue_run()
    assert agent.is_paused  # the refused continue changed nothing
    item.reject("no")
    with pytest.raises(DecisionError, match="was already rejected; a decision is taken once"):
        item.approve()
    with pytest.raises(DecisionError, match="was already rejected"):
        agent.pending[0].reject("again")  # another handle on the same item
    agent.continue_run()
    with pytest.raises(ContinueRunError, match="its last turn is ok"):
        agent.continue_run()
    with pytest.raises(DecisionError, match="waits for approval, not an answer"):
        payer([tool_call("charge", customer="x", amount=1)], []).run("x").pending[0].answer("yes")


def test_a_new_turn_abandons_the_paused_one():
    calls: list[str] = []
    agent = payer([tool_call("charge", customer="bob", amount=50), "hi"], calls)
    paused = agent.run("charge")
    seen = []
    agent.subscribe(seen.append)
    assert agent.run("hello").content == "hi"
    first = agent.history[0]
    assert (first.status, first.pause, first.error) == (
        "failed",
        None,
        "abandoned: a new turn started before this paused one was continued",
    )
    assert seen[0].kind == "run_failed" and seen[0].run_id == paused.turn.run_id
    assert calls == [] and paused.pending == []


def test_a_call_that_cannot_run_does_not_wait_for_approval():
    calls: list[str] = []
    agent = payer([tool_call("charge", customer="bob", amount="lots"), "sorry"], calls)
    result = agent.run("charge")
    assert result.status == "ok" and result.tool_calls[0].error_kind == "invalid_arguments"


def test_breakpoints_step_through_a_turn():
    calls: list[str] = []
    agent = payer(
        [tool_call("balance", customer="bob"), tool_call("charge", customer="bob", amount=50), "ok"],
        calls,
        break_before=["model", "tool:balance"],
    )
    result = agent.run("charge bob")
    (item,) = result.pending
    assert (item.kind, item.tool, item.reason) == ("breakpoint", None, "break_before model (model call 1)")
    assert item.request["messages"][-1] == {"role": "user", "content": "charge bob"}
    assert [t["function"]["name"] for t in item.request["tools"]] == ["charge", "balance"]
    assert agent.model.requests == []  # nothing went out
    with pytest.raises(DecisionError, match="cannot be rejected"):
        item.reject("no")
    item.approve()
    result, stops = agent.continue_run(), []
    while result.status == "paused":
        stops.append([f"{i.kind}:{i.tool}" for i in result.pending])
        for pending in result.pending:
            pending.approve()
        result = agent.continue_run()
    assert stops == [
        ["breakpoint:balance"],  # model call 1 asked for it: stopped before it ran
        ["breakpoint:None"],  # before model call 2
        ["approval:charge"],  # model call 2 asked for a charge, which needs approval
        ["breakpoint:None"],  # before model call 3
    ]
    assert result.status == "ok" and calls == ["balance bob", "charge bob 50"]
    assert len(agent.history) == 1 and len(agent.model.requests) == 3
    agent.break_before()
    assert agent.breakpoints == frozenset()
    with pytest.raises(ConfigurationError, match="break_before takes"):
        agent.break_before("tools")


def test_an_edited_model_request_is_what_the_model_receives_and_carries_on():
    model = ScriptedModel(["first", "second"])
    agent = Agent("a", model, instructions="Be brief.", break_before="model")
    item = agent.run("hi").pending[0]
    messages = [*item.request["messages"][:-1], {"role": "user", "content": "hello instead"}]
    with pytest.raises(DecisionError, match="a dict with some of messages, tools, options"):
        item.edit(request={"prompt": "x"})
    with pytest.raises(DecisionError, match="with a role"):
        item.edit(request={"messages": [{"content": "x"}]})
    item.edit(request={"messages": messages, "options": {"temperature": 0}})
    result = agent.continue_run()
    assert result.status == "ok" and result.content == "first"
    assert model.requests[0].messages == messages and model.requests[0].options == {"temperature": 0}
    assert result.turn.model_calls[0].request["messages"][-1]["content"] == "hello instead"
    assert [m.content for m in result.messages if m.role == "user"] == ["hello instead"]
    assert agent.history[-1].messages[-1].content == "first"


def test_the_peers_names_for_the_options():
    @tool(requires_confirmation=True)
    def a() -> str:
        return "a"

    @tool(needs_approval=lambda arguments, ctx: True)
    def b() -> str:
        return "b"

    @tool(external_execution=True)
    def c() -> str:
        return "c"

    @tool(requires_user_input=True, user_input_fields=["city"])
    def d(city: str) -> str:
        return city

    assert a.requires_approval is True and callable(b.requires_approval) and c.external
    agent = Agent("x", ScriptedModel([tool_call("d", city="?"), "ok"]), tools=[d])
    (item,) = agent.run("weather").pending
    assert item.reason == "a person gives the arguments: city (item.approve(arguments={...}))"
    item.approve(arguments={"city": "Tokyo"})
    assert agent.continue_run().tool_calls[0].result == "Tokyo"
    with pytest.raises(ToolDefinitionError, match="requires_approval must be True, False or a function"):
        tool(requires_approval="always")(d.function)
    with pytest.raises(ToolDefinitionError, match="Invalid tool configuration arguments"):
        tool(needs_confirmation=True)


def test_continue_run_in_async_code_and_on_the_paused_result():
    calls: list[str] = []
    agent = payer([tool_call("charge", customer="bob", amount=5), "ok"], calls)
    result = asyncio.run(agent.arun("charge"))
    result.pending[0].approve()
    other = payer([tool_call("charge", customer="ann", amount=1)], []).run("charge")
    with pytest.raises(ConfigurationError, match="takes the result of this agent's paused last turn"):
        agent.continue_run(other)
    done = asyncio.run(agent.acontinue_run(result))
    assert done.status == "ok" and calls == ["charge bob 5"]


def test_a_typed_answer_beside_a_call_that_waits_is_taken_after_it():
    from pydantic import BaseModel

    class Paid(BaseModel):
        amount: int

    calls: list[str] = []
    agent = payer(
        [[tool_call("charge", customer="bob", amount=5), tool_call("final_result", amount=5)]],
        calls,
        output_type=Paid,
    )
    result = agent.run("charge")
    assert result.status == "paused" and [c.name for c in result.tool_calls] == []
    result.pending[0].approve()
    done = agent.continue_run()
    assert done.status == "ok" and done.output == Paid(amount=5) and calls == ["charge bob 5"]


def test_pause_events_round_trip_as_json():
    calls: list[str] = []
    agent = payer([tool_call("charge", customer="bob", amount=5), "ok"], calls)
    agent.run("charge").pending[0].approve(arguments={"customer": "ann", "amount": 2})
    events = agent.continue_run().events
    for event in events:
        assert EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event)) == event


def test_a_fork_of_a_paused_agent_goes_its_own_way():
    calls: list[str] = []
    agent = payer([tool_call("charge", customer="bob", amount=50), "ok"], calls)
    agent.run("charge")
    forked = agent.fork("other")
    assert forked.is_paused and forked.history[-1] is not agent.history[-1]
    forked.model = ScriptedModel(["fork done"])
    forked.pending[0].reject("not in the fork")
    assert not agent.pending[0].decided  # the parent's item is its own
    assert forked.continue_run().content == "fork done"
    assert agent.is_paused and agent.history[-1].status == "paused"
    agent.pending[0].approve()
    assert agent.continue_run().content == "ok" and calls == ["charge bob 50"]
    assert [c.decision for c in forked.history[-1].tool_calls] == ["rejected"]
