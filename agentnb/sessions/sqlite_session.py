"""SQLiteSession: the same sessions in one SQLite file (stdlib ``sqlite3``), a row per change.

Tables: ``snapshots(session_id, seq, data)`` holds each session's snapshot as JSON text and
``log(session_id, seq, line)`` its changes since, one JSON object per row. Both columns are
the JSON documented in docs/sessions.md, so ``sqlite3 db 'select data from snapshots' | jq``
reads them.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..errors import SessionFormatError
from . import format as fmt
from .base import SessionBase

SIZE_CHECK_EVERY = 32
"""Appends between two checks of whether the log should be folded into the snapshot."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS snapshots (session_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS log (session_id TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL,
                                PRIMARY KEY (session_id, seq));
"""


class SQLiteSession(SessionBase):
    """Sessions in the SQLite database at ``path`` (created when first written)."""

    def __init__(self, path: str | os.PathLike[str], *, compact_min_bytes: int | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        if compact_min_bytes is not None:
            self.compact_min_bytes = compact_min_bytes
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    def __repr__(self) -> str:
        return f"SQLiteSession({str(self.path)!r})"

    def describe(self, session_id: str) -> str:
        return f"{self.path} (session {session_id!r})"

    def _db(self) -> sqlite3.Connection:
        # A connection must not cross a fork; reopen in a child process.
        if self._conn is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version == 0:
                    conn.executescript(_SCHEMA)
                    conn.execute(f"PRAGMA user_version={fmt.VERSION}")
                elif version != fmt.VERSION:
                    raise SessionFormatError(
                        f"{self.path} has session format version {version}; this agentnb reads "
                        f"version {fmt.VERSION}"
                    )
            except sqlite3.DatabaseError as exc:
                raise SessionFormatError(f"{self.path} is not a usable SQLite session database: {exc}") from None
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    @contextmanager
    def _lock(self, session_id: str) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock"):
            yield

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _exists(self, session_id: str) -> bool:
        if not self.path.exists():
            return False
        db = self._db()
        row = db.execute(
            "SELECT 1 FROM snapshots WHERE session_id=? UNION ALL SELECT 1 FROM log WHERE session_id=? LIMIT 1",
            (session_id, session_id),
        ).fetchone()
        return row is not None

    def _read(self, session_id: str) -> tuple[dict[str, Any], int, Iterator[tuple[dict[str, Any], str]]] | None:
        if not self._exists(session_id):
            return None
        db = self._db()
        where = self.describe(session_id)
        row = db.execute("SELECT data FROM snapshots WHERE session_id=?", (session_id,)).fetchone()
        modules, seq = fmt.parse_snapshot(row[0], f"{where} snapshot") if row else ({}, 0)
        rows = db.execute("SELECT seq, line FROM log WHERE session_id=? AND seq>? ORDER BY seq", (session_id, seq)).fetchall()
        entries = [(fmt.parse_line(line, f"{where} log entry {s}"), f"{where} log entry {s}") for s, line in rows]
        return modules, seq, iter(entries)

    def _last_seq(self, session_id: str) -> int:
        db = self._db()
        row = db.execute(
            "SELECT MAX(s) FROM (SELECT MAX(seq) AS s FROM log WHERE session_id=? "
            "UNION ALL SELECT seq FROM snapshots WHERE session_id=?)",
            (session_id, session_id),
        ).fetchone()
        return row[0] or 0

    def _write_snapshot(self, session_id: str, text: str, seq: int) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO snapshots(session_id, seq, data) VALUES (?,?,?) "
                "ON CONFLICT(session_id) DO UPDATE SET seq=excluded.seq, data=excluded.data",
                (session_id, seq, text),
            )
            db.execute("DELETE FROM log WHERE session_id=? AND seq<=?", (session_id, seq))

    def _append(self, session_id: str, lines: list[str], first_seq: int) -> tuple[int, int]:
        with self._tx() as db:
            db.executemany(
                "INSERT INTO log(session_id, seq, line) VALUES (?,?,?)",
                [(session_id, first_seq + i, line) for i, line in enumerate(lines)],
            )
            last = first_seq + len(lines) - 1
            if last % SIZE_CHECK_EVERY:
                # Measuring reads every log row and the whole snapshot: do it every few appends
                # only, so an append stays O(change) however long the session is.
                return 0, 0
            log_size = db.execute("SELECT COALESCE(SUM(LENGTH(line)),0) FROM log WHERE session_id=?", (session_id,)).fetchone()[0]
            snap = db.execute("SELECT LENGTH(data) FROM snapshots WHERE session_id=?", (session_id,)).fetchone()
        return log_size, snap[0] if snap else 0

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None
