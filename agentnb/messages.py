"""Chat messages and tool calls, with their OpenAI Chat Completions wire form.

agentnb keeps messages as small frozen dataclasses and converts them to the OpenAI wire
format in one place (``to_openai``), so every model — scripted, replayed or real — sees the
same request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from .util.fastinit import fast_init

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


@fast_init
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


@fast_init
@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    """Who speaks: system, user, assistant or tool."""
    content: str | None = None
    """The text; None for an assistant message that only calls tools."""
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    """Tool calls of an assistant message."""
    tool_call_id: str | None = None
    """For a tool message: the call it answers."""
    name: str | None = None
    """For a tool message: the tool's name (kept for display; not sent)."""

    @property
    def text(self) -> str:
        """The content as text ('' when there is none), as Haystack's ``ChatMessage.text``."""
        return self.content or ""

    def to_openai(self) -> dict[str, Any]:
        """This message in the OpenAI Chat Completions wire format."""
        out: dict[str, Any] = {"role": self.role}
        if self.role == "assistant" and self.tool_calls:
            out["content"] = self.content
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        else:
            out["content"] = self.content if self.content is not None else ""
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
        return out

    @classmethod
    def from_openai(cls, data: dict[str, Any]) -> Message:
        """Parse a message in the OpenAI Chat Completions wire format."""
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
            content=data.get("content"),
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )

    def to_dict(self) -> dict[str, Any]:
        """This message as stored in a session (every field, nothing added)."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [_call_dict(c) for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """The inverse of ``to_dict`` (ValueError for a role no message has)."""
        if data["role"] not in ROLES:
            raise ValueError(
                f"a message of unknown role {data['role']!r:.40} (a message is one of {', '.join(ROLES)})"
            )
        return cls(
            role=data["role"],
            content=data.get("content"),
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
    def from_user(cls, text: str) -> Message:
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
    def user(cls, text: str) -> Message:
        return cls(role="user", content=text)

    @classmethod
    def assistant(cls, text: str | None, tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        return cls(role="assistant", content=text, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, call: ToolCall, text: str) -> Message:
        return cls(role="tool", content=text, tool_call_id=call.id, name=call.name)


def _call_dict(call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.problem is not None:
        out["problem"] = call.problem
    if call.note is not None:
        out["note"] = call.note
    return out


# Haystack spells the class ChatMessage; the seeds' code ports by changing imports.
ChatMessage = Message
