"""A full disk: saves that fail say so (a warning naming the file and the cause), the session
stays loadable, and once space is back every turn is on disk.

The disk is a real tmpfs of a few hundred KB (mounted when the tests run as root), filled to
the last byte; without one, ENOSPC is injected into ``os.fsync``.
"""

from __future__ import annotations

import errno
import os
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from campaign import Tally

from agentnb import Agent, ScriptedModel
from agentnb.sessions import JSONSession, SQLiteSession


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 512 KB tmpfs at ``tmp_path/disk`` (skipped when it cannot be mounted)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> Path:
    """Take every free byte of ``disk``; returns the filler to delete when space should return."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        for size in (1 << 16, 4096, 1):
            while True:
                try:
                    f.write(b"\0" * size)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
    return filler


def make_session(kind: str, disk: Path) -> JSONSession | SQLiteSession:
    return JSONSession(disk / "s") if kind == "json" else SQLiteSession(disk / "s.db")


def scenario(
    kind: str, disk: Path, before: int, during: int, after: int
) -> tuple[list[str], list[str], list[str]]:
    """Run turns before, while and after the disk is full; (messages run, messages on disk,
    warnings seen while full)."""
    agent = Agent("d", ScriptedModel(lambda request: "ok " * 50), session=make_session(kind, disk))
    ran: list[str] = []

    def turn() -> None:
        message = f"turn {len(ran)} " + "x" * 300
        agent.session_state[f"k{len(ran)}"] = "v" * 200
        agent.run(message)
        ran.append(message)

    for _ in range(before):
        turn()
    filler = fill(disk)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(during):
            turn()
    filler.unlink()
    for _ in range(after):
        turn()
    if kind == "sqlite":
        agent._autosave.session.close()  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        restored = Agent("d", ScriptedModel([]), session=make_session(kind, disk))
    return ran, [t.message for t in restored.history], [str(w.message) for w in caught]


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_failed_save_is_a_warning_naming_the_file_and_the_session_stays_loadable(small_disk, kind, scale):
    ran, on_disk, warned = scenario(kind, small_disk, 3, scale(4, 20), 2)
    saves = [w for w in warned if "could not save" in w]
    assert saves, "the disk never filled up: the test proves nothing"
    where = str(small_disk / ("s" if kind == "json" else "s.db"))
    assert all(where in w and ("No space left" in w or "disk is full" in w) for w in saves), saves
    assert on_disk[:3] == ran[:3] and on_disk[-2:] == ran[-2:]


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_every_turn_is_on_disk_once_space_is_back(small_disk, kind, scale):
    tally = Tally("disk full")
    ran, on_disk, _ = scenario(kind, small_disk, 3, scale(4, 20), 2)
    for message in ran:
        tally.check(None if message in on_disk else "turn lost", message[:8])
    assert on_disk == ran, tally.summary()


def test_enospc_at_fsync_loses_no_turn(tmp_path, monkeypatch):
    """Where no tmpfs can be mounted: the kernel's 'no space' reported by fsync."""
    real_fsync = os.fsync
    failing = {"left": 0}

    def fsync(fd: int) -> None:
        if failing["left"]:
            failing["left"] -= 1
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    agent = Agent(
        "d", ScriptedModel(lambda request: "ok"), session=JSONSession(tmp_path, compact_min_bytes=2_000)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(12):
            failing["left"] = 1 if i % 3 == 1 else 0
            agent.session_state["i"] = i
            agent.run(f"turn {i}")
    assert sum("No space left" in str(w.message) for w in caught) >= 3
    restored = Agent("d", ScriptedModel([]), session=JSONSession(tmp_path))
    assert [t.message for t in restored.history] == [f"turn {i}" for i in range(12)]
    assert restored.session_state["i"] == 11


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_turn_whose_save_failed_is_written_by_the_next_save(tmp_path, monkeypatch, kind):
    """Without a full disk: the backend's append fails once, before writing anything."""
    from agentnb.errors import SessionWriteError

    cls = JSONSession if kind == "json" else SQLiteSession
    session = JSONSession(tmp_path) if kind == "json" else SQLiteSession(tmp_path / "s.db")
    agent = Agent("d", ScriptedModel(lambda request: "ok"), session=session)
    agent.run("turn 0")
    real_append = cls._append
    calls = {"n": 0}

    def append_failing_once(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise SessionWriteError("cannot write: No space left on device (injected)")
        return real_append(self, *args, **kwargs)

    monkeypatch.setattr(cls, "_append", append_failing_once)
    with pytest.warns(UserWarning, match="No space left"):
        agent.run("turn 1")
    agent.run("turn 2")
    restored = Agent(
        "d",
        ScriptedModel([]),
        session=JSONSession(tmp_path) if kind == "json" else SQLiteSession(tmp_path / "s.db"),
    )
    assert [t.message for t in restored.history] == ["turn 0", "turn 1", "turn 2"]
