"""Agno's human-in-the-loop tests, ported to agentnb's API.

Peer files (agno-agi/agno, libs/agno/tests/integration/agent/human_in_the_loop/):
test_user_confirmation_flows.py, test_external_execution_flows.py, test_user_input_flows.py. The
peer's cases run a real model; here a ScriptedModel plays it, answering from the request as a
model would. Agno's names map to agentnb's: ``response.is_paused`` is ``result.is_paused``;
``response.tools`` / ``active_requirements`` are ``result.pending`` (each item with ``tool`` and
``arguments``); ``tool.confirmed = True`` / ``requirement.confirm()`` is ``item.approve()``;
``requirement.reject()`` is ``item.reject(why)``; an external tool's ``result = ...`` /
``set_external_execution_result`` is ``item.answer(...)``; a user-input field's ``value`` is
``item.approve(arguments=...)``; ``agent.continue_run(response)`` keeps its name, and
``continue_run(run_id=..., updated_tools=..., session_id=...)`` on a new agent is a new agent on
the same session whose ``pending`` items are decided, then ``continue_run()``.
"""

from __future__ import annotations

import asyncio

import pytest

from agentnb import Agent, ScriptedModel, tool, tool_call
from agentnb.errors import ContinueRunError
from agentnb.sessions import JSONSession

WEATHER = "It is currently 70 degrees and cloudy in {city}"


def model_asking(*first_calls, final=lambda results: "; ".join(results)) -> ScriptedModel:
    """A model that makes ``first_calls`` for the user's message, then answers with the results."""

    def answer(request):
        if request.messages[-1]["role"] != "tool":
            return list(first_calls)
        results = [m["content"] for m in request.messages if m["role"] == "tool"]
        return final(results)

    return ScriptedModel(answer)


@tool(requires_confirmation=True)
def get_the_weather(city: str) -> str:
    return WEATHER.format(city=city)


# test_user_confirmation_flows.py::test_tool_call_requires_confirmation (and
# ..._continue_with_run_response: continue_run(response))
def test_tool_call_requires_confirmation():
    agent = Agent(
        "a", model_asking(tool_call("get_the_weather", city="Tokyo")), tools=[get_the_weather], markdown=True
    )
    response = agent.run("What is the weather in Tokyo?")
    assert response.is_paused
    (item,) = response.pending
    assert (item.kind, item.tool, item.arguments) == ("approval", "get_the_weather", {"city": "Tokyo"})
    item.approve()
    response = agent.continue_run(response)
    assert response.is_paused is False
    assert response.tool_calls[0].result == WEATHER.format(city="Tokyo")


# test_user_confirmation_flows.py::test_tool_call_requires_confirmation_continue_with_run_id
def test_tool_call_requires_confirmation_continue_with_run_id(tmp_path):
    def make():
        return Agent(
            "a",
            model_asking(tool_call("get_the_weather", city="Tokyo")),
            tools=[get_the_weather],
            session=JSONSession(tmp_path),
            session_id="test_session_1",
        )

    response = make().run("What is the weather in Tokyo?")
    assert response.is_paused
    agent = make()  # a completely new agent instance, on the same session
    agent.pending[0].approve()
    response = agent.continue_run()
    assert response.is_paused is False
    assert response.tool_calls[0].result == WEATHER.format(city="Tokyo")


# test_user_confirmation_flows.py::test_tool_call_requires_confirmation_continue_with_run_id_stream
def test_tool_call_requires_confirmation_stream():
    agent = Agent("a", model_asking(tool_call("get_the_weather", city="Tokyo")), tools=[get_the_weather])
    kinds = [e.kind for e in agent.iter_run("What is the weather in Tokyo?")]
    assert kinds[-1] == "run_paused" and agent.is_paused
    assert agent.pending[0].arguments == {"city": "Tokyo"}
    agent.pending[0].approve()
    kinds = [e.kind for e in agent.iter_continue_run()]
    assert "run_paused" not in kinds and kinds[-1] == "run_finished"
    assert agent.history[-1].tool_calls[0].result == WEATHER.format(city="Tokyo")


# test_user_confirmation_flows.py::test_tool_call_requires_confirmation_async /
# ::test_async_confirmation
def test_tool_call_requires_confirmation_async():
    @tool(requires_confirmation=True)
    async def get_the_weather_async(city: str) -> str:
        return WEATHER.format(city=city)

    agent = Agent(
        "a", model_asking(tool_call("get_the_weather_async", city="Tokyo")), tools=[get_the_weather_async]
    )
    response = asyncio.run(agent.arun("What is the weather in Tokyo?"))
    assert response.is_paused and len(response.pending) == 1
    response.pending[0].approve()
    response = asyncio.run(agent.acontinue_run(response))
    assert response.is_paused is False
    assert response.tool_calls[0].result == WEATHER.format(city="Tokyo")


# test_user_confirmation_flows.py::test_tool_call_requires_confirmation_memory_footprint
def test_tool_call_requires_confirmation_memory_footprint(tmp_path):
    agent = Agent(
        "a",
        model_asking(tool_call("get_the_weather", city="Tokyo")),
        tools=[get_the_weather],
        markdown=True,
        session=JSONSession(tmp_path),
        session_id="test_session",
    )
    response = agent.run("What is the weather in Tokyo?")

    def stored_turns():
        stored = JSONSession(tmp_path).read_modules("a").modules["agent"]
        return stored["history"]["turns"]

    (turn,) = stored_turns()  # one run in the session
    assert [m["role"] for m in turn["messages"]] == ["system", "user", "assistant"]
    response.pending[0].approve()
    response = agent.continue_run(response)
    assert response.is_paused is False
    (turn,) = stored_turns()
    assert [m["role"] for m in turn["messages"]] == ["system", "user", "assistant", "tool", "assistant"]


# test_user_confirmation_flows.py::test_tool_call_multiple_requires_confirmation
def test_tool_call_multiple_requires_confirmation():
    ran = []

    def get_activities(city: str) -> str:
        ran.append(city)
        return f"The following activities are available in {city}: Shopping"

    agent = Agent(
        "a",
        model_asking(tool_call("get_the_weather", city="Tokyo"), tool_call("get_activities", city="Tokyo")),
        tools=[get_the_weather, get_activities],
    )
    response = agent.run("What is the weather in Tokyo and what are the activities?")
    assert response.is_paused
    assert [(i.tool, i.arguments) for i in response.pending] == [("get_the_weather", {"city": "Tokyo"})]
    assert ran == ["Tokyo"]  # the call that needs no confirmation ran (Agno waits with it)
    response.pending[0].approve()
    response = agent.continue_run(response)
    assert response.is_paused is False and response.content
    assert ran == ["Tokyo"]


# test_user_confirmation_flows.py::test_run_requirement_rejection: the tool did not run
def test_run_requirement_rejection():
    ran = []

    @tool(requires_confirmation=True)
    def weather(city: str) -> str:
        ran.append(city)
        return WEATHER.format(city=city)

    agent = Agent("a", model_asking(tool_call("weather", city="Tokyo")), tools=[weather])
    response = agent.run("What is the weather in Tokyo?")
    response.pending[0].reject("not now")
    response = agent.continue_run(response)
    assert ran == [] and response.tool_calls[0].decision == "rejected"
    assert response.is_paused is False


@pytest.mark.xfail(strict=True, reason="deliberate: a rejection carries the reason the model reads")
# test_user_confirmation_flows.py::test_run_requirement_rejection (requirement.reject() with no reason)
def test_run_requirement_rejection_without_a_reason():
    agent = Agent("a", model_asking(tool_call("get_the_weather", city="Tokyo")), tools=[get_the_weather])
    agent.run("What is the weather in Tokyo?").pending[0].reject()  # type: ignore[call-arg]


# test_external_execution_flows.py::test_tool_call_requires_external_execution (and
# ::test_run_requirement_external_execution)
def test_tool_call_requires_external_execution():
    @tool(external_execution=True)
    def send_email(to: str, subject: str, body: str) -> None:
        raise AssertionError("executed outside")

    agent = Agent(
        "a",
        model_asking(tool_call("send_email", to="john@doe.com", subject="Test", body="Hello, how are you?")),
        tools=[send_email],
        markdown=True,
    )
    response = agent.run(
        "Send an email to john@doe.com with the subject 'Test' and the body 'Hello, how are you?'"
    )
    assert response.is_paused
    (item,) = response.pending
    assert item.kind == "external" and item.tool == "send_email"
    assert item.arguments == {"to": "john@doe.com", "subject": "Test", "body": "Hello, how are you?"}
    result = f"Email sent to {item.arguments['to']} with subject {item.arguments['subject']}"
    item.answer(result)
    response = agent.continue_run(response)
    assert response.is_paused is False and response.tool_calls[0].result == result


# test_external_execution_flows.py::test_tool_call_requires_external_execution_error: continuing
# without the result is refused (Agno raises ValueError; agentnb ContinueRunError, naming the item)
def test_tool_call_requires_external_execution_error():
    @tool(external_execution=True)
    def send_email(to: str, subject: str, body: str) -> None:
        raise AssertionError("executed outside")

    agent = Agent(
        "a", model_asking(tool_call("send_email", to="j@d.com", subject="T", body="B")), tools=[send_email]
    )
    response = agent.run("Send an email")
    with pytest.raises(ContinueRunError, match=r"still waits for 1 decision.*external.*send_email"):
        agent.continue_run(response)


# test_external_execution_flows.py::test_run_requirement_external_execution_with_entrypoint
def test_external_execution_with_the_tools_own_function():
    @tool(external_execution=True)
    def execute_shell_command(command: str) -> str:
        """Execute a shell command (only echo is supported for testing)."""
        return command.replace("echo ", "") if command.startswith("echo") else f"Executed: {command}"

    agent = Agent(
        "a",
        model_asking(tool_call("execute_shell_command", command="echo Hello World")),
        tools=[execute_shell_command],
    )
    response = agent.run("Run the command 'echo Hello World'")
    (item,) = response.pending
    item.answer(execute_shell_command(**item.arguments))  # run by the person, where they choose
    response = agent.continue_run(response)
    assert "Hello World" in response.tool_calls[0].result


# test_user_input_flows.py::test_tool_call_requires_user_input_specific_fields (and
# ::test_run_requirement_user_input_multiple_fields): the person gives the fields' values
def test_tool_call_requires_user_input_specific_fields():
    @tool(requires_user_input=True, user_input_fields=["temperature"])
    def get_the_weather_for(city: str, temperature: int) -> str:
        return f"It is currently {temperature} degrees and cloudy in {city}"

    agent = Agent(
        "a",
        model_asking(tool_call("get_the_weather_for", city="Tokyo", temperature=0)),
        tools=[get_the_weather_for],
    )
    response = agent.run("What is the weather in Tokyo?")
    assert response.is_paused
    (item,) = response.pending
    assert item.tool == "get_the_weather_for" and "temperature" in item.reason
    item.approve(arguments={**item.arguments, "temperature": 70})
    response = agent.continue_run(response)
    assert response.is_paused is False
    assert response.tool_calls[0].result == "It is currently 70 degrees and cloudy in Tokyo"
