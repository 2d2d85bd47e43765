"""Sessions that are damaged or come from a newer agentnb: each is a ``SessionFormatError``
naming the file and what is wrong, and the files are left byte for byte as they were."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import SessionFormatError
from agentnb.sessions import JSONSession, SQLiteSession
from agentnb.sessions import format as fmt

NEXT = fmt.VERSION + 1


def bump(key: str, session_state: dict) -> str:
    """Count a key up."""
    session_state[key] = session_state.get(key, 0) + 1
    return "ok"


def make(session) -> Agent:
    return Agent(
        "s", ScriptedModel([tool_call("bump", key="a"), "one", "two", "three"]), tools=[bump], session=session
    )


def json_session(root: Path) -> tuple[Path, Path]:
    """A snapshot with two turns and a log with one more."""
    session = JSONSession(root)
    agent = make(session)
    agent.run("first")
    agent.run("second")
    session.compact("s")
    agent.run("third")
    return root / "s.json", root / "s.jsonl"


def sqlite_session(root: Path) -> Path:
    session = SQLiteSession(root / "s.db")
    agent = make(session)
    agent.run("first")
    agent.run("second")
    session.compact("s")
    agent.run("third")
    session.close()
    for suffix in ("-wal", "-shm"):
        Path(str(root / "s.db") + suffix).unlink(missing_ok=True)
    return root / "s.db"


def refused(load, files: list[Path], *pieces: str) -> str:
    """Load, expect a SessionFormatError naming the first file and saying each piece; the files
    are untouched."""
    before = [p.read_bytes() for p in files]
    with pytest.raises(SessionFormatError) as caught:
        load()
    text = str(caught.value)
    assert str(files[0]) in text and "\n" not in text
    for piece in pieces:
        assert piece in text, text
    assert [p.read_bytes() for p in files] == before
    return text


def test_a_snapshot_from_a_newer_agentnb_says_so(tmp_path):
    snap, log = json_session(tmp_path)
    data = json.loads(snap.read_text())
    data["__agentnb__"]["version"] = NEXT
    snap.write_text(json.dumps(data))
    refused(
        lambda: make(JSONSession(tmp_path)),
        [snap, log],
        "written by a newer agentnb",
        f"session format version {NEXT}",
        f"reads session format versions 1 to {fmt.VERSION}",
        "upgrade agentnb",
    )


def test_a_log_line_from_a_newer_agentnb_says_so(tmp_path):
    snap, log = json_session(tmp_path)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join([*lines[:-1], lines[-1].replace(b'"v":%d' % fmt.VERSION, b'"v":%d' % NEXT, 1)]))
    text = refused(
        lambda: make(JSONSession(tmp_path)), [log, snap], "written by a newer agentnb", "upgrade agentnb"
    )
    assert f"line {len(lines)}" in text


def test_a_sqlite_session_from_a_newer_agentnb_says_so(tmp_path):
    db = sqlite_session(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version={NEXT}")
    conn.close()
    refused(lambda: make(SQLiteSession(db)), [db], "written by a newer agentnb", f"version {NEXT}")


def test_a_version_no_agentnb_writes_is_damage(tmp_path):
    snap, log = json_session(tmp_path)
    data = json.loads(snap.read_text())
    data["__agentnb__"]["version"] = 0
    snap.write_text(json.dumps(data))
    refused(lambda: make(JSONSession(tmp_path)), [snap, log], "version 0, which no agentnb writes", "damaged")


@pytest.mark.parametrize("seq", [-1, -40])
def test_a_negative_seq_in_the_log_is_damage(tmp_path, seq):
    snap, log = json_session(tmp_path)
    lines = log.read_bytes().splitlines(keepends=True)
    line = json.loads(lines[-1])
    line["seq"] = seq
    log.write_bytes(
        b"".join([lines[0].replace(b'"seq":2', b'"seq":-50'), (json.dumps(line) + "\n").encode()])
    )
    refused(lambda: make(JSONSession(tmp_path)), [log, snap], "seq -50", "0 or more")


def test_seqs_going_backwards_in_the_log_are_damage(tmp_path):
    snap, log = json_session(tmp_path)
    make(JSONSession(tmp_path)).run("fourth")
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join([lines[0], lines[2], lines[1]]))
    refused(lambda: make(JSONSession(tmp_path)), [log, snap], "after seq", "reordered")


def test_a_negative_seq_in_a_sqlite_log_is_damage(tmp_path):
    db = sqlite_session(tmp_path)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE log SET seq=-seq, line=replace(line, '\"seq\":' || seq, '\"seq\":-' || seq)")
    conn.close()
    refused(lambda: make(SQLiteSession(db)), [db], "0 or more")


def test_a_stored_message_of_an_unknown_role_is_damage(tmp_path):
    snap, log = json_session(tmp_path)
    data = json.loads(snap.read_text())
    data["agent"]["history"]["turns"][1]["messages"][0]["role"] = "wizard"
    snap.write_text(json.dumps(data))
    refused(lambda: make(JSONSession(tmp_path)), [snap, log], "turn 2", "unknown role 'wizard'")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_in_a_snapshot_is_damage(tmp_path, constant):
    snap, log = json_session(tmp_path)
    snap.write_text(snap.read_text().replace('"turns":[', f'"x":{constant},"turns":[', 1))
    refused(lambda: make(JSONSession(tmp_path)), [snap, log], f"holds {constant}, which is not JSON")


def test_a_nan_the_state_holds_is_stored_tagged_and_loads(tmp_path):
    """What a snapshot may not hold as a bare constant, a state may hold: it is written tagged."""
    agent = Agent("s", ScriptedModel(["ok"]), session=JSONSession(tmp_path))
    agent.session_state["x"] = float("nan")
    agent.run("go")
    restored = Agent("s", ScriptedModel([]), session=JSONSession(tmp_path))
    assert restored.session_state["x"] != restored.session_state["x"]  # NaN


def test_a_zero_byte_sqlite_file_is_damaged_and_never_written_into(tmp_path):
    db = tmp_path / "s.db"
    db.write_bytes(b"")
    refused(lambda: make(SQLiteSession(db)), [db], "empty file (0 bytes)")
    agent = Agent("s", ScriptedModel(["hi"]), session=None)
    agent.run("hi")
    with pytest.raises(SessionFormatError, match="empty file"):
        SQLiteSession(db).save_session_state_sync("s", agent=agent)
    assert db.read_bytes() == b""


def test_a_new_sqlite_session_appears_whole(tmp_path, monkeypatch):
    """The file is made beside its place and linked in once it holds its tables: a writer killed
    while creating it leaves no 0-byte file behind (which would be a damaged session)."""
    import os

    db = tmp_path / "new.db"
    seen = []
    real_link = os.link

    def watch(src, dst, *args, **kwargs):
        seen.append((Path(dst).exists(), Path(src).stat().st_size))
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", watch)
    agent = Agent("s", ScriptedModel(["hi"]), session=SQLiteSession(db))
    agent.run("hi")
    assert seen and seen[0][0] is False and seen[0][1] > 0  # not there until linked, and never empty
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith((".lock", "-wal", "-shm"))) == [
        "new.db"
    ]
    assert len(Agent("s", ScriptedModel([]), session=SQLiteSession(db)).history) == 1


def test_a_session_that_is_only_a_log_is_named_by_its_log(tmp_path):
    agent = Agent("s", ScriptedModel(["one"]), session=JSONSession(tmp_path))
    agent.run("first")
    log = tmp_path / "s.jsonl"
    assert not (tmp_path / "s.json").exists() and log.exists()  # not compacted yet
    line = json.loads(log.read_text().splitlines()[0])
    line["state"]["history"] = 5
    log.write_text(json.dumps(line) + "\n")
    with pytest.raises(SessionFormatError) as caught:
        Agent("s", ScriptedModel(["one"]), session=JSONSession(tmp_path))
    assert str(caught.value).startswith(
        f"agent 's' cannot be loaded from {log} (module 'agent'): a history must be an object, got int; "
        "nothing was loaded: the agent keeps its state"
    )
    assert caught.value.where == str(log)

    # Once compacted, the snapshot is the session's file.
    session = JSONSession(tmp_path)
    line["state"]["history"] = {"kind": "agentnb.History", "turns": []}
    log.write_text(json.dumps(line) + "\n")
    session.compact("s")
    assert session.describe("s") == str(tmp_path / "s.json")
