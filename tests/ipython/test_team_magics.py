"""The team magics through a real IPython shell: %%agent --members / --handoffs, %%chat team,
%agentnb preview TEAM/MEMBER, and the one-line errors."""

from __future__ import annotations

import pytest
from test_magics import run, shell, usage_error  # noqa: F401  (the shell fixture)

from agentnb import Agent, Team

SETUP = '''
from agentnb import ScriptedModel, tool_call

def add_item(item: str, session_state) -> str:
    """Add an item."""
    session_state["shopping_list"].append(item)
    return f"added {item}"

shopper_model = ScriptedModel([tool_call("add_item", item="tea"), "Added <b>tea</b>."])
lead_model = ScriptedModel([tool_call("delegate_task_to_member", member_id="shopper", task="add tea"), "Tea is on the list."])
'''


def define(ip):
    # The shell is shared by the session's tests: the agents other tests left would be listed too.
    for name in [name for name, value in ip.user_ns.items() if isinstance(value, Agent)]:
        del ip.user_ns[name]
    ip.run_cell(SETUP)
    run(
        ip,
        "agent",
        "shopper --model shopper_model --tools add_item --no-session",
        "You shop. The list has {shopping_list}.",
    )


def test_team_cell_chat_record_and_preview(shell):
    define(shell)
    _, out = run(
        shell,
        "agent",
        "team --model lead_model --members shopper --mode coordinate --state '{\"shopping_list\": []}' --no-session",
        "Lead the shopping.",
    )
    team = shell.user_ns["team"]
    assert isinstance(team, Team) and team.members == [shell.user_ns["shopper"]]
    assert team.prompt.instructions == "Lead the shopping."
    _, preview = run(shell, "agentnb", 'preview team/shopper "buy tea"')
    assert "team/shopper would receive, from team's state now (no model is called):" in preview.stdout
    assert "The list has []." in preview.stdout and "buy tea" in preview.stdout
    assert len(shell.user_ns["shopper_model"].requests) == 0
    _, chat = run(shell, "chat", "team", "Put tea on the list")
    html = "".join(o.data.get("text/html", "") for o in chat.outputs)
    assert "delegations (1):" in html and "▸ team ▸ shopper · task: &#x27;add tea&#x27;" in html
    assert "Added &lt;b&gt;tea&lt;/b&gt;." in html and "<b>tea</b>" not in html
    assert team.session_state == {"shopping_list": ["tea"]}


def test_an_agent_in_tools_is_wrapped_as_a_tool(shell):
    define(shell)
    shell.run_cell('boss_model = ScriptedModel([tool_call("shopper", task="tea"), "ok"])')
    run(shell, "agent", "boss --model boss_model --tools shopper --no-session", "Boss.")
    boss = shell.user_ns["boss"]
    assert [t.name for t in boss.all_tools()] == ["shopper"]
    assert boss.all_tools()[0].delegation.state == "none"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "team --members shopper,nobody --no-session",
            "%%agent team: --members names 'nobody', which is not defined; define it with %%agent nobody above (agents: shopper)",
        ),
        (
            "team --members shopper,shopper --no-session",
            "%%agent team: --members names 'shopper' twice; name each agent once",
        ),
        (
            "triage --handoffs billing --no-session",
            "%%agent triage: --handoffs names 'billing', which is not defined; define it with %%agent billing above (agents: shopper)",
        ),
        ("team --mode route --no-session", "%%agent team: --mode belong to a team; add --members a,b"),
        (
            "team --members shopper_model --no-session",
            "%%agent team: --members names 'shopper_model', which is a ScriptedModel; define it with %%agent shopper_model above (agents: shopper)",
        ),
    ],
)
def test_one_line_errors(shell, line, expected):
    define(shell)
    assert usage_error(shell, "agent", line, "x") == expected


def test_cycle_of_teams_is_one_line(shell):
    define(shell)
    run(shell, "agent", "inner --members shopper --no-session", "inner")
    run(shell, "agent", "outer --members inner --no-session", "outer")
    inner = shell.user_ns["inner"]
    inner.members.append(shell.user_ns["outer"])
    text = usage_error(shell, "agent", "outer --members inner --no-session", "outer")
    assert (
        text == "%%agent outer: team 'inner': outer ▸ inner ▸ outer is a cycle; a team cannot contain itself"
    )


def test_preview_errors_are_one_line(shell):
    define(shell)
    run(shell, "agent", "team --members shopper --no-session", "lead")
    assert (
        usage_error(shell, "agentnb", 'preview team/nobody "x"')
        == "%agentnb preview team/nobody: team 'team' has no member 'nobody'; members: shopper"
    )
    assert (
        usage_error(shell, "agentnb", 'preview shopper/x "x"')
        == "%agentnb preview shopper/x: 'shopper' is an agent, not a team; TEAM/MEMBER previews a member of a team"
    )


def test_handoff_cell_keeps_the_agent_in_charge(shell):
    define(shell)
    shell.run_cell(
        'billing_model = ScriptedModel(["5 EUR", "paid"]); triage_model = ScriptedModel([tool_call("transfer_to_billing")])'
    )
    run(shell, "agent", "billing --model billing_model --no-session", "Billing.")
    run(shell, "agent", "triage --model triage_model --handoffs billing --no-session", "Triage.")
    run(shell, "chat", "triage", "what do I owe?")
    _, chat = run(shell, "chat", "triage", "I paid")
    assert shell.user_ns["triage"].in_charge is shell.user_ns["billing"]
    html = "".join(o.data.get("text/html", "") for o in chat.outputs)
    assert "▸ triage ▸ billing · task: &#x27;I paid&#x27; · answer: &#x27;paid&#x27;" in html
