"""Compaction off the turn's path: it holds the session's lock only to read the files and to
write the new snapshot; turns saved meanwhile are kept, and a whole save meanwhile wins."""

from __future__ import annotations

import json
import threading

import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.sessions import JSONSession, SQLiteSession
from agentnb.sessions import format as fmt


def add(session_state: dict, item: str) -> str:
    """Add an item."""
    session_state.setdefault("items", []).append(item)
    return "ok"


def _agent(session, name: str = "shop") -> Agent:
    def model(request):
        return "done" if request.tool_results() else tool_call("add", item=request.messages[-1]["content"])

    return Agent(name, ScriptedModel(model), tools=[add], session=session)


class Gate:
    """Holds a background compaction between its fold and its write until opened."""

    def __init__(self, session, monkeypatch) -> None:
        self.reached, self.open = threading.Event(), threading.Event()
        self.opened_in_time = None
        original = session._prepare_snapshot

        def slow_prepare(*args):
            if threading.current_thread() is not threading.main_thread():
                self.reached.set()
                self.opened_in_time = self.open.wait(10)  # False: the turns waited for the compaction
            return original(*args)

        monkeypatch.setattr(session, "_prepare_snapshot", slow_prepare)


def _run_until_a_fold_waits(agent, gate) -> int:
    """Run turns until the log's growth starts a compaction and the gate holds it; how many ran."""
    turn = 0
    while not gate.reached.is_set():
        agent.run(f"item {turn}")
        turn += 1
        assert turn < 500, "no compaction started"
    return turn


def _backend(kind, tmp_path):
    if kind == "json":
        return JSONSession(tmp_path / "s", compact_min_bytes=3_000)
    return SQLiteSession(tmp_path / "s.db", compact_min_bytes=3_000)


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_turns_run_and_are_kept_while_a_compaction_is_under_way(tmp_path, kind, monkeypatch):
    session = _backend(kind, tmp_path)
    gate = Gate(session, monkeypatch)
    agent = _agent(session)
    turn = _run_until_a_fold_waits(agent, gate)
    for _ in range(5):  # the compaction holds no lock now: these turns save at once
        agent.run(f"item {turn}")
        turn += 1
    gate.open.set()
    session.flush()
    assert gate.opened_in_time
    if kind == "json":  # the snapshot was written, and the log restarted with the later turns
        snapshot = json.loads((tmp_path / "s" / "shop.json").read_text())
        log = (tmp_path / "s" / "shop.jsonl").read_text().splitlines()
        assert json.loads(log[0]) == {"v": fmt.VERSION, "seq": snapshot["__agentnb__"]["seq"], "op": "base"}
        # (the turns saved meanwhile grew the log again: a second fold ran when the first ended)
        assert [json.loads(line)["seq"] for line in log[1:]] == list(
            range(snapshot["__agentnb__"]["seq"] + 1, snapshot["__agentnb__"]["seq"] + len(log))
        )
    fresh = _agent(_backend(kind, tmp_path))
    assert [t.message for t in fresh.history] == [f"item {i}" for i in range(turn)]
    assert fresh.session_state["items"] == [f"item {i}" for i in range(turn)]


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_whole_save_during_a_compaction_is_not_overwritten(tmp_path, kind, monkeypatch):
    session = _backend(kind, tmp_path)
    gate = Gate(session, monkeypatch)
    agent = _agent(session)
    _run_until_a_fold_waits(agent, gate)
    other = _agent(None, name="other")
    other.run("from the other agent")
    _backend(kind, tmp_path).save_session_state_sync("shop", agent=other)  # replaces the agent module
    gate.open.set()
    session.flush()
    fresh = _agent(_backend(kind, tmp_path))
    assert [t.message for t in fresh.history] == ["from the other agent"]
    if kind == "json":  # the snapshot it had written ahead of the lock was dropped
        assert [p.name for p in (tmp_path / "s").iterdir() if p.name.endswith((".prepared", ".tmp"))] == []


def test_a_failed_background_compaction_is_a_warning_and_loses_nothing(tmp_path, monkeypatch):
    session = JSONSession(tmp_path, compact_min_bytes=3_000)

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(session, "_write_snapshot", broken)
    agent = _agent(session)
    with pytest.warns(UserWarning, match=r"could not compact .*shop.*log is kept"):
        for i in range(40):
            agent.run(f"item {i}")
        session.flush()
    fresh = _agent(JSONSession(tmp_path))
    assert len(fresh.history) == 40


def test_growth_during_a_compaction_calls_for_another_when_it_ends(tmp_path, monkeypatch):
    session = JSONSession(tmp_path, compact_min_bytes=3_000)
    gate = Gate(session, monkeypatch)
    agent = _agent(session)
    turn = _run_until_a_fold_waits(agent, gate)
    held = json.loads((tmp_path / "shop.jsonl").read_text().splitlines()[-1])["seq"]
    for _ in range(40):  # the log outgrows the rule again while the first fold waits
        agent.run(f"item {turn}")
        turn += 1
    gate.open.set()
    session.flush()
    folded = json.loads((tmp_path / "shop.json").read_text())["__agentnb__"]["seq"]
    assert folded > held  # the second fold took the turns the first one had not read
    assert (tmp_path / "shop.jsonl").stat().st_size <= max(
        (tmp_path / "shop.json").stat().st_size // 2, 3_000
    )
    assert [t.message for t in _agent(JSONSession(tmp_path)).history] == [f"item {i}" for i in range(turn)]
