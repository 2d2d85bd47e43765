"""Agno's ``db=`` classes as agentnb sessions, so ``Agent(db=SqliteDb(db_file=...))`` ports by
changing imports: ``SqliteDb`` is a SQLite file, ``JsonDb`` a folder of JSON files, ``InMemoryDb``
this process's memory. ``Agent(db=...)`` saves after every turn under the agent's ``session_id``
(a new one per agent unless ``session_id=`` names one, as in Agno) and restores what it holds."""

from __future__ import annotations

import os

from .json_session import JSONSession
from .memory_session import MemorySession
from .sqlite_session import SQLiteSession


class SqliteDb(SQLiteSession):
    """Agno's ``SqliteDb(db_file="tmp/agents.db")``: sessions in that SQLite file."""

    def __init__(self, db_file: str | os.PathLike[str] = "agentnb.db") -> None:
        super().__init__(db_file)


class JsonDb(JSONSession):
    """Agno's ``JsonDb(db_path="tmp/json_db")``: sessions as JSON files in that folder."""

    def __init__(self, db_path: str | os.PathLike[str] = "./") -> None:
        super().__init__(db_path)


class InMemoryDb(MemorySession):
    """Agno's ``InMemoryDb()``: sessions in this process's memory."""


__all__ = ["InMemoryDb", "JsonDb", "SqliteDb"]
