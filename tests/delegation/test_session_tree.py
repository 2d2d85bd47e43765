"""A session saved after every turn (``session=``, ``db=``, ``attach_session``) holds an agent's
whole delegation tree, as a recording does: its agents as tools and handoff targets (a team's
members too), each a module of the session, restored all or nothing. After a handoff, a new
process takes the conversation up where it was: the agent handed to still answers, and with its
own earlier turns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, ScriptedModel, Team, tool_call
from agentnb.errors import SessionFormatError
from agentnb.sessions import JSONSession, SQLiteSession

SCRIPT = r"""
import json, sys
from agentnb import Agent, ScriptedModel, Team, tool_call
from agentnb.sessions import JSONSession, SQLiteSession

kind, where, message = sys.argv[1:]
seen = []

def billing_model(request):
    seen.append([(m["role"], m.get("content")) for m in request.messages])
    return f"billing answer {len(seen)} to {message}"

def helper_model(request):
    return "invoice 7 is open"

helper = Agent("helper", ScriptedModel(helper_model))
billing = Agent("billing", ScriptedModel(billing_model), add_history_to_context=True)
desk = Agent(
    "desk",
    ScriptedModel([tool_call("helper", task="find the invoice"), tool_call("transfer_to_billing")]),
    tools=[helper.as_tool()],
    handoffs=[billing],
    session=JSONSession(where) if kind == "json" else SQLiteSession(where),
)
restored = {"in_charge": desk.in_charge.name if desk.in_charge else None,
            "turns": {a.name: len(a.history) for a in (desk, helper, billing)}}
answer = desk.run(message).content
print(json.dumps({"restored": restored, "answer": answer, "billing_saw": seen,
                  "in_charge": desk.in_charge.name if desk.in_charge else None}))
"""


def in_a_new_process(kind: str, where: Path, message: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, kind, str(where), message],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_after_a_handoff_a_new_process_goes_on_with_the_agent_handed_to(tmp_path, kind):
    where = tmp_path / ("sessions" if kind == "json" else "sessions.db")
    first = in_a_new_process(kind, where, "What do I owe?")
    assert first["restored"] == {"in_charge": None, "turns": {"desk": 0, "helper": 0, "billing": 0}}
    assert (first["answer"], first["in_charge"]) == ("billing answer 1 to What do I owe?", "billing")

    second = in_a_new_process(kind, where, "Can I pay tomorrow?")
    # The whole tree came back: who is in charge, and each agent's own turns.
    assert second["restored"] == {"in_charge": "billing", "turns": {"desk": 1, "helper": 1, "billing": 1}}
    assert second["answer"] == "billing answer 1 to Can I pay tomorrow?"  # billing answers, not desk
    (saw,) = second["billing_saw"]
    # Billing sees its own earlier turn (the handoff it answered) before the new message.
    assert ["assistant", "billing answer 1 to What do I owe?"] in saw
    assert saw[-1] == ["user", "Can I pay tomorrow?"]

    session = JSONSession(where) if kind == "json" else SQLiteSession(where)
    saved = session.read_modules("desk")
    assert saved is not None and set(saved.modules) == {"agent", "agent/helper", "agent/billing"}


def desk(session: Any = None, word: str = "milk") -> tuple[Agent, Agent, Agent]:
    helper = Agent("helper", ScriptedModel(lambda request: f"found {word}"))
    billing = Agent("billing", ScriptedModel(lambda request: f"billed {word}"))
    lead = Agent(
        "desk",
        ScriptedModel([tool_call("helper", task=f"find {word}"), tool_call("transfer_to_billing")]),
        tools=[helper.as_tool()],
        handoffs=[billing],
        session=session,
    )
    return lead, helper, billing


def test_a_damaged_delegate_loads_nothing_of_the_tree(tmp_path):
    lead, _, _ = desk(JSONSession(tmp_path))
    lead.run("go")
    log = tmp_path / "desk.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    for line in lines:
        if line["module"] == "agent/billing" and line["op"] == "replace":
            line["state"]["history"] = 5
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))

    other, helper, billing = desk(word="eggs")
    other.run("go")  # something of its own, to keep
    before = [(a.in_charge, len(a.history), list(a.state.messages)) for a in (other, helper, billing)]
    with pytest.raises(SessionFormatError) as caught:
        other.attach_session(JSONSession(tmp_path), "desk")
    assert [(a.in_charge, len(a.history), list(a.state.messages)) for a in (other, helper, billing)] == before
    assert str(caught.value).startswith(
        f"agent 'desk': delegate 'billing' cannot be loaded from {log} (module 'agent/billing'): "
        "a history must be an object, got int; nothing was loaded: the agent and every delegate keep "
        "their state"
    )
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    other.run("again")  # not attached either: its turns are not saved there
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files


def test_a_delegate_with_a_session_of_its_own_is_saved_with_the_agent_it_serves(tmp_path):
    helper = Agent("helper", ScriptedModel(lambda request: "found"), session=JSONSession(tmp_path / "own"))
    lead = Agent(
        "desk",
        ScriptedModel([tool_call("helper", task="find"), "done", "more"]),
        tools=[helper.as_tool()],
        session=JSONSession(tmp_path / "tree"),
    )
    lead.run("go")
    assert not (tmp_path / "own" / "helper.jsonl").exists()  # its own session no longer written
    saved = JSONSession(tmp_path / "tree").read_modules("desk")
    assert saved is not None and set(saved.modules) == {"agent", "agent/helper"}
    lead.detach_session()
    files = {p: p.read_bytes() for p in tmp_path.rglob("*.json*")}
    lead.run("go on")
    helper.run("and you")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.json*")} == files  # neither is saved anywhere


def test_a_helper_shared_with_another_session_stays_saved_there(tmp_path):
    helper = Agent("helper", ScriptedModel(lambda request: "found"))
    first = Agent(
        "first",
        ScriptedModel([tool_call("helper", task="find"), "done"]),
        tools=[helper.as_tool()],
        session=JSONSession(tmp_path / "one"),
    )
    second = Agent(
        "second",
        ScriptedModel([tool_call("helper", task="find"), "done"]),
        tools=[helper.as_tool()],
        session=JSONSession(tmp_path / "two"),
    )
    first.run("go")
    second.run("go")
    assert set(JSONSession(tmp_path / "one").read_modules("first").modules) == {"agent", "agent/helper"}
    assert set(JSONSession(tmp_path / "two").read_modules("second").modules) == {"agent"}


def test_a_delegate_attached_to_a_session_of_its_own_since_is_saved_there_alone(tmp_path):
    helper = Agent("helper", ScriptedModel(lambda request: "found"))
    lead = Agent(
        "desk",
        ScriptedModel([tool_call("helper", task="find"), "done"] * 2),
        tools=[helper.as_tool()],
        session=JSONSession(tmp_path / "tree"),
    )
    lead.run("go")
    helper.attach_session(JSONSession(tmp_path / "own"))
    lead.run("again")
    tree = JSONSession(tmp_path / "tree")
    own = JSONSession(tmp_path / "own")
    assert len(read_agent(tree, "desk", "agent").history) == 2
    assert len(read_agent(tree, "desk", "agent/helper").history) == 1  # as it was when it left
    assert len(read_agent(own, "helper", "agent").history) == 2


def read_agent(session: Any, session_id: str, module: str) -> Agent:
    agent = Agent(module, ScriptedModel([]))
    session.load_session_state_sync(session_id, **{module: agent})
    return agent


def test_a_teams_session_holds_its_leaders_helpers_too(tmp_path):
    def build() -> tuple[Team, Agent]:
        helper = Agent("helper", ScriptedModel(lambda request: "checked"))
        picker = Agent("picker", ScriptedModel(lambda request: "picked"))
        leader = ScriptedModel(
            [
                tool_call("helper", task="check stock"),
                tool_call("delegate_task_to_member", member_id="picker", task="pick"),
                "done",
            ]
        )
        crew = Team("crew", members=[picker], model=leader, tools=[helper.as_tool()], session=tmp_path)
        return crew, helper

    crew, _ = build()
    crew.run("go")
    again, helper = build()
    assert list(again.modules("agent")) == ["agent", "agent/picker", "agent/helper"]
    assert (len(again.history), len(again.members[0].history), len(helper.history)) == (1, 1, 1)
