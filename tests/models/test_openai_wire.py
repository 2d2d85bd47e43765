"""Reading OpenAI-protocol answers: server-sent events, bounded JSON, the total deadline."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any

import pytest

from agentnb.errors import ModelResponseError
from agentnb.models.bounded_json import load_json
from agentnb.models.openai_transport import DeadlineError, read_answer
from agentnb.models.sse import sse_data


def events(*chunks: bytes) -> list[tuple[str, str]]:
    return list(sse_data(iter(chunks)))


def test_events_split_anywhere_with_comments_crlf_and_names():
    stream = [
        b": keep-alive\n\nda",
        b'ta: {"a": 1}\r\n\r\nevent: respon',
        b"se.done\ndata: x\ndata: y\n\n",
        b"data: [DONE]\n\ndata: ignored\n\n",
    ]
    assert events(*stream) == [("", '{"a": 1}'), ("response.done", "x\ny")]


def test_a_stream_that_ends_inside_an_event_was_cut():
    with pytest.raises(ModelResponseError, match="middle of an event"):
        events(b'data: {"a": 1}\n\ndata: {"b": ')
    with pytest.raises(ModelResponseError, match="middle of an event"):
        events(b'data: {"a": 1}\n')  # the blank line that ends the event never came
    assert events(b'data: {"a": 1}\n\ndata: [DONE]') == [
        ("", '{"a": 1}')
    ]  # a last [DONE] without its blank line


def test_a_stream_line_that_is_not_utf8_is_an_error():
    with pytest.raises(ModelResponseError, match="not UTF-8"):
        events(b"data: \xff\xfe\n\n")


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"", "empty"),
        (b"   ", "empty"),
        (b"{oops", "not valid JSON"),
        (b'{"a": "\xff"}', "not UTF-8"),
        (b'{"a": NaN}', "NaN is not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b"[" * 65 + b"]" * 65, "deeper than 64 levels"),
        (b'{"n": ' + b"7" * 5000 + b"}", "digits"),
    ],
)
def test_json_that_cannot_be_read_safely_is_a_clear_error(data, problem):
    with pytest.raises(ModelResponseError, match=problem):
        load_json(data, "a body")


def test_json_within_the_limits_loads():
    assert load_json(b"[" * 64 + b"]" * 64, "a body") is not None
    assert load_json('{"n": ' + "7" * 4000 + "}", "a body")["n"] > 0


class SlowResponse:
    """A response whose body never ends (one byte, then nothing), as a trickling server's."""

    def __init__(self, release: threading.Event) -> None:
        self.http_response = self
        self.headers = {"content-type": "text/event-stream"}
        self.extensions: dict[str, Any] = {}
        self.release = release

    def iter_bytes(self) -> Any:
        yield b":"
        self.release.wait(30)


def test_the_deadline_holds_however_slowly_the_body_comes():
    release = threading.Event()

    @contextmanager
    def open_response() -> Any:
        yield SlowResponse(release)

    content_type, chunks = read_answer(open_response, 0.2)
    assert content_type == "text/event-stream"
    try:
        with pytest.raises(DeadlineError):
            list(chunks)
    finally:
        release.set()


def test_errors_while_sending_reach_the_caller():
    @contextmanager
    def open_response() -> Any:
        raise ConnectionRefusedError("nothing listens")
        yield

    with pytest.raises(ConnectionRefusedError):
        read_answer(open_response, 5)
