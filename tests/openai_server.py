"""A scripted OpenAI-protocol HTTP server on 127.0.0.1, for tests that run the real ``openai`` client.

It speaks Chat Completions (``/v1/chat/completions``) and the Responses API (``/v1/responses``),
plain JSON or SSE streaming, and answers each request with the next scripted ``Reply`` (a text,
tool calls, an HTTP error, or a delay; held, if it says so, until an event the test names, such
as ``server.received(n)``). Every request is checked against the API's shape; what is wrong is
kept in ``server.problems`` and answered with HTTP 400, so a malformed request fails the test
that sent it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
import time
from collections import deque
from contextlib import suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_ROLES = {"system", "developer", "user", "assistant", "tool"}
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""What the API accepts as a tool's name."""
HOLD_GUARD = 60.0
"""Seconds a reply waits for its ``after`` event before it is answered anyway (a hang guard)."""


@dataclass
class Reply:
    """One scripted answer."""

    text: str | None = None
    """The assistant's text."""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(name, arguments) of each tool call, in order (several = parallel calls)."""
    status: int = 200
    """HTTP status; anything else than 200 answers with an OpenAI-style error body."""
    error: str = "scripted error"
    """The error message for a non-200 status."""
    code: str | None = None
    """The error code (e.g. context_length_exceeded)."""
    delay: float = 0.0
    """Seconds to wait before answering (for timeouts)."""
    usage: tuple[int, int] = (21, 9)
    """(input, output) token counts reported."""
    repeat: bool = False
    """Answer every later request with this reply too (for the client's retries)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (e.g. retry-after-ms)."""
    reasoning: str | None = None
    """(Responses API) A reasoning item's summary, put before the answer's other output items,
    as reasoning models (gpt-5-mini, o-series) do; its encrypted content is sent when the
    request's ``include`` asks for it."""
    reasoning_tokens: int = 0
    """Of the output tokens, how many were reasoning (``output_tokens_details``)."""
    finish: str | None = None
    """``"length"``: the answer stops at the token limit (Chat ``finish_reason: length``,
    Responses ``status: incomplete`` with ``reason: max_output_tokens``)."""
    pieces: int = 3
    """How many pieces a streamed text, and each streamed call's arguments, come in."""
    after: threading.Event | None = None
    """Answer only once this event is set: requests meet, or an answer follows what the client
    did with an earlier one, whatever the machine's load (``server.received(n)`` is set by the
    server; the test sets its own). A hang guard ends the wait after ``HOLD_GUARD`` seconds and
    notes a problem."""


@dataclass
class Received:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float = 0.0
    """time.monotonic() when it arrived."""
    peer: tuple[str, int] | None = None
    """The client's address: one per connection (a kept-alive connection sends several requests)."""


class OpenAIServer:
    """``with OpenAIServer() as server: server.add(Reply(text="hi")); OpenAI(base_url=server.url)``."""

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []
        self.problems: list[str] = []
        self.reasoning: dict[str, str] = {}
        """Reasoning items given out: id -> encrypted content (what a request may send back)."""
        self._counter = 0
        self._lock = threading.Lock()
        self._arrivals: list[tuple[int, threading.Event]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = (
                True  # headers and body go out at once, not 40 ms apart (Nagle + delayed ACK)
            )

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self._json(
                    404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}}
                )

            def do_POST(self) -> None:
                outer._handle(self)

            def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def add(self, *replies: Reply) -> OpenAIServer:
        self.replies.extend(replies)
        return self

    def received(self, n: int) -> threading.Event:
        """An event set once ``n`` requests have arrived (for a reply's ``after``)."""
        event = threading.Event()
        with self._lock:
            if len(self.requests) >= n:
                event.set()
            else:
                self._arrivals.append((n, event))
        return event

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- handling --------------------------------------------------------------------------

    def _next(self) -> tuple[Reply | None, int]:
        """The next scripted reply, and the number of this answer (ids made from it stay
        distinct when requests are answered side by side)."""
        with self._lock:
            if not self.replies:
                return None, self._counter
            reply = self.replies[0]
            if not reply.repeat:
                self.replies.popleft()
            self._counter += 1
            return reply, self._counter

    def _arrived(self, received: Received) -> None:
        with self._lock:
            self.requests.append(received)
            due = [event for n, event in self._arrivals if len(self.requests) >= n]
            self._arrivals = [(n, event) for n, event in self._arrivals if event not in due]
        for event in due:
            event.set()

    def _handle(self, h: Any) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in h.headers.items()}
        self._arrived(
            Received(
                path=h.path,
                headers=headers,
                body=body if isinstance(body, dict) else {},
                at=time.monotonic(),
                peer=tuple(h.client_address),
            )
        )
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            h._json(401, _error("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"))
            return
        route = h.path.partition("?")[0]  # the query string (extra_query) is kept in ``path``
        if route == "/v1/chat/completions":
            problems = check_chat_request(body, headers)
        elif route == "/v1/responses":
            problems = check_responses_request(body, headers, self.reasoning)
        else:
            h._json(404, _error(f"Unknown endpoint {h.path}", "invalid_request_error", "unknown_url"))
            return
        if problems:
            self.problems.extend(problems)
            h._json(400, _error("; ".join(problems), "invalid_request_error", None))
            return
        reply, n = self._next()
        if reply is None:
            h._json(500, _error("the test server has no scripted reply left", "server_error", None))
            return
        if reply.after is not None and not reply.after.wait(HOLD_GUARD):
            self.problems.append(f"answer {n} waited {HOLD_GUARD:.0f} s for its event, which never came")
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status != 200:
            kind = "rate_limit_error" if reply.status == 429 else "invalid_request_error"
            with suppress(OSError):  # the client gave up (timeout)
                h._json(reply.status, _error(reply.error, kind, reply.code), reply.headers)
            return
        try:
            if route == "/v1/chat/completions":
                if body.get("stream"):
                    _sse(h, chat_chunks(body, reply, n))
                else:
                    h._json(200, chat_completion(body, reply, n))
            else:
                self._give_out_reasoning(body, reply, n)
                if body.get("stream"):
                    _sse(h, responses_events(body, reply, n))
                else:
                    h._json(200, responses_object(body, reply, n))
        except OSError:
            pass

    def _give_out_reasoning(self, body: dict[str, Any], reply: Reply, n: int) -> None:
        if reply.reasoning is not None:
            self.reasoning[f"rs_{n}"] = _encrypted(reply, n) if _wants_encrypted(body) else ""


def _wants_encrypted(body: dict[str, Any]) -> bool:
    return "reasoning.encrypted_content" in (body.get("include") or ())


def _encrypted(reply: Reply, n: int) -> str:
    return f"gAAAA-{n}-" + "".join(reversed(reply.reasoning or ""))


def _error(message: str, kind: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _sse(h: Any, events: list[tuple[str | None, Any]]) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Cache-Control", "no-cache")
    h.send_header("Connection", "close")
    h.end_headers()
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
        h.wfile.write(frame.encode())
        h.wfile.flush()
    h.close_connection = True


def _pieces(text: str, n: int = 3) -> list[str]:
    """Text cut into n pieces (as a stream would deliver it)."""
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


# -- request checks -----------------------------------------------------------------------


def _check_common(body: Any, headers: dict[str, str]) -> list[str]:
    problems = []
    if not headers.get("authorization", "").startswith("Bearer "):
        problems.append("missing Authorization: Bearer header")
    if "application/json" not in headers.get("content-type", ""):
        problems.append("the body is not sent as application/json")
    if not isinstance(body, dict):
        return problems + ["the body is not a JSON object"]
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model must be a non-empty string")
    if "stream" in body and not isinstance(body["stream"], bool):
        problems.append("stream must be a boolean")
    return problems


def check_chat_request(body: Any, headers: dict[str, str]) -> list[str]:
    """What is wrong with a Chat Completions request ([] when it is well-formed)."""
    problems = _check_common(body, headers)
    if not isinstance(body, dict):
        return problems
    if "input" in body:
        problems.append("'input' is a Responses API field, not a Chat Completions one")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return problems + ["messages must be a non-empty list"]
    call_ids: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in CHAT_ROLES:
            problems.append(f"messages[{i}].role {role!r} is not one of {sorted(CHAT_ROLES)}")
            continue
        content = m.get("content")
        if isinstance(content, list):  # a content list: which parts each role may hold
            problems += check_parts(content, f"messages[{i}].content", CHAT_PARTS[role])
            if role == "tool" and m.get("tool_call_id") not in call_ids:
                problems.append(
                    f"messages[{i}] answers tool_call_id {m.get('tool_call_id')!r}, which no call made"
                )
            continue
        if role == "assistant" and m.get("tool_calls"):
            if content is not None and not isinstance(content, str):
                problems.append(f"messages[{i}].content must be a string or null")
            for c in m["tool_calls"]:
                fn = c.get("function") or {}
                if (
                    c.get("type") != "function"
                    or not c.get("id")
                    or not isinstance(fn.get("arguments"), str)
                    or not fn.get("name")
                ):
                    problems.append(f"messages[{i}].tool_calls has a malformed call: {c!r}")
                call_ids.add(c.get("id"))
        elif not isinstance(content, str):
            problems.append(f"messages[{i}].content must be a string")
        if role == "tool" and m.get("tool_call_id") not in call_ids:
            problems.append(
                f"messages[{i}] answers tool_call_id {m.get('tool_call_id')!r}, which no earlier assistant message called"
            )
    for t in body.get("tools") or ():
        fn = t.get("function") if isinstance(t, dict) else None
        if (
            t.get("type") != "function"
            or not isinstance(fn, dict)
            or not fn.get("name")
            or not isinstance(fn.get("parameters", {}), dict)
        ):
            problems.append(f"malformed chat tool: {t!r}")
        elif not TOOL_NAME.fullmatch(fn["name"]):
            problems.append(_bad_tool_name(fn["name"]))
    if "stream_options" in body and not body.get("stream"):
        problems.append("stream_options is only allowed with stream=true")
    return problems


def check_responses_request(
    body: Any, headers: dict[str, str], reasoning: dict[str, str] | None = None
) -> list[str]:
    """What is wrong with a Responses API request ([] when it is well-formed). ``reasoning``:
    the reasoning items given out (id -> encrypted content), which input may send back; as on
    OpenAI, with ``store: false`` one comes back only with its encrypted content (which needs
    ``include: ["reasoning.encrypted_content"]``), and each is followed by the item it led to."""
    problems = _check_common(body, headers)
    if not isinstance(body, dict):
        return problems
    if "messages" in body:
        problems.append("'messages' is a Chat Completions field; the Responses API takes 'input'")
    items = body.get("input")
    if not isinstance(items, (list, str)) or not items:
        return problems + ["input must be a non-empty list or string"]
    call_ids: set[str] = set()
    for i, item in enumerate(items if isinstance(items, list) else ()):
        kind = item.get("type", "message")
        if kind == "message":
            if item.get("role") not in ("user", "assistant", "system", "developer"):
                problems.append(f"input[{i}].role {item.get('role')!r} is not valid for the Responses API")
            if not isinstance(item.get("content"), (str, list)):
                problems.append(f"input[{i}].content must be a string or a list of parts")
            elif isinstance(item["content"], list):
                allowed = RESPONSES_OUTPUT_PARTS if item.get("role") == "assistant" else RESPONSES_INPUT_PARTS
                problems += check_parts(item["content"], f"input[{i}].content", allowed)
        elif kind == "function_call":
            if not item.get("call_id") or not item.get("name") or not isinstance(item.get("arguments"), str):
                problems.append(f"input[{i}] is a malformed function_call: {item!r}")
            call_ids.add(item.get("call_id"))
        elif kind == "reasoning":
            problems += _check_reasoning(body, items, i, reasoning or {})
        elif kind == "function_call_output":
            if item.get("call_id") not in call_ids:
                problems.append(
                    f"input[{i}] answers call_id {item.get('call_id')!r}, which no earlier function_call made"
                )
            output = item.get("output")
            if isinstance(output, list):
                problems += check_parts(output, f"input[{i}].output", RESPONSES_INPUT_PARTS)
            elif not isinstance(output, str):
                problems.append(f"input[{i}].output must be a string or a list of input items")
        else:
            problems.append(f"input[{i}] has an unknown type {kind!r}")
    for t in body.get("tools") or ():
        if not isinstance(t, dict) or t.get("type") != "function" or not t.get("name") or "function" in t:
            problems.append(f"malformed Responses tool (must be flat: type, name, parameters): {t!r}")
        elif not TOOL_NAME.fullmatch(t["name"]):
            problems.append(_bad_tool_name(t["name"]))
    if "stream_options" in body:
        problems.append("stream_options is a Chat Completions field")
    return problems


CHAT_PARTS = {
    "system": {"text"},
    "developer": {"text"},
    "user": {"text", "image_url", "file"},
    "assistant": {"text", "refusal"},
    "tool": {"text"},
}
"""The content parts each Chat Completions role may send (a tool message: text only)."""
RESPONSES_INPUT_PARTS = {"input_text", "input_image", "input_file"}
RESPONSES_OUTPUT_PARTS = {"output_text", "refusal"}
PART_FIELDS = {
    "text": {"type", "text"},
    "refusal": {"type", "refusal"},
    "image_url": {"type", "image_url"},
    "file": {"type", "file"},
    "input_text": {"type", "text"},
    "output_text": {"type", "text", "annotations"},
    "input_image": {"type", "image_url", "file_id", "detail"},
    "input_file": {"type", "filename", "file_data", "file_id", "file_url"},
}
"""The fields each content part may have: anything else is refused, as the API does."""
IMAGE_DATA_URL = re.compile(r"data:image/(png|jpeg|gif|webp);base64,([A-Za-z0-9+/]*={0,2})")
FILE_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64,([A-Za-z0-9+/]*={0,2})")


def _bad_url(url: Any, pattern: re.Pattern[str], where: str) -> list[str]:
    if isinstance(url, str) and url.startswith(("http://", "https://")) and pattern is IMAGE_DATA_URL:
        return []
    if not isinstance(url, str) or not pattern.fullmatch(url):
        return [
            f"{where} must be a base64 data URL{' or an http(s) URL' if pattern is IMAGE_DATA_URL else ''}: {str(url)[:60]!r}"
        ]
    try:
        base64.b64decode(url.partition(",")[2], validate=True)
    except (binascii.Error, ValueError):
        return [f"{where} holds invalid base64"]
    return []


def check_parts(parts: list[Any], where: str, allowed: set[str]) -> list[str]:
    """What is wrong with a content list: a part of a kind the message may not hold, an unknown
    field, a malformed image or file (a data URL that is not one)."""
    problems: list[str] = []
    for j, part in enumerate(parts):
        at = f"{where}[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in allowed:
            problems.append(f"{at}: a part of type {kind!r} is not allowed here (only {sorted(allowed)})")
            continue
        unknown = set(part) - PART_FIELDS[kind]
        if unknown:
            problems.append(f"{at}: unknown parameter(s) {sorted(unknown)}")
        if kind in ("text", "input_text", "output_text") and not isinstance(part.get("text"), str):
            problems.append(f"{at}.text must be a string")
        elif kind == "image_url":
            image = part.get("image_url")
            if not isinstance(image, dict) or set(image) - {"url", "detail"}:
                problems.append(f"{at}.image_url must be an object of url and detail")
                continue
            problems += _bad_url(image.get("url"), IMAGE_DATA_URL, f"{at}.image_url.url")
            if image.get("detail", "auto") not in ("auto", "low", "high"):
                problems.append(f"{at}.image_url.detail must be auto, low or high")
        elif kind == "file":
            file = part.get("file")
            if not isinstance(file, dict) or set(file) - {"filename", "file_data", "file_id"}:
                problems.append(f"{at}.file must be an object of filename, file_data, file_id")
                continue
            problems += _bad_url(file.get("file_data"), FILE_DATA_URL, f"{at}.file.file_data")
        elif kind == "input_image":
            problems += _bad_url(part.get("image_url"), IMAGE_DATA_URL, f"{at}.image_url")
            if part.get("detail", "auto") not in ("auto", "low", "high"):
                problems.append(f"{at}.detail must be auto, low or high")
        elif kind == "input_file":
            problems += _bad_url(part.get("file_data"), FILE_DATA_URL, f"{at}.file_data")
    return problems


def _bad_tool_name(name: Any) -> str:
    return f"Invalid tool name {str(name)[:80]!r} ({len(str(name))} characters): expected a string matching ^[a-zA-Z0-9_-]{{1,64}}$"


def _check_reasoning(body: dict[str, Any], items: list[Any], i: int, given: dict[str, str]) -> list[str]:
    item = items[i]
    ident = item.get("id")
    if ident not in given:
        return [f"input[{i}]: Item with id {ident!r} not found (no reasoning item of that id was given out)"]
    problems = []
    if not isinstance(item.get("summary"), list):
        problems.append(f"input[{i}].summary must be a list")
    if body.get("store") is False:
        if "reasoning.encrypted_content" not in (body.get("include") or ()):
            problems.append(
                "reasoning items sent back with store=false need include=['reasoning.encrypted_content']"
            )
        if not item.get("encrypted_content") or item.get("encrypted_content") != given[ident]:
            problems.append(
                f"input[{i}]: Item {ident!r} is not persisted with store=false; send its encrypted_content"
            )
    following = items[i + 1] if i + 1 < len(items) else None
    if not isinstance(following, dict) or following.get("type", "message") not in (
        "function_call",
        "message",
        "reasoning",
    ):
        problems.append(
            f"input[{i}]: Item {ident!r} of type 'reasoning' was provided without its required following item"
        )
    return problems


# -- answers ------------------------------------------------------------------------------


def _chat_calls(reply: Reply, n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(reply.tool_calls)
    ]


def _chat_finish(reply: Reply) -> str:
    return reply.finish or ("tool_calls" if reply.tool_calls else "stop")


def chat_completion(body: dict[str, Any], reply: Reply, n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = _chat_calls(reply, n)
    return {
        "id": f"chatcmpl-test{n}",
        "object": "chat.completion",
        "created": 1_700_000_000 + n,
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _chat_finish(reply)}],
        "usage": {
            "prompt_tokens": reply.usage[0],
            "completion_tokens": reply.usage[1],
            "total_tokens": sum(reply.usage),
        },
    }


def chat_chunks(body: dict[str, Any], reply: Reply, n: int) -> list[tuple[str | None, Any]]:
    head = {
        "id": f"chatcmpl-test{n}",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000 + n,
        "model": body["model"],
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
        return None, {
            **head,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    for piece in _pieces(reply.text or "", reply.pieces) if reply.text else ():
        out.append(chunk({"content": piece}))
    for i, call in enumerate(_chat_calls(reply, n)):
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        for piece in _pieces(call["function"]["arguments"], reply.pieces):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    out.append(chunk({}, _chat_finish(reply)))
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = {
            "prompt_tokens": reply.usage[0],
            "completion_tokens": reply.usage[1],
            "total_tokens": sum(reply.usage),
        }
        out.append((None, {**head, "choices": [], "usage": usage}))
    out.append((None, "[DONE]"))
    return out


def _responses_output(reply: Reply, n: int, body: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        encrypted = _encrypted(reply, n) if _wants_encrypted(body or {}) else None
        summary = [{"type": "summary_text", "text": reply.reasoning}] if reply.reasoning else []
        output.append(
            {"type": "reasoning", "id": f"rs_{n}", "summary": summary, "encrypted_content": encrypted}
        )
    if reply.text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{n}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for i, (name, args) in enumerate(reply.tool_calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{n}_{i}",
                "call_id": f"call_{n}_{i}",
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
        )
    return output


def responses_object(body: dict[str, Any], reply: Reply, n: int, status: str = "completed") -> dict[str, Any]:
    if status == "completed" and reply.finish == "length":
        status = "incomplete"
    return {
        "id": f"resp_test{n}",
        "object": "response",
        "created_at": 1_700_000_000 + n,
        "status": status,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "model": body["model"],
        "output": _responses_output(reply, n, body) if status in ("completed", "incomplete") else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "usage": {
            "input_tokens": reply.usage[0],
            "output_tokens": reply.usage[1],
            "total_tokens": sum(reply.usage),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
        },
    }


def responses_events(body: dict[str, Any], reply: Reply, n: int) -> list[tuple[str | None, Any]]:
    events: list[tuple[str | None, Any]] = []
    seq = 0

    def emit(kind: str, **data: Any) -> None:
        nonlocal seq
        events.append((kind, {"type": kind, "sequence_number": seq, **data}))
        seq += 1

    emit("response.created", response={**responses_object(body, reply, n, "in_progress"), "usage": None})
    for index, item in enumerate(_responses_output(reply, n, body)):
        if item["type"] == "reasoning":
            emit("response.output_item.added", output_index=index, item={**item, "summary": []})
        elif item["type"] == "message":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            for piece in _pieces(reply.text or "", reply.pieces):
                emit(
                    "response.output_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    delta=piece,
                    logprobs=[],
                )
            emit(
                "response.output_text.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                text=reply.text,
                logprobs=[],
            )
        else:
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in _pieces(item["arguments"], reply.pieces):
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=piece,
                )
            emit(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=index,
                arguments=item["arguments"],
                name=item["name"],
            )
        emit("response.output_item.done", output_index=index, item=item)
    final = responses_object(body, reply, n)
    emit(f"response.{final['status']}", response=final)
    return events
