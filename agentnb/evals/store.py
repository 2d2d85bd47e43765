"""An evaluation's folder beside the notebook: ``analysis.agentnb/evals/NAME/``.

``manifest.json`` says what was evaluated (cases, agent definition, checks, model, repeats) and
is replaced whole, atomically, at each run. ``cases.jsonl`` gets one line per finished (case,
repeat) — its case, turn records, verdicts and judge calls — appended and fsynced before the case
gives its slot to the next one. Lines are never rewritten: a reader keeps the last line of each
(case, repeat), and a last line cut short by a crash is ignored (that case runs again).
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from ..errors import EvalStoreError

MANIFEST = "manifest.json"
LINES = "cases.jsonl"
FORMAT = 1
"""The store's format version (in the manifest)."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")


def check_name(name: Any) -> str:
    """An evaluation's name: letters, digits, ``_ . -`` (it names a folder)."""
    if not isinstance(name, str) or not _NAME.match(name) or name in (".", ".."):
        raise EvalStoreError(
            f"evaluation name {name!r} cannot name a folder; use letters, digits, '_', '.' or '-' (e.g. 'baseline')"
        )
    return name


class EvalStore:
    """The folder of one evaluation (see the module docstring)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._sync = threading.Lock()
        self._written = 0
        self._synced = 0
        self._file: Any = None
        self.torn = 0
        """Lines that did not parse when read (a write cut short)."""
        self.superseded = 0
        """Lines a later line of the same (case, repeat) replaced."""

    @property
    def lines_path(self) -> Path:
        """The append-only file of finished cases."""
        return self.folder / LINES

    def read_manifest(self) -> dict[str, Any] | None:
        """The manifest, or None when the evaluation never ran."""
        path = self.folder / MANIFEST
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise EvalStoreError(
                f"{path} does not read as JSON ({exc}); delete the folder to start this evaluation afresh"
            ) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise EvalStoreError(f"{path} is not an agentnb evaluation manifest of format {FORMAT}")
        return data

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Replace the manifest atomically (left alone when it already says the same)."""
        path = self.folder / MANIFEST
        text = json.dumps({"format": FORMAT, **manifest}, ensure_ascii=False, indent=1, default=str)
        try:
            if path.exists() and path.read_text(encoding="utf-8") == text:
                return
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{MANIFEST}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise EvalStoreError(f"cannot write {path}: {exc}") from None

    def rows(self) -> dict[tuple[str, int], dict[str, Any]]:
        """The last stored line of each (case id, repeat)."""
        out: dict[tuple[str, int], dict[str, Any]] = {}
        self.torn = self.superseded = 0
        path = self.lines_path
        if not path.exists():
            return out
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as exc:
            raise EvalStoreError(f"cannot read {path}: {exc}") from None
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                key = (str(row["case"]["id"]), int(row["repeat"]))
            except (ValueError, KeyError, TypeError):
                self.torn += 1
                continue
            if key in out:
                self.superseded += 1
            out[key] = row
        return out

    def append(self, row: dict[str, Any]) -> None:
        """Append one finished (case, repeat) and return once it is fsynced. Cases finishing
        together share an fsync: each waits for one that started after its line was written."""
        line = json.dumps(row, ensure_ascii=False, default=str, separators=(",", ":")).encode() + b"\n"
        try:
            with self._lock:
                if self._file is None:
                    self.folder.mkdir(parents=True, exist_ok=True)
                    self._file = open(self.lines_path, "ab")  # noqa: SIM115  (open across appends until close())
                    if self._file.tell() and not _ends_with_newline(self.lines_path):
                        self._file.write(b"\n")  # a line cut short by a crash stays apart
                self._file.write(line)
                self._file.flush()
                self._written += 1
                mine = self._written
            with self._sync:
                if self._synced >= mine:
                    return  # an fsync that started after this line was written covered it
                with self._lock:
                    covered, fileno = self._written, self._file.fileno()
                os.fsync(fileno)
                self._synced = covered
        except OSError as exc:
            raise EvalStoreError(f"cannot append to {self.lines_path}: {exc}") from None

    def close(self) -> None:
        """Close the lines file (appending opens it again)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"


__all__ = ["FORMAT", "LINES", "MANIFEST", "EvalStore", "check_name"]
