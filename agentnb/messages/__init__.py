"""Messages: chat messages and tool calls (``message``), the parts of a message that carries
images or files (``parts``), where their bytes are kept (``blobs``), their size limits
(``limits``) and their wire form (``wire``)."""

from __future__ import annotations

from .blobs import PROCESS_BLOBS, BlobStore, MemoryBlobs, sha256_of
from .convert import File, Image, to_parts
from .limits import (
    MAX_FILE_BYTES_PER_REQUEST,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_BYTES_PER_REQUEST,
    MAX_IMAGES_PER_REQUEST,
)
from .message import (
    MAX_ARGUMENT_DEPTH,
    ROLES,
    ChatMessage,
    Message,
    Role,
    ToolCall,
    parse_arguments,
)
from .parts import (
    BinaryPart,
    Detail,
    FilePart,
    ImagePart,
    Part,
    TextPart,
    describe,
    hold_stored,
    part_from_dict,
)

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "MAX_FILE_BYTES_PER_REQUEST",
    "MAX_IMAGES_PER_REQUEST",
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_BYTES_PER_REQUEST",
    "PROCESS_BLOBS",
    "ROLES",
    "BinaryPart",
    "BlobStore",
    "ChatMessage",
    "Detail",
    "File",
    "FilePart",
    "Image",
    "ImagePart",
    "MemoryBlobs",
    "Message",
    "Part",
    "Role",
    "TextPart",
    "ToolCall",
    "describe",
    "hold_stored",
    "parse_arguments",
    "part_from_dict",
    "sha256_of",
    "to_parts",
]
