"""Reading an answer's bytes under a deadline (``openai_transport``): an answer longer than the
limit is refused, whole or streamed; a body that trickles ends at the deadline whether the
caller's thread reads it (a client that does not retry) or a reader thread does; the watchdog
cancels what is due and forgets what was released. Through the real ``openai`` client on
127.0.0.1."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "reliability"))
from hostile_server import HostileServer, chunk, completion, events, raw_body, trickle  # noqa: E402

from agentnb.errors import ModelConnectionError, ModelResponseError  # noqa: E402
from agentnb.models import OpenAIChat, openai_transport  # noqa: E402
from agentnb.models.base import ModelRequest  # noqa: E402

REQUEST = ModelRequest(messages=[{"role": "user", "content": "go"}])


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_longer_than_the_limit_is_refused_whole_or_streamed(monkeypatch, stream):
    monkeypatch.setattr(openai_transport, "MAX_ANSWER_BYTES", 4 << 10)
    long_text = "x" * (16 << 10)
    answer = (
        events(chunk({"role": "assistant", "content": long_text}), chunk({}, "stop"))
        if stream
        else raw_body(json.dumps(completion({"content": long_text})).encode())
    )
    with HostileServer(answer) as server:
        model = OpenAIChat("m", base_url=server.url, api_key="k", max_retries=0, stream=stream)
        with pytest.raises(ModelResponseError, match="sent an answer longer than"):
            list(model.stream(REQUEST))


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_under_the_limit_is_read_whole_or_streamed(monkeypatch, stream):
    monkeypatch.setattr(openai_transport, "MAX_ANSWER_BYTES", 64 << 10)
    text = "y" * (16 << 10)
    answer = (
        events(chunk({"role": "assistant", "content": text}), chunk({}, "stop"))
        if stream
        else raw_body(json.dumps(completion({"content": text})).encode())
    )
    with HostileServer(answer) as server:
        model = OpenAIChat("m", base_url=server.url, api_key="k", max_retries=0, stream=stream)
        assert list(model.stream(REQUEST))[-1].content == text


def test_the_watchdog_calls_a_cancel_due_and_forgets_the_released_ones():
    watchdog = openai_transport._Watchdog()
    never = [
        watchdog.guard(time.monotonic() + 600, lambda: pytest.fail("released, yet cancelled"))
        for _ in range(100)
    ]
    for guard in never:
        watchdog.release(guard)
    fired = threading.Event()
    watchdog.guard(time.monotonic() + 0.05, fired.set)  # sooner than anything it waits for
    assert fired.wait(30)
    kept = watchdog.guard(time.monotonic() + 600, lambda: None)
    assert len(watchdog._due) < 10  # the released guards are not kept until their deadlines
    watchdog.release(kept)


@pytest.mark.parametrize("retries", [0, 2])
def test_a_body_that_trickles_past_the_deadline_ends_there_read_here_or_by_a_reader(retries):
    body = json.dumps(completion({"content": "late"})).encode()
    with HostileServer(trickle(body, every=0.05)) as server:
        model = OpenAIChat(
            "m", base_url=server.url, api_key="k", timeout=1.0, max_retries=retries, stream=False
        )
        with pytest.raises(ModelConnectionError, match="did not answer within 1 s"):
            list(model.stream(REQUEST))
