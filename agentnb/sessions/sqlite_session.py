"""SQLiteSession: the same sessions in one SQLite file (stdlib ``sqlite3``), a row per change.

Tables: ``snapshots(session_id, seq, data)`` holds each session's snapshot as JSON text,
``log(session_id, seq, line)`` its changes since, one JSON object per row, and
``segments(session_id, key, data)`` a long history's older turns (``segments.py``). Both columns are
the JSON documented in docs/sessions.md, so ``sqlite3 db 'select data from snapshots' | jq``
reads them. ``blobs(sha256, media_type, data)`` holds the bytes of the messages' images and
files, once per hash for every session of the file (``SQLiteBlobs``).

Reading never writes: the schema is created by the first save, a file that holds something
else is refused untouched, and a database in a folder this process cannot write to is opened
read-only.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import SessionError, SessionFormatError, SessionWriteError
from . import format as fmt
from . import segments as seg
from .base import SessionBase
from .blobs import referenced
from .codec import tagged
from .fileio import file_lock, fsync_dir, is_file, remove_leftovers
from .folding import Read
from .sqlite_blobs import SQLiteBlobs, drop_unused
from .storage import Fetched

SIZE_CHECK_EVERY = 32
"""Appends between two checks of whether the log should be folded into the snapshot."""

_TABLES = {"snapshots", "log"}
_SEGMENTS_TABLE = """CREATE TABLE IF NOT EXISTS segments (session_id TEXT NOT NULL, key TEXT NOT NULL,
                                     data TEXT NOT NULL, PRIMARY KEY (session_id, key));"""
"""(Version 2 files have no such table: the first segment written creates it.)"""
_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS snapshots (session_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS log (session_id TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL,
                                PRIMARY KEY (session_id, seq));
"""
    + _SEGMENTS_TABLE
)


class SQLiteSession(SessionBase):
    """Sessions in the SQLite database at ``path`` (created when first written)."""

    stores_segments = True
    segments_with_snapshot = True
    """(In the snapshot's transaction: one commit, and a compaction's thread, which shares the
    connection with the turns' appends, writes only while it holds the lock.)"""

    def __init__(self, path: str | os.PathLike[str], *, compact_min_bytes: int | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        if compact_min_bytes is not None:
            self.compact_min_bytes = compact_min_bytes
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._has_schema = False
        self._version = fmt.VERSION
        self.blobs = SQLiteBlobs(self)
        """The images and files of every session in the database (its ``blobs`` table)."""

    def __repr__(self) -> str:
        return f"SQLiteSession({str(self.path)!r})"

    def describe(self, session_id: str) -> str:
        return f"{self.path} (session {session_id!r})"

    # -- the connection -----------------------------------------------------------------------

    def _db(self, create: bool = False) -> sqlite3.Connection | None:
        """The connection; None when there is no database file and ``create`` is false."""
        # A connection must not cross a fork; reopen in a child process.
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        if not is_file(self.path):
            if not create:
                return None
            self._create()
        elif _empty(self.path):
            raise SessionFormatError(
                f"{self.path} is an empty file (0 bytes), not a SQLite session: a database is never empty once "
                f"written, so it was cut or made by something else; it was left as it is: restore it from a "
                f"backup, or delete it (or choose another path) to start a new session"
            )
        with self._reading():
            conn = self._connect()
            self._has_schema = self._check(conn)
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _create(self) -> None:
        """Make the database file whole (tables and version) beside it, then link it into place:
        a writer killed while creating it leaves no file (a 0-byte file is a damaged session),
        and one that another writer made meanwhile is kept."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(self.path)
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        os.close(fd)
        tmp = Path(name)
        try:
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version={fmt.VERSION}; COMMIT;")
            finally:
                conn.close()
            with suppress(FileExistsError):
                os.link(tmp, self.path)
            fsync_dir(self.path.parent)
        except (OSError, sqlite3.Error) as exc:
            raise SessionWriteError(
                f"cannot write {self.path}: {getattr(exc, 'strerror', None) or exc}"
            ) from exc
        finally:
            for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
                leftover.unlink(missing_ok=True)

    def _connect(self) -> sqlite3.Connection:
        folder_writable = os.access(self.path.parent, os.W_OK)
        if folder_writable and (not self.path.exists() or os.access(self.path, os.W_OK)):
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous=FULL")
            return conn
        # Nobody here can write: immutable, so SQLite needs no lock or -shm file beside it.
        uri = f"{self.path.resolve().as_uri()}?mode=ro&immutable=1"
        return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)

    def _check(self, conn: sqlite3.Connection) -> bool:
        """Whether the database holds agentnb sessions (False: an empty one); SessionFormatError
        for a database of something else, of another version, or missing its tables."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version == 0 and not tables:
            return False
        if version == 0:
            raise SessionFormatError(
                f"{self.path} is a SQLite database of something else (tables {sorted(tables)}), not "
                f"agentnb sessions; choose another file"
            )
        fmt.check_readable(version, str(self.path))
        self._version = version
        missing = _TABLES - tables
        if missing:
            raise SessionFormatError(
                f"{self.path} is damaged: it has no {', '.join(sorted(missing))} table; restore it from a backup"
            )
        return True

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if _transient(exc):  # locked, busy, cannot open: the file itself may be fine
                raise SessionError(f"cannot read {self.path}: {exc}") from None
            raise SessionFormatError(f"{self.path} is not a usable SQLite session database: {exc}") from None

    def _lock(self, session_id: str) -> AbstractContextManager[None]:
        return file_lock(Path(str(self.path) + ".lock"))

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        db = self._db(create=True)
        assert db is not None
        try:
            if not self._has_schema:
                db.execute("PRAGMA journal_mode=WAL")
                # Tables and version in one transaction: a writer killed in between leaves
                # neither, never tables without the version that says they are agentnb's.
                db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version={fmt.VERSION}; COMMIT;")
                self._has_schema = True
            db.execute("BEGIN IMMEDIATE")
            older = self._version < fmt.VERSION
            if older:  # an older file gets this version's lines: it says so
                db.execute(f"PRAGMA user_version={fmt.VERSION}")
            try:
                yield db
            except BaseException:
                _rollback(db)
                raise
            db.execute("COMMIT")
            if older:
                self._version = fmt.VERSION
        except sqlite3.Error as exc:
            _rollback(db)
            damaged = isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.IntegrityError)
            if damaged and not _transient(exc, writing=True):
                raise SessionFormatError(
                    f"{self.path} is not a usable SQLite session database: {exc}"
                ) from None
            raise SessionWriteError(f"cannot write {self.path}: {exc}") from exc

    # -- reading --------------------------------------------------------------------------------

    def _ready(self) -> sqlite3.Connection | None:
        """The connection when the database holds sessions (another process may have created
        the schema since this one looked)."""
        db = self._db()
        if db is not None and not self._has_schema:
            with self._reading():
                self._has_schema = self._check(db)
        return db if self._has_schema else None

    def _exists(self, session_id: str) -> bool:
        db = self._ready()
        if db is None:
            return False
        with self._reading():
            row = db.execute(
                "SELECT 1 FROM snapshots WHERE session_id=? UNION ALL SELECT 1 FROM log WHERE session_id=? LIMIT 1",
                (session_id, session_id),
            ).fetchone()
        return row is not None

    def _fetch(self, session_id: str) -> Fetched | None:
        db = self._ready()
        if db is None or not self._exists(session_id):
            return None
        where = self.describe(session_id)
        with self._reading():
            row = db.execute("SELECT data, seq FROM snapshots WHERE session_id=?", (session_id,)).fetchone()
            # The rows after the snapshot's seq: the snapshot says which, so it is read first.
            text = _text(row[0], f"{where} snapshot") if row else ""
            # (A negative seq is read too: no save writes one, so it is damage to report.)
            rows = db.execute(
                "SELECT seq, line FROM log WHERE session_id=? AND (seq>? OR seq<0) ORDER BY seq",
                (session_id, row[1] if row else 0),
            ).fetchall()

        return Fetched(partial(_parse, text if row else None, rows, where), row[1] if row else None, 0)

    def _unchanged(self, session_id: str, token: Any) -> bool:
        db = self._ready()
        if db is None:
            return False
        with self._reading():
            row = db.execute("SELECT seq FROM snapshots WHERE session_id=?", (session_id,)).fetchone()
        return (row[0] if row else None) == token

    def _last_seq(self, session_id: str) -> int:
        db = self._ready()
        if db is None:
            return 0
        with self._reading():
            row = db.execute(
                "SELECT MAX(s) FROM (SELECT MAX(seq) AS s FROM log WHERE session_id=? "
                "UNION ALL SELECT seq FROM snapshots WHERE session_id=?)",
                (session_id, session_id),
            ).fetchone()
        return row[0] or 0

    # -- writing --------------------------------------------------------------------------------

    def _write_snapshot(
        self,
        session_id: str,
        text: Any,
        seq: int,
        *,
        log_from: int | None = None,
        segments: Sequence[tuple[str, str]] = (),
    ) -> None:
        with self._tx() as db:  # (the rows after seq stay: log_from is the JSON backend's)
            if segments:
                db.execute(_SEGMENTS_TABLE)
                db.executemany(
                    "INSERT OR REPLACE INTO segments(session_id, key, data) VALUES (?,?,?)",
                    [(session_id, key, data) for key, data in segments],
                )
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
            log_size = db.execute(
                "SELECT COALESCE(SUM(LENGTH(line)),0) FROM log WHERE session_id=?", (session_id,)
            ).fetchone()[0]
            snap = db.execute(
                "SELECT LENGTH(data) FROM snapshots WHERE session_id=?", (session_id,)
            ).fetchone()
        return log_size, snap[0] if snap else 0

    # -- segments of turns stored apart -------------------------------------------------------

    def _get_segment(self, session_id: str, key: str) -> tuple[str, str]:
        where = f"{self.describe(session_id)} segment {key}"
        db = self._ready()
        with self._reading():
            row = (
                db.execute(
                    "SELECT data FROM segments WHERE session_id=? AND key=?", (session_id, key)
                ).fetchone()
                if db
                else None
            )
        if row is None:
            raise SessionFormatError(
                f"{where} is missing: the session was saved whole since it was loaded; load the session again"
            )
        return _text(row[0], where), where

    def _segment_keys(self, session_id: str) -> set[str]:
        db = self._ready()
        if db is None:
            return set()
        with self._reading():
            if (
                db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='segments'").fetchone()
                is None
            ):
                return set()
            return {
                row[0] for row in db.execute("SELECT key FROM segments WHERE session_id=?", (session_id,))
            }

    def _delete_segments(self, session_id: str, keys: set[str]) -> None:
        with self._tx() as db:
            db.executemany(
                "DELETE FROM segments WHERE session_id=? AND key=?", [(session_id, key) for key in keys]
            )

    # -- blobs nothing refers to -----------------------------------------------------------------

    def drop_unused_blobs(self) -> list[str]:
        """Delete the blobs no snapshot, log row or segment of the database refers to any more
        (turns replaced by a recording made again, cut by a rewind, gone with a reset), in one
        transaction under the database's lock: a save, which stores its blobs and then the rows
        that refer to them under that lock, is never between the two. Returns their hashes.
        Called by itself whenever a snapshot is written (a compaction, a whole save)."""
        with self._lock(""):
            return drop_unused(self)

    def _drop_unused_blobs_locked(self) -> None:
        try:
            drop_unused(self)
        except SessionError as exc:  # the snapshot is written; an unused blob only takes room
            warnings.warn(f"agentnb: could not drop the unused blobs of {self.path}: {exc}", stacklevel=2)

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None


_TRANSIENT = ("locked", "busy", "unable to open", "readonly", "read-only", "disk i/o")
_WRITE_FAILURES = ("full", "no space", "too big", "out of memory", "interrupted")


def _transient(exc: sqlite3.Error, writing: bool = False) -> bool:
    """Whether an SQLite error is about this moment (a lock, permissions, a full disk) rather
    than about a damaged file."""
    text = str(exc).lower()
    return any(m in text for m in _TRANSIENT + (_WRITE_FAILURES if writing else ()))


def _rollback(db: sqlite3.Connection) -> None:
    if db.in_transaction:
        with suppress(sqlite3.Error):  # SQLite may have rolled back itself (a full disk): nothing to undo
            db.execute("ROLLBACK")


def _parse(text: str | None, rows: list[tuple[int, Any]], where: str) -> Read:
    """The snapshot and log rows as read: a module-level function of what they hold, so that a
    fold can send it to another process (``worker.py``)."""
    modules, seq, segments = (
        fmt.parse_snapshot_meta(text, f"{where} snapshot") if text is not None else ({}, 0, [])
    )
    entries, is_tagged = [], text is not None and tagged(text)
    for s, line in rows:
        line = _text(line, f"{where} log entry {s}")
        is_tagged = is_tagged or tagged(line)
        entry = fmt.parse_line(line, f"{where} log entry {s}")
        if entry["seq"] != s:
            raise SessionFormatError(
                f"{where} log entry {s} says it is entry {entry['seq']}: the row was edited or moved"
            )
        entries.append((entry, f"{where} log entry {s}"))
    blobs = referenced([text or "", *(line for _, line in rows if isinstance(line, str))])
    return Read(
        modules, seq, iter(entries), is_tagged, seg.check_segments(segments, f"{where} snapshot"), blobs
    )


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise SessionFormatError(f"{where} holds {type(value).__name__} data, not JSON text")
    return value
