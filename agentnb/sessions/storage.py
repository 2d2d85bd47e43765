"""What a session backend stores: a snapshot, a log of changes and segments of older turns, as
text under an inter-process lock, per session id (see ``format.py``).

``SessionStorage`` is the interface a backend implements (JSON files, SQLite, memory); what is
done with it (saving, loading, appending, compacting) is ``SessionBase``'s.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

from .blobs import SessionBlobs
from .folding import Read


class Fetched(NamedTuple):
    """A session's stored text as read under the lock, parsed later (``parse``)."""

    parse: Callable[[], Read]
    """The snapshot and log entries parsed (SessionFormatError when they do not parse)."""
    token: Any
    """What ``_unchanged`` compares to tell that only appends happened since."""
    log_size: int
    """Bytes of log read (the JSON backend keeps what was appended after them)."""


class SessionStorage(abc.ABC):
    """Where a session's text is kept: ``_fetch``, ``_write_snapshot``, ``_append``, ``_lock``
    and the rest are a backend's to implement."""

    stores_segments: bool = False
    """Whether this backend stores a long history's older turns apart (``segments.py``)."""
    segments_with_snapshot: bool = False
    """Whether new segments are written by ``_write_snapshot`` (in its transaction) rather
    than by ``_put_segment`` ahead of it."""
    blobs: SessionBlobs
    """Where the bytes of the messages' images and files are kept, once per hash for every
    session of the backend (``blobs.py``); a backend sets it when it is made."""

    @abc.abstractmethod
    def _lock(self, session_id: str) -> AbstractContextManager[Any]:
        """An inter-process lock for one session."""

    @abc.abstractmethod
    def _exists(self, session_id: str) -> bool: ...

    @abc.abstractmethod
    def _fetch(self, session_id: str) -> Fetched | None:
        """The session's stored text, read (under the lock) but not yet parsed, or None."""

    def _read(self, session_id: str) -> Read | None:
        fetched = self._fetch(session_id)
        return None if fetched is None else fetched.parse()

    def _unchanged(self, session_id: str, token: Any) -> bool:
        """Whether the snapshot (and the log it starts) are still the ones ``token`` was read
        with: only appends since (called with the lock held)."""
        return False

    @abc.abstractmethod
    def _write_snapshot(
        self,
        session_id: str,
        text: Any,
        seq: int,
        *,
        log_from: int | None = None,
        segments: Sequence[tuple[str, str]] = (),
    ) -> None:
        """Atomically replace the snapshot with ``text`` (or what ``_prepare_snapshot`` made of
        it); log entries up to ``seq`` become obsolete. With ``log_from``, the log's bytes after
        that offset (appended since it was read) are kept. ``segments``: ``(key, text)`` of new
        segments, for a backend that writes them with the snapshot."""

    def _prepare_snapshot(self, session_id: str, text: str) -> Any:
        """Do what writing a snapshot can do before taking the lock (a backend may write it to
        a temporary file); ``_write_snapshot`` finishes it, ``_discard_prepared`` drops it."""
        return text

    def _discard_prepared(self, prepared: Any) -> None:  # noqa: B027  (optional hook)
        """Drop a prepared snapshot that will not be written."""

    def _drop_unused_blobs_locked(self) -> None:  # noqa: B027  (optional hook)
        """A snapshot was just written (a compaction, a whole save: the text that referred to
        replaced turns is gone): delete the blobs nothing refers to any more. Called with the
        lock held; a backend that keeps no blobs apart does nothing."""

    @abc.abstractmethod
    def _append(self, session_id: str, lines: list[str], first_seq: int) -> tuple[int, int]:
        """Durably append entries; returns (log size, snapshot size) in bytes."""

    @abc.abstractmethod
    def _last_seq(self, session_id: str) -> int: ...

    def _put_segment(self, session_id: str, key: str, text: str) -> None:
        """Durably store a segment of turns under ``key`` (before any snapshot names it)."""
        raise NotImplementedError

    def _get_segment(self, session_id: str, key: str) -> tuple[str, str]:
        """A segment's text and where it was read; SessionFormatError when it is gone."""
        raise NotImplementedError

    def _segment_keys(self, session_id: str) -> set[str]:
        """The keys of the segments stored for ``session_id``."""
        return set()

    def _delete_segments(self, session_id: str, keys: set[str]) -> None:  # noqa: B027  (optional hook)
        """Delete segments (called with the lock held, once no snapshot names them)."""

    @abc.abstractmethod
    def describe(self, session_id: str) -> str:
        """Where the session is stored (for messages)."""


__all__ = ["Fetched", "SessionStorage"]
