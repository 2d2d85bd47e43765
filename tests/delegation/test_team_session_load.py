"""Loading a team's session is all or nothing: every member's saved state is checked before any
is loaded, so a damaged member leaves the whole tree as it was, with an error naming the member,
the file and what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, ScriptedModel, Team, tool_call
from agentnb.errors import SessionFormatError
from agentnb.sessions import JSONSession
from agentnb.sessions.recording import REPLAY_ENV

NAMES = ("a", "b", "c")


def note(word: str, session_state) -> str:
    """Note a word."""
    session_state.setdefault("words", []).append(word)
    return f"noted {word}"


def member(name: str, word: str) -> Agent:
    def answer(request: Any) -> Any:
        return f"{name} noted {word}" if request.tool_results() else tool_call("note", word=word)

    return Agent(name, ScriptedModel(answer), tools=[note], session_state={"words": []})


def team(word: str) -> Team:
    """A team that asks each of its three members, in turn, to note ``word``."""
    tasks = [tool_call("delegate_task_to_member", member_id=n, task=f"note {word}") for n in NAMES]

    def lead(request: Any) -> Any:
        done = len(request.tool_results())
        return tasks[done] if done < len(tasks) else f"all noted {word}"

    return Team("crew", members=[member(n, word) for n in NAMES], model=ScriptedModel(lead))


def looks(crew: Team) -> list[Any]:
    """What loading could change, for the team and each member."""
    return [
        (a.name, [t.run_id for t in a.history], a.session_state, [m.to_dict() for m in a.state.messages])
        for a in crew.modules().values()
    ]


def damage(folder: Path, session_id: str, module: str, change: Any) -> None:
    """Apply ``change`` to the saved state of ``module`` wherever the session holds it whole
    (its snapshot, the log's whole saves)."""
    changed = 0
    snapshot, log = folder / f"{session_id}.json", folder / f"{session_id}.jsonl"
    if snapshot.exists():
        document = json.loads(snapshot.read_text())
        if module in document:
            change(document[module])
            snapshot.write_text(json.dumps(document))
            changed += 1
    if log.exists():
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        for line in lines:
            if line["module"] == module and line["op"] == "replace":
                change(line["state"])
                changed += 1
        log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert changed, f"{folder} holds no whole save of {module} in session {session_id}"


def test_a_damaged_member_in_a_saved_team_loads_nothing(tmp_path):
    saved = team("milk")
    saved.attach_session(JSONSession(tmp_path), "crew")
    saved.run("go")
    damage(tmp_path, "crew", "agent/b", lambda state: state.update(history=5))

    other = team("eggs")
    other.run("go")  # something of its own, to keep
    before = looks(other)
    with pytest.raises(SessionFormatError) as caught:
        other.attach_session(JSONSession(tmp_path), "crew")
    assert looks(other) == before
    text = str(caught.value)
    assert text.startswith(
        f"team 'crew': member 'b' cannot be loaded from {tmp_path / 'crew.jsonl'} (module 'agent/b'):"
    )
    assert "a history must be an object, got int" in text
    assert "nothing was loaded: the team and every member keep their state" in text
    assert (
        "restore the session's files from version control or a backup, or pass fresh=True to start afresh"
        in text
    )


def test_a_failed_load_keeps_the_session_the_team_saved_to(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    saved = team("milk")
    saved.attach_session(JSONSession(second), "crew")
    saved.run("go")
    damage(second, "crew", "agent/c", lambda state: state.update(messages=[{"role": 7}]))

    other = team("eggs")
    other.attach_session(JSONSession(first), "crew")
    with pytest.raises(SessionFormatError, match="member 'c' cannot be loaded"):
        other.attach_session(JSONSession(second), "crew")
    other.run("again")  # still saved where it was
    again = team("eggs")
    again.attach_session(JSONSession(first), "crew")
    assert [t.message for t in again.history] == ["again"]
    assert [len(m.history) for m in again.members] == [1, 1, 1]


def test_resume_loads_the_whole_tree_or_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    recorded = team("milk")
    recorded.attach_recording(tmp_path, "nb")
    recorded.run("go")
    # The history replays; the conversation saved for member b does not load.
    damage(tmp_path, "nb", "agent/b", lambda state: state.update(messages=5))

    again = team("milk")
    again.attach_recording(tmp_path, "nb")
    before = looks(again)
    with pytest.raises(SessionFormatError) as caught:
        again.resume()
    assert looks(again) == before
    assert str(caught.value).startswith("team 'crew': member 'b' cannot be loaded from ")
    assert "(module 'agent/b')" in str(caught.value)


def test_attaching_a_recording_with_a_damaged_member_attaches_none(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    recorded = team("milk")
    recorded.attach_recording(tmp_path, "nb")
    recorded.run("go")
    damage(tmp_path, "nb", "agent/b", lambda state: state["history"].update(turns="none"))

    again = team("milk")
    with pytest.raises(
        SessionFormatError, match=r"team 'crew': member 'b' cannot be loaded from .*'agent/b'"
    ):
        again.attach_recording(tmp_path, "nb")
    assert [a.recording for a in again.modules().values()] == [None] * 4


def test_a_member_the_session_does_not_hold_keeps_its_definition(tmp_path):
    """Not a damage: a member added to the team since it was saved (or one a recording never
    delegated to) has nothing saved; the others load, and it starts as defined."""
    saved = team("milk")
    saved.attach_session(JSONSession(tmp_path), "crew")
    saved.run("go")
    lines = (tmp_path / "crew.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["module"] != "agent/b"]
    (tmp_path / "crew.jsonl").write_text("".join(line + "\n" for line in kept))

    again = team("eggs")
    assert again.attach_session(JSONSession(tmp_path), "crew")
    assert [len(m.history) for m in again.members] == [1, 0, 1]
    assert again.members[1].session_state == {"words": []}
    assert again.members[0].session_state == {"words": ["milk"]}
