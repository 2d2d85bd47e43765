"""What the OpenAI-protocol models share: settings, the client, reading answers, errors, credentials.

Works with api.openai.com and with any OpenAI-compatible server (Ollama, vLLM, llama.cpp's
``llama-server``) through ``base_url``, with the official ``openai`` client (imported lazily).
The answer is read under a total deadline (``timeout``) and checked field by field; errors a
user meets (no key, bad key, unreachable server, unknown model, rate limit, timeout, context
too long, a malformed answer) become one-line ``ModelError`` subclasses. The model's own
credentials are redacted from everything it returns: payloads, answers, error texts.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any

from ..errors import (
    ContextLengthError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelRateLimitError,
    ModelResponseError,
)
from ..util.extras import require
from ..util.text import one_line
from .base import ArgumentsDelta, Model, ModelRequest, ModelResponse
from .bounded_json import load_json
from .credentials import Redactor, header_secrets, query_secrets, redact_url, url_secrets
from .openai_transport import CutError, DeadlineError, read_answer
from .openai_wire import not_found_code
from .sse import sse_data

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Keys sent to servers that need none (Ollama, vLLM, llama.cpp) but that the client insists on.
PLACEHOLDER_KEY = "not-needed"
DEFAULT_TIMEOUT = 600.0
"""The ``openai`` client's own default, used as the total deadline when none is given."""
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "context size",
    "too many tokens",
)

Parser = Callable[[Iterator[tuple[str, str]], ModelRequest], Iterator["str | ArgumentsDelta | ModelResponse"]]


class OpenAIBase(Model):
    """What the Chat Completions and Responses models share: settings, the client, reading
    answers, errors and credentials."""

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

    def without_credentials(self) -> Model:
        if self._api_key is None:
            return self
        shipped = self.copy()
        shipped._api_key = None
        return shipped

    def _forget_connections(self) -> None:
        self._client_cache = None

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
        """The server's URL, for messages (credentials in it redacted)."""
        return redact_url((self.resolved_base_url() or DEFAULT_BASE_URL).rstrip("/"))

    def _key(self) -> str | None:
        return self._api_key or os.environ.get("OPENAI_API_KEY")

    def client(self) -> Any:
        """The ``openai.OpenAI`` client (created on first use, re-created if the key or URL changed)."""
        base_url = self.resolved_base_url()
        key = self._key()
        if not key:
            if base_url is None:
                raise ModelAuthenticationError(
                    f"{self.label}: no OpenAI API key; set OPENAI_API_KEY (or pass api_key=), or give "
                    f"base_url= the address of an OpenAI-compatible server (Ollama, vLLM, llama.cpp)"
                )
            key = PLACEHOLDER_KEY
        cache_key = (key, base_url)
        if self._client_cache is not None and self._client_cache[0] == cache_key:
            return self._client_cache[1]
        require("openai", self.label)
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

    def deadline(self) -> float:
        """Seconds the whole answer to one request may take, retries included (``timeout``)."""
        for value in (self.timeout, self.client_options.get("timeout")):
            value = getattr(value, "read", value)  # an httpx.Timeout: its read timeout
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value)
        return DEFAULT_TIMEOUT

    # -- credentials ----------------------------------------------------------------------

    def credentials(self, request: ModelRequest | None = None) -> list[str]:
        """Every secret this model is configured with (for redaction, never for display)."""
        key = self._key()
        out = [key] if key and key != PLACEHOLDER_KEY else []
        client = self.client_options
        out += url_secrets(self.resolved_base_url()) + url_secrets(client.get("base_url"))
        if isinstance(client.get("api_key"), str):
            out.append(client["api_key"])
        out += header_secrets(client.get("default_headers")) + query_secrets(client.get("default_query"))
        out += header_secrets(getattr(client.get("http_client"), "headers", None))
        for options in (self.request_options, request.options if request is not None else {}):
            out += header_secrets(options.get("extra_headers")) + query_secrets(options.get("extra_query"))
        return out

    def redactor(self, request: ModelRequest | None = None) -> Redactor:
        """What removes this model's credentials (and those of ``request``'s options)."""
        return Redactor(self.credentials(request))

    @abc.abstractmethod
    def wire_body(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of the ``openai`` call, credentials included."""

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        """The request as recorded and shown: the wire body with every credential redacted."""
        return self.redactor(request).data(self.wire_body(request))

    # -- answers --------------------------------------------------------------------------

    def _answer(
        self,
        open_response: Callable[[], AbstractContextManager[Any]],
        request: ModelRequest,
        parse_stream: Parser,
        parse_body: Callable[[Any, ModelRequest], ModelResponse],
    ) -> Iterator[str | ArgumentsDelta | ModelResponse]:
        """Read the answer under the deadline, parse it, and yield it with credentials redacted."""
        redactor = self.redactor(request)
        try:
            content_type, chunks = read_answer(
                open_response, self.deadline(), one_attempt=self._retries() == 0
            )
            if "text/event-stream" in content_type:
                items: Iterator[str | ArgumentsDelta | ModelResponse] = parse_stream(
                    sse_data(chunks), request
                )
            else:
                items = _whole(parse_body(load_json(b"".join(chunks), "a body"), request))
            held = redactor.deltas()
            for item in items:
                if isinstance(item, ModelResponse):
                    rest = held.flush()
                    if rest:
                        yield rest
                    yield _redacted(item, redactor)
                elif isinstance(item, ArgumentsDelta):  # the whole of the call's arguments so far
                    yield (
                        replace(item, arguments=redactor.deltas().feed(item.arguments)) if redactor else item
                    )
                else:
                    shown = held.feed(item)
                    if shown:
                        yield shown
        except ModelResponseError as exc:
            raise ModelResponseError(redactor.text(f"{self.label}: {self.server()} {exc}")) from None
        except ModelError:
            raise
        except Exception as exc:
            translated = self.translate_error(exc)
            if translated is exc:
                raise
            translated.args = (redactor.text(str(translated)),)
            # The cause may hold the server's echo of a credential: then it is not chained.
            raise translated from (None if redactor.found_in(f"{exc!r} {exc}") else exc)

    def translate_error(self, exc: BaseException) -> BaseException:
        """An ``openai`` (or reading) exception as a one-line agentnb ``ModelError``, without
        the model's credentials (``stream`` also removes those of the request's options)."""
        error = self._translate(exc)
        if isinstance(error, ModelError):
            error.args = (self.redactor().text(str(error)),)
        return error

    def _translate(self, exc: BaseException) -> BaseException:
        import openai

        url = self.server()
        retries = self._retries()
        after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        if isinstance(exc, (openai.APITimeoutError, DeadlineError)):
            return ModelConnectionError(
                f"{self.label}: {url} did not answer within {self.deadline():g} s (the whole answer, "
                f"retries included); pass a larger timeout (seconds) or check that the server is up"
            )
        if isinstance(exc, CutError):
            return ModelConnectionError(
                f"{self.label}: the connection to {url} broke during the answer ({exc}); run again"
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = one_line(exc.__cause__ or exc)
            return ModelConnectionError(
                f"{self.label}: cannot reach the model server at {url} ({cause}); "
                f"check the base_url and that the server is running"
            )
        if isinstance(exc, openai.APIStatusError):
            return self._status_error(exc, url, after)
        if isinstance(exc, openai.OpenAIError):
            return ModelError(f"{self.label}: {one_line(exc)[:300]}")
        return exc

    def _status_error(self, exc: Any, url: str, after: str) -> ModelError:
        import openai

        status = exc.status_code
        detail = _server_message(exc)
        if status == 401 or isinstance(exc, openai.PermissionDeniedError):
            return ModelAuthenticationError(
                f"{self.label}: {url} refused the API key (HTTP {status}: {detail}); "
                + (
                    "check the api_key given to the model"
                    if self._api_key
                    else "set OPENAI_API_KEY to a valid key"
                )
            )
        if status == 404 or not_found_code(exc) is not None:
            return ModelNotFoundError(
                f"{self.label}: model {self.id!r} was not found at {url} (HTTP {status}: {detail}); "
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
        return ModelError(
            f"{self.label}: {url} answered HTTP {status}{after if status >= 500 else ''}: {detail}"
        )

    def _settings(self) -> dict[str, Any]:
        """Model-level request settings (before the request's own options)."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        out.update(self.request_options)
        return out

    def __repr__(self) -> str:
        where = f" at {redact_url(self.base_url)}" if self.base_url else ""
        return f"<{type(self).__name__} {self.label}{where}>"


_MERGED = ("extra_headers", "extra_query", "extra_body")


def merge_options(body: dict[str, Any], options: dict[str, Any]) -> None:
    """Add a request's options to ``body``; extra headers, query and body fields given both by
    the model and by the request are merged (the request's win), not replaced."""
    for key, value in options.items():
        if key in _MERGED and isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value


def _whole(response: ModelResponse) -> Iterator[str | ModelResponse]:
    if response.content:
        yield response.content
    yield response


def _redacted(response: ModelResponse, redactor: Redactor) -> ModelResponse:
    if not redactor:
        return response
    calls = tuple(
        replace(c, arguments=redactor.text(c.arguments), name=redactor.text(c.name))
        for c in response.tool_calls
    )
    content = redactor.text(response.content) if response.content is not None else None
    return replace(response, content=content, tool_calls=calls, raw=redactor.data(response.raw))


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    return one_line(message or getattr(exc, "message", None) or exc)[:300]
