"""A member's call that waits for a person pauses the whole team turn; deciding it goes on with the
member, then the leader — in this process, or in another from the saved recording."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fresh_process import run_fresh

from agentnb import Agent, ScriptedModel, Team, tool, tool_call


def last_tool_result(request) -> str:
    return next(m["content"] for m in reversed(request.messages) if m["role"] == "tool")


def billing_team(member_state: str = "copy", calls: list[str] | None = None) -> Team:
    done = calls if calls is not None else []

    @tool(requires_approval=True)
    def refund(order: str, session_state) -> str:
        """Refund an order."""
        done.append(f"refund {order}")
        session_state.setdefault("refunded", []).append(order)
        return f"refunded {order}"

    def note(text: str, session_state) -> str:
        """Keep a note."""
        session_state.setdefault("notes", []).append(text)
        return "noted"

    billing = Agent(
        "billing",
        ScriptedModel(
            [
                [tool_call("note", text="asked for A1"), tool_call("refund", order="A1")],
                lambda r: "billing: " + last_tool_result(r),
            ]
        ),
        tools=[refund, note],
    )
    return Team(
        "support",
        members=[billing],
        model=ScriptedModel(
            [
                tool_call("delegate_task_to_member", member_id="billing", task="refund A1"),
                lambda r: "team: " + last_tool_result(r),
            ]
        ),
        session_state={"refunded": [], "notes": []},
        member_state=member_state,
    )


@pytest.mark.parametrize("member_state", ["copy", "live"])
def test_a_members_pending_call_pauses_the_team_and_approving_it_resumes_member_then_leader(member_state):
    calls: list[str] = []
    team = billing_team(member_state, calls)
    billing = team.member("billing")
    result = team.run("refund order A1")
    assert result.status == "paused" and calls == []
    (item,) = result.pending
    assert (item.kind, item.tool, item.path, item.arguments) == (
        "approval",
        "refund",
        ("support", "billing"),
        {"order": "A1"},
    )
    assert billing.history[-1].status == "paused" and result.turn.children == [billing.history[-1]]
    paused = result.events[-1]
    assert paused.kind == "run_paused" and paused.items == (item.call,)
    assert result.tool_calls == []  # the delegation has no result yet
    # The member's note before the pause: in the team's state only when it runs on it (live).
    assert team.session_state["notes"] == (["asked for A1"] if member_state == "live" else [])

    item.approve()
    done = team.continue_run()
    assert (done.status, done.content) == ("ok", "team: billing: refunded A1")
    assert calls == ["refund A1"]
    assert team.session_state == {"refunded": ["A1"], "notes": ["asked for A1"]}
    assert (len(team.history), len(billing.history)) == (1, 1)
    member_turn = billing.history[0]
    assert member_turn.status == "ok" and done.turn.children == [member_turn]
    assert [e.kind for e in member_turn.events].count("run_resumed") == 1
    (delegated,) = done.tool_calls
    assert delegated.child_run_id == member_turn.run_id and delegated.result == "billing: refunded A1"
    authors = {(row.path, row.author) for row in team.history.changes().itertuples()}
    assert ("support/billing", "tool:refund") in authors
    assert done.turn.usage_total == done.usage + member_turn.usage_total


def test_a_rejected_member_call_is_worked_around_and_a_new_team_turn_abandons_the_pause():
    calls: list[str] = []
    team = billing_team(calls=calls)
    team.run("refund").pending[0].reject("refunds need a manager")
    done = team.continue_run()
    assert done.content == "team: billing: Rejected by the person: refunds need a manager"
    assert calls == [] and team.session_state["refunded"] == []

    again = billing_team()
    paused = again.run("refund")
    again.model = ScriptedModel(["hello"])
    assert again.run("hi").content == "hello"
    assert [r.status for r in paused.turn.walk()] == ["failed", "failed"]


def test_broadcast_goes_on_without_running_the_members_that_finished():
    ran: list[str] = []

    @tool(requires_approval=True)
    def ship(item: str) -> str:
        ran.append(f"ship {item}")
        return f"shipped {item}"

    def count(item: str) -> str:
        ran.append(f"count {item}")
        return "3 left"

    shipping = Agent(
        "shipping",
        ScriptedModel([tool_call("ship", item="box"), lambda r: last_tool_result(r)]),
        tools=[ship],
    )
    stock = Agent(
        "stock", ScriptedModel([tool_call("count", item="box"), lambda r: last_tool_result(r)]), tools=[count]
    )
    team = Team(
        "shop",
        members=[shipping, stock],
        mode="broadcast",
        model=ScriptedModel(
            [tool_call("delegate_task_to_members", task="box"), lambda r: last_tool_result(r)]
        ),
    )
    result = team.run("send a box")
    assert [i.path for i in result.pending] == [("shop", "shipping")]
    assert ran == ["count box"]
    result.pending[0].approve()
    done = team.continue_run()
    assert ran == ["count box", "ship box"]  # the stock member did not run again
    assert done.content == "Agent shipping: shipped box\n\nAgent stock: 3 left"
    assert (len(shipping.history), len(stock.history)) == (1, 1)
    assert [c.agent for c in done.turn.children] == ["shipping", "stock"]


TEAM = textwrap.dedent(
    """
    import json
    from agentnb import Agent, ScriptedModel, Team, tool, tool_call
    from agentnb.sessions import JSONSession, SQLiteSession

    @tool(requires_approval=True)
    def refund(order: str, session_state) -> str:
        session_state.setdefault("refunded", []).append(order)
        return f"refunded {order}"

    def last(request):
        return next(m["content"] for m in reversed(request.messages) if m["role"] == "tool")

    def answer(first):
        def reply(request):
            return "done: " + last(request) if request.messages[-1]["role"] == "tool" else first
        return reply

    def build(where, saved=False):
        billing = Agent("billing", ScriptedModel(answer(tool_call("refund", order="A1", id="r1"))), tools=[refund])
        session = SQLiteSession(where) if where.endswith(".db") else JSONSession(where)
        team = Team("support", members=[billing], session_state={"refunded": []}, model=ScriptedModel(
            answer(tool_call("delegate_task_to_member", member_id="billing", task="refund A1", id="d1"))),
            session=session if saved else None)
        if not saved:
            team.attach_recording(session, "nb", mode="auto")
        return team
    """
)


def in_new_process(tmp_path: Path, code: str) -> dict:
    return run_fresh(tmp_path, "team_module", TEAM, code)


@pytest.mark.parametrize("where", ["rec", "rec.db"])
def test_a_team_paused_on_a_member_goes_on_in_a_new_process(tmp_path, where):
    first = in_new_process(
        tmp_path,
        f"""
        team = build({where!r})
        result = team.run("refund A1")
        print(json.dumps({{"status": result.status, "items": [[i.id, list(i.path)] for i in result.pending]}}))
        """,
    )
    assert first["status"] == "paused" and [p for _, p in first["items"]] == [["support", "billing"]]
    second = in_new_process(
        tmp_path,
        f"""
        team = build({where!r})
        taken = team.resume()  # take over the recording: the paused turn comes back with it
        items = [[i.id, list(i.path)] for i in team.pending]
        team.pending[0].approve()
        result = team.continue_run()
        print(json.dumps({{"taken": taken, "items": items, "status": result.status, "content": result.content,
                           "state": team.session_state, "member": [t.status for t in team.members[0].history]}}))
        """,
    )
    assert second["items"] == first["items"]
    assert (second["taken"], second["status"], second["content"]) == (1, "ok", "done: done: refunded A1")
    assert second["state"] == {"refunded": ["A1"]} and second["member"] == ["ok"]
    third = in_new_process(
        tmp_path,
        f"""
        team = build({where!r})
        team.resume()
        turn = team.history[0]
        print(json.dumps({{"team": turn.status, "children": [c.status for c in turn.children],
                           "content": turn.content, "paused": team.is_paused}}))
        """,
    )
    assert third == {"team": "ok", "children": ["ok"], "content": "done: done: refunded A1", "paused": False}


@pytest.mark.parametrize("where", ["saved", "saved.db"])
def test_a_team_saved_with_session_goes_on_in_a_new_process(tmp_path, where):
    first = in_new_process(
        tmp_path,
        f"""
        team = build({where!r}, saved=True)
        result = team.run("refund A1")
        print(json.dumps({{"status": result.status, "items": [[i.id, list(i.path)] for i in result.pending]}}))
        """,
    )
    assert first["status"] == "paused"
    second = in_new_process(
        tmp_path,
        f"""
        team = build({where!r}, saved=True)  # restores the team and its member from the session
        items = [[i.id, list(i.path)] for i in team.pending]
        team.pending[0].approve()
        result = team.continue_run()
        print(json.dumps({{"items": items, "content": result.content, "state": team.session_state}}))
        """,
    )
    assert second == {
        "items": first["items"],
        "content": "done: done: refunded A1",
        "state": {"refunded": ["A1"]},
    }
