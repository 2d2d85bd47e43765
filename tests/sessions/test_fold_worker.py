"""A background fold parses and encodes in a child process (``agentnb.sessions.worker``), so the
turns saved meanwhile never wait for this interpreter; where the child cannot be used, the fold
runs in its thread as before. Nothing is lost either way."""

from __future__ import annotations

import json
import os
import signal
import sys
import warnings

import pytest
from test_compaction import _agent, _backend  # the same shop agent, folding every ~3 kB

from agentnb.sessions import JSONSession, folding
from agentnb.sessions import worker as worker_module
from agentnb.sessions.worker import Worker, WorkerUnavailable

posix_only = pytest.mark.skipif(os.name != "posix", reason="signals and process groups are POSIX")


def _snapshot_text(kind, path) -> str:
    if kind == "json":
        return (path / "s" / "shop.json").read_text()
    import sqlite3

    with sqlite3.connect(path / "s.db") as db:
        return db.execute("SELECT data FROM snapshots WHERE session_id='shop'").fetchone()[0]


@pytest.fixture
def fresh_worker(monkeypatch):
    """A worker of this test's own (closed after it), in place of the process's."""
    made = Worker()
    monkeypatch.setattr(worker_module, "_WORKER", made)
    yield made
    made.close()


def _fold_breaks_here(monkeypatch):
    """Replaying the log fails in this process (not in a child, which imports its own copy)."""

    def broken(raw):
        raise RuntimeError("replayed in the kernel's process")

    monkeypatch.setattr(folding, "apply_log", broken)


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_the_background_fold_runs_in_a_child_process(tmp_path, kind, monkeypatch, fresh_worker):
    _fold_breaks_here(monkeypatch)
    session = _backend(kind, tmp_path)
    agent = _agent(session)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fold that ran here would warn "could not compact"
        for i in range(40):
            agent.run(f"item {i}")
        session.flush()
    assert fresh_worker.started == 1 and fresh_worker.pid() not in (None, os.getpid())
    assert json.loads(_snapshot_text(kind, tmp_path))["__agentnb__"]["seq"] > 1  # folded
    monkeypatch.undo()
    fresh = _agent(_backend(kind, tmp_path))
    assert fresh.session_state["items"] == [f"item {i}" for i in range(40)]


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_without_the_child_the_fold_runs_in_its_thread(tmp_path, kind, monkeypatch, fresh_worker):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    session = _backend(kind, tmp_path)
    agent = _agent(session)
    for i in range(40):
        agent.run(f"item {i}")
    session.flush()
    assert fresh_worker.started == 0
    assert json.loads(_snapshot_text(kind, tmp_path))["__agentnb__"]["seq"] > 1
    fresh = _agent(_backend(kind, tmp_path))
    assert fresh.session_state["items"] == [f"item {i}" for i in range(40)]


def test_a_backend_whose_reads_do_not_pickle_folds_in_its_thread(tmp_path, fresh_worker):
    class Local(JSONSession):
        def _fetch(self, session_id):
            fetched = super()._fetch(session_id)
            return fetched and fetched._replace(parse=lambda: fetched.parse())  # a closure

    session = Local(tmp_path, compact_min_bytes=3_000)
    agent = _agent(session)
    for i in range(40):
        agent.run(f"item {i}")
    session.flush()
    assert json.loads((tmp_path / "shop.json").read_text())["__agentnb__"]["seq"] > 1
    assert [t.message for t in _agent(JSONSession(tmp_path)).history] == [f"item {i}" for i in range(40)]


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_credentials_set_after_the_child_started_are_redacted_by_its_fold(
    tmp_path, kind, monkeypatch, fresh_worker
):
    secret = "sk-live-a1b2c3d4e5f6a7b8"
    assert fresh_worker.call(os.getpid) != os.getpid()  # the child starts without the credential
    session = _backend(kind, tmp_path)
    session.compact_min_bytes = 1 << 30  # no fold yet: the log holds the value as it was written
    agent = _agent(session)
    agent.run(f"token {secret}")
    monkeypatch.setenv("SHOP_API_KEY", secret)
    session.compact_min_bytes = 1_000
    for i in range(40):  # (SQLite measures its log every 32 appends)
        agent.run(f"item {i}")
    session.flush()
    text = _snapshot_text(kind, tmp_path)
    assert json.loads(text)["__agentnb__"]["seq"] > 1
    assert secret not in text and "token [redacted]" in text
    assert fresh_worker.started == 1


@posix_only
def test_a_killed_child_is_replaced_and_the_call_sent_again(fresh_worker):
    first = fresh_worker.call(os.getpid)
    os.kill(first, signal.SIGKILL)
    second = fresh_worker.call(os.getpid)
    assert second not in (first, os.getpid()) and fresh_worker.started == 2


@posix_only
def test_an_interrupt_sent_to_the_kernel_does_not_stop_the_child(fresh_worker):
    child = fresh_worker.call(os.getpid)
    os.kill(child, signal.SIGINT)  # what interrupting the kernel's process group would do to it
    assert fresh_worker.call(os.getpid) == child and fresh_worker.started == 1


def test_an_idle_child_exits_and_the_next_call_starts_another(monkeypatch):
    idle = Worker(idle_seconds=0.2)
    try:
        first = idle.call(os.getpid)
        idle._proc.wait(timeout=60)  # it exits by itself
        assert idle.pid() is None
        assert idle.call(os.getpid) not in (first, os.getpid()) and idle.started == 2
    finally:
        idle.close()


def test_the_childs_exceptions_and_warnings_reach_the_caller(fresh_worker):
    with pytest.raises(json.JSONDecodeError, match="Expecting"):
        fresh_worker.call(json.loads, "{")
    with pytest.warns(UserWarning, match="said in the child"):
        fresh_worker.call(warnings.warn, "said in the child")
    with pytest.raises(WorkerUnavailable, match="cannot send"):
        fresh_worker.call(lambda: 1)


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_damaged_log_found_by_the_childs_fold_is_a_warning_naming_it(tmp_path, kind, fresh_worker):
    session = _backend(kind, tmp_path)
    session.compact_min_bytes = 1 << 30
    agent = _agent(session)
    for i in range(5):
        agent.run(f"item {i}")
    if kind == "json":
        log = tmp_path / "s" / "shop.jsonl"
        lines = log.read_text().splitlines()
        lines[2] = lines[2].replace('"seq":', '"seq": "x", "was":', 1)
        log.write_text("\n".join(lines) + "\n")
    else:
        import sqlite3

        with sqlite3.connect(tmp_path / "s.db") as db:
            db.execute("UPDATE log SET line='{not json' WHERE session_id='shop' AND seq=3")
    session.compact_min_bytes = 100
    with pytest.warns(
        UserWarning, match=r"could not compact .*(shop\.jsonl line 3|log entry 3).*log is kept"
    ):
        for i in range(30):  # (SQLite measures its log every 32 appends)
            agent.run(f"more {i}")
        session.flush()
    assert fresh_worker.started == 1


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has exited (a zombie nobody reaped counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_the_child_exits_when_the_kernel_is_killed(tmp_path):
    import subprocess
    import time

    script = "from agentnb.sessions.worker import worker; import os, sys, time; print(worker().call(os.getpid), flush=True); time.sleep(600)"
    kernel = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(kernel.stdout.readline())
        assert not _gone(child)
        kernel.kill()  # no atexit, no close: only the pipe's end tells the child
        kernel.wait()
        deadline = time.monotonic() + 30  # well before its idle exit (60 s)
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(child)
    finally:
        kernel.kill()


@posix_only
def test_an_interpreter_that_never_says_it_is_ready_is_given_up_on_once(tmp_path, monkeypatch, fresh_worker):
    starts = tmp_path / "starts"
    fake = tmp_path / "not-python"
    fake.write_text(f"#!/bin/sh\necho started >> {starts}\nexec sleep 600\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    monkeypatch.setattr(worker_module, "START_SECONDS", 0.5)
    session = _backend("json", tmp_path)
    agent = _agent(session)
    for i in range(60):  # several folds: the first gives up on the child, the others do not try
        agent.run(f"item {i}")
    session.flush()
    assert starts.read_text().splitlines() == ["started"]
    assert fresh_worker.started == 0 and "did not start agentnb's worker" in fresh_worker.broken
    assert json.loads(_snapshot_text("json", tmp_path))["__agentnb__"]["seq"] > 1  # folded in the thread
    assert [t.message for t in _agent(_backend("json", tmp_path)).history] == [f"item {i}" for i in range(60)]
