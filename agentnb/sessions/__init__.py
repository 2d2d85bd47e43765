"""Sessions: save and restore agents (state, messages, every turn) as plain JSON files or SQLite.

AgentScope's API (``save_session_state`` / ``load_session_state`` by session id) with atomic,
locked writes, per-turn appends, and a documented format (docs/sessions.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import SessionFormatError
from ..history.history import History
from ..state.modules import StateModule
from .agno_db import InMemoryDb, JsonDb, SqliteDb
from .base import SessionBase, module_error
from .codec import register_encoder, unregister_encoder
from .json_session import JSONSession
from .locate import NotebookLocation, find_notebook_path, notebook_session_dir
from .memory_session import MemorySession
from .sqlite_session import SQLiteSession


def read_history(session: SessionBase, session_id: str, module: str = "agent") -> History | None:
    """The turns saved under ``module`` in a session; None when the session does not exist.

    Raises SessionModuleError (a SessionFormatError) when the module holds something that is
    not a saved state with a history."""
    found = session.read_modules(session_id) if session.exists(session_id) else None
    if found is None:
        return None
    if found.modules.get(module) is None:
        return History()
    where = session.describe(session_id)
    if not isinstance(found.modules[module], dict):
        problem = f"not a saved state (a {type(found.modules[module]).__name__})"
        raise module_error(where, module, SessionFormatError(problem))
    session.read_blobs(session_id, found)
    try:
        state = session._module_state(session_id, found, module)
        history_state = state.get("history", state)
        if not isinstance(history_state, dict):
            raise SessionFormatError(f"the history is a {type(history_state).__name__}, not an object")
        return History.from_state_dict(history_state)
    except SessionFormatError as exc:
        raise module_error(where, module, exc) from None


def load_history(
    path_or_dir: str | os.PathLike[str], session_id: str | None = None, module: str = "agent"
) -> History:
    """The turn history saved in a session, without building an agent (e.g. for replay:
    ``ReplayModel.from_history(load_history(path))``).

    ``path_or_dir`` is a session's ``.json`` / ``.jsonl`` file, a folder of sessions (then
    ``session_id`` names one), or a ``.sqlite`` / ``.db`` file (with ``session_id``).
    """
    path = Path(path_or_dir)
    session: SessionBase
    if path.suffix in (".sqlite", ".sqlite3", ".db"):
        if session_id is None:
            raise ValueError(f"load_history({str(path)!r}) needs session_id= for a SQLite database")
        session = SQLiteSession(path)
    elif path.suffix in (".json", ".jsonl"):
        session, session_id = JSONSession(path.parent), session_id or path.stem
    else:
        if session_id is None:
            raise ValueError(
                f"load_history({str(path)!r}) needs session_id= to pick a session in that folder"
            )
        session = JSONSession(path)
    history = read_history(session, session_id, module)
    if history is None:
        raise FileNotFoundError(f"no saved session {session_id!r} at {session.describe(session_id)}")
    return history


__all__ = [
    "InMemoryDb",
    "JSONSession",
    "JsonDb",
    "MemorySession",
    "NotebookLocation",
    "SQLiteSession",
    "SessionBase",
    "SqliteDb",
    "StateModule",
    "find_notebook_path",
    "load_history",
    "read_history",
    "notebook_session_dir",
    "register_encoder",
    "unregister_encoder",
]
