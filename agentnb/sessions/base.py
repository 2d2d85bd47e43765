"""SessionBase: AgentScope's save/load by session id, plus per-turn appends.

A backend stores, per session id, a snapshot ``{module: state_dict}`` and a log of changes
(see ``format.py``). ``save_session_state`` writes a whole snapshot (AgentScope's layout);
``append_session_state`` writes only what changed since this session object last saved or
loaded each module, and folds the log into a new snapshot once the log outgrows it, so every
byte is rewritten a bounded number of times (O(change) per turn, amortised).
"""

from __future__ import annotations

import abc
import asyncio
import gc
import logging
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import Any, NamedTuple

from ..errors import SessionEncodeError, SessionFormatError, SessionNotFoundError
from ..state.modules import is_state_module
from . import folding
from . import format as fmt
from . import segments as seg
from .codec import decode, encode
from .folding import Folded, Modules, Read, apply_log, fold, snapshot_text
from .repeats import drop_repeats

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)

logger = logging.getLogger("agentnb.sessions")
"""Where sessions log what they skip (INFO: a session loaded with allow_not_exist that is not there)."""


def check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not _SESSION_ID.match(session_id) or ".." in session_id:
        raise ValueError(
            f"session id {session_id!r} must be 1-128 letters, digits, '.', '_' or '-' "
            f"(it names a file), starting with a letter or digit"
        )
    return session_id


def user_session_id(session_id: str, user_id: str = "") -> str:
    """The stored id: ``<user_id>_<session_id>`` with a user id (AgentScope), else the session id."""
    if not isinstance(user_id, str):
        raise ValueError(f"user_id must be a string, got {type(user_id).__name__}")
    check_session_id(session_id)
    return check_session_id(f"{user_id}_{session_id}") if user_id else session_id


def _secrets() -> list[str]:
    """Values of credential-like environment variables, which must never reach a file."""
    return [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8]


def redact(text: str) -> str:
    """Defence in depth: replace any credential from the environment by ``[redacted]``."""
    return folding.redact(text, _secrets())


class Fetched(NamedTuple):
    """A session's stored text as read under the lock, parsed later (``parse``)."""

    parse: Callable[[], Read]
    """The snapshot and log entries parsed (SessionFormatError when they do not parse)."""
    token: Any
    """What ``_unchanged`` compares to tell that only appends happened since."""
    log_size: int
    """Bytes of log read (the JSON backend keeps what was appended after them)."""


class SessionBase(abc.ABC):
    """Save and load state modules by session id (AgentScope semantics, plus appends).

    Subclasses store bytes: ``_read``, ``_write_snapshot``, ``_append`` and ``_lock``.
    """

    compact_min_bytes: int = 1 << 19
    """The log is folded into the snapshot once it is larger than this and than half the
    snapshot: each byte appended costs at most two of rewriting, and a load reads at most half
    a snapshot's worth of log (a long history's older turns are not in the snapshot)."""
    stores_segments: bool = False
    """Whether this backend stores a long history's older turns apart (``segments.py``)."""
    segments_with_snapshot: bool = False
    """Whether new segments are written by ``_write_snapshot`` (in its transaction) rather
    than by ``_put_segment`` ahead of it."""
    compact_in_background: bool = True
    """A compaction the log's growth calls for runs in a thread, off the turn's path: the lock
    is held only to read the files and to write the new snapshot, and the parsing and encoding
    in between wait for nobody (``flush()`` waits for it). ``compact()`` runs at once."""
    compact_in_subprocess: bool = True
    """A background compaction parses and encodes in a child process (``worker.py``), so
    that the turns saved meanwhile do not wait for this interpreter; its ``parse`` must pickle.
    Where no child process can start it runs in the thread."""

    def __init__(self) -> None:
        self._cursors: dict[tuple[str, str], Any] = {}
        self._compactions: dict[str, threading.Thread] = {}
        self._compact_again: set[str] = set()
        self._compacting = threading.Lock()
        self._started_empty: set[tuple[str, str]] = set()

    # -- storage (subclasses) ---------------------------------------------------------------

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

    # -- reading ----------------------------------------------------------------------------

    def read_modules(self, session_id: str) -> Modules | None:
        """The stored ``{module: state_dict}`` (not yet decoded: see ``Modules.tagged``), the
        last seq, or None."""
        check_session_id(session_id)
        raw = self._read(session_id)
        return None if raw is None else apply_log(raw)

    def _module_state(self, session_id: str, found: Modules, name: str) -> Any:
        """Module ``name``'s stored state, decoded, its turns stored apart handed over unread."""
        state = found.modules[name]
        where = f"{self.describe(session_id)} (module {name!r})"
        if found.tagged and isinstance(state, (dict, list)):
            state = decode(state, where)
        if found.segments:
            state = seg.attach(state, name, found.segments, partial(self._read_segment, session_id))
        return state

    def _read_segment(self, session_id: str, info: dict[str, Any]) -> list[Any]:
        text, where = self._get_segment(session_id, info["key"])
        return seg.parse(text, info, where)

    # -- AgentScope API -----------------------------------------------------------------------

    def save_session_state_sync(self, session_id: str, user_id: str = "", **state_modules: Any) -> None:
        """Write the named modules' whole state; other modules already saved are kept.
        With ``user_id`` the session is ``<user_id>_<session_id>`` (AgentScope's file name)."""
        session_id = user_session_id(session_id, user_id)
        encoded = {name: self._encode_module(name, module) for name, module in state_modules.items()}
        with self._lock(session_id):
            current = self.read_modules(session_id) if self._exists(session_id) else None
            modules, seq = (current.modules, current.seq) if current is not None else ({}, 0)
            if current is not None:
                seq = max(seq, self._last_seq(session_id))
            modules.update(encoded)
            # A module saved whole holds its turns inline: its segments are no longer needed.
            kept = [s for s in current.segments if s["module"] not in encoded] if current is not None else []
            self._write_snapshot(session_id, self._snapshot_text(modules, seq, kept), seq)
            self._drop_unnamed_segments(session_id, kept)
        for name, module in state_modules.items():
            self._set_cursor(session_id, name, module)

    def load_session_state_sync(
        self, session_id: str, allow_not_exist: bool = True, user_id: str = "", **state_modules: Any
    ) -> bool:
        """Load the named modules; returns whether a saved session was found.

        A module the session does not hold keeps its current state.
        """
        session_id = user_session_id(session_id, user_id)
        with _no_cycle_collection(), self._lock(session_id):
            found = self.read_modules(session_id) if self._exists(session_id) else None
        if found is None:
            if not allow_not_exist:
                raise SessionNotFoundError(
                    f"no saved session {session_id!r} at {self.describe(session_id)}; check the "
                    f"session id and folder, or pass allow_not_exist=True"
                )
            logger.info(
                "session %r does not exist at %s; loading is skipped", session_id, self.describe(session_id)
            )
            return False
        modules = found.modules
        where = self.describe(session_id)
        with _no_cycle_collection():
            for name, module in state_modules.items():
                if name not in modules:
                    continue
                state = self._module_state(session_id, found, name)
                _load_module(module, state, f"{where} (module {name!r})")
                self._set_cursor(session_id, name, module)
        return True

    async def save_session_state(self, session_id: str, user_id: str = "", **state_modules: Any) -> None:
        """``save_session_state_sync`` for async code (the file work runs in a thread)."""
        await asyncio.to_thread(self.save_session_state_sync, session_id, user_id, **state_modules)

    async def load_session_state(
        self, session_id: str, allow_not_exist: bool = True, user_id: str = "", **state_modules: Any
    ) -> bool:
        """``load_session_state_sync`` for async code."""
        return await asyncio.to_thread(
            self.load_session_state_sync, session_id, allow_not_exist, user_id, **state_modules
        )

    # -- per-turn appends ---------------------------------------------------------------------

    def append_session_state_sync(
        self, session_id: str, *, _after_turn: bool = False, **state_modules: Any
    ) -> None:
        """Save what changed in each module since this object last saved or loaded it.

        A module with deltas (``state_cursor`` / ``state_delta``, as an agent has: the new turns,
        the changed state keys, the new messages) writes only those; others are written whole
        when their state changed. What this object remembers as saved moves only once the write
        is on disk, so a failed save is retried whole by the next one. (``_after_turn`` is the
        autosave's: the turns' own change records say which keys changed.)
        """
        check_session_id(session_id)
        with self._lock(session_id):
            exists = self._exists(session_id)
            lines: list[dict[str, Any]] = []
            new_cursors: dict[str, Any] = {}
            for name, module in state_modules.items():
                cursor = self._cursors.get((session_id, name)) if exists else None
                if cursor is None and exists and (session_id, name) in self._started_empty:
                    cursor = self._empty_cursor(session_id, name, module)
                if callable(getattr(module, "state_delta", None)):
                    found = module.state_delta(cursor, after_turn=_after_turn) if cursor is not None else None
                    if found is None:
                        lines.append(
                            {"module": name, "op": "replace", "state": self._encode_module(name, module)}
                        )
                        new_cursors[name] = module.state_cursor()
                    else:
                        ops, new_cursors[name] = found
                        if ops:
                            lines.append(
                                {"module": name, "op": "delta", "ops": [_encode_op(op, name) for op in ops]}
                            )
                else:
                    state = self._encode_module(name, module)
                    if cursor is None or cursor != state:
                        lines.append({"module": name, "op": "replace", "state": state})
                        new_cursors[name] = state
            if lines:
                seq = self._last_seq(session_id) if exists else 0
                texts = [_line_text(line, i) for i, line in enumerate(lines, start=seq + 1)]
                log_size, snapshot_size = self._append(session_id, texts, seq + 1)
                if log_size > max(snapshot_size // 2, self.compact_min_bytes):
                    if self.compact_in_background:
                        self._compact_soon(session_id)
                    else:
                        self._compact(session_id)
        for name, cursor in new_cursors.items():
            self._cursors[(session_id, name)] = cursor
            self._started_empty.discard((session_id, name))

    def start_empty(self, session_id: str, name: str) -> None:
        """Note that module ``name`` found nothing in ``session_id`` when it was attached: if
        the session exists by its first save (another process started it meanwhile), that save
        adds to what is there rather than replacing it."""
        self._cursors.pop((session_id, name), None)
        self._started_empty.add((session_id, name))

    def _empty_cursor(self, session_id: str, name: str, module: Any) -> Any:
        """A cursor for nothing stored, when the session holds ``name`` for the delta to add to
        (else None: the module is written whole). Called with the lock held."""
        if not callable(getattr(module, "state_cursor", None)):
            return None
        found = self.read_modules(session_id)
        if found is None or not isinstance(found.modules.get(name), dict):
            return None
        try:
            return module.state_cursor(empty=True)
        except TypeError:  # a module whose state_cursor knows no empty cursor
            return None

    async def append_session_state(self, session_id: str, **state_modules: Any) -> None:
        await asyncio.to_thread(self.append_session_state_sync, session_id, **state_modules)

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
                return worker().call(fold, parse, self._layout(), _secrets())
            except WorkerUnavailable:
                pass  # no child process here: the fold runs in this thread, as it would
        return fold(parse, self._layout(), _secrets())

    def _layout(self) -> tuple[int, int] | None:
        return (seg.SPLIT_AT, seg.RECENT) if self.stores_segments else None

    def _compact(self, session_id: str) -> None:
        fetched = self._fetch(session_id)
        if fetched is None:
            return
        folded = fold(fetched.parse, self._layout(), _secrets())
        made = self._put_segments(session_id, folded)
        self._write_snapshot(session_id, folded.text, folded.seq, segments=made)
        self._drop_unnamed_segments(session_id, folded.segments)

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

    # -- helpers ----------------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return self._exists(check_session_id(session_id))

    def _snapshot_text(
        self, modules: dict[str, Any], seq: int, segments: list[dict[str, Any]] | None = None
    ) -> str:
        return snapshot_text(modules, seq, segments, _secrets())

    def _encode_module(self, name: str, module: Any) -> Any:
        if name == fmt.META_KEY:
            raise ValueError(f"{fmt.META_KEY!r} is reserved; give the module another name")
        if is_state_module(module):
            state = module.state_dict()
        else:
            raise SessionEncodeError(
                f"cannot save {name}: a {type(module).__name__} is not a state module; pass objects "
                f"with state_dict()/load_state_dict() (Agent, State, Toolkit, History, StateModule)"
            )
        return encode(state, name)

    def _set_cursor(self, session_id: str, name: str, module: Any) -> None:
        if callable(getattr(module, "state_cursor", None)):
            self._cursors[(session_id, name)] = module.state_cursor()
        else:
            self._cursors[(session_id, name)] = self._encode_module(name, module)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Loading builds many objects and frees none: the cycle collector, which would scan the
    whole heap again and again meanwhile, waits until it is done (it more than doubled a load)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _load_module(module: Any, state: Any, where: str) -> None:
    """``module.load_state_dict(state)``, where a state of the wrong shape is a
    SessionFormatError naming the file and the module (modules check before they change)."""
    try:
        module.load_state_dict(state)
    except SessionFormatError as exc:
        raise SessionFormatError(f"{where}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        what = f"{type(exc).__name__}: {' '.join(str(exc).splitlines()[:3])}"[:300]
        raise SessionFormatError(f"{where} does not hold a state this module can load ({what})") from None


def _line_text(line: dict[str, Any], seq: int) -> str:
    """A log line as written: each long text once (``repeats``), credentials redacted."""
    line, repeats = drop_repeats(line)
    if repeats:
        line = {**line, fmt.REPEATS: repeats}
    return redact(fmt.dumps({"v": fmt.VERSION, "seq": seq, **line}))


def _encode_op(op: dict[str, Any], module: str) -> dict[str, Any]:
    """A delta op with its values encoded (errors name the module and the path)."""
    where = ".".join([module, *op.get("path", [])])
    if op["op"] == "merge":
        return {**op, "set": encode(op["set"], where)}
    if op["op"] == "splice":
        return {**op, "append": encode(op["append"], where)}
    return op
