"""Hostile shapes of several agents: names the API refuses as tool names, chains of delegations
deeper than any stack."""

from __future__ import annotations

import re

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, ScriptedModel, handoff
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
