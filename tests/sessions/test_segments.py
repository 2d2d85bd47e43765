"""A long history's older turns stored apart (``agentnb.sessions.segments``): a compaction moves
them into segments, loading leaves them on disk until one is asked for, and everything an agent
shows of them is what it showed before it was saved."""

from __future__ import annotations

import json
import sqlite3

import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import SessionFormatError
from agentnb.sessions import JSONSession, SQLiteSession, load_history
from agentnb.sessions import segments as seg


def put(session_state: dict, key: str, n: int) -> str:
    """Set one key."""
    session_state[key] = {"n": n, "text": f"value {n} " * 3}
    if n % 4 == 0:
        session_state.pop("gone", None)
    else:
        session_state["gone"] = n
    return f"{key}={n}"


def _agent(session, name: str = "long", **kwargs) -> Agent:
    def model(request):
        if request.tool_results():
            return "done " + request.messages[-1]["content"]
        n = int(request.messages[-1]["content"].split()[-1])
        return tool_call("put", key=f"k{n % 7}", n=n)

    return Agent(
        name, ScriptedModel(model), tools=[put], session_state={"seed": 1}, session=session, **kwargs
    )


@pytest.fixture(autouse=True)
def small_segments(monkeypatch):
    monkeypatch.setattr(seg, "SPLIT_AT", 12)
    monkeypatch.setattr(seg, "RECENT", 4)


def _backend(kind, tmp_path):
    if kind == "json":
        return JSONSession(tmp_path / "s", compact_min_bytes=1 << 30)
    return SQLiteSession(tmp_path / "s.db", compact_min_bytes=1 << 30)


def _run(agent, first: int, count: int) -> None:
    for n in range(first, first + count):
        assert agent.run(f"turn {n}").content == f"done k{n % 7}={n}"


def _compacted(kind, tmp_path, **kwargs) -> Agent:
    """An agent that ran 20 turns, its session folded (16 turns stored apart, 4 kept)."""
    agent = _agent(_backend(kind, tmp_path), **kwargs)
    _run(agent, 0, 20)
    _backend(kind, tmp_path).compact("long")
    return agent


def _same_turns(loaded, original) -> None:
    assert len(loaded) == len(original)
    for a, b in zip(loaded, original):
        assert (a.index, a.run_id, a.message, a.content) == (b.index, b.run_id, b.message, b.content)
        assert (
            a.state_start == b.state_start
            and a.state_before == b.state_before
            and a.state_after == b.state_after
        )
        assert list(a.state_start) == list(b.state_start) and list(a.state_after) == list(b.state_after)
        assert [m.to_dict() for m in a.messages] == [m.to_dict() for m in b.messages]
        assert [e.kind for e in a.events] == [e.kind for e in b.events]
        assert a.changes() == b.changes()


def _segment_reads(monkeypatch, session) -> list[str]:
    reads: list[str] = []
    original = session._get_segment

    def counted(session_id, key):
        reads.append(key)
        return original(session_id, key)

    monkeypatch.setattr(session, "_get_segment", counted)
    return reads


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_compaction_stores_older_turns_apart_and_loading_reads_them_only_when_asked(
    tmp_path, kind, monkeypatch
):
    agent = _compacted(kind, tmp_path)
    if kind == "json":
        snapshot = json.loads((tmp_path / "s" / "long.json").read_text())
        [info] = snapshot["__agentnb__"]["segments"]
        assert (info["module"], info["path"], info["first"], info["count"]) == (
            "agent",
            ["history", "turns"],
            0,
            16,
        )
        kept = snapshot["agent"]["history"]["turns"]
        assert len(kept) == 4
        # the first kept turn's start state is written against the saved state, not whole again
        assert kept[0]["state_start_patch"]["base"] == ["state"]
        assert len(json.dumps(kept[0]["state_start_patch"])) < len(json.dumps(snapshot["agent"]["state"]))
        assert [p.name for p in (tmp_path / "s").glob("long.turns-*.json")] == [
            f"long.turns-{info['key']}.json"
        ]

    session = _backend(kind, tmp_path)
    reads = _segment_reads(monkeypatch, session)
    loaded = _agent(session)
    assert reads == [] and len(loaded.history) == 20 and loaded.history.stored_apart == 16
    assert loaded.session_state == agent.session_state
    assert loaded.history[-1].message == "turn 19" and loaded.history[16].message == "turn 16" and reads == []
    assert loaded.history[3].message == "turn 3" and len(reads) == 1 and loaded.history.stored_apart == 0
    _same_turns(loaded.history, agent.history)
    assert len(reads) == 1  # read once, then kept


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_turns_run_after_loading_are_saved_and_a_later_compaction_adds_a_segment(tmp_path, kind, monkeypatch):
    agent = _compacted(kind, tmp_path)
    session = _backend(kind, tmp_path)
    reads = _segment_reads(monkeypatch, session)
    again = _agent(session, add_history_to_context=True, num_history_runs=2)
    _run(again, 20, 15)
    assert reads == []  # the last runs in the context come from the recent turns
    users = [m["content"] for m in again.model.requests[-1].messages if m["role"] == "user"]
    assert users == ["turn 32", "turn 33", "turn 34"]
    _backend(kind, tmp_path).compact("long")
    if kind == "json":
        snapshot = json.loads((tmp_path / "s" / "long.json").read_text())
        assert [(s["first"], s["count"]) for s in snapshot["__agentnb__"]["segments"]] == [(0, 16), (16, 15)]
    fresh = _agent(_backend(kind, tmp_path))
    assert len(fresh.history) == 35 and fresh.history.stored_apart == 31
    _same_turns(fresh.history, [*agent.history, *again.history[20:]])
    assert fresh.session_state == again.session_state
    assert list(fresh.history.turns()["message"]) == [f"turn {n}" for n in range(35)]


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_background_compaction_stores_turns_apart_too(tmp_path, kind):
    session = (
        JSONSession(tmp_path / "s", compact_min_bytes=4_000)
        if kind == "json"
        else SQLiteSession(tmp_path / "s.db", compact_min_bytes=4_000)
    )
    agent = _agent(session)
    _run(agent, 0, 80)
    session.flush()
    fresh = _agent(_backend(kind, tmp_path))
    assert fresh.history.stored_apart > 0
    _same_turns(fresh.history, agent.history)


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_whole_save_writes_every_turn_inline_and_deletes_the_segments(tmp_path, kind):
    agent = _compacted(kind, tmp_path)
    session = _backend(kind, tmp_path)
    loaded = _agent(session)
    session.save_session_state_sync("long", agent=loaded)  # reads its stored turns first
    assert _segment_keys(kind, tmp_path) == set()
    fresh = _agent(_backend(kind, tmp_path))
    assert fresh.history.stored_apart == 0
    _same_turns(fresh.history, agent.history)


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_history_rewritten_after_loading_drops_its_segments(tmp_path, kind):
    _compacted(kind, tmp_path)
    session = _backend(kind, tmp_path)
    loaded = _agent(session)
    loaded.reset()
    _run(loaded, 100, 2)  # the history was replaced: saved whole, in the log
    fresh = _agent(_backend(kind, tmp_path))
    assert [t.message for t in fresh.history] == ["turn 100", "turn 101"]
    _backend(kind, tmp_path).compact("long")
    assert _segment_keys(kind, tmp_path) == set()
    assert [t.message for t in _agent(_backend(kind, tmp_path)).history] == ["turn 100", "turn 101"]


def _segment_keys(kind, tmp_path) -> set[str]:
    if kind == "json":
        return {p.name for p in (tmp_path / "s").glob("long.turns-*.json")}
    with sqlite3.connect(tmp_path / "s.db") as conn:
        return {row[0] for row in conn.execute("SELECT key FROM segments")}


def test_load_history_and_fork_read_the_stored_turns(tmp_path):
    agent = _compacted("json", tmp_path)
    history = load_history(tmp_path / "s" / "long.json")
    assert history.stored_apart == 16
    _same_turns(history, agent.history)
    loaded = _agent(_backend("json", tmp_path))
    forked = loaded.fork("early", turn=5)
    assert [t.message for t in forked.history] == [f"turn {n}" for n in range(5)]
    assert forked.session_state == agent.history[4].state_after


def test_a_missing_segment_is_an_error_naming_it_when_an_old_turn_is_read(tmp_path):
    _compacted("json", tmp_path)
    [path] = (tmp_path / "s").glob("long.turns-*.json")
    path.unlink()
    loaded = _agent(_backend("json", tmp_path))  # the recent part loads
    assert loaded.history[-1].message == "turn 19"
    with pytest.raises(SessionFormatError, match=rf"{path.name} is missing.*load the session again"):
        loaded.history[0]


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda doc: doc.update(count=3), "not the segment the snapshot names"),
        (lambda doc: doc["entries"].pop(), "holds 15 turn"),
        (lambda doc: doc.update(entries="nothing"), "not a segment of turns"),
    ],
)
def test_a_damaged_segment_is_a_format_error(tmp_path, damage, message):
    _compacted("json", tmp_path)
    [path] = (tmp_path / "s").glob("long.turns-*.json")
    doc = json.loads(path.read_text())
    damage(doc)
    path.write_text(json.dumps(doc))
    loaded = _agent(_backend("json", tmp_path))
    with pytest.raises(SessionFormatError, match=message):
        loaded.history[0]


@pytest.mark.parametrize(
    "segments, message",
    [
        ("all", "segments must be a list"),
        (
            [
                {
                    "module": "agent",
                    "path": ["history", "turns"],
                    "first": 0,
                    "count": 16,
                    "key": "../../etc/passwd",
                }
            ],
            "damaged",
        ),
        (
            [
                {
                    "module": "agent",
                    "path": ["history", "turns"],
                    "first": 3,
                    "count": 16,
                    "key": "3-18-0123abcd",
                }
            ],
            "do not follow each other",
        ),
    ],
)
def test_damaged_segment_metadata_is_a_format_error_at_load(tmp_path, segments, message):
    _compacted("json", tmp_path)
    path = tmp_path / "s" / "long.json"
    snapshot = json.loads(path.read_text())
    snapshot["__agentnb__"]["segments"] = segments
    path.write_text(json.dumps(snapshot))
    with pytest.raises(SessionFormatError, match=message):
        _agent(_backend("json", tmp_path))


def test_credentials_never_reach_a_segment(tmp_path, monkeypatch):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    agent = _agent(_backend("json", tmp_path))
    agent.run(f"say {secret} turn 0")
    _run(agent, 1, 19)
    _backend("json", tmp_path).compact("long")
    [path] = (tmp_path / "s").glob("long.turns-*.json")
    text = path.read_text()
    assert secret not in text and "[redacted]" in text


def test_long_texts_are_written_once_in_a_segment(tmp_path):
    big = "x" * 5_000
    agent = _agent(_backend("json", tmp_path), instructions=f"Remember {big}")
    _run(agent, 0, 20)
    _backend("json", tmp_path).compact("long")
    [path] = (tmp_path / "s").glob("long.turns-*.json")
    assert path.read_text().count(big) == 1
    loaded = _agent(_backend("json", tmp_path), instructions=f"Remember {big}")
    assert big in loaded.history[0].system_prompt
    _same_turns(loaded.history, agent.history)


def test_a_first_kept_turn_whose_start_state_differs_in_order_is_stored_whole(tmp_path):
    agent = _agent(_backend("json", tmp_path))
    _run(agent, 0, 20)
    data = agent.session_state
    moved = {k: data.pop(k) for k in list(data)[:2]}
    data.update(moved)  # the same keys in another order: a delta against it cannot rebuild the order
    session = _backend("json", tmp_path)
    session.save_session_state_sync("long", agent=agent)
    session.compact("long")
    snapshot = json.loads((tmp_path / "s" / "long.json").read_text())
    assert "base" not in snapshot["agent"]["history"]["turns"][0]["state_start_patch"]
    loaded = _agent(_backend("json", tmp_path))
    _same_turns(loaded.history, agent.history)
    assert list(loaded.session_state) == list(agent.session_state)


def test_a_first_kept_turn_based_on_something_else_is_a_format_error(tmp_path):
    _compacted("json", tmp_path)
    path = tmp_path / "s" / "long.json"
    snapshot = json.loads(path.read_text())
    snapshot["agent"]["history"]["turns"][0]["state_start_patch"]["base"] = ["messages"]
    path.write_text(json.dumps(snapshot))
    with pytest.raises(SessionFormatError, match="cannot be built from"):
        _agent(_backend("json", tmp_path))


def test_log_lines_after_a_fold_apply_to_the_turns_it_kept():
    segments = [
        {"module": "agent", "path": ["history", "turns"], "first": 0, "count": 16, "key": "0-15-0123abcd"}
    ]
    cut = {
        "op": "delta",
        "module": "agent",
        "ops": [{"op": "splice", "path": ["history", "turns"], "keep": 18, "append": []}],
    }
    assert seg.adjust_line(cut, list(segments), "here")["ops"][0]["keep"] == 2  # 18 turns = 16 apart + 2 kept
    inside = {**cut, "ops": [{**cut["ops"][0], "keep": 3}]}
    with pytest.raises(SessionFormatError, match="inside the turns stored apart"):
        seg.adjust_line(inside, list(segments), "here")
    replaced = {
        "op": "delta",
        "module": "agent",
        "ops": [{"op": "merge", "path": [], "set": {"history": {"turns": []}}, "unset": []}],
    }
    left = list(segments)
    seg.adjust_line(replaced, left, "here")
    assert left == []  # the list was replaced from above: its segments no longer apply
    state_only = {
        "op": "delta",
        "module": "agent",
        "ops": [{"op": "merge", "path": ["state"], "set": {"k": 1}, "unset": []}],
    }
    left = list(segments)
    assert seg.adjust_line(state_only, left, "here") == state_only and left == segments


def test_a_snapshot_prepared_by_a_killed_writer_is_removed_once_stale(tmp_path):
    import os
    import time

    from agentnb.sessions.fileio import prepare_write, remove_leftovers

    target = tmp_path / "long.json"
    stale, fresh = prepare_write(target, b"{}"), prepare_write(target, b"{}")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    remove_leftovers(target)
    assert not stale.exists() and fresh.exists()  # a fresh one may be a live writer's
