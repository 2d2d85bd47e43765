"""The recording beside a notebook: unchanged turns replay, an edited turn goes live and
re-records from there (or fails with a diff in strict mode), new turns are appended."""

from __future__ import annotations

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, JSONSession, ScriptedModel, Team, tool_call
from agentnb.errors import ReplayDriftError
from agentnb.models import OpenAIChat
from agentnb.sessions.recording import REPLAY_ENV, replay_mode


def add_item(item: str, session_state) -> str:
    """Add an item to the list."""
    session_state["items"].append(item)
    return f"added {item}"


def server_agent(url: str, **options) -> Agent:
    model = OpenAIChat("tiny", base_url=url, stream=False)
    return Agent(
        "shop",
        model,
        instructions="Keep the list.",
        tools=[add_item],
        session_state={"items": []},
        add_history_to_context=True,
        num_history_runs=None,
        **options,
    )


def record_two_turns(server: OpenAIServer, folder) -> Agent:
    server.add(
        Reply(tool_calls=[("add_item", {"item": "milk"})]),
        Reply(text="Milk added."),
        Reply(text="That is all."),
    )
    agent = server_agent(server.url)
    agent.attach_recording(folder)
    agent.run("Add milk.")
    agent.run("Anything else?")
    return agent


def test_an_unchanged_rerun_makes_no_model_call_and_shows_the_recorded_turns(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        first = record_two_turns(server, tmp_path)
        assert len(server.requests) == 3
        files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

        again = server_agent(server.url)
        recording = again.attach_recording(tmp_path)
        again.run("Add milk.")
        again.run("Anything else?")
        assert len(server.requests) == 3  # nothing asked: every answer came from the recording
    assert recording.replayed == 3 and recording.cut is None
    assert again.session_state == {"items": ["milk"]}  # the tool ran again
    assert [t.replayed for t in again.history] == [True, True]
    assert [t.duration_ms for t in again.history] == [t.duration_ms for t in first.history]
    assert again.history.turns().equals(first.history.turns())
    assert again.history.tool_calls().equals(first.history.tool_calls())
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files  # nothing written


def test_an_edited_turn_calls_the_model_and_re_records_from_there(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        record_two_turns(server, tmp_path)
        server.add(Reply(text="Bread is not on the list."))
        again = server_agent(server.url)
        again.attach_recording(tmp_path)
        again.run("Add milk.")
        again.run("Is bread on the list?")  # edited: goes live
        assert len(server.requests) == 4
        assert server.requests[-1].body["messages"][-1] == {
            "role": "user",
            "content": "Is bread on the list?",
        }
    saved = Agent("shop", ScriptedModel([]), session_state={"items": []})
    JSONSession(tmp_path).load_session_state_sync("shop", agent=saved)
    assert [t.message for t in saved.history] == ["Add milk.", "Is bread on the list?"]
    assert saved.history[1].content == "Bread is not on the list."


def test_strict_replay_fails_an_edited_turn_with_a_diff_naming_turn_and_call(tmp_path, monkeypatch):
    with OpenAIServer() as server:
        record_two_turns(server, tmp_path)
        monkeypatch.setenv(REPLAY_ENV, "strict")
        again = server_agent(server.url)
        again.attach_recording(tmp_path)
        again.run("Add milk.")
        with pytest.raises(ReplayDriftError) as info:
            again.run("Is bread on the list?")
        assert len(server.requests) == 3
    head, _, diff = str(info.value).partition("\n")
    assert head.startswith(
        "replay drift at turn 2, model call 1: the request differs from the recording (messages[5] (user) changed)"
    )
    assert "strict replay (AGENTNB_REPLAY=strict) does not call openai:tiny" in head
    assert (
        '-      "content": "Anything else?"' in diff and '+      "content": "Is bread on the list?"' in diff
    )
    assert len(diff.splitlines()) <= 25
    files_before = sorted(p.name for p in tmp_path.iterdir())
    assert again.history[1].status == "failed" and sorted(p.name for p in tmp_path.iterdir()) == files_before


def test_without_a_key_a_replay_works_and_a_drift_fails_instead_of_calling(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:  # recorded against a server that speaks for gpt-5-mini
        server.add(Reply(text="Hello!"))
        recorder = Agent("shop", OpenAIChat("gpt-5-mini", base_url=server.url))
        recorder.attach_recording(tmp_path)
        recorder.run("hello")
    agent = Agent("shop", "openai:gpt-5-mini")  # no key, no server: replay only
    agent.attach_recording(tmp_path)
    assert agent.run("hello").content == "Hello!"
    edited = Agent("shop", "openai:gpt-5-mini")
    edited.attach_recording(tmp_path)
    with pytest.raises(
        ReplayDriftError,
        match=r"openai:gpt-5-mini cannot be called here \(no OpenAI API key: set OPENAI_API_KEY\)",
    ):
        edited.run("hello there")


def test_turns_past_the_end_are_appended(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        record_two_turns(server, tmp_path)
        server.add(Reply(text="Done."))
        again = server_agent(server.url)
        again.attach_recording(tmp_path)
        for message in ("Add milk.", "Anything else?", "Thanks."):
            again.run(message)
        assert len(server.requests) == 4
    saved = Agent("shop", ScriptedModel([]), session_state={"items": []})
    JSONSession(tmp_path).load_session_state_sync("shop", agent=saved)
    assert [t.message for t in saved.history] == ["Add milk.", "Anything else?", "Thanks."]


def test_strict_replay_past_the_end_fails_for_a_model_outside_the_process(tmp_path, monkeypatch):
    with OpenAIServer() as server:
        record_two_turns(server, tmp_path)
        monkeypatch.setenv(REPLAY_ENV, "strict")
        again = server_agent(server.url)
        again.attach_recording(tmp_path)
        again.run("Add milk.")
        again.run("Anything else?")
        with pytest.raises(
            ReplayDriftError, match=r"turn 3 is past the end of the recording .* \(it holds 2 turn\(s\)\)"
        ):
            again.run("Thanks.")
        assert len(server.requests) == 3


def test_a_scripted_model_always_answers_and_keeps_recorded_timings_when_it_matches(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def make() -> tuple[Agent, ScriptedModel]:
        model = ScriptedModel([tool_call("add_item", item="tea"), "Tea added."])
        return Agent("shop", model, tools=[add_item], session_state={"items": []}), model

    first, _ = make()
    first.attach_recording(tmp_path)
    first.run("Add tea.")
    again, model = make()
    again.attach_recording(tmp_path)
    again.run("Add tea.")
    assert len(model.requests) == 2  # Python answers, like a tool: editing the script takes effect
    assert again.history[0].replayed is False
    assert again.history[0].duration_ms == first.history[0].duration_ms
    calls = again.history[0].tool_calls
    assert [c.duration_ms for c in calls] == [c.duration_ms for c in first.history[0].tool_calls]

    edited = Agent(
        "shop",
        ScriptedModel([tool_call("add_item", item="tea"), "Tea is on the list."]),
        tools=[add_item],
        session_state={"items": []},
    )
    recording = edited.attach_recording(tmp_path)
    edited.run("Add tea.")
    assert recording.cut == 0  # the answer changed: the recording is replaced from this turn
    saved = Agent("shop", ScriptedModel([]), session_state={"items": []})
    JSONSession(tmp_path).load_session_state_sync("shop", agent=saved)
    assert saved.history[0].content == "Tea is on the list."


def test_resume_takes_over_the_recording(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        record_two_turns(server, tmp_path)
        again = server_agent(server.url)
        again.attach_recording(tmp_path)
        assert again.resume() == 2
        assert again.session_state == {"items": ["milk"]}
        assert [m.role for m in again.state.messages] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "system",
            "user",
            "assistant",
        ]
        server.add(Reply(text="Bye."))
        again.run("Bye.")
        assert server.requests[-1].body["messages"][-1]["content"] == "Bye."
        assert len(server.requests) == 4


def test_replay_mode_is_read_from_the_environment():
    assert replay_mode({}) == "auto" and replay_mode({REPLAY_ENV: "Strict"}) == "strict"
    with pytest.raises(
        ValueError, match="AGENTNB_REPLAY='sometimes' is not a replay mode; use one of auto, strict, live"
    ):
        replay_mode({REPLAY_ENV: "sometimes"})


def test_a_fork_replays_as_its_parent_does(tmp_path, monkeypatch):
    """A fork is recorded beside its parent in the parent's replay mode, not the environment's."""
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        record_two_turns(server, tmp_path)
        strict = server_agent(server.url)
        strict.attach_recording(tmp_path, mode="strict")
        strict.run("Add milk.")
        strict.run("Anything else?")
        forked = strict.fork("shop_v2")
        assert forked.recording.mode == "strict"
        with pytest.raises(ReplayDriftError, match=r"turn 3 is past the end of the recording"):
            forked.run("And bread?")
        assert len(server.requests) == 3  # strict: the fork asked nothing either
    assert not (tmp_path / "shop_v2.json").exists() and not (tmp_path / "shop_v2.jsonl").exists()


def test_a_teams_fork_is_recorded_as_one_tree_in_its_parents_mode(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def member(name: str) -> Agent:
        return Agent(name, ScriptedModel(lambda request: f"{name} done"))

    leader = ScriptedModel([tool_call("delegate_task_to_member", member_id="picker", task="go"), "ok"] * 2)
    crew = Team("crew", members=[member("picker"), member("packer")], model=leader)
    crew.attach_recording(tmp_path, "nb", mode="live")
    crew.run("Pick.")
    forked = crew.fork("crew_v2")
    assert forked.recording.mode == "live" and forked.recording.session_id == "crew_v2"
    # Its members are recorded with it, not each on its own under a session of its name.
    assert [(m.recording.session_id, m.recording.module) for m in forked.members] == [
        ("crew_v2", "agent/picker"),
        ("crew_v2", "agent/packer"),
    ]
    forked.run("Pick again.")
    assert sorted(p.name for p in tmp_path.glob("*.json*")) == ["crew_v2.json", "nb.json"]
    saved = JSONSession(tmp_path).read_modules("crew_v2")
    assert set(saved.modules) == {"agent", "agent/picker"}  # (a member is written once it has run)
