"""Where the bytes of images and files go when a message is stored: a ``BlobStore``, content
addressed (a blob's name is the SHA-256 of its bytes, so the same figure sent ten times is kept
once).

A stored message holds a part's hash, media type and size, never its bytes
(``Message.to_dict(blobs)``); the bytes go to the store and come back from it
(``Message.from_dict(data, blobs)``). ``MemoryBlobs`` keeps them in this process; a session's
store keeps them in files beside the notebook.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Protocol, runtime_checkable

from ..errors import MissingBlobError


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
    """A ``BlobStore`` in this process's memory (thread-safe). What ``to_dict`` uses when no
    store is given: a message stored that way loads back in this process only."""

    def __init__(self, name: str = "memory") -> None:
        self.name = name
        """How errors name the store."""
        self._blobs: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def put(self, data: bytes, media_type: str, sha256: str | None = None) -> str:
        digest = sha256 or sha256_of(data)
        with self._lock:
            self._blobs.setdefault(digest, bytes(data))
        return digest

    def get(self, sha256: str) -> bytes:
        with self._lock:
            data = self._blobs.get(sha256)
        if data is None:
            raise MissingBlobError(
                f"no blob {sha256} in {self.name} ({len(self._blobs)} blob(s) held): the message was "
                "stored in another process or with another store; load it with the store it was "
                "saved with (a session's own)"
            )
        return data

    def __contains__(self, sha256: object) -> bool:
        return sha256 in self._blobs

    def __len__(self) -> int:
        return len(self._blobs)

    def __repr__(self) -> str:
        return f"<MemoryBlobs {self.name!r}: {len(self._blobs)} blob(s)>"


PROCESS_BLOBS = MemoryBlobs("this process's memory (no blob store was given)")
"""The store of parts stored with no store given (``Message.to_dict()``): they load back in
this process; a session gives its own store to keep them on disk."""


__all__ = ["PROCESS_BLOBS", "BlobStore", "MemoryBlobs", "sha256_of"]
