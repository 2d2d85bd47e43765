"""A paused turn is saved with the session (JSON and SQLite) and goes on in another process."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fresh_process import run_fresh

from agentnb import Agent, ScriptedModel, tool, tool_call
from agentnb.sessions import JSONSession, SQLiteSession

PAYMENTS = textwrap.dedent(
    '''
    import json, sys
    from agentnb import Agent, ScriptedModel, tool, tool_call
    from agentnb.sessions import JSONSession, SQLiteSession

    @tool(requires_approval=True)
    def charge(customer: str, amount: int, session_state) -> str:
        """Charge a customer."""
        session_state.setdefault("charged", {})[customer] = amount
        return f"charged {customer} {amount}"

    def build(where: str) -> Agent:
        session = SQLiteSession(where) if where.endswith(".db") else JSONSession(where)
        def answer(request):  # as a model would: from what the request holds
            last = request.messages[-1]
            if last["role"] == "tool":
                return "done: " + last["content"]
            return tool_call("charge", customer="bob", amount=50, id="call_1")

        model = ScriptedModel(answer)
        return Agent("payer", model, tools=[charge], session=session, session_state={"charged": {}})

    def items(agent):
        return [[i.id, i.kind, i.tool, i.arguments, list(i.path), i.reason] for i in agent.pending]
    '''
)


def run_in_new_process(tmp_path: Path, code: str) -> dict:
    """``code`` in a fresh interpreter (a kernel restart), printing one JSON object."""
    return run_fresh(tmp_path, "payments", PAYMENTS, code)


@pytest.mark.parametrize("where", ["sessions", "sessions.db"])
def test_a_paused_turn_goes_on_in_a_new_process_from_the_saved_session(tmp_path, where):
    first = run_in_new_process(
        tmp_path,
        f"""
        agent = build({where!r})
        result = agent.run("charge bob 50")
        print(json.dumps({{"status": result.status, "items": items(agent), "state": agent.session_state}}))
        """,
    )
    assert first["status"] == "paused" and first["state"] == {"charged": {}}
    ((item_id, kind, name, arguments, path, reason),) = first["items"]
    assert (kind, name, arguments, path, reason) == (
        "approval",
        "charge",
        {"customer": "bob", "amount": 50},
        ["payer"],
        "charge requires approval",
    )
    second = run_in_new_process(
        tmp_path,
        f"""
        agent = build({where!r})
        before = items(agent)
        agent.pending[0].approve(arguments={{"customer": "bob", "amount": 40}})
        result = agent.continue_run()
        print(json.dumps({{
            "before": before, "status": result.status, "content": result.content,
            "state": agent.session_state, "turns": len(agent.history),
            "kinds": [e.kind for e in result.events],
        }}))
        """,
    )
    assert second["before"] == first["items"]  # the same items, the same ids
    assert (second["status"], second["content"], second["state"], second["turns"]) == (
        "ok",
        "done: charged bob 40",
        {"charged": {"bob": 40}},
        1,
    )
    kinds = second["kinds"]
    assert kinds.count("run_started") == 1 and kinds.index("run_paused") < kinds.index("run_resumed")
    # What the second process saved: one finished turn, the person's decision in it.
    session = SQLiteSession(tmp_path / where) if where.endswith(".db") else JSONSession(tmp_path / where)
    again = Agent("payer", ScriptedModel([]), session=session)
    (turn,) = again.history
    assert (turn.status, turn.pause, turn.content) == ("ok", None, "done: charged bob 40")
    (resumed,) = [e for e in turn.events if e.kind == "run_resumed"]
    assert [(d.id, d.verdict, d.arguments) for d in resumed.decisions] == [
        (item_id, "edited", {"customer": "bob", "amount": 40})
    ]
    assert again.session_state == {"charged": {"bob": 40}} and not again.is_paused


@pytest.mark.parametrize("backend", ["json", "sqlite"])
def test_a_paused_turn_is_saved_again_when_it_goes_on_or_is_abandoned(tmp_path, backend):
    @tool(requires_approval=True)
    def charge(amount: int) -> str:
        return f"charged {amount}"

    def session():
        return SQLiteSession(tmp_path / "s.db") if backend == "sqlite" else JSONSession(tmp_path)

    steps = [tool_call("charge", amount=1), "one", tool_call("charge", amount=2), "hello"]
    agent = Agent("a", ScriptedModel(steps), tools=[charge], session=session())
    agent.run("first").pending[0].approve()
    agent.continue_run()
    agent.run("second")  # paused, saved paused
    assert [t.status for t in Agent("a", ScriptedModel([]), session=session()).history] == ["ok", "paused"]
    agent.run("third")  # abandons the second
    loaded = Agent("a", ScriptedModel([]), session=session())
    assert [(t.status, t.error) for t in loaded.history] == [
        ("ok", None),
        ("failed", "abandoned: a new turn started before this paused one was continued"),
        ("ok", None),
    ]
    assert [t.content for t in loaded.history] == ["one", None, "hello"]
