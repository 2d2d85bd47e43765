"""A hostile OpenAI-protocol server on 127.0.0.1: every answer is a scripted misbehaviour.

``HostileServer(answer1, answer2, ...)`` answers the n-th request with the n-th answer (the last
one repeats). An answer is a function ``(exchange) -> None`` that writes raw bytes: a malformed
JSON body, an SSE stream cut in the middle of an event, a body trickled one byte at a time,
keep-alive pings that never end, an error that echoes the request's credentials back. Endless
answers stop when the client goes away or the server is closed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Exchange:
    """One request, and the means to answer it."""

    handler: BaseHTTPRequestHandler
    path: str
    headers: dict[str, str]
    body: Any
    stopping: threading.Event

    def head(
        self,
        status: int = 200,
        content_type: str = "application/json",
        length: int | None = None,
        **extra: str,
    ) -> None:
        self.handler.send_response(status)
        self.handler.send_header("Content-Type", content_type)
        if length is not None:
            self.handler.send_header("Content-Length", str(length))
        self.handler.send_header("Connection", "close")
        for name, value in extra.items():
            self.handler.send_header(name.replace("_", "-"), value)
        self.handler.end_headers()
        self.handler.close_connection = True

    def write(self, data: bytes) -> None:
        self.handler.wfile.write(data)
        self.handler.wfile.flush()

    @property
    def model(self) -> str:
        return self.body.get("model", "m") if isinstance(self.body, dict) else "m"


Answer = Callable[[Exchange], None]


class HostileServer:
    """``with HostileServer(answer, ...) as server: OpenAIChat("m", base_url=server.url)``."""

    def __init__(self, *answers: Answer) -> None:
        if not answers:
            raise ValueError("HostileServer needs at least one answer")
        self.answers = list(answers)
        self.requests: list[Exchange] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                outer._handle(self)

            do_GET = do_POST

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        exchange = Exchange(h, h.path, {k.lower(): v for k, v in h.headers.items()}, body, self.stopping)
        with self._lock:
            answer = self.answers[min(len(self.requests), len(self.answers) - 1)]
            self.requests.append(exchange)
        with suppress(OSError):  # the client gave up (timeout, closed the stream): nothing to answer
            answer(exchange)


# -- answers ----------------------------------------------------------------------------------


def raw_body(
    data: bytes, status: int = 200, content_type: str = "application/json", **headers: str
) -> Answer:
    """Exactly these bytes as the body."""

    def answer(x: Exchange) -> None:
        x.head(status, content_type, len(data), **headers)
        x.write(data)

    return answer


def json_body(value: Any, status: int = 200) -> Answer:
    return raw_body(json.dumps(value).encode(), status)


def sse(frames: Iterable[str | bytes]) -> Answer:
    """An event stream of these raw frames (write ``"data: ...\\n\\n"`` yourself), then close."""
    frames = list(frames)

    def answer(x: Exchange) -> None:
        x.head(200, "text/event-stream")
        for frame in frames:
            x.write(frame.encode() if isinstance(frame, str) else frame)

    return answer


def events(*datas: Any, done: bool = True) -> Answer:
    """SSE ``data:`` events (JSON-encoded unless already text), then ``[DONE]``."""
    frames = [f"data: {d if isinstance(d, str) else json.dumps(d)}\n\n" for d in datas]
    return sse(frames + (["data: [DONE]\n\n"] if done else []))


def trickle(data: bytes, content_type: str = "application/json", every: float = 0.05) -> Answer:
    """The body one byte at a time, forever slow (until the client gives up)."""

    def answer(x: Exchange) -> None:
        x.head(200, content_type, len(data) if content_type == "application/json" else None)
        for byte in data:
            if x.stopping.wait(every):
                return
            x.write(bytes([byte]))

    return answer


def pings(every: float = 0.05, first: str = "") -> Answer:
    """An event stream that only ever sends keep-alive comments."""

    def answer(x: Exchange) -> None:
        x.head(200, "text/event-stream")
        if first:
            x.write(first.encode())
        while not x.stopping.wait(every):
            x.write(b": keep-alive\n\n")

    return answer


def silence(after_headers: bool = False) -> Answer:
    """Read the request, then say nothing (optionally after sending the headers)."""

    def answer(x: Exchange) -> None:
        if after_headers:
            x.head(200, "text/event-stream")
        x.stopping.wait(60)

    return answer


def echo_credentials(status: int = 500) -> Answer:
    """An error whose message repeats every request header and the query string."""

    def answer(x: Exchange) -> None:
        # The headers a client sets itself go last, so the credentials fit in a short message.
        usual = ("host", "accept", "content-", "user-agent", "connection", "x-stainless")
        ordered = sorted(x.headers.items(), key=lambda kv: kv[0].startswith(usual))
        seen = "; ".join(f"{k}={v}" for k, v in ordered)
        body = {
            "error": {
                "message": f"bad request {x.path} with headers {seen}",
                "type": "server_error",
                "headers": x.headers,
            }
        }
        data = json.dumps(body).encode()
        x.head(status, "application/json", len(data))
        x.write(data)

    return answer


def cut_after(data: bytes, keep: int, declared: int | None = None) -> Answer:
    """Send the first ``keep`` bytes of the body (declaring ``declared`` bytes), then close."""

    def answer(x: Exchange) -> None:
        x.head(200, "application/json", declared if declared is not None else len(data))
        x.write(data[:keep])

    return answer


# -- well-formed pieces to break ----------------------------------------------------------------


def completion(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> dict[str, Any]:
    """A Chat Completions body around ``message``."""
    return {
        "id": "chatcmpl-h",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        **extra,
    }


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """A Chat Completions stream chunk."""
    return {
        "id": "chatcmpl-h",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "m",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
        **extra,
    }


def call(name: Any = "add", arguments: Any = '{"a": 1, "b": 2}', id: Any = "call_1") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


def text_reply(text: str = "fine") -> Answer:
    """A well-formed answer (plain JSON or a stream, as the request asked)."""

    def answer(x: Exchange) -> None:
        if x.path.endswith("/responses"):
            body = responses_object(
                [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}]
            )
            if x.body.get("stream"):
                events(
                    {"type": "response.output_text.delta", "delta": text},
                    {"type": "response.completed", "response": body},
                    done=False,
                )(x)
            else:
                json_body(body)(x)
        elif x.body.get("stream"):
            events(chunk({"role": "assistant", "content": text}), chunk({}, "stop"))(x)
        else:
            json_body(completion({"content": text}))(x)

    return answer


def responses_object(output: Any, status: str = "completed") -> dict[str, Any]:
    """A Responses API body around ``output``."""
    return {
        "id": "resp_h",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": status,
        "model": "m",
        "output": output,
        "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
    }
