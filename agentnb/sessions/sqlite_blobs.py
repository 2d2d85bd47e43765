"""The images and files of a ``SQLiteSession``: its database's ``blobs`` table
(``SQLiteBlobs``), and deleting the rows no session of the database refers to any more
(``drop_unused``)."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from ..errors import MissingBlobError
from ..messages import sha256_of
from .blobs import referenced


class Database(Protocol):
    """What of a ``SQLiteSession`` the table's code uses (its database)."""

    path: Path

    def _ready(self) -> sqlite3.Connection | None: ...

    def _tx(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def _reading(self) -> AbstractContextManager[None]: ...


BLOBS_TABLE = """CREATE TABLE IF NOT EXISTS blobs (sha256 TEXT PRIMARY KEY, media_type TEXT NOT NULL,
                                  data BLOB NOT NULL);"""
"""(Created by the first blob written: a database of sessions without images has none.)"""


class SQLiteBlobs:
    """Blobs in the session database's ``blobs`` table, a row per hash.

    A table rather than a folder beside the file: a SQLite session is one file to copy, back up
    or mail, and its blobs go with it; each is written in a transaction of its own before the
    snapshot or log rows that refer to it (so no row ever refers to a blob not yet committed),
    with SQLite's durability, and the primary key keeps each hash once. Images are at most
    20 MB (``agentnb.messages.limits``), well within SQLite's 1 GB for a value."""

    def __init__(self, session: Database) -> None:
        self.session = session
        """The session whose database holds the table."""

    def __repr__(self) -> str:
        return f"SQLiteBlobs({str(self.session.path)!r})"

    def where(self, sha256: str, media_type: str) -> str:
        return f"{self.session.path} (table blobs, sha256 {sha256})"

    def put(self, data: bytes, media_type: str, sha256: str | None = None) -> str:
        digest = sha256 or sha256_of(data)
        with self.session._tx() as db:
            db.execute(BLOBS_TABLE)
            db.execute(
                "INSERT OR IGNORE INTO blobs(sha256, media_type, data) VALUES (?,?,?)",
                (digest, media_type, sqlite3.Binary(data)),
            )
        return digest

    def has(self, sha256: str, media_type: str) -> bool:
        return self._row(sha256, "1") is not None

    def mark_used(self, sha256: str, media_type: str) -> None:
        """Nothing drops a row of the table."""

    def read(self, sha256: str, media_type: str) -> bytes:
        row = self._row(sha256, "data")
        if row is None:
            raise MissingBlobError(
                f"blob {sha256} ({media_type}) is missing from {self.where(sha256, media_type)}"
            )
        data = bytes(row[0])
        if sha256_of(data) != sha256:
            raise MissingBlobError(
                f"{self.where(sha256, media_type)} does not hold the bytes its hash says (the row was changed)"
            )
        return data

    def get(self, sha256: str) -> bytes:
        """The bytes of blob ``sha256`` (``messages.BlobStore``)."""
        return self.read(sha256, "?")

    def _row(self, sha256: str, column: str) -> tuple[Any, ...] | None:
        db = self.session._ready()
        if db is None or not has_table(db, "blobs", self.session):
            return None
        with self.session._reading():
            row: tuple[Any, ...] | None = db.execute(
                f"SELECT {column} FROM blobs WHERE sha256=?", (sha256,)
            ).fetchone()
        return row


def drop_unused(session: Database) -> list[str]:
    """Delete the rows of ``session``'s ``blobs`` table that no snapshot, log row or segment of
    its database refers to, in one transaction (called with the database's lock held); their
    hashes."""
    db = session._ready()
    if db is None or not has_table(db, "blobs", session):
        return []
    with session._tx() as db:
        tables = [("snapshots", "data"), ("log", "line")]
        if has_table(db, "segments", session):
            tables.append(("segments", "data"))
        texts = [row[0] for table, column in tables for row in db.execute(f"SELECT {column} FROM {table}")]
        if not all(isinstance(text, str) for text in texts):
            return []  # a row that is not text may name any blob (its session says what is wrong)
        used = referenced(texts)
        unused = [sha for (sha,) in db.execute("SELECT sha256 FROM blobs") if sha not in used]
        db.executemany("DELETE FROM blobs WHERE sha256=?", [(sha,) for sha in unused])
    return unused


def has_table(db: sqlite3.Connection, name: str, session: Database) -> bool:
    """Whether the database has table ``name`` (a read: errors are the session's)."""
    with session._reading():
        found = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone()
    return found is not None


__all__ = ["BLOBS_TABLE", "SQLiteBlobs", "drop_unused", "has_table"]
