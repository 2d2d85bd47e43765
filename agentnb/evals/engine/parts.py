"""The bytes of a case's images and files, carried to where the case runs and back.

Stored cases and turn records refer to an image or file by its hash; its bytes are in this
process's blob memory (``agentnb.messages.PROCESS_BLOBS``), where the evaluation's store reads
them. A case sent to another process or machine (``executor=``) takes along the bytes its
recorded turns and conversation refer to (``CaseTask.blobs``), and its outcome brings back those
of the turns it ran (``CaseOutcome.blobs``), so each side decodes what the other stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ...messages import PROCESS_BLOBS, BinaryPart, FilePart, ImagePart
from ...messages.wire import PART_KEY
from ...sessions.blobs import referenced


def held(documents: Iterable[Any]) -> dict[str, bytes]:
    """The bytes of every image and file ``documents`` (plain data: turn records, cases) refer
    to, as far as this process holds them, by hash."""
    text = json.dumps(list(documents), ensure_ascii=False, default=str)
    found = {sha: PROCESS_BLOBS.find(sha) for sha in referenced([text], evaluation=True)}
    return {sha: data for sha, data in found.items() if data is not None}


def receive(blobs: Mapping[str, bytes], holder: object) -> None:
    """Keep bytes another process sent (``held``) in this process's blob memory, for as long as
    ``holder`` (the task or outcome that carried them) lives."""
    for sha, data in blobs.items():
        PROCESS_BLOBS.put(data, "", sha, holder=holder)


def known_parts(messages: Iterable[Mapping[str, Any]]) -> dict[str, BinaryPart]:
    """The images and files chat message dicts refer to (``agentnb-blob:<sha256>`` with the
    part's description beside it), built from this process's blob memory: what
    ``Message.from_openai`` resolves the references with."""
    found: dict[str, BinaryPart] = {}
    for message in messages:
        content = message.get("content")
        for item in content if isinstance(content, list) else ():
            described = item.get(PART_KEY) if isinstance(item, dict) else None
            if not isinstance(described, dict):
                continue
            sha = described.get("sha256")
            if not isinstance(sha, str) or sha in found:
                continue
            data = PROCESS_BLOBS.find(sha)
            if data is None:
                continue
            media_type = described.get("media_type")
            found[sha] = (
                ImagePart(data, media_type=media_type)
                if described.get("type") == "image"
                else FilePart(data, media_type, described.get("name"))
            )
    return found


__all__ = ["held", "known_parts", "receive"]
