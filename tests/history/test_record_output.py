"""A typed turn's record (``%%chat``, a RunResult in a notebook): the same text and HTML for a
live turn and the turn loaded from a session; long runs of attempts are counted, not listed."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import OutputValidationError
from agentnb.history.render import ATTEMPT_ROWS, turn_html, turn_text
from agentnb.sessions import MemorySession


class Invoice(BaseModel):
    vendor: str
    total: float


def test_a_loaded_typed_turn_renders_as_it_did_live():
    model = ScriptedModel(
        [tool_call("final_result", vendor="A"), tool_call("final_result", vendor="A", total=2)]
    )
    agent = Agent("x", model, output_type=Invoice)
    result = agent.run("go")
    session = MemorySession()
    session.save_session_state_sync("s", agent=agent)
    fresh = Agent("x", ScriptedModel([]), output_type=Invoice)
    session.load_session_state_sync("s", agent=fresh)
    assert turn_text(fresh.history[0]) == turn_text(agent.history[0])
    assert turn_html(fresh.history[0]) == turn_html(agent.history[0])
    assert result._repr_html_() == turn_html(agent.history[0])


def test_many_attempts_are_counted_past_the_first_rows():
    attempts = ATTEMPT_ROWS + 3
    model = ScriptedModel([tool_call("final_result", vendor="A")] * attempts)
    agent = Agent("x", model, output_type=Invoice, output_retries=attempts - 1)
    with pytest.raises(OutputValidationError):
        agent.run("go")
    text = turn_text(agent.history[0])
    assert f"output: Invoice · tool · {attempts} attempts" in text
    assert text.count("✗ /total") == ATTEMPT_ROWS and "… 3 more attempt(s)" in text
    assert "… 3 more attempt(s)" in turn_html(agent.history[0])


def test_a_plain_turn_has_no_output_lines():
    agent = Agent("x", ScriptedModel(["hi"]))
    agent.run("go")
    assert "output:" not in turn_text(agent.history[0])
    assert "agentnb-record-output" not in turn_html(agent.history[0])
