"""Sessions under crashes and concurrent writers: SIGKILL at random moments, two processes."""

from __future__ import annotations

import functools
import os
import random
import signal
import time
import warnings

import pytest
from fresh_process import forked

from agentnb import Agent, ScriptedModel
from agentnb.sessions import JSONSession, SQLiteSession, StateModule

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def backend(kind: str, root) -> JSONSession | SQLiteSession:
    if kind == "json":
        return JSONSession(root / "s", compact_min_bytes=6_000)  # compaction happens often too
    return SQLiteSession(root / "s.db", compact_min_bytes=6_000)


def counting_agent(session, session_id: str) -> Agent:
    agent = Agent("w", ScriptedModel(lambda request: "ok"), session_state={"n": 0})
    agent.attach_session(session, session_id)
    return agent


def writer(kind: str, root, session_id: str, ack_fd: int) -> None:
    agent = counting_agent(backend(kind, root), session_id)
    while True:
        agent.session_state["n"] = len(agent.history) + 1
        agent.run(f"turn {len(agent.history)}")
        os.write(ack_fd, f"{len(agent.history)}\n".encode())


@pytest.mark.parametrize("kind, iterations", [("json", 150), ("sqlite", 80)])
def test_sigkill_at_random_moments_never_loses_a_complete_turn(tmp_path, kind, iterations):
    rng = random.Random(4)
    acked: dict[str, int] = {}
    warnings.simplefilter("ignore")  # interrupted-line notices are expected here
    for i in range(iterations):
        session_id = f"run-{i // 15}"  # a new session now and then keeps each load small
        read_fd, write_fd = os.pipe()
        pid = forked(functools.partial(writer, kind, tmp_path, session_id, write_fd))
        os.close(write_fd)
        # Let the writer finish a random number of turns, then kill it at a random moment
        # (often in the middle of writing the next one).
        target, received = rng.randrange(0, 4), b""
        while received.count(b"\n") < target:
            chunk = os.read(read_fd, 4096)
            if not chunk:
                break
            received += chunk
        time.sleep(rng.uniform(0, 0.012))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        with os.fdopen(read_fd, "rb") as pipe:
            acks = [int(x) for x in (received + pipe.read()).split()]
        if acks:
            acked[session_id] = acks[-1]
        expected = acked.get(session_id, 0)
        agent = counting_agent(backend(kind, tmp_path), session_id)
        turns = len(agent.history)
        # Every acknowledged turn is there; at most the one in flight got saved on top.
        assert expected <= turns <= expected + 1, (i, expected, turns)
        assert [t.message for t in agent.history] == [f"turn {k}" for k in range(turns)]
        assert agent.session_state["n"] == turns
        assert all(t.status == "ok" for t in agent.history)
        acked[session_id] = turns
    # The writers got far enough for kills to land across compactions.
    assert sum(acked.values()) >= iterations


def turns_writer(kind: str, root, name: str, count: int) -> None:
    session = backend(kind, root)
    agent = Agent(name, ScriptedModel(lambda request: f"from {name}"))
    agent.attach_session(session, "shared")
    for i in range(count):
        agent.session_state[name] = i + 1
        agent.run(f"{name} {i}")


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_two_processes_appending_to_one_session_lose_nothing(tmp_path, kind):
    backend(kind, tmp_path).save_session_state_sync("shared", agent=Agent("seed", ScriptedModel(["x"])))
    pids = [forked(lambda n=n: turns_writer(kind, tmp_path, n, 30)) for n in ("a", "b")]
    for pid in pids:
        assert os.waitpid(pid, 0)[1] == 0
    agent = Agent("reader", ScriptedModel(["x"]))
    backend(kind, tmp_path).load_session_state_sync("shared", agent=agent)
    messages = [t.message for t in agent.history]
    assert sorted(messages) == sorted([f"a {i}" for i in range(30)] + [f"b {i}" for i in range(30)])
    assert [m for m in messages if m.startswith("a")] == [f"a {i}" for i in range(30)]
    assert agent.session_state["a"] == 30 and agent.session_state["b"] == 30
    assert [t.index for t in agent.history] == list(range(60))


class Box(StateModule):
    def __init__(self, value: int = 0) -> None:
        self.value = value
        self.register_state("value")


def box_writer(kind: str, root, name: str, count: int) -> None:
    session = backend(kind, root)
    for i in range(count):
        session.save_session_state_sync("boxes", **{name: Box(i + 1)})


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_two_processes_saving_different_modules_keep_both(tmp_path, kind):
    pids = [forked(lambda n=n: box_writer(kind, tmp_path, n, 40)) for n in ("a", "b")]
    for pid in pids:
        assert os.waitpid(pid, 0)[1] == 0
    a, b = Box(), Box()
    backend(kind, tmp_path).load_session_state_sync("boxes", a=a, b=b)
    assert (a.value, b.value) == (40, 40)
