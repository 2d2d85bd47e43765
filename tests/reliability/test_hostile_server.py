"""A hostile OpenAI-protocol server, driven through the real ``openai`` client.

Every answer a server can get wrong — malformed JSON, wrong types in every field, streams that
are empty, cut mid-event or never end, bodies trickled a byte at a time, errors that echo the
credentials — ends the run in one of three ways: the answer is used (where it is unambiguous),
the tool call gets an error result, or the run fails with a one-line ``ModelError`` saying what
the server sent wrong. Never another exception, never a hang past ``timeout``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from campaign import Tally, json_paths, replaced
from hostile_server import (
    Answer,
    HostileServer,
    call,
    chunk,
    completion,
    cut_after,
    echo_credentials,
    events,
    json_body,
    pings,
    raw_body,
    responses_object,
    silence,
    sse,
    text_reply,
    trickle,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentnb import Agent
from agentnb.errors import ModelConnectionError, ModelError
from agentnb.models import OpenAIChat
from agentnb.models.openai_responses import OpenAIResponses

KEY = "sk-hostile-test-4b1d9e77c0aa"
HANG_TIMEOUT = 0.5
"""The model's ``timeout`` in cases that never finish by themselves (seconds)."""
GIVE_UP = 30.0
"""A run still going after this long is counted as a hang (no timing is asserted)."""
ERROR_LIMIT = 600
"""Longest ModelError text accepted as 'one line that says what was wrong'."""


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@dataclass
class Case:
    """One misbehaviour and what the run must do about it."""

    name: str
    answers: tuple[Answer, ...]
    expect: str
    """error | timeout | ok | tool_ok | tool_error"""
    stream: bool = False
    match: str = ""
    """Text the error must contain (what the server sent wrong), case-insensitive."""
    api: str = "chat"
    text: str = "fine"
    retries: int = 0
    second_ok: bool = False
    """(tool_error) The batch's second call must run fine beside the first's error."""
    estimated: bool = False
    """(ok) The turn's token counts must be marked estimated (the server's were unusable)."""


def C(name: str, answer: Answer | tuple[Answer, ...], expect: str, match: str = "", **kw: Any) -> Case:
    answers = answer if isinstance(answer, tuple) else (answer,)
    if expect.startswith("tool"):
        answers = (*answers, text_reply())
    return Case(name, answers, expect, match=match, **kw)


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


GOOD = json.dumps(completion({"content": "fine"})).encode()


def _object_arguments(arguments: bytes) -> bytes:
    """A tool call whose arguments are the JSON object ``arguments`` (not text)."""
    body = completion({"content": None, "tool_calls": [call(arguments="ARGS")]}, "tool_calls")
    return json.dumps(body).encode().replace(b'"ARGS"', arguments)


SLOW = GOOD[:-1] + b" " * 2000 + b"}"
"""A body that takes minutes to trickle."""


def chat_plain() -> list[Case]:
    calls = lambda *c: completion({"content": None, "tool_calls": list(c)}, "tool_calls")  # noqa: E731
    return [
        C("well-formed answer", text_reply(), "ok"),
        C("body not JSON", raw_body(b"{not json"), "error", "not valid JSON"),
        C("empty body", raw_body(b""), "error", "empty"),
        C("HTML page", raw_body(b"<html>oops</html>", content_type="text/html"), "error", "not valid JSON"),
        C("body a list", json_body([]), "error", "list"),
        C("no choices", json_body({"id": "x"}), "error", "choices"),
        C("choices a number", json_body({"choices": 5}), "error", "choices"),
        C("choice a string", json_body({"choices": ["x"]}), "error", "choice"),
        C(
            "message a list",
            json_body({"choices": [{"index": 0, "message": [1], "finish_reason": "stop"}]}),
            "error",
            "message",
        ),
        C("content 5", json_body(completion({"content": 5})), "error", "content"),
        C("content a list of numbers", json_body(completion({"content": [1, 2]})), "error", "content"),
        C(
            "content as text parts",
            json_body(completion({"content": [{"type": "text", "text": "fine"}]})),
            "ok",
        ),
        C(
            "content with a lone surrogate",
            raw_body(json.dumps(completion({"content": "a\ud800b"})).encode()),
            "ok",
            text="a\ud800b",
        ),
        C("arguments an object", json_body(calls(call(arguments={"a": 1, "b": 2}))), "tool_ok"),
        C("arguments a number", json_body(calls(call(arguments=5))), "tool_error"),
        C(
            "arguments an object with a 5000-digit integer",
            raw_body(_object_arguments(b'{"a": ' + b"9" * 5000 + b', "b": 2}')),
            "tool_error",
            "4300 digits",
        ),
        C(
            "arguments an object nested 300 deep",
            raw_body(_object_arguments(b'{"a": ' + _nested(300) + b', "b": 2}')),
            "tool_error",
            "nested deeper",
        ),
        C(
            "a 5000-digit integer outside the arguments",
            raw_body(GOOD[:-1] + b', "x": {"arguments": 1, "n": ' + b"9" * 5000 + b"}}"),
            "error",
            "5,000 digits",
        ),
        C("arguments a list", json_body(calls(call(arguments=[1, 2]))), "tool_error"),
        C("arguments null", json_body(calls(call(arguments=None))), "tool_error"),
        C("name a list", json_body(calls(call(name=["add"]))), "tool_error", "name that is a list"),
        C("name missing", json_body(calls(call(name=None))), "tool_error", "no name"),
        C("name a number", json_body(calls(call(name=7))), "tool_error", "name that is an int"),
        C(
            "name an object",
            json_body(calls(call(name={"n": "add"}))),
            "tool_error",
            "name that is an object",
        ),
        C("function missing", json_body(calls({"id": "c", "type": "function"})), "tool_error", "no function"),
        C(
            "a bad call beside a good one",
            json_body(calls(call(name=None, id="c0"), call())),
            "tool_error",
            "no name",
            second_ok=True,
        ),
        C(
            "usage with NaN",
            raw_body(
                json.dumps(
                    completion(
                        {"content": "fine"}, usage={"prompt_tokens": float("nan"), "completion_tokens": 3}
                    )
                ).encode()
            ),
            "ok",
            estimated=True,
        ),
        C(
            "usage all Infinity",
            raw_body(
                json.dumps(
                    completion(
                        {"content": "fine"},
                        usage={"prompt_tokens": float("inf"), "completion_tokens": float("-inf")},
                    )
                ).encode()
            ),
            "ok",
            estimated=True,
        ),
        C(
            "NaN outside the usage",
            raw_body(json.dumps(completion({"content": "fine"}, logprobs=float("nan"))).encode()),
            "error",
            "NaN",
        ),
        C(
            "tool_calls an object",
            json_body(completion({"content": None, "tool_calls": {"a": 1}})),
            "error",
            "tool_calls",
        ),
        C("tool call a string", json_body(calls("add")), "error", "tool call"),
        C(
            "function a string",
            json_body(calls({"id": "c", "type": "function", "function": "add"})),
            "tool_error",
            "function that is a string",
        ),
        C("id a number", json_body(calls(call(id=5))), "tool_ok"),
        C(
            "usage with strings",
            json_body(completion({"content": "fine"}, usage={"prompt_tokens": "many"})),
            "ok",
        ),
        C("usage a list", json_body(completion({"content": "fine"}, usage=[1])), "ok"),
        C(
            "finish_reason a number",
            json_body(completion({"content": "fine"}, finish=5)),
            "error",
            "finish_reason",
        ),
        C(
            "error object with HTTP 200",
            json_body({"error": {"message": "model overloaded"}}),
            "error",
            "overloaded",
        ),
        C("nested 100000 deep", raw_body(b'{"choices": ' + _nested(100_000) + b"}"), "error", "JSON"),
        C(
            "nested 500 deep in an extra field",
            raw_body(GOOD[:-1] + b', "x": ' + _nested(500) + b"}"),
            "error",
            "nested",
        ),
        C("5000-digit integer", raw_body(GOOD[:-1] + b', "created": ' + b"9" * 5000 + b"}"), "error", "JSON"),
        C("not UTF-8", raw_body(b'{"choices": "\xff\xfe"}'), "error", "JSON"),
        C("body cut short", cut_after(GOOD, len(GOOD) // 2), "error"),
        C("body trickled a byte at a time", trickle(SLOW), "timeout"),
        C("no answer at all", silence(), "timeout"),
        C("HTTP 500 echoing credentials", echo_credentials(500), "error", "HTTP 500"),
        C("HTTP 400 echoing credentials", echo_credentials(400), "error", "HTTP 400"),
        C("HTTP 401 echoing credentials", echo_credentials(401), "error", "HTTP 401"),
        C("HTTP 503 retried past the deadline", raw_body(b"{}", 503, retry_after="20"), "timeout", retries=2),
    ]


def _frame(data: Any) -> str:
    return f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"


def chat_stream() -> list[Case]:
    head = chunk({"role": "assistant", "content": "Hel"})

    def tool(**f: Any) -> dict[str, Any]:
        call = {"index": 0, "id": "c1", "type": "function"}
        return chunk(
            {"tool_calls": [{**call, "function": {"name": "add", "arguments": '{"a": 1, "b": 2}', **f}}]}
        )

    end = chunk({}, "stop")
    return [
        C("well-formed stream", text_reply(), "ok"),
        C("empty stream", sse([]), "error", "without"),
        C("only [DONE]", events(), "error", "without"),
        C(
            "only a usage chunk",
            events({"id": "x", "choices": [], "usage": {"prompt_tokens": 1}}),
            "error",
            "without",
        ),
        C(
            "cut mid-event",
            sse(
                [_frame(head), 'data: {"id": "chatcmpl-h", "choices": [{"index": 0, "delta": {"content": "lo']
            ),
            "error",
            "cut",
        ),
        C("cut before finish_reason", events(head, chunk({"content": "lo"}), done=False), "error", "cut"),
        C("malformed event", sse(["data: {oops\n\n"]), "error", "not valid JSON"),
        C("event a list", events([1, 2]), "error", "list"),
        C("delta content 5", events(chunk({"content": 5}), end), "error", "content"),
        C("delta content a list", events(chunk({"content": ["fi", "ne"]}), end), "error", "content"),
        C("delta a string", events({"choices": [{"index": 0, "delta": "x"}]}, end), "error", "delta"),
        C(
            "choices null then text",
            events({"id": "x", "choices": None}, chunk({"content": "fine"}), end),
            "ok",
        ),
        C(
            "arguments an object in a delta",
            events(tool(arguments={"a": 1, "b": 2}), chunk({}, "tool_calls")),
            "tool_ok",
        ),
        C("arguments a number in a delta", events(tool(arguments=7), chunk({}, "tool_calls")), "tool_error"),
        C(
            "name a list in a delta",
            events(tool(name=["add"]), chunk({}, "tool_calls")),
            "tool_error",
            "name that is a list",
        ),
        C(
            "name a number in a delta",
            events(tool(name=3), chunk({}, "tool_calls")),
            "tool_error",
            "name that is an int",
        ),
        C(
            "tool call without a name",
            events(tool(name=None), chunk({}, "tool_calls")),
            "tool_error",
            "no name",
        ),
        C(
            "tool call index a string",
            events(
                chunk(
                    {
                        "tool_calls": [
                            {"index": "x", "id": "c", "function": {"name": "add", "arguments": "{}"}}
                        ]
                    }
                ),
                chunk({}, "tool_calls"),
            ),
            "tool_error",
            "index is a string",
        ),
        C(
            "tool call index null, then a good call",
            events(
                chunk(
                    {
                        "tool_calls": [
                            {"index": None, "id": "c0", "function": {"name": "add", "arguments": '{"a": 1,'}}
                        ]
                    }
                ),
                chunk({"tool_calls": [{"index": None, "function": {"arguments": ' "b": 2}'}}]}),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                            }
                        ]
                    }
                ),
                chunk({}, "tool_calls"),
            ),
            "tool_error",
            "index is null",
            second_ok=True,
        ),
        C(
            "usage with NaN in the last chunk",
            events(
                chunk({"content": "fine"}),
                chunk({}, "stop"),
                {"id": "x", "choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": float("nan")}},
            ),
            "ok",
            estimated=True,
        ),
        C(
            "tool call without an index",
            events(
                chunk(
                    {
                        "tool_calls": [
                            {"id": "c", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
                        ]
                    }
                ),
                chunk({}, "tool_calls"),
            ),
            "tool_ok",
        ),
        C(
            "error object mid-stream",
            events(head, {"error": {"message": "model overloaded"}}),
            "error",
            "overloaded",
        ),
        C(
            "event: error frame",
            sse(['event: error\ndata: {"error": {"message": "boom"}}\n\n']),
            "error",
            "boom",
        ),
        C(
            "CRLF lines and comments",
            sse(
                [
                    ": hi\r\n\r\n",
                    "data: " + json.dumps(chunk({"content": "fine"})) + "\r\n\r\n",
                    _frame(end),
                    "data: [DONE]\r\n\r\n",
                ]
            ),
            "ok",
        ),
        C("JSON answer to a stream request", json_body(completion({"content": "fine"})), "ok"),
        C(
            "only choice 1 answers",
            events({"choices": [{"index": 1, "delta": {"content": "x"}, "finish_reason": "stop"}]}),
            "error",
            "without",
        ),
        C(
            "5000-digit integer in an event",
            sse(["data: " + json.dumps(head)[:-1] + ', "created": ' + "9" * 5000 + "}\n\n"]),
            "error",
            "JSON",
        ),
        C("nested 100000 deep event", sse([b"data: " + _nested(100_000) + b"\n\n"]), "error", "JSON"),
        C("keep-alive pings forever", pings(), "timeout"),
        C("pings after the first chunk", pings(first=_frame(head)), "timeout"),
        C(
            "stream trickled a byte at a time",
            trickle((_frame(head) * 100 + _frame(end)).encode(), "text/event-stream"),
            "timeout",
        ),
        C("headers then silence", silence(after_headers=True), "timeout"),
        C("HTTP 500 echoing credentials", echo_credentials(500), "error", "HTTP 500"),
    ]


def responses_cases() -> list[Case]:
    def message(content: Any) -> dict[str, Any]:
        return {"type": "message", "role": "assistant", "content": content}

    def fc(**f: Any) -> dict[str, Any]:
        return {"type": "function_call", "call_id": "c1", "name": "add", "arguments": '{"a": 1, "b": 2}', **f}

    def R(name: str, answer: Any, expect: str, match: str = "", stream: bool = False) -> Case:
        return C(name, answer, expect, match, api="responses", stream=stream)

    delta = {"type": "response.output_text.delta", "delta": "Hel"}
    return [
        R("well-formed answer", text_reply(), "ok"),
        R("well-formed stream", text_reply(), "ok", stream=True),
        R("body not JSON", raw_body(b"{not json"), "error", "not valid JSON"),
        R("output a number", json_body(responses_object(5)), "error", "output"),
        R("output item a string", json_body(responses_object(["x"])), "error", "output"),
        R("content 5", json_body(responses_object([message(5)])), "error", "content"),
        R(
            "text 5",
            json_body(responses_object([message([{"type": "output_text", "text": 5}])])),
            "error",
            "text",
        ),
        R(
            "name a list",
            json_body(responses_object([fc(name=["add"])])),
            "tool_error",
            "name that is a list",
        ),
        R("name null", json_body(responses_object([fc(name=None)])), "tool_error", "no name"),
        R(
            "name an object",
            json_body(responses_object([fc(name={"n": 1})])),
            "tool_error",
            "name that is an object",
        ),
        R(
            "usage with NaN",
            raw_body(
                json.dumps(
                    {
                        **responses_object([message([{"type": "output_text", "text": "fine"}])]),
                        "usage": {"input_tokens": float("nan"), "output_tokens": float("nan")},
                    }
                ).encode()
            ),
            "ok",
        ),
        R("arguments an object", json_body(responses_object([fc(arguments={"a": 1, "b": 2})])), "tool_ok"),
        R("arguments a list", json_body(responses_object([fc(arguments=[1])])), "tool_error"),
        R("empty stream", sse([]), "error", "without", stream=True),
        R("cut after a delta", events(delta, done=False), "error", "without", stream=True),
        R(
            "delta 5",
            events({"type": "response.output_text.delta", "delta": 5}),
            "error",
            "delta",
            stream=True,
        ),
        R(
            "completed with a string",
            events({"type": "response.completed", "response": "done"}),
            "error",
            "response",
            stream=True,
        ),
        R(
            "failed event",
            events({"type": "response.failed", "response": {"error": {"message": "quota gone"}}}),
            "error",
            "quota gone",
            stream=True,
        ),
        R("error event", events({"type": "error", "message": "boom"}), "error", "boom", stream=True),
        R("malformed event", sse(["data: {oops\n\n"]), "error", "not valid JSON", stream=True),
        R("keep-alive pings forever", pings(), "timeout", stream=True),
        R(
            "stream trickled a byte at a time",
            trickle(_frame(delta).encode() * 100, "text/event-stream"),
            "timeout",
            stream=True,
        ),
        R("HTTP 500 echoing credentials", echo_credentials(500), "error", "HTTP 500"),
    ]


CASES = [*chat_plain(), *[Case(**{**c.__dict__, "stream": True}) for c in chat_stream()], *responses_cases()]


# -- running a case ---------------------------------------------------------------------------


def make_model(case: Case, url: str) -> OpenAIChat | OpenAIResponses:
    cls = OpenAIChat if case.api == "chat" else OpenAIResponses
    timeout = HANG_TIMEOUT if case.expect == "timeout" else 20.0
    return cls("m", base_url=url, api_key=KEY, timeout=timeout, max_retries=case.retries, stream=case.stream)


def run_agent(agent: Agent) -> tuple[bool, BaseException | None]:
    """Run a turn in a thread; (finished, exception)."""
    box: list[BaseException | None] = []

    def target() -> None:
        try:
            agent.run("add 1 and 2")
            box.append(None)
        except BaseException as exc:  # noqa: BLE001 - classified by the caller
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(GIVE_UP)
    return (not thread.is_alive()), (box[0] if box else None)


def judge(case: Case) -> str | None:
    """What went wrong in one case (None when the run did what the case expects)."""
    with HostileServer(*case.answers) as server:
        agent = Agent("h", make_model(case, server.url), tools=[add])
        finished, error = run_agent(agent)
    if not finished:
        return "hang"
    turn = agent.history[-1]
    records = repr(turn.events)
    if KEY in records or (error is not None and KEY in str(error)):
        return "credential in the record or the error"
    if case.expect in ("error", "timeout"):
        if error is None:
            return f"accepted silently: {turn.content!r}"[:80]
        if not isinstance(error, ModelError):
            return f"raised {type(error).__name__}: {error}"[:120]
        text = str(error)
        if "\n" in text or len(text) > ERROR_LIMIT:
            return f"error of {text.count(chr(10)) + 1} lines, {len(text)} chars"
        if case.expect == "timeout" and not (isinstance(error, ModelConnectionError) and "within" in text):
            return f"not a deadline error: {text}"[:120]
        if case.match.lower() not in text.lower():
            return f"error does not say {case.match!r}: {text}"[:160]
        return None if turn.status == "failed" else f"turn status {turn.status}"
    if error is not None:
        return f"raised {type(error).__name__}: {error}"[:160]
    if case.expect == "ok":
        if case.estimated and not turn.usage.estimated:
            return f"usage not marked estimated: {turn.usage}"
        return None if turn.content == case.text else f"content {turn.content!r}"
    failed = [c for c in turn.tool_calls if c.error is not None]
    first = failed[0] if case.second_ok and failed else turn.tool_calls[0] if turn.tool_calls else None
    if first is None:
        return "no tool call"
    if case.expect == "tool_ok" and (first.error is not None or first.result != "3"):
        return f"tool call failed: {first.error}"
    if case.expect == "tool_error" and first.error is None:
        return f"tool call accepted: {first.result}"
    if case.expect == "tool_error" and case.match.lower() not in (first.error or "").lower():
        return f"the tool error does not say {case.match!r}: {first.error}"[:160]
    if case.second_ok and [c.result for c in turn.tool_calls if c.error is None] != ["3"]:
        return f"the good call beside it did not run: {turn.tool_calls}"[:160]
    return None if turn.content == "fine" else f"content {turn.content!r}"


@pytest.mark.timeout(300)
def test_every_misbehaviour_ends_the_run_cleanly():
    tally = Tally("malformed HTTP answers")
    failures = []
    for case in CASES:
        problem = judge(case)
        tally.check(problem, case.name)
        if problem:
            failures.append(f"{case.api}{' stream' if case.stream else ''} / {case.name}: {problem}")
    assert not failures, f"{len(failures)} of {len(CASES)} cases:\n" + "\n".join(failures)


# -- mutated answers --------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


TOOL_CALL = completion({"content": None, "tool_calls": [call()]}, "tool_calls")
STREAM = [
    chunk({"role": "assistant", "content": "Hel"}),
    chunk({"tool_calls": [{"index": 0, **call()}]}),
    chunk({}, "tool_calls"),
]


@st.composite
def mutations(draw: st.DrawFn) -> tuple[bool, Any]:
    stream = draw(st.booleans())
    base: Any = STREAM if stream else TOOL_CALL
    path = draw(st.sampled_from(json_paths(base)[1:] if stream else json_paths(base)))
    return stream, replaced(base, path, draw(json_values))


@pytest.mark.timeout(600)
def test_an_answer_with_any_field_replaced_by_any_json_value_never_crashes(scale):
    """The answer is used, the tool call errors, or a one-line ModelError: nothing else."""
    tally = Tally("malformed HTTP answers, mutated fields")

    @settings(
        max_examples=scale(25, 1500),
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(mutation=mutations())
    def one(mutation: tuple[bool, Any]) -> None:
        stream, body = mutation
        answer = events(*body) if stream else json_body(body)
        with HostileServer(answer, text_reply()) as server:
            agent = Agent(
                "h",
                OpenAIChat("m", base_url=server.url, api_key=KEY, timeout=20, max_retries=0, stream=stream),
                tools=[add],
            )
            finished, error = run_agent(agent)
        if not finished:
            problem: str | None = "hang"
        elif error is not None and not isinstance(error, ModelError):
            problem = f"raised {type(error).__name__}"
        elif error is not None and ("\n" in str(error) or len(str(error)) > ERROR_LIMIT):
            problem = "error not one short line"
        elif error is None and agent.history[-1].status != "ok":
            problem = f"status {agent.history[-1].status}"
        else:
            problem = None
        tally.check(problem, json.dumps(body)[:200])

    one()
    assert tally.failed == 0, tally.summary()


@pytest.mark.parametrize(
    "name",
    [
        "body not JSON",
        "NaN outside the usage",
        "cut mid-event",
        "keep-alive pings forever",
        "HTTP 500 echoing credentials",
    ],
)
def test_chat_magic_says_in_one_line_what_the_server_did(shell, name):
    """No traceback wall in a notebook: ``%%chat`` shows each failure as one line."""
    from IPython.utils.capture import capture_output

    case = next(c for c in CASES if c.name == name)
    with HostileServer(*case.answers) as server:
        shell.user_ns["hostile"] = Agent("hostile", make_model(case, server.url), tools=[add])
        with capture_output():
            error = shell.run_cell("%%chat hostile\nadd 1 and 2").error_in_exec
    (text,) = error._render_traceback_()  # what the notebook shows, instead of a traceback
    assert text == str(error) and text.startswith("%%chat hostile 'add 1 and 2': turn 1 failed:")
    assert case.match.lower() in text.lower() and KEY not in text
