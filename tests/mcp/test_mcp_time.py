"""MCPTools over stdio against the published ``mcp-server-time`` package: a real server process."""

from __future__ import annotations

import asyncio
import datetime
import json

import pytest

pytest.importorskip("mcp")
pytest.importorskip("mcp_server_time")

from agentnb import Agent, ScriptedModel, Toolkit, tool_call  # noqa: E402
from agentnb.errors import ToolDefinitionError  # noqa: E402
from agentnb.events import ToolCallFinished  # noqa: E402
from agentnb.mcp import MCPTool, MCPToolError, MCPTools, servers  # noqa: E402

COMMAND = "python -m mcp_server_time"


@pytest.fixture(scope="module")
def time_kit():
    kit = MCPTools(COMMAND)
    yield kit
    kit.close()


def test_the_server_tools_keep_their_schema_description_and_origin(time_kit):
    tools = {t.name: t for t in time_kit.tools}
    assert set(tools) == {"get_current_time", "convert_time"}
    current = tools["get_current_time"]
    assert isinstance(time_kit, Toolkit) and isinstance(current, MCPTool)
    assert current.description.startswith("Get current time")
    assert current.parameters["required"] == ["timezone"]
    assert current.parameters["properties"]["timezone"]["type"] == "string"
    assert tools["convert_time"].parameters["required"] == ["source_timezone", "time", "target_timezone"]
    assert (current.server, current.source, current.remote_name) == ("time", "mcp:time", "get_current_time")
    # The schema sent to the model is the server's own.
    assert current.schema()["function"]["parameters"] is current.parameters


def test_a_call_returns_the_structured_content(time_kit):
    current = next(t for t in time_kit.tools if t.name == "get_current_time")
    result = current(timezone="Asia/Tokyo")
    assert result["timezone"] == "Asia/Tokyo"
    stamp = datetime.datetime.fromisoformat(result["datetime"])
    assert stamp.utcoffset() == datetime.timedelta(hours=9)


def test_a_tool_error_is_raised_as_one_line(time_kit):
    with pytest.raises(MCPToolError) as info:
        time_kit.call("get_current_time", {"timezone": "Mars/Olympus_Mons"})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("MCP server 'time': tool 'get_current_time' reported an error:")
    assert "Mars/Olympus_Mons" in message


def test_include_exclude_and_prefix(time_kit):
    only = MCPTools(COMMAND, include_tools=["convert_time"])
    assert [t.name for t in only.tools] == ["convert_time"]
    without = MCPTools(COMMAND, exclude_tools=["convert_time"])
    assert [t.name for t in without.tools] == ["get_current_time"]
    prefixed = MCPTools(COMMAND, prefix="clock", include_tools=["clock_get_current_time"])
    (made,) = prefixed.tools
    assert (made.name, made.remote_name) == ("clock_get_current_time", "get_current_time")
    assert made(timezone="UTC")["timezone"] == "UTC"
    # Every MCPTools of one command shares one server.
    assert only.connection is without.connection is prefixed.connection is time_kit.connection
    assert [s.name for s in servers()].count("time") == 1


def test_an_unknown_tool_name_in_a_filter_names_the_server_tools():
    with pytest.raises(ToolDefinitionError) as info:
        MCPTools(COMMAND, include_tools=["get_time"]).tools  # noqa: B018  (reading .tools starts the server)
    assert str(info.value) == (
        "include_tools names ['get_time'], which MCP server 'time' does not have; "
        "its tools are ['convert_time', 'get_current_time']"
    )
    with pytest.raises(ToolDefinitionError, match=r"exclude_tools names \['nope'\]"):
        MCPTools(COMMAND, exclude_tools=["nope"]).tools  # noqa: B018  (reading .tools starts the server)


def test_servers_lists_the_running_server(time_kit):
    time_kit.tools  # noqa: B018  (reading .tools starts the server)
    (status,) = [s for s in servers() if s.name == "time"]
    assert status.state == "running" and status.error is None
    assert status.transport == "stdio" and status.target.endswith("-m mcp_server_time")
    assert status.tools == ("get_current_time", "convert_time")
    assert status.server.startswith("mcp-time ")
    assert json.loads(json.dumps(status.to_dict()))["state"] == "running"


def test_observe_offers_the_server_tools_to_the_model(time_kit):
    agent = Agent(model=ScriptedModel(), tools=[time_kit], instructions="Tell the time.")
    sent = {t["function"]["name"]: t["function"] for t in agent.observe("What time is it in Paris?").tools}
    assert set(sent) == {"get_current_time", "convert_time"}
    assert sent["get_current_time"]["parameters"]["required"] == ["timezone"]


def test_a_full_run_calls_the_server_through_hooks_and_validation(time_kit):
    seen: list[tuple[str, dict]] = []

    def audit(function_name, arguments, function_call):
        seen.append((function_name, dict(arguments)))
        return function_call(**arguments)

    model = ScriptedModel(
        [
            [tool_call("get_current_time", timezone="Europe/Paris"), tool_call("get_current_time")],
            tool_call("get_current_time", timezone="Nowhere/Atlantis"),
            "It is evening in Paris.",
        ]
    )
    agent = Agent(model=model, tools=[time_kit], tool_hooks=[audit])
    calls_before = time_kit.status().calls
    result = agent.run("What time is it in Paris?")
    assert result.content == "It is evening in Paris."
    finished = [e for e in result.events if isinstance(e, ToolCallFinished)]
    paris, missing, atlantis = finished
    assert paris.error is None and json.loads(paris.result)["timezone"] == "Europe/Paris"
    assert paris.hooks[0].name == "audit" and paris.answered_by == "tool"
    # Validated against the server's schema before anything is sent to the server.
    assert missing.error_kind == "invalid_arguments" and "timezone" in missing.error
    # The server's error becomes that call's error result; the run goes on.
    assert atlantis.error_kind == "tool_error"
    assert "Nowhere/Atlantis" in atlantis.result and "MCPToolError" in atlantis.result
    assert seen == [
        ("get_current_time", {"timezone": "Europe/Paris"}),
        ("get_current_time", {"timezone": "Nowhere/Atlantis"}),
    ]
    assert time_kit.status().calls == calls_before + 2


def test_a_sync_call_works_inside_a_running_event_loop(time_kit):
    # A Jupyter kernel runs cells inside its own event loop; the MCP session lives on another.
    async def cell() -> str:
        agent = Agent(
            model=ScriptedModel([tool_call("get_current_time", timezone="UTC"), "Done."]), tools=[time_kit]
        )
        result = agent.run("What time is it?")
        (finished,) = [e for e in result.events if isinstance(e, ToolCallFinished)]
        return finished.result

    assert json.loads(asyncio.run(cell()))["timezone"] == "UTC"
