"""The pictures of the images a view shows, sent when it asks for them (``wire.NEED_IMAGE``).

Events, requests and summaries name an image by its hash and description only; a view asks for
its picture when it shows it: a thumbnail (``agentnb.history.thumbnails``), or on a click the
original. The bytes are looked for in the parts held in memory — the turn the view names first
(and the runs of its tree), then every turn — then in this process's blob store and the session's
blob store. The reply carries the picture as the message's second buffer, never as text in JSON.

Whatever is asked, the reply is an ``image`` message: a hash that is not a SHA-256, a blob held
nowhere, bytes that are no image the browser may draw (an SVG, a PDF: only PNG, JPEG, GIF and WEBP
are ever sent as pictures, read from the bytes themselves) or an image too large to scale each
come back as a sentence naming the hash, and the view shows it in the image's place. Nothing here
raises into the kernel.

A running turn's messages are its record's only once it ends: an image of a running turn found
nowhere is answered ``later``, and the view asks again when the turn has ended.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import MissingBlobError
from ..history.attachments import STATIC_IMAGES, part_line, static_picture, turn_bytes
from ..history.thumbnails import thumbnail
from ..messages import PROCESS_BLOBS, FilePart, ImagePart
from ..messages.limits import MAX_IMAGE_BYTES
from ..messages.media import IMAGE_TYPES, image_size, sniff
from . import wire
from .compact_parts import request_parts

if TYPE_CHECKING:
    from ..agent import Agent
    from ..history.records import TurnRecord

SHA256 = re.compile(r"[0-9a-f]{64}")


def _in_turns(turns: Iterable[TurnRecord], sha: str) -> bytes | None:
    for turn in turns:
        for run in turn.walk():
            for message in run.messages:
                for part in message.attachments:
                    if (
                        isinstance(part, (ImagePart, FilePart))
                        and part.data is not None
                        and part.sha256 == sha
                    ):
                        return part.data
    return None


def _from_session(agent: Agent, sha: str) -> bytes | None:
    """The bytes from the blob store of the session the agent replays, if it has one."""
    session = getattr(getattr(agent, "recording", None), "session", None)
    store = getattr(session, "blobs", None)
    get = getattr(store, "get", None)
    if get is None:
        return None
    try:
        data = get(sha)
    except (MissingBlobError, OSError):
        return None
    return data if isinstance(data, bytes) else None


def find_bytes(agent: Agent, sha: str, turn: Any = None) -> bytes | None:
    """The bytes of blob ``sha`` wherever this kernel holds them (see the module docstring)."""
    history = agent.history
    hinted = history[turn] if isinstance(turn, int) and 0 <= turn < len(history) else None
    if hinted is not None:
        found = _in_turns([hinted], sha)
        if found is not None:
            return found
    found = PROCESS_BLOBS.find(sha)
    if found is not None:
        return found
    found = _in_turns((t for t in reversed(history) if t is not hinted), sha)
    return found if found is not None else _from_session(agent, sha)


def image_reply(agent: Agent, content: Mapping[str, Any]) -> tuple[dict[str, Any], bytes | None]:
    """The ``image`` message answering ``content`` (a ``need_image``) and its picture, if any."""
    sha, full, turn = content.get(wire.SHA256), bool(content.get(wire.FULL)), content.get(wire.TURN_INDEX)
    if not isinstance(sha, str) or not SHA256.fullmatch(sha):
        shown = repr(sha)[:80]
        reply = {wire.KIND: wire.IMAGE, wire.SHA256: shown, wire.FULL: full}
        return reply | {wire.TEXT: f"{shown} is not an image's hash (a SHA-256: 64 hex digits)"}, None
    reply = {wire.KIND: wire.IMAGE, wire.SHA256: sha, wire.FULL: full}
    try:
        return _picture(agent, sha, full, turn, reply)
    except Exception as exc:  # whatever went wrong is said in the image's place
        return reply | {wire.TEXT: f"image {sha[:12]}…: {type(exc).__name__}: {exc}"[:300]}, None


def _picture(
    agent: Agent, sha: str, full: bool, turn: Any, reply: dict[str, Any]
) -> tuple[dict[str, Any], bytes | None]:
    data = find_bytes(agent, sha, turn)
    if data is None:
        history = agent.history
        if isinstance(turn, int) and 0 <= turn < len(history) and history[turn].status == "running":
            return reply | {wire.LATER: True, wire.TEXT: "shown when the turn ends"}, None
        return reply | {
            wire.TEXT: f"missing blob {sha}: this kernel holds no bytes for it (the part was not kept, "
            "or the session's blobs folder lacks it)"
        }, None
    media_type = sniff(data)
    if media_type not in IMAGE_TYPES:
        what = media_type or "bytes of no known image kind"
        return reply | {wire.TEXT: f"not an image ({what}): shown as a file, never drawn"}, None
    size = image_size(data, media_type)
    width, height = size if size is not None else (None, None)
    if full:
        if len(data) > MAX_IMAGE_BYTES:
            return reply | {wire.TEXT: f"{len(data):,} bytes: larger than any image a model takes"}, None
        return reply | {
            wire.MEDIA_TYPE: media_type,
            wire.WIDTH: width,
            wire.HEIGHT: height,
            wire.SIZE: len(data),
        }, data
    small = thumbnail(data)
    if small.data is None:
        return reply | {
            wire.WIDTH: width,
            wire.HEIGHT: height,
            wire.SIZE: len(data),
            wire.TEXT: small.note,
        }, None
    return reply | {
        wire.MEDIA_TYPE: small.media_type,
        wire.WIDTH: width,
        wire.HEIGHT: height,
        wire.SIZE: len(data),
    }, small.data


def asked_parts(record: TurnRecord) -> list[dict[str, Any]]:
    """The images and files of a turn's user message as its first request named them (what the
    inspector's views show: ``compact_parts``; none for a turn that asked no model)."""
    calls = record.model_calls
    return request_parts(calls[0].request) if calls else []


def turn_parts(record: TurnRecord) -> list[dict[str, Any]]:
    """The images and files of a turn, described: the user's, then each tool result's."""
    return asked_parts(record) + [dict(p) for call in record.tool_calls for p in call.attachments]


def static_images(record: TurnRecord) -> list[dict[str, str]]:
    """The thumbnails a saved notebook shows of a finished turn's images: ``{"line", "url"}`` each
    (its line as the static text writes it, a small PNG or JPEG as a ``data:`` URL)."""
    parts = [p for p in turn_parts(record) if p.get("type") == "image" and p.get("sha256")]
    if not parts:
        return []
    found = turn_bytes([record])
    out = []
    for part in parts[:STATIC_IMAGES]:
        url = static_picture(part, found)
        if url is not None:
            out.append({"line": part_line(part), "url": url})
    return out


__all__ = ["asked_parts", "find_bytes", "image_reply", "static_images", "turn_parts"]
