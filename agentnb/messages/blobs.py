"""Where the bytes of images and files go when a message is stored: a ``BlobStore``, content
addressed (a blob's name is the SHA-256 of its bytes, so the same figure sent ten times is kept
once).

A stored message holds a part's hash, media type and size, never its bytes
(``Message.to_dict(blobs)``); the bytes go to the store and come back from it
(``Message.from_dict(data, blobs)``). ``MemoryBlobs`` keeps them in this process; a session's
store keeps them in files beside the notebook.

How long this process keeps a blob (``PROCESS_BLOBS``): while something alive holds it, and a
little longer. Each blob has holders, weakly referenced: the part whose ``to_dict`` stored it or
that ``from_dict`` made of it (the bytes are then the part's own, so keeping them costs
nothing), a history's turn whose messages are still stored (decoded when first read), a session
kept in memory, a load or an evaluation under way. A blob whose last holder is gone becomes
*spare*: spare blobs are kept, most recently used first, up to ``spare_bytes``, for a stored
message that nothing holds (``Message.to_dict()`` kept by hand), and the least recently used are
dropped beyond it. So a kernel that sent a thousand figures holds the bytes of those its agents
still show, plus at most ``spare_bytes``.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from functools import partial
from typing import Any, Protocol, runtime_checkable

from ..errors import MissingBlobError

SPARE_BYTES = 64 << 20
"""How many bytes of blobs nothing holds ``PROCESS_BLOBS`` keeps (64 MiB: a few large images)."""


def sha256_of(data: bytes) -> str:
    """The hex SHA-256 of ``data``: a blob's name."""
    return hashlib.sha256(data).hexdigest()


@runtime_checkable
class BlobStore(Protocol):
    """Content-addressed bytes: what ``to_dict`` writes parts' bytes to and ``from_dict`` reads
    them from."""

    def put(self, data: bytes, media_type: str, sha256: str | None = None) -> str:
        """Keep ``data`` (of ``media_type``) once; returns its SHA-256 (``sha256``, when given,
        is the caller's own hash of it, so the store need not hash the bytes again)."""
        ...

    def get(self, sha256: str) -> bytes:
        """The bytes named ``sha256``; ``MissingBlobError`` naming the hash and where it looked
        when the store does not hold them."""
        ...


class MemoryBlobs:
    """A ``BlobStore`` in this process's memory (thread-safe), keeping each blob while one of
    its holders is alive and, once none is, among at most ``spare_bytes`` of spare blobs (see
    the module's text; None keeps every blob for as long as the store lives)."""

    def __init__(self, name: str = "memory", *, spare_bytes: int | None = None) -> None:
        self.name = name
        """How errors name the store."""
        self.spare_bytes = spare_bytes
        """The most bytes of blobs that nothing holds kept (None: no limit)."""
        self._blobs: dict[str, bytes] = {}
        self._holders: dict[str, dict[int, weakref.ref[Any]]] = {}
        self._spare: OrderedDict[str, None] = OrderedDict()  # least recently used first
        self._spare_size = 0
        self._gone: list[tuple[str, int]] = []  # holders found gone, settled under the lock
        self._lock = threading.Lock()

    def put(self, data: bytes, media_type: str, sha256: str | None = None, holder: object = None) -> str:
        """Keep ``data`` once (``holder``, when given, holds it: see ``hold``); returns its hash."""
        digest = sha256 or sha256_of(data)
        with self._lock:
            self._settle()
            if digest not in self._blobs:
                self._blobs[digest] = bytes(data)  # (the same object for bytes: shared with the part)
                self._spare[digest] = None
                self._spare_size += len(data)
            elif digest in self._spare:
                self._spare.move_to_end(digest)
            if holder is not None:
                self._hold(digest, holder)
            self._trim()
        return digest

    def hold(self, sha256: str, holder: object) -> bool:
        """Keep blob ``sha256`` for as long as ``holder`` (an object that takes weak references)
        is alive; whether the store has it."""
        with self._lock:
            self._settle()
            if sha256 not in self._blobs:
                return False
            self._hold(sha256, holder)
        return True

    def get(self, sha256: str) -> bytes:
        with self._lock:
            self._settle()
            data = self._blobs.get(sha256)
            if data is not None and sha256 in self._spare:
                self._spare.move_to_end(sha256)
        if data is None:
            raise MissingBlobError(
                f"no blob {sha256} in {self.name} ({len(self._blobs)} blob(s) held): the message was "
                "stored in another process or with another store, or nothing has held it since (a "
                "stored message does not keep its bytes in memory); load it with the store it was "
                "saved with (a session's own)"
            )
        return data

    def find(self, sha256: str) -> bytes | None:
        """The bytes named ``sha256``, or None when the store does not hold them (between a
        test of ``in`` and a ``get``, a spare blob may go)."""
        try:
            return self.get(sha256)
        except MissingBlobError:
            return None

    @property
    def nbytes(self) -> int:
        """The bytes of every blob kept (held or spare)."""
        with self._lock:
            self._settle()
            return sum(len(data) for data in self._blobs.values())

    @property
    def spare_nbytes(self) -> int:
        """The bytes of the blobs kept that nothing holds."""
        with self._lock:
            self._settle()
            return self._spare_size

    def _hold(self, sha256: str, holder: object) -> None:
        holders = self._holders.setdefault(sha256, {})
        key = id(holder)
        if key in holders and holders[key]() is holder:
            return
        holders[key] = weakref.ref(holder, partial(self._released, sha256, key))
        if sha256 in self._spare:
            del self._spare[sha256]
            self._spare_size -= len(self._blobs[sha256])

    def _released(self, sha256: str, key: int, _ref: object = None) -> None:
        # Called by the collector, in whatever thread freed the holder, maybe while this thread
        # holds the lock: noted, and settled now if the lock is free, else by the next call.
        self._gone.append((sha256, key))
        if self._lock.acquire(blocking=False):
            try:
                self._settle()
            finally:
                self._lock.release()

    def _settle(self) -> None:
        if not self._gone:
            return
        while self._gone:
            sha, key = self._gone.pop()
            holders = self._holders.get(sha)
            ref = holders.get(key) if holders is not None else None
            if holders is None or ref is None or ref() is not None:
                continue  # (a new holder took the id of the one that died)
            del holders[key]
            if not holders:
                del self._holders[sha]
                self._spare[sha] = None
                self._spare_size += len(self._blobs[sha])
        self._trim()

    def _trim(self) -> None:
        limit = self.spare_bytes
        if limit is None:
            return
        while self._spare_size > limit and self._spare:
            sha, _ = self._spare.popitem(last=False)
            self._spare_size -= len(self._blobs.pop(sha))

    def __contains__(self, sha256: object) -> bool:
        return sha256 in self._blobs

    def __len__(self) -> int:
        return len(self._blobs)

    def __repr__(self) -> str:
        return f"<MemoryBlobs {self.name!r}: {len(self._blobs)} blob(s)>"


PROCESS_BLOBS = MemoryBlobs("this process's memory (no blob store was given)", spare_bytes=SPARE_BYTES)
"""The store of parts stored with no store given (``Message.to_dict()``): they load back in
this process while a holder keeps them (see the module's text); a session gives its own store to
keep them on disk."""


__all__ = ["PROCESS_BLOBS", "SPARE_BYTES", "BlobStore", "MemoryBlobs", "sha256_of"]
