"""Pausing a turn in a notebook, through a real IPython shell: %%chat pauses, %agentnb approve /
reject / continue decide and go on, and after a restart %agentnb resume brings the paused turn back."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import agentnb
from agentnb import JSONSession

# A viewer that breaks on a paused or resumed run warns (and would lose the inspector's view).
pytestmark = pytest.mark.filterwarnings("error:agentnb. event subscriber:UserWarning")

PAYMENTS = '''
from agentnb import ScriptedModel, tool, tool_call

@tool(requires_approval=True)
def charge(customer: str, amount: int, session_state) -> str:
    """Charge a customer."""
    session_state["charged"][customer] = amount
    return f"charged {customer} {amount}"

def answer(request):
    last = request.messages[-1]
    if last["role"] == "tool":
        return "done: " + last["content"]
    words = last["content"].split()
    return [tool_call("charge", customer=w, amount=10) for w in words]

model = ScriptedModel(answer)
'''


@pytest.fixture()
def shell(shell, tmp_path, monkeypatch):
    """The shared shell (tests/conftest.py) in the notebook ``pay.ipynb``, with ``PAYMENTS`` run."""
    (tmp_path / "pay.ipynb").write_text("{}")  # the recording goes beside the notebook
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "pay.ipynb"))
    shell.run_cell(PAYMENTS)
    return shell


def magic(ip, line: str):
    with capture_output() as captured:
        value = ip.run_line_magic("agentnb", line)
    return value, captured.stdout


def cell(ip, kind: str, line: str, body: str):
    with capture_output() as captured:
        ip.run_cell_magic(kind, line, body)
    return captured


def usage_error(ip, line: str) -> str:
    with pytest.raises(UsageError) as info:
        magic(ip, line)
    assert "\n" not in str(info.value)
    return str(info.value)


def define(ip) -> None:
    cell(ip, "agent", """pay --model model --tools charge --state '{"charged": {}}'""", "You take payments.")


def test_a_paused_chat_turn_is_decided_and_continued_from_cells(shell):
    define(shell)
    out = cell(shell, "chat", "pay", "bob ann")
    agent = shell.user_ns["pay"]
    assert agent.is_paused and agent.session_state == {"charged": {}}
    bob, ann = agent.pending
    text = out.outputs[-1].data["text/plain"]
    assert "paused: waits for a person" in text and f"[{bob.id}] approval: charge(" in text
    assert "agentnb-record-pending" in out.outputs[-1].data["text/html"]

    assert usage_error(shell, "approve pay").startswith(
        "%agentnb approve pay: name the item (ID) or give --all"
    )
    _, said = magic(shell, f"approve pay {bob.id}")
    assert said == f"approved {bob.id} (charge); %agentnb continue pay carries the turn on\n"
    assert usage_error(shell, f"approve pay {bob.id}").startswith(
        f"%agentnb approve pay: pending item {bob.id} (approval: charge) was already approved"
    )
    assert "give the reason" in usage_error(shell, f"reject pay {ann.id}")
    _, said = magic(shell, f"reject pay {ann.id} --reason she paid by card")
    assert (
        said == f"rejected {ann.id} (charge): 'she paid by card'; %agentnb continue pay carries the turn on\n"
    )
    result, _ = magic(shell, "continue pay")
    assert result.status == "ok" and agent.session_state == {"charged": {"bob": 10}}
    assert [c.decision for c in result.tool_calls] == ["approved", "rejected"]
    assert usage_error(shell, "continue pay") == (
        "%agentnb continue pay: agent 'pay' has no paused turn to continue (its last turn is ok); a turn "
        "pauses when a call needs a person (requires_approval, ask_user, external, break_before)"
    )
    assert (
        usage_error(shell, "approve pay --all")
        == "%agentnb approve pay: pay has no paused turn; nothing waits for a decision"
    )


def test_approve_all_and_bad_lines(shell):
    define(shell)
    cell(shell, "chat", "pay", "bob ann")
    assert "no pending item 'zzz'" in usage_error(shell, "approve pay zzz")
    assert (
        usage_error(shell, "approve pay abc --all") == "%agentnb approve pay: give an ID or --all, not both"
    )
    assert usage_error(shell, "continue pay --all") == (
        "%agentnb: --all belongs to %agentnb approve, --reason to %agentnb reject"
    )
    assert "still waits for 2 decision(s)" in usage_error(shell, "continue pay")
    _, said = magic(shell, "approve pay --all")
    assert said.startswith("approved ") and said.count("(charge)") == 2
    result, _ = magic(shell, "continue pay")
    assert shell.user_ns["pay"].session_state == {"charged": {"bob": 10, "ann": 10}}
    assert result.content == "done: charged ann 10"


def test_after_a_restart_resume_brings_the_paused_turn_back_and_continue_goes_on(shell, tmp_path):
    define(shell)
    cell(shell, "chat", "pay", "bob")
    before = [(i.id, i.tool, i.arguments) for i in shell.user_ns["pay"].pending]
    agentnb.load_ipython_extension(shell)  # a restarted kernel: nothing kept in memory
    shell.run_cell(PAYMENTS)
    define(shell)
    assert not shell.user_ns["pay"].is_paused  # the definition, not the saved turns
    _, said = magic(shell, "resume pay")
    assert said.startswith("resumed pay from pay.agentnb/pay.json") and "1 turn(s)" in said
    agent = shell.user_ns["pay"]
    assert [(i.id, i.tool, i.arguments) for i in agent.pending] == before
    magic(shell, "approve pay")
    result, _ = magic(shell, "continue pay")
    assert (result.status, result.content) == ("ok", "done: charged bob 10")
    saved = JSONSession(tmp_path / "pay.agentnb").read_modules("pay").modules["agent"]
    assert [t["status"] for t in saved["history"]["turns"]] == ["ok"]


def test_the_inspector_wire_carries_a_pause_and_the_run_going_on(monkeypatch):
    from test_inspector import Clock, Wire

    from agentnb import Agent, ScriptedModel, tool, tool_call
    from agentnb.ipython import wire
    from agentnb.ipython.inspector import Inspector

    @tool(requires_approval=True)
    def charge(amount: int) -> str:
        return f"charged {amount}"

    agent = Agent("pay", ScriptedModel([tool_call("charge", amount=5), "done"]), tools=[charge])
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch, Clock(step=0.0))  # one batch: the pause, then the run going on
    agent.run("charge").pending[0].approve()
    agent.continue_run()
    inspector._outbox.flush()
    bodies = [m[wire.EVENT_BODY] for m in sent.events()]
    kinds = [b["kind"] for b in bodies]
    assert kinds[kinds.index("run_paused") :] == [
        "run_paused", "run_resumed", "tool_call_started", "tool_call_finished",
        "model_requested", "text_delta", "model_responded", "run_finished",
    ]  # fmt: skip
    paused = bodies[kinds.index("run_paused")]
    assert [(i["kind"], i["tool"], i["arguments"], i["path"]) for i in paused["items"]] == [
        ("approval", "charge", {"amount": 5}, ["pay"])
    ]
    assert bodies[kinds.index("run_resumed")]["decisions"][0]["verdict"] == "approved"
    assert {m[wire.TURN_INDEX] for m in sent.events()} == {0}
