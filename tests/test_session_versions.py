"""Format version 2 reads version 1 files and says so when it writes into them; a stored event
that is damaged inside (its kind known) is a SessionFormatError when the turn is read."""

from __future__ import annotations

import json
import sqlite3

import pytest

from agentnb import Agent, ScriptedModel
from agentnb.errors import SessionFormatError
from agentnb.sessions import JSONSession, SQLiteSession


def _agent(session) -> Agent:
    return Agent("v", ScriptedModel(lambda request: "ok"), session_state={"n": 1}, session=session)


def _as_version_1(text: str) -> str:
    return text.replace('"version":2', '"version":1').replace('"v":2', '"v":1')


def test_a_version_1_json_session_loads_and_its_next_save_writes_version_2(tmp_path):
    agent = _agent(JSONSession(tmp_path))
    agent.run("one")
    JSONSession(tmp_path).compact("v")
    agent.run("two")
    for name in ("v.json", "v.jsonl"):
        path = tmp_path / name
        path.write_text(_as_version_1(path.read_text()))
    assert '"v":1' in (tmp_path / "v.jsonl").read_text() and '"version":1' in (tmp_path / "v.json").read_text()
    again = _agent(JSONSession(tmp_path))
    assert [t.message for t in again.history] == ["one", "two"]
    again.run("three")
    last = json.loads((tmp_path / "v.jsonl").read_text().splitlines()[-1])
    assert last["v"] == 2
    assert [t.message for t in _agent(JSONSession(tmp_path)).history] == ["one", "two", "three"]


def test_a_version_1_sqlite_session_loads_and_is_marked_version_2_by_its_next_save(tmp_path):
    db = tmp_path / "s.db"
    agent = _agent(SQLiteSession(db))
    agent.run("one")
    with sqlite3.connect(db) as conn:
        for (data,) in conn.execute("SELECT data FROM snapshots").fetchall():
            conn.execute("UPDATE snapshots SET data=?", (_as_version_1(data),))
        for seq, line in conn.execute("SELECT seq, line FROM log").fetchall():
            conn.execute("UPDATE log SET line=? WHERE seq=?", (_as_version_1(line), seq))
        conn.execute("PRAGMA user_version=1")
    again = _agent(SQLiteSession(db))
    assert [t.message for t in again.history] == ["one"]
    again.run("two")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
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
        again.history[0].events
