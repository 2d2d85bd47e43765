"""Reading an OpenAI-protocol answer defensively: a total deadline, SSE events, bounded JSON.

The ``openai`` client sends the request (auth, retries, HTTP errors); the answer's bytes are
read here, in a worker thread, so that a server trickling one byte at a time or sending
keep-alive pings forever cannot hold a run past its ``timeout``: the caller waits at most until
the deadline, then shuts the connection down. Bodies and events are decoded with limits (size,
nesting, integer digits), and anything malformed is a ``ModelResponseError`` saying what the
server sent.
"""

from __future__ import annotations

import json
import math
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from ..errors import ModelResponseError
from ..text import one_line
from ..events import Usage
from ..messages import ToolCall
from ..tokens import estimate_tokens
from .base import ModelRequest

MAX_ANSWER_BYTES = 32 << 20
"""A longer answer is refused (no model answer is this large; a broken server can be)."""
MAX_DEPTH = 64
"""Deepest JSON nesting accepted in an answer (real ones are under ten levels)."""
DONE = "[DONE]"


class DeadlineError(Exception):
    """The whole answer did not arrive before the deadline."""


class CutError(Exception):
    """The connection broke while the answer's body was being read."""


def kind(value: Any) -> str:
    """'a list', 'an int', 'null': how a JSON value is named in messages."""
    if value is None:
        return "null"
    name = {dict: "object", list: "list", str: "string", bool: "boolean", int: "int", float: "number"}.get(type(value), type(value).__name__)
    return ("an " if name[0] in "aeiou" else "a ") + name


def show(value: Any, limit: int = 60) -> str:
    """A short, one-line rendering of a value the server sent."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=True, default=repr)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- reading the bytes under a deadline --------------------------------------------------------


def read_answer(open_response: Callable[[], AbstractContextManager[Any]], seconds: float) -> tuple[str, Iterator[bytes]]:
    """Send the request and return (content type, body chunks); everything, retries included,
    must arrive within ``seconds`` or ``DeadlineError`` is raised."""
    deadline = time.monotonic() + seconds
    items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    cancelled = threading.Event()
    responses: list[Any] = []

    def work() -> None:
        try:
            with open_response() as response:
                responses.append(response.http_response)
                if cancelled.is_set():
                    return
                items.put(("head", response.http_response.headers.get("content-type", "")))
                try:
                    for chunk in response.iter_bytes():
                        if cancelled.is_set():
                            return
                        items.put(("data", chunk))
                except Exception as exc:  # the client wraps errors while sending, not while reading
                    raise CutError(one_line(exc)[:200]) from exc
            items.put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            items.put(("error", exc))

    def cancel() -> None:
        cancelled.set()
        for response in responses:
            _shut_down(response)

    threading.Thread(target=work, daemon=True, name="agentnb-model-answer").start()
    try:
        what, value = _next(items, deadline)
    except BaseException:
        cancel()
        raise
    if what == "error":
        raise value
    return str(value), _chunks(items, deadline, cancel)


def _next(items: queue.SimpleQueue[tuple[str, Any]], deadline: float) -> tuple[str, Any]:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineError
    try:
        return items.get(timeout=remaining)
    except queue.Empty:
        raise DeadlineError from None


def _chunks(items: queue.SimpleQueue[tuple[str, Any]], deadline: float, cancel: Callable[[], None]) -> Iterator[bytes]:
    size = 0
    try:
        while True:
            what, value = _next(items, deadline)
            if what == "end":
                return
            if what == "error":
                raise value
            size += len(value)
            if size > MAX_ANSWER_BYTES:
                raise ModelResponseError(f"sent an answer longer than {MAX_ANSWER_BYTES >> 20} MB")
            yield value
    finally:
        cancel()


def _shut_down(response: Any) -> None:
    """Wake a worker blocked reading ``response``: shut its socket down (closing it from another
    thread would not wake the read, and could hand the descriptor to someone else)."""
    stream = getattr(response, "extensions", {}).get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


# -- decoding -----------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def load_json(data: bytes | str, what: str) -> Any:
    """Decode ``data``; ModelResponseError (naming ``what``) when it is not bounded, valid JSON."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ModelResponseError(f"sent {what} that is not valid JSON: not UTF-8 text (byte {exc.start})") from None
    if not data.strip():
        raise ModelResponseError(f"sent an empty {what}")
    try:
        value = json.loads(data, parse_constant=_reject_constant)
    except RecursionError:
        raise ModelResponseError(f"sent {what} that is not valid JSON: nested too deeply to read") from None
    except ValueError as exc:  # JSONDecodeError, and integers too long to convert
        raise ModelResponseError(f"sent {what} that is not valid JSON ({one_line(exc)[:100]}): {show(data)}") from None
    if not _shallow(value):
        raise ModelResponseError(f"sent {what} nested deeper than {MAX_DEPTH} levels")
    return value


def _shallow(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return True


def sse_data(chunks: Iterator[bytes]) -> Iterator[tuple[str, str]]:
    """(event name, data) of each server-sent event until ``[DONE]`` or the end of the stream;
    a stream that ends inside an event was cut, which is an error."""
    buffer = b""
    name, data = "", []
    for chunk in chunks:
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for raw in lines:
            line = _decode_line(raw)
            if not line:  # a blank line ends the event
                if data:
                    text = "\n".join(data)
                    if text.strip() == DONE:
                        return
                    yield name, text
                name, data = "", []
            elif not line.startswith(":"):  # ':' starts a comment (keep-alive)
                field, _, value = line.partition(":")
                if field == "data":
                    data.append(value[1:] if value.startswith(" ") else value)
                elif field == "event":
                    name = value.strip()
    rest = _decode_line(buffer)
    if rest.startswith("data:") and rest[5:].strip() == DONE:
        return
    if data or rest.strip():
        raise ModelResponseError("cut the stream in the middle of an event (the connection closed before it ended)")


def _decode_line(raw: bytes) -> str:
    try:
        return raw.rstrip(b"\r").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelResponseError(f"sent a stream line that is not UTF-8 text (byte {exc.start})") from None


def event_error(event: str, data: Any) -> ModelResponseError | None:
    """The error a stream event carries (``{"error": ...}`` or ``event: error``), if any."""
    error = data.get("error") if isinstance(data, dict) else None
    if not error and event != "error":
        return None
    message = error.get("message") if isinstance(error, dict) else error
    if not message and isinstance(data, dict):
        message = data.get("message")
    return ModelResponseError(f"sent an error in the stream: {show(message or data, 200)}")


def number(value: Any) -> int | None:
    """A token count, or None when the server sent something that is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return int(value)
    return None


# -- fields shared by the Chat Completions and Responses answers ---------------------------------


def as_list(value: Any, what: str) -> list[Any]:
    """``value`` when it is a list ([] for null); ModelResponseError naming ``what`` otherwise."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ModelResponseError(f"sent {what} that is {kind(value)}, not a list: {show(value)}")
    return value


def arguments_text(value: Any) -> str:
    """Tool arguments as JSON text. Some servers send them as a JSON value instead of text:
    it is written back as text, so the tool's own validation says what is wrong with it."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def tool_call_from(call_id: Any, name: Any, arguments: Any, position: int) -> ToolCall:
    """A ToolCall from the fields a server sent; ModelResponseError when the name is unusable."""
    if not isinstance(name, str) or not name:
        what = "no name" if name in (None, "") else f"a name that is {kind(name)} ({show(name)})"
        raise ModelResponseError(f"sent a tool call with {what}; a tool call names its tool with a string")
    ident = call_id if isinstance(call_id, str) and call_id else str(call_id) if isinstance(call_id, int) else f"call_{position}"
    return ToolCall(id=ident, name=name, arguments=arguments_text(arguments))


def usage_from(usage: Any, request: ModelRequest | None, content: str | None) -> Usage:
    """Server token counts; a marked estimate when the server sent none (or nonsense)."""
    if isinstance(usage, dict):
        sent_in = number(usage.get("prompt_tokens", usage.get("input_tokens")))
        sent_out = number(usage.get("completion_tokens", usage.get("output_tokens")))
        if sent_in is not None or sent_out is not None:
            return Usage(input_tokens=sent_in or 0, output_tokens=sent_out or 0)
    messages = request.messages if request is not None else []
    return Usage(
        input_tokens=sum(estimate_tokens(m.get("content")) for m in messages if isinstance(m.get("content"), str)),
        output_tokens=estimate_tokens(content),
        estimated=True,
    )
