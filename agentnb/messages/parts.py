"""The parts of a message that is more than text: ``TextPart``, ``ImagePart``, ``FilePart``.

A message's content is a plain ``str`` (the common case, kept as it is) or a tuple of parts.
Parts are frozen: an image's or file's bytes, media type and name, with its SHA-256 and size
computed once. A stored part holds its hash, never its bytes (``to_dict``): the bytes go to a
``BlobStore`` and come back from it (``from_dict``).

A stored image or file is marked: ``{"$agentnb": "part", "type": "image", "sha256": ...}``
(``MARK``, first). A session escapes every dict of the user's that has that key
(``agentnb.sessions.codec``), so a dict of the user's shaped like a stored part is never taken
for one: only marked dicts name blobs that must be there. A stored part is a ``StoredPart``, a
dict the session's encoder knows it wrote. (Parts stored before the mark existed have none;
they still load as parts of their message.)
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Literal, TypeAlias, get_args

from ..errors import MissingBlobError, PartError
from .blobs import PROCESS_BLOBS, BlobStore, MemoryBlobs, sha256_of
from .limits import check_part_size
from .media import IMAGE_TYPES, extension, image_size, sniff

Detail = Literal["auto", "low", "high"]
DETAILS: tuple[str, ...] = get_args(Detail)
"""How closely the model looks at an image (OpenAI's ``detail``): low is 85 tokens, whatever
the size; high is tiled; auto lets the model choose."""


@dataclass(frozen=True)
class TextPart:
    """Text within a message of several parts."""

    text: str
    """The text."""

    kind: ClassVar[Literal["text"]] = "text"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise PartError(f"a TextPart holds a str, got {type(self.text).__name__}")

    def to_dict(self, blobs: BlobStore | None = None) -> dict[str, Any]:
        """This part as stored."""
        return {"type": "text", "text": self.text}


MARK = "$agentnb"
"""The key marking what agentnb wrote into stored data (a stored part; a session's encoded
values): a session escapes user dicts that have it."""
PART_MARK = "part"
"""``MARK``'s value in a stored image or file."""


class StoredPart(dict[str, Any]):
    """An image or file as ``to_dict`` stored it: a dict, whose type tells a session's encoder
    that agentnb wrote it (a user's dict of the same shape is escaped)."""

    __slots__ = ()


def unmarked(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored part without its mark (as stored before the mark existed)."""
    return {key: value for key, value in stored.items() if key != MARK}


def _store(blobs: BlobStore | None) -> BlobStore:
    return PROCESS_BLOBS if blobs is None else blobs


def _keep(blobs: BlobStore | None, part: ImagePart | FilePart) -> None:
    """The part's bytes into ``blobs``; a store in memory keeps them while the part lives."""
    store = _store(blobs)
    assert part.data is not None and part.media_type is not None and part.sha256 is not None
    if isinstance(store, MemoryBlobs):
        store.put(part.data, part.media_type, part.sha256, holder=part)
    else:
        store.put(part.data, part.media_type, part.sha256)


def data_url_bytes(url: str) -> tuple[bytes, str | None]:
    """The bytes and media type of a ``data:`` URL (base64); PartError when it is malformed."""
    head, sep, body = url.partition(",")
    if not sep or not head.endswith(";base64"):
        raise PartError(f"a data URL must be data:<media type>;base64,<data>; got {url[:60]!r}")
    media_type = head[len("data:") : -len(";base64")] or None
    try:
        return base64.b64decode(body, validate=True), media_type
    except (binascii.Error, ValueError):
        raise PartError(f"the data URL {url[:60]!r}... holds no valid base64") from None


def _as_bytes(data: Any, what: str) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise PartError(f"{what} data must be bytes, got {type(data).__name__}")


@dataclass(frozen=True)
class ImagePart:
    """An image: bytes (sent inline as a data URL) or an http(s) URL (sent as the URL; agentnb
    never fetches it)."""

    data: bytes | None = None
    """The image file's bytes (PNG, JPEG, GIF or WEBP); None for an image given by URL."""
    url: str | None = None
    """An ``http(s)`` URL the API fetches the image from; None for an image given as bytes (a
    ``data:`` URL given here is decoded into ``data``)."""
    media_type: str | None = None
    """``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``; read from the bytes when
    not given; None for a URL whose type is not known."""
    detail: Detail = "auto"
    """How closely the model looks: ``low`` (a fixed small cost), ``high`` (tiled) or ``auto``."""
    name: str | None = None
    """A name for people and for the tool-result placeholder text (``fig``, ``chart.png``)."""
    width: int | None = None
    """Its width in pixels, when known (read from the image's header when not given)."""
    height: int | None = None
    """Its height in pixels, when known."""

    kind: ClassVar[Literal["image"]] = "image"

    def __post_init__(self) -> None:
        if self.url is not None and self.url.startswith("data:"):
            if self.data is not None:
                raise PartError("give an ImagePart its bytes or a URL, not both")
            data, given = data_url_bytes(self.url)
            object.__setattr__(self, "data", data)
            object.__setattr__(self, "url", None)
            object.__setattr__(self, "media_type", self.media_type or given)
        if (self.data is None) == (self.url is None):
            raise PartError("an ImagePart takes its bytes (data=) or an http(s) URL (url=), exactly one")
        if self.detail not in DETAILS:
            raise PartError(f"an image's detail is one of {', '.join(DETAILS)}; got {self.detail!r}")
        if self.url is not None:
            if not isinstance(self.url, str) or not self.url.startswith(("http://", "https://")):
                raise PartError(f"an image URL must start with http:// or https://; got {self.url!r:.80}")
            return
        data = _as_bytes(self.data, "an image's")
        object.__setattr__(self, "data", data)
        found = sniff(data)
        media_type = self.media_type or found
        if media_type not in IMAGE_TYPES or (found is not None and found != media_type):
            what = f"bytes that look like {found}" if found else "bytes of no known image kind"
            raise PartError(
                f"image {self.label!r}: {what}"
                + (f", said to be {self.media_type}" if self.media_type else "")
                + f"; an image is one of {', '.join(IMAGE_TYPES)} (a PDF or text goes in a FilePart)"
            )
        object.__setattr__(self, "media_type", media_type)
        check_part_size(self)
        if self.width is None or self.height is None:
            size = image_size(data, media_type)
            if size is not None:
                object.__setattr__(self, "width", size[0])
                object.__setattr__(self, "height", size[1])

    @cached_property
    def sha256(self) -> str | None:
        """The SHA-256 of the bytes (computed once); None for an image given by URL."""
        return sha256_of(self.data) if self.data is not None else None

    @property
    def size(self) -> int | None:
        """The bytes' length; None for an image given by URL."""
        return len(self.data) if self.data is not None else None

    @property
    def label(self) -> str:
        """The name, else a name made from the hash (``image-1a2b3c4d.png``) or the URL."""
        if self.name:
            return self.name
        if self.data is None:
            return str(self.url)
        sha = self.sha256 or ""
        return f"image-{sha[:8]}.{extension(self.media_type or '')}"

    def to_dict(self, blobs: BlobStore | None = None) -> dict[str, Any]:
        """This part as stored (marked: see the module's text): its hash and description; the
        bytes go to ``blobs`` (this process's memory when None, where this part holds them)."""
        out = StoredPart({MARK: PART_MARK, "type": "image"})
        if self.data is None:
            out["url"] = self.url
        else:
            _keep(blobs, self)
            out.update(sha256=self.sha256, media_type=self.media_type, size=self.size)
        out["detail"] = self.detail
        for key in ("name", "width", "height"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class FilePart:
    """A file sent as the API's file input (a PDF, a text file): its bytes, inline."""

    data: bytes
    """The file's bytes."""
    media_type: str | None = None
    """``application/pdf``, ``text/plain``, ...; read from the bytes when not given (a PDF),
    else required."""
    name: str | None = None
    """The file name the API is given (``filename``); made from the hash when None."""

    kind: ClassVar[Literal["file"]] = "file"

    def __post_init__(self) -> None:
        data = _as_bytes(self.data, "a file's")
        object.__setattr__(self, "data", data)
        media_type = self.media_type or sniff(data)
        if media_type is None:
            raise PartError(
                f"file {self.name or '(unnamed)'!r}: its kind is not known from its bytes; give "
                "media_type= (application/pdf, text/plain, text/csv, ...)"
            )
        if media_type in IMAGE_TYPES:
            raise PartError(f"file {self.name or '(unnamed)'!r} is an image ({media_type}): use an ImagePart")
        object.__setattr__(self, "media_type", media_type)
        check_part_size(self)

    @cached_property
    def sha256(self) -> str:
        """The SHA-256 of the bytes (computed once)."""
        return sha256_of(self.data)

    @property
    def size(self) -> int:
        """The bytes' length."""
        return len(self.data)

    @property
    def label(self) -> str:
        """The name, else one made from the hash (``file-1a2b3c4d.pdf``)."""
        return self.name or f"file-{self.sha256[:8]}.{extension(self.media_type or '')}"

    def to_dict(self, blobs: BlobStore | None = None) -> dict[str, Any]:
        """This part as stored (marked: see the module's text): its hash and description; the
        bytes go to ``blobs`` (this process's memory when None, where this part holds them)."""
        _keep(blobs, self)
        out = StoredPart(
            {
                MARK: PART_MARK,
                "type": "file",
                "sha256": self.sha256,
                "media_type": self.media_type,
                "size": self.size,
            }
        )
        if self.name is not None:
            out["name"] = self.name
        return out


Part: TypeAlias = TextPart | ImagePart | FilePart
"""One part of a message."""
BinaryPart: TypeAlias = ImagePart | FilePart
"""A part with bytes (an image given by URL has none)."""
PART_TYPES: tuple[type, ...] = (TextPart, ImagePart, FilePart)


def _blob(data: dict[str, Any], blobs: BlobStore | None) -> bytes:
    sha = data.get("sha256")
    if not isinstance(sha, str):
        raise PartError(f"a stored {data.get('type')} part has no sha256: {str(data)[:120]}")
    raw = _store(blobs).get(sha)
    if sha256_of(raw) != sha:
        raise MissingBlobError(
            f"blob {sha} in {getattr(_store(blobs), 'name', type(blobs).__name__)} does not hold "
            "the bytes its name says (the file was changed or cut short); restore it from where the "
            "notebook came from"
        )
    return raw


def part_from_dict(data: dict[str, Any], blobs: BlobStore | None = None) -> Part:
    """A part from its stored form (``to_dict``, marked or from before the mark), its bytes read
    from ``blobs`` (this process's memory when None, where the part then holds them);
    MissingBlobError naming the hash when they are not there."""
    part = _part(data, blobs)
    if not isinstance(part, TextPart) and part.data is not None:
        store = _store(blobs)
        if isinstance(store, MemoryBlobs):
            store.hold(part.sha256 or "", part)
    return part


def hold_stored(messages: Any, holder: object) -> None:
    """Have ``holder`` hold, in this process's memory, the bytes of the images and files of
    stored messages (``Message.to_dict``) that it will decode later."""
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        for item in content if isinstance(content, list) else ():
            sha = item.get("sha256") if isinstance(item, dict) else None
            if isinstance(sha, str):
                PROCESS_BLOBS.hold(sha, holder)


def _part(data: dict[str, Any], blobs: BlobStore | None) -> Part:
    kind = data.get("type")
    if kind == "text":
        return TextPart(data["text"])
    if kind == "image":
        common = {
            "detail": data.get("detail", "auto"),
            "name": data.get("name"),
            "width": data.get("width"),
            "height": data.get("height"),
        }
        if "url" in data:
            return ImagePart(url=data["url"], **common)
        return ImagePart(data=_blob(data, blobs), media_type=data.get("media_type"), **common)
    if kind == "file":
        return FilePart(data=_blob(data, blobs), media_type=data.get("media_type"), name=data.get("name"))
    raise PartError(f"a stored part of unknown type {kind!r:.40} (a part is text, image or file)")


def describe(part: BinaryPart) -> dict[str, Any]:
    """A part's description without its bytes: kind, hash, media type, size, name, detail and
    pixel size (what requests, traces and the inspector show)."""
    out: dict[str, Any] = {"type": part.kind}
    if isinstance(part, ImagePart) and part.data is None:
        out["url"] = part.url
    else:
        out.update(sha256=part.sha256, media_type=part.media_type, size=part.size)
    out["name"] = part.label
    if isinstance(part, ImagePart):
        out["detail"] = part.detail
        if part.width is not None and part.height is not None:
            out.update(width=part.width, height=part.height)
    return out


__all__ = [
    "DETAILS",
    "MARK",
    "PART_MARK",
    "PART_TYPES",
    "BinaryPart",
    "Detail",
    "FilePart",
    "ImagePart",
    "Part",
    "StoredPart",
    "TextPart",
    "data_url_bytes",
    "describe",
    "part_from_dict",
    "hold_stored",
    "unmarked",
]
