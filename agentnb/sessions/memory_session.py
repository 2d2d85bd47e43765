"""MemorySession: sessions kept in this process only (the same format, no file), for Agno's
``InMemoryDb`` and for code that wants a session that vanishes with the process."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import format as fmt
from .base import SessionBase
from .blobs import HeldBlobs, referenced
from .codec import tagged
from .folding import Read
from .storage import Fetched


class MemorySession(SessionBase):
    """Sessions in memory: a snapshot text and a log per session id, as the files would hold."""

    def __init__(self) -> None:
        super().__init__()
        self._snapshots: dict[str, tuple[int, str]] = {}
        self._logs: dict[str, list[tuple[int, str]]] = {}
        self._log_size: dict[str, int] = {}
        self._mutex = threading.RLock()
        self.blobs = HeldBlobs()
        """Images and files stay in this process's memory, where the session is."""

    def __repr__(self) -> str:
        return f"MemorySession({len(self._snapshots.keys() | self._logs.keys())} sessions)"

    def describe(self, session_id: str) -> str:
        return f"memory (session {session_id!r})"

    @contextmanager
    def _lock(self, session_id: str) -> Iterator[None]:
        with self._mutex:
            yield

    def _exists(self, session_id: str) -> bool:
        return session_id in self._snapshots or bool(self._logs.get(session_id))

    compact_in_background = False  # nothing to wait for in memory

    def _fetch(self, session_id: str) -> Fetched | None:
        if not self._exists(session_id):
            return None
        where = self.describe(session_id)
        seq, text = self._snapshots.get(session_id, (0, ""))
        lines = [line for s, line in self._logs.get(session_id, []) if s > seq]

        def parse() -> Read:
            modules, _ = fmt.parse_snapshot(text, where) if text else ({}, 0)  # (no segments in memory)
            is_tagged = tagged(text) or any(tagged(line) for line in lines)
            entries = iter([(fmt.parse_line(line, where), where) for line in lines])
            return Read(modules, seq, entries, is_tagged, (), referenced([text, *lines]))

        return Fetched(parse, None, 0)

    def _last_seq(self, session_id: str) -> int:
        logged = [s for s, _ in self._logs.get(session_id, [])]
        return max([self._snapshots.get(session_id, (0, ""))[0], *logged])

    def _write_snapshot(
        self,
        session_id: str,
        text: Any,
        seq: int,
        *,
        log_from: int | None = None,
        segments: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._snapshots[session_id] = (seq, text)
        self._logs[session_id] = [(s, line) for s, line in self._logs.get(session_id, []) if s > seq]
        self._log_size[session_id] = sum(len(line) for _, line in self._logs[session_id])

    def _append(self, session_id: str, lines: list[str], first_seq: int) -> tuple[int, int]:
        log = self._logs.setdefault(session_id, [])
        log.extend((first_seq + i, line) for i, line in enumerate(lines))
        self._log_size[session_id] = self._log_size.get(session_id, 0) + sum(len(line) for line in lines)
        return self._log_size[session_id], len(self._snapshots.get(session_id, (0, ""))[1])


__all__ = ["MemorySession"]
