"""The model interface every model family implements, and the OpenAI wire request.

Requests are built once, in the OpenAI Chat Completions wire format, by ``ModelRequest``; the
offline, replay and real OpenAI models all receive the same object, so what a scripted model
sees in a test is what OpenAI would receive.
"""

from __future__ import annotations

import abc
import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import ConfigurationError
from ..events import Usage
from ..messages import BinaryPart, Part, TextPart, ToolCall
from ..messages.wire import parts_from_items, text_of
from ..util.fastinit import fast_init
from .attachments import chat_tool_results
from .tokens import TokenCounter, counter_for_label

REASONING_KEY = "reasoning_items"
"""The key, in an assistant message of a turn's wire messages, holding the reasoning items the
model produced with it (Responses API). Only the Responses API receives them (with the message,
within the turn); every other wire format leaves the key out (``chat_messages``)."""

_REASONING_FIELDS = ("type", "id", "summary", "content", "encrypted_content")


def chat_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as Chat Completions takes them: without the reasoning items a Responses
    model left on them, and with the images and files of tool results after them in a user
    message (``attachments.chat_tool_results``); the same list when there is neither."""
    for message in messages:  # noqa: SIM110  (one pass with no call per message: every request comes here)
        if REASONING_KEY in message or message.get("content").__class__ is list:
            break
    else:
        return messages
    messages = chat_tool_results(messages)
    if not any(REASONING_KEY in m for m in messages):
        return messages
    return [{k: v for k, v in m.items() if k != REASONING_KEY} if REASONING_KEY in m else m for m in messages]


def reasoning_items(raw: Any) -> list[dict[str, Any]]:
    """The reasoning items of a Responses API answer, as they are sent back to the API (their
    id, summary and encrypted content); [] for any other answer."""
    output = raw.get("output") if isinstance(raw, dict) else None
    if not isinstance(output, list):
        return []
    return [
        {k: item[k] for k in _REASONING_FIELDS if item.get(k) is not None}
        for item in output
        if isinstance(item, dict) and item.get("type") == "reasoning"
    ]


@fast_init(read_often=True)
@dataclass(frozen=True)
class ModelRequest:
    """One request to a model, in the OpenAI Chat Completions wire format (its images and files
    by reference: ``agentnb.messages.wire``)."""

    messages: list[dict[str, Any]]
    """Messages (system first) as OpenAI chat dicts."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """Tool schemas as OpenAI chat ``{"type": "function", "function": {...}}`` dicts."""
    options: dict[str, Any] = field(default_factory=dict)
    """Extra request options (tool_choice, temperature, ...)."""
    stream_arguments: frozenset[str] = frozenset()
    """Tools whose arguments ``stream`` yields as they arrive (``ArgumentsDelta``): a typed
    run's output tools. Not part of what is sent."""
    parts: Mapping[str, BinaryPart] = field(default_factory=dict)
    """The images and files the messages refer to (``agentnb-blob:<sha256>``), by hash: their
    bytes, written in only when a request goes on the wire."""

    @property
    def system_prompt(self) -> str | None:
        first = self.messages[0] if self.messages else None
        return first.get("content") if first and first.get("role") in ("system", "developer") else None

    @property
    def last_user_message(self) -> str | None:
        """The text of the last user message (its text parts joined, for one of parts)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return text_of(message.get("content"))
        return None

    @property
    def last_user_parts(self) -> tuple[Part, ...]:
        """The parts of the last user message: its text, images and files (their bytes from
        ``parts``); one TextPart for a text message."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, list):
                    return parts_from_items(content, self.parts)
                return (TextPart(content),) if content else ()
        return ()

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]

    def tool_results(self) -> list[dict[str, Any]]:
        """The ``role=tool`` messages after the last user message."""
        out: list[dict[str, Any]] = []
        for message in reversed(self.messages):
            if message.get("role") == "user":
                break
            if message.get("role") == "tool":
                out.append(message)
        return list(reversed(out))

    def chat_payload(self, model: str, **extra: Any) -> dict[str, Any]:
        """The Chat Completions request body for ``model``."""
        payload: dict[str, Any] = {"model": model, "messages": chat_messages(self.messages)}
        if self.tools:
            payload["tools"] = self.tools
        payload.update(self.options)
        payload.update(extra)
        return payload


@fast_init(read_often=True)
@dataclass(frozen=True)
class ModelResponse:
    """A model's complete answer to one request."""

    content: str | None = None
    """The text, if any."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls requested (possibly several, run in order)."""
    finish_reason: str | None = None
    """stop, tool_calls, length, ..."""
    usage: Usage = field(default_factory=Usage)
    """Token counts."""
    raw: dict[str, Any] = field(default_factory=dict)
    """The response as received (JSON-able), kept in the turn record for replay."""

    @property
    def reasoning(self) -> list[dict[str, Any]]:
        """The reasoning items of a Responses API answer ([] otherwise): sent back with the
        answer's tool calls in the turn's next request, so the model keeps its reasoning."""
        return reasoning_items(self.raw)


@fast_init
@dataclass(frozen=True)
class ArgumentsDelta:
    """A tool call's arguments so far, while they stream in (only for the tools a request names
    in ``stream_arguments``)."""

    index: int
    """Which call of the answer it is (the calls numbered in the order they came, from 0)."""
    name: str
    """The tool called."""
    arguments: str
    """The arguments' JSON text received so far (not the new piece: the whole of it)."""


M = TypeVar("M", bound="Model")


class Model(abc.ABC):
    """A chat model. ``stream`` yields text deltas (``str``), the arguments of the tools the
    request names in ``stream_arguments`` as they grow (``ArgumentsDelta``), and ends with a
    ``ModelResponse``."""

    kind: str = "model"
    """scripted, replay, local or openai: shown wherever the model is named."""
    external: bool = False
    """Whether answers come from outside this process (a server, the local model): then a
    notebook's recording can stand in for them. Offline models are Python and always answer."""
    origin: str | None = None
    """How the agent's model was chosen (``resolve_model``: explicit, default, environment or
    offline fallback); None for a model no agent resolved."""

    @property
    @abc.abstractmethod
    def label(self) -> str:
        """How the model is named in the inspector and records (e.g. ``openai:gpt-5-mini``)."""

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        """The request exactly as it goes on the wire (no credentials)."""
        return request.chat_payload(self.label)

    def offline_reason(self) -> str | None:
        """Why this model cannot be called here and now (no API key, no weights), or None."""
        return None

    def token_counter(self) -> TokenCounter:
        """The best token counter for this model available here and now (an estimate when no
        tokenizer is known; ``agentnb.models.tokens``)."""
        return counter_for_label(self.label)

    @abc.abstractmethod
    def stream(self, request: ModelRequest) -> Iterator[str | ArgumentsDelta | ModelResponse]:
        """Answer ``request``: yield text deltas as they arrive (and the arguments of the calls
        of ``request.stream_arguments``' tools, where the model streams them), then the full
        response."""

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer ``request`` without streaming."""
        response = None
        for item in self.stream(request):
            if isinstance(item, ModelResponse):
                response = item
        if response is None:
            raise RuntimeError(f"model {self.label} ended its stream without a response")
        return response

    def copy(self: M, **settings: Any) -> M:
        """A copy of this model with ``settings`` changed (public attributes such as
        ``max_retries``), sharing no client or connection with this one."""
        unknown = [name for name in settings if name.startswith("_") or not hasattr(self, name)]
        if unknown:
            raise ConfigurationError(
                f"{type(self).__name__}.copy(): no setting named {', '.join(map(repr, unknown))}; "
                "give public attributes of the model"
            )
        fresh = copy.copy(self)
        for name, value in settings.items():
            setattr(fresh, name, value)
        fresh._forget_connections()
        return fresh

    def native_output(self, name: str, schema: dict[str, Any], strict: bool) -> dict[str, Any] | None:
        """The request options that ask this model for ``schema`` natively (structured output),
        or None when it has no such thing (typed output then uses a tool or the prompt)."""
        return None

    def without_credentials(self) -> Model:
        """This model as it may leave the process (to another machine, into a file): no API key
        (where it runs, its own environment gives one). A model that holds none returns itself."""
        return self

    def _forget_connections(self) -> None:  # noqa: B027  (optional hook: nothing to drop by default)
        """Drop clients and connections (a copy makes its own on first use)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label}>"


_CHUNK = re.compile(r"\S+\s*|\s+")


def text_chunks(text: str | None) -> list[str]:
    """Text in the word-sized pieces a streaming model sends (offline and replayed answers)."""
    return _CHUNK.findall(text or "")
