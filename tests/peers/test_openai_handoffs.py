"""The OpenAI Agents SDK's handoff tests, ported to agentnb's API.

Peer files (openai/openai-agents-python, tests/): test_handoff_tool.py (setup, names,
descriptions, collisions, overrides) and test_agent_runner.py (``test_handoffs``,
``test_handoff_filters``). The SDK's ``get_handoffs(agent)`` is ``agent.handoffs`` here (each a
``Handoff`` with ``.agent`` and ``.tool_name``) and the tool the model sees is in
``agent.all_tools()``; ``result.last_agent`` is ``agent.in_charge``.
"""

from __future__ import annotations

import json

import pytest

from agentnb import Agent, ScriptedModel, Team, handoff, tool_call
from agentnb.errors import ConfigurationError, HandoffFilterError, TeamDefinitionError


def tools_of(agent: Agent) -> dict[str, str]:
    return {t.name: t.description or "" for t in agent.all_tools()}


# test_handoff_tool.py::test_single_handoff_setup
def test_single_handoff_setup() -> None:
    agent_1 = Agent(name="test_1")
    agent_2 = Agent(name="test_2", handoffs=[agent_1])
    assert not agent_1.handoffs
    assert [h.agent for h in agent_2.handoffs] == [agent_1]
    assert not tools_of(agent_1)
    assert list(tools_of(agent_2)) == ["transfer_to_test_1"]
    assert tools_of(agent_2)["transfer_to_test_1"].startswith(
        "Handoff to the test_1 agent to handle the request."
    )


# test_handoff_tool.py::test_multiple_handoffs_setup
def test_multiple_handoffs_setup() -> None:
    agent_1, agent_2 = Agent(name="test_1"), Agent(name="test_2")
    agent_3 = Agent(name="test_3", handoffs=[agent_1, agent_2])
    assert [h.agent for h in agent_3.handoffs] == [agent_1, agent_2]
    assert not agent_1.handoffs and not agent_2.handoffs
    assert list(tools_of(agent_3)) == ["transfer_to_test_1", "transfer_to_test_2"]
    assert [h.agent.name for h in agent_3.handoffs] == ["test_1", "test_2"]


# test_handoff_tool.py::test_handoffs_reject_colliding_derived_names
def test_handoffs_reject_colliding_derived_names() -> None:
    with pytest.raises(TeamDefinitionError) as info:
        Agent(name="triage", handoffs=[Agent(name="Billing Agent"), Agent(name="billing agent")])
    assert str(info.value) == (
        "agent 'triage': handoffs to 'Billing Agent' and 'billing agent' both make the tool `transfer_to_billing_agent`; "
        "give one handoff(agent, tool_name_override=...)"
    )


# test_handoff_tool.py::test_handoff_derived_name_collision_allows_explicit_override
def test_handoff_derived_name_collision_allows_explicit_override() -> None:
    triage = Agent(
        name="triage",
        handoffs=[
            Agent(name="Billing Agent"),
            handoff(Agent(name="billing agent"), tool_name_override="transfer_to_normalized_billing"),
        ],
    )
    assert [h.tool_name for h in triage.handoffs] == [
        "transfer_to_billing_agent",
        "transfer_to_normalized_billing",
    ]


# test_handoff_tool.py::test_handoff_rejects_distinct_agents_with_the_same_name
def test_handoff_rejects_distinct_agents_with_the_same_name() -> None:
    with pytest.raises(TeamDefinitionError, match="both make the tool `transfer_to_billing`"):
        Agent(name="triage", handoffs=[Agent(name="Billing"), Agent(name="Billing")])


# test_handoff_tool.py::test_handoff_warns_and_keeps_last_distinct_agent_with_the_same_name
@pytest.mark.xfail(
    strict=True,
    reason="deliberate: a tool-name collision is always an error at definition, never a warning that drops a handoff",
)
def test_handoff_warns_and_keeps_last_distinct_agent_with_the_same_name() -> None:
    triage = Agent(name="triage", handoffs=[Agent(name="Billing"), Agent(name="Billing")])
    assert len(triage.all_tools()) == 1


# test_handoff_tool.py::test_default_handoff_tool_name_allows_whitespace_without_warning
# and ::test_default_handoff_tool_name_warns_for_non_whitespace_invalid_characters (no warning here)
@pytest.mark.parametrize("name", ["Refund agent", "Refund/agent"])
def test_default_handoff_tool_name(name: str) -> None:
    assert handoff(Agent(name=name)).tool_name == "transfer_to_refund_agent"


# test_handoff_tool.py::test_custom_handoff_setup
def test_custom_handoff_setup() -> None:
    agent_1, agent_2 = Agent(name="test_1"), Agent(name="test_2")
    agent_3 = Agent(
        name="test_3",
        handoffs=[
            agent_1,
            handoff(
                agent_2,
                tool_name_override="custom_tool_name",
                tool_description_override="custom tool description",
            ),
        ],
    )
    assert len(agent_3.handoffs) == 2 and not agent_1.handoffs and not agent_2.handoffs
    tools = tools_of(agent_3)
    assert list(tools) == ["transfer_to_test_1", "custom_tool_name"]
    assert tools["custom_tool_name"] == "custom tool description"
    assert agent_3.handoffs[1].agent is agent_2


def some_function(a: str) -> str:
    """Some function."""
    return "result"


# test_agent_runner.py::test_handoffs
def test_handoffs() -> None:
    agent_1 = Agent(name="test_1", model=ScriptedModel(["done"]))
    agent_2 = Agent(name="test_2", model=ScriptedModel([]))
    model = ScriptedModel([tool_call("some_function", a="b"), tool_call("transfer_to_test_1")])
    agent_3 = Agent(name="test_3", model=model, handoffs=[agent_1, agent_2], tools=[some_function])
    result = agent_3.run("user_message")
    assert result.content == "done"
    responses = len(model.requests) + len(agent_1.model.requests)
    assert responses == 3, "should have three model responses"
    # summary of the input list: the user message, tool call + result, handoff call + result, done
    assert [m.role for m in result.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert agent_3.in_charge is agent_1, "should have handed off to agent_1"
    # the new agent takes over the conversation: the original input, the tool call and its
    # result, the handoff and its output (the SDK's input_history + pre_handoff_items + new_items)
    sent = agent_1.model.requests[-1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "tool"]
    assert sent[0]["content"] == "user_message"
    assert sent[1]["tool_calls"][0]["function"] == {"name": "some_function", "arguments": '{"a": "b"}'}
    assert sent[2]["content"] == "result"
    assert sent[3]["tool_calls"][0]["function"]["name"] == "transfer_to_test_1"
    assert json.loads(sent[4]["content"]) == {"assistant": "test_1"}
    assert sent[4]["tool_call_id"] == sent[3]["tool_calls"][0]["id"]


# docs/handoffs.md (the triage flow): an account looked up in the same response as the handoff is
# what the agent handed to starts from; the handoff runs after the response's other calls.
def test_the_agent_handed_to_sees_the_calls_of_the_handoffs_response() -> None:
    def lookup_account(email: str) -> str:
        """Find the customer's account."""
        return f"account 4417 for {email}, plan pro"

    billing = Agent(name="billing", model=ScriptedModel(["Your pro plan renews on the 3rd."]))
    triage = Agent(
        name="triage",
        handoffs=[billing],
        tools=[lookup_account],
        model=ScriptedModel(
            [[tool_call("transfer_to_billing"), tool_call("lookup_account", email="ana@x.io")]]
        ),
    )
    result = triage.run("when does my plan renew? I am ana@x.io")
    assert result.content == "Your pro plan renews on the 3rd."
    assert [c.name for c in triage.history[-1].tool_calls] == ["lookup_account", "transfer_to_billing"]
    sent = billing.model.requests[-1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert [c["function"]["name"] for c in sent[1]["tool_calls"]] == ["transfer_to_billing", "lookup_account"]
    answers = {m["tool_call_id"]: m["content"] for m in sent[2:]}
    by_name = {c["function"]["name"]: answers[c["id"]] for c in sent[1]["tool_calls"]}
    assert by_name == {
        "lookup_account": "account 4417 for ana@x.io, plan pro",
        "transfer_to_billing": '{"assistant": "billing"}',
    }
    # its record labels that history, message by message
    prompt = triage.history[-1].children[0].prompt
    assert [s.source for s in prompt.earlier_sections] == [
        "handoff (transfer_to_billing) history: assistant",
        "handoff (transfer_to_billing) history: tool",
        "handoff (transfer_to_billing) history: tool",
    ]


# handoff_filters.py::remove_all_tools (its test, test_extension_filters.py): a filter that drops
# the tool calls and their results; the agent handed to gets the conversation alone.
def test_a_filter_that_removes_the_tools() -> None:
    def remove_all_tools(history):
        return [m for m in history if m.role != "tool" and not m.tool_calls]

    agent_1 = Agent(name="test_1", model=ScriptedModel(["done"]))
    agent_2 = Agent(
        name="test_2",
        tools=[some_function],
        handoffs=[handoff(agent_1, input_filter=remove_all_tools)],
        model=ScriptedModel(["hi", tool_call("some_function", a="b"), tool_call("transfer_to_test_1")]),
        add_history_to_context=True,
    )
    agent_2.run("hello")
    agent_2.run("user_message")
    sent = agent_1.model.requests[-1].messages
    assert [(m["role"], m["content"]) for m in sent] == [
        ("user", "hello"),
        ("assistant", "hi"),
        ("user", "user_message"),
    ]


# test_agent_runner.py (the SDK's runner: execute_handoffs) with test_multiple_handoffs_doesnt_error:
# two handoffs in one response; the first is taken, the other answered and not run.
def test_multiple_handoffs_take_the_first_and_answer_the_others() -> None:
    agent_1 = Agent(name="test_1", model=ScriptedModel(["one answers"]), session_state={"seen": 0})
    agent_2 = Agent(name="test_2", model=ScriptedModel(["two answers"]))
    agent_3 = Agent(
        name="test_3",
        handoffs=[agent_1, agent_2],
        session_state={"visits": []},
        model=ScriptedModel([[tool_call("transfer_to_test_2"), tool_call("transfer_to_test_1")]]),
    )
    result = agent_3.run("user_message")
    assert result.content == "two answers"
    assert agent_3.in_charge is agent_2
    calls = {c.name: c for c in agent_3.history[-1].tool_calls}
    assert calls["transfer_to_test_1"].result == "Multiple handoffs detected, ignoring this one."
    assert calls["transfer_to_test_1"].error is None and calls["transfer_to_test_1"].child_run_id is None
    # no side effect of the one ignored: test_1 never ran, asked its model nothing, changed nothing
    assert len(agent_1.history) == 0 and agent_1.model.requests == []
    assert [c.agent for c in agent_3.history[-1].children] == ["test_2"]
    assert agent_3.session_state == {"visits": []}
    # the agent taken sees the other handoff answered as ignored
    sent = agent_2.model.requests[-1].messages
    assert json.loads(sent[2]["content"]) == {"assistant": "test_2"}
    assert sent[3]["content"] == "Multiple handoffs detected, ignoring this one."


# test_agent_runner.py::test_invalid_input_filter_fails (a filter returning a string) and
# ::test_async_input_filter_fails (a coroutine function as the filter): the developer's filter
# failing is raised to the developer (the SDK's UserError), never sent to the model.
@pytest.mark.parametrize("kind", ["a string", "a coroutine", "raises", "a list of strings"])
def test_an_input_filter_that_fails_is_raised_to_the_developer(kind: str) -> None:
    def returns_a_string(history):
        return "foo"

    async def asynchronous(history):
        return history

    def raises(history):
        raise KeyError("role")

    def strings(history):
        return [m.text for m in history]

    input_filter = {"a string": returns_a_string, "a coroutine": asynchronous, "raises": raises}.get(
        kind, strings
    )
    agent_1 = Agent(name="test_1", model=ScriptedModel(["last"]))
    agent_2 = Agent(
        name="test_2",
        handoffs=[handoff(agent_1, input_filter=input_filter)],
        model=ScriptedModel([tool_call("transfer_to_test_1"), "the model read an error and answered"]),
    )
    with pytest.raises(HandoffFilterError) as info:
        agent_2.run("user_message")
    name = input_filter.__qualname__
    where = f"the input_filter {name} of the handoff transfer_to_test_1 (to 'test_1')"
    expected = {
        "a string": f"{where} returned a str ('foo'); it must return a list of messages (agentnb.Message)",
        "a coroutine": f"{where} returned a coroutine (",
        "raises": f"{where} raised KeyError: 'role'",
        "a list of strings": f"{where} returned a list holding a str ('user_message'); it must return a list",
    }[kind]
    assert str(info.value).startswith(expected)
    # the run failed with it (nothing left running), and the agent handed to never ran
    turn = agent_2.history[-1]
    assert turn.status == "failed" and turn.error.startswith(where)
    assert info.value.result.turn is turn
    assert len(agent_1.history) == 0 and len(agent_2.model.requests) == 1


# test_agent_runner.py::test_non_callable_input_filter_causes_error: refused at definition here
def test_non_callable_input_filter_causes_error() -> None:
    with pytest.raises(ConfigurationError, match="input_filter must be a function"):
        handoff(Agent(name="test_1"), input_filter="foo")


def test_a_failing_filter_in_a_member_is_raised_from_the_team() -> None:
    agent_1 = Agent(name="test_1", model=ScriptedModel(["last"]))
    member = Agent(
        name="member",
        handoffs=[handoff(agent_1, input_filter=lambda history: None)],
        model=ScriptedModel([tool_call("transfer_to_test_1")]),
    )
    team = Team(
        name="team",
        members=[member],
        model=ScriptedModel([tool_call("delegate_task_to_member", member_id="member", task="go"), "done"]),
    )
    with pytest.raises(HandoffFilterError, match="returned a NoneType"):
        team.run("go")
    assert [team.history[-1].status, member.history[-1].status] == ["failed", "failed"]


# test_agent_runner.py::test_handoff_filters (remove_new_items: the new agent gets the original input)
def test_handoff_filters() -> None:
    agent_1 = Agent(name="test_1", model=ScriptedModel(["last"]))
    agent_2 = Agent(
        name="test_2",
        model=ScriptedModel(["1", tool_call("transfer_to_test_1")]),
        handoffs=[handoff(agent_1, input_filter=lambda history: [])],
        add_history_to_context=True,
    )
    agent_2.run("earlier")
    result = agent_2.run("user_message")
    assert result.content == "last"
    sent = agent_1.model.requests[-1].messages
    assert [m["content"] for m in sent] == ["user_message"], "should only have the original input"
