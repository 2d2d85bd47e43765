"""Writers killed with SIGKILL at random moments, and several processes writing one session id
at once (a session that exists already, and a cold start where none does): no acknowledged
turn is ever lost, and the files a killed writer leaves behind are cleaned by the next save.
"""

from __future__ import annotations

import os
import random
import signal
import time
import warnings
from pathlib import Path

import pytest
from campaign import Tally
from fresh_process import forked

from agentnb import Agent, ScriptedModel
from agentnb.sessions import JSONSession, SQLiteSession

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def backend(kind: str, root: Path) -> JSONSession | SQLiteSession:
    # A small compaction threshold: kills land in compactions too, not only in appends.
    if kind == "json":
        return JSONSession(root / "s", compact_min_bytes=4_000)
    return SQLiteSession(root / "s.db", compact_min_bytes=4_000)


def counting_writer(kind: str, root: Path, session_id: str, ack_fd: int) -> None:
    """Run turns forever, acknowledging each one once run() returned (its autosave is done)."""
    agent = Agent("w", ScriptedModel(lambda request: "ok"), session_state={"n": 0})
    agent.attach_session(backend(kind, root), session_id)
    while True:
        agent.session_state["n"] = len(agent.history) + 1
        agent.run(f"turn {len(agent.history)}")
        os.write(ack_fd, f"{len(agent.history)}\n".encode())


def kill_one(kind: str, root: Path, session_id: str, rng: random.Random) -> int:
    """Start a writer, let it acknowledge a few turns, SIGKILL it at a random moment; returns
    the last acknowledged turn count."""
    read_fd, write_fd = os.pipe()
    pid = forked(lambda: counting_writer(kind, root, session_id, write_fd))
    os.close(write_fd)
    target, received = rng.randrange(0, 4), b""
    while received.count(b"\n") < target:
        chunk = os.read(read_fd, 4096)
        if not chunk:
            break
        received += chunk
    time.sleep(rng.uniform(0, 0.01))  # a random moment, often in the middle of the next save
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    with os.fdopen(read_fd, "rb") as pipe:
        acks = [int(x) for x in (received + pipe.read()).split()]
    return acks[-1] if acks else 0


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_sigkilled_writers_never_lose_an_acknowledged_turn(tmp_path, kind, scale):
    rng = random.Random(14)
    tally = Tally("SIGKILLed writers")
    kills = scale(12, 300 if kind == "json" else 150)
    known: dict[str, int] = {}
    for i in range(kills):
        session_id = f"run-{i // 10}"
        acked = kill_one(kind, tmp_path, session_id, rng)
        expected = max(known.get(session_id, 0), acked)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an interrupted last line is announced, and expected here
            agent = Agent("w", ScriptedModel([]))
            agent.attach_session(backend(kind, tmp_path), session_id)
        turns = len(agent.history)
        messages = [t.message for t in agent.history]
        if turns < expected:
            problem: str | None = f"{expected - turns} acknowledged turn(s) lost"
        elif turns > expected + 1:
            problem = f"{turns - expected} turns more than were run"
        elif messages != [f"turn {k}" for k in range(turns)] or agent.session_state.get("n", 0) != turns:
            problem = "turns or state out of order"
        else:
            problem = None
        tally.check(problem, f"kill {i}")
        known[session_id] = turns
    assert tally.failed == 0, tally.summary()
    if kind == "json":
        leftovers = [p.name for p in (tmp_path / "s").iterdir() if p.name.endswith(".tmp")]
        # Each session's leftovers are removed by its next save; only the last session's may remain.
        assert all(name.startswith(f".run-{(kills - 1) // 10}.") for name in leftovers), leftovers


def turns_writer(
    kind: str, root: Path, session_id: str, name: str, count: int, ready_fd: int, go_fd: int
) -> None:
    agent = Agent(name, ScriptedModel(lambda request: f"from {name}"))
    agent.attach_session(backend(kind, root), session_id)
    os.write(ready_fd, b"r")  # attached (on a cold start: found nothing) ...
    os.read(go_fd, 1)  # ... and all writers start their turns together
    for i in range(count):
        agent.session_state[name] = i + 1
        agent.run(f"{name} {i}")


def run_writers(kind: str, root: Path, session_id: str, writers: int, turns: int, cold: bool) -> str | None:
    """What was lost when ``writers`` processes each ran ``turns`` turns on one session id."""
    if not cold:
        backend(kind, root).save_session_state_sync(session_id, agent=Agent("seed", ScriptedModel(["x"])))
    ready_read, ready_write = os.pipe()
    go_read, go_write = os.pipe()
    names = [f"w{k}" for k in range(writers)]
    pids = [
        forked(lambda n=n: turns_writer(kind, root, session_id, n, turns, ready_write, go_read))
        for n in names
    ]
    os.close(ready_write)
    os.close(go_read)
    ready = b""
    while len(ready) < writers:
        chunk = os.read(ready_read, writers)
        if not chunk:
            break
        ready += chunk
    os.write(go_write, b"x" * writers)
    os.close(go_write)
    os.close(ready_read)
    codes = [os.waitpid(pid, 0)[1] for pid in pids]
    if any(codes):
        return f"{sum(1 for c in codes if c)} writer(s) failed"
    reader = Agent("reader", ScriptedModel([]))
    backend(kind, root).load_session_state_sync(session_id, agent=reader)
    messages = [t.message for t in reader.history]
    lost = writers * turns - len(messages)
    if lost:
        return f"{lost} of {writers * turns} turns lost"
    for n in names:
        if [m for m in messages if m.split()[0] == n] != [f"{n} {i}" for i in range(turns)]:
            return f"{n}'s turns out of order"
        if reader.session_state.get(n) != turns:
            return f"{n}'s last state value lost"
    return None


WARM = [(kind, writers) for kind in ("json", "sqlite") for writers in (2, 3)]


@pytest.mark.parametrize("kind, writers", WARM)
def test_concurrent_writers_on_an_existing_session_lose_nothing(tmp_path, kind, writers, scale):
    tally = Tally("concurrent writers, existing session")
    for i in range(scale(1, 5)):
        tally.check(
            run_writers(kind, tmp_path, f"shared-{i}", writers, scale(15, 60), cold=False),
            f"{kind} x{writers}",
        )
    assert tally.failed == 0, tally.summary()


@pytest.mark.parametrize("kind, writers", WARM)
def test_concurrent_writers_starting_a_new_session_lose_nothing(tmp_path, kind, writers, scale):
    tally = Tally("concurrent writers, cold start")
    for i in range(scale(1, 5)):
        tally.check(
            run_writers(kind, tmp_path, f"cold-{i}", writers, scale(15, 60), cold=True), f"{kind} x{writers}"
        )
    assert tally.failed == 0, tally.summary()
