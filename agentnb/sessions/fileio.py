"""Crash-safe file primitives: atomic replace, durable append, directory fsync, and the checks
and locks that keep reads of damaged or read-only sessions safe."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from filelock import FileLock

from ..errors import SessionError, SessionFormatError

_READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS)


def is_file(path: Path) -> bool:
    """Whether a session file exists at ``path``: False when nothing is there, True for a
    regular file, SessionFormatError for anything else (a folder, a FIFO that would block the
    read forever, a device, a symlink loop)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SessionFormatError(f"{path} is a symlink loop, not a session file; remove it") from None
        if exc.errno in _READ_ONLY:
            raise SessionError(f"cannot read {path}: {exc.strerror}") from None
        raise SessionFormatError(f"{path} cannot be read as a session file ({exc.strerror})") from None
    if stat.S_ISREG(mode):
        return True
    what = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
    raise SessionFormatError(f"{path} is {what}, not a session file; move it away")


def read_file(path: Path, offset: int = 0) -> bytes:
    """The bytes of a session file from ``offset`` on (checked with ``is_file`` first)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read()
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from None


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An inter-process lock held in the file ``path``. In a folder this process cannot write
    to, no lock can be taken, and none is needed to read: the body then runs unlocked (a
    write there fails by itself, with a clear error)."""
    lock = FileLock(str(path))
    held = True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Polled every 2 ms, not filelock's 50: a background compaction waiting between two
        # turns' saves gets its turn, rather than starving behind a loop of quick turns.
        lock.acquire(poll_interval=0.002)
    except OSError as exc:
        if exc.errno not in _READ_ONLY or os.access(path.parent, os.W_OK):
            raise SessionError(f"cannot lock the session with {path}: {exc.strerror or exc}") from None
        held = False
    try:
        yield
    finally:
        if held:
            lock.release()


PREPARED = ".prepared"
"""The suffix of a file written ahead of the rename that will make it ``path`` (outside the
lock; ``remove_leftovers`` leaves it to its writer for a while)."""


def remove_leftovers(path: Path, prepared_older_than: float = 600.0) -> None:
    """Delete temporary files that writers of ``path`` killed before their rename left behind
    (call with the lock held: no live writer of ``path`` can be using them). A file prepared
    ahead of the lock (``prepare_write``) may belong to a live writer: it is deleted only once
    older than ``prepared_older_than`` seconds (a live writer renames its file within moments)."""
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    prefix, now = f".{path.name}.", time.time()
    for name in names:
        if not name.startswith(prefix) or name.count(".") != path.name.count(".") + 3:
            continue
        try:
            if name.endswith(".tmp") or (
                name.endswith(PREPARED) and now - os.stat(path.parent / name).st_mtime > prepared_older_than
            ):
                os.unlink(path.parent / name)
        except OSError:
            pass


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
    commit_prepared(prepare_write(path, data, suffix=".tmp"), path)


"""The suffix of a file written ahead of the rename that will make it ``path`` (outside the
lock; ``remove_leftovers`` leaves it to its writer)."""


def _umask() -> int:
    """The process's umask now (Linux tells it without changing it; elsewhere it is set and
    put back at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(path: Path) -> int:
    """The mode a rewritten session file gets: the mode ``path`` already has, else what
    ``open()`` gives a new file (0o666 less the umask, as the append-only log gets). Not
    mkstemp's 0o600: a recording is committed and shared beside its notebook, and the log
    beside it holds the same data."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def prepare_write(path: Path, data: bytes, *, suffix: str = PREPARED) -> Path:
    """Write ``data`` durably to a new temporary file beside ``path``; ``commit_prepared``
    renames it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    try:
        if hasattr(os, "fchmod"):  # not on Windows, where mkstemp's mode is not 0o600 anyway
            os.fchmod(fd, file_mode(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        discard_prepared(Path(tmp))
        raise
    return Path(tmp)


def commit_prepared(tmp: Path, path: Path) -> None:
    """Rename a prepared file into place, durably."""
    try:
        os.replace(tmp, path)
    except BaseException:
        discard_prepared(tmp)
        raise
    fsync_dir(path.parent)


def discard_prepared(tmp: Path) -> None:
    with suppress(FileNotFoundError):
        os.unlink(tmp)


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
        try:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        except OSError:
            # Not durable: take the lines back, so the save that retries them does not append
            # them twice (best effort: on a full disk the truncation frees the space it needs).
            with suppress(OSError):
                f.truncate(size)
            raise
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
