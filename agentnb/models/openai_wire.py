"""Reading an OpenAI-protocol answer defensively: a total deadline, SSE events, bounded JSON.

The ``openai`` client sends the request (auth, retries, HTTP errors); the answer's bytes are
read here, in a reader thread (kept for the next call), so that a server trickling one byte at a time or sending
keep-alive pings forever cannot hold a run past its ``timeout``: the caller waits at most until
the deadline, then shuts the connection down. Bodies and events are decoded with limits (size,
nesting, integer digits), and anything malformed is a ``ModelResponseError`` saying what the
server sent.
"""

from __future__ import annotations

import json
import math
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, suppress
from typing import Any

from ..errors import ModelResponseError
from ..events import Usage
from ..messages import ToolCall
from ..util.text import one_line
from .base import ModelRequest
from .tokens import estimate_tokens

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
    name = {dict: "object", list: "list", str: "string", bool: "boolean", int: "int", float: "number"}.get(
        type(value), type(value).__name__
    )
    return ("an " if name[0] in "aeiou" else "a ") + name


def show(value: Any, limit: int = 60) -> str:
    """A short, one-line rendering of a value the server sent."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=True, default=repr)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- reading the bytes under a deadline --------------------------------------------------------


class _Readers:
    """The daemon threads that read answers, kept between calls (starting a thread for every
    model call cost more than the rest of the call's own work); one leaves after idling
    ``IDLE`` seconds."""

    IDLE = 30.0

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        """Threads waiting for a job that no caller has claimed yet."""

    def run(self, job: Callable[[], None]) -> None:
        """Run ``job`` on an idle reader, or on a new one."""
        with self._lock:
            start = not self._idle
            if not start:
                self._idle -= 1
        self._jobs.put(job)
        if start:
            threading.Thread(target=self._serve, daemon=True, name="agentnb-model-answer").start()

    def _serve(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.IDLE)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # nobody has claimed this thread: leave
                        self._idle -= 1
                        return
                continue  # claimed just now: its job is on the way
            job()
            with self._lock:
                self._idle += 1


_READERS = _Readers()


def _forked() -> None:
    # A forked child has only the thread that forked: the parent's idle readers are not there.
    global _READERS
    _READERS = _Readers()


os.register_at_fork(after_in_child=_forked)


def read_answer(
    open_response: Callable[[], AbstractContextManager[Any]], seconds: float
) -> tuple[str, Iterator[bytes]]:
    """Send the request and return (content type, body chunks); everything, retries included,
    must arrive within ``seconds`` or ``DeadlineError`` is raised."""
    deadline = time.monotonic() + seconds
    items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    cancelled: list[bool] = []  # [True] once the caller gave up
    responses: list[Any] = []

    def work() -> None:
        try:
            with open_response() as response:
                responses.append(response.http_response)
                if cancelled:
                    return
                items.put(("head", response.http_response.headers.get("content-type", "")))
                try:
                    for chunk in response.iter_bytes():
                        if cancelled:
                            return
                        items.put(("data", chunk))
                except Exception as exc:  # the client wraps errors while sending, not while reading
                    raise CutError(one_line(exc)[:200]) from exc
            items.put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            items.put(("error", exc))

    def cancel() -> None:
        cancelled.append(True)
        for response in responses:
            _shut_down(response)

    _READERS.run(work)
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


def _chunks(
    items: queue.SimpleQueue[tuple[str, Any]], deadline: float, cancel: Callable[[], None]
) -> Iterator[bytes]:
    size = 0
    ended = False
    try:
        while True:
            what, value = _next(items, deadline)
            if what == "end":
                ended = True  # read to its end and closed: the connection is back in the pool, kept
                return
            if what == "error":
                raise value
            size += len(value)
            if size > MAX_ANSWER_BYTES:
                raise ModelResponseError(f"sent an answer longer than {MAX_ANSWER_BYTES >> 20} MB")
            yield value
    finally:
        if not ended:  # given up on (deadline, too long, the reader stopped): wake and drop the worker
            cancel()


def _shut_down(response: Any) -> None:
    """Wake a worker blocked reading ``response``: shut its socket down (closing it from another
    thread would not wake the read, and could hand the descriptor to someone else)."""
    stream = getattr(response, "extensions", {}).get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


# -- decoding -----------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class _NonFinite:
    """Where a server sent ``NaN`` or ``Infinity`` (not JSON numbers) while a token count is read."""

    __slots__ = ()


_NON_FINITE = _NonFinite()


def load_json(data: bytes | str, what: str) -> Any:
    """Decode ``data``; ModelResponseError (naming ``what``) when it is not bounded, valid JSON.
    ``NaN`` / ``Infinity`` are refused, except inside a ``usage`` block, where they are read as
    null (a count the server does not know: the usage is then estimated)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ModelResponseError(
                f"sent {what} that is not valid JSON: not UTF-8 text (byte {exc.start})"
            ) from None
    if not data.strip():
        raise ModelResponseError(f"sent an empty {what}")
    long_ints: list[LongInt] = []

    def parse_int(text: str) -> Any:
        if len(text) > _INT_DIGITS:
            long_ints.append(LongInt(text))
            return long_ints[-1]
        return int(text)

    try:
        try:
            value = json.loads(data, parse_constant=_reject_constant, parse_int=parse_int)
        except ValueError as exc:
            if "is not valid JSON" not in str(exc):
                raise
            value = json.loads(data, parse_constant=lambda name: _NON_FINITE, parse_int=parse_int)
            if not _only_in_usage(value):
                raise
        if long_ints and not _only_in_arguments(value):
            digits = len(long_ints[0].text.lstrip("-"))
            raise ValueError(f"an integer of {digits:,} digits, longer than Python reads ({_INT_DIGITS:,})")
    except RecursionError:
        raise ModelResponseError(f"sent {what} that is not valid JSON: nested too deeply to read") from None
    except ValueError as exc:  # JSONDecodeError, and integers too long to convert
        raise ModelResponseError(
            f"sent {what} that is not valid JSON ({one_line(exc)[:100]}): {show(data)}"
        ) from None
    if not _shallow(value):
        raise ModelResponseError(f"sent {what} nested deeper than {MAX_DEPTH} levels")
    return value


_INT_DIGITS = 4300
"""Python's own limit on the digits of an integer read from text (``sys.get_int_max_str_digits``)."""


class LongInt:
    """An integer too long to read, inside a tool call's arguments: kept as its digits, so the
    call (not the answer) fails, saying so (``arguments_text`` writes it back as it came)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _only_in_arguments(value: Any) -> bool:
    """Whether every LongInt in ``value`` is inside a tool call's ``arguments``."""
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, inside = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in pairs:
            if isinstance(child, LongInt) and not inside:
                return False
            if isinstance(child, (dict, list)):
                stack.append((child, inside or key == "arguments"))
    return True


def _only_in_usage(value: Any) -> bool:
    """Whether every NaN / Infinity in ``value`` is inside a ``usage`` object (each is then
    replaced by None, in place)."""
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, in_usage = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in pairs:
            if child is _NON_FINITE:
                if not in_usage:
                    return False
                item[key] = None
            elif isinstance(child, (dict, list)):
                stack.append((child, in_usage or key == "usage"))
    return True


def _shallow(value: Any) -> bool:
    """Whether ``value`` nests at most MAX_DEPTH levels, not counting a tool call's arguments
    (sent as an object: they become text, and a call whose arguments nest too deeply fails
    alone, as its error result)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict):
            stack.extend(
                (v, depth + 1) for k, v in item.items() if isinstance(v, (dict, list)) and k != "arguments"
            )
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return True


def sse_data(chunks: Iterator[bytes]) -> Iterator[tuple[str, str]]:
    """(event name, data) of each server-sent event until ``[DONE]`` or the end of the stream;
    a stream that ends inside an event was cut, which is an error."""
    buffer = b""
    name = ""
    data: list[str] = []
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
        raise ModelResponseError(
            "cut the stream in the middle of an event (the connection closed before it ended)"
        )


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
    if isinstance(value, str):
        return value
    marks: dict[str, str] = {}

    def long_int(item: Any) -> str:
        if not isinstance(item, LongInt):
            raise TypeError(f"{type(item).__name__} is not JSON")
        mark = f"\ue000{len(marks)}\ue000"
        marks[json.dumps(mark, ensure_ascii=False)] = item.text
        return mark

    try:
        text = json.dumps(value, ensure_ascii=False, default=long_int)
    except RecursionError:  # nested past what Python can follow: sent back as it cannot be read
        return "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    for mark, digits in marks.items():
        text = text.replace(mark, digits)
    return text


OBJECT_NOTE = "the server sent the arguments as a JSON object, not as JSON text; they were used as sent"
"""The note kept on a tool call whose arguments came as an object (``ToolCall.note``)."""


def arguments_note(value: Any) -> str | None:
    """The note for arguments sent as something other than text (None for text or nothing)."""
    if value is None or isinstance(value, str):
        return None
    return (
        OBJECT_NOTE
        if isinstance(value, dict)
        else f"the server sent the arguments as {kind(value)}, not as JSON text"
    )


def name_problem(name: Any) -> str | None:
    """Why a tool call's name is unusable (None when it is a non-empty string)."""
    if isinstance(name, str) and name:
        return None
    what = "no name" if name in (None, "") else f"a name that is {kind(name)} ({show(name)})"
    return f"the server sent a tool call with {what}; a tool call names its tool with a string"


def tool_call_from(
    call_id: Any, name: Any, arguments: Any, position: int, problem: str | None = None
) -> ToolCall:
    """A ToolCall from the fields a server sent. One that cannot run (no name, a name that is
    not text, ``problem``) is kept with its ``problem``: it becomes that call's error result,
    and the run goes on."""
    problem = problem or name_problem(name)
    ident = (
        call_id
        if isinstance(call_id, str) and call_id
        else str(call_id)
        if isinstance(call_id, int)
        else f"call_{position}"
    )
    if problem is not None:
        shown = (
            name
            if isinstance(name, str) and name
            else "null"
            if name is None
            else json.dumps(name, ensure_ascii=False, default=repr)
        )
        return ToolCall(id=ident, name=shown or "null", arguments=arguments_text(arguments), problem=problem)
    return ToolCall(id=ident, name=name, arguments=arguments_text(arguments), note=arguments_note(arguments))


def usage_from(usage: Any, request: ModelRequest | None, content: str | None) -> Usage:
    """Server token counts; a marked estimate where the server sent none (or nonsense: a count
    it sent that is not a number, NaN included, is estimated and the whole usage marked so)."""
    messages = request.messages if request is not None else []
    if isinstance(usage, dict):
        sent_in = number(usage.get("prompt_tokens", usage.get("input_tokens")))
        sent_out = number(usage.get("completion_tokens", usage.get("output_tokens")))
        if sent_in is not None or sent_out is not None:
            return Usage(
                input_tokens=sent_in if sent_in is not None else _estimate_in(messages),
                output_tokens=sent_out if sent_out is not None else estimate_tokens(content),
                estimated=sent_in is None or sent_out is None,
                reasoning_tokens=reasoning_tokens(usage),
            )
    return Usage(input_tokens=_estimate_in(messages), output_tokens=estimate_tokens(content), estimated=True)


def _estimate_in(messages: list[dict[str, Any]]) -> int:
    return sum(estimate_tokens(m.get("content")) for m in messages if isinstance(m.get("content"), str))


def reasoning_tokens(usage: dict[str, Any]) -> int:
    """The reasoning tokens among the output tokens (``output_tokens_details`` on the Responses
    API, ``completion_tokens_details`` on Chat Completions); 0 when not sent."""
    for name in ("output_tokens_details", "completion_tokens_details"):
        details = usage.get(name)
        if isinstance(details, dict):
            count = number(details.get("reasoning_tokens"))
            if count is not None:
                return count
    return 0


# -- Chat Completions stream pieces and error bodies ---------------------------------------------


def add_call_delta(calls: dict[Any, dict[str, Any]], position: int, part: Any) -> None:
    """Add one streamed tool-call delta to the calls assembled so far (by ``index``). A delta
    whose index is not a whole number, or whose name is not text, makes its call unusable: it
    is kept with a ``problem`` (the call's error result), the other calls run."""
    if not isinstance(part, dict):
        raise ModelResponseError(f"sent a tool call delta that is {kind(part)}: {show(part)}")
    index = part.get("index", position)
    problem = None
    if not isinstance(index, int) or isinstance(index, bool):
        shown = "" if index is None else f" ({show(index)})"
        problem = f"the server streamed a tool call whose index is {kind(index)}{shown}, not a whole number"
        # Its later pieces cannot be placed: a delta with an id starts another such call.
        unplaced = [key for key in calls if isinstance(key, tuple)]
        index = ("unplaced", len(unplaced)) if part.get("id") is not None or not unplaced else unplaced[-1]
    entry = calls.setdefault(
        index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
    )
    if problem is not None:
        entry["problem"] = problem
    if part.get("id") is not None:
        entry["id"] = part["id"]
    function = part.get("function")
    if function is None:
        return
    if not isinstance(function, dict):
        entry["problem"] = (
            f"the server streamed a tool call whose function is {kind(function)} ({show(function)}), not an object"
        )
        return
    name = function.get("name")
    if name is not None and not isinstance(name, str):
        entry["problem"] = name_problem(name)
        entry["function"]["bad_name"] = name
    else:
        entry["function"]["name"] += name or ""
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        entry["note"] = arguments_note(arguments)
    entry["function"]["arguments"] += arguments_text(arguments)


def call_order(key: Any) -> tuple[int, int]:
    """Streamed calls in index order, those without a usable index after them."""
    return (1, key[1]) if isinstance(key, tuple) else (0, key)


_NOT_FOUND_CODES = frozenset({"model_not_found", "model_not_found_error", "not_found_error"})
"""Error ``code``/``type`` values that say the model does not exist (OpenAI's Responses API
answers HTTP 400 with ``code: model_not_found``)."""


def not_found_code(exc: Any) -> str | None:
    """The error body's ``code`` (else its ``type``) when it names an unknown model, else None."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    fields = [getattr(exc, "code", None), getattr(exc, "type", None)]
    if isinstance(inner, dict):
        fields += [inner.get("code"), inner.get("type")]
    for value in fields:
        if isinstance(value, str) and value.lower() in _NOT_FOUND_CODES:
            return value.lower()
    return None
