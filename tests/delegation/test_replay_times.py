"""A turn replayed from a recording shows the times it was recorded with in every run of its
tree — the leader's and those of the agents it delegated to (team members, agents as tools,
handoffs) — never recorded times for some runs and times measured now for others."""

from __future__ import annotations

from typing import Any

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, ScriptedModel, Team, tool, tool_call
from agentnb.errors import ConfigurationError
from agentnb.history.render import turn_text
from agentnb.models import OpenAIChat
from agentnb.sessions.recording import REPLAY_ENV


def times(turn: Any) -> list[tuple[Any, ...]]:
    """Every time a turn's tree shows: each run's start and duration, each event's."""
    out: list[tuple[Any, ...]] = []
    for run in turn.walk():
        out.append((run.agent, run.started_at, run.duration_ms, run.usage))
        out.extend(
            (run.agent, e.kind, getattr(e, "at", None), getattr(e, "duration_ms", None)) for e in run.events
        )
        out.extend((run.agent, "decided", d.at) for e in run.events for d in getattr(e, "decisions", ()))
    return out


def chat(url: str) -> OpenAIChat:
    return OpenAIChat("tiny", base_url=url, stream=False)


def desk(lead: str, helper: str, billing: str) -> Agent:
    """An agent that asks a helper (an agent as a tool) and hands off to billing; neither of
    them is recorded on its own (as ``%%agent ... --no-session``)."""
    helping = Agent("helper", chat(helper), instructions="Look things up.")
    paying = Agent("billing", chat(billing), instructions="Handle invoices.")
    return Agent("desk", chat(lead), tools=[helping.as_tool()], handoffs=[paying])


def script(lead: OpenAIServer, helper: OpenAIServer, billing: OpenAIServer) -> None:
    lead.add(
        Reply(tool_calls=[("helper", {"task": "find the invoice"})]),
        Reply(tool_calls=[("transfer_to_billing", {})]),
    )
    helper.add(Reply(text="Invoice 7 is open.", delay=0.05, usage=(30, 4)))
    billing.add(Reply(text="Invoice 7: 12 EUR.", delay=0.02, usage=(50, 6)))


def test_an_agents_delegates_replay_with_their_recorded_times(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as lead, OpenAIServer() as helper, OpenAIServer() as billing:
        script(lead, helper, billing)
        recorded = desk(lead.url, helper.url, billing.url)
        recorded.attach_recording(tmp_path, "nb")
        recorded.run("What do I owe?")
        urls = lead.url, helper.url, billing.url
    turn = recorded.history[-1]
    assert [r.agent for r in turn.walk()] == ["desk", "helper", "billing"]

    monkeypatch.setenv(REPLAY_ENV, "strict")  # no server is left: a model call would fail the turn
    again = desk(*urls)
    again.attach_recording(tmp_path, "nb")
    result = again.run("What do I owe?")
    assert result.status == "ok" and result.content == "Invoice 7: 12 EUR."
    replayed = again.history[-1]
    assert [r.replayed for r in replayed.walk()] == [True, True, True]
    assert times(replayed) == times(turn)
    assert turn_text(replayed) == turn_text(turn)


def test_a_teams_members_replay_with_their_recorded_times(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def team() -> Team:
        def member(name: str) -> Agent:
            return Agent(name, ScriptedModel(lambda request: f"{name} done"))

        lead = ScriptedModel(
            [
                [tool_call("delegate_task_to_member", member_id=n, task="go") for n in ("a", "b")],
                "both done",
            ]
        )
        return Team("crew", members=[member("a"), member("b")], model=lead)

    recorded = team()
    recorded.attach_recording(tmp_path, "nb")
    recorded.run("go")
    monkeypatch.setenv(REPLAY_ENV, "strict")
    again = team()
    again.attach_recording(tmp_path, "nb")
    again.run("go")
    assert times(again.history[-1]) == times(recorded.history[-1])


def test_a_handoff_between_scripted_agents_replays_with_its_recorded_times(tmp_path, monkeypatch):
    """As in a notebook: ``%%agent billing --no-session``, then ``%%agent triage --handoffs billing``."""
    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def triage() -> Agent:
        billing = Agent("billing", ScriptedModel(["Your invoice is 12 EUR.", "Thanks, it is paid."]))
        return Agent("triage", ScriptedModel([tool_call("transfer_to_billing")]), handoffs=[billing])

    recorded = triage()
    recorded.attach_recording(tmp_path, "nb")
    recorded.run("How much do I owe?")
    recorded.run("I paid it.")  # billing is in charge: it answers as triage's child run
    monkeypatch.setenv(REPLAY_ENV, "strict")
    again = triage()
    again.attach_recording(tmp_path, "nb")
    again.run("How much do I owe?")
    again.run("I paid it.")
    assert [times(t) for t in again.history] == [times(t) for t in recorded.history]


def test_resume_takes_over_the_delegates_runs(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def triage() -> Agent:
        billing = Agent("billing", ScriptedModel(["Your invoice is 12 EUR."]))
        return Agent("triage", ScriptedModel([tool_call("transfer_to_billing")]), handoffs=[billing])

    recorded = triage()
    recorded.attach_recording(tmp_path, "nb")
    recorded.run("How much do I owe?")

    again = triage()
    again.attach_recording(tmp_path, "nb")
    assert again.resume() == 1
    billing = again.handoffs[0].agent
    assert [t.content for t in billing.history] == ["Your invoice is 12 EUR."]
    assert [c.agent for c in again.history[-1].children] == ["billing"]
    assert again.in_charge is billing
    assert times(again.history[-1]) == times(recorded.history[-1])


def test_a_delegate_recorded_by_another_agent_keeps_its_recording(tmp_path, monkeypatch):
    """A fork shares its parent's delegates: they stay recorded with the parent."""
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    billing = Agent("billing", ScriptedModel(["12 EUR.", "Paid."]))
    triage = Agent("triage", ScriptedModel([tool_call("transfer_to_billing")]), handoffs=[billing])
    triage.attach_recording(tmp_path, "nb")
    triage.run("How much?")
    kept = billing.recording
    assert kept is not None and kept.module == "agent/billing"
    forked = triage.fork("triage_copy")
    assert forked.recording is not None and billing.recording is kept


def test_two_delegates_of_one_name_cannot_be_recorded(tmp_path):
    first = Agent("helper", ScriptedModel(["a"]))
    second = Agent("helper", ScriptedModel(["b"]))
    lead = Agent("lead", ScriptedModel(["x"]), tools=[first.as_tool(name="one")], handoffs=[second])
    with pytest.raises(
        ConfigurationError, match=r"agent 'lead' delegates to two agents named 'helper' \(agent/helper\)"
    ):
        lead.attach_recording(tmp_path, "nb")
    assert lead.recording is None and first.recording is None and second.recording is None


def test_a_paused_member_replays_with_its_recorded_times_and_decision(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def team() -> Team:
        @tool(requires_approval=True)
        def refund(order: str) -> str:
            """Refund an order."""
            return f"refunded {order}"

        def answer(request: Any) -> Any:
            return "billing: done" if request.tool_results() else tool_call("refund", order="A1")

        billing = Agent("billing", ScriptedModel(answer), tools=[refund])
        lead = ScriptedModel(
            lambda r: (
                "team: done"
                if r.tool_results()
                else tool_call("delegate_task_to_member", member_id="billing", task="refund A1")
            )
        )
        return Team("support", members=[billing], model=lead)

    recorded = team()
    recorded.attach_recording(tmp_path, "nb")
    recorded.run("refund A1")
    recorded.pending[0].approve()
    recorded.continue_run()
    monkeypatch.setenv(REPLAY_ENV, "strict")
    again = team()
    again.attach_recording(tmp_path, "nb")
    again.run("refund A1")
    again.pending[0].approve()  # decided again, later than it was recorded
    again.continue_run()
    assert [r.status for r in again.history[-1].walk()] == ["ok", "ok"]
    assert times(again.history[-1]) == times(recorded.history[-1])


def test_a_turn_paused_twice_replays_each_pause_with_its_recorded_times(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def payer() -> Agent:
        @tool(requires_approval=True)
        def charge(amount: int) -> str:
            """Charge an amount."""
            return f"charged {amount}"

        def answer(request: Any) -> Any:
            done = len(request.tool_results())
            return tool_call("charge", amount=10 * (done + 1)) if done < 2 else "charged twice"

        return Agent("payer", ScriptedModel(answer), tools=[charge])

    recorded = payer()
    recorded.attach_recording(tmp_path, "nb")
    recorded.run("charge twice")
    for _ in range(2):
        recorded.pending[0].approve()
        recorded.continue_run()
    monkeypatch.setenv(REPLAY_ENV, "strict")
    again = payer()
    again.attach_recording(tmp_path, "nb")
    again.run("charge twice")
    for _ in range(2):
        again.pending[0].approve()
        again.continue_run()
    turn = again.history[-1]
    assert [e.kind for e in turn.events].count("run_paused") == 2 and turn.status == "ok"
    assert times(turn) == times(recorded.history[-1])
