"""Hostile shapes of several agents: names the API refuses as tool names, chains of delegations
deeper than any stack."""

from __future__ import annotations

import re

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, ScriptedModel, Team, handoff, tool_call
from agentnb.errors import ConfigurationError
from agentnb.models import OpenAIChat

API_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""What the OpenAI API accepts as a tool name."""

PREFIX = "Quarterly revenue analyst for the EMEA region, " * 3


def long_named(tail: str, model=None) -> Agent:
    name = PREFIX + tail + " " + "x" * (200 - len(PREFIX) - len(tail) - 1)
    assert len(name) == 200
    return Agent(name, model=model or ScriptedModel([f"answer of {tail}"]))


def test_a_200_character_name_makes_tool_names_the_api_accepts_and_two_such_names_differ():
    first, second = long_named("north"), long_named("south")
    as_tools = [first.as_tool().name, second.as_tool().name]
    transfers = [h.tool_name for h in Agent("triage", handoffs=[first, second]).handoffs]
    for name in as_tools + transfers:
        assert API_TOOL_NAME.fullmatch(name), name
        assert len(name) == 64  # a readable start, then 8 hex digits of the whole name's hash
        assert re.fullmatch(r".*_[0-9a-f]{8}", name)
    assert as_tools[0].startswith("Quarterly_revenue_analyst_for_the_EMEA_region_")
    assert transfers[0].startswith("transfer_to_quarterly_revenue_analyst_for_the_emea_")
    # the names share their first 150 characters, and still make two tools
    assert as_tools[0] != as_tools[1] and transfers[0] != transfers[1]
    # the same name always makes the same tool name (a recording replays by it)
    assert long_named("north").as_tool().name == as_tools[0]
    assert Agent("again", handoffs=[long_named("north")]).handoffs[0].tool_name == transfers[0]
    # names that fit are left as they were
    assert Agent("billing").as_tool().name == "billing"
    assert (
        Agent("triage", handoffs=[Agent("Billing Agent")]).handoffs[0].tool_name
        == "transfer_to_billing_agent"
    )


def test_an_agent_with_long_named_members_runs_against_the_api():
    with OpenAIServer() as server:
        north = long_named("north", ScriptedModel(["north says 12"]))
        south = long_named("south")
        lead = Agent(
            "lead",
            model=OpenAIChat("gpt-test", base_url=server.url, max_retries=0, api_key="sk-test"),
            tools=[north.as_tool(), south.as_tool()],
            handoffs=[long_named("east")],
        )
        name = north.as_tool().name
        server.add(Reply(tool_calls=[(name, {"task": "revenue?"})]), Reply(text="12, says north"))
        result = lead.run("revenue in the north?")
        assert server.problems == []
        assert result.content == "12, says north"
        assert lead.history[-1].tool_calls[0].result == "north says 12"
        sent = [t["function"]["name"] for t in server.requests[0].body["tools"]]
        assert len(sent) == 3 and all(API_TOOL_NAME.fullmatch(n) for n in sent)


def test_an_explicit_tool_name_the_api_would_refuse_is_refused_at_definition():
    agent = Agent("billing")
    with pytest.raises(ConfigurationError) as info:
        agent.as_tool(name="b" * 65)
    assert str(info.value) == (
        f"the tool name {'b' * 60!r}… (65 characters) (as_tool(name=...)) cannot be used: a tool name is 1 to 64 "
        "letters, digits, underscores and hyphens (the OpenAI API refuses anything else); give a shorter name"
    )
    with pytest.raises(ConfigurationError, match=r"\(handoff\(tool_name_override=\.\.\.\)\) cannot be used"):
        handoff(agent, tool_name_override="t" * 70)
    with pytest.raises(ConfigurationError, match=r"the tool name 'to billing' \(handoff"):
        handoff(agent, tool_name_override="to billing")
    assert handoff(agent, tool_name_override="t" * 64).tool_name == "t" * 64


# -- deep chains ----------------------------------------------------------------------------------


def chain(length: int, **options) -> list[Agent]:
    """a0 -> a1 -> ... each asking the next (as a tool) once, then answering."""
    agents: list[Agent] = []
    below = None
    for i in reversed(range(length)):
        script = ([tool_call(f"a{i + 1}", task="go on")] if below else []) + [f"answer {i}"]
        below = Agent(
            f"a{i}", model=ScriptedModel(script), tools=[below.as_tool()] if below else [], **options
        )
        agents.insert(0, below)
    return agents


def statuses(agents: list[Agent]) -> dict[str, int]:
    out: dict[str, int] = {}
    for agent in agents:
        for turn in agent.history:
            out[turn.status] = out.get(turn.status, 0) + 1
    return out


def test_a_chain_deeper_than_the_limit_stops_at_it_with_a_clear_error():
    agents = chain(80)
    assert agents[0].run("start").content == "answer 0"
    # runs at depths 0 to 16 ran; the delegation to depth 17 was refused, as a tool error
    assert statuses(agents) == {"ok": 17}
    (call,) = agents[16].history[-1].tool_calls
    assert call.error_kind == "tool_error" and call.error.startswith(
        "delegating to 'a17' would start a run 17 delegations deep (a0 ▸ a1 ▸ … ▸ a16 ▸ a17), past "
        "max_delegation_depth=16 (the smallest set on the agents of this chain); answer without delegating "
        "further, or raise max_delegation_depth on the agents of the chain"
    )
    assert [len(a.history) for a in agents[16:19]] == [1, 0, 0]


def test_a_limit_set_above_bounds_the_whole_tree_below():
    agents = chain(10)
    agents[0].max_delegation_depth = 3  # the others keep the default 16
    agents[0].run("start")
    assert [len(a.history) for a in agents[:5]] == [1, 1, 1, 1, 0]
    assert "max_delegation_depth=3" in agents[3].history[-1].tool_calls[0].error
    # a smaller limit set lower down wins below it
    agents = chain(10)
    agents[2].max_delegation_depth = 4
    agents[0].run("start")
    assert [len(a.history) for a in agents[:7]] == [1, 1, 1, 1, 1, 0, 0]
    with pytest.raises(ConfigurationError, match="max_delegation_depth must be a whole number >= 0"):
        Agent("x", max_delegation_depth=-1)


def test_teams_take_the_limit_too():
    def nest(depth: int) -> Agent:
        if depth == 0:
            return Agent("leaf", model=ScriptedModel(["leaf answer"]))
        member = nest(depth - 1)
        script = [
            tool_call("delegate_task_to_member", member_id=member.name, task="go"),
            f"team {depth} answer",
        ]
        return Team(f"team{depth}", members=[member], model=ScriptedModel(script))

    top = nest(4)
    top.max_delegation_depth = 2
    assert top.run("go").content == "team 4 answer"
    assert [t.path for t in top.history[-1].walk()] == [
        ("team4",),
        ("team4", "team3"),
        ("team4", "team3", "team2"),
    ]
    assert "max_delegation_depth=2" in top.history[-1].walk()[-1].tool_calls[0].error


def test_past_the_stack_no_run_is_left_running_and_every_turn_reaches_the_session(tmp_path):
    from agentnb.sessions import JSONSession

    agents = chain(120, max_delegation_depth=1_000)
    session = JSONSession(tmp_path)
    assert agents[0].run("start").content == "answer 0"
    found = statuses(agents)
    assert "running" not in found and found.get("failed", 0) >= 1
    failed = [a for a in agents if len(a.history) and a.history[-1].status == "failed"]
    assert all("recursion" in a.history[-1].error for a in failed)
    # the failed member's turn is finished: it saves, and the member runs again
    deepest = failed[-1]
    assert deepest.history.finished_count() == len(deepest.history) == 1
    session.save_session_state_sync("deep", agent=deepest)
    restored = Agent(deepest.name)
    session.load_session_state_sync("deep", agent=restored)
    assert [t.status for t in restored.history] == ["failed"]


def test_a_run_whose_events_stop_being_read_ends_failed_not_running():
    agent = Agent("a", model=ScriptedModel(["one", "two"]))
    stream = iter(agent.iter_run("first"))
    next(stream)  # RunStarted, then the reader goes away
    stream.close()
    assert agent.history[-1].status == "failed"
    assert agent.history[-1].error == "agent 'a' stopped mid-run (GeneratorExit)"
    assert [e.kind for e in agent.history[-1].events][-1] == "run_failed"
    assert agent.run("again").content == "one" and agent.history.finished_count() == 2
