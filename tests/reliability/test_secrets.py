"""Credentials never reach an artifact: however a key is configured (``api_key=``, client or
request headers, query parameters, the base URL, the agent's model options) and even when the
server echoes it back in an answer or an error, it is in none of the session files (JSON, log,
SQLite), turn records, DataFrames, HTML/text records, inspector messages, exception texts,
tracebacks or warnings.
"""

from __future__ import annotations

import base64
import json
import traceback
import warnings
from pathlib import Path
from typing import Any

import pytest
from campaign import Tally
from hostile_server import Exchange, HostileServer, echo_credentials, events, json_body

from agentnb import Agent
from agentnb.errors import ModelError
from agentnb.events import EVENTS_ADAPTER
from agentnb.models import OpenAIChat
from agentnb.models.openai_responses import OpenAIResponses
from agentnb.sessions import JSONSession, SQLiteSession

SECRETS = {
    "api_key": "sk-live-A1b2C3d4E5f6G7h8J9k0",
    "client default header": "hdr-secret-B2c3D4e5F6g7",
    "client default query": "qry-secret-C3d4E5f6G7h8",
    "request extra header": "req-secret-D4e5F6g7H8j9",
    "request extra query": "tok-secret-E5f6G7h8J9k0",
    "bearer in extra headers": "brr-secret-F6g7H8j9K0a1",
    "agent model_options header": "opt-secret-G7h8J9k0A1b2",
    "base URL password": "url-pass-H8j9K0a1B2c3",
    "base URL query key": "url-key-J9k0A1b2C3d4",
}
BASIC = base64.b64encode(f"alice:{SECRETS['base URL password']}".encode()).decode()


def echo_everything(x: Exchange) -> None:
    """A text answer that repeats every header and the path: the model 'leaks' them."""
    seen = " ".join(f"{k}={v}" for k, v in x.headers.items()) + f" path={x.path}"
    if x.path.endswith("/responses"):
        body = {
            "id": "r",
            "object": "response",
            "status": "completed",
            "model": "m",
            "output": [
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": seen}]}
            ],
        }
        if x.body.get("stream"):
            deltas = [
                {"type": "response.output_text.delta", "delta": seen[i : i + 5]}
                for i in range(0, len(seen), 5)
            ]
            events(*deltas, {"type": "response.completed", "response": body}, done=False)(x)
        else:
            json_body(body)(x)
    elif x.body.get("stream"):
        # Five characters a chunk: every credential spans several deltas.
        chunks = [
            {"choices": [{"index": 0, "delta": {"content": seen[i : i + 5]}, "finish_reason": None}]}
            for i in range(0, len(seen), 5)
        ]
        events(*chunks, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})(x)
    else:
        json_body(
            {
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": seen}, "finish_reason": "stop"}
                ]
            }
        )(x)


def models(url: str, stream: bool) -> list[tuple[Any, dict[str, Any]]]:
    """(model, agent options) for every way of configuring a credential."""
    plain = dict(max_retries=0, timeout=20, stream=stream)
    return [
        (
            OpenAIChat(
                "m",
                base_url=url,
                api_key=SECRETS["api_key"],
                client_options={
                    "default_headers": {"X-Api-Key": SECRETS["client default header"]},
                    "default_query": {"api-key": SECRETS["client default query"]},
                },
                request_options={
                    "extra_headers": {"X-Goog-Api-Key": SECRETS["request extra header"]},
                    "extra_query": {"token": SECRETS["request extra query"]},
                },
                **plain,
            ),
            {},
        ),
        (
            OpenAIResponses(
                "m",
                base_url=url,
                request_options={
                    "extra_headers": {"Authorization": f"Bearer {SECRETS['bearer in extra headers']}"}
                },
                **plain,
            ),
            {"model_options": {"extra_headers": {"api-key": SECRETS["agent model_options header"]}}},
        ),
        (
            OpenAIChat(
                "m",
                base_url=url.replace("http://", f"http://alice:{SECRETS['base URL password']}@")
                + f"?key={SECRETS['base URL query key']}",
                **plain,
            ),
            {},
        ),
    ]


def artifacts(
    agent: Agent, root: Path, error: BaseException | None, caught: list[Any], inspector_messages: list[Any]
) -> dict[str, str]:
    """Every place agentnb writes or shows something, as text."""
    from agentnb.history.frames import states_frame, tool_calls_frame, turns_frame
    from agentnb.history.render import turn_html, turn_text

    out = {
        f"file {p.name}": p.read_bytes().decode("utf-8", "replace")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
    out["turn records"] = json.dumps([t.to_dict() for t in agent.history], default=str)
    out["events"] = "".join(EVENTS_ADAPTER.dump_json(t.events).decode() for t in agent.history)
    out["text records"] = "".join(turn_text(t) for t in agent.history)
    out["HTML records"] = "".join(turn_html(t) for t in agent.history)
    out["DataFrames"] = "".join(
        f(agent.history).to_json(default_handler=str) for f in (turns_frame, tool_calls_frame, states_frame)
    )
    out["state_dict"] = json.dumps(agent.state_dict(), default=str)
    out["model repr"] = repr(agent.model)
    out["observe"] = json.dumps(agent.observe("again").request, default=str)
    out["inspector messages"] = json.dumps(inspector_messages, default=str)
    out["warnings"] = " ".join(str(w.message) for w in caught)
    if error is not None:
        out["exception"] = f"{error} {error!r}"
        out["traceback"] = "".join(traceback.format_exception(error))
    return out


def leaks(texts: dict[str, str]) -> list[str]:
    secrets = {**SECRETS, "basic auth of the URL's user and password": BASIC}
    return [
        f"{name} in {where}"
        for where, text in texts.items()
        for name, secret in secrets.items()
        if secret in text
    ]


def run_and_collect(
    root: Path, backend: str, stream: bool, answer: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[Tally, list[str]]:
    from agentnb.ipython.inspector import Inspector

    tally = Tally("secrets in artifacts")
    found: list[str] = []
    with HostileServer(answer) as server:
        for n, (model, options) in enumerate(models(server.url, stream)):
            folder = root / f"{backend}-{n}"
            session = JSONSession(folder) if backend == "json" else SQLiteSession(folder / "s.db")
            agent = Agent(f"a{n}", model, session=session, **options)
            inspector = Inspector.for_agent(agent)
            sent: list[Any] = []
            monkeypatch.setattr(
                inspector, "send", lambda content, buffers=None, sent=sent: sent.append(content)
            )
            error: BaseException | None = None
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    agent.run("show me what you got")
                except ModelError as exc:
                    error = exc
                for request in (
                    {"k": "sync"},
                    {"k": "need_turn", "turn": 0},
                    {"k": "need_request", "turn": 0, "call": 0},
                    {"k": "preview", "message": "x"},
                ):
                    inspector._on_msg(inspector, request, [])
            inspector.close()
            if isinstance(session, SQLiteSession):
                session.close()
            texts = artifacts(agent, folder, error, caught, sent)
            problems = leaks(texts)
            for where in texts:
                tally.check(next((p for p in problems if p.endswith(f"in {where}")), None), where)
            found += [f"model {n}: {p}" for p in problems]
    return tally, found


@pytest.mark.parametrize("backend", ["json", "sqlite"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_credentials_echoed_in_an_answer_reach_no_artifact(tmp_path, monkeypatch, backend, stream):
    tally, found = run_and_collect(tmp_path, backend, stream, echo_everything, monkeypatch)
    assert tally.cases > 30
    assert not found, "\n".join(found)


@pytest.mark.parametrize("backend", ["json", "sqlite"])
@pytest.mark.parametrize("status", [400, 401, 500])
def test_credentials_echoed_in_an_error_reach_no_artifact(tmp_path, monkeypatch, backend, status):
    tally, found = run_and_collect(tmp_path, backend, False, echo_credentials(status), monkeypatch)
    assert not found, "\n".join(found)


def test_the_credentials_were_really_sent(tmp_path):
    """The campaign above means something only if the server saw every credential."""
    with HostileServer(echo_everything) as server:
        for model, options in models(server.url, False):
            Agent("a", model, **options).run("hi")
        seen = " ".join(f"{x.path} {x.headers}" for x in server.requests)
    sent = {**SECRETS, "basic": BASIC}
    missing = [name for name, secret in sent.items() if secret not in seen and name != "base URL password"]
    assert missing == []
