"""``%%agent NAME --output T`` through a real IPython shell, and the ``%%chat`` record of a
typed turn: the output type, the attempts and the output, escaped and the same run after run."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from agentnb.history.render import turn_html, turn_text

IMG = "<img src=x onerror=alert(1)>"

INVOICE = """
from pydantic import BaseModel
from agentnb import ScriptedModel, tool_call

class Invoice(BaseModel):
    vendor: str
    total: float
"""


@pytest.fixture()
def shell(shell):
    """The shared shell (tests/conftest.py) with ``Invoice`` defined."""
    shell.run_cell(INVOICE)
    return shell


def run(ip, kind: str, line: str, body: str = ""):
    with capture_output() as captured:
        ip.run_cell_magic(kind, line, body)
    return captured


def usage_error(ip, line: str) -> str:
    with pytest.raises(UsageError) as info:
        run(ip, "agent", line, "Read the invoice.")
    text = str(info.value)
    assert "\n" not in text, text
    return text


def test_output_names_a_type_of_the_namespace_with_its_mode_and_retries(shell):
    shell.run_cell("model = ScriptedModel([tool_call('final_result', vendor='A', total=1)])")
    run(
        shell, "agent", "inv --model model --output Invoice --output-mode tool --output-retries 3", "Read it."
    )
    agent = shell.user_ns["inv"]
    assert agent.output_type is shell.user_ns["Invoice"]
    assert (agent.output_mode, agent.output_retries) == ("tool", 3)
    run(shell, "chat", "inv", "ACME, 1 euro")
    assert agent.history[0].output == shell.user_ns["Invoice"](vendor="A", total=1)


def test_without_output_the_agent_has_no_output_type(shell):
    run(shell, "agent", "plain --model offline", "Hi.")
    assert shell.user_ns["plain"].output_type is None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("inv --output Nope", "--output Nope: no variable named 'Nope'; define the type"),
        ("inv --output 'not a name'", "--output not a name: no variable named 'not a name'"),
        ("inv --output number", "--output number is a int, not a type"),
        ("inv --output-mode tool", "--output-mode and --output-retries go with --output T"),
        ("inv --output Invoice --output-retries -1", "--output-retries must be 0 or more, got -1"),
        ("inv --output Invoice --output-mode json", "invalid choice: 'json'"),
        ("inv --output Invoice --model offline --output-mode native", None),
    ],
)
def test_a_bad_output_option_is_one_line(shell, line, expected):
    shell.run_cell("number = 3")
    if expected is None:  # a mode the model lacks is said when the agent is made, in one line
        run(shell, "agent", line, "Read it.")
        with capture_output():
            result = shell.run_cell("%%chat inv\nhello")
        assert "output_mode='native'" in str(result.error_in_exec)
        return
    assert expected in usage_error(shell, line)
    assert "inv" not in shell.user_ns


def test_the_chat_record_names_the_type_and_the_attempts_and_shows_the_output_escaped(shell):
    shell.run_cell(
        f"model = ScriptedModel([tool_call('final_result', vendor={IMG!r}, total='lots'), "
        f"tool_call('final_result', vendor={IMG!r}, total=12.5)])"
    )
    run(shell, "agent", "inv --model model --output Invoice --no-session", "Read it.")
    out = run(shell, "chat", "inv", "the invoice")
    turn = shell.user_ns["inv"].history[0]
    record = out.outputs[-1].data
    assert record == {"text/plain": turn_text(turn), "text/html": turn_html(turn)}
    text = record["text/plain"]
    assert "output: Invoice · tool · 2 attempts" in text
    assert "  attempt 1 ✗ /total: Input should be a valid number" in text
    assert f'  attempt 2 ✓ {{"vendor": "{IMG}", "total": 12.5}}' in text
    html = record["text/html"]
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'class="agentnb-record-output"' in html and html.count('data-ok="false"') == 1


def test_a_failed_typed_turn_shows_every_attempt(shell):
    shell.run_cell("model = ScriptedModel([tool_call('final_result', vendor='A')] * 2)")
    run(shell, "agent", "inv --model model --output Invoice --no-session", "Read it.")
    with capture_output() as out:
        result = shell.run_cell("%%chat inv\nthe invoice")
    assert "no answer matched the output type Invoice in 2 attempt(s)" in str(result.error_in_exec)
    text = out.outputs[-1].data["text/plain"]
    assert text.count("✗ /total: Field required") == 2 and "✓" not in text
