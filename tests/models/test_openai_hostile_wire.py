"""A server that breaks the protocol costs one tool call, not the turn: through the real
``openai`` client against hand-written answers on 127.0.0.1, with autosave on (the turn ends,
reaches the disk, and the session loads again)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "reliability"))
from hostile_server import HostileServer, call, chunk, completion, events, raw_body, text_reply  # noqa: E402

from agentnb import Agent  # noqa: E402
from agentnb.history.render import turn_text  # noqa: E402
from agentnb.models import OpenAIChat  # noqa: E402
from agentnb.models.openai_wire import OBJECT_NOTE  # noqa: E402
from agentnb.sessions import JSONSession, SQLiteSession  # noqa: E402


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def remember(key: str, value, session_state: dict) -> str:
    """Store a value in the state."""
    session_state[key] = value
    return "stored"


def body_with(calls: list[dict], raw_arguments: dict[str, bytes] | None = None) -> bytes:
    """A completion calling ``calls``; ``raw_arguments`` puts raw JSON in place of a marker."""
    data = json.dumps(completion({"content": None, "tool_calls": calls}, "tool_calls")).encode()
    for marker, raw in (raw_arguments or {}).items():
        data = data.replace(json.dumps(marker).encode(), raw)
    return data


def session_for(kind: str, root: Path):
    return JSONSession(root) if kind == "json" else SQLiteSession(root / "s.db")


def run(answer, kind: str, root: Path, stream: bool = False) -> Agent:
    with HostileServer(answer, text_reply("done")) as server:
        model = OpenAIChat("m", base_url=server.url, api_key="k", max_retries=0, stream=stream)
        agent = Agent("h", model, tools=[add, remember], session=session_for(kind, root))
        agent.run("go")
    return agent


def reloaded(kind: str, root: Path) -> Agent:
    return Agent(
        "h",
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1"),
        tools=[add, remember],
        session=session_for(kind, root),
    )


@pytest.mark.parametrize("kind", ["json", "sqlite"])
@pytest.mark.parametrize(
    "calls, raw, says",
    [
        ([{"id": "c0", "type": "function"}], None, "with no function"),
        ([call(name=None, id="c0")], None, "with no name"),
        ([call(name=7, id="c0")], None, "a name that is an int (7)"),
        ([call(name=["add"], id="c0")], None, 'a name that is a list (["add"])'),
        ([call(name={"n": "add"}, id="c0")], None, "a name that is an object"),
        (
            [call(name="remember", arguments="ARGS", id="c0")],
            {"ARGS": b'{"key": "k", "value": ' + b"7" * 5000 + b"}"},
            "4300 digits",
        ),
        (
            [call(name="remember", arguments="ARGS", id="c0")],
            {"ARGS": b'{"key": "k", "value": ' + b"[" * 500 + b"]" * 500 + b"}"},
            "nested deeper than 64",
        ),
        (
            [
                call(
                    name="remember",
                    arguments='{"key": "k", "value": ' + "[" * 1000 + "]" * 1000 + "}",
                    id="c0",
                )
            ],
            None,
            "nested deeper than 64",
        ),
    ],
    ids=[
        "no function",
        "name null",
        "name a number",
        "name a list",
        "name an object",
        "object with 5000 digits",
        "object 500 deep",
        "text 1000 deep",
    ],
)
def test_a_malformed_call_is_its_error_result_and_the_turn_saves(tmp_path, kind, calls, raw, says):
    agent = run(raw_body(body_with([*calls, call(id="c1")], raw)), kind, tmp_path)
    turn = agent.history[-1]
    assert turn.status == "ok" and turn.content == "done"
    bad, good = turn.tool_calls
    assert bad.error is not None and says in bad.error and good.result == "3"
    # What went back to the model says it, beside the good call's result.
    sent = [m for m in turn.model_calls[1].request["messages"] if m["role"] == "tool"]
    assert says in sent[0]["content"] and sent[1]["content"] == "3"
    again = reloaded(kind, tmp_path)
    assert len(again.history) == 1 and again.history[0].tool_calls[0].error == bad.error


@pytest.mark.parametrize("stream", [False, True])
def test_arguments_sent_as_an_object_are_used_and_the_record_says_so(tmp_path, stream):
    if stream:
        answer = events(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c0",
                            "type": "function",
                            "function": {"name": "add", "arguments": {"a": 2, "b": 5}},
                        }
                    ]
                }
            ),
            chunk({}, "tool_calls"),
        )
    else:
        answer = raw_body(body_with([call(arguments={"a": 2, "b": 5}, id="c0")]))
    agent = run(answer, "json", tmp_path, stream=stream)
    turn = agent.history[-1]
    assert turn.tool_calls[0].result == "7" and turn.tool_calls[0].arguments == '{"a": 2, "b": 5}'
    (recorded,) = turn.model_calls[0].response.tool_calls
    assert recorded.note == OBJECT_NOTE and recorded.problem is None
    # Sent back to the model as text, as the protocol has it; kept in the record after a reload.
    assistant = turn.model_calls[1].request["messages"][1]
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"a": 2, "b": 5}'
    restored = reloaded("json", tmp_path).history[0]
    assert restored.model_calls[0].response.tool_calls[0].note == OBJECT_NOTE
    assert restored.messages[1].tool_calls[0].note == OBJECT_NOTE


def test_a_streamed_call_without_an_index_is_its_error_result(tmp_path):
    answer = events(
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c0",
                        "type": "function",
                        "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                    }
                ]
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": None,
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "add", "arguments": '{"a":'},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": None, "function": {"arguments": " 4}"}}]}),
        chunk({}, "tool_calls"),
    )
    agent = run(answer, "sqlite", tmp_path, stream=True)
    good, bad = agent.history[-1].tool_calls
    assert good.result == "3" and "index is null" in bad.error and bad.error_kind == "malformed_call"
    assert "error [malformed_call]" in turn_text(agent.history[-1])
    assert len(reloaded("sqlite", tmp_path).history) == 1


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": float("nan"), "completion_tokens": 2},
        {"prompt_tokens": float("nan"), "completion_tokens": float("inf")},
    ],
)
def test_nan_in_the_usage_keeps_the_answer_with_estimated_counts(tmp_path, usage):
    body = json.dumps(completion({"content": "fine"}, usage=usage)).encode()
    assert b"NaN" in body
    with HostileServer(raw_body(body)) as server:
        agent = Agent(
            "h",
            OpenAIChat("m", base_url=server.url, api_key="k", max_retries=0, stream=False),
            session=JSONSession(tmp_path),
        )
        result = agent.run("hello there")
    assert result.content == "fine"
    assert result.usage.estimated and result.usage.input_tokens > 0
    if usage["completion_tokens"] == 2:
        assert result.usage.output_tokens == 2  # the count the server did send is kept
    # The record holds no NaN (null where it was), so the session saves and loads.
    assert agent.history[-1].model_calls[0].response.response["usage"]["prompt_tokens"] is None
    assert reloaded("json", tmp_path).history[0].usage.estimated


def test_object_arguments_nested_past_what_json_reads_fail_the_answer_and_the_turn_still_saves(tmp_path):
    """Past ~900 levels Python's JSON reader cannot follow the body at all: the whole answer is
    a one-line ModelResponseError; the failed turn is saved and the session loads again."""
    from agentnb.errors import ModelResponseError

    raw = body_with([call(arguments="ARGS", id="c0")], {"ARGS": b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}"})
    with HostileServer(raw_body(raw)) as server:
        agent = Agent(
            "h",
            OpenAIChat("m", base_url=server.url, api_key="k", max_retries=0, stream=False),
            tools=[add],
            session=JSONSession(tmp_path),
        )
        with pytest.raises(ModelResponseError, match="nested too deeply to read"):
            agent.run("go")
    assert agent.history[-1].status == "failed"
    assert reloaded("json", tmp_path).history[0].status == "failed"


def test_the_history_row_carries_the_finish_reason():
    from openai_server import OpenAIServer, Reply

    from agentnb.ipython.history_row import turn_summary

    with OpenAIServer() as server:
        server.add(Reply(text="The three reasons are", finish="length"), Reply(text="Whole."))
        agent = Agent("c", OpenAIChat("m", base_url=server.url, max_retries=0))
        agent.run("a")
        agent.run("b")
    assert [turn_summary(t)["finish_reason"] for t in agent.history] == ["length", "stop"]
    assert [t.truncated for t in agent.history] == [True, False]
