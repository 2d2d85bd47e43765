"""The static turn record: deterministic text and HTML, state diffs with authors, escaping."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import AgentnbError
from agentnb.history.render import RECORD_CSS_CLASS, turn_html, turn_text, value_text
from agentnb.ipython.record import LIVE_CSS_CLASS, LiveTurn, TurnView

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
ALLOWED_TAGS = {"div", "b", "i", "code", "span", "table", "caption", "tr", "th", "td", "ul", "li", "pre"}


class TagCollector(HTMLParser):
    """Every start tag and attribute name a browser would build from the HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.extend(name for name, _ in attrs)


def parsed(html_text: str) -> TagCollector:
    collector = TagCollector()
    collector.feed(html_text)
    return collector


def add_item(item: str, session_state: dict) -> str:
    """Add an item."""
    session_state["items"].append(item)
    return f"added {item}"


def fail(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"cannot: {reason}")


def stamp(function_name, function_call, arguments, session_state):
    session_state["stamped"] = function_name
    return function_call(**arguments)


def make_hostile_agent() -> Agent:
    model = ScriptedModel(
        [
            [tool_call("add_item", item=IMG), tool_call("fail", reason=SCRIPT)],
            f"Done {SCRIPT} {IMG}",
        ]
    )
    return Agent(
        "shop",
        model,
        tools=[add_item, fail],
        tool_hooks=[stamp],
        session_state={"items": [], IMG: "key"},
    )


def run_hostile() -> Agent:
    agent = make_hostile_agent()
    agent.run(f"please {IMG}")
    return agent


def test_html_record_escapes_everything_from_model_tool_and_state():
    agent = run_hostile()
    html_text = turn_html(agent.history[0])
    assert "<script" not in html_text and "<img" not in html_text
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html_text
    assert "&lt;img src=x onerror=alert(1)&gt;" in html_text
    tags = parsed(html_text)
    assert set(tags.tags) <= ALLOWED_TAGS
    assert not [a for a in tags.attributes if a.startswith("on")]


def test_text_record_shows_answer_calls_hooks_and_state_diff():
    agent = run_hostile()
    text = turn_text(agent.history[0])
    assert text.splitlines() == [
        "shop · turn 1 · ok · model scripted",
        f"user: please {IMG}",
        "prompt tokens: ≈8 (user message ≈8) · ≈ estimate: no tokenizer known for scripted",
        "tool calls (2):",
        f'  1. add_item({{"item": "{IMG}"}}) -> "added {IMG}"',
        "     hooks: stamp (passed); answered by: tool",
        "     changed: items, stamped",
        f'  2. fail({{"reason": "{SCRIPT}"}}) -> ✗ error [tool_error]: cannot: {SCRIPT} '
        "(ValueError raised by tool 'fail')",
        "     hooks: stamp (passed); answered by: -",
        "state:",
        '  + stamped: "add_item"  (by hook:stamp)',
        f'  + items › 0: "{IMG}"  (by tool:add_item)',  # the path that changed, as the inspector lists it
        f"answer: Done {SCRIPT} {IMG}",
    ]


def test_records_are_deterministic_across_runs():
    first, second = run_hostile(), run_hostile()
    assert first.history[0].run_id != second.history[0].run_id
    assert turn_text(first.history[0]) == turn_text(second.history[0])
    assert turn_html(first.history[0]) == turn_html(second.history[0])
    assert "0x" not in turn_text(first.history[0])


def test_turn_changes_report_added_changed_removed_with_authors_and_old_values():
    agent = Agent(
        "a",
        ScriptedModel(
            ["first", tool_call("update_session_state", session_state_updates={"n": 2, "new": "x"}), "ok"]
        ),
        enable_agentic_state=True,
        session_state={"n": 1, "old": True},
    )
    agent.run("first")
    assert agent.history[0].changes().keys == []
    agent.session_state.pop("old")  # between turns: the user's change
    agent.run("go", extra=5)
    diff = {c.key: c for c in agent.history[1].changes().keys}
    assert diff["old"].how == "removed" and diff["old"].authors == ("user",) and diff["old"].old is True
    assert diff["extra"].how == "added" and diff["extra"].authors == ("run_kwarg:extra",)
    assert (diff["n"].how, diff["n"].old, diff["n"].new) == ("changed", 1, 2)
    assert diff["n"].authors == ("agentic:update_session_state",)
    assert diff["new"].how == "added" and diff["new"].new == "x"
    lines = turn_text(agent.history[1]).splitlines()
    assert "  - old: true (removed)  (by user)" in lines
    assert "  ~ n: 1 → 2  (by agentic:update_session_state)" in lines


def test_failed_turn_record_says_why():
    agent = Agent("a", ScriptedModel([f"{SCRIPT}"]))
    agent.run("one")
    with pytest.raises(AgentnbError):
        agent.run("two")
    turn = agent.history[1]
    assert turn_text(turn).splitlines()[-1].startswith("failed: ScriptedModel has no reply left")
    assert 'data-status="failed"' in turn_html(turn)


def test_values_without_json_form_show_no_memory_address():
    class Thing:
        pass

    assert value_text({"thing": Thing(), "n": 1}) == '{"thing": "<Thing>", "n": 1}'
    assert value_text("x" * 1000).endswith("…") and len(value_text("x" * 1000)) == 300


def test_run_result_shows_the_record_in_a_notebook():
    agent = make_hostile_agent()
    result = agent.run("go")
    html_text = result._repr_html_()
    assert html_text == turn_html(agent.history[0])
    assert RECORD_CSS_CLASS in html_text and "<script" not in html_text
    from IPython.lib.pretty import pretty

    assert pretty(result) == turn_text(agent.history[0])


def test_turn_view_bundle_is_text_and_html():
    agent = run_hostile()
    bundle = TurnView(agent.history[0])._repr_mimebundle_()
    assert bundle == {"text/plain": turn_text(agent.history[0]), "text/html": turn_html(agent.history[0])}


def test_live_turn_streams_into_one_display_then_leaves_the_record():
    agent = run_hostile()  # the record of a finished turn, to compare with
    agent2 = make_hostile_agent()
    live = LiveTurn()
    start_ipython()  # display() publishes through a shell; capture_output records it
    with capture_output() as captured:
        agent2.run(f"please {IMG}", on_event=live)
        live.finish(agent2.history[0])
    outputs = captured.outputs
    assert len(outputs) > 4
    live_area, streamed_updates, emptied, record = outputs[0], outputs[1:-2], outputs[-2], outputs[-1]
    # The live area starts and ends empty, so what nbval sees (no updates) equals what is saved.
    assert live_area.update is False and live_area.data == {"text/plain": ""}
    assert all(o.update for o in streamed_updates) and emptied.update and emptied.data == {"text/plain": ""}
    assert {o.transient["display_id"] for o in outputs[:-1]} == {live_area.transient["display_id"]}
    streamed = [o.data["text/html"] for o in streamed_updates]
    assert any("→ add_item" in s for s in streamed)
    assert any("Done" in s for s in streamed)
    assert all(s.startswith(f'<pre class="{LIVE_CSS_CLASS}"') and "<script" not in s for s in streamed)
    assert record.update is False and not (record.transient or {}).get("display_id")
    assert record.data == TurnView(agent.history[0])._repr_mimebundle_()


class CellStyles(HTMLParser):
    """The inline style of every table cell, and the text inside each element with a class."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self.cells.append((tag, dict(attrs).get("style") or ""))


def budget_agent(n_items: int = 1) -> Agent:
    def set_qty(index: int, qty: float, session_state) -> str:
        """Set an item's quantity."""
        session_state["cart"]["items"][index]["qty"] = qty
        return "ok"

    def fill(count: int, session_state) -> str:
        """Add count items."""
        for i in range(count):
            session_state["log"].append(i)
        return "filled"

    model = ScriptedModel(
        [
            [
                tool_call("set_qty", index=0, qty=2.5),
                tool_call("fill", count=n_items),
                tool_call("set_qty", index=7, qty=1),
            ],
            "done",
        ]
    )
    state = {"cart": {"items": [{"name": "tea", "qty": 1.0}], "note": "x" * 50}, "log": []}
    agent = Agent("budget", model, tools=[set_qty, fill], session_state=state)
    agent.run("go")
    return agent


def test_record_lists_path_level_changes_like_the_inspector_not_whole_top_level_values():
    turn = budget_agent().history[0]
    lines = turn_text(turn).splitlines()
    state = lines[lines.index("state:") + 1 :]
    assert state[:2] == [
        "  ~ cart › items › 0 › qty: 1.0 → 2.5  (by tool:set_qty)",
        "  + log › 0: 0  (by tool:fill)",
    ]
    assert not any('"note"' in line or "xxxx" in line for line in state)  # the rest of cart is not repeated
    html_text = turn_html(turn)
    assert 'data-path="/cart/items/0/qty"' in html_text and 'data-change="changed"' in html_text
    assert "~ cart › items › 0 › qty: 1.0 → 2.5" in html_text


def test_record_counts_the_changed_paths_past_twenty():
    turn = budget_agent(n_items=25).history[0]
    text = turn_text(turn)
    assert "  + log › 18: 18  (by tool:fill)" in text and "log › 19:" not in text
    assert text.splitlines()[-2] == "  … 6 more changed path(s)"  # 1 qty + 25 items - 20 shown
    assert "… 6 more changed path(s)" in turn_html(turn)


def test_record_table_is_left_aligned_in_every_cell_and_marks_a_tool_error():
    turn = budget_agent().history[0]
    html_text = turn_html(turn)
    styles = CellStyles()
    styles.feed(html_text)
    assert styles.cells and all(
        "text-align:left" in style for _, style in styles.cells
    )  # Lab right-aligns td/th
    # The failed call (index 7 does not exist) is marked as an error, in the theme's error colour.
    error_row = html_text.split('class="agentnb-record-call-error"')
    assert len(error_row) == 2 and 'data-error="tool_error"' in error_row[1][:40]
    assert (
        "var(--jp-error-color1" in error_row[1].split("</tr>")[0]
        and "✗ error" in error_row[1].split("</tr>")[0]
    )
    assert html_text.count("agentnb-record-call-error") == 1  # the calls that worked are not marked
    assert "✗ error [tool_error]" in turn_text(turn)


def test_record_puts_each_argument_on_its_own_line_that_wraps_inside_itself():
    turn = budget_agent().history[0]
    html_text = turn_html(turn)
    assert (
        '<code style="display:inline-block;white-space:pre-wrap;overflow-wrap:anywhere">index: 0\nqty: 2.5</code>'
        in html_text
    )
    empty = Agent("a", ScriptedModel([tool_call("noop"), "ok"]), tools=[noop])
    empty.run("x")
    assert (
        '<code style="display:inline-block;white-space:pre-wrap;overflow-wrap:anywhere">{}</code>'
        in turn_html(empty.history[0])
    )


def noop() -> str:
    """Do nothing."""
    return "ok"


def test_record_colours_come_from_the_theme_variables_with_fallbacks():
    import re

    html_text = turn_html(budget_agent().history[0])
    # The variables that read at 4.5:1 on JupyterLab's light and dark backgrounds alike (the
    # browser test measures them), then VS Code's, then a colour for a light page.
    for var in ("--jp-mirror-editor-variable-2-color", "--jp-error-color1"):
        assert f"color:var({var},var(--vscode-" in html_text
    assert "--jp-warn-color" not in html_text and "--jp-success-color1" not in html_text  # too light on white
    assert re.findall(r"color:(?!var\(--jp-)", html_text) == []  # never a fixed colour: dark mode must read
