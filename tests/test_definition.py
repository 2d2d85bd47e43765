"""AgentDefinition: an agent as data, the one way to build it again (fork, a team's members, an
evaluation's workers)."""

from __future__ import annotations

import pickle

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.definition import AgentDefinition


def add_item(item: str, session_state) -> str:
    """Add an item."""
    session_state["items"].append(item)
    return f"added {item}"


def shop(**options) -> Agent:
    return Agent(
        "shop",
        ScriptedModel([tool_call("add_item", item="milk"), "Added milk."]),
        instructions="Keep a list; it has {items}.",
        session_state={"items": []},
        tools=[add_item],
        **options,
    )


def test_a_definition_is_what_the_agent_was_made_from_and_builds_another_like_it() -> None:
    agent = shop(max_tool_iterations=4)
    agent.run("add milk")
    definition = agent.definition
    assert isinstance(definition, AgentDefinition) and definition.cls is Agent
    assert definition.name == "shop" and definition.options["max_tool_iterations"] == 4
    assert "session" not in definition.options and "db" not in definition.options
    assert definition.initial_state == {"items": []}
    built = definition.build("shop2", model=ScriptedModel(["hi"]))
    assert built.name == "shop2" and built.session_state == {"items": []} and not built.history
    assert [t.name for t in built.tools] == ["add_item"] and built.max_tool_iterations == 4
    assert built.instructions == "Keep a list; it has {items}."


def test_configured_keeps_what_was_set_since_and_survives_pickling_without_built_tools() -> None:
    agent = shop()
    agent.instructions = "Be brief. The list: {items}."
    agent.max_tool_iterations = 2
    as_made = AgentDefinition.of(agent)
    configured = AgentDefinition.of(agent, configured=True).without("model", "session_state")
    assert as_made.settings == {} and as_made.build().instructions == "Keep a list; it has {items}."
    assert configured.built_tools is not None
    shipped = pickle.loads(pickle.dumps(configured))
    assert shipped.built_tools is None  # another process builds its tools from the options
    other = shipped.build(model=ScriptedModel(["ok"]), session_state={"items": ["tea"]})
    assert other.instructions == "Be brief. The list: {items}." and other.max_tool_iterations == 2
    assert other.session_state == {"items": ["tea"]}
    assert other.observe("hi").system_prompt.endswith("The list: ['tea'].")


def test_fork_and_a_team_fork_build_from_the_definition() -> None:
    agent = shop()
    agent.run("add milk")
    fork = agent.fork("shop_b")
    assert fork.definition.options == agent.definition.options
    assert fork.session_state == {"items": ["milk"]} and len(fork.history) == 1
    fork.reset()
    assert fork.session_state == {"items": []}  # its initial state came with the definition

    from agentnb import Team

    member = Agent("helper", ScriptedModel(["done"]))
    team = Team(
        "crew",
        ScriptedModel([tool_call("delegate_task_to_member", member_id="helper", task="x"), "ok"]),
        members=[member],
    )
    team.run("go")
    forked = team.fork("crew_b")
    assert type(forked) is Team and forked.definition.cls is Team
    assert [m.name for m in forked.members] == ["helper"] and forked.members[0] is not member
    assert len(forked.members[0].history) == 1 and forked.history[-1].children[0].agent == "helper"
