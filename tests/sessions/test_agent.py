"""Agent time travel: a fork from any turn takes the state, conversation and turns as they were."""

from __future__ import annotations

import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import ConfigurationError, ScriptedModelExhaustedError


def add_item(item: str, session_state) -> str:
    """Add an item to the list."""
    session_state["items"].append(item)
    return f"added {item}"


def three_turns() -> Agent:
    model = ScriptedModel(
        [
            tool_call("add_item", item="eggs"),
            "Added eggs.",
            tool_call("add_item", item="bread"),
            "Added bread.",
            "Nothing else.",
        ]
    )
    agent = Agent(
        "shop",
        model,
        instructions="List: {items}",
        session_state={"items": ["milk"]},
        tools=[add_item],
        add_history_to_context=True,
    )
    for message in ("add eggs", "add bread", "anything else?"):
        agent.run(message)
    return agent


def test_a_fork_from_turn_2_has_the_state_conversation_and_turns_of_then() -> None:
    agent = three_turns()
    fork = agent.fork("v2", turn=2)
    assert fork.name == "v2" and fork.parent is agent and fork.forked_at == 2
    assert fork.session_state == agent.history[1].state_after == {"items": ["milk", "eggs", "bread"]}
    assert [t.message for t in fork.history] == ["add eggs", "add bread"]
    assert fork.history[1] is agent.history[1]  # finished records are shared, never copied
    assert [m.content for m in fork.state.messages if m.role == "user"] == ["add eggs", "add bread"]
    # What it sends next continues from turn 2: that conversation, that state.
    fork.model = ScriptedModel(["Added tea."])
    fork.run("add tea")
    sent = fork.model.requests[0].messages
    assert [m["content"] for m in sent if m["role"] == "user"] == ["add eggs", "add bread", "add tea"]
    assert sent[0]["content"] == "List: ['milk', 'eggs', 'bread']"
    assert len(agent.history) == 3 and agent.session_state == {"items": ["milk", "eggs", "bread"]}


def test_a_fork_from_the_last_turn_equals_a_fork_of_now() -> None:
    agent = three_turns()
    at_three, now = agent.fork("a", turn=3), agent.fork("b")
    assert at_three.session_state == now.session_state
    assert [m.to_dict() for m in at_three.state.messages] == [m.to_dict() for m in now.state.messages]
    assert list(at_three.history) == list(now.history)


def test_a_fork_from_turn_1_owns_its_state() -> None:
    agent = three_turns()
    fork = agent.fork(turn=1)
    assert fork.name == "shop_fork" and fork.session_state == {"items": ["milk", "eggs"]}
    fork.session_state["items"].append("mine")
    assert agent.history[0].state_after == {"items": ["milk", "eggs"]}


def test_a_failed_turn_adds_nothing_to_the_conversation_of_a_fork() -> None:
    agent = Agent("shop", ScriptedModel(["one"]), add_history_to_context=True)
    agent.run("first")
    with pytest.raises(ScriptedModelExhaustedError):
        agent.run("second")  # the script is exhausted: the turn fails
    fork = agent.fork("after", turn=2)
    assert [m.content for m in fork.state.messages if m.role == "user"] == ["first"]
    assert [t.status for t in fork.history] == ["ok", "failed"]


@pytest.mark.parametrize(
    ("turn", "message"),
    [
        (0, "agent 'shop' has no turn 0: it has turns 1 to 3 (turns are numbered from 1)"),
        (4, "agent 'shop' has no turn 4: it has turns 1 to 3"),
        ("2", "turn must be a turn number (1 = the first), got '2'"),
        (True, "turn must be a turn number"),
    ],
)
def test_a_turn_that_does_not_exist_is_a_clear_error(turn, message) -> None:
    with pytest.raises(ConfigurationError) as info:
        three_turns().fork("x", turn=turn)
    assert message in str(info.value)


def test_an_agent_without_turns_has_none_to_fork_from() -> None:
    with pytest.raises(ConfigurationError, match="has no turn 1: it has no turns yet"):
        Agent("fresh").fork(turn=1)


def test_num_history_runs_sends_every_earlier_turn_while_there_are_fewer() -> None:
    agent = Agent("chat", ScriptedModel(["a", "b", "c"]), add_history_to_context=True, num_history_runs=3)
    for message in ("one", "two", "three"):
        agent.run(message)
    sent = agent.model.requests[-1].messages
    assert [m["content"] for m in sent if m["role"] == "user"] == ["one", "two", "three"]
