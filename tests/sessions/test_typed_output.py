"""A session keeps a turn's typed output: after loading, ``record.output`` is the output as JSON
data, every attempt is kept with its errors, and the DataFrames read the same."""

from __future__ import annotations

from pydantic import BaseModel

from agentnb import Agent, ModelRetry, ScriptedModel, tool_call
from agentnb.sessions import JSONSession


class Invoice(BaseModel):
    vendor: str
    total: float


def typed_agent(model: ScriptedModel | None = None, **kw) -> Agent:
    agent = Agent("x", model or ScriptedModel([]), output_type=Invoice, **kw)

    @agent.output_validator
    def positive(output: Invoice) -> Invoice:
        if output.total <= 0:
            raise ModelRetry("the total must be positive")
        return output

    return agent


def answers() -> ScriptedModel:
    return ScriptedModel(
        [
            tool_call("final_result", vendor="ACME", total=-1),
            tool_call("final_result", vendor="ACME", total=12.5),
            tool_call("final_result", vendor="Bolt", total=3),
        ]
    )


def test_a_loaded_turn_holds_its_output_as_data_and_every_attempt(session):
    agent = typed_agent(answers())
    agent.run("one")
    agent.run("two")
    assert isinstance(agent.history[0].output, Invoice)
    session.save_session_state_sync("s", agent=agent)

    fresh = typed_agent()
    assert session.load_session_state_sync("s", agent=fresh) is True
    first, second = fresh.history
    assert first.output == {"vendor": "ACME", "total": 12.5}  # JSON data: T is not stored
    assert second.output == {"vendor": "Bolt", "total": 3.0}
    assert Invoice.model_validate(first.output) == agent.history[0].output
    assert [(a.attempt, a.ok) for a in first.attempts] == [(1, False), (2, True)]
    assert first.attempts[0].errors == agent.history[0].attempts[0].errors
    assert first.attempts[0].errors[0]["message"] == "the total must be positive"
    assert fresh.history.outputs().equals(agent.history.outputs())
    assert fresh.history.turns()[["output", "attempts"]].equals(agent.history.turns()[["output", "attempts"]])


def test_editing_a_loaded_output_does_not_edit_its_recorded_attempt(session):
    agent = typed_agent(answers())
    agent.run("one")
    session.save_session_state_sync("s", agent=agent)
    fresh = typed_agent()
    session.load_session_state_sync("s", agent=fresh)
    fresh.history[0].output["total"] = 0
    assert fresh.history[0].attempts[-1].output == {"vendor": "ACME", "total": 12.5}


def test_an_agent_saving_beside_it_restores_typed_turns_on_construction(tmp_path):
    folder = JSONSession(tmp_path)
    agent = typed_agent(answers(), session=folder)
    agent.run("one")
    agent.run("two")
    again = typed_agent(session=folder)
    assert [t.output for t in again.history] == [
        {"vendor": "ACME", "total": 12.5},
        {"vendor": "Bolt", "total": 3.0},
    ]
    assert again.history.outputs()["attempts"].tolist() == [2, 1]


def test_a_turn_without_an_output_type_loads_with_no_output(session):
    agent = Agent("x", ScriptedModel(["plain"]))
    agent.run("hi")
    session.save_session_state_sync("s", agent=agent)
    fresh = Agent("x", ScriptedModel([]))
    session.load_session_state_sync("s", agent=fresh)
    assert fresh.history[0].output is None and fresh.history[0].attempts == []
