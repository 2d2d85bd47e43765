"""JSONSession: ``<save_dir>/<session_id>.json`` (AgentScope's layout) plus an append-only
``<session_id>.jsonl`` log of per-turn changes, a ``<session_id>.lock`` file lock, and a long
history's older turns in ``<session_id>.turns-<key>.json`` segments (``segments.py``)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import SessionFormatError, SessionWriteError
from . import format as fmt
from . import segments as seg
from .base import SessionBase, check_session_id
from .blobs import FOLDER, DirectoryBlobs, referenced
from .codec import tagged
from .fileio import (
    _last_newline_end,
    append_durably,
    atomic_write,
    commit_prepared,
    discard_prepared,
    file_lock,
    is_file,
    prepare_write,
    read_file,
    remove_leftovers,
)
from .folding import Read
from .storage import Fetched


class JSONSession(SessionBase):
    """Sessions as JSON files in ``save_dir`` (created when first written)."""

    stores_segments = True

    def __init__(
        self, save_dir: str | os.PathLike[str] = "./", *, compact_min_bytes: int | None = None
    ) -> None:
        super().__init__()
        self.save_dir = Path(save_dir)
        self.blobs: DirectoryBlobs = DirectoryBlobs(self.save_dir / FOLDER)
        """The images and files of every session here: ``<save_dir>/blobs/<sha256>.<ext>``."""
        if compact_min_bytes is not None:
            self.compact_min_bytes = compact_min_bytes
        # (inode, size, mtime) of the log as last written here, and its last seq: an append
        # by another process changes the size, a compaction the inode.
        self._tail: dict[str, tuple[int, int, int, int]] = {}
        self._cleaned: set[str] = set()

    def __repr__(self) -> str:
        return f"JSONSession({str(self.save_dir)!r})"

    # -- paths ------------------------------------------------------------------------------

    def _get_save_path(self, session_id: str) -> Path:
        """``<save_dir>/<session_id>.json`` (AgentScope's name for it)."""
        return self.save_dir / f"{check_session_id(session_id)}.json"

    def log_path(self, session_id: str) -> Path:
        return self.save_dir / f"{check_session_id(session_id)}.jsonl"

    def describe(self, session_id: str) -> str:
        """The session's file, for messages: ``<session_id>.json``, or its ``.jsonl`` log when
        that is all there is (a session not compacted yet)."""
        snapshot, log = self._get_save_path(session_id), self.log_path(session_id)
        return str(log if not is_file(snapshot) and is_file(log) else snapshot)

    def ignore_local_files(self, session_id: str) -> None:
        """Name this session's lock file and unfinished writes in ``.gitignore`` in the folder
        (created if missing): they belong to this machine; the ``.json``, ``.jsonl`` and
        segment files are what gets committed. A folder that cannot be written is left alone."""
        path = self.save_dir / ".gitignore"
        rules = [f"/{check_session_id(session_id)}.lock", f"/.{session_id}.*"]
        try:
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
            missing = [r for r in rules if r not in text.splitlines()]
            if not missing:
                return
            self.save_dir.mkdir(parents=True, exist_ok=True)
            head = (
                ""
                if text
                else "# agentnb: lock files and unfinished writes stay on this machine; commit the rest\n"
            )
            sep = "" if not text or text.endswith("\n") else "\n"
            with open(path, "a", encoding="utf-8") as f:
                f.write(head + sep + "".join(r + "\n" for r in missing))
        except OSError:
            pass

    def drop_unused_blobs(self, older_than: float = 600.0) -> list[Path]:
        """Delete the blobs no session of this folder refers to any more (a figure replaced when
        a recording was made again), once they are ``older_than`` seconds old: a younger one may
        be a save's whose text is not written yet. Returns the files deleted."""
        try:
            names = sorted(os.listdir(self.save_dir))
            texts = [
                (self.save_dir / name).read_bytes()
                for name in names
                if name.endswith((".json", ".jsonl")) and not name.startswith(".")
            ]
        except OSError:  # a session that cannot be read may need any blob: none is dropped
            return []
        return self.blobs.drop_unused(set(referenced(texts)), older_than)

    def _drop_unused_blobs_locked(self) -> None:
        if self.blobs.folder.is_dir():  # (a folder of sessions without images has nothing to drop)
            self.drop_unused_blobs()

    def _lock(self, session_id: str) -> AbstractContextManager[None]:
        return file_lock(self.save_dir / f"{session_id}.lock")

    def _exists(self, session_id: str) -> bool:
        # Both checked, so a damaged one is an error even when the other is missing.
        snapshot, log = is_file(self._get_save_path(session_id)), is_file(self.log_path(session_id))
        return snapshot or log

    # -- reading ----------------------------------------------------------------------------

    def _fetch(self, session_id: str) -> Fetched | None:
        snap, log = self._get_save_path(session_id), self.log_path(session_id)
        has_snap, has_log = is_file(snap), is_file(log)
        if not has_snap and not has_log:
            return None
        token = self._token(session_id)
        text = read_file(snap) if has_snap else None
        data = read_file(log) if has_log else b""
        return Fetched(partial(_parse, text, data, snap, log), token, len(data))

    def _token(self, session_id: str) -> tuple[Any, Any]:
        """The snapshot as it is (inode, size, time) and the log's inode: appends keep both."""
        snap, log = _identity(self._get_save_path(session_id)), _identity(self.log_path(session_id))
        return snap, log and log[0]

    def _unchanged(self, session_id: str, token: Any) -> bool:
        return self._token(session_id) == token

    def _last_seq(self, session_id: str) -> int:
        log = self.log_path(session_id)
        if not is_file(log):
            snap = self._get_save_path(session_id)
            return fmt.parse_snapshot(_read_text(snap), str(snap))[1] if is_file(snap) else 0
        st = log.stat()
        cached = self._tail.get(session_id)
        if cached and cached[:3] == (st.st_ino, st.st_size, st.st_mtime_ns):
            return cached[3]
        with open(log, "rb") as f:
            end = _last_newline_end(f, st.st_size)
            if end == 0:
                seq = 0
            else:
                start = _last_newline_end(f, end - 1)
                f.seek(start)
                seq = fmt.parse_line(f.read(end - start), f"{log} (last line)")["seq"]
        if end == 0:
            snap = self._get_save_path(session_id)
            seq = fmt.parse_snapshot(_read_text(snap), str(snap))[1] if is_file(snap) else 0
        if end == st.st_size:  # a torn tail must still be cut by the next append
            self._tail[session_id] = (st.st_ino, st.st_size, st.st_mtime_ns, seq)
        return seq

    # -- segments of turns stored apart -------------------------------------------------------

    def _segment_path(self, session_id: str, key: str) -> Path:
        return self.save_dir / f"{session_id}.turns-{key}.json"

    def _put_segment(self, session_id: str, key: str, text: str) -> None:
        path = self._segment_path(session_id, key)
        with _writing(path):
            atomic_write(path, text.encode("utf-8"))

    def _get_segment(self, session_id: str, key: str) -> tuple[str, str]:
        path = self._segment_path(session_id, key)
        if not is_file(path):
            raise SessionFormatError(
                f"{path} is missing: the session was saved whole or its files were moved since it was "
                f"loaded; load the session again"
            )
        return _read_text(path), str(path)

    def _segment_keys(self, session_id: str) -> set[str]:
        prefix, suffix = f"{session_id}.turns-", ".json"
        try:
            names = os.listdir(self.save_dir)
        except OSError:
            return set()
        keys = (
            name[len(prefix) : -len(suffix)]
            for name in names
            if name.startswith(prefix) and name.endswith(suffix)
        )
        return {key for key in keys if seg.KEY.match(key)}

    def _delete_segments(self, session_id: str, keys: set[str]) -> None:
        for key in keys:
            try:
                self._segment_path(session_id, key).unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:  # kept: it only takes room
                warnings.warn(
                    f"agentnb: could not delete {self._segment_path(session_id, key)}: {exc}", stacklevel=2
                )

    # -- writing ----------------------------------------------------------------------------

    def _prepare_snapshot(self, session_id: str, text: str) -> Path:
        snap = self._get_save_path(session_id)
        with _writing(snap):
            return prepare_write(snap, text.encode("utf-8"))

    def _discard_prepared(self, prepared: Any) -> None:
        discard_prepared(prepared)

    def _write_snapshot(
        self,
        session_id: str,
        text: Any,
        seq: int,
        *,
        log_from: int | None = None,
        segments: Sequence[tuple[str, str]] = (),
    ) -> None:
        snap, log = self._get_save_path(session_id), self.log_path(session_id)
        self._clean(session_id, force=True)
        with _writing(snap):
            if isinstance(text, Path):
                commit_prepared(text, snap)
            else:
                atomic_write(snap, text.encode("utf-8"))
        if is_file(log):
            # The snapshot holds everything up to seq; the log restarts from there, with what
            # was appended while the snapshot was being made. A crash between the two renames
            # leaves old lines that loading skips by their seq.
            later = read_file(log, log_from) if log_from is not None else b""
            if later and not later.endswith(b"\n"):  # a torn line: the next append cuts it
                later = later[: later.rfind(b"\n") + 1]
            with _writing(log):
                atomic_write(
                    log, (fmt.dumps({"v": fmt.VERSION, "seq": seq, "op": "base"}) + "\n").encode() + later
                )
            self._remember_tail(session_id, _last_seq_in(later, seq))

    def _append(self, session_id: str, lines: list[str], first_seq: int) -> tuple[int, int]:
        log = self.log_path(session_id)
        self._clean(session_id)
        cached = self._tail.get(session_id)
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        with _writing(log):
            size = append_durably(log, data, expected_size=cached[1] if cached else None)
        self._remember_tail(session_id, first_seq + len(lines) - 1)
        try:
            snapshot_size = self._get_save_path(session_id).stat().st_size
        except FileNotFoundError:
            snapshot_size = 0
        return size, snapshot_size

    def _clean(self, session_id: str, force: bool = False) -> None:
        """Remove what killed writers left (once per session here, and at every snapshot)."""
        if force or session_id not in self._cleaned:
            remove_leftovers(self._get_save_path(session_id))
            remove_leftovers(self.log_path(session_id))
            self._cleaned.add(session_id)

    def _remember_tail(self, session_id: str, seq: int) -> None:
        st = self.log_path(session_id).stat()
        self._tail[session_id] = (st.st_ino, st.st_size, st.st_mtime_ns, seq)


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Turns an OSError while writing ``path`` (disk full, read-only) into a SessionWriteError naming it."""
    try:
        yield
    except OSError as exc:
        raise SessionWriteError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _last_seq_in(lines: bytes, default: int) -> int:
    """The seq of the last of whole log ``lines`` (``default`` when there are none)."""
    last = lines.rstrip(b"\n").rpartition(b"\n")[2]
    return fmt.parse_line(last, "the log's last line")["seq"] if last.strip() else default


def _parse(snapshot: bytes | None, data: bytes, snap: Path, log: Path) -> Read:
    """The snapshot and log as read: a module-level function of bytes, so that a fold can
    send it to another process (``worker.py``)."""
    text = _decode(snapshot, snap) if snapshot is not None else None
    modules, seq, segments = fmt.parse_snapshot_meta(text, str(snap)) if text is not None else ({}, 0, [])
    entries = list(_log_entries(log, data))
    is_tagged = (text is not None and tagged(text)) or tagged(data)
    blobs = referenced([text or "", data])
    return Read(modules, seq, iter(entries), is_tagged, seg.check_segments(segments, str(snap)), blobs)


def _read_text(path: Path) -> str:
    return _decode(read_file(path), path)


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionFormatError(
            f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); it is not a session file"
        ) from None


def _log_entries(path: Path, data: bytes) -> Iterator[tuple[dict[str, Any], str]]:
    if not data:
        return
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if tail.strip():
        warnings.warn(
            f"agentnb: ignored an incomplete last line in {path} (a save was interrupted); "
            f"the session loads as of the last complete save",
            stacklevel=3,
        )
    previous = None
    for number, raw in enumerate(lines, start=1):
        if raw.strip():
            where = f"{path} line {number}"
            line = fmt.parse_line(raw, where)
            # Every save appends after the last seq, under the lock: a seq that does not grow
            # is a line copied, moved or edited by something else.
            if previous is not None and line["seq"] <= previous:
                raise SessionFormatError(
                    f"{where} has seq {line['seq']} after seq {previous}: the log was duplicated or "
                    f"reordered; restore it from a backup, or remove the lines out of order"
                )
            previous = line["seq"]
            yield line, where
