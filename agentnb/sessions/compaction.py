"""Compaction: folding a session's log into a new snapshot once the log outgrows it.

Every byte appended is then rewritten a bounded number of times (O(change) per turn, amortised).
A compaction the log's growth calls for runs in a thread, and its parsing and encoding in a
child process (``worker.py``), so the turns saved meanwhile wait for neither; the lock is held
only to read the files and to put the new snapshot in place. The fold itself is ``folding.py``.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

from . import segments as seg
from .folding import Folded, Read, fold
from .redaction import env_secrets
from .storage import SessionStorage


class LogCompaction(SessionStorage):
    """Folding the log of a backend's sessions into their snapshots: now (``compact``), or in
    the background as the log grows (``flush`` waits for those)."""

    compact_min_bytes: int = 1 << 19
    """The log is folded into the snapshot once it is larger than this and than half the
    snapshot: each byte appended costs at most two of rewriting, and a load reads at most half
    a snapshot's worth of log (a long history's older turns are not in the snapshot)."""
    compact_in_background: bool = True
    """A compaction the log's growth calls for runs in a thread, off the turn's path: the lock
    is held only to read the files and to write the new snapshot, and the parsing and encoding
    in between wait for nobody (``flush()`` waits for it). ``compact()`` runs at once."""
    compact_in_subprocess: bool = True
    """A background compaction parses and encodes in a child process (``worker.py``), so
    that the turns saved meanwhile do not wait for this interpreter; its ``parse`` must pickle.
    Where no child process can start it runs in the thread."""

    def __init__(self) -> None:
        self._compactions: dict[str, threading.Thread] = {}
        self._compact_again: set[str] = set()
        self._compacting = threading.Lock()

    def compact(self, session_id: str) -> None:
        """Fold the log into the snapshot now (it happens by itself as the log grows)."""
        with self._lock(session_id):
            self._compact(session_id)

    def flush(self) -> None:
        """Wait for the compactions running in the background to finish."""
        for thread in list(self._compactions.values()):
            thread.join()

    def _compact_soon(self, session_id: str) -> None:
        # One compaction per session at a time; the log's growth while it runs calls for
        # another as soon as it ends (in its thread), so that none is lost and flush() leaves
        # a log no longer than the rule allows.
        with self._compacting:
            if session_id in self._compactions:
                self._compact_again.add(session_id)
                return
            thread = threading.Thread(
                target=self._compactions_of, args=(session_id,), name=f"agentnb compaction of {session_id}"
            )
            self._compactions[session_id] = thread
        thread.start()

    def _compactions_of(self, session_id: str) -> None:
        while True:
            self._compact_off_path(session_id)
            with self._compacting:
                if session_id not in self._compact_again:
                    del self._compactions[session_id]
                    return
                self._compact_again.discard(session_id)

    def _compact_off_path(self, session_id: str) -> None:
        """Fold the log into the snapshot holding the lock only to read the files and to rename
        the new snapshot (written and synced before) into place. If the
        files changed otherwise than by appends meanwhile (a whole save, another process's
        compaction), nothing is written: the log's further growth calls for another."""
        try:
            with self._lock(session_id):
                fetched = self._fetch(session_id)
            if fetched is None:
                return
            folded = self._fold_elsewhere(fetched.parse)
            made = self._put_segments(session_id, folded)
            # The snapshot is written (and synced) before the lock is taken: the lock is held
            # only for the renames, so the turns saved meanwhile do not wait for the disk.
            prepared = self._prepare_snapshot(session_id, folded.text)
            with self._lock(session_id):
                if self._unchanged(session_id, fetched.token):
                    self._write_snapshot(
                        session_id, prepared, folded.seq, log_from=fetched.log_size, segments=made
                    )
                    self._drop_unnamed_segments(session_id, folded.segments)
                    self._drop_unused_blobs_locked()
                    return
                self._discard_prepared(prepared)
                if made and not self.segments_with_snapshot:  # named by no snapshot: nobody reads them
                    self._delete_segments(session_id, {key for key, _ in made})
        except Exception as exc:  # a thread's error reaches nobody: say it, the log stays as it is
            warnings.warn(
                f"agentnb: could not compact {self.describe(session_id)} ({exc}); its log is kept and loads as it is",
                stacklevel=1,
            )

    def _fold_elsewhere(self, parse: Callable[[], Read]) -> Folded:
        """``folding.fold`` in the child process (``worker.py``) when the backend's ``parse``
        can go there, else in this thread."""
        if self.compact_in_subprocess:
            from .worker import WorkerUnavailable, worker  # only where a fold runs: not at import

            try:
                return worker().call(fold, parse, self._layout(), env_secrets())
            except WorkerUnavailable:
                pass  # no child process here: the fold runs in this thread, as it would
        return fold(parse, self._layout(), env_secrets())

    def _layout(self) -> tuple[int, int] | None:
        return (seg.SPLIT_AT, seg.RECENT) if self.stores_segments else None

    def _compact(self, session_id: str) -> None:
        fetched = self._fetch(session_id)
        if fetched is None:
            return
        folded = fold(fetched.parse, self._layout(), env_secrets())
        made = self._put_segments(session_id, folded)
        self._write_snapshot(session_id, folded.text, folded.seq, segments=made)
        self._drop_unnamed_segments(session_id, folded.segments)
        self._drop_unused_blobs_locked()

    def _put_segments(self, session_id: str, folded: Folded) -> list[tuple[str, str]]:
        """Write the segments a fold made, unless the snapshot's write writes them: ``(key,
        text)`` of each, for that write."""
        if not self.segments_with_snapshot:
            for key, text in folded.made:
                self._put_segment(session_id, key, text)
        return folded.made

    def _drop_unnamed_segments(self, session_id: str, named: list[dict[str, Any]]) -> None:
        """Delete the segments the snapshot just written does not name (a module saved whole,
        a compaction that was not written): called with the lock held."""
        if self.stores_segments:
            unnamed = self._segment_keys(session_id) - {s["key"] for s in named}
            if unnamed:
                self._delete_segments(session_id, unnamed)


__all__ = ["LogCompaction"]
