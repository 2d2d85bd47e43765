"""Crash-safe file primitives: atomic replace, durable append, directory fsync."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # platforms without directory fds (Windows) have nothing to sync
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``: readers see the old file or the new one, never a mix,
    even when the process is killed half way (write temp, flush, fsync, rename, fsync dir)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)


def append_durably(path: Path, data: bytes, *, expected_size: int | None = None) -> int:
    """Append ``data`` (whole lines) to ``path`` and fsync; returns the new size.

    A previous writer killed mid-line leaves a tail without a newline; it never finished, so
    it is cut off before appending (the caller holds the session lock).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    with open(path, "ab+") as f:
        size = f.seek(0, os.SEEK_END)
        if size and expected_size != size:
            f.seek(size - 1)
            if f.read(1) != b"\n":
                cut = _last_newline_end(f, size)
                f.truncate(cut)
                size = cut
        f.seek(0, os.SEEK_END)
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
        size += len(data)
    if created:
        fsync_dir(path.parent)
    return size


def _last_newline_end(f, size: int) -> int:
    """Offset just after the last newline before ``size`` (0 when there is none)."""
    pos = size
    block = 1 << 16
    while pos > 0:
        start = max(0, pos - block)
        f.seek(start)
        chunk = f.read(pos - start)
        i = chunk.rfind(b"\n")
        if i >= 0:
            return start + i + 1
        pos = start
    return 0
