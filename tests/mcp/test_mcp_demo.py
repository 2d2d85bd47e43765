"""MCP tools and context against the demo server (tests/mcp_demo_server.py, the SDK's own server
class), over streamable HTTP on 127.0.0.1 and over stdio: results, failures, restarts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from agentnb import Agent, ScriptedModel, ToolResult, tool_call  # noqa: E402
from agentnb.errors import ConfigurationError  # noqa: E402
from agentnb.events import ToolCallFinished  # noqa: E402
from agentnb.mcp import (  # noqa: E402
    MCPContext,
    MCPDisconnectedError,
    MCPServerError,
    MCPStartError,
    MCPTimeoutError,
    MCPTools,
    servers,
)
from agentnb.mcp.spec import ServerSpec  # noqa: E402

SERVER = Path(__file__).parents[1] / "mcp_demo_server.py"


def start_http(port: int = 0) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.strip():
        proc.wait()
        pytest.fail(f"the demo MCP server did not start (exit code {proc.returncode})")
    return proc, int(line)


def stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()
    if proc.stdout:
        proc.stdout.close()


def alive(pid: int) -> bool:
    # A child of this process that exited stays a zombie until reaped: that is not alive.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture(scope="module")
def demo_url():
    proc, port = start_http()
    url = f"http://127.0.0.1:{port}/mcp"
    yield url
    MCPTools(url=url).close()
    stop(proc)


@pytest.fixture(scope="module")
def demo(demo_url):
    return MCPTools(url=demo_url, name="demo")


# -- specs and bad input (no server) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("python -m mcp_server_time", "time"),
        ("uvx mcp-server-fetch", "fetch"),
        ("npx -y @modelcontextprotocol/server-filesystem /tmp", "filesystem"),
        ("node build/weather-mcp.js", "weather"),
        (["/opt/bin/notes-server", "--db", "x.db"], "notes"),
    ],
)
def test_a_server_is_named_after_its_command(command, name):
    assert ServerSpec.build(command).default_name() == name


def test_python_means_this_interpreter_and_a_url_is_named_by_host():
    assert ServerSpec.build("python -m pkg").argv == (sys.executable, "-m", "pkg")
    assert ServerSpec.build(url="http://127.0.0.1:8123/mcp").default_name() == "127.0.0.1:8123"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "either command= "),
        ({"command": "x", "url": "http://h/mcp"}, "either command= "),
        ({"command": "  "}, "command is empty"),
        ({"url": "ftp://h/mcp"}, "url must be an http:// or https:// address"),
        ({"url": "http://h/mcp", "env": {"A": "1"}}, "env= and cwd= apply to a command"),
        ({"command": "x", "env": {"A": 1}}, "env must map names to strings"),
        ({"command": "x", "prefix": "my-prefix"}, "prefix must be letters"),
        ({"command": "x", "timeout": 0}, "timeout must be a number of seconds > 0"),
        ({"command": "x", "include_tools": "add"}, "include_tools must be a list of tool names"),
    ],
)
def test_bad_options_are_one_clear_error(kwargs, message):
    with pytest.raises(ConfigurationError, match=message):
        MCPTools(**kwargs)


# -- tools over streamable HTTP ----------------------------------------------------------------


def test_tools_over_http_with_names_made_callable(demo):
    tools = {t.name: t for t in demo.tools}
    assert {"add", "word_count", "fail", "crash", "hang", "picture", "search_notes", "pid"} == set(tools)
    assert tools["word_count"].remote_name == "word-count" and tools["word_count"].source == "mcp:demo"
    assert tools["word_count"](text="one two three") == {"result": "3 words"}
    assert tools["add"](a=2, b=40) == {"result": 42}


def test_the_server_instructions_go_into_the_system_prompt_once(demo_url):
    kit = MCPTools(url=demo_url, add_instructions=True, include_tools=["add", "pid"])
    system_prompt = Agent(model=ScriptedModel(), tools=[kit]).observe("hi").system_prompt
    assert system_prompt.count("A demo server for agentnb's tests.") == 1
    assert (
        "A demo server"
        not in Agent(model=ScriptedModel(), tools=[MCPTools(url=demo_url)]).observe("hi").system_prompt
    )


def test_an_image_result_is_its_text_and_the_image_itself(demo):
    result = demo.call("picture")
    assert isinstance(result, ToolResult)
    caption, image = result.content
    assert caption == "a red dot"
    assert (image.data, image.media_type) == (b"\x89PNG\r\n\x1a\n", "image/png")


def test_a_call_past_its_timeout_is_cancelled_and_the_server_keeps_serving(demo_url, demo):
    impatient = MCPTools(url=demo_url, timeout=0.3)
    assert impatient.connection is demo.connection
    with pytest.raises(MCPTimeoutError) as info:
        impatient.call("hang", {"seconds": 30})
    assert str(info.value) == (
        "MCP server 'demo': the call to tool 'hang' did not answer within 0.3 s and was cancelled "
        "(give a longer timeout= if it needs more time)"
    )
    assert demo.call("add", {"a": 1, "b": 1}) == {"result": 2}
    assert demo.status().state == "running"


def test_an_image_result_reaches_the_model_as_an_image(demo):
    model = ScriptedModel([tool_call("picture"), "A red dot."])
    result = Agent(model=model, tools=[demo]).run("Show me.")
    (finished,) = [e for e in result.events if isinstance(e, ToolCallFinished)]
    assert finished.result == "a red dot"
    assert finished.attachments[0]["media_type"] == "image/png" and finished.attachments[0]["size"] == 8
    tool_message = model.requests[1].messages[-1]
    assert [item["type"] for item in tool_message["content"]] == ["text", "image_url"]
    assert model.requests[1].parts[finished.attachments[0]["sha256"]].data == b"\x89PNG\r\n\x1a\n"


def test_an_error_result_reaches_the_model_and_the_run_goes_on(demo):
    model = ScriptedModel([tool_call("fail", reason="the disk is full"), "Sorry."])
    result = Agent(model=model, tools=[demo]).run("Save it.")
    (finished,) = [e for e in result.events if isinstance(e, ToolCallFinished)]
    assert finished.error_kind == "tool_error"
    assert finished.result == (
        "Error: MCP server 'demo': tool 'fail' reported an error: Error executing tool fail: the disk is full "
        "(MCPToolError raised by tool 'fail')"
    )
    assert result.content == "Sorry."


def test_a_server_crash_mid_call_is_that_call_error_and_the_next_use_reconnects():
    proc, port = start_http()
    url = f"http://127.0.0.1:{port}/mcp"
    kit = MCPTools(url=url, name="fragile")
    try:
        model = ScriptedModel([tool_call("crash"), tool_call("add", a=1, b=2), "The server is gone."])
        result = Agent(model=model, tools=[kit]).run("Crash it.")
        crashed, unreachable = [e for e in result.events if isinstance(e, ToolCallFinished)]
        assert crashed.error_kind == "tool_error"
        assert crashed.error.startswith("MCP server 'fragile' stopped during the call to tool 'crash': ")
        assert "it is reconnected on next use" in crashed.error
        assert unreachable.error.startswith(f"MCP server 'fragile' ({url}) could not be reached: ")
        assert "MCPStartError" in unreachable.error
        assert result.content == "The server is gone."
        (status,) = [s for s in servers() if s.name == "fragile"]
        assert status.state == "failed" and "could not be reached" in status.error
        proc.wait()
        stop(proc)
        proc, _ = start_http(port)
        assert kit.call("add", {"a": 1, "b": 2}) == {"result": 3}
        assert kit.status().state == "running" and kit.status().error is None
    finally:
        kit.close()
        stop(proc)


# -- stdio: crash, restart, start failures, shutdown -----------------------------------------


def test_a_stdio_server_that_dies_mid_call_or_while_idle_is_restarted_on_next_use():
    kit = MCPTools([sys.executable, str(SERVER), "stdio"], name="demo-stdio")
    try:
        first_pid = kit.call("pid")["result"]
        with pytest.raises(MCPDisconnectedError) as info:
            kit.call("crash")
        message = str(info.value)
        assert message.startswith("MCP server 'demo-stdio' stopped during the call to tool 'crash': ")
        assert message.endswith(
            f"it is restarted on next use; stderr: demo server: pid {first_pid} | demo server: crashing on purpose"
        )
        assert kit.status().state == "failed"
        second_pid = kit.call("pid")["result"]
        assert second_pid != first_pid and not alive(first_pid)
        assert kit.status().state == "running" and kit.status().starts == 2

        os.kill(second_pid, signal.SIGKILL)
        for _ in range(200):  # until the end of its output has reached the session
            if kit.status().state == "failed":
                break
            time.sleep(0.05)
        assert kit.status().error == "the server closed the connection (its process exited?)"
        third_pid = kit.call("pid")["result"]
        assert third_pid not in (first_pid, second_pid) and kit.status().starts == 3
    finally:
        kit.close()
    assert not alive(third_pid) and kit.status().state == "stopped"


def test_a_command_that_does_not_start_says_why_with_its_stderr():
    script = (
        "import sys; print('reading config.toml', file=sys.stderr); sys.exit('config.toml: no such file')"
    )
    kit = MCPTools([sys.executable, "-c", script], name="broken")
    with pytest.raises(MCPStartError) as info:
        kit.tools  # noqa: B018  (reading .tools starts the server)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("MCP server 'broken' (")
    assert message.endswith(
        "did not start: it closed the connection before answering the handshake; "
        "stderr: reading config.toml | config.toml: no such file"
    )
    (status,) = [s for s in servers() if s.name == "broken"]
    assert status.state == "failed" and status.error == message
    assert status.stderr == "reading config.toml\nconfig.toml: no such file"
    with pytest.raises(
        MCPStartError, match=r"'nothing-here' \(agentnb-no-such-command\) did not start: command not found"
    ):
        MCPTools("agentnb-no-such-command", name="nothing-here").tools  # noqa: B018  (reading .tools starts the server)


def test_servers_are_stopped_at_interpreter_exit(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys
        from agentnb.mcp import MCPTools
        kit = MCPTools([sys.executable, {str(SERVER)!r}, "stdio"])
        kit.tools
        print(kit.status().stderr, flush=True)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("demo server: pid ")
    assert not alive(int(done.stdout.split()[-1]))


# -- MCP as context ----------------------------------------------------------------------------


def test_resources_as_passive_context_in_observe(demo):
    notes = MCPContext(demo, resources=["notes://alpha", "notes://beta", "notes://gamma"], top_k=1)
    observation = Agent(model=ScriptedModel(), context_providers=[notes]).observe("Where is the kettle?")
    assert observation.user_prompt.endswith(
        "[Context]\n(mcp:demo) Alpha: the kettle is in the left cupboard."
    )
    (retrieved,) = observation.context
    assert [b.source for b in retrieved.blocks] == ["notes://alpha"]
    assert retrieved.blocks[0].metadata == {"server": "demo", "name": "alpha", "mime_type": "text/plain"}


def test_all_resources_unranked_include_a_summary_of_binary_ones(demo):
    blocks = MCPContext(demo, rank=False).get_blocks("anything", top_k=0)
    assert [b.source for b in blocks] == ["notes://alpha", "notes://beta", "notes://gamma", "blobs://logo"]
    assert blocks[3].text == "[binary resource blobs://logo, image/png, 32 bytes]"


def test_an_unknown_resource_names_the_server_resources(demo):
    agent = Agent(model=ScriptedModel(), context_providers=[MCPContext(demo, resources=["notes://delta"])])
    with pytest.raises(
        Exception, match=r"has no resource\(s\) \['notes://delta'\]; its resources are \['blobs://logo', "
    ):
        agent.observe("hello")


def test_an_active_provider_is_searched_by_the_model_through_the_search_tool(demo_url):
    notes = MCPContext(demo_url, search_tool="search_notes", passive=False, active=True, label="notes")
    model = ScriptedModel(
        [tool_call("retrieve_context", source="notes", query="wifi password"), "On the fridge."]
    )
    agent = Agent(model=model, context_providers=[notes])
    assert {"list_context_sources", "retrieve_context"} <= {
        t["function"]["name"] for t in agent.observe("wifi?").tools
    }
    result = agent.run("What is the wifi password?")
    (finished,) = [e for e in result.events if isinstance(e, ToolCallFinished)]
    assert finished.error is None
    assert '"source": "notes://gamma"' in finished.result and "on the fridge" in finished.result
    assert result.content == "On the fridge."


def test_a_search_tool_the_server_lacks_is_named(demo):
    with pytest.raises(MCPServerError, match=r"has no tool 'find' for search_tool=; its tools are \['add', "):
        MCPContext(demo, search_tool="find").get_blocks("x")
