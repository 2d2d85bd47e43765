"""Chat messages and tool calls, with their OpenAI Chat Completions wire form.

agentnb keeps messages as small frozen dataclasses and converts them to the OpenAI wire
format in one place (``to_openai``), so every model — scripted, replayed or real — sees the
same request. A message's content is text (a ``str``) or, for a message that carries images or
files, a tuple of parts (``parts.py``); a stored message refers to their bytes by hash.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import PartError
from ..util.fastinit import fast_init
from .blobs import BlobStore
from .convert import to_parts
from .limits import check_message_size
from .parts import PART_TYPES, BinaryPart, Part, TextPart, part_from_dict
from .wire import content_items, parts_from_items

Role = Literal["system", "developer", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "developer", "user", "assistant", "tool")
"""Every role a message may have."""

MAX_ARGUMENT_DEPTH = 64
"""Deepest nesting accepted in a tool call's arguments (deeper is malformed: state, patches and
session files must stay within Python's recursion limits)."""


def _too_deep(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return True
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def parse_arguments(text: str) -> Any:
    """A tool call's argument text decoded from JSON (``{}`` when blank); raises ``ValueError``
    (``json.JSONDecodeError`` included) if it is malformed, holds an integer too long to read, or
    nests deeper than ``MAX_ARGUMENT_DEPTH`` levels.

    The one parser for recorded argument text: the executor runs a call only when it parses, and
    every reader of a record (renderers, diffs, traces) uses it too, so what the executor
    survived never breaks a reader."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_ARGUMENT_DEPTH} levels") from None
    if _too_deep(value):
        raise ValueError(f"nested deeper than {MAX_ARGUMENT_DEPTH} levels")
    return value


@fast_init(read_often=True)
@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model."""

    id: str
    """The call id the model gave (echoed back in the tool message)."""
    name: str
    """The tool's name as the model wrote it."""
    arguments: str
    """The arguments exactly as the model sent them: a JSON text, possibly malformed."""
    problem: str | None = None
    """Why the call cannot run, when the server sent it malformed (no name, a name that is no
    text, no index in a stream): the call's error result says so; None for a usable call."""
    note: str | None = None
    """Something the server did outside the protocol that was accepted (arguments sent as a
    JSON object rather than as text), or None."""

    def __post_init__(self) -> None:
        # A model may send anything: a name or arguments that are not text are kept as their
        # JSON text, so the call fails as an unknown tool or bad arguments, and records load back.
        for field_name in ("id", "name", "arguments"):
            value = getattr(self, field_name)
            if not isinstance(value, str):
                object.__setattr__(self, field_name, json.dumps(value, ensure_ascii=False, default=repr))

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON (see ``parse_arguments``)."""
        return parse_arguments(self.arguments)

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@fast_init(read_often=True)
@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    """Who speaks: system, user, assistant or tool."""
    content: str | tuple[Part, ...] | None = None
    """The text; or, for a message with images or files, its parts in order (a list given is
    kept as a tuple, a str in it as a TextPart); None for an assistant message that only calls
    tools."""
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    """Tool calls of an assistant message."""
    tool_call_id: str | None = None
    """For a tool message: the call it answers."""
    name: str | None = None
    """For a tool message: the tool's name (kept for display; not sent)."""

    def __post_init__(self) -> None:
        content = self.content
        if content.__class__ is str or content is None:  # the common case: nothing to do
            return
        if isinstance(content, str):
            self.__dict__["content"] = str(content)
            return
        if not isinstance(content, (list, tuple)):
            raise PartError(
                f"a message's content is a str or a list of parts (TextPart, ImagePart, FilePart); got "
                f"{type(content).__name__}. agentnb.messages.to_parts converts figures, arrays and files"
            )
        parts = tuple(TextPart(p) if isinstance(p, str) else p for p in content)
        for part in parts:
            if not isinstance(part, PART_TYPES):
                raise PartError(
                    f"a message part is a TextPart, ImagePart or FilePart; got {type(part).__name__}. "
                    "agentnb.messages.to_parts converts figures, arrays, frames and files"
                )
        check_message_size(parts)
        self.__dict__["content"] = parts

    @property
    def text(self) -> str:
        """The content as text ('' when there is none), as Haystack's ``ChatMessage.text``: the
        text parts joined by newlines for a message of parts."""
        content = self.content
        if content is None:
            return ""
        if content.__class__ is str:
            return content
        return "\n".join(p.text for p in content if isinstance(p, TextPart))

    @property
    def parts(self) -> tuple[Part, ...]:
        """The content as parts: a text message is one TextPart, no content none."""
        content = self.content
        if content is None:
            return ()
        if isinstance(content, str):
            return (TextPart(content),)
        return content

    @property
    def attachments(self) -> tuple[BinaryPart | Part, ...]:
        """The parts that are not text: images and files, in order."""
        content = self.content
        if content is None or isinstance(content, str):
            return ()
        return tuple(p for p in content if not isinstance(p, TextPart))

    def to_openai(self) -> dict[str, Any]:
        """This message in the OpenAI Chat Completions wire format (a message of parts: a
        content list whose images and files are references, ``agentnb.messages.wire``)."""
        out: dict[str, Any] = {"role": self.role}
        content: Any = self.content
        if content.__class__ is tuple:  # a message of parts
            content = content_items(content)
        if self.role == "assistant" and self.tool_calls:
            out["content"] = content
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        else:
            out["content"] = content if content is not None else ""
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
        return out

    @classmethod
    def from_openai(cls, data: dict[str, Any], known: Mapping[str, BinaryPart] | None = None) -> Message:
        """Parse a message in the OpenAI Chat Completions wire format (a content list becomes
        parts: ``data:`` URLs decoded, references found among ``known`` parts by hash)."""
        content = data.get("content")
        if isinstance(content, list):
            content = parts_from_items(content, known)
        calls = tuple(
            ToolCall(
                id=c.get("id", ""),
                name=c["function"]["name"],
                arguments=c["function"].get("arguments") or "",
            )
            for c in data.get("tool_calls") or ()
        )
        return cls(
            role=data["role"],
            content=content,
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )

    def to_dict(self, blobs: BlobStore | None = None) -> dict[str, Any]:
        """This message as stored in a session (every field, nothing added). An image's or
        file's bytes go to ``blobs`` (this process's memory when None) and the message keeps its
        hash, never the bytes."""
        content: Any = self.content
        if content.__class__ is tuple:  # a message of parts
            content = [p.to_dict(blobs) for p in content]
        out: dict[str, Any] = {"role": self.role, "content": content}
        if self.tool_calls:
            out["tool_calls"] = [_call_dict(c) for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], blobs: BlobStore | None = None) -> Message:
        """The inverse of ``to_dict`` (ValueError for a role no message has); the bytes of its
        images and files are read from ``blobs`` (this process's memory when None), and one that
        is not there is a MissingBlobError naming its hash and the store."""
        if data["role"] not in ROLES:
            raise ValueError(
                f"a message of unknown role {data['role']!r:.40} (a message is one of {', '.join(ROLES)})"
            )
        content = data.get("content")
        if isinstance(content, list):
            content = tuple(part_from_dict(p, blobs) for p in content)
        return cls(
            role=data["role"],
            content=content,
            tool_calls=tuple(
                ToolCall(
                    id=c["id"],
                    name=c["name"],
                    arguments=c["arguments"],
                    problem=c.get("problem"),
                    note=c.get("note"),
                )
                for c in data.get("tool_calls") or ()
            ),
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )

    @classmethod
    def from_user(cls, text: str | Sequence[Any]) -> Message:
        """A user message (Haystack's ``ChatMessage.from_user``)."""
        return cls.user(text)

    @classmethod
    def from_system(cls, text: str) -> Message:
        """A system message (Haystack's ``ChatMessage.from_system``)."""
        return cls.system(text)

    @classmethod
    def from_assistant(cls, text: str | None = None) -> Message:
        """An assistant message (Haystack's ``ChatMessage.from_assistant``)."""
        return cls.assistant(text)

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=text)

    @classmethod
    def user(cls, content: str | Sequence[Any]) -> Message:
        """A user message: text, or a list of what ``to_parts`` converts (text, figures,
        images, arrays, bytes, paths, frames, ``Image(...)`` / ``File(...)``)."""
        return cls(role="user", content=content if isinstance(content, str) else to_parts(content))

    @classmethod
    def assistant(cls, text: str | tuple[Part, ...] | None, tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        return cls(role="assistant", content=text, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, call: ToolCall, text: str | Iterable[Part]) -> Message:
        """The result of ``call``: text, or parts (a tool that returned an image)."""
        content = text if isinstance(text, str) else tuple(text)
        return cls(role="tool", content=content, tool_call_id=call.id, name=call.name)


def _call_dict(call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.problem is not None:
        out["problem"] = call.problem
    if call.note is not None:
        out["note"] = call.note
    return out


# Haystack spells the class ChatMessage; the seeds' code ports by changing imports.
ChatMessage = Message
