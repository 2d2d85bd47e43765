"""The current format reads files of the older versions and says so when it writes into them;
a stored event that is damaged inside (its kind known) is a SessionFormatError when the turn is
read."""

from __future__ import annotations

import json
import sqlite3

import pytest

from agentnb import Agent, ScriptedModel
from agentnb.errors import SessionFormatError
from agentnb.sessions import JSONSession, SQLiteSession
from agentnb.sessions.format import VERSION

OLDER = [v for v in range(1, VERSION)]


def _agent(session) -> Agent:
    return Agent("v", ScriptedModel(lambda request: "ok"), session_state={"n": 1}, session=session)


def _as_version(text: str, older: int) -> str:
    return text.replace(f'"version":{VERSION}', f'"version":{older}').replace(
        f'"v":{VERSION}', f'"v":{older}'
    )


@pytest.mark.parametrize("older", OLDER)
def test_an_older_json_session_loads_and_its_next_save_writes_the_current_version(tmp_path, older):
    agent = _agent(JSONSession(tmp_path))
    agent.run("one")
    JSONSession(tmp_path).compact("v")
    agent.run("two")
    for name in ("v.json", "v.jsonl"):
        path = tmp_path / name
        path.write_text(_as_version(path.read_text(), older))
    assert (
        f'"v":{older}' in (tmp_path / "v.jsonl").read_text()
        and f'"version":{older}' in (tmp_path / "v.json").read_text()
    )
    again = _agent(JSONSession(tmp_path))
    assert [t.message for t in again.history] == ["one", "two"]
    again.run("three")
    last = json.loads((tmp_path / "v.jsonl").read_text().splitlines()[-1])
    assert last["v"] == VERSION
    assert [t.message for t in _agent(JSONSession(tmp_path)).history] == ["one", "two", "three"]


@pytest.mark.parametrize("older", OLDER)
def test_an_older_sqlite_session_loads_and_is_marked_current_by_its_next_save(tmp_path, older):
    db = tmp_path / "s.db"
    agent = _agent(SQLiteSession(db))
    agent.run("one")
    with sqlite3.connect(db) as conn:
        for (data,) in conn.execute("SELECT data FROM snapshots").fetchall():
            conn.execute("UPDATE snapshots SET data=?", (_as_version(data, older),))
        for seq, line in conn.execute("SELECT seq, line FROM log").fetchall():
            conn.execute("UPDATE log SET line=? WHERE seq=?", (_as_version(line, older), seq))
        if older < 3:  # (the segments table came with version 3)
            conn.execute("DROP TABLE segments")
        conn.execute(f"PRAGMA user_version={older}")
    again = _agent(SQLiteSession(db))
    assert [t.message for t in again.history] == ["one"]
    again.run("two")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == VERSION
    assert [t.message for t in _agent(SQLiteSession(db)).history] == ["one", "two"]


def test_an_event_damaged_inside_is_a_format_error_when_its_turn_is_read(tmp_path):
    agent = _agent(JSONSession(tmp_path))
    agent.run("one")
    JSONSession(tmp_path).compact("v")
    snapshot = tmp_path / "v.json"
    data = json.loads(snapshot.read_text())
    event = next(e for e in data["agent"]["history"]["turns"][0]["events"] if e["kind"] == "run_started")
    event["turn"] = "not a number"
    snapshot.write_text(json.dumps(data))
    again = _agent(JSONSession(tmp_path))  # loads: events are decoded when first read
    assert [t.message for t in again.history] == ["one"]
    with pytest.raises(SessionFormatError, match="stored turn's events do not load"):
        again.history[0].events  # noqa: B018  (reading the property decodes the events)
