"""OpenAI Chat Completions through the official ``openai`` client (imported lazily).

Works with api.openai.com and with any OpenAI-compatible server (Ollama, vLLM, llama.cpp's
``llama-server``) through ``base_url``. Streaming is on by default: text deltas are yielded as
they arrive and tool-call deltas are assembled per index, so parallel tool calls come out whole.
Errors a user meets (no key, bad key, unreachable server, unknown model, rate limit, timeout,
context too long) become one-line ``ModelError`` subclasses.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ..errors import (
    ContextLengthError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelRateLimitError,
)
from ..text import one_line
from ..events import Usage
from ..messages import ToolCall
from .base import Model, ModelRequest, ModelResponse, estimate_tokens

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Keys sent to servers that need none (Ollama, vLLM, llama.cpp) but that the client insists on.
PLACEHOLDER_KEY = "not-needed"
_CONTEXT_MARKERS = ("context_length_exceeded", "context length", "context window", "context size", "too many tokens")


class OpenAIBase(Model):
    """What the Chat Completions and Responses models share: settings, the client, errors."""

    kind = "openai"
    prefix = "openai"
    external = True

    def __init__(
        self,
        id: str = "gpt-5-mini",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        stream: bool = True,
        client_options: dict[str, Any] | None = None,
        request_options: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(id, str) or not id.strip():
            raise ModelNotFoundError(f"the model id must be a non-empty string like 'gpt-5-mini', got {id!r}")
        self.id = id
        self.base_url = base_url
        # Kept private and out of repr: never part of a payload, a record or a display.
        self._api_key = api_key
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.streaming = bool(stream)
        self.client_options = dict(client_options or {})
        self.request_options = dict(request_options or {})
        self.origin = "explicit"
        self._client_cache: tuple[tuple[str, str | None], Any] | None = None

    @property
    def label(self) -> str:
        return f"{self.prefix}:{self.id}"

    # -- connection ---------------------------------------------------------------------

    def resolved_base_url(self) -> str | None:
        """The server this model talks to: ``base_url``, else ``$OPENAI_BASE_URL``, else None (OpenAI)."""
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or None

    def offline_reason(self) -> str | None:
        """Why no request can be sent: no key for api.openai.com (servers given by base_url need none)."""
        if self._api_key or os.environ.get("OPENAI_API_KEY") or self.resolved_base_url() is not None:
            return None
        return "no OpenAI API key: set OPENAI_API_KEY"

    def server(self) -> str:
        """The server's URL, for messages."""
        return (self.resolved_base_url() or DEFAULT_BASE_URL).rstrip("/")

    def client(self) -> Any:
        """The ``openai.OpenAI`` client (created on first use, re-created if the key or URL changed)."""
        base_url = self.resolved_base_url()
        key = self._api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url is None:
                raise ModelAuthenticationError(
                    f"{self.label}: no OpenAI API key; set OPENAI_API_KEY or pass base_url=… "
                    f"for an OpenAI-compatible server (Ollama, vLLM, llama.cpp)"
                )
            key = PLACEHOLDER_KEY
        cache_key = (key, base_url)
        if self._client_cache is not None and self._client_cache[0] == cache_key:
            return self._client_cache[1]
        import openai  # lazily: importing openai costs about a second

        options: dict[str, Any] = {"api_key": key, "base_url": base_url}
        if self.timeout is not None:
            options["timeout"] = self.timeout
        if self.max_retries is not None:
            options["max_retries"] = self.max_retries
        options.update(self.client_options)
        client = openai.OpenAI(**options)
        self._client_cache = (cache_key, client)
        return client

    def _retries(self) -> int:
        client = self._client_cache[1] if self._client_cache else None
        return getattr(client, "max_retries", self.max_retries if self.max_retries is not None else 2)

    def translate_error(self, exc: BaseException) -> BaseException:
        """An ``openai`` exception as a one-line agentnb ``ModelError`` (others unchanged)."""
        import openai

        url = self.server()
        retries = self._retries()
        after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        if isinstance(exc, openai.APITimeoutError):
            timeout = self.timeout if self.timeout is not None else self.client_options.get("timeout", 600)
            return ModelConnectionError(
                f"{self.label}: {url} did not answer within {timeout} s{after}; "
                f"pass a larger timeout=… or check that the server is up"
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = one_line(exc.__cause__ or exc)
            return ModelConnectionError(
                f"{self.label}: cannot reach the model server at {url} ({cause}); "
                f"check base_url=… and that the server is running"
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = _server_message(exc)
            if status == 401 or isinstance(exc, openai.PermissionDeniedError):
                return ModelAuthenticationError(
                    f"{self.label}: {url} refused the API key (HTTP {status}: {detail}); "
                    f"set OPENAI_API_KEY to a valid key or pass base_url=…"
                )
            if status == 404:
                return ModelNotFoundError(
                    f"{self.label}: model {self.id!r} was not found at {url} (HTTP 404: {detail}); "
                    f"check the model name and base_url"
                )
            if status == 429:
                return ModelRateLimitError(
                    f"{self.label}: rate limited by {url} (HTTP 429{after}: {detail}); "
                    f"wait and run again, or check your quota"
                )
            text = f"{getattr(exc, 'code', '') or ''} {detail}".lower()
            if status in (400, 413) and any(m in text for m in _CONTEXT_MARKERS):
                return ContextLengthError(
                    f"{self.label}: the request is too long for the model's context window "
                    f"(HTTP {status}: {detail}); shorten the instructions or history "
                    f"(num_history_runs) or use a model with a longer context"
                )
            return ModelError(f"{self.label}: {url} answered HTTP {status}{after if status >= 500 else ''}: {detail}")
        if isinstance(exc, openai.OpenAIError):
            return ModelError(f"{self.label}: {one_line(exc)}")
        return exc

    def _settings(self) -> dict[str, Any]:
        """Model-level request settings (before the request's own options)."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        out.update(self.request_options)
        return out

    def __repr__(self) -> str:
        where = f" at {self.base_url}" if self.base_url else ""
        return f"<{type(self).__name__} {self.label}{where}>"


class OpenAIChat(OpenAIBase):
    """A model behind the Chat Completions API: ``OpenAIChat("gpt-5-mini", base_url=...)``."""

    prefix = "openai"

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.id, "messages": request.messages}
        if request.tools:
            body["tools"] = request.tools
        body.update(self._settings())
        if self.max_tokens is not None:
            # OpenAI's own API has renamed the field; compatible servers still read the old one.
            body["max_completion_tokens" if self.resolved_base_url() is None else "max_tokens"] = self.max_tokens
        body.update(request.options)
        if self.streaming:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def stream(self, request: ModelRequest) -> Iterator[str | ModelResponse]:
        body = self.payload(request)
        try:
            client = self.client()
            if not body.get("stream"):
                completion = client.chat.completions.create(**body)
                response = chat_response(completion.to_dict(mode="json"), request)
                if response.content:
                    yield response.content
                yield response
                return
            yield from _assemble_chat_stream(client.chat.completions.create(**body), request)
        except ModelError:
            raise
        except Exception as exc:
            translated = self.translate_error(exc)
            if translated is exc:
                raise
            raise translated from exc


def _assemble_chat_stream(chunks: Any, request: ModelRequest) -> Iterator[str | ModelResponse]:
    """Text deltas as they come, then the whole completion assembled from the chunks."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: dict[str, Any] | None = None
    head: dict[str, Any] = {}
    for chunk in chunks:
        if not head:
            head = {"id": chunk.id, "created": chunk.created, "model": chunk.model}
        if chunk.usage is not None:
            usage = chunk.usage.to_dict(mode="json")
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
                yield delta.content
            for part in delta.tool_calls or ():
                entry = calls.setdefault(part.index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                if part.id:
                    entry["id"] = part.id
                if part.function is not None:
                    if part.function.name:
                        entry["function"]["name"] += part.function.name
                    if part.function.arguments:
                        entry["function"]["arguments"] += part.function.arguments
            if choice.finish_reason:
                finish = choice.finish_reason
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    raw: dict[str, Any] = {
        **head,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage is not None:
        raw["usage"] = usage
    yield chat_response(raw, request)


def chat_response(raw: dict[str, Any], request: ModelRequest | None = None) -> ModelResponse:
    """A ModelResponse from a Chat Completions response body (also used by replay)."""
    choices = raw.get("choices") or []
    if not choices:
        raise ModelError(f"the server's answer has no choices: {str(raw)[:200]}")
    choice = choices[0]
    message = choice.get("message") or {}
    calls = tuple(
        ToolCall(
            id=c.get("id") or f"call_{i}",
            name=(c.get("function") or {}).get("name") or "",
            arguments=(c.get("function") or {}).get("arguments") or "",
        )
        for i, c in enumerate(message.get("tool_calls") or ())
    )
    content = message.get("content") or None
    return ModelResponse(
        content=content,
        tool_calls=calls,
        finish_reason=choice.get("finish_reason"),
        usage=usage_from(raw.get("usage"), request, content),
        raw=raw,
    )


def usage_from(usage: dict[str, Any] | None, request: ModelRequest | None, content: str | None) -> Usage:
    """Server token counts; a marked estimate when the server sent none."""
    if usage:
        return Usage(
            input_tokens=int(usage.get("prompt_tokens", usage.get("input_tokens", 0)) or 0),
            output_tokens=int(usage.get("completion_tokens", usage.get("output_tokens", 0)) or 0),
        )
    messages = request.messages if request is not None else []
    return Usage(
        input_tokens=sum(estimate_tokens(m.get("content")) for m in messages if isinstance(m.get("content"), str)),
        output_tokens=estimate_tokens(content),
        estimated=True,
    )


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    return one_line(message or getattr(exc, "message", None) or exc)[:300]
