"""The sessions' tests share one fixture: a session of each kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentnb.sessions import JSONSession, MemorySession, SQLiteSession


@pytest.fixture(params=["json", "sqlite", "memory"])
def session(request: pytest.FixtureRequest, tmp_path: Path) -> JSONSession | SQLiteSession | MemorySession:
    """A JSON folder, an SQLite file (both in ``tmp_path``) or a session in memory: a test that
    takes it runs once with each."""
    if request.param == "json":
        return JSONSession(tmp_path / "sessions")
    if request.param == "memory":
        return MemorySession()
    return SQLiteSession(tmp_path / "sessions.db")
