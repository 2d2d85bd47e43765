"""JSONSession: ``<save_dir>/<session_id>.json`` (AgentScope's layout) plus an append-only
``<session_id>.jsonl`` log of per-turn changes, and a ``<session_id>.lock`` file lock."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..errors import SessionFormatError
from . import format as fmt
from .base import SessionBase, check_session_id
from .fileio import _last_newline_end, append_durably, atomic_write


class JSONSession(SessionBase):
    """Sessions as JSON files in ``save_dir`` (created when first written)."""

    def __init__(self, save_dir: str | os.PathLike[str] = "./", *, compact_min_bytes: int | None = None) -> None:
        super().__init__()
        self.save_dir = Path(save_dir)
        if compact_min_bytes is not None:
            self.compact_min_bytes = compact_min_bytes
        self._tail: dict[str, tuple[int, int, int]] = {}

    def __repr__(self) -> str:
        return f"JSONSession({str(self.save_dir)!r})"

    # -- paths ------------------------------------------------------------------------------

    def _get_save_path(self, session_id: str) -> Path:
        """``<save_dir>/<session_id>.json`` (AgentScope's name for it)."""
        return self.save_dir / f"{check_session_id(session_id)}.json"

    def log_path(self, session_id: str) -> Path:
        return self.save_dir / f"{check_session_id(session_id)}.jsonl"

    def describe(self, session_id: str) -> str:
        return str(self._get_save_path(session_id))

    def _lock(self, session_id: str) -> FileLock:
        self.save_dir.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.save_dir / f"{session_id}.lock"))

    def _exists(self, session_id: str) -> bool:
        return self._get_save_path(session_id).exists() or self.log_path(session_id).exists()

    # -- reading ----------------------------------------------------------------------------

    def _read(self, session_id: str) -> tuple[dict[str, Any], int, Iterator[tuple[dict[str, Any], str]]] | None:
        snap, log = self._get_save_path(session_id), self.log_path(session_id)
        if not snap.exists() and not log.exists():
            return None
        modules: dict[str, Any] = {}
        seq = 0
        if snap.exists():
            modules, seq = fmt.parse_snapshot(_read_text(snap), str(snap))
        entries = list(_log_entries(log)) if log.exists() else []
        return modules, seq, iter(entries)

    def _last_seq(self, session_id: str) -> int:
        log = self.log_path(session_id)
        try:
            st = log.stat()
        except FileNotFoundError:
            snap = self._get_save_path(session_id)
            return fmt.parse_snapshot(_read_text(snap), str(snap))[1] if snap.exists() else 0
        cached = self._tail.get(session_id)
        if cached and cached[:2] == (st.st_size, st.st_mtime_ns):
            return cached[2]
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
            seq = fmt.parse_snapshot(_read_text(snap), str(snap))[1] if snap.exists() else 0
        if end == st.st_size:  # a torn tail must still be cut by the next append
            self._tail[session_id] = (st.st_size, st.st_mtime_ns, seq)
        return seq

    # -- writing ----------------------------------------------------------------------------

    def _write_snapshot(self, session_id: str, text: str, seq: int) -> None:
        atomic_write(self._get_save_path(session_id), text.encode("utf-8"))
        log = self.log_path(session_id)
        if log.exists():
            # The snapshot holds everything up to seq; the log restarts from there. A crash
            # between the two renames leaves old lines that loading skips by their seq.
            atomic_write(log, (fmt.dumps({"v": fmt.VERSION, "seq": seq, "op": "base"}) + "\n").encode())
            self._remember_tail(session_id, seq)

    def _append(self, session_id: str, lines: list[str], first_seq: int) -> tuple[int, int]:
        log = self.log_path(session_id)
        cached = self._tail.get(session_id)
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        size = append_durably(log, data, expected_size=cached[0] if cached else None)
        self._remember_tail(session_id, first_seq + len(lines) - 1)
        try:
            snapshot_size = self._get_save_path(session_id).stat().st_size
        except FileNotFoundError:
            snapshot_size = 0
        return size, snapshot_size

    def _remember_tail(self, session_id: str, seq: int) -> None:
        st = self.log_path(session_id).stat()
        self._tail[session_id] = (st.st_size, st.st_mtime_ns, seq)


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionFormatError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); it is not a session file") from None


def _log_entries(path: Path) -> Iterator[tuple[dict[str, Any], str]]:
    data = path.read_bytes()
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
    for number, raw in enumerate(lines, start=1):
        if raw.strip():
            yield fmt.parse_line(raw, f"{path} line {number}"), f"{path} line {number}"
