"""MCP in a recorded notebook: a turn replays without the server (its tool list and results are
part of the recording), `%%agent --mcp` and `%agentnb mcp` through a real shell."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp")
pytest.importorskip("mcp_server_time")

from IPython.utils.capture import capture_output  # noqa: E402

import agentnb  # noqa: E402
from agentnb import Agent, ScriptedModel, tool_call  # noqa: E402
from agentnb.mcp import MCPTools, close_all, servers  # noqa: E402
from agentnb.sessions.recording import REPLAY_ENV  # noqa: E402

COMMAND = "python -m mcp_server_time"


def state_of(name: str) -> str:
    return next(s.state for s in servers() if s.name == name)


def script() -> ScriptedModel:
    return ScriptedModel([tool_call("get_current_time", timezone="UTC"), "It is late."])


def test_a_recorded_mcp_turn_replays_with_the_server_stopped(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    kit = MCPTools(COMMAND)
    recorder = Agent("clock", script(), tools=[kit])
    recorder.attach_recording(tmp_path)
    first = recorder.run("What time is it?").tool_calls[0]
    assert first.source == "mcp:time" and not first.replayed and '"timezone": "UTC"' in first.result
    listing = kit.listing()
    close_all()
    assert state_of("time") != "running"

    again = Agent("clock", script(), tools=[MCPTools(COMMAND, listing=listing)])
    assert state_of("time") != "running"  # the tools were offered from the recorded list
    again.attach_recording(tmp_path)
    replayed = again.run("What time is it?").tool_calls[0]
    assert state_of("time") != "running"  # and the result came from the recording
    assert replayed.replayed and replayed.result == first.result and replayed.source == "mcp:time"
    assert again.history[0].duration_ms == recorder.history[0].duration_ms

    live = Agent(
        "clock",
        ScriptedModel([tool_call("get_current_time", timezone="Europe/Paris"), "Late in Paris."]),
        tools=[MCPTools(COMMAND, listing=listing)],
    )
    live.attach_recording(tmp_path)
    call = live.run("What time is it in Paris?").tool_calls[0]  # edited: the tool is called for real
    assert not call.replayed and '"timezone": "Europe/Paris"' in call.result
    assert state_of("time") == "running"


def test_agent_magic_mcp_option_lists_tools_once_and_replays_without_the_server(shell, tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    (tmp_path / "clock.ipynb").write_text("{}")
    ip = shell

    def define_and_chat() -> str:
        agentnb.load_ipython_extension(ip)  # a new workspace, as after a restart
        ip.user_ns["model"] = script()
        with capture_output() as out:
            ip.run_cell_magic("agent", f'clock --model model --mcp "{COMMAND}"', "Tell the time.")
            ip.run_cell_magic("chat", "clock", "What time is it?")
        return out.stdout + out.outputs[-1].data["text/plain"]

    close_all()
    first = define_and_chat()
    assert "tools=[get_current_time, convert_time]" in first
    listing = json.loads((tmp_path / "clock.agentnb" / "clock.mcp.json").read_text())
    assert [t["name"] for t in listing[COMMAND]] == ["get_current_time", "convert_time"]
    with capture_output() as out:
        ip.run_line_magic("agentnb", "mcp")
    (line,) = [line for line in out.stdout.splitlines() if line.startswith("time: ")]
    assert line.startswith("time: running; stdio ") and line.endswith("tools: get_current_time, convert_time")
    close_all()
    again = define_and_chat()
    assert state_of("time") != "running"  # nothing needed the server
    assert again == first  # the same outputs, the record included
    assert "get_current_time [mcp:time]" in again


def test_a_bad_mcp_option_is_one_line(shell):
    ip = shell
    ip.user_ns["model"] = script()
    from IPython.core.error import UsageError

    with pytest.raises(UsageError) as info, capture_output():
        ip.run_cell_magic(
            "agent",
            "broken --model model --no-session --mcp \"python -c 'import sys; sys.exit(3)'\"",
            "x",
        )
    assert "\n" not in str(info.value) and str(info.value).startswith("%%agent broken:")
