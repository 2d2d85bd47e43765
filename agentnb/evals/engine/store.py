"""An evaluation's folder beside the notebook: ``analysis.agentnb/evals/NAME/``.

``manifest.json`` says what was evaluated (cases, agent definition, checks, model, repeats) and
is replaced whole, atomically, at each run. ``cases.jsonl`` gets one line per finished (case,
repeat) — its case, turn records, verdicts and judge calls — appended and fsynced before the case
gives its slot to the next one. Lines are never rewritten: a reader keeps the last line of each
(case, repeat), and a line that does not parse — cut short by a crash, or damaged — is set aside
with its number (that case runs again; ``load_run`` reports it missing). A manifest or a line
that parses but is not what this store writes (``store_format``) is refused with an error naming
the file and the line, before anything is written: the folder is left as it is.

The images and files of cases and turns are kept in ``blobs/<sha256>.<ext>`` beside them, once
per hash (as a session keeps its own: ``agentnb.sessions.blobs``), written before the manifest or
line that refers to them; reading the manifest or the lines reads them first, and a missing one
is a ``MissingBlobError`` naming it, before anything is written.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ...errors import EvalStoreError
from ...sessions import blobs
from ...sessions.codec import escape, tagged, unescape
from .store_format import FORMAT, line_problem, manifest_problem

MANIFEST = "manifest.json"
LINES = "cases.jsonl"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
_CASE_ID = re.compile(rb'^\{"case":\{"id":("(?:[^"\\]|\\.)*")')
"""The case id at the start of a line as the store writes it (what a damaged line may still show)."""


@dataclass(frozen=True)
class DamagedLine:
    """A line of ``cases.jsonl`` that does not parse: a write cut short, or the file damaged."""

    number: int
    """Its line number (1 = the first)."""
    case_id: str | None
    """The case it was written for, when its start still says so."""


@dataclass
class _Lines:
    """The lines file as read."""

    kept: dict[tuple[str, int], tuple[bytes, dict[str, Any]]]
    """The last line of each (case id, repeat), as written and as read."""
    torn: list[bytes]
    """The lines that do not parse."""
    damaged: list[DamagedLine]
    """Those lines, by number."""
    superseded: int
    """Lines a later line of the same (case, repeat) replaced."""


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
        self.blobs = blobs.DirectoryBlobs(self.folder / blobs.FOLDER)
        """The images and files of its cases and turns, once per hash."""
        self._lock = threading.Lock()
        self._sync = threading.Lock()
        self._written = 0
        self._synced = 0
        self._file: Any = None
        self.torn = 0
        """Lines that did not parse when read (a write cut short, or damaged)."""
        self.damaged: list[DamagedLine] = []
        """Those lines, by number, as the last ``rows()`` found them."""
        self.superseded = 0
        """Lines a later line of the same (case, repeat) replaced."""

    @property
    def lines_path(self) -> Path:
        """The append-only file of finished cases."""
        return self.folder / LINES

    @property
    def manifest_path(self) -> Path:
        """The manifest: what was evaluated."""
        return self.folder / MANIFEST

    def read_manifest(self) -> dict[str, Any] | None:
        """The manifest, or None when the evaluation never ran; a file that is not a manifest of
        this format is an ``EvalStoreError`` (and stays as it is)."""
        path = self.manifest_path
        if not path.exists():
            return None
        try:
            text = path.read_bytes().decode("utf-8")
            data = json.loads(text)
            if tagged(text):
                data = unescape(data)
        except (OSError, ValueError) as exc:
            self._refuse(f"does not read as JSON ({exc})")
        self._fetch(text, path)
        problem = manifest_problem(data)
        if problem is not None:
            self._refuse(f"is not an agentnb evaluation manifest of format {FORMAT}: {problem}")
        return data

    def _fetch(self, text: str | bytes, path: Path) -> None:
        """Read the blobs ``text`` (of ``path``) refers to into this process's memory."""
        fix = (
            f"Restore {self.blobs.folder} from where the evaluation came from, or move {self.folder} "
            "away to run the evaluation afresh; nothing was read or written"
        )
        blobs.fetch(self.blobs, blobs.referenced([text], evaluation=True), str(path), holder=self, fix=fix)

    def _refuse(self, problem: str) -> NoReturn:
        raise EvalStoreError(
            f"{self.manifest_path} {problem}; nothing was read or written there. Give this evaluation "
            f"another name (name='...'), or move {self.folder} away to start it afresh"
        ) from None

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Replace the manifest atomically (left alone when it already says the same); one that is
        not a manifest of this format is refused, never replaced."""
        path = self.manifest_path
        text = json.dumps({"format": FORMAT, **escape(manifest)}, ensure_ascii=False, indent=1, default=str)
        self.read_manifest()
        try:
            if path.exists() and path.read_text(encoding="utf-8") == text:
                return
            self.folder.mkdir(parents=True, exist_ok=True)
            blobs.keep(self.blobs, blobs.referenced([text], evaluation=True), str(path))
            tmp = path.with_name(f".{MANIFEST}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise EvalStoreError(f"cannot write {path}: {exc}") from None

    def rows(self) -> dict[tuple[str, int], dict[str, Any]]:
        """The last stored line of each (case id, repeat); lines that do not parse are counted in
        ``damaged``, and a line of the wrong shape is an ``EvalStoreError`` naming it. The blobs
        of the lines kept are read first (a line a later one replaced may refer to blobs
        ``drop_unused_blobs`` deleted)."""
        found = self._lines()
        self._fetch(b"\n".join(line for line, _ in found.kept.values()), self.lines_path)
        self.damaged, self.superseded, self.torn = found.damaged, found.superseded, len(found.damaged)
        return {key: row for key, (_, row) in found.kept.items()}

    def _lines(self) -> _Lines:
        """The lines file as read (see ``_Lines``)."""
        out: dict[tuple[str, int], tuple[bytes, dict[str, Any]]] = {}
        found = _Lines(out, [], [], 0)
        path = self.lines_path
        if not path.exists():
            return found
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as exc:
            raise EvalStoreError(f"cannot read {path}: {exc}") from None
        for number, line in enumerate(data.split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line.decode("utf-8"))
                if tagged(line):
                    row = unescape(row)
            except ValueError:  # not JSON, or not UTF-8
                found.damaged.append(DamagedLine(number, _case_id(line)))
                found.torn.append(line)
                continue
            problem = line_problem(row)
            if problem is not None:
                raise EvalStoreError(
                    f"{path} line {number} is not a finished case as agent.evaluate writes it: {problem}. "
                    "Nothing was changed: delete that line (its case runs again on the next "
                    "agent.evaluate), or move the folder away to start afresh"
                )
            key = (row["case"]["id"], row["repeat"])
            if key in out:
                found.superseded += 1
            out[key] = (line, row)
        return found

    def drop_unused_blobs(self, older_than: float = 600.0) -> list[Path]:
        """Delete the blobs neither the manifest nor the last line of any (case, repeat) refers
        to (those of turns that ran again, of cases no longer evaluated), once they are
        ``older_than`` seconds old: a younger one may be another process's, whose line is not
        written yet. A line that does not parse keeps every blob it names. Returns the files
        deleted."""
        if not self.blobs.folder.is_dir():
            return []
        try:
            manifest = self.manifest_path.read_bytes() if self.manifest_path.exists() else b""
            found = self._lines()
        except (OSError, EvalStoreError):  # a store that cannot be read may need any blob
            return []
        texts = [manifest, *(line for line, _ in found.kept.values()), *found.torn]
        return self.blobs.drop_unused(set(blobs.referenced(texts, evaluation=True)), older_than)

    def missing_reason(self, case_id: str) -> str:
        """Why ``case_id`` has no line, as the last ``rows()`` found the file."""
        own = [d.number for d in self.damaged if d.case_id == case_id]
        if own:
            return f"{LINES} line {_numbers(own)} (case {case_id!r}) does not parse: a write cut short, or damaged"
        unknown = [d.number for d in self.damaged if d.case_id is None]
        if unknown:
            return (
                f"no readable line in {LINES} (line {_numbers(unknown)} does not parse: a write cut short, "
                "or damaged; it may have been this case's)"
            )
        return f"not in {LINES}: the evaluation ended before this case finished"

    def append(self, row: dict[str, Any]) -> None:
        """Append one finished (case, repeat) and return once it is fsynced. Cases finishing
        together share an fsync: each waits for one that started after its line was written."""
        text = json.dumps(escape(row), ensure_ascii=False, default=str, separators=(",", ":"))
        line = text.encode() + b"\n"
        try:
            blobs.keep(self.blobs, blobs.referenced([text], evaluation=True), str(self.lines_path))
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


def _case_id(line: bytes) -> str | None:
    match = _CASE_ID.match(line)
    if match is None:
        return None
    try:
        found = json.loads(match.group(1).decode("utf-8"))
    except ValueError:
        return None
    return found if isinstance(found, str) else None


def _numbers(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:5])) + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"


__all__ = ["LINES", "MANIFEST", "DamagedLine", "EvalStore", "check_name"]
