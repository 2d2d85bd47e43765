"""How large an image or file, and the parts of one message, may be: the OpenAI API's documented
limits, checked before anything is sent, with errors that give the size and the limit.

Images (https://platform.openai.com/docs/guides/images-vision, "Image input requirements"): up
to 20 MB per image, up to 50 MB of image bytes per request, up to 500 images per request.
Files (https://platform.openai.com/docs/guides/pdf-files, "Usage considerations": file size
limitations): up to 32 MB of file content in one request, across all its file inputs (so 32 MB
per file too). A megabyte here is 2**20 bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import PartSizeError

MB = 1024 * 1024
MAX_IMAGE_BYTES = 20 * MB
"""The largest image the API takes."""
MAX_IMAGE_BYTES_PER_REQUEST = 50 * MB
"""The most image bytes one request (so one message) may carry."""
MAX_IMAGES_PER_REQUEST = 500
"""The most images one request (so one message) may carry."""
MAX_FILE_BYTES_PER_REQUEST = 32 * MB
"""The most file bytes one request (so one message, and one file) may carry."""


def _mb(size: int) -> str:
    return f"{size / MB:.1f} MB"


def check_part_size(part: Any) -> None:
    """PartSizeError when one image or file is larger than the API takes."""
    limit = MAX_IMAGE_BYTES if part.kind == "image" else MAX_FILE_BYTES_PER_REQUEST
    if part.size is not None and part.size > limit:
        what = "an image" if part.kind == "image" else "a file"
        raise PartSizeError(
            f"{part.kind} {part.label!r} is {_mb(part.size)}; the OpenAI API takes {what} of at most "
            f"{_mb(limit)}. Make it smaller (a lower dpi, fewer pages) or send an image by URL"
        )


def check_message_size(parts: Iterable[Any]) -> None:
    """PartSizeError when the parts of one message are more than one request may carry."""
    images = files = count = 0
    for part in parts:
        if part.kind == "image":
            count += 1
            images += part.size or 0
        elif part.kind == "file":
            files += part.size
    if count > MAX_IMAGES_PER_REQUEST:
        raise PartSizeError(
            f"a message of {count} images; the OpenAI API takes at most {MAX_IMAGES_PER_REQUEST} per request"
        )
    if images > MAX_IMAGE_BYTES_PER_REQUEST:
        raise PartSizeError(
            f"the images of one message come to {_mb(images)}; the OpenAI API takes at most "
            f"{_mb(MAX_IMAGE_BYTES_PER_REQUEST)} of images per request. Send fewer or smaller images"
        )
    if files > MAX_FILE_BYTES_PER_REQUEST:
        raise PartSizeError(
            f"the files of one message come to {_mb(files)}; the OpenAI API takes at most "
            f"{_mb(MAX_FILE_BYTES_PER_REQUEST)} of files per request. Send fewer or smaller files"
        )


__all__ = [
    "MAX_FILE_BYTES_PER_REQUEST",
    "MAX_IMAGES_PER_REQUEST",
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_BYTES_PER_REQUEST",
    "check_message_size",
    "check_part_size",
]
