"""What a run takes (a message, Haystack's messages=[...], Agno's session_state=) and
print_response."""

from __future__ import annotations

import sys

import pytest

from agentnb import Agent, ChatMessage, ScriptedModel, tool_call
from agentnb.errors import ConfigurationError


def test_messages_list_sends_the_earlier_ones_before_the_user_message():
    model = ScriptedModel(["ok"])
    agent = Agent(model=model, instructions="Be brief.")
    result = agent.run(
        messages=[ChatMessage.from_assistant("Earlier answer."), ChatMessage.from_user("And now?")]
    )
    assert model.requests[0].messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Earlier answer."},
        {"role": "user", "content": "And now?"},
    ]
    assert result.turn.message == "And now?"
    # what the run was given is the turn's own (unlike earlier turns sent as context)
    assert [m.content for m in result.messages] == ["Be brief.", "Earlier answer.", "And now?", "ok"]
    assert (
        Agent(model=ScriptedModel(["ok"])).run([{"role": "user", "content": "positional"}]).turn.message
        == "positional"
    )


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda a: a.run("hi", messages=[ChatMessage.from_user("x")]), "not both"),
        (lambda a: a.run(messages=[ChatMessage.from_assistant("x")]), "must end with the user's message"),
        (lambda a: a.run(messages=[]), "must end with the user's message"),
        (lambda a: a.run(messages=["just text"]), "takes chat messages"),
        (lambda a: a.run(3), "the message must be a str"),
    ],
)
def test_bad_run_inputs_are_short_clear_errors(call, match):
    with pytest.raises(ConfigurationError, match=match):
        call(Agent(model=ScriptedModel(["never"])))


def test_print_response_prints_the_answer_and_streams_it(capsys):
    agent = Agent(
        model=ScriptedModel(
            [tool_call("update_session_state", session_state_updates={"a": 1}), "All set now.", "Again."]
        ),
        enable_agentic_state=True,
    )
    agent.print_response("set a", stream=True)
    assert capsys.readouterr().out == "All set now.\n"
    assert agent.session_state == {"a": 1}
    agent.print_response("again")
    assert capsys.readouterr().out == "Again.\n"


def test_print_response_writes_each_piece_as_it_arrives(monkeypatch):
    writes: list[str] = []

    class Out:
        def write(self, text: str) -> int:
            writes.append(text)
            return len(text)

        def flush(self) -> None:
            writes.append("<flush>")

    monkeypatch.setattr(sys, "stdout", Out())
    Agent(model=ScriptedModel(["one two three"])).print_response("go", stream=True)
    assert [w for w in writes if w] == ["one ", "<flush>", "two ", "<flush>", "three", "<flush>", "\n"]


def test_a_placeholder_model_observes_and_fails_clearly_at_run_time():
    agent = Agent(name="writer", model=object(), instructions="Write.")
    assert agent.observe("hi").system_prompt == "Write."
    assert agent.model.label == "placeholder:object"
    with pytest.raises(
        ConfigurationError, match="which is not a model: observe\\(\\) works, a run needs one"
    ):
        agent.run("hi")
    assert agent.history[-1].status == "failed"


def test_chat_generator_is_the_model():
    model = ScriptedModel(["ok"])
    assert Agent(chat_generator=model).model is model
    with pytest.raises(ConfigurationError, match="not both"):
        Agent(model=model, chat_generator=model)


def test_a_results_tool_calls_are_the_turns_whether_read_first_pickled_or_copied() -> None:
    import copy
    import pickle

    def add(session_state: dict, item: str) -> str:
        """Add an item."""
        session_state.setdefault("items", []).append(item)
        return f"added {item}"

    agent = Agent(
        "shop",
        ScriptedModel([tool_call("add", item="pen"), tool_call("add", item="ink"), "Both."]),
        tools=[add],
    )
    result = agent.run("add two")
    for got in (
        pickle.loads(pickle.dumps(result)),
        copy.deepcopy(result),
        result,
    ):  # the list not built yet in the first two
        assert [(c.name, c.arguments, c.result) for c in got.tool_calls] == [
            ("add", '{"item": "pen"}', "added pen"),
            ("add", '{"item": "ink"}', "added ink"),
        ]
    assert result.tool_calls == agent.history[-1].tool_calls and result == copy.deepcopy(result)
