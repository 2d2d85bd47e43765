"""Reading an answer's bytes under a deadline (``openai_transport``): an answer longer than the
limit is refused, whole or streamed, through the real ``openai`` client on 127.0.0.1."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "reliability"))
from hostile_server import HostileServer, chunk, completion, events, raw_body  # noqa: E402

from agentnb.errors import ModelResponseError  # noqa: E402
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
