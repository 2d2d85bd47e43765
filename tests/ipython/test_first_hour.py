"""What a new user meets outside the Makefile: a missing extra named, a fork recorded beside
its parent, session files with one mode, and a recording folder that says what not to commit."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, JSONSession, ScriptedModel, tool_call
from agentnb.errors import ConfigurationError, MissingExtraError
from agentnb.models import OpenAIChat
from agentnb.sessions.recording import REPLAY_ENV


def add_item(item: str, session_state) -> str:
    """Add an item to the list."""
    session_state["items"].append(item)
    return f"added {item}"


def shop(model=None) -> Agent:
    model = model or ScriptedModel(
        [tool_call("add_item", item="milk"), "Added.", "Nothing.", "Fork says hi."]
    )
    return Agent("shop", model, tools=[add_item], session_state={"items": []})


# -- a missing extra names the extra ----------------------------------------------------------


def test_an_openai_model_without_the_openai_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # what find_spec and import see when it is not installed
    with pytest.raises(MissingExtraError) as info:
        Agent("a", "openai:gpt-5-mini")
    assert str(info.value) == (
        "model 'openai:gpt-5-mini' needs the 'openai' extra (openai is not installed): "
        'pip install "jupyter-agentnb[openai]" and restart the kernel'
    )
    assert isinstance(info.value, ImportError) and isinstance(info.value, ConfigurationError)
    model = OpenAIChat("tiny", base_url="http://127.0.0.1:9/v1")  # made fine; running it says what is missing
    agent = Agent("b", model)
    with pytest.raises(Exception) as ran:
        agent.run("hi")
    assert 'pip install "jupyter-agentnb[openai]"' in str(ran.value)


def test_the_openai_default_from_the_environment_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(MissingExtraError, match=r'pip install "jupyter-agentnb\[openai\]"'):
        Agent("a")


def test_mcp_and_the_notebook_layer_name_their_extras():
    # In a child: hiding a module must not disturb this process's imports.
    code = (
        "import sys\n"
        "sys.modules['mcp'] = None; sys.modules['anywidget'] = None\n"
        "for load in (lambda: __import__('agentnb.mcp'), lambda: __import__('agentnb').load_ipython_extension(None)):\n"
        "    try:\n"
        "        load()\n"
        "    except ImportError as exc:\n"
        "        print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    ).stdout.splitlines()
    assert out == [
        "MissingExtraError agentnb.mcp (MCP servers as tools and context) needs the 'mcp' extra (mcp is not installed): "
        'pip install "jupyter-agentnb[mcp]" and restart the kernel',
        "MissingExtraError %load_ext agentnb needs the 'notebook' extra (anywidget is not installed): "
        'pip install "jupyter-agentnb[notebook]" and restart the kernel',
    ]


# -- a fork made in Python is recorded beside its parent ---------------------------------------


def test_a_fork_made_in_python_is_recorded_beside_its_parent(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        server.add(
            Reply(tool_calls=[("add_item", {"item": "milk"})]), Reply(text="Added."), Reply(text="Fork here.")
        )
        parent = shop(OpenAIChat("tiny", base_url=server.url, stream=False))
        parent.attach_recording(tmp_path)
        parent.run("Add milk.")
        fork = parent.fork("shop_v2")
        assert fork.recording is not None and fork.recording.session_id == "shop_v2"
        assert fork.recording.session.save_dir == parent.recording.session.save_dir
        fork.run("Anything else?")
        assert len(server.requests) == 3
        saved = JSONSession(tmp_path).load_session_state_sync  # the fork's turns, under its own name
        again = shop(OpenAIChat("tiny", base_url=server.url, stream=False))
        again.name = "shop_v2"
        saved("shop_v2", agent=again)
        assert [t.message for t in again.history] == ["Add milk.", "Anything else?"]

        # Run again: the parent and its fork replay from the recording, no model call.
        parent2 = shop(OpenAIChat("tiny", base_url=server.url, stream=False))
        parent2.attach_recording(tmp_path)
        parent2.run("Add milk.")
        parent2.fork("shop_v2").run("Anything else?")
        assert len(server.requests) == 3
    unrecorded = shop()
    assert unrecorded.fork("x").recording is None  # nothing recorded, nothing attached


# -- session files: one mode, and what not to commit --------------------------------------------


def modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir() if p.is_file()}


def test_session_files_get_the_mode_open_gives_and_keep_a_mode_the_user_set(tmp_path):
    old = os.umask(0o027)
    try:
        session = JSONSession(tmp_path)
        agent = shop()
        agent.run("Add milk.")
        session.save_session_state_sync("s", agent=agent)
        agent.run("More?")
        session.append_session_state_sync("s", agent=agent)
    finally:
        os.umask(old)
    found = modes(tmp_path)
    # The snapshot (rewritten through a temporary file) and the log (appended to) alike.
    assert found["s.json"] == found["s.jsonl"] == 0o640, found  # 0o666 less the umask 0o027
    os.chmod(tmp_path / "s.json", 0o600)  # the user's choice survives a rewrite
    session.save_session_state_sync("s", agent=agent)
    assert modes(tmp_path)["s.json"] == 0o600


def test_a_recording_folder_ignores_its_lock_files_and_unfinished_writes(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    folder = tmp_path / "analysis.agentnb"
    agent = shop()
    agent.attach_recording(folder)
    agent.run("Add milk.")
    other = Agent("other", ScriptedModel(["ok"]))
    other.attach_recording(folder)
    other.attach_recording(folder)  # twice: no rule is repeated
    assert (folder / "shop.lock").exists()
    assert (folder / ".gitignore").read_text() == (
        "# agentnb: lock files and unfinished writes stay on this machine; commit the rest\n"
        "/shop.lock\n/.shop.*\n/other.lock\n/.other.*\n"
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (folder / ".shop.json.abc.tmp").write_text("half")
    listed = subprocess.run(
        ["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "analysis.agentnb/shop.json" in listed and "analysis.agentnb/.gitignore" in listed
    assert "shop.lock" not in listed and ".shop.json.abc.tmp" not in listed


def test_strict_replay_writes_no_ignore_rule(tmp_path, monkeypatch):
    monkeypatch.setenv(REPLAY_ENV, "strict")
    shop().attach_recording(tmp_path / "x.agentnb")
    assert not (tmp_path / "x.agentnb" / ".gitignore").exists()
