"""The run loop: event sequences, robustness against bad model output, guards, records."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict

import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import AgentRunError, MaxToolIterationsError, ScriptedModelExhaustedError, StateKeyError
from agentnb.events import EVENT_ADAPTER


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def masked(event):
    data = asdict(event)
    for key in ("run_id", "at", "duration_ms"):
        data.pop(key, None)
    if "usage" in data:
        data.pop("usage")
        data.pop("usage_total", None)
    return data


def test_event_sequence_snapshot():
    model = ScriptedModel([tool_call("add", a=1, b=2), "The sum is 3."])
    agent = Agent(name="calc", model=model, tools=[add], instructions="Add things.")
    events = list(agent.iter_run("1+2?"))
    assert [e.kind for e in events] == [
        "run_started",
        "prompt_rendered",
        "model_requested",
        "model_responded",
        "tool_call_started",
        "tool_call_finished",
        "model_requested",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_delta",
        "model_responded",
        "run_finished",
    ]
    assert masked(events[0]) == {
        "kind": "run_started",
        "agent": "calc",
        "turn": 0,
        "message": "1+2?",
        "model": "scripted",
        "parent_run_id": None,
        "parent_tool_call_id": None,
        "path": ("calc",),
        "depth": 0,
    }
    assert masked(events[5]) == {
        "kind": "tool_call_finished",
        "call": 0,
        "tool_call_id": "call_0_0",
        "name": "add",
        "arguments": '{"a": 1, "b": 2}',
        "result": "3",
        "error": None,
        "error_kind": None,
        "attachments": (),  # no image or file in the result
        "hooks": (),
        "answered_by": "tool",
        "changed_keys": (),
        "source": None,  # a Python tool; MCP tools say mcp:<server>
        "replayed": False,
        "child_run_id": None,
        "child_run_ids": (),
        "decision": None,  # nothing paused it for a person
        "model_arguments": None,
    }
    assert "".join(e.text for e in events if e.kind == "text_delta") == "The sum is 3."
    assert masked(events[-1]) == {
        "kind": "run_finished",
        "content": "The sum is 3.",
        "model_calls": 2,
        "tool_calls": 1,
    }
    second_request = events[6].request
    assert second_request["messages"][-2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_0_0",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
            }
        ],
    }
    assert second_request["messages"][-1] == {"role": "tool", "content": "3", "tool_call_id": "call_0_0"}


def test_unstreamed_scripted_answers_arrive_in_one_piece():
    model = ScriptedModel(["The sum is 3."], stream=False)
    events = list(Agent(model=model).iter_run("1+2?"))
    assert [e.text for e in events if e.kind == "text_delta"] == ["The sum is 3."]


def test_events_round_trip_through_json():
    agent = Agent(model=ScriptedModel([tool_call("add", a=1, b=2), "3"]), tools=[add], session_state={"x": 1})
    result = agent.run("go", x=2)
    for event in result.events:
        text = EVENT_ADAPTER.dump_json(event)
        assert EVENT_ADAPTER.validate_json(text) == event


@pytest.mark.parametrize(
    ("call", "kind", "fragment"),
    [
        (tool_call("nope", a=1), "unknown_tool", "there is no tool named 'nope'. Available tools: add."),
        (tool_call("add", raw_arguments='{"a": 1,'), "malformed_arguments", "are not valid JSON"),
        (tool_call("add", raw_arguments="[1, 2]"), "invalid_arguments", "arguments must be a JSON object"),
        (tool_call("add", a="x", b=2), "invalid_arguments", "a: Input should be a valid integer"),
        (tool_call("add", a=1), "invalid_arguments", "b: required argument missing"),
        (tool_call("add", a=1, b=2, c=3), "invalid_arguments", "c: unexpected argument"),
    ],
)
def test_bad_model_output_becomes_an_error_result_and_the_run_goes_on(call, kind, fragment):
    model = ScriptedModel([call, "recovered"])
    result = Agent(model=model, tools=[add]).run("go")
    finished = result.tool_calls[0]
    assert finished.error_kind == kind
    assert fragment in finished.result and finished.result.startswith("Error: ")
    assert model.requests[1].messages[-1] == {
        "role": "tool",
        "content": finished.result,
        "tool_call_id": finished.tool_call_id,
    }
    assert result.content == "recovered"


def test_tool_exception_is_reported_and_its_state_changes_rolled_back():
    def risky(session_state: dict) -> str:
        session_state["half"] = "done"
        raise RuntimeError("disk full")

    model = ScriptedModel([tool_call("risky"), "gave up"])
    agent = Agent(model=model, tools=[risky], session_state={"keep": 1})
    result = agent.run("go")
    assert result.tool_calls[0].result == "Error: disk full (RuntimeError raised by tool 'risky')"
    assert agent.session_state == {"keep": 1}
    assert result.turn.state_changes == []


def test_tool_leaving_typed_state_invalid_is_an_error_and_changes_nothing():
    def bad(session_state: dict) -> str:
        session_state["count"] = "three"
        return "ok"

    agent = Agent(
        model=ScriptedModel([tool_call("bad"), "done"]), tools=[bad], state_schema={"count": {"type": int}}
    )
    result = agent.run("go")
    call = result.tool_calls[0]
    assert call.error_kind == "state_error"
    assert "state key 'count' expects int, got str" in call.result
    assert "count" not in agent.session_state


def test_parallel_tool_calls_run_in_order():
    model = ScriptedModel([[tool_call("add", a=1, b=1), tool_call("add", a=2, b=2)], "2 and 4"])
    result = Agent(model=model, tools=[add]).run("go")
    assert [c.result for c in result.tool_calls] == ["2", "4"]
    assert [m["role"] for m in model.requests[1].messages] == ["user", "assistant", "tool", "tool"]


def test_loop_guard_ends_the_run_with_a_clear_error_and_keeps_everything():
    model = ScriptedModel(lambda request: tool_call("add", a=1, b=1))
    agent = Agent(name="loopy", model=model, tools=[add], max_tool_iterations=3)
    with pytest.raises(
        MaxToolIterationsError, match=r"after 3 round\(s\) of tool calls \(max_tool_iterations=3\)"
    ) as info:
        agent.run("go")
    turn = agent.history[-1]
    assert turn.status == "failed" and "max_tool_iterations=3" in turn.error
    assert len(turn.tool_calls) == 3
    assert len(model.requests) == 4
    assert info.value.result.tool_calls == turn.tool_calls
    assert turn.events[-1].kind == "run_failed"


def test_model_failure_is_recorded_and_raised():
    agent = Agent(model=ScriptedModel(["only one"]))
    agent.run("first")
    with pytest.raises(ScriptedModelExhaustedError, match="no reply left for request 2: it was given 1 step"):
        agent.run("second")
    assert [t.status for t in agent.history] == ["ok", "failed"]
    assert agent.history[-1].events[-1].error_type == "ScriptedModelExhaustedError"


def test_unknown_run_kwarg_with_schema_fails_before_the_model_is_called():
    model = ScriptedModel(["never"])
    agent = Agent(model=model, state_schema={"a": {"type": int}})
    with pytest.raises(StateKeyError, match="Key 'b' not found in schema"):
        agent.run("go", b=1)
    assert model.requests == []


def test_user_changes_between_turns_are_attributed_to_the_user():
    agent = Agent(model=ScriptedModel(["one", "two"]), session_state={"n": 1})
    agent.run("a")
    agent.session_state["n"] = 5
    result = agent.run("b")
    change = result.turn.state_changes[0]
    assert change.cause.kind == "user"
    assert change.patch == ({"op": "replace", "path": "/n", "value": 5},)
    assert result.turn.state_before == {"n": 5}


def test_history_keeps_requests_responses_and_states():
    agent = Agent(
        model=ScriptedModel([tool_call("add", a=1, b=2), "3", "again"]), tools=[add], session_state={"v": 0}
    )
    agent.run("first")
    agent.run("second", v=9)
    assert len(agent.history) == 2
    first, second = agent.history
    assert [c.index for c in first.model_calls] == [0, 1]
    assert first.model_calls[0].request["messages"][-1] == {"role": "user", "content": "first"}
    assert first.model_calls[1].response.content == "3"
    assert first.state_after == {"v": 0} and second.state_after == {"v": 9}
    assert second.changed_keys() == ["v"]
    assert second.system_prompt == ""
    assert json.loads(first.tool_calls[0].arguments) == {"a": 1, "b": 2}


def test_history_in_context_sends_previous_turns():
    model = ScriptedModel(["hello Ann", "your name is Ann"])
    agent = Agent(model=model, add_history_to_context=True, instructions="Be nice.")
    agent.run("I am Ann")
    agent.run("Who am I?")
    assert [(m["role"], m["content"]) for m in model.requests[1].messages] == [
        ("system", "Be nice."),
        ("user", "I am Ann"),
        ("assistant", "hello Ann"),
        ("user", "Who am I?"),
    ]


def test_arun_and_subscribers():
    seen = []
    agent = Agent(model=ScriptedModel(["hi there"]))
    unsubscribe = agent.subscribe(lambda e: seen.append(e.kind))
    result = asyncio.run(agent.arun("hello"))
    assert result.content == "hi there"
    assert seen[0] == "run_started" and seen[-1] == "run_finished" and "text_delta" in seen
    unsubscribe()
    agent.model.add("again")
    agent.run("more")
    assert seen.count("run_started") == 1


def test_broken_subscriber_does_not_break_the_run():
    agent = Agent(model=ScriptedModel(["ok"]))
    agent.subscribe(lambda e: 1 / 0)
    with pytest.warns(UserWarning, match="subscriber"):
        assert agent.run("x").content == "ok"


def test_non_agentnb_model_errors_are_wrapped_with_the_result():
    class Boom(ScriptedModel):
        def stream(self, request):
            raise OSError("socket closed")
            yield  # pragma: no cover

    agent = Agent(model=Boom())
    with pytest.raises(AgentRunError, match="OSError: socket closed") as info:
        agent.run("x")
    assert info.value.result.turn.status == "failed"


def test_run_result_state_access():
    result = Agent(model=ScriptedModel(["ok"]), session_state={"a": 1}).run("x")
    assert result["a"] == 1 and "a" in result and result.get("zz", 5) == 5
    with pytest.raises(KeyError, match="'zz' is not in the state"):
        result["zz"]
    assert str(result) == "ok"


class Basket:
    """A custom class without __eq__ or JSON support."""

    def __init__(self, items):
        self.items = items


def test_state_with_custom_objects_is_diffed_without_failing():
    def fill(session_state: dict) -> str:
        session_state["baskets"].append(Basket(["milk"]))
        return "ok"

    agent = Agent(
        model=ScriptedModel([tool_call("fill"), "done"]), tools=[fill], session_state={"baskets": []}
    )
    result = agent.run("go")
    change = result.turn.state_changes[0]
    assert change.patch[0]["op"] == "add" and change.patch[0]["path"] == "/baskets/0"
    assert isinstance(change.patch[0]["value"], Basket)


def test_run_session_state_is_merged_and_attributed():
    agent = Agent(model=ScriptedModel(["ok", "ok"]), session_state={"profile": {"name": "a", "age": 3}})
    result = agent.run("hi", session_state={"profile": {"name": "b"}, "extra": 1}, note="n")
    assert result.state == {"profile": {"name": "b", "age": 3}, "extra": 1, "note": "n"}
    causes = [(c.cause.kind, c.cause.name) for c in result.turn.state_changes]
    assert causes == [("run_kwarg", "session_state"), ("run_kwarg", "note")]
    with pytest.raises(Exception, match="session_state must be a dict"):
        agent.run("hi", session_state=["not", "a", "dict"])


def test_run_session_state_on_a_typed_state_is_checked():
    from agentnb.errors import StateTypeError

    agent = Agent(model=ScriptedModel(["ok"]), state_schema={"count": {"type": int}})
    with pytest.raises(StateTypeError, match="'count' expects int"):
        agent.run("hi", session_state={"count": "three"})
    assert agent.session_state == {}


def test_update_session_state_replaces_keys_and_returns_a_copy():
    agent = Agent(model=ScriptedModel([]), session_state={"a": {"x": 1}, "b": 2})
    state = agent.update_session_state({"a": {"y": 2}})
    assert state == agent.session_state == {"a": {"y": 2}, "b": 2}
    state["b"] = 99
    assert agent.session_state["b"] == 2


def test_a_state_reader_runs_after_the_writer_of_its_key_in_one_batch():
    from agentnb import Tool

    seen = []

    def read(value: str | None = None) -> str:
        seen.append(value)
        return "read"

    empty = {"type": "object", "properties": {"value": {"type": "string"}}}
    reader = Tool(
        name="reader",
        description="reads",
        parameters=empty,
        function=read,
        inputs_from_state={"value": "value"},
    )
    writer = Tool(
        name="writer",
        description="writes",
        parameters={"type": "object", "properties": {}},
        function=lambda: {"value": "written"},
        outputs_to_state={"value": {"source": "value"}},
    )
    calls = [
        tool_call("reader", id="r1"),
        tool_call("reader", id="r2", value="sent"),
        tool_call("writer", id="w"),
    ]
    result = Agent(model=ScriptedModel([calls, "done"]), tools=[reader, writer]).run("go")
    # r2 sent its own value, so it reads nothing from state and keeps its place; r1 waits for the writer
    assert [c.tool_call_id for c in result.tool_calls] == ["r2", "w", "r1"]
    assert seen == ["sent", "written"]


def test_history_in_context_sends_each_earlier_turn_once():
    model = ScriptedModel(["one", "two", "three"])
    agent = Agent("a", model, instructions="Be brief.", add_history_to_context=True, num_history_runs=None)
    for message in ("first", "second", "third"):
        agent.run(message)
    sent = [(m["role"], m["content"]) for m in model.requests[2].messages]
    assert sent == [
        ("system", "Be brief."),
        ("user", "first"),
        ("assistant", "one"),
        ("user", "second"),
        ("assistant", "two"),
        ("user", "third"),
    ]
    assert [m.role for m in agent.history[2].messages] == [
        "system",
        "user",
        "assistant",
    ]  # its own messages only
    limited = Agent(
        "b", ScriptedModel(["one", "two", "three"]), add_history_to_context=True, num_history_runs=1
    )
    for message in ("first", "second", "third"):
        limited.run(message)
    assert [m["content"] for m in limited.model.requests[2].messages] == ["second", "two", "third"]
