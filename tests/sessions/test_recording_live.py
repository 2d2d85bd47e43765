"""A recording in live mode (``AGENTNB_REPLAY=live`` or ``mode="live"``): every turn calls the
model and is written as it ends, so the notebook re-runs offline under strict replay."""

from __future__ import annotations

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, JSONSession, ScriptedModel, Team
from agentnb.errors import ReplayDriftError
from agentnb.history.render import turn_text
from agentnb.models import OpenAIChat
from agentnb.sessions.recording import REPLAY_ENV

MESSAGES = ("Add milk.", "Add eggs.", "What is on the list?")


def add_item(item: str, session_state) -> str:
    """Add an item to the list."""
    session_state["items"].append(item)
    return f"added {item}"


def notebook(url: str, folder, mode: str | None) -> Agent:
    """The notebook's code: one agent, three turns, recorded beside the notebook."""
    agent = Agent(
        "shop",
        OpenAIChat("tiny", base_url=url, stream=False),
        instructions="Keep the list.",
        tools=[add_item],
        session_state={"items": []},
        add_history_to_context=True,
    )
    agent.attach_recording(folder, mode=mode)
    for message in MESSAGES:
        agent.run(message)
    return agent


def script(server: OpenAIServer, usage: tuple[int, int] = (21, 9)) -> None:
    server.add(
        Reply(tool_calls=[("add_item", {"item": "milk"})], usage=usage),
        Reply(text="Milk added.", usage=usage),
        Reply(tool_calls=[("add_item", {"item": "eggs"})], usage=usage),
        Reply(text="Eggs added.", usage=usage),
        Reply(text="Milk and eggs.", usage=usage),
    )


def saved_messages(folder, name: str = "shop", module: str = "agent") -> list[str]:
    saved = Agent(name, ScriptedModel([]), session_state={"items": []})
    assert JSONSession(folder).load_session_state_sync(name, **{module: saved})
    return [t.message for t in saved.history]


def test_live_mode_writes_each_turn_as_it_ends(server, tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    script(server)
    agent = Agent(
        "shop",
        OpenAIChat("tiny", base_url=server.url, stream=False),
        tools=[add_item],
        session_state={"items": []},
    )
    agent.attach_recording(tmp_path, mode="live")
    agent.run(MESSAGES[0])
    assert saved_messages(tmp_path) == [MESSAGES[0]]  # on disk before the next turn starts
    agent.run(MESSAGES[1])
    assert saved_messages(tmp_path) == list(MESSAGES[:2])


def test_a_notebook_recorded_live_replays_offline_under_strict_replay(server, tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    script(server)
    recorded = notebook(server.url, tmp_path, "live")
    assert len(server.requests) == 5
    assert saved_messages(tmp_path) == list(MESSAGES)

    url = server.url
    server.__exit__(None, None, None)  # no server from here: a model call could not be answered
    monkeypatch.setenv(REPLAY_ENV, "strict")
    again = notebook(url, tmp_path, None)
    assert [t.replayed for t in again.history] == [True, True, True]
    assert [turn_text(t) for t in again.history] == [turn_text(t) for t in recorded.history]
    assert again.session_state == {"items": ["milk", "eggs"]}  # the tools ran again
    assert len(server.requests) == 5


def test_live_mode_replaces_an_older_recording_from_the_first_turn(server, tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    answers = ("Noted.", "Noted too.", "Nothing yet.")
    server.add(*(Reply(text=a) for a in answers))
    notebook(server.url, tmp_path, None)
    server.add(*(Reply(text=a, usage=(50, 7)) for a in answers))  # the same answers, counted otherwise
    monkeypatch.setenv(REPLAY_ENV, "live")  # as a notebook sets it to re-record against the model
    again = notebook(server.url, tmp_path, None)
    assert len(server.requests) == 6  # every call went to the model, though the recording held it
    assert not any(t.replayed for t in again.history)
    saved = Agent("shop", ScriptedModel([]), session_state={"items": []})
    JSONSession(tmp_path).load_session_state_sync("shop", agent=saved)
    assert [(t.usage.input_tokens, t.usage.output_tokens) for t in saved.history] == [(50, 7)] * 3


def test_a_team_recorded_live_writes_every_member_and_replays_strictly(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def build(lead: str, member: str, mode: str | None) -> Team:
        helper = Agent("helper", OpenAIChat("tiny", base_url=member, stream=False), instructions="Help.")
        team = Team("crew", members=[helper], model=OpenAIChat("tiny", base_url=lead, stream=False))
        team.attach_recording(tmp_path, "nb", mode=mode)
        return team

    with OpenAIServer() as lead, OpenAIServer() as member:
        for n in (1, 2):
            lead.add(
                Reply(tool_calls=[("delegate_task_to_member", {"member_id": "helper", "task": f"task {n}"})]),
                Reply(text=f"done {n}"),
            )
            member.add(Reply(text=f"helped {n}"))
        team = build(lead.url, member.url, "live")
        team.run("first")
        team.run("second")
        urls = lead.url, member.url
    assert saved_messages(tmp_path, "nb") == ["first", "second"]
    assert saved_messages(tmp_path, "nb", "agent/helper") == ["task 1", "task 2"]

    monkeypatch.setenv(REPLAY_ENV, "strict")
    again = build(*urls, None)
    again.run("first")
    again.run("second")
    assert [turn_text(t) for t in again.history] == [turn_text(t) for t in team.history]
    with pytest.raises(ReplayDriftError, match="past the end of the recording"):
        again.run("third")
