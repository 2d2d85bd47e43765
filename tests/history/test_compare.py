"""Two turns side by side: a fork and its parent, or two turns of one agent."""

from __future__ import annotations

import pytest
from test_record import ALLOWED_TAGS, parsed

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import ConfigurationError
from agentnb.history.compare import compare_turns, line_rows
from agentnb.history.comparison import COMPARE_CSS_CLASS, LineRow

IMG = "<img src=x onerror=alert(1)>"


def add_item(item: str, session_state) -> str:
    """Add an item to the list."""
    session_state["items"].append(item)
    return f"added {item}"


def shop() -> Agent:
    model = ScriptedModel([tool_call("add_item", item="eggs"), "Added eggs.", "Nothing else."])
    agent = Agent(
        "shop",
        model,
        instructions="List: {items}",
        session_state={"items": ["milk"]},
        tools=[add_item],
        add_history_to_context=True,
    )
    agent.run("add eggs")
    agent.run("anything else?")
    return agent


def forked_and_edited(parent: Agent) -> Agent:
    """The typical use: fork at turn 1, edit the instructions, run the same message."""
    fork = parent.fork("shop_v2", turn=1)
    fork.instructions = "List: {items}. Suggest one thing."
    fork.model = ScriptedModel([tool_call("add_item", item="bread"), "Added bread."])
    fork.edit_state("budget", 5)
    fork.run("anything else?")
    return fork


def test_line_rows_pair_equal_and_changed_lines_and_keep_the_rest_on_one_side() -> None:
    assert line_rows("a\nb\nc", "a\nB\nc\nd") == (
        LineRow("same", "a", "a"),
        LineRow("changed", "b", "B"),
        LineRow("same", "c", "c"),
        LineRow("added", None, "d"),
    )
    assert line_rows("x\ny", None) == (LineRow("removed", "x", None), LineRow("removed", "y", None))


def test_a_fork_run_with_edited_instructions_shows_what_changed_and_why() -> None:
    parent = shop()
    fork = forked_and_edited(parent)
    c = parent.compare(fork)
    assert (c.left, c.right) == ("shop · turn 2", "shop_v2 · turn 2")
    assert c.causes == (
        "the system prompt differs in: instructions",
        "the state the prompt was rendered from differs in: budget (not in the prompt)",
    )
    assert c.effects == (
        "the model answered differently from call 1",
        "model calls: 1 vs 2",
        "tool calls differ from call 1 (0 vs 1 in all)",
        "the state after differs in: items, budget",
        "the answers differ",
    )
    [instructions] = c.sections
    assert instructions.how == "changed"
    assert instructions.rows == (
        LineRow("changed", "List: ['milk', 'eggs']", "List: ['milk', 'eggs']. Suggest one thing."),
    )
    assert (instructions.left_tokens, instructions.right_tokens) == (5, 10)
    assert [(r.call, r.how, r.parts) for r in c.requests] == [
        (1, "changed", ("system prompt",)),
        (2, "added", ()),
    ]
    assert [(r.how, r.left, r.right) for r in c.tool_calls] == [
        ("added", None, 'add_item({"item": "bread"}) -> "added bread"')
    ]
    assert [(k.key, k.how, k.paths) for k in c.state] == [
        ("items", "changed", ("/items/2",)),
        ("budget", "added", ()),
    ]
    assert c.answers == ("Nothing else.", "Added bread.")
    assert not c.same


def test_the_comparison_reads_as_a_deterministic_text_record() -> None:
    parent = shop()
    text = parent.compare(forked_and_edited(parent)).text()
    assert text == "\n".join(
        [
            "compare: shop · turn 2  ↔  shop_v2 · turn 2",
            "why: the system prompt differs in: instructions",
            "     the state the prompt was rendered from differs in: budget (not in the prompt)",
            "what came of it: the model answered differently from call 1",
            "                 model calls: 1 vs 2",
            "                 tool calls differ from call 1 (0 vs 1 in all)",
            "                 the state after differs in: items, budget",
            "                 the answers differ",
            "prompt tokens: ≈14 (≈ estimate) → ≈19 (≈ estimate)",  # 5 + 6 earlier + 3 user; 10 + 6 + 3
            "system prompt:",
            "  ~ instructions: ≈5 → ≈10 tok",
            "      - List: ['milk', 'eggs']",
            "      + List: ['milk', 'eggs']. Suggest one thing.",
            "requests:",
            "  ~ call 1: differs in system prompt",
            "  + call 2: only right",
            "tool calls:",
            '  + 1. add_item({"item": "bread"}) -> "added bread" (only right)',
            "state after:",
            '  ~ items: ["milk", "eggs"] → ["milk", "eggs", "bread"] (at /items/2)',
            "  + budget: 5 (only right)",
            "answer left: Nothing else.",
            "answer right: Added bread.",
        ]
    )
    assert repr(parent.compare(turn=2, other_turn=2)) == parent.compare(turn=2, other_turn=2).text()


def test_two_turns_of_one_agent_name_the_message_and_the_conversation_sent() -> None:
    c = shop().compare(turn=1, other_turn=2)
    assert c.causes == (
        "the user message differs",
        "the system prompt differs in: instructions",
        "the state the prompt was rendered from differs in: items",
        "the first request also differs in: earlier conversation (0 vs 4 messages)",
    )
    assert c.requests[0].parts == ("system prompt", "earlier conversation (0 vs 4 messages)", "user message")


def test_a_turn_beside_itself_is_the_same() -> None:
    c = shop().compare(turn=2, other_turn=2)
    assert c.same and c.causes == () and c.effects == ()
    assert "the two turns sent and did the same" in c.text()
    assert all(s.how == "same" for s in c.sections) and all(k.how == "same" for k in c.state)


def test_hidden_keys_are_marked_and_hostile_values_are_escaped() -> None:
    model = ScriptedModel([f"answer {IMG}", "other"])
    agent = Agent(
        "a", model, instructions="Hi", session_state={"token": IMG, "note": IMG}, hide_state_keys=["token"]
    )
    agent.run("one")
    agent.session_state["note"] = "changed"
    agent.run("two")
    c = agent.compare(turn=1, other_turn=2)
    assert [(k.key, k.hidden) for k in c.state] == [("token", True), ("note", False)]
    assert '= token: "<img src=x onerror=alert(1)>" [hidden from the model]' in c.text()
    html = c.html()
    assert html.startswith(f'<div class="{COMPARE_CSS_CLASS} ') and "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "(hidden from the model)" in html
    tags = parsed(html)
    assert set(tags.tags) <= ALLOWED_TAGS and not [a for a in tags.attributes if a.startswith("on")]


def test_compare_turns_works_on_records_and_bad_choices_say_what_to_pass() -> None:
    agent = shop()
    assert compare_turns(agent.history[0], agent.history[1]).left == "shop · turn 1"
    with pytest.raises(ConfigurationError, match="compare with another agent"):
        agent.compare()
    with pytest.raises(ConfigurationError, match="agent 'shop' has no turn 3: it has turns 1 to 2"):
        agent.compare(turn=3, other_turn=1)
    with pytest.raises(ConfigurationError, match="agent 'b' has no turn 1: it has no turns yet"):
        agent.compare(Agent("b"))


def test_the_html_record_keeps_each_row_label_on_one_line_and_colours_the_marks() -> None:
    parent = shop()
    html_text = parent.compare(forked_and_edited(parent), turn=2, other_turn=2).html()
    # "~ instructions" / "= session_state" labels never wrap onto two lines.
    label = '<td style="text-align:left;vertical-align:top;white-space:nowrap;padding-right:10px">'
    assert (
        f'{label}<b style="color:var(--jp-mirror-editor-variable-2-color,var(--vscode-gitDecoration-modifiedResourceForeground,#00366d))">~</b> <code>instructions</code>'
        in html_text
    )
    rows = html_text.split("<tr")[1:]
    assert len(rows) > 5 and all(
        row.split(">", 1)[1].startswith(label)
        for row in rows
        if "<td" in row[:80] and "colspan" not in row.split("</td>")[0]
    )
    assert (
        f'{label}<b style="color:var(--jp-success-color0,var(--vscode-gitDecoration-addedResourceForeground,#1b5e20))">+</b> state <code>budget</code>'
        in html_text
    )
    # A changed line of the prompt: the old text in the removed colour, the new in the added one.
    line = html_text.split('class="agentnb-compare-line" data-how="changed"')[1].split("</tr>")[0]
    assert "color:var(--jp-error-color1" in line and "color:var(--jp-success-color0" in line
