"""The OpenAI Agents SDK's human-in-the-loop tests, ported to agentnb's API.

Peer files (openai/openai-agents-python, tests/): test_hitl_error_scenarios.py (resuming, nested
agent tools, ``needs_approval`` checks) and test_hitl_session_scenario.py (approvals across a
rehydrated session). The SDK's ``needs_approval`` is accepted by ``@tool``; its
``result.interruptions`` is ``result.interruptions`` (= ``result.pending``); ``state.approve(item)``
/ ``state.reject(item)`` is ``item.approve()`` / ``item.reject(why)``; ``Runner.run(agent, state)``
is ``agent.continue_run()``; ``RunState`` serialised between runs is the paused turn saved with the
session. A ScriptedModel plays the SDK's fake model.
"""

from __future__ import annotations

import pytest

from agentnb import Agent, ScriptedModel, tool, tool_call
from agentnb.errors import ContinueRunError, ToolDefinitionError
from agentnb.sessions import JSONSession


def last_tool_result(request) -> str:
    return next(m["content"] for m in reversed(request.messages) if m["role"] == "tool")


# test_hitl_error_scenarios.py::test_resumed_hitl_executes_approved_tools
def test_resumed_hitl_executes_approved_tools():
    runs = []

    @tool(needs_approval=True)
    def shell(command: str) -> str:
        runs.append(command)
        return "shell_output"

    agent = Agent("a", ScriptedModel([tool_call("shell", command="ls"), "done"]), tools=[shell])
    first = agent.run("run shell command")
    assert first.interruptions and runs == []
    first.interruptions[0].approve()
    resumed = agent.continue_run()
    assert resumed.content == "done" and runs == ["ls"]
    assert resumed.tool_calls[0].result == "shell_output"


# test_hitl_error_scenarios.py::test_resuming_skips_approvals_for_non_hitl_tools
def test_resuming_skips_approvals_for_non_hitl_tools():
    shell_runs = []

    def shell(command: str) -> str:
        shell_runs.append(command)
        return "shell_output"

    @tool(needs_approval=lambda arguments, ctx: True)
    def needs_hitl() -> str:
        return "approved"

    agent = Agent(
        "a",
        ScriptedModel([[tool_call("needs_hitl"), tool_call("shell", command="echo auto")], "done"]),
        tools=[shell, needs_hitl],
    )
    first = agent.run("resume approvals")
    assert [i.tool for i in first.interruptions] == ["needs_hitl"]
    first.interruptions[0].approve()
    resumed = agent.continue_run()
    assert not resumed.interruptions  # no new approval on resume
    assert [c.name for c in resumed.tool_calls].count("shell") == 1 and shell_runs == ["echo auto"]


# test_hitl_error_scenarios.py::test_nested_agent_tool_resumes_after_rejection
def test_nested_agent_tool_resumes_after_rejection():
    @tool(needs_approval=True)
    def inner_hitl_tool() -> str:
        return "ok"

    inner = Agent(
        "Inner",
        ScriptedModel(
            [tool_call("inner_hitl_tool", id="inner-1"), tool_call("inner_hitl_tool", id="inner-2"), "done"]
        ),
        tools=[inner_hitl_tool],
    )
    outer = Agent(
        "Outer",
        ScriptedModel([tool_call("inner_agent_tool", task="hi", id="outer-1"), "finished"]),
        tools=[inner.as_tool("inner_agent_tool", "Inner agent tool with HITL", requires_approval=True)],
    )
    first = outer.run("start")
    assert [i.tool for i in first.interruptions] == ["inner_agent_tool"]
    first.interruptions[0].approve()
    second = outer.continue_run()
    assert [(i.tool, i.path) for i in second.interruptions] == [("inner_hitl_tool", ("Outer", "Inner"))]
    second.interruptions[0].reject("no")
    third = outer.continue_run()
    # The nested agent goes on and asks again (its second call), the outer call still waits.
    (item,) = third.interruptions
    assert (item.tool, item.call.tool_call_id) == ("inner_hitl_tool", "inner-2")
    assert third.tool_calls == []  # the rejection did not end the agent tool
    item.approve()
    final = outer.continue_run()
    assert final.content == "finished" and final.tool_calls[0].result == "done"


# test_hitl_error_scenarios.py::test_agent_as_tool_with_nested_approvals_propagates
def test_agent_as_tool_with_nested_approvals_propagates():
    tool_calls = []

    @tool(needs_approval=True)
    def get_current_timestamp() -> str:
        tool_calls.append("called")
        return "timestamp"

    spanish = Agent(
        "spanish_agent",
        ScriptedModel([tool_call("get_current_timestamp"), "hola"]),
        tools=[get_current_timestamp],
    )
    orchestrator = Agent(
        "orchestrator",
        ScriptedModel([tool_call("respond_spanish", task="hola", id="spanish-call"), "done"]),
        tools=[spanish.as_tool("respond_spanish", "Respond in Spanish", requires_approval=True)],
    )
    first = orchestrator.run("hola")
    assert first.interruptions, "Outer agent tool should require approval"
    first.interruptions[0].approve()
    resumed = orchestrator.continue_run()
    assert resumed.interruptions[0].tool == "get_current_timestamp"
    assert not tool_calls, "Nested tool should not execute before approval"
    resumed.interruptions[0].approve()
    final = orchestrator.continue_run()
    assert final.content == "done" and tool_calls == ["called"]


# test_hitl_error_scenarios.py::test_function_needs_approval_invalid_type_raises (the SDK raises
# UserError at the run; agentnb refuses the tool where it is made)
def test_function_needs_approval_invalid_type_raises():
    with pytest.raises(ToolDefinitionError, match="requires_approval must be True, False or a function"):

        @tool(needs_approval="always")
        def bad_tool() -> str:
            return "ok"


# test_hitl_error_scenarios.py::test_callable_function_approval_receives_valid_object_arguments
def test_callable_function_approval_receives_valid_object_arguments():
    approval_inputs, tool_inputs = [], []

    def needs_approval(params, ctx) -> bool:
        approval_inputs.append(params)
        return False

    @tool(needs_approval=needs_approval)
    def send_email(subject: str) -> str:
        tool_inputs.append(subject)
        return "sent"

    agent = Agent(
        "a", ScriptedModel([tool_call("send_email", subject="status update"), "done"]), tools=[send_email]
    )
    result = agent.run("send an email")
    assert result.content == "done"
    assert approval_inputs == [{"subject": "status update"}] and tool_inputs == ["status update"]


@pytest.mark.xfail(
    strict=True,
    reason="deliberate: a call whose arguments do not read never runs; its error goes back to the model "
    "instead of asking a person about it",
)
# test_hitl_error_scenarios.py::test_callable_function_approval_fails_closed_for_invalid_arguments
def test_callable_function_approval_fails_closed_for_invalid_arguments():
    approval_inputs = []

    @tool(needs_approval=lambda params, ctx: approval_inputs.append(params) or False)
    def send_email(subject: str) -> str:
        raise AssertionError("never runs")

    agent = Agent(
        "a",
        ScriptedModel([tool_call("send_email", raw_arguments='{"subject": "refund"'), "done"]),
        tools=[send_email],
    )
    result = agent.run("send an email")
    assert len(result.interruptions) == 1  # the SDK asks a person about the unreadable call


def test_a_call_whose_arguments_do_not_read_goes_back_to_the_model_unasked():
    asked = []

    @tool(needs_approval=lambda params, ctx: asked.append(params) or False)
    def send_email(subject: str) -> str:
        raise AssertionError("never runs")

    agent = Agent(
        "a",
        ScriptedModel([tool_call("send_email", raw_arguments='{"subject": "refund"'), "done"]),
        tools=[send_email],
    )
    result = agent.run("send an email")
    assert result.status == "ok" and asked == []
    assert result.tool_calls[0].error_kind == "malformed_arguments"


@pytest.mark.xfail(strict=True, reason="deliberate: continuing needs every pending item decided")
# test_hitl_error_scenarios.py::test_pending_approvals_stay_pending_on_resume (the SDK resumes and
# interrupts again with the undecided call)
def test_pending_approvals_stay_pending_on_resume():
    @tool(needs_approval=True)
    def shell(command: str) -> str:
        return "out"

    agent = Agent("a", ScriptedModel([tool_call("shell", command="ls")]), tools=[shell])
    agent.run("resume pending approval")
    assert agent.continue_run().interruptions


def test_continuing_with_an_undecided_item_is_refused_and_changes_nothing():
    @tool(needs_approval=True)
    def shell(command: str) -> str:
        return "out"

    agent = Agent("a", ScriptedModel([tool_call("shell", command="ls"), "done"]), tools=[shell])
    agent.run("resume pending approval")
    with pytest.raises(ContinueRunError, match="still waits for 1 decision"):
        agent.continue_run()
    assert agent.is_paused and agent.pending[0].decision is None


TOOL_ECHO, TOOL_NOTE = "approved_echo", "approved_note"
USER_MESSAGES = [
    "Fetch profile for customer 104.",
    "Update note for customer 104.",
    "Delete note for customer 104.",
]


# test_hitl_session_scenario.py::test_memory_session_hitl_scenario: three turns, each approval
# decided on an agent rebuilt from the session; the third rejected
def test_memory_session_hitl_scenario(tmp_path):
    executed: dict[str, int] = {}

    @tool(needs_approval=True)
    def approved_echo(query: str) -> str:
        executed[TOOL_ECHO] = executed.get(TOOL_ECHO, 0) + 1
        return f"approved:{query}"

    @tool(needs_approval=True)
    def approved_note(query: str) -> str:
        executed[TOOL_NOTE] = executed.get(TOOL_NOTE, 0) + 1
        return f"approved_note:{query}"

    def respond(request):
        last = request.messages[-1]
        if last["role"] == "tool":
            return last["content"]
        name = TOOL_NOTE if "Update" in last["content"] else TOOL_ECHO
        return tool_call(name, query=last["content"])

    def rehydrated() -> Agent:
        return Agent(
            "scenario",
            ScriptedModel(respond),
            tools=[approved_echo, approved_note],
            session=JSONSession(tmp_path),
        )

    steps = [
        (USER_MESSAGES[0], TOOL_ECHO, "approve"),
        (USER_MESSAGES[1], TOOL_NOTE, "approve"),
        (USER_MESSAGES[2], TOOL_ECHO, "reject"),
    ]
    for message, name, decision in steps:
        first = rehydrated().run(message)
        agent = rehydrated()  # the paused turn comes back from the session
        (item,) = agent.pending
        assert (item.tool, item.arguments) == (name, {"query": message})
        item.approve() if decision == "approve" else item.reject("Tool execution was not approved.")
        result = agent.continue_run()
        expected = (
            f"{'approved' if name == TOOL_ECHO else 'approved_note'}:{message}"
            if decision == "approve"
            else "Rejected by the person: Tool execution was not approved."
        )
        assert result.content == expected and first.status == "paused"
    assert executed == {TOOL_ECHO: 1, TOOL_NOTE: 1}
    assert [t.status for t in rehydrated().history] == ["ok", "ok", "ok"]
