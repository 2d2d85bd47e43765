"""Blobs no turn refers to any more are deleted when a snapshot is written (a compaction, a whole
save) after turns were replaced, cut by a rewind or gone with a reset: from a SQLite database's
``blobs`` table in one transaction under its lock (all or nothing, even for a writer killed with
SIGKILL mid-drop), and from a JSON folder's ``blobs/`` once they are old; never one still
referred to, by this session or another of the same database or folder."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from fresh_process import forked

from agentnb import Agent, ScriptedModel
from agentnb.messages.png import encode_png
from agentnb.sessions import JSONSession, SQLiteSession

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def chart(n: int) -> bytes:
    return encode_png(bytes((n * 11 + i) % 256 for i in range(4 * 4 * 3)), 4, 4, 3)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stored(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT sha256 FROM blobs")}


def users(agent: Agent) -> list[bytes]:
    return [p.data for t in agent.history for m in t.messages if m.role == "user" for p in m.attachments]


def charted(session, name: str, first: int, count: int) -> Agent:
    agent = Agent(name, ScriptedModel(lambda request: "seen"), session=session)
    for n in range(first, first + count):
        agent.run([f"chart {n}", chart(n)])
    return agent


def test_a_rewound_and_a_reset_sqlite_session_drops_the_blobs_its_old_turns_held(tmp_path):
    db = tmp_path / "s.db"
    session = SQLiteSession(db, compact_min_bytes=1 << 30)
    agent = charted(session, "shop", 0, 4)
    other = charted(SQLiteSession(db), "other", 10, 1)  # another session of the database
    assert stored(db) == {sha(chart(n)) for n in (0, 1, 2, 3, 10)}
    agent.restore(agent.snapshot_at(2))  # rewound: turns 3 and 4 gone
    agent.run(["chart 5", chart(5)])
    assert stored(db) == {sha(chart(n)) for n in (0, 1, 2, 3, 5, 10)}  # the log still holds them
    session.compact("shop")
    assert stored(db) == {sha(chart(n)) for n in (0, 1, 5, 10)}
    agent.reset()
    agent.run(["chart 6", chart(6)])
    session.compact("shop")
    assert stored(db) == {sha(chart(n)) for n in (6, 10)}
    again = Agent("shop", ScriptedModel([]), session=SQLiteSession(db))
    assert users(again) == [chart(6)]
    assert users(Agent("other", ScriptedModel([]), session=SQLiteSession(db))) == users(other) == [chart(10)]
    assert SQLiteSession(db).drop_unused_blobs() == []


def test_a_whole_save_over_a_session_drops_what_its_old_turns_held(tmp_path):
    db = tmp_path / "s.db"
    charted(SQLiteSession(db), "shop", 0, 3)
    fresh = charted(None, "shop", 7, 1)
    SQLiteSession(db).save_session_state_sync("shop", agent=fresh)  # replaces the session whole
    assert stored(db) == {sha(chart(7))}
    assert users(Agent("shop", ScriptedModel([]), session=SQLiteSession(db))) == [chart(7)]


def test_a_compacted_json_session_drops_its_old_blobs_once_they_are_old(tmp_path):
    session = JSONSession(tmp_path, compact_min_bytes=1 << 30)
    agent = charted(session, "shop", 0, 3)
    charted(JSONSession(tmp_path), "other", 10, 1)
    agent.reset()
    agent.run(["chart 4", chart(4)])
    session.compact("shop")
    names = {p.name.split(".")[0] for p in (tmp_path / "blobs").iterdir()}
    assert names == {sha(chart(n)) for n in (0, 1, 2, 4, 10)}  # young: a save may be writing
    hour_ago = time.time() - 3600
    for blob in (tmp_path / "blobs").iterdir():
        os.utime(blob, (hour_ago, hour_ago))
    agent.run(["chart 5", chart(5)])
    session.compact("shop")
    assert {p.name.split(".")[0] for p in (tmp_path / "blobs").iterdir()} == {
        sha(chart(n)) for n in (4, 5, 10)
    }
    assert users(Agent("shop", ScriptedModel([]), session=JSONSession(tmp_path))) == [chart(4), chart(5)]


def test_a_drop_killed_at_any_moment_deletes_all_the_unused_blobs_or_none(tmp_path):
    db = tmp_path / "s.db"
    agent = charted(SQLiteSession(db), "shop", 0, 3)
    used = stored(db)
    rng = random.Random(39)
    outcomes = {"none": 0, "all": 0}

    def unused_blobs() -> set[str]:
        store = SQLiteSession(db)
        made = {store.blobs.put(os.urandom(200_000), "image/png") for _ in range(60)}
        store.close()
        return made

    unused_blobs()
    started = time.perf_counter()
    os.waitpid(forked(lambda: SQLiteSession(db).drop_unused_blobs()), 0)
    whole = time.perf_counter() - started  # how long a drop takes here: kills land all through it
    for kill in range(16):
        unused = unused_blobs()
        pid = forked(lambda: SQLiteSession(db).drop_unused_blobs())
        time.sleep(rng.uniform(0, whole * 1.2))  # a random moment, often in the middle of the drop
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        left = stored(db)
        assert used <= left, f"kill {kill}: a blob still referred to was dropped"
        assert left - used in (unused, set()), f"kill {kill}: {len(left - used)} of {len(unused)} dropped"
        outcomes["none" if left - used else "all"] += 1
        if left - used:
            assert sorted(SQLiteSession(db).drop_unused_blobs()) == sorted(unused)
        assert users(Agent("shop", ScriptedModel([]), session=SQLiteSession(db))) == users(agent)
    print(f"SIGKILLed drops: {outcomes}")
    assert stored(db) == used
