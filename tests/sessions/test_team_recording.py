"""A team's recording with the real openai client: each member replays by its own turns and
calls, so parallel members replay the same whichever finished first."""

from __future__ import annotations

from openai_server import OpenAIServer, Reply

from agentnb import Agent, Team
from agentnb.history.render import turn_text
from agentnb.models import OpenAIChat
from agentnb.sessions.recording import REPLAY_ENV


def build(lead: OpenAIServer, a: OpenAIServer, b: OpenAIServer) -> Team:
    def model(server: OpenAIServer) -> OpenAIChat:
        return OpenAIChat("tiny", base_url=server.url, stream=False)

    members = [
        Agent("alpha", model(a), instructions="Answer as alpha."),
        Agent("beta", model(b), instructions="Answer as beta."),
    ]
    return Team("team", members=members, model=model(lead), instructions="Ask both.")


def test_parallel_members_replay_from_the_recording_without_a_model_call(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as lead, OpenAIServer() as a, OpenAIServer() as b:
        lead.add(
            Reply(
                tool_calls=[
                    ("delegate_task_to_member", {"member_id": "alpha", "task": "one"}),
                    ("delegate_task_to_member", {"member_id": "beta", "task": "two"}),
                ]
            ),
            Reply(text="Both answered."),
        )
        a.add(Reply(text="alpha says one", delay=0.05, usage=(30, 5)))
        b.add(Reply(text="beta says two", usage=(40, 6)))
        team = build(lead, a, b)
        team.attach_recording(tmp_path, "nb")
        team.run("go")
        recorded = turn_text(team.history[-1])
        assert "tokens 35 own / 35 total" in recorded and "tokens 46 own / 46 total" in recorded
        assert len(a.requests) == len(b.requests) == 1

    monkeypatch.setenv(REPLAY_ENV, "strict")  # a request that is not in the recording would fail
    with OpenAIServer() as lead, OpenAIServer() as a, OpenAIServer() as b:
        again = build(lead, a, b)
        again.attach_recording(tmp_path, "nb")
        again.run("go")
        assert (len(lead.requests), len(a.requests), len(b.requests)) == (0, 0, 0)
        assert turn_text(again.history[-1]) == recorded
        assert again.members[0].history[-1].replayed and again.members[1].history[-1].replayed
