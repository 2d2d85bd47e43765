"""The bytes of a session's images and files, stored once by their hash beside it.

A message's image or file is stored as its description (``{"type": "image", "sha256": ...,
"media_type": ..., "size": ...}``: ``agentnb.messages``), never its bytes; the bytes go to the
session's blob store, once per hash however many messages, turns and requests refer to them:

- a ``JSONSession`` keeps them in ``<save_dir>/blobs/<sha256>.<ext>`` (a notebook's in
  ``NOTEBOOK.agentnb/blobs/``, committed with the session), each written atomically;
- a ``SQLiteSession`` in a ``blobs`` table of its database (see ``SQLiteBlobs``);
- a ``MemorySession`` in this process's memory, where the parts' bytes already are.

Saving writes the blobs a text refers to before the text itself, so no file on disk ever
refers to a blob that is not there yet (a save killed in between leaves a blob nothing refers
to, never the reverse). Loading reads every blob the session refers to before any module is
loaded: a missing one is a ``MissingBlobError`` naming the hash, where it was expected and what
to do, and nothing has been changed.

The parts are found in the stored text itself (``referenced``): every stored image or file is
marked (``{"$agentnb": "part", ...}``, ``agentnb.messages.parts``) and the session's encoder
escapes every dict of the user's that has that key, so a marked dict is a part whose blob must be
there. A session without parts costs one substring test per text and stays byte for byte as
before. Parts written before the mark are found where they were: in a message's content list;
as a dict of the user's may have that shape too, their blobs are kept and read when they are
there and are no error when they are not (the message that holds one, if any, says so when it
is read).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from ..errors import MissingBlobError
from ..messages import PROCESS_BLOBS, MemoryBlobs, sha256_of
from ..messages.media import extension
from ..messages.parts import MARK, PART_MARK
from ..messages.wire import PART_KEY
from .fileio import commit_prepared, prepare_write

FOLDER = "blobs"
"""The folder, inside a JSON session's folder, holding its blobs."""

_MARKED = re.compile(r'\{\s*"' + re.escape(MARK) + r'"\s*:\s*"' + PART_MARK + '"')
"""Where a stored part starts (its mark is its first key; a key in a JSON string is escaped)."""
_CONTENT = re.compile(r'"(content)"\s*:\s*\[')
"""Where a stored message's content list starts (a key in a JSON string is escaped: never this)."""
_CASE_LISTS = re.compile(r'"(content|input|messages)"\s*:\s*\[')
"""Where a content list, or a stored case's message or messages, start."""
_DECODER = json.JSONDecoder()
_SHA256 = re.compile(r"[0-9a-f]{64}")

FIX = (
    "Restore the blobs from where the session came from (a notebook's NOTEBOOK.agentnb/blobs/ "
    "folder is committed with it: git add or git checkout it), or delete the session to start "
    "over; nothing was loaded"
)
"""What to do about a missing blob (said by every MissingBlobError of a session)."""


class Ref(NamedTuple):
    """A blob that stored text refers to."""

    media_type: str
    """Its media type."""
    sure: bool
    """Whether a marked part refers to it (it must be there); False for a dict found where a
    part stored before the mark would be, which may be the user's own (kept and read when
    there)."""


def referenced(texts: Iterable[str | bytes], *, evaluation: bool = False) -> dict[str, Ref]:
    """The blobs stored ``texts`` (text or UTF-8 bytes) refer to, ``{sha256: Ref}`` in order of
    first mention: each marked part's, and each dict shaped like a part in a message's content
    list (a part stored before the mark, or the user's). With ``evaluation`` (an evaluation's
    store), also those shaped like parts in its cases' messages (``input``, and each turn of a
    multi-turn case's ``messages``) and those its recorded conversations refer to in the wire
    form (``agentnb-blob:`` references with their description beside them).

    A description of a part elsewhere (a tool call's ``attachments``) names a hash without
    needing its bytes, and may name a part that was refused (over the size limits) and never
    stored."""
    found: dict[str, Ref] = {}
    lists = _CASE_LISTS if evaluation else _CONTENT
    for raw in texts:
        if isinstance(raw, bytes):
            if b'"sha256"' not in raw:
                continue
            text = raw.decode("utf-8", "replace")
        elif '"sha256"' in raw:
            text = raw
        else:
            continue
        for match in _MARKED.finditer(text):
            part = _decoded(text, match.start())
            if isinstance(part, dict) and _blob_of(part):
                found[part["sha256"]] = Ref(part["media_type"], True)
        for match in lists.finditer(text):
            items = _decoded(text, match.end() - 1)
            if not isinstance(items, list):  # not JSON here: the session's own parsing says what is wrong
                continue
            if match.group(1) == "messages":  # a multi-turn case: a turn that is a list is its parts
                items = [item for turn in items if isinstance(turn, list) for item in turn]
            for item in items:
                part = _unmarked_part(item, evaluation)
                if part is not None:
                    found.setdefault(part["sha256"], Ref(part["media_type"], False))
    return found


def _decoded(text: str, at: int) -> Any:
    try:
        return _DECODER.raw_decode(text, at)[0]
    except ValueError:
        return None


_WIRE_ITEMS = frozenset({"image_url", "input_image", "file", "input_file"})


def _blob_of(item: dict[str, Any]) -> bool:
    sha, media_type = item.get("sha256"), item.get("media_type")
    return isinstance(sha, str) and bool(_SHA256.fullmatch(sha)) and isinstance(media_type, str)


def _unmarked_part(item: Any, wire: bool) -> dict[str, Any] | None:
    """The part stored without a mark (or, with ``wire``, a wire item's description) ``item``
    may be, if any."""
    if not isinstance(item, dict) or MARK in item:
        return None
    if wire and item.get("type") in _WIRE_ITEMS and isinstance(item.get(PART_KEY), dict):
        item = item[PART_KEY]
    elif item.get("type") not in ("image", "file"):
        return None
    return item if _blob_of(item) else None


class SessionBlobs(Protocol):
    """Where a session backend keeps blobs (one store for every session of the backend: the
    same figure saved by two sessions of a notebook is stored once)."""

    def put(self, data: bytes, media_type: str, sha256: str | None = None) -> str:
        """Keep ``data`` once (atomically); returns its hash."""
        ...

    def has(self, sha256: str, media_type: str) -> bool:
        """Whether the blob is stored."""
        ...

    def mark_used(self, sha256: str, media_type: str) -> None:
        """Note that a save is about to refer to this stored blob (so nothing drops it now)."""
        ...

    def read(self, sha256: str, media_type: str) -> bytes:
        """The blob's bytes, checked against its hash; MissingBlobError naming ``where`` when
        it is not stored (or holds other bytes)."""
        ...

    def where(self, sha256: str, media_type: str) -> str:
        """Where the blob is (or would be) stored, for messages."""
        ...


class DirectoryBlobs:
    """Blobs as files in ``folder``: ``<sha256>.<ext>`` (the extension from the media type, so
    a person browsing the folder can open them). A ``messages.BlobStore`` too (``get``)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        """The folder (created by the first blob written)."""

    def __repr__(self) -> str:
        return f"DirectoryBlobs({str(self.folder)!r})"

    def path(self, sha256: str, media_type: str) -> Path:
        """The file of blob ``sha256``."""
        return self.folder / f"{sha256}.{extension(media_type)}"

    def where(self, sha256: str, media_type: str) -> str:
        return str(self.path(sha256, media_type))

    def put(self, data: bytes, media_type: str, sha256: str | None = None) -> str:
        digest = sha256 or sha256_of(data)
        path = self.path(digest, media_type)
        try:
            if path.stat().st_size == len(data):
                self.mark_used(digest, media_type)
                return digest
        except FileNotFoundError:
            pass
        # A temporary file renamed into place: a reader sees the whole blob or none, and two
        # writers of the same blob (two kernels of one notebook) rename the same bytes.
        commit_prepared(prepare_write(path, data, suffix=".tmp"), path)
        return digest

    def has(self, sha256: str, media_type: str) -> bool:
        return self._find(sha256, media_type) is not None

    def mark_used(self, sha256: str, media_type: str) -> None:
        """Touch the blob's file: ``drop_unused`` leaves young files alone, and a save is about
        to refer to this one (a read-only checkout is left as it is)."""
        path = self._find(sha256, media_type)
        if path is not None:
            with contextlib.suppress(OSError):
                os.utime(path)

    def read(self, sha256: str, media_type: str) -> bytes:
        path = self._find(sha256, media_type)
        if path is None:
            raise MissingBlobError(
                f"blob {sha256} ({media_type}) is missing: expected the file {self.path(sha256, media_type)}"
            )
        return _checked(path.read_bytes(), sha256, str(path))

    def get(self, sha256: str) -> bytes:
        """The bytes of blob ``sha256`` whatever its extension (``messages.BlobStore``)."""
        found = sorted(self.folder.glob(f"{sha256}.*")) if _SHA256.fullmatch(sha256) else []
        if not found:
            raise MissingBlobError(f"blob {sha256} is missing: no file {sha256}.* in {self.folder}")
        return _checked(found[0].read_bytes(), sha256, str(found[0]))

    def drop_unused(self, used: set[str], older_than: float) -> list[Path]:
        """Delete the blobs not in ``used`` (hashes) last written more than ``older_than``
        seconds ago (a younger one may belong to a save whose text is still being written);
        returns the files deleted."""
        dropped = []
        now = time.time()
        for path in sorted(self.folder.glob("*.*")) if self.folder.is_dir() else ():
            sha = path.name.split(".", 1)[0]
            try:
                if _SHA256.fullmatch(sha) and sha not in used and now - path.stat().st_mtime > older_than:
                    path.unlink()
                    dropped.append(path)
            except OSError:  # gone meanwhile, or not ours to delete: it only takes room
                continue
        return dropped

    def _find(self, sha256: str, media_type: str) -> Path | None:
        path = self.path(sha256, media_type)
        if path.is_file():
            return path
        # Written where the media type had another extension (mimetypes differs by machine).
        return next((p for p in sorted(self.folder.glob(f"{sha256}.*")) if p.is_file()), None)


class HeldBlobs:
    """The blobs of a ``MemorySession``: ``memory``, a ``MemoryBlobs`` (this process's, by
    default, where every part stored in this process already is), which keeps each blob the
    session saved or refers to for as long as the session lives."""

    def __init__(self, memory: MemoryBlobs = PROCESS_BLOBS) -> None:
        self.memory = memory

    def put(self, data: bytes, media_type: str, sha256: str | None = None) -> str:
        return self.memory.put(data, media_type, sha256, holder=self)

    def has(self, sha256: str, media_type: str) -> bool:
        return sha256 in self.memory

    def mark_used(self, sha256: str, media_type: str) -> None:
        """The session holds the blob (its text refers to it)."""
        self.memory.hold(sha256, self)

    def read(self, sha256: str, media_type: str) -> bytes:
        return self.memory.get(sha256)

    def where(self, sha256: str, media_type: str) -> str:
        return f"{self.memory.name}"


def _checked(data: bytes, sha256: str, where: str) -> bytes:
    if sha256_of(data) != sha256:
        raise MissingBlobError(
            f"{where} does not hold the bytes its name says (blob {sha256}: the file was changed or cut short)"
        )
    return data


def keep(store: SessionBlobs, refs: Mapping[str, Ref], what: str) -> None:
    """Store every blob of ``refs`` that ``store`` lacks, from this process's memory (where a
    part's bytes go when its message is stored). A marked part's blob held nowhere is a
    MissingBlobError before anything is written: ``what`` (the session) would refer to bytes no
    one has; an unmarked one's (``Ref.sure`` False: maybe the user's own dict) is kept when
    this process has it, and else left alone."""
    for sha, (media_type, sure) in refs.items():
        if store.has(sha, media_type):
            store.mark_used(sha, media_type)
            continue
        data = PROCESS_BLOBS.find(sha)
        if data is None:
            if not sure:
                continue
            raise MissingBlobError(
                f"cannot save {what}: it refers to blob {sha} ({media_type}), whose bytes this process "
                f"does not hold and {store.where(sha, media_type)} does not have; nothing was written. "
                "Load the session the part came from first (its blobs are read with it)"
            )
        store.put(data, media_type, sha)


def fetch(store: SessionBlobs, refs: Mapping[str, Ref], what: str, *, holder: object, fix: str = FIX) -> None:
    """Make every blob of ``refs`` readable in this process (``Message.from_dict`` reads a part's
    bytes from its memory), held there by ``holder`` (the session or store reading them, for as
    long as it lives): each is read from ``store``, checked against its hash, unless this
    process holds it already. Every missing blob of a marked part is checked for before any is
    read, and named (with ``what``, the session) in one MissingBlobError; an unmarked one's
    (``Ref.sure`` False) is read when it is there."""
    missing = [
        (sha, ref.media_type) for sha, ref in refs.items() if ref.sure and not store.has(sha, ref.media_type)
    ]
    if missing:
        named = "; ".join(f"blob {sha} ({mt}), expected at {store.where(sha, mt)}" for sha, mt in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise MissingBlobError(
            f"{what} refers to {len(missing)} image(s) or file(s) whose bytes are missing: {named}{more}. {fix}"
        )
    for sha, (media_type, sure) in refs.items():
        if PROCESS_BLOBS.hold(sha, holder):
            continue
        if not sure and not store.has(sha, media_type):
            continue
        try:
            data = store.read(sha, media_type)
        except MissingBlobError as exc:
            raise MissingBlobError(f"{what}: {exc}. {fix}") from None
        PROCESS_BLOBS.put(data, media_type, sha, holder=holder)


__all__ = [
    "FIX",
    "FOLDER",
    "DirectoryBlobs",
    "HeldBlobs",
    "Ref",
    "SessionBlobs",
    "fetch",
    "keep",
    "referenced",
]
