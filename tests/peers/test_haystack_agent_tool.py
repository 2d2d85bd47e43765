"""Haystack's AgentTool tests, ported to agentnb's ``Agent.as_tool``.

Peer file (deepset-ai/haystack): test/tools/test_agent_tool.py. Haystack's ``system_prompt``
Jinja variables (``{{topic}}``) are agentnb's instruction placeholders (``{topic}``); the tool's
``parameters`` are its JSON schema; the live run is played by ScriptedModels.
"""

from __future__ import annotations

import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import ConfigurationError, MaxToolIterationsError


def params(tool) -> tuple[list[str], list[str]]:
    return list(tool.parameters["properties"]), tool.parameters["required"]


# test_agent_tool.py::TestRequiredToolParameters::test_agent_without_prompt_variables
def test_agent_without_prompt_variables() -> None:
    agent = Agent(model=ScriptedModel(["done"]), instructions="You research things.")
    assert params(agent.as_tool()) == (["task"], ["task"])


# ::test_agent_with_prompt_variables
def test_agent_with_prompt_variables() -> None:
    agent = Agent(model=ScriptedModel(["done"]), instructions="You research {topic}.")
    assert params(agent.as_tool()) == (["task", "topic"], ["task", "topic"])


# ::test_prompt_variable_mapped_from_state
def test_prompt_variable_mapped_from_state() -> None:
    agent = Agent(model=ScriptedModel(["done"]), instructions="You research {topic}.")
    assert params(agent.as_tool(inputs_from_state={"subject": "topic"})) == (["task"], ["task"])


# TestAgentResultToString::test_exit_reason_text
def test_result_is_the_answer_text() -> None:
    sub = Agent("sub", model=ScriptedModel(["Response"]))
    lead = Agent("lead", model=ScriptedModel([tool_call("sub", task="x"), "ok"]), tools=[sub.as_tool()])
    lead.run("go")
    assert lead.history[-1].tool_calls[0].result == "Response"


# TestAgentResultToString::test_exit_reason_max_agent_steps
@pytest.mark.xfail(
    strict=True,
    reason="deliberate: a member that stops at its tool-round limit fails the delegation (an error result naming the limit), not a partial answer with a warning",
)
def test_exit_reason_max_agent_steps_is_a_partial_result() -> None:
    def lookup() -> str:
        """Look up."""
        return "42"

    sub = Agent(
        "sub",
        model=ScriptedModel([tool_call("lookup"), tool_call("lookup")]),
        tools=[lookup],
        max_tool_iterations=1,
    )
    lead = Agent("lead", model=ScriptedModel([tool_call("sub", task="x"), "ok"]), tools=[sub.as_tool()])
    lead.run("go")
    assert "reached max_agent_steps" in lead.history[-1].tool_calls[0].result


def test_max_iterations_fails_the_delegation_with_the_limit_named() -> None:
    def lookup() -> str:
        """Look up."""
        return "42"

    sub = Agent(
        "sub",
        model=ScriptedModel([tool_call("lookup"), tool_call("lookup")]),
        tools=[lookup],
        max_tool_iterations=1,
    )
    lead = Agent("lead", model=ScriptedModel([tool_call("sub", task="x"), "ok"]), tools=[sub.as_tool()])
    lead.run("go")
    call = lead.history[-1].tool_calls[0]
    assert call.error_kind == "tool_error" and "max_tool_iterations=1" in call.error
    assert lead.history[-1].children[0].error.startswith("agent 'sub' stopped")
    assert isinstance(MaxToolIterationsError("x"), Exception)


# TestAgentTool::test_init
def test_init() -> None:
    sub = Agent(model=ScriptedModel(["x"]))
    agent_tool = sub.as_tool(name="research", description="Research a question and report the findings.")
    assert agent_tool.name == "research"
    assert agent_tool.description == "Research a question and report the findings."
    assert agent_tool.member is sub
    assert agent_tool.parameters["required"] == ["task"]


# TestAgentTool::test_init (the parameter's shape)
@pytest.mark.xfail(
    strict=True,
    reason="deliberate: the delegated input is one string `task` (Agno's and agentnb's name), not a one-item `messages` array",
)
def test_init_messages_parameter() -> None:
    agent_tool = Agent(model=ScriptedModel(["x"])).as_tool(name="research", description="d")
    assert agent_tool.parameters["required"] == ["messages"]


# TestAgentTool::test_init_with_non_agent
def test_init_with_non_agent() -> None:
    from agentnb.delegation.tools import agent_tool

    with pytest.raises(ConfigurationError, match="as_tool needs an agent to wrap"):
        agent_tool("not an agent", name="research", description="Research a question.")


# TestAgentTool::test_init_with_prompt_template_and_inputs_from_state (run: the mapped value reaches the prompt)
def test_prompt_variable_from_state_and_from_the_caller() -> None:
    sub = Agent("sub", model=ScriptedModel(["a", "b"]), instructions="You research {topic}.")
    lead = Agent(
        "lead",
        model=ScriptedModel(
            [tool_call("mapped", task="go"), tool_call("asked", task="go", topic="tides"), "ok"]
        ),
        tools=[sub.as_tool("mapped", inputs_from_state={"subject": "topic"}), sub.as_tool("asked")],
        session_state={"subject": "optics"},
    )
    lead.run("go")
    first, second = lead.history[-1].children
    assert first.system_prompt == "You research optics."
    assert second.system_prompt == "You research tides."
    assert sub.session_state == {}  # neither value stays with the member


# TestAgentTool::test_live_run (played by scripted models)
def test_live_run() -> None:
    def order_status(order_id: str) -> str:
        """Look up the status of an order."""
        return f"Order {order_id} shipped, tracking code ZX9-4471."

    order_lookup_agent = Agent(
        "order_lookup_agent",
        model=ScriptedModel([tool_call("order_status", order_id="A-17"), "Shipped, tracking code ZX9-4471."]),
        tools=[order_status],
        instructions="Look up the order and report the tracking code exactly as the tool returned it.",
        max_tool_iterations=3,
    )
    coordinator = Agent(
        "coordinator",
        model=ScriptedModel(
            [tool_call("order_lookup", task="status of order A-17"), "Order A-17 shipped; tracking ZX9-4471."]
        ),
        tools=[
            order_lookup_agent.as_tool(
                name="order_lookup", description="Look up the status of an order by its ID."
            )
        ],
        instructions="Delegate every order question to the order_lookup tool, then answer the user.",
        max_tool_iterations=5,
    )
    result = coordinator.run("What is the status and the tracking code of order A-17?")
    tool_messages = [m for m in result.messages if m.role == "tool"]
    assert tool_messages and all(c.error is None for c in result.tool_calls)
    assert any("ZX9-4471" in (m.content or "") for m in tool_messages)
    assert {c.name for c in result.tool_calls} == {"order_lookup"}
    assert "ZX9-4471" in result.messages[-1].content
