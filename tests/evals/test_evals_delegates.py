"""Evaluating an agent that delegates (an agent as a tool, a handoff, a team's members): each case
runs on fresh copies of the whole tree, never the notebook's own agents, and its recording covers
the tree: a re-run replays every agent's model calls, so under strict replay and with no server
it gives the same results without a request."""

from __future__ import annotations

from typing import Any

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, ScriptedModel, Team, handoff, tool_call
from agentnb.errors import ConfigurationError
from agentnb.evals import Case, check, load_run
from agentnb.models import OpenAIChat
from agentnb.sessions.recording import REPLAY_ENV

NOWHERE = "http://127.0.0.1:9"
"""Where no server listens: a model call there fails."""


def desk(url: str) -> tuple[Agent, Agent]:
    chat = OpenAIChat("gpt-test", base_url=url, stream=False)
    helper = Agent("helper", chat, instructions="Look invoices up.")
    return Agent(
        "desk", chat, instructions="Answer with the helper's help.", tools=[helper.as_tool()]
    ), helper


CASES = [Case("What does invoice 7 say?", id="i7", expected="12"), Case("And 8?", id="i8", expected="30")]


def shown(run: Any) -> list[Any]:
    """What a run shows of each case: its answer, verdicts, times, and its helper's runs."""
    return [
        (
            row.case.id,
            row.status,
            row.answer,
            [(v.check, v.status) for v in row.verdicts],
            [(t.duration_ms, t.usage.input_tokens) for t in row.turns],
            [(c.agent, c.message, c.content, c.duration_ms) for t in row.turns for c in t.children],
        )
        for row in run.rows
    ]


def test_a_leader_and_its_helper_replay_under_strict_replay_with_no_server(tmp_path, monkeypatch, server):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    for number, total in (("7", "12"), ("8", "30")):
        server.add(
            Reply(tool_calls=[("helper", {"task": f"look up invoice {number}"})]),
            Reply(text=f"Invoice {number}: {total} EUR.", usage=(40, 5), delay=0.02),
            Reply(text=f"It says {total} EUR."),
        )
    lead, helper = desk(server.url)
    first = lead.evaluate(CASES, [check.answer_contains()], name="desk", folder=tmp_path, concurrency=1)
    assert len(server.requests) == 6 and not server.problems
    helper_asked = [r.body["messages"][-1]["content"] for r in server.requests[1::3]]
    assert helper_asked == ["look up invoice 7", "look up invoice 8"]
    assert [row.answer for row in first.rows] == ["It says 12 EUR.", "It says 30 EUR."]
    assert first.rate() == 1.0 and not any(row.replayed for row in first.rows)
    assert len(helper.history) == 0  # the notebook's helper ran nothing: each case had its own

    monkeypatch.setenv(REPLAY_ENV, "strict")  # a request would fail the case: nobody answers
    lead, helper = desk(NOWHERE)
    again = lead.evaluate(CASES, [check.answer_contains()], name="desk", folder=tmp_path, concurrency=2)
    assert len(server.requests) == 6  # nothing was asked of the server either
    assert [row.replayed for row in again.rows] == [True, True]
    assert shown(again) == shown(first)
    # The helper's run is there, with the times it was recorded with.
    assert [c[:3] for c in shown(again)[0][5]] == [("helper", "look up invoice 7", "Invoice 7: 12 EUR.")]

    # Read back from the store, each case still has its helper's runs.
    stored = load_run("desk", folder=tmp_path)
    assert [[c.content for t in row.turns for c in t.children] for row in stored.rows] == [
        ["Invoice 7: 12 EUR."],
        ["Invoice 8: 30 EUR."],
    ]


def test_a_helper_asked_differently_is_a_drift_that_names_it(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        server.add(
            Reply(tool_calls=[("helper", {"task": "look up invoice 7"})]),
            Reply(text="Invoice 7: 12 EUR."),
            Reply(text="It says 12 EUR."),
        )
        lead, _ = desk(server.url)
        lead.evaluate(CASES[:1], name="desk", folder=tmp_path)
    monkeypatch.setenv(REPLAY_ENV, "strict")
    lead, helper = desk(NOWHERE)
    helper.instructions = "Look invoices up, in French."
    run = lead.evaluate(CASES[:1], name="desk", folder=tmp_path)
    (row,) = run.rows
    assert row.status == "error" and not row.replayed
    assert (
        row.turns[0]
        .children[0]
        .error.startswith(
            "replay drift at delegate 'helper', turn 1, model call 1: the request differs from the recording"
        )
    )


def test_a_teams_cases_run_at_once_on_their_own_members(tmp_path):
    def member(name: str) -> Agent:
        return Agent(name, ScriptedModel(lambda request: f"{name}: {request.last_user_message}"))

    def lead(request: Any) -> Any:
        if request.tool_results():
            return f"done: {request.tool_results()[-1]['content']}"
        return tool_call("delegate_task_to_member", member_id="picker", task=request.last_user_message)

    picker, packer = member("picker"), member("packer")
    crew = Team("crew", members=[picker, packer], model=ScriptedModel(lead))
    cases = [Case(f"item {i}", id=f"c{i}") for i in range(6)]
    run = crew.evaluate(cases, name="crew", folder=tmp_path, concurrency=3)
    assert [row.status for row in run.rows] == ["ok"] * 6
    assert [row.answer for row in run.rows] == [f"done: picker: item {i}" for i in range(6)]
    # Each case had a picker of its own: one turn each, and the notebook's ran none.
    assert [len(row.delegates["picker"]) for row in run.rows] == [1] * 6
    assert [len(row.delegates["packer"]) for row in run.rows] == [0] * 6
    assert (len(picker.history), len(packer.history)) == (0, 0)


def test_a_handoff_back_goes_to_the_cases_own_agent(tmp_path):
    billing = Agent("billing", ScriptedModel([tool_call("transfer_to_triage")]))
    triage = Agent(
        "triage",
        ScriptedModel([tool_call("transfer_to_billing"), "Back at triage."]),
        handoffs=[billing],
    )
    billing.handoffs = [handoff(triage)]  # billing hands back to triage
    run = triage.evaluate([Case("Help", id="h")], name="loop", folder=tmp_path)
    (row,) = run.rows
    assert row.status == "ok"
    assert set(row.delegates) == {"billing"}
    assert (len(triage.history), len(billing.history)) == (0, 0)


def test_an_agent_that_delegates_is_evaluated_in_this_process(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    lead, _ = desk(NOWHERE)
    with (
        ThreadPoolExecutor(1) as pool,
        pytest.raises(
            ConfigurationError,
            match=r"agent 'desk' delegates to other agents \(helper\): its cases run in this process",
        ),
    ):
        lead.evaluate(CASES, name="desk", folder=tmp_path, executor=pool)


def test_strict_replay_does_not_let_a_helper_ask_past_the_recorded_run(tmp_path, monkeypatch):
    """The leader's model is Python (it answers live): edited to ask the helper, which the
    recorded run never asked, strict replay refuses the helper's model call."""
    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def lead(script: list[Any]) -> Agent:
        helper = Agent("helper", OpenAIChat("gpt-test", base_url=NOWHERE, stream=False))
        return Agent("desk", ScriptedModel(script), tools=[helper.as_tool()])

    assert lead(["I know this one."]).evaluate(CASES[:1], name="desk", folder=tmp_path).rows[0].status == "ok"
    monkeypatch.setenv(REPLAY_ENV, "strict")
    run = lead([tool_call("helper", task="look it up"), "Asked."]).evaluate(
        CASES[:1], name="desk", folder=tmp_path
    )
    (child,) = run.rows[0].turns[0].children
    assert child.status == "failed" and child.error.startswith(
        "delegate 'helper', turn 1 is past the end of the recorded run (it holds 0 turn(s)); strict replay "
        "(AGENTNB_REPLAY=strict) does not call openai:gpt-test"
    )
