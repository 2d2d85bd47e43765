"""SessionBase: AgentScope's save/load by session id, plus per-turn appends.

A backend stores, per session id, a snapshot ``{module: state_dict}`` and a log of changes
(``storage.py``, ``format.py``). ``save_session_state`` writes a whole snapshot (AgentScope's
layout); ``append_session_state`` writes only what changed since this session object last saved
or loaded each module; the log is folded into a new snapshot once it outgrows it
(``compaction.py``).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from ..errors import SessionEncodeError, SessionFormatError, SessionModuleError, SessionNotFoundError
from ..state.modules import is_state_module
from . import blobs
from . import format as fmt
from . import segments as seg
from .codec import decode, encode, escape_key
from .compaction import LogCompaction
from .folding import Modules, apply_log, snapshot_text
from .redaction import env_secrets, redact
from .repeats import drop_repeats

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

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


class SessionBase(LogCompaction):
    """Save and load state modules by session id (AgentScope semantics, plus appends).

    Subclasses store text (``SessionStorage``: ``_fetch``, ``_write_snapshot``, ``_append``,
    ``_lock``, ...); compaction is ``LogCompaction``'s.
    """

    def __init__(self) -> None:
        super().__init__()
        self._cursors: dict[tuple[str, str], Any] = {}
        self._started_empty: set[tuple[str, str]] = set()

    # -- reading ----------------------------------------------------------------------------

    def read_modules(self, session_id: str) -> Modules | None:
        """The stored ``{module: state_dict}`` (not yet decoded: see ``Modules.tagged``), the
        last seq, or None."""
        check_session_id(session_id)
        raw = self._read(session_id)
        return None if raw is None else apply_log(raw)

    def _prepare_module(
        self, session_id: str, found: Modules, name: str, module: Any
    ) -> tuple[Any, Callable[[], None] | None]:
        """Module ``name``'s stored state, read and (by a module that can: ``prepare_state_dict``)
        checked, and the function that loads it (None: ``load_state_dict`` loads it). A state
        that cannot be loaded is a SessionModuleError; nothing changed."""
        where = self.describe(session_id)
        try:
            state = self._module_state(session_id, found, name)
            prepare = getattr(module, "prepare_state_dict", None)
            return state, prepare(state) if callable(prepare) else None
        except (SessionFormatError, *_NOT_LOADABLE) as exc:
            raise module_error(where, name, exc) from None

    def _module_state(self, session_id: str, found: Modules, name: str) -> Any:
        """Module ``name``'s stored state, decoded, its turns stored apart handed over unread."""
        state = found.modules[name]
        where = f"{self.describe(session_id)} (module {name!r})"
        if found.tagged and isinstance(state, (dict, list)):
            state = decode(state, where)
        if found.segments:
            state = seg.attach(state, name, found.segments, partial(self._read_segment, session_id))
        return state

    def read_blobs(self, session_id: str, found: Modules) -> None:
        """Read the images and files ``found`` refers to into this process's memory (where
        ``Message.from_dict`` finds a part's bytes); a MissingBlobError naming each missing one,
        before any is read, when some are not stored."""
        if found.blobs:
            blobs.fetch(self.blobs, found.blobs, self.describe(session_id), holder=self)

    def _read_segment(self, session_id: str, info: dict[str, Any]) -> list[Any]:
        text, where = self._get_segment(session_id, info["key"])
        blobs.fetch(self.blobs, blobs.referenced([text]), where, holder=self)
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
            text = self._snapshot_text(modules, seq, kept)
            blobs.keep(self.blobs, blobs.referenced([text]), self.describe(session_id))
            self._write_snapshot(session_id, text, seq)
            self._drop_unnamed_segments(session_id, kept)
            self._drop_unused_blobs_locked()
        for name, module in state_modules.items():
            self._set_cursor(session_id, name, module)

    def load_session_state_sync(
        self, session_id: str, allow_not_exist: bool = True, user_id: str = "", **state_modules: Any
    ) -> bool:
        """Load the named modules; returns whether a saved session was found.

        All or nothing: a module whose stored state cannot be loaded is a SessionModuleError
        and every module keeps its state. A module the session does not hold keeps its current
        state.
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
        # Every image and file first: a blob that is missing stops the load before any module changed.
        self.read_blobs(session_id, found)
        named = {name: module for name, module in state_modules.items() if name in found.modules}
        with _no_cycle_collection():
            # Every module read and checked before any changes: a team loads all or nothing.
            loads = [
                (name, module, *self._prepare_module(session_id, found, name, module))
                for name, module in named.items()
            ]
            _load_all(loads, self.describe(session_id))
            for name, module in named.items():
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
                blobs.keep(self.blobs, blobs.referenced(texts), self.describe(session_id))
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

    # -- helpers ----------------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return self._exists(check_session_id(session_id))

    def _snapshot_text(
        self, modules: dict[str, Any], seq: int, segments: list[dict[str, Any]] | None = None
    ) -> str:
        return snapshot_text(modules, seq, segments, env_secrets())

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


_NOT_LOADABLE = (KeyError, TypeError, ValueError, AttributeError, IndexError)
"""What a module's ``load_state_dict`` raises for a state of the wrong shape."""


def module_error(where: str, name: str, exc: BaseException) -> SessionModuleError:
    """The error for module ``name`` of the session at ``where``, whose state raised ``exc``."""
    prefix = f"{where} (module {name!r}): "
    if isinstance(exc, SessionFormatError):
        problem = str(exc).removeprefix(prefix)
    else:
        what = f"{type(exc).__name__}: {' '.join(str(exc).splitlines()[:3])}"[:300]
        problem = f"it does not hold a state this module can load ({what})"
    return SessionModuleError(
        f"{prefix}{problem}; nothing was loaded (every module keeps its state) and the files are left "
        f"as they are: restore them from version control or a backup",
        where=where,
        module=name,
        problem=problem,
    )


def _load_all(loads: list[tuple[str, Any, Any, Callable[[], None] | None]], where: str) -> None:
    """Load the modules read by ``_prepare_module``: first those without ``prepare_state_dict``
    (each put back from its ``state_dict()`` when one after it fails), then the checked ones."""
    unchecked = [(name, module, state) for name, module, state, load in loads if load is None]
    loaded: list[tuple[Any, Any]] = []
    try:
        for name, module, state in unchecked:
            before = module.state_dict() if len(unchecked) > 1 else None
            try:
                module.load_state_dict(state)
            except (SessionFormatError, *_NOT_LOADABLE) as exc:
                raise module_error(where, name, exc) from None
            loaded.append((module, before))
    except SessionModuleError:
        for module, before in reversed(loaded):
            module.load_state_dict(before)
        raise
    for _, _, _, load in loads:
        if load is not None:
            load()


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
        # (keys the data has escaped are unset by their escaped names: the log applies as stored)
        unset = [escape_key(key) if isinstance(key, str) else key for key in op.get("unset") or ()]
        return {**op, "set": encode(op["set"], where), "unset": unset}
    if op["op"] == "splice":
        return {**op, "append": encode(op["append"], where)}
    return op
